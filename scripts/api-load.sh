#!/usr/bin/env bash
# Load test of the admin API: 200 concurrent clients on the match list and the match
# detail, 20 s each, against `zhiwen serve` on the embedded store with 100k matches.
# Uses Debian's wrk (installed with apt-get when missing). Numbers: docs/benchmarks.md.
#
#   scripts/api-load.sh [MATCHES] [CONNECTIONS] [SECONDS]
#
# Environment: PROFILE=release for optimised binaries (default debug); RUNS=N repeats the
# two measurements N times on the same filled store (report the median); BIN_DIR=DIR takes
# `zhiwen` and `examples/load_fill` from DIR instead of building them. Run the whole
# script under `nice -n -15` on a shared machine: the server and wrk inherit the priority.
set -euo pipefail
cd "$(dirname "$0")/.."
matches=${1:-100000}
conns=${2:-200}
secs=${3:-20}
profile=${PROFILE:-debug}
runs=${RUNS:-1}
if ! command -v wrk >/dev/null; then
  # shellcheck source=lib/apt.sh
  source scripts/lib/apt.sh
  apt_install wrk
fi
if [ -n "${BIN_DIR:-}" ]; then
  bin=$BIN_DIR
else
  # Two builds: a target selection (`--example`) applies to every package given.
  release=()
  [ "$profile" = release ] && release=(--release)
  cargo build "${release[@]}" -p zhiwen --bin zhiwen
  cargo build "${release[@]}" -p zhiwen-api --example load_fill
  bin=target/$profile
fi
data=$(mktemp -d)
server=
lua=$(mktemp)
trap 'if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi; rm -rf "$data" "$lua"' EXIT
key=$("$bin/examples/load_fill" "$data" "$matches")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# One key drives the whole load: lift its rate limit for the measurement.
ZHIWEN_DATA_DIR=$data "$bin/zhiwen" serve --listen "127.0.0.1:$port" --no-scheduler --no-worker \
  --rate-limit 100000000 --rate-burst 100000000 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
cat >"$lua" <<LUA
math.randomseed(42)
request = function()
  return wrk.format("GET", "/api/v1/matches/" .. math.random(1, $matches))
end
LUA
echo "== nice $(nice), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq "$runs"); do
  echo "== run $run/$runs: GET /api/v1/matches?limit=50 ($conns clients, ${secs}s)"
  wrk -t2 -c"$conns" -d"${secs}s" --latency -H "Authorization: Bearer $key" "http://127.0.0.1:$port/api/v1/matches?limit=50"
  echo "== run $run/$runs: GET /api/v1/matches/{random id} ($conns clients, ${secs}s)"
  wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$lua" -H "Authorization: Bearer $key" "http://127.0.0.1:$port"
  echo "== load average $(cut -d' ' -f1-3 /proc/loadavg)"
done
