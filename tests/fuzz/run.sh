#!/usr/bin/env bash
# Run every libFuzzer target of a fuzz build for a while.
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS
#
# BUILD_DIR is a `make O=... SANITIZE=fuzz CC=clang fuzz-bins` output folder.
# Each $BUILD_DIR/tests/fuzz/fuzz_NAME runs for SECONDS on a copy of
# tests/fuzz/corpus/NAME/ in a temporary folder (the committed corpus is never
# written to), and prints how many inputs it executed. A crash, leak, timeout
# or out-of-memory fails the run: the input is kept in
# $BUILD_DIR/fuzz-artifacts/ and the exit status is non-zero.
set -u
build=${1:?usage: run.sh BUILD_DIR SECONDS}
seconds=${2:?usage: run.sh BUILD_DIR SECONDS}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/sandnet-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"

targets=0 failed=0
for bin in "$build"/tests/fuzz/fuzz_*; do
	[ -f "$bin" ] && [ -x "$bin" ] || continue
	name=$(basename "$bin")
	name=${name#fuzz_}
	# a binary left in an old build by a target that has since been merged away
	[ -f "$here/fuzz_$name.c" ] || { echo "skip  fuzz/$name: no tests/fuzz/fuzz_$name.c (a stale binary)"; continue; }
	targets=$((targets + 1))
	corpus=$work/$name/corpus
	mkdir -p "$corpus" "$work/$name/artifacts"
	if [ -d "$here/corpus/$name" ]; then
		cp -- "$here/corpus/$name"/* "$corpus"/ 2>/dev/null || true
	fi
	log=$work/$name/log
	# -max_total_time bounds the run; -timeout one input; the outer timeout a hang of libFuzzer itself.
	timeout --kill-after=10 $((seconds + 60)) "$bin" \
		-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=70000 \
		-print_final_stats=1 -artifact_prefix="$work/$name/artifacts/" \
		"$corpus" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	seeds=$(ls "$here/corpus/$name" 2>/dev/null | wc -l)
	if [ "$rc" -eq 0 ]; then
		printf 'PASS  fuzz/%-32s %s executions in %ss (%s seeds, %s inputs now)\n' "$name" \
			"${execs:-?}" "$seconds" "$seeds" "$(ls "$corpus" | wc -l)"
	else
		failed=$((failed + 1))
		printf 'FAIL  fuzz/%-32s (exit %s after %s executions)\n' "$name" "$rc" "${execs:-?}"
		grep -E 'ERROR|SUMMARY|Test unit written|^fuzz_|#[0-9]+ .* in [A-Za-z_0-9]+ [^ (]*\.c:' "$log" |
			head -n 30 | sed 's/^/    | /'
		cp -- "$work/$name/artifacts"/* "$artifacts"/ 2>/dev/null &&
			echo "    crashing input(s) kept in $artifacts/"
		cp -- "$log" "$artifacts/$name.log"
	fi
done

if [ "$targets" -eq 0 ]; then
	echo "run.sh: no fuzz_* binaries in $build/tests/fuzz (build with make fuzz-bins)" >&2
	exit 1
fi
echo "$targets fuzz targets, $failed failed"
[ "$failed" -eq 0 ]
