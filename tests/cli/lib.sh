# Sourced by the CLI ctests (tests/cli/run_*.sh): the pass/fail counters and the checks they share.
passed=0 failed=0

# expect EXIT_CODE PATTERN -- COMMAND...: run, check the exit code and that stdout+stderr (newlines as spaces)
# match the extended regex PATTERN.
expect() {
    local code=$1 pattern=$2
    shift 3
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" -ne "$code" ] || ! printf '%s' "$out" | tr '\n' ' ' | grep -qE -- "$pattern"; then
        echo "FAIL: $* -> exit $rc (want $code, /$pattern/), output: $(printf '%s' "$out" | head -5)"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
}

# check DESCRIPTION COMMAND...: the command must succeed.
check() {
    local what=$1
    shift
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failed=$((failed + 1)); fi
}

# finish NAME: the summary line; the script's exit status is whether every check passed.
finish() {
    echo "${1:+$1: }$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
