#!/usr/bin/env bash
# Latency from a chapter's publication on a watched pirate site to its alert (issue #29;
# docs/benchmarks.md "Latency from publication to alert").
#
#   scripts/bench-latency.sh [--minutes N] [--sites N] [--rate R] [--mode embedded|mongo-redis|both]
#                            [--drain-secs S] [--watch KEY=VALUE]... [--mongo-options QUERY]
#
# Registers three chapters of every four of the public-domain classics
# (tests/corpus/novels_classics.jsonl.gz), starts a pirate network on loopback (--sites
# hosts 127.0.1.1, 127.0.1.2, ... on one port, half listing their chapters on an index
# page, half in an RSS feed; scripts/bench_latency.py), watches every site
# (`zhiwen watch add`), runs zhiwen with the default politeness and [watch] settings, and
# publishes new pages for --minutes at --rate pages per second over all sites (most of
# them transformed copies of registered chapters, the rest innocent). Alerts arrive
# through the match webhook ([matcher.webhook]); the time of each is recorded. After the
# drain (every copy alerted, or --drain-secs), the zhiwen processes stop and the daily
# matching task (`zhiwen match`, "new since the last run") runs once more.
#
# Modes: `embedded` is `zhiwen serve` alone (SQLite store, embedded index, [watch] on);
# `mongo-redis` is the shape of deploy/: SecantusDB (a MongoDB-wire server, the test
# server of .test-servers/; $ZHIWEN_SECANTUSD names another) and redis-server
# ($ZHIWEN_REDIS_SERVER), `zhiwen serve --no-scheduler --crawls-only` with [watch] off,
# two `zhiwen crawl --watch` and two `zhiwen worker`s, each restarted when it ends (as
# the deployment's `restart: unless-stopped`; restarts are reported). Evidence captures are off in both
# (`--no-capture`): they are not on the alert's path, and their cost is measured by
# scripts/bench-captures.sh.
#
# The works are registered and indexed (`zhiwen import works`, then `zhiwen match`) before
# anything is published, as a holder's catalogue is before its chapters are copied.
#
# --watch KEY=VALUE adds a [watch] key to the settings (to compare with other settings;
# the figures of record use none). --mongo-options QUERY is added to the MongoDB URI of
# the mongo-redis mode; it is retryWrites=false unless given (as deploy/mongodb.md
# advises against SecantusDB, whose retryable-write registry costs it more with every
# write; docs/benchmarks.md has both figures); --mongo-options '' keeps the driver's default.
# Data, logs and results go to .zhiwen-data/bench-latency/<mode>/ (result.json there). The release binary is
# target/release/zhiwen (built when missing; $ZHIWEN_BIN names another). Exits 1 if a
# copy was missed, an innocent page accused or the daily task found something new.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"

MINUTES=3
SITES=100
RATE=10
MODE=both
DRAIN=300
WATCH_KEYS=()
MONGO_OPTIONS="retryWrites=false"
while [ $# -gt 0 ]; do
    case "$1" in
        --minutes) MINUTES="$2"; shift 2 ;;
        --sites) SITES="$2"; shift 2 ;;
        --rate) RATE="$2"; shift 2 ;;
        --mode) MODE="$2"; shift 2 ;;
        --drain-secs) DRAIN="$2"; shift 2 ;;
        --watch) WATCH_KEYS+=("$2"); shift 2 ;;
        --mongo-options) MONGO_OPTIONS="$2"; shift 2 ;;
        -h | --help) sed -n '2,38p' "$0"; exit 0 ;;
        *) echo "unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
done
case "$MODE" in
    embedded | mongo-redis) MODES=("$MODE") ;;
    both) MODES=(embedded mongo-redis) ;;
    *) echo "--mode embedded|mongo-redis|both" >&2; exit 2 ;;
esac

log() { printf '==> %s\n' "$*" >&2; }

ZHIWEN="${ZHIWEN_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/release/zhiwen}"
if [ ! -x "$ZHIWEN" ]; then
    log "building the release binary"
    cargo build --release --locked --bin zhiwen
fi

PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    PIDS=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_for() { # wait_for SECONDS COMMAND...: until COMMAND succeeds
    local n=$(($1 * 10))
    shift
    for _ in $(seq 1 "$n"); do
        "$@" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# CPU seconds (user + system) of the given processes and their descendants (those
# running, and those ended and waited for), as JSON {pid: seconds}.
cpu_json() {
    python3 - "$@" <<'PY'
import json, os, sys
tck = os.sysconf("SC_CLK_TCK")
stats = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            stats[int(d)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))
        except OSError:
            pass
def total(pid):
    return stats[pid][1] + sum(total(c) for c, (ppid, _) in stats.items() if ppid == pid)
print(json.dumps({p: (total(int(p)) / tck if int(p) in stats else None) for p in sys.argv[1:]}))
PY
}

# Run a command again whenever it ends, as the deployment's `restart: unless-stopped`
# does (SIGTERM stops it for good); each restart is logged to $1.
supervise() {
    local restarts="$1"
    shift
    local child=""
    trap 'kill -TERM "$child" 2>/dev/null; wait "$child" 2>/dev/null; exit 0' TERM
    while :; do
        "$@" &
        child=$!
        local s=0
        wait "$child" || s=$?
        echo "$(date -u +%FT%TZ) $* exited with status $s; restarted" >>"$restarts"
        sleep 1
    done
}

stop_pids() { # SIGTERM, then wait (at most 60 s each)
    local pid
    for pid in "$@"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "$@"; do
        for _ in $(seq 1 600); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
}

run_mode() {
    local mode="$1"
    local D="$ROOT/.zhiwen-data/bench-latency/$mode"
    rm -rf "$D"
    mkdir -p "$D/data" "$D/net"
    log "$mode: data, logs and results in ${D#"$ROOT"/}"
    unset ZHIWEN_STORE ZHIWEN_INDEX ZHIWEN_MONGO_URI ZHIWEN_MONGO_DATABASE ZHIWEN_REDIS_URL ZHIWEN_REDIS_PREFIX
    export ZHIWEN_CONFIG="$D/zhiwen.toml" ZHIWEN_DATA_DIR="$D/data" ZHIWEN_LOG=info
    local servers=()
    if [ "$mode" = mongo-redis ]; then
        local secantusd="${ZHIWEN_SECANTUSD:-}"
        [ -n "$secantusd" ] || secantusd="$(scripts/setup-secantusdb.sh)"
        local redis="${ZHIWEN_REDIS_SERVER:-}"
        [ -n "$redis" ] || redis="$(command -v redis-server || scripts/setup-redis.sh)"
        local mport rport
        mport="$(free_port)"
        rport="$(free_port)"
        "$secantusd" --host 127.0.0.1 --port "$mport" --storage-path :memory: --log-level WARNING \
            >"$D/secantusd.log" 2>&1 &
        PIDS+=($!)
        servers+=($!)
        "$redis" --port "$rport" --bind 127.0.0.1 --save "" --appendonly no --dir "$D" \
            --hash-max-listpack-entries 512 --hash-max-listpack-value 256 >"$D/redis.log" 2>&1 &
        PIDS+=($!)
        servers+=($!)
        wait_for 60 bash -c "exec 3<>/dev/tcp/127.0.0.1/$mport" || { log "SecantusDB did not start"; return 1; }
        wait_for 30 bash -c "exec 3<>/dev/tcp/127.0.0.1/$rport" || { log "redis-server did not start"; return 1; }
        export ZHIWEN_STORE=mongodb ZHIWEN_MONGO_URI="mongodb://127.0.0.1:$mport/?directConnection=true${MONGO_OPTIONS:+&$MONGO_OPTIONS}"
        export ZHIWEN_MONGO_DATABASE=zhiwen_bench ZHIWEN_INDEX=redis ZHIWEN_REDIS_URL="redis://127.0.0.1:$rport/"
    else
        export ZHIWEN_STORE=embedded ZHIWEN_INDEX=embedded
    fi

    log "$mode: the pirate network ($SITES sites) and the webhook receiver"
    python3 scripts/bench_latency.py network --dir "$D/net" --sites "$SITES" --rate "$RATE" \
        --minutes "$MINUTES" --drain-secs "$DRAIN" >"$D/network.log" 2>&1 &
    local net_pid=$!
    PIDS+=("$net_pid")
    wait_for 30 test -s "$D/net/network.json" || { log "the pirate network did not start"; cat "$D/network.log" >&2; return 1; }
    local webhook
    webhook="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["webhook"])' "$D/net/network.json")"
    {
        echo "[matcher.webhook]"
        echo "url = \"$webhook\""
        echo
        echo "[watch]"
        # As deploy/zhiwen.toml: the API replicas leave watching to the watcher.
        if [ "$mode" = mongo-redis ]; then echo "enabled = false"; fi
        for kv in "${WATCH_KEYS[@]}"; do echo "${kv%%=*} = ${kv#*=}"; done
    } >"$ZHIWEN_CONFIG"

    if [ "$mode" = mongo-redis ]; then
        "$ZHIWEN" migrate >"$D/migrate.log" 2>&1
    fi
    log "$mode: registering the works"
    python3 scripts/bench_latency.py works --out "$D/net/works.jsonl" >&2
    "$ZHIWEN" import works "$D/net/works.jsonl" --owner bench-press >"$D/import.log" 2>&1
    # Indexed before publishing starts (the API queues this when a work is registered;
    # the CLI's import leaves it to the next matching task).
    "$ZHIWEN" match --no-capture >"$D/index.log" 2>&1
    log "$mode: watching the $SITES sites"
    python3 -c 'import json, sys; [print(s["entry"]) for s in json.load(open(sys.argv[1]))["sites"]]' \
        "$D/net/network.json" >"$D/entries.txt"
    local entry
    while read -r entry; do
        "$ZHIWEN" watch add --owner bench-press --entry "$entry" --pattern '/book/[0-9]+\.html$' >>"$D/watch.log" 2>&1
    done <"$D/entries.txt"

    local api
    api="$(free_port)"
    local procs=()
    if [ "$mode" = embedded ]; then
        "$ZHIWEN" serve --listen "127.0.0.1:$api" --crawl-allow-loopback --no-capture >"$D/serve.log" 2>&1 &
        PIDS+=($!)
        procs+=($!)
    else
        supervise "$D/restarts.log" "$ZHIWEN" serve --listen "127.0.0.1:$api" --no-scheduler --crawls-only \
            --crawl-allow-loopback --no-capture >"$D/serve.log" 2>&1 &
        PIDS+=($!)
        procs+=($!)
        # Two watchers, as the deployment runs them: they share the sites through the
        # host leases in Redis.
        for w in 1 2; do
            supervise "$D/restarts.log" "$ZHIWEN" crawl --watch --allow-loopback >"$D/watcher-$w.log" 2>&1 &
            PIDS+=($!)
            procs+=($!)
        done
        for w in 1 2; do
            supervise "$D/restarts.log" "$ZHIWEN" worker >"$D/worker-$w.log" 2>&1 &
            PIDS+=($!)
            procs+=($!)
        done
    fi
    wait_for 120 python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$api/ready', timeout=1)" ||
        { log "zhiwen serve did not become ready"; tail -20 "$D/serve.log" >&2; return 1; }
    local cpu0 srv0
    cpu0="$(cpu_json "${procs[@]}")"
    srv0="$(cpu_json "${servers[@]}")"
    log "$mode: publishing for $MINUTES min at $RATE pages/s over $SITES sites (load: $(cut -d' ' -f1-3 /proc/loadavg))"
    touch "$D/net/go"
    local p
    while [ ! -e "$D/net/done" ]; do
        for p in "${procs[@]}" "$net_pid"; do
            kill -0 "$p" 2>/dev/null || { log "process $p ended early; see the logs in $D"; return 1; }
        done
        sleep 1
    done
    local cpu1 srv1
    cpu1="$(cpu_json "${procs[@]}")"
    srv1="$(cpu_json "${servers[@]}")"
    log "$mode: drained (load: $(cut -d' ' -f1-3 /proc/loadavg)); stopping zhiwen"
    stop_pids "${procs[@]}"
    python3 - "$D/net/cpu.json" "$cpu0" "$cpu1" "$srv0" "$srv1" "$mode" <<'PY'
import json, sys
out, c0, c1, s0, s1, mode = sys.argv[1], *map(json.loads, sys.argv[2:6]), sys.argv[6]
names = ["serve"] if mode == "embedded" else ["serve", "watcher-1", "watcher-2", "worker-1", "worker-2"]
by = {n: round(c1[p] - c0[p], 1) for n, p in zip(names, c0)}
servers = {n: round(s1[p] - s0[p], 1) for n, p in zip(["secantusd", "redis"], s0)}
json.dump({"zhiwen": sum(by.values()), "by_process": by, "servers": servers}, open(out, "w"))
PY
    "$ZHIWEN" report export --format json --out "$D/net/matches-before.jsonl" >>"$D/report.log" 2>&1
    log "$mode: the daily matching task (zhiwen match: new since the last run)"
    "$ZHIWEN" match --no-capture >"$D/match.log" 2>&1
    "$ZHIWEN" report export --format json --out "$D/net/matches-after.jsonl" >>"$D/report.log" 2>&1
    cleanup
    cat "$D/match.log" >&2
    if [ -s "$D/restarts.log" ]; then
        log "$mode: processes restarted during the run (as the deployment's restart policy would):"
        cat "$D/restarts.log" >&2
    fi
    local status=0
    python3 scripts/bench_latency.py report --dir "$D/net" --mode "$mode" --json "$D/result.json" || status=$?
    return "$status"
}

STATUS=0
for mode in "${MODES[@]}"; do
    # A subshell per mode, so that errexit holds inside it (not in `run_mode || ...`) and
    # its processes are stopped when it ends.
    set +e
    (
        set -e
        trap cleanup EXIT
        run_mode "$mode"
    )
    s=$?
    set -e
    [ "$s" = 0 ] || STATUS=1
done
exit "$STATUS"
