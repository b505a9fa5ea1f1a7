#!/usr/bin/env bash
# Installs SecantusDB (a MongoDB-wire-compatible server, GPL-2.0, run only as a separate
# process) into a repo-local virtual environment for the MongoDB integration tests.
# Idempotent: a second run installs nothing. Prints the path of `secantusd-py`.
set -euo pipefail

SECANTUS_VERSION="0.7.0b3"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.test-servers/venv"
BIN="$VENV/bin/secantusd-py"

log() { echo "setup-secantusdb: $*" >&2; }

installed_version() {
    # Captured first: `pip show | grep -q` under pipefail fails when grep exits early.
    local out
    out="$("$VENV/bin/python" -m pip show SecantusDB 2>/dev/null || true)"
    sed -n 's/^Version: //p' <<<"$out"
}

if [ -x "$BIN" ] && [ "$(installed_version)" = "$SECANTUS_VERSION" ]; then
    echo "$BIN"
    exit 0
fi

# shellcheck source=lib/venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/venv.sh"
ensure_venv "$VENV"

log "installing SecantusDB==$SECANTUS_VERSION into $VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "SecantusDB==$SECANTUS_VERSION" >&2

[ -x "$BIN" ] || { log "secantusd-py not found after install at $BIN"; exit 1; }
echo "$BIN"
