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

# shellcheck source=lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
apt_install --no-install-recommends nodejs npm

node_ok || { echo "setup-node: Node.js 18 or newer is needed (found: $(node --version 2>&1))" >&2; exit 1; }
command -v npm
