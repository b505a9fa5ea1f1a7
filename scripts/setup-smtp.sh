#!/usr/bin/env bash
# Installs aiosmtpd (an asyncio SMTP server, Apache-2.0, run only as a separate process)
# into the repo-local virtual environment for the notice-sending integration tests: they
# send real mail to it on a loopback port and read what it stored. Idempotent: a second
# run installs nothing. Prints the path of the venv's python (run as
# `python -m aiosmtpd`).
set -euo pipefail

AIOSMTPD_VERSION="1.4.6"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.test-servers/venv"
PY="$VENV/bin/python"

log() { echo "setup-smtp: $*" >&2; }

installed_version() {
    # Captured first: `pip show | grep -q` under pipefail fails when grep exits early.
    local out
    out="$("$PY" -m pip show aiosmtpd 2>/dev/null || true)"
    sed -n 's/^Version: //p' <<<"$out"
}

if [ -x "$PY" ] && [ "$(installed_version)" = "$AIOSMTPD_VERSION" ]; then
    echo "$PY"
    exit 0
fi

# shellcheck source=lib/venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/venv.sh"
ensure_venv "$VENV"

log "installing aiosmtpd==$AIOSMTPD_VERSION into $VENV"
"$PY" -m pip install --quiet --disable-pip-version-check "aiosmtpd==$AIOSMTPD_VERSION" >&2

"$PY" -c 'import aiosmtpd.handlers' 2>/dev/null || { log "aiosmtpd not importable after install with $PY"; exit 1; }
echo "$PY"
