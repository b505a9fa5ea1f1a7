# shellcheck shell=bash
# step "NAME": start a named step of a script, printing how long the previous one took; at
# exit the last step's time and the script's total are printed too, so a slow run shows where
# its time went. Sourced by test.sh and test-ui.sh; not run on its own.

_step_name=""
_step_start=$SECONDS

_step_done() {
    if [[ -n "$_step_name" ]]; then
        printf '    [%ds] %s\n' $((SECONDS - _step_start)) "$_step_name"
    fi
}

step() {
    _step_done
    _step_name="$1"
    _step_start=$SECONDS
    printf '\n==> %s\n' "$*"
}

_steps_exit() {
    local rc=$?
    _step_done
    printf '    [%ds] total of %s (exit %d)\n' "$SECONDS" "$(basename "$0")" "$rc"
}
trap _steps_exit EXIT
