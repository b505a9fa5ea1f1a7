#!/usr/bin/env bash
# The README's first command: build zhiwen and run the main job end to end on bundled
# public-domain samples with the embedded default (SQLite store + embedded index in a
# fresh data directory; no servers needed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s\n' "$*"; }

step "building zhiwen (the first build takes a few minutes)"
cargo build --locked --bin zhiwen
ZHIWEN="$PWD/target/debug/zhiwen"
export ZHIWEN_DATA_DIR="$PWD/.zhiwen-data/demo"
rm -rf "$ZHIWEN_DATA_DIR"

step "1. compare: a chapter of 红楼梦 against a pirate-style copy (Big5, traditional script, homophones, ads, cut at 60%)"
"$ZHIWEN" compare samples/hongloumeng-01.txt samples/pirate-copy-big5.html --max-passages 2

step "2. register the work of rights holder 'demo' (store: $ZHIWEN_DATA_DIR)"
"$ZHIWEN" import works samples/hongloumeng-01.txt --owner demo

step "3. import two pages of a pirate site: the copy above and an innocent page (the next chapter, GBK)"
pages="$(mktemp -d)"
trap 'rm -rf "$pages"' EXIT
cp samples/pirate-copy-big5.html samples/other-chapter-gbk.html "$pages/"
"$ZHIWEN" import pages "$pages" --base-url http://pirate.example/book/

step "4. run the matching task (fingerprint, index, look up, verify, record)"
"$ZHIWEN" match

step "5. the match list for analysts (CSV, UTF-8 with BOM; xlsx and json too)"
"$ZHIWEN" report export --format csv --out "$ZHIWEN_DATA_DIR/matches.csv"
python3 - "$ZHIWEN_DATA_DIR/matches.csv" <<'PY'
import csv, sys
with open(sys.argv[1], encoding="utf-8-sig") as f:
    rows = list(csv.DictReader(f))
print(f"{len(rows)} match(es):")
for r in rows:
    print(f"  {r['work_external_id']}  ->  {r['page_url']}  kind={r['kind']}  score={r['score']}  status={r['review_status']}")
    print(f"    work: {r['evidence_section'][:60].replace(chr(10), ' ')}…")
    print(f"    page: {r['evidence_page'][:60].replace(chr(10), ' ')}…")
innocent = [r for r in rows if "other-chapter" in r["page_url"]]
print("innocent page accused!" if innocent else "the innocent page (other-chapter-gbk.html) has no match")
PY
echo "data: $ZHIWEN_DATA_DIR"
