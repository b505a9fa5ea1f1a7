#!/usr/bin/env bash
# The README's first command: build zhiwen and run the main job end to end on bundled
# public-domain works with the embedded default (SQLite store + embedded index in a fresh
# data directory; no database servers needed):
#
#   register works -> serve a local "pirate site" -> crawl it -> match (and capture) -> summary
#   -> an evidence package exported and verified offline
#   -> (when `zhiwen serve` is built in) the dashboard with a fresh admin key.
#
# Needs cargo and python3 (standard library only); installs Node.js and npm from Debian for
# the dashboard when missing. Everything stays on 127.0.0.1.
#
#   scripts/demo.sh              the whole demo, leaving the dashboard running
#   scripts/demo.sh --no-serve   stop after the evidence; exit status 1 if a copy was
#                                missed or an innocent page accused (for scripts)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"

step() { printf '\n==> %s\n' "$*"; }

SERVE=1
for arg in "$@"; do
    case "$arg" in
        --no-serve) SERVE=0 ;;
        -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "unknown option $arg (try --help)" >&2; exit 2 ;;
    esac
done

# The demo always runs on the embedded default in its own fresh data directory, whatever
# the caller's environment says.
unset ZHIWEN_CONFIG ZHIWEN_MONGO_URI ZHIWEN_MONGO_DATABASE ZHIWEN_REDIS_URL ZHIWEN_REDIS_PREFIX
export ZHIWEN_STORE=embedded ZHIWEN_INDEX=embedded
DATA="$ROOT/.zhiwen-data/demo"
export ZHIWEN_DATA_DIR="$DATA"

PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "building zhiwen (the first build takes a few minutes)"
cargo build --locked --bin zhiwen
ZHIWEN="${CARGO_TARGET_DIR:-$ROOT/target}/debug/zhiwen"
has_command() { "$ZHIWEN" --help | grep -qE "^  $1 "; }

rm -rf "$DATA"
mkdir -p "$DATA"
echo "fresh data directory: $DATA"

step "1. register the works: the first chapter of each of four classic novels, two rights holders"
"$ZHIWEN" import works samples/works/classics.jsonl --owner demo

step "2. a local pirate site on 127.0.0.1 (traditional script, homophones, ads, cuts, excerpts, innocent pages)"
SITE="$DATA/pirate-site"
mkdir -p "$SITE"
python3 - "$SITE" "$DATA/pirate-site.port" <<'PY' &
import functools, http.server, sys

class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

handler = functools.partial(Quiet, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()
PY
PIDS+=($!)
for _ in $(seq 1 100); do
    [ -s "$DATA/pirate-site.port" ] && break
    sleep 0.1
done
[ -s "$DATA/pirate-site.port" ] || { echo "the pirate site did not start" >&2; exit 1; }
SITE_URL="http://127.0.0.1:$(cat "$DATA/pirate-site.port")/"
python3 scripts/make-pirate-site.py --out "$SITE" --base-url "$SITE_URL" --manifest "$DATA/pirate-site.json"
echo "serving $SITE_URL (index.html, sitemap.xml, robots.txt)"

step "3. crawl it (robots.txt obeyed, sitemap read; --allow-loopback because the site is on 127.0.0.1)"
printf '%s\n' "$SITE_URL" >"$DATA/seeds.txt"
"$ZHIWEN" crawl --seeds "$DATA/seeds.txt" --job demo --allow-loopback --delay-ms 20 --depth 3

step "4. run the matching task (fingerprint, index, look up, verify, record)"
"$ZHIWEN" match --capture-allow-loopback

step "5. summary (from the match list: zhiwen report export --format json)"
"$ZHIWEN" report export --format json --out "$DATA/matches.jsonl"
"$ZHIWEN" report export --format csv --out "$DATA/matches.csv" 2>/dev/null
RESULT_OK=1
python3 - "$DATA/pirate-site.json" "$DATA/matches.jsonl" samples/works/classics.jsonl <<'PY' || RESULT_OK=0
import collections, json, sys

manifest = json.load(open(sys.argv[1], encoding="utf-8"))
rows = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
works = [json.loads(l) for l in open(sys.argv[3], encoding="utf-8") if l.strip()]
by_url = collections.defaultdict(list)
for r in rows:
    by_url[r["url"]].append(r)

def width(s):
    return sum(2 if ord(c) > 0x2E80 else 1 for c in s)

def pad(s, n):
    return s + " " * max(0, n - width(s))

print(f"works registered: {len(works)}")
for w in works:
    print(f"  {pad(w['id'], 16)} {pad(w['owner'], 14)} {w['title']}")
pages = manifest["pages"]
crawlable = [p for p in pages if p["expect"] != "not_crawled"]
copies = [p for p in pages if p["expect"] == "copy"]
innocent = [p for p in pages if p["expect"] == "innocent"]
print(f"\npirate site: {len(pages)} content pages ({len(copies)} copies, {len(innocent)} innocent, "
      f"{len(pages) - len(crawlable)} forbidden by robots.txt) + index, ranking, sitemap, robots.txt")
print(f"matches: {len(rows)}  by kind: " + ", ".join(f"{k}={n}" for k, n in sorted(collections.Counter(r['kind'] for r in rows).items())))
print()
print(f"  {pad('page', 28)} {pad('expected', 10)} {pad('found', 44)} result")
found_copies = accused = 0
for p in pages:
    path = p["url"][len(manifest["base_url"]) - 1:]
    hits = by_url.get(p["url"], [])
    found = ", ".join(f"{r['work_external_id']} {r['kind']} {r['score']:.2f}" for r in hits) or "-"
    if p["expect"] == "copy":
        ok = any(r["work_external_id"] == p["work"] for r in hits)
        found_copies += ok
        result = "found" if ok else "MISSED"
        if hits and not all(r["work_external_id"] == p["work"] for r in hits):
            result += " (+ WRONG WORK)"
    elif p["expect"] == "innocent":
        accused += bool(hits)
        result = "ACCUSED" if hits else "not accused"
    else:
        result = "not fetched" if not hits else "FETCHED"
        p["expect"] = "forbidden"
    print(f"  {pad(path, 28)} {pad(p['expect'], 10)} {pad(found[:44], 44)} {result}")
    print(f"      {p['how']}")

if rows:
    import re
    clean = lambda s: re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", s)).strip()
    cut = lambda s: clean(s)[:56] + ("…" if len(clean(s)) > 56 else "")
    print("\ntop evidence of each match (the longest copied passage, quoted from both originals; tags hidden):")
    for r in sorted(rows, key=lambda r: (-r["score"], r["url"])):
        path = r["url"][len(manifest["base_url"]) - 1:]
        print(f"  {r['work_external_id']} -> {path}  kind={r['kind']} score={r['score']:.2f} status={r['status']}")
        print(f"    work: {cut(r['evidence_section'])}")
        print(f"    page: {cut(r['evidence_page'])}")

print(f"\ncopies found: {found_copies} of {len(copies)}; innocent pages accused: {accused} of {len(innocent)}"
      + ("" if accused else " (none of the innocent pages was accused)"))
sys.exit(0 if found_copies == len(copies) and accused == 0 else 3)
PY
echo "match list: $DATA/matches.csv (also .jsonl); try: $ZHIWEN compare samples/hongloumeng-01.txt samples/pirate-copy-big5.html"

step "6. evidence: each match was captured (WARC of a fresh fetch, screenshot and print when Chromium is here) into the signed log; export one package and verify it offline"
rm -f "$DATA/evidence-match-1.zip"
"$ZHIWEN" evidence export 1 --out "$DATA/evidence-match-1.zip"
"$ZHIWEN" evidence verify "$DATA/evidence-match-1.zip" --public-key "$("$ZHIWEN" evidence key)" || RESULT_OK=0

if [ "$RESULT_OK" = 0 ]; then
    echo "WARNING: the result differs from the pirate site's ground truth (see the table above)" >&2
    [ "$SERVE" = 1 ] || exit 1
fi
if [ "$SERVE" = 0 ]; then
    exit 0
fi
if ! has_command serve || ! has_command keys; then
    echo
    echo "done (this build has no 'zhiwen serve' yet: the dashboard step is skipped)"
    exit 0
fi

step "7. the dashboard: an admin key and zhiwen serve (Ctrl-C to stop)"
UI_ARGS=()
if [ -f admin-ui/dist/index.html ]; then
    UI_ARGS=(--ui-dir "$ROOT/admin-ui/dist")
elif scripts/setup-node.sh >/dev/null; then
    # `npm ci`: exactly the locked versions, and package-lock.json stays as committed.
    echo "building the dashboard (admin-ui: npm ci, vite build; once)"
    (cd admin-ui && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent)
    UI_ARGS=(--ui-dir "$ROOT/admin-ui/dist")
else
    echo "Node.js/npm could not be installed: the dashboard cannot be built; serving the API only"
fi
KEY="$("$ZHIWEN" keys create --role admin --name demo-admin)"
API_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$ZHIWEN" serve --listen "127.0.0.1:$API_PORT" "${UI_ARGS[@]}" --crawl-allow-loopback &
PIDS+=($!)
SERVE_PID=$!
ready=0
for _ in $(seq 1 300); do
    if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$API_PORT/ready', timeout=1)" 2>/dev/null; then
        ready=1
        break
    fi
    kill -0 "$SERVE_PID" 2>/dev/null || break
    sleep 0.2
done
[ "$ready" = 1 ] || { echo "zhiwen serve did not become ready" >&2; exit 1; }
echo
echo "dashboard:   http://127.0.0.1:$API_PORT/   (sign in with the admin key)"
echo "admin key:   $KEY"
echo "API:         http://127.0.0.1:$API_PORT/api/v1/docs/"
echo "pirate site: $SITE_URL"
echo "data:        $DATA"
echo "(Ctrl-C stops zhiwen serve and the pirate site)"
wait "$SERVE_PID"
