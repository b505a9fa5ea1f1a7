#!/usr/bin/env bash
# The README's first command: build zhiwen and run the main job on bundled
# public-domain samples with the embedded default (no servers needed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }

step "building zhiwen (first build takes a few minutes)"
cargo build --locked --bin zhiwen
ZHIWEN=target/debug/zhiwen

step "protected work: samples/hongloumeng-01.txt (红楼梦 第一回, UTF-8)"
step "suspect page:   samples/pirate-copy-big5.html (a pirate-style copy: Big5, traditional script, homophones, ads, cut at 60%)"
"$ZHIWEN" compare samples/hongloumeng-01.txt samples/pirate-copy-big5.html --max-passages 3

step "innocent page:  samples/other-chapter-gbk.html (the next chapter, GBK): must not be accused"
"$ZHIWEN" compare samples/hongloumeng-01.txt samples/other-chapter-gbk.html --max-passages 3
