// SPDX-License-Identifier: MIT
/*
 * csum_bench.c - the Internet checksum: a plain loop against the datapath's
 *
 *   csum_bench [MS_PER_POINT]
 *
 * Theory of operation: for each size (64, 1500, 9000, 65536 bytes, at an odd
 * address as packet data often is), each implementation runs over the same
 * random buffer in a timed loop of at least MS_PER_POINT milliseconds
 * (default 50); the best of five such loops is printed as nanoseconds per
 * KiB, with the result checked against the plain loop's. Implementations:
 *   plain     RFC 1071 as written: 16-bit big-endian words, one at a time
 *   prev      the datapath's checksum before issue 6: 32-bit halves of
 *             64-bit loads into one 64-bit accumulator
 *   fast      csum_partial(): four 64-bit add-with-carry chains (csum.c)
 * bench/csum.sh builds and runs it (make bench); docs/benchmarks.md has the
 * figures.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datapath/wire/csum.h"

static uint32_t plain_csum(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *b = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

static uint32_t prev_csum(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *b = data;
	uint64_t acc = 0, w;
	uint16_t w16;

	while (len >= 8) {
		memcpy(&w, b, 8);
		acc += (uint32_t)w;
		acc += w >> 32;
		b += 8;
		len -= 8;
	}
	while (len >= 2) {
		memcpy(&w16, b, 2);
		acc += w16;
		b += 2;
		len -= 2;
	}
	if (len) {
		uint8_t pad[2] = { b[0], 0 };

		memcpy(&w16, pad, 2);
		acc += w16;
	}
	acc = (acc & 0xffffffff) + (acc >> 32);
	acc = (acc & 0xffffffff) + (acc >> 32);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	return sum + ntohs((uint16_t)acc);
}

typedef uint32_t (*csum_fn)(const void *, size_t, uint32_t);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Best of five timed loops of at least @ms each: ns per KiB. */
static double bench(csum_fn f, const uint8_t *b, size_t len, double ms, uint16_t *res)
{
	double best = 0;
	int round;

	for (round = 0; round < 5; round++) {
		volatile uint32_t sink = 0;
		double t0 = now_ns(), t;
		unsigned long n = 0;

		do {
			unsigned int k;

			for (k = 0; k < 64; k++)
				sink += f(b, len, 0);
			n += 64;
			t = now_ns() - t0;
		} while (t < ms * 1e6);
		t = t / n / len * 1024;
		if (!round || t < best)
			best = t;
		*res = csum_fold(f(b, len, 0));
		(void)sink;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64, 1500, 9000, 65536 };
	static const struct { const char *name; csum_fn f; } impl[] = {
		{ "plain", plain_csum },
		{ "prev", prev_csum },
		{ "fast", csum_partial },
	};
	double ms = argc > 1 ? atof(argv[1]) : 50;
	uint8_t *buf = malloc(65536 + 1);
	unsigned int i, j;
	int bad = 0;

	if (!buf || ms <= 0) {
		fprintf(stderr, "usage: csum_bench [MS_PER_POINT]\n");
		return 2;
	}
	srand(1);
	for (i = 0; i < 65536 + 1; i++)
		buf[i] = (uint8_t)rand();
	printf("%-8s %10s %10s %10s %10s %10s\n", "bytes", "plain", "prev", "fast", "plain/fast",
	       "prev/fast");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double ns[3];
		uint16_t r[3];

		for (j = 0; j < 3; j++)
			ns[j] = bench(impl[j].f, buf + 1, sizes[i], ms, &r[j]);
		for (j = 1; j < 3; j++)
			if (r[j] != r[0]) {
				fprintf(stderr, "csum_bench: %s gives %04x at %zu bytes, plain %04x\n",
					impl[j].name, r[j], sizes[i], r[0]);
				bad = 1;
			}
		printf("%-8zu %10.1f %10.1f %10.1f %9.1fx %9.1fx\n", sizes[i], ns[0], ns[1], ns[2],
		       ns[0] / ns[2], ns[1] / ns[2]);
	}
	printf("(ns per KiB, best of 5 loops of %.0f ms, data at an odd address)\n", ms);
	free(buf);
	return bad;
}
