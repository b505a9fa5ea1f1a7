#!/usr/bin/env bash
# Make Debian's redis-server available and print its path.
#
# Idempotent: does nothing when redis-server is already on PATH (or named by
# $ZHIWEN_REDIS_SERVER). Otherwise installs the Debian package with apt-get, running
# `apt-get update` only if the install fails without it. Tests start their own
# redis-server on a free loopback port (services/testkit/src/redis.rs); for a
# developer's long-running instance see scripts/redis-dev.sh.
set -euo pipefail

find_server() {
    if [[ -n "${ZHIWEN_REDIS_SERVER:-}" && -x "${ZHIWEN_REDIS_SERVER}" ]]; then
        echo "${ZHIWEN_REDIS_SERVER}"
        return 0
    fi
    command -v redis-server 2>/dev/null && return 0
    # Debian installs it in /usr/bin, which may be missing from a minimal PATH.
    [[ -x /usr/bin/redis-server ]] && { echo /usr/bin/redis-server; return 0; }
    return 1
}

if path=$(find_server); then
    echo "$path"
    exit 0
fi

# shellcheck source=lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"
apt_install --no-install-recommends redis-server

# The package starts a system service on port 6379 where an init system runs; tests
# never use it (they start their own server on a free port).
path=$(find_server) || { echo "setup-redis: redis-server still not found after install" >&2; exit 1; }
echo "$path"
