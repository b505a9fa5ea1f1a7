#!/usr/bin/env bash
# Cost of evidence captures (docs/benchmarks.md, "Evidence captures"): the demo's pirate
# site on 127.0.0.1, its 6 matches captured again and again, with and without the browser
# (WARC of a fresh fetch only, vs WARC + full-page screenshot + PDF print), one
# `zhiwen evidence capture MATCH` process per capture; then the bytes stored per capture,
# and the matching task's own time with captures queued and without.
#
#   scripts/bench-captures.sh [ROUNDS]      (default 3 rounds of the 6 matches)
#
# Needs a built `zhiwen` (cargo build --release --bin zhiwen for release figures;
# ZHIWEN=path picks the binary) and Chromium on PATH for the second mode.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROUNDS="${1:-3}"
ZHIWEN="${ZHIWEN:-target/release/zhiwen}"
[ -x "$ZHIWEN" ] || { echo "no $ZHIWEN (cargo build --release --bin zhiwen, or ZHIWEN=...)" >&2; exit 2; }
CHROMIUM="$(command -v chromium || command -v chromium-browser || true)"
[ -n "$CHROMIUM" ] || { echo "no chromium on PATH" >&2; exit 2; }
WORK="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
unset ZHIWEN_CONFIG
export ZHIWEN_STORE=embedded ZHIWEN_INDEX=embedded

python3 - "$WORK/site" "$WORK/port" <<'PY' &
import functools, http.server, os, sys
os.makedirs(sys.argv[1], exist_ok=True)
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=sys.argv[1]))
open(sys.argv[2] + ".tmp", "w").write(str(server.server_address[1]))
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
PY
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
URL="http://127.0.0.1:$(cat "$WORK/port")/"
python3 scripts/make-pirate-site.py --out "$WORK/site" --base-url "$URL" --manifest "$WORK/manifest.json" >/dev/null
printf '%s\n' "$URL" >"$WORK/seeds.txt"

prepare() { # data dir, extra match flags...
    local data="$1"; shift
    export ZHIWEN_DATA_DIR="$data"
    "$ZHIWEN" import works samples/works/classics.jsonl --owner bench >/dev/null
    "$ZHIWEN" crawl --seeds "$WORK/seeds.txt" --job b --allow-loopback --delay-ms 0 --depth 3 >/dev/null
    "$ZHIWEN" match "$@"
}

echo "== the matching task, captures queued (the default) and not queued"
prepare "$WORK/queued" --no-capture
printf '[matcher]\ncapture_new_matches = false\n' >"$WORK/off.toml"
ZHIWEN_CONFIG="$WORK/off.toml" prepare "$WORK/off" --no-capture

for mode in warc browser; do
    data="$WORK/$mode"
    prepare "$data" --no-capture >/dev/null
    export ZHIWEN_DATA_DIR="$data"
    flags=(--capture-allow-loopback)
    [ "$mode" = warc ] && flags+=(--chromium /nonexistent/chromium) || flags+=(--chromium "$CHROMIUM")
    n=0
    start=$(date +%s.%N)
    for _ in $(seq 1 "$ROUNDS"); do
        for id in 1 2 3 4 5 6; do
            "$ZHIWEN" evidence capture "$id" "${flags[@]}" >/dev/null
            n=$((n + 1))
        done
    done
    end=$(date +%s.%N)
    bytes=$(du -sb "$data/evidence/files" | cut -f1)
    python3 -c "import sys; n,s,e,b=int(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3]),int(sys.argv[4]); print(f'{sys.argv[5]:8} {n} captures in {e-s:.1f} s: {n/(e-s):.2f} captures/s, {(e-s)/n*1000:.0f} ms each; {b/n/1024:.0f} KiB stored per capture')" "$n" "$start" "$end" "$bytes" "$mode"
done
