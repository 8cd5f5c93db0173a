#!/usr/bin/env bash
# make bench: the datapath's checksum against a plain 16-bit loop.
#
#   bench/csum.sh BUILD_DIR [MS_PER_POINT]
#
# Builds bench/csum_bench.c with datapath/wire/csum.c (the datapath's own
# checksum, with the Makefile's default -O2) into BUILD_DIR/bench/csum_bench
# and prints ns per KiB at 64, 1500, 9000 and 65536 bytes; docs/benchmarks.md
# records the figures. Needs no root.
set -u
build=${1:?usage: bench/csum.sh BUILD_DIR [MS_PER_POINT]}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
mkdir -p "$build/bench"
${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$repo" -o "$build/bench/csum_bench" \
	"$here/csum_bench.c" "$repo/datapath/wire/csum.c" || exit 1
echo "bench/csum.sh: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs"
"$build/bench/csum_bench" "${2:-50}"
