#!/usr/bin/env bash
# Run one build's tests: every Check unit test binary, then every integration
# scenario (root only). Prints one line per test and a closing
# "N passed, N failed, N skipped"; exits non-zero when anything failed.
#
#   tests/run-tests.sh BUILD_DIR [PATTERN]
set -u
build=${1:?usage: run-tests.sh BUILD_DIR [PATTERN]}
pattern=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
export SANDNET_BUILD=$build
export SANDNET_TESTS=$here
# Leaks and fd leaks fail the sanitizer build; Check forks each test.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
logdir=$build/test-logs
mkdir -p "$logdir"

passed=0 failed=0 skipped=0
failures=()

run_one() {
	local name=$1; shift
	local log=$logdir/$name.log start end rc
	mkdir -p "$(dirname "$log")"
	start=$(date +%s)
	timeout --kill-after=10 600 "$@" >"$log" 2>&1
	rc=$?
	end=$(date +%s)
	case $rc in
	0)  passed=$((passed + 1)); printf 'PASS  %-40s %3ss\n' "$name" $((end - start));;
	77) skipped=$((skipped + 1)); printf 'SKIP  %-40s %s\n' "$name" "$(tail -n 1 "$log")";;
	*)  failed=$((failed + 1)); failures+=("$name")
	    printf 'FAIL  %-40s (exit %s)\n' "$name" "$rc"; sed 's/^/    | /' "$log" | tail -n 40;;
	esac
}

for t in "$build"/tests/unit/test_*; do
	[ -x "$t" ] || continue
	name=unit/$(basename "$t")
	[[ -n $pattern && $name != *$pattern* ]] && continue
	run_one "$name" "$t"
done

for t in "$here"/integration/*.sh; do
	[ -e "$t" ] || continue
	name=integration/$(basename "$t" .sh)
	[[ -n $pattern && $name != *$pattern* ]] && continue
	if [ "$(id -u)" -ne 0 ]; then
		skipped=$((skipped + 1)); printf 'SKIP  %-40s needs root\n' "$name"; continue
	fi
	run_one "$name" bash "$t"
done

[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
