#!/usr/bin/env bash
# Load test of the admin API: 200 concurrent clients on the match list and the match
# detail, 20 s each, against `zhiwen serve` on the embedded store with 100k matches.
# Uses Debian's wrk (installed with apt-get when missing). Numbers: docs/benchmarks.md.
#
#   scripts/api-load.sh [MATCHES] [CONNECTIONS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
matches=${1:-100000}
conns=${2:-200}
secs=${3:-20}
profile=${PROFILE:-debug}
if ! command -v wrk >/dev/null; then
  sudo -n apt-get install -y wrk >/dev/null 2>&1 || apt-get install -y wrk >/dev/null
fi
if [ "$profile" = release ]; then
  cargo build --release -p zhiwen -p zhiwen-api --example load_fill
else
  cargo build -p zhiwen -p zhiwen-api --example load_fill
fi
bin=target/$profile
data=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$data"' EXIT
key=$("$bin/examples/load_fill" "$data" "$matches")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# One key drives the whole load: lift its rate limit for the measurement.
ZHIWEN_DATA_DIR=$data "$bin/zhiwen" serve --listen "127.0.0.1:$port" --no-scheduler --no-worker \
  --rate-limit 100000000 --rate-burst 100000000 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
lua=$(mktemp)
cat >"$lua" <<LUA
math.randomseed(42)
request = function()
  return wrk.format("GET", "/api/v1/matches/" .. math.random(1, $matches))
end
LUA
echo "== GET /api/v1/matches?limit=50 ($conns clients, ${secs}s)"
wrk -t2 -c"$conns" -d"${secs}s" --latency -H "Authorization: Bearer $key" "http://127.0.0.1:$port/api/v1/matches?limit=50"
echo "== GET /api/v1/matches/{random id} ($conns clients, ${secs}s)"
wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$lua" -H "Authorization: Bearer $key" "http://127.0.0.1:$port"
rm -f "$lua"
