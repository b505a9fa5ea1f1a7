#!/usr/bin/env bash
# Start a local redis-server for development on 127.0.0.1 when none is answering there.
#
#   scripts/redis-dev.sh [start|stop|status]     (default: start)
#
# Port: $ZHIWEN_REDIS_PORT (default 6379). Data, pid and log live in
# .test-servers/redis-dev/ (git-ignored), with RDB snapshots so a restart keeps the
# index; the index is derived data anyway (`zhiwen reindex` rebuilds it). The server
# is tuned for the index's bucketed layout: hashes of up to 512 fields and 256-byte
# values stay in the compact listpack encoding (see services/index/src/redis/mod.rs).
# Installs Debian's redis-server first if needed (scripts/setup-redis.sh).
# Prints the URL to use (ZHIWEN_REDIS_URL).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT="${ZHIWEN_REDIS_PORT:-6379}"
DIR="$ROOT/.test-servers/redis-dev"
PIDFILE="$DIR/redis.pid"
URL="redis://127.0.0.1:$PORT/"

log() { echo "redis-dev: $*" >&2; }

answering() {
    # redis-cli ships with the Debian package; fall back to bash's /dev/tcp.
    if command -v redis-cli >/dev/null 2>&1; then
        [ "$(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null)" = "PONG" ]
    else
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT" && printf 'PING\r\n' >&3 && head -c 5 <&3 | grep -q PONG) 2>/dev/null
    fi
}

case "${1:-start}" in
start)
    if answering; then
        log "a Redis already answers on 127.0.0.1:$PORT; leaving it alone"
        echo "$URL"
        exit 0
    fi
    SERVER="$("$ROOT/scripts/setup-redis.sh")"
    mkdir -p "$DIR"
    "$SERVER" --port "$PORT" --bind 127.0.0.1 --protected-mode yes \
        --daemonize yes --pidfile "$PIDFILE" --logfile "$DIR/redis.log" \
        --dir "$DIR" --save "300 1" --appendonly no \
        --hash-max-listpack-entries 512 --hash-max-listpack-value 256
    for _ in $(seq 1 100); do
        if answering; then
            log "started $SERVER on 127.0.0.1:$PORT (pid $(cat "$PIDFILE" 2>/dev/null || echo ?), log $DIR/redis.log)"
            echo "$URL"
            exit 0
        fi
        sleep 0.1
    done
    log "redis-server did not answer on port $PORT; see $DIR/redis.log"
    exit 1
    ;;
stop)
    if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
        kill "$(cat "$PIDFILE")"
        log "stopped the development server (pid $(cat "$PIDFILE"))"
    else
        log "no development server started by this script is running"
    fi
    ;;
status)
    if answering; then echo "$URL"; else log "nothing answers on 127.0.0.1:$PORT"; exit 1; fi
    ;;
*)
    echo "usage: $0 [start|stop|status]" >&2
    exit 2
    ;;
esac
