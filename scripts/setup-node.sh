#!/usr/bin/env bash
# Make Node.js and npm available for the dashboard (admin-ui/) and print npm's path.
#
# Idempotent: does nothing when npm is already on PATH with a Node.js of at least 18 (what
# Vite 5 and Vitest 2 need). Otherwise installs Debian's `nodejs` and `npm` packages with
# apt-get, running `apt-get update` only if the install fails without it.
set -euo pipefail

node_ok() {
    command -v npm >/dev/null 2>&1 || return 1
    command -v node >/dev/null 2>&1 || return 1
    local major
    major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" || return 1
    [[ "$major" =~ ^[0-9]+$ ]] && ((major >= 18))
}

if node_ok; then
    command -v npm
    exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup-node: need root or sudo to install nodejs and npm" >&2; exit 1; }
    SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
echo "setup-node: installing Debian's nodejs and npm" >&2
if ! $SUDO apt-get install -y --no-install-recommends nodejs npm >&2; then
    echo "setup-node: install failed; running apt-get update and retrying" >&2
    $SUDO apt-get update >&2
    $SUDO apt-get install -y --no-install-recommends nodejs npm >&2
fi

node_ok || { echo "setup-node: Node.js 18 or newer is needed (found: $(node --version 2>&1))" >&2; exit 1; }
command -v npm
