#!/usr/bin/env bash
# Run one build's tests: every Check unit test binary, then every integration
# scenario (root only). Prints one line per test as it ends and a closing
# "N passed, N failed, N skipped"; exits non-zero when anything failed.
#
#   tests/run-tests.sh BUILD_DIR [PATTERN]
#
# Integration scenarios run SANDNET_TEST_JOBS at a time (default: the CPUs
# this runs on, at most 4): each makes its own namespaces with a unique
# prefix and its own state folder, so they do not meet. A scenario whose
# script has the line "# sandnet-test: alone" (throughput, rates, rings and
# timings it measures) runs with nothing else beside it: those run first, one
# by one, and then the others. (Taken in name order, each alone scenario
# waited for the slowest one running, with the other slots idle: about a
# minute a pass.)
set -u
build=${1:?usage: run-tests.sh BUILD_DIR [PATTERN]}
pattern=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
export SANDNET_BUILD=$build
# Debian's tools (apt-get) before whatever a login shell put first: the tests
# compare against those, and a version manager's shim in front of python3
# (pyenv here) made each of the suite's thousands of python3 starts take
# 0.43 s instead of 0.04 s.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export SANDNET_TESTS=$here
# Leaks and fd leaks fail the sanitizer build; Check forks each test.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
logdir=$build/test-logs
mkdir -p "$logdir"
jobs_max=${SANDNET_TEST_JOBS:-$(nproc)}
[ "$jobs_max" -ge 1 ] 2>/dev/null || jobs_max=1
[ "$jobs_max" -le 4 ] || jobs_max=4

passed=0 failed=0 skipped=0
failures=()

# run_one NAME CMD...: the test itself, in the background or not; its log and
# exit status and duration in $logdir/NAME.{log,rc}
run_one() {
	local name=$1 log=$logdir/$1.log start; shift
	mkdir -p "$(dirname "$log")"
	start=$(date +%s)
	timeout --kill-after=10 600 "$@" >"$log" 2>&1
	echo "$? $(($(date +%s) - start))" >"$logdir/$name.rc"
}

# report NAME: one line from its .rc, and its log's tail on failure
report() {
	local name=$1 rc secs log=$logdir/$1.log
	read -r rc secs <"$logdir/$name.rc"
	rm -f "$logdir/$name.rc"
	case $rc in
	0)  passed=$((passed + 1)); printf 'PASS  %-40s %3ss\n' "$name" "$secs";;
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
	report "$name"
done

declare -A running=()	# pid -> test name
# reap_one: wait for any running scenario and report it
reap_one() {
	local pid
	wait -n -p pid "${!running[@]}" 2>/dev/null
	[ -n "${pid:-}" ] && [ -n "${running[$pid]:-}" ] || return 0
	report "${running[$pid]}"
	unset "running[$pid]"
}

alone=() together=()
for t in "$here"/integration/*.sh; do
	[ -e "$t" ] || continue
	name=integration/$(basename "$t" .sh)
	[[ -n $pattern && $name != *$pattern* ]] && continue
	if [ "$(id -u)" -ne 0 ]; then
		skipped=$((skipped + 1)); printf 'SKIP  %-40s needs root\n' "$name"; continue
	fi
	if grep -q '^# sandnet-test: alone' "$t"; then
		alone+=("$t")
	else
		together+=("$t")
	fi
done
for t in "${alone[@]}"; do
	name=integration/$(basename "$t" .sh)
	run_one "$name" bash "$t"
	report "$name"
done
for t in "${together[@]}"; do
	name=integration/$(basename "$t" .sh)
	while [ ${#running[@]} -ge "$jobs_max" ]; do reap_one; done
	run_one "$name" bash "$t" &
	running[$!]=$name
done
while [ ${#running[@]} -gt 0 ]; do reap_one; done

[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
