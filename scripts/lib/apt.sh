# shellcheck shell=bash
# apt_install [apt-get options] PACKAGE...: install Debian packages, as root or through
# sudo, without prompts. `apt-get update` runs only when the install fails without it (a
# fresh image has no package lists; a warm one should not pay for a refresh). Progress goes
# to stderr so that scripts printing a path on stdout stay usable in `$(...)`.
# Sourced by the setup scripts; not run on its own.

apt_install() {
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "apt_install: need root or sudo to install: $*" >&2
            return 1
        fi
        sudo=(sudo)
    fi
    echo "apt_install: installing $*" >&2
    if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2; then
        echo "apt_install: install failed; running apt-get update and retrying" >&2
        "${sudo[@]}" apt-get update -qq >&2
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
    fi
}
