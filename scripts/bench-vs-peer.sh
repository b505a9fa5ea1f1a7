#!/usr/bin/env bash
# The whole job against the peer, side by side, on the same bytes (issue #31; results in
# docs/benchmarks.md). Writes the labelled evaluation set (`zhiwen eval --write-set`,
# made from the test corpus .test-corpus/ of scripts/setup-corpus.sh) to a temporary
# directory, then measures, each in its own process:
#   zhiwen import works, zhiwen import pages, zhiwen match --all   (the release build, on
#       the embedded default store and index, in a fresh temporary data directory)
#   the peer: scripts/peer_datasketch.py (jieba words -> datasketch MinHash, 128
#       permutations -> MinHashLSH, threshold 0.5: the works inserted, the pages queried)
# and prints the CPU seconds (user + system), the peak resident memory of each step, the
# MB of input per CPU second, and the ratio of the peer's CPU time to zhiwen's.
#
# The peer (datasketch, jieba) is installed from PyPI into the test venv
# (.test-servers/venv; ZHIWEN_BENCH_VENV names another one). Options by environment:
#   ZHIWEN_BENCH_SEED (1), ZHIWEN_BENCH_SIZE (default; tiny, default or large),
#   ZHIWEN_BENCH_KEEP=1 keeps the temporary directory (its path is printed),
#   ZHIWEN_BENCH_BIN=PATH runs that zhiwen binary instead of building the release one
#   (to compare two builds), ZHIWEN_BENCH_PEER=0 leaves the peer out,
#   ZHIWEN_BENCH_RUNS=N (1) runs the whole job and the peer N times in turn, each job in
#   a fresh data directory, and reports each step's median (one run on a shared machine
#   varies by a fifth or more) with the run-by-run totals and ratios.
# CPU times come from GNU time (/usr/bin/time) when present, else from Python's
# resource.getrusage(RUSAGE_CHILDREN).
set -euo pipefail

DATASKETCH_VERSION="2.0.0"
JIEBA_VERSION="0.42.1"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${ZHIWEN_BENCH_VENV:-$ROOT/.test-servers/venv}"
PY="$VENV/bin/python"
SEED="${ZHIWEN_BENCH_SEED:-1}"
SIZE="${ZHIWEN_BENCH_SIZE:-default}"
RUNS="${ZHIWEN_BENCH_RUNS:-1}"

log() { echo "bench-vs-peer: $*" >&2; }

case "$RUNS" in '' | *[!0-9]* | 0*) log "ZHIWEN_BENCH_RUNS must be a positive number, not '$RUNS'"; exit 2 ;; esac

installed_version() {
    local out
    out="$("$PY" -m pip show "$1" 2>/dev/null || true)"
    sed -n 's/^Version: //p' <<<"$out"
}

if ! [ -x "$PY" ] || [ "$(installed_version datasketch)" != "$DATASKETCH_VERSION" ] \
    || [ "$(installed_version jieba)" != "$JIEBA_VERSION" ]; then
    # shellcheck source=lib/venv.sh
    source "$ROOT/scripts/lib/venv.sh"
    ensure_venv "$VENV"
    log "installing datasketch==$DATASKETCH_VERSION jieba==$JIEBA_VERSION into $VENV"
    "$PY" -m pip install --quiet --disable-pip-version-check \
        "datasketch==$DATASKETCH_VERSION" "jieba==$JIEBA_VERSION" >&2
fi
"$PY" -c 'import datasketch, jieba' || { log "datasketch or jieba not importable with $PY"; exit 1; }

if [ -n "${ZHIWEN_BENCH_BIN:-}" ]; then
    ZHIWEN="$ZHIWEN_BENCH_BIN"
else
    log "building zhiwen (release)"
    CARGO_INCREMENTAL=0 cargo build --release --locked -p zhiwen -j "${ZHIWEN_BENCH_JOBS:-2}" >&2
    ZHIWEN="$ROOT/target/release/zhiwen"
fi

TMP="$(mktemp -d)"
if [ "${ZHIWEN_BENCH_KEEP:-0}" = 1 ]; then
    log "keeping $TMP"
else
    trap 'rm -rf "$TMP"' EXIT
fi
SET="$TMP/set"
DATA="$TMP/data"

log "writing the labelled set (size $SIZE, seed $SEED)"
"$ZHIWEN" eval --size "$SIZE" --seed "$SEED" --write-set "$SET" >&2

# measure NAME CMD...: run CMD with its output in $TMP/NAME.out, and append
# "NAME user_secs sys_secs peak_rss_kib" to $TMP/times.
measure() {
    local name="$1"
    shift
    log "running $name"
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "$name %U %S %M" -a -o "$TMP/times" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" \
            || { cat "$TMP/$name.err" >&2; return 1; }
    else
        python3 - "$name" "$TMP/times" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" <<'PYEOF' \
            || { cat "$TMP/$name.err" >&2; return 1; }
import resource, subprocess, sys
name, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
rc = subprocess.call(cmd)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out, "a") as f:
    f.write(f"{name} {u.ru_utime:.2f} {u.ru_stime:.2f} {u.ru_maxrss}\n")
sys.exit(rc)
PYEOF
    fi
}

export ZHIWEN_DATA_DIR="$DATA" RUST_LOG="${RUST_LOG:-warn}"
unset ZHIWEN_CONFIG ZHIWEN_STORE ZHIWEN_INDEX ZHIWEN_MONGO_URI ZHIWEN_REDIS_URL
for run in $(seq 1 "$RUNS"); do
    # Each run in turn, zhiwen then the peer, so that both see the machine as it is then.
    [ "$RUNS" = 1 ] || log "run $run of $RUNS"
    rm -rf "$DATA"
    measure import-works "$ZHIWEN" import works --owner bench "$SET/works.jsonl"
    measure import-pages "$ZHIWEN" import pages "$SET/pages.warc"
    # The set's URLs are made up: evidence capture (fetching the pages again) is left out.
    measure match-all "$ZHIWEN" match --all --no-capture
    [ "${ZHIWEN_BENCH_PEER:-1}" = 0 ] || measure peer "$PY" "$ROOT/scripts/peer_datasketch.py" "$SET/works.jsonl" "$SET/pages.warc"
done

python3 - "$TMP/times" "$SET" "$TMP/peer.out" "$TMP/match-all.out" <<'PYEOF'
import json, os, statistics, sys
times, set_dir, peer_out, match_out = sys.argv[1:]
# Every run's figures by step, in run order; a step is reported by its medians.
runs = {}
for line in open(times):
    name, u, s, rss = line.split()
    runs.setdefault(name, []).append((float(u), float(s), int(rss)))
med = statistics.median
rows = {name: (med(r[0] for r in rs), med(r[1] for r in rs), med(r[2] for r in rs)) for name, rs in runs.items()}
n_runs = len(runs["match-all"])
size = sum(os.path.getsize(os.path.join(set_dir, f)) for f in ("works.jsonl", "pages.warc"))
mb = size / 1e6
works = sum(1 for _ in open(os.path.join(set_dir, "works.jsonl")))
pages = sum(1 for _ in open(os.path.join(set_dir, "labels.jsonl")))
print(f"input: {mb:.2f} MB ({works} works, {pages} pages; works.jsonl + pages.warc)")
if n_runs > 1:
    print(f"runs: {n_runs}, each step's median below")
print(f"{'step':<14}{'user s':>9}{'sys s':>9}{'cpu s':>9}{'peak MB':>10}{'MB/cpu-s':>10}")
zu = zs = 0.0
zrss = 0
for name in ("import-works", "import-pages", "match-all"):
    u, s, rss = rows[name]
    zu, zs, zrss = zu + u, zs + s, max(zrss, rss)
    print(f"{name:<14}{u:9.2f}{s:9.2f}{u + s:9.2f}{rss / 1024:10.0f}")
zc = max(zu + zs, 0.01)
print(f"{'zhiwen total':<14}{zu:9.2f}{zs:9.2f}{zc:9.2f}{zrss / 1024:10.0f}{mb / zc:10.2f}")
said = open(match_out).read().strip().splitlines()
print(f"zhiwen match --all: {said[-1] if said else '-'}")
if "peer" in rows:
    pu, ps, prss = rows["peer"]
    pc = max(pu + ps, 0.01)
    peer = json.loads(open(peer_out).read().strip().splitlines()[-1])
    print(f"{'peer':<14}{pu:9.2f}{ps:9.2f}{pc:9.2f}{prss / 1024:10.0f}{mb / pc:10.2f}")
    print(f"peer: {peer['candidate_pairs']} candidate pairs; jieba alone on the works: "
          f"{peer['jieba_works_mib_per_cpu_sec']} MiB per CPU second")
    print(f"ratio (peer CPU / zhiwen CPU): {pc / zc:.1f}x")
    if n_runs > 1:
        totals = [sum(u + s for u, s, _ in (runs[n][i] for n in ("import-works", "import-pages", "match-all")))
                  for i in range(n_runs)]
        ratios = [(u + s) / max(t, 0.01) for (u, s, _), t in zip(runs["peer"], totals)]
        print("run by run: zhiwen " + ", ".join(f"{t:.2f}" for t in totals) + " CPU s; ratio "
              + ", ".join(f"{r:.1f}x" for r in ratios))
PYEOF
