# shellcheck shell=bash
# ensure_venv DIR: make sure DIR is a Python virtual environment (python3 -m venv),
# installing Debian's python3-venv when the interpreter lacks it. Progress goes to stderr.
# Sourced by the setup scripts that install from PyPI into the test venv; not run on its own.

ensure_venv() {
    local venv="$1"
    command -v python3 >/dev/null || { echo "ensure_venv: python3 is required" >&2; return 1; }
    [ -x "$venv/bin/python" ] && return 0
    mkdir -p "$(dirname "$venv")"
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
        echo "ensure_venv: python3 -m venv failed; installing python3-venv" >&2
        rm -rf "$venv"
        # shellcheck source=apt.sh
        source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
        apt_install python3-venv
        python3 -m venv "$venv"
    fi
}
