#!/usr/bin/env bash
# Schema-based fuzzing of the admin API: schemathesis (PyPI, installed into
# .test-servers/schemathesis) generates requests from GET /api/v1/openapi.json and
# checks that no response is a 5xx (`not_a_server_error`), against `zhiwen serve` on a
# fresh embedded store holding the bundled samples (imported and matched) and an admin
# key. Slow (minutes), so it is not part of scripts/test.sh. Result: docs/api.md.
#
#   scripts/api-fuzz.sh [MAX_EXAMPLES]
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-100}
venv=.test-servers/schemathesis
if [ ! -x "$venv/bin/st" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'schemathesis==4.32.5'
fi
cargo build -p zhiwen
bin=target/debug/zhiwen
data=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$data"' EXIT
export ZHIWEN_DATA_DIR=$data
"$bin" import works samples/works/classics.jsonl --owner jinling-press >/dev/null
"$bin" import pages samples/pirate-copy-big5.html samples/other-chapter-gbk.html --base-url http://pirate.example/book/ >/dev/null
"$bin" match >/dev/null
key=$("$bin" keys create --role admin --name fuzz 2>/dev/null)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --listen "127.0.0.1:$port" --no-scheduler --no-worker --rate-limit 100000 --rate-burst 100000 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
"$venv/bin/st" run "http://127.0.0.1:$port/api/v1/openapi.json" --url "http://127.0.0.1:$port" \
  -H "Authorization: Bearer $key" -c not_a_server_error --max-examples "$max" --workers 2
