// SPDX-License-Identifier: MIT
/*
 * csum.c - the Internet checksum (RFC 1071) and the pseudo-headers
 *
 * Theory of operation: csum_partial() adds 16-bit big-endian words into a
 * 32-bit accumulator that callers chain across pieces (pseudo-header, header,
 * payload). The one's-complement sum is byte-order independent and may be
 * taken over any word width whose sum is folded back with end-around carries
 * (RFC 1071 2.B, 2.C): 2^16 - 1 divides 2^64 - 1, so a 64-bit sum with its
 * carries added back, folded to 16 bits and swapped once, equals the 16-bit
 * loop. The data is read as 64-bit native words (memcpy, so unaligned packet
 * data is fine on every architecture) into four independent accumulators,
 * 32 bytes per step; each add's carry is counted (s += w; c += s < w, which
 * compilers turn into add/adc) and added back at the end. Four chains keep
 * the adds from waiting on each other: 2-2.5x the previous loop (32-bit
 * halves into one 64-bit sum) and 7-14x the plain 16-bit loop at 1500 bytes
 * and more (bench/csum_bench.c, docs/benchmarks.md). An AVX2 variant
 * (16-bit words into 32-bit lanes) was tried and measured slower on these
 * machines than the add/adc chains, so there is no vector path.
 *
 * A piece of odd length must be the last one of a chain (as in every caller
 * here); the trailing byte is padded with zero as the RFC says.
 * csum_pseudo4() folds the two addresses the same way, as one 64-bit sum.
 *
 * csum_fold() turns the accumulator into the final 16-bit value, inverted,
 * ready to be stored in network order by the caller with htons().
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "datapath/pkt.h"
#include "datapath/wire/csum.h"

/* s += w with end-around carry, the carry counted in c (folded in later) */
#define CSUM_ADD(s, c, w)	do { (s) += (w); (c) += (s) < (w); } while (0)

/* Fold the 64-bit end-around sum @s plus @c carries to 16 bits, host order. */
static inline uint16_t csum_fold64(uint64_t s, uint64_t c)
{
	s += c;
	if (s < c)
		s++;
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return ntohs((uint16_t)s);
}

/**
 * csum_partial() - add @len bytes to a running checksum accumulator
 * @data:	bytes
 * @len:	count; odd only for the last piece of a chain
 * @sum:	accumulator from the previous piece, or 0
 *
 * Return: the new accumulator (host order, not folded, not inverted).
 */
uint32_t csum_partial(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *b = data;
	uint64_t s0 = 0, c0 = 0, w0;

	if (len >= 32) {
		uint64_t s1 = 0, s2 = 0, s3 = 0, c1 = 0, c2 = 0, c3 = 0, w1, w2, w3;

		do {
			memcpy(&w0, b, 8);
			memcpy(&w1, b + 8, 8);
			memcpy(&w2, b + 16, 8);
			memcpy(&w3, b + 24, 8);
			CSUM_ADD(s0, c0, w0);
			CSUM_ADD(s1, c1, w1);
			CSUM_ADD(s2, c2, w2);
			CSUM_ADD(s3, c3, w3);
			b += 32;
			len -= 32;
		} while (len >= 32);
		CSUM_ADD(s0, c0, s1);
		CSUM_ADD(s0, c0, s2);
		CSUM_ADD(s0, c0, s3);
		c0 += c1 + c2 + c3;
	}
	while (len >= 8) {
		memcpy(&w0, b, 8);
		CSUM_ADD(s0, c0, w0);
		b += 8;
		len -= 8;
	}
	if (len) {
		/* 1..7 bytes at an even offset: zero-padded into one word */
		w0 = 0;
		memcpy(&w0, b, len);
		CSUM_ADD(s0, c0, w0);
	}
	return sum + csum_fold64(s0, c0);
}

/**
 * csum_fold() - final checksum value of an accumulator
 * @sum:	accumulator
 *
 * Return: the inverted 16-bit sum in host order (store with htons()).
 */
uint16_t csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/**
 * csum_pseudo4() - accumulator of the IPv4 pseudo-header (RFC 768, RFC 9293 3.1)
 * @src:	source address
 * @dst:	destination address
 * @proto:	IPPROTO_UDP, IPPROTO_TCP
 * @len:	L4 length: header plus payload
 *
 * Return: accumulator to chain into csum_partial().
 */
uint32_t csum_pseudo4(struct in_addr src, struct in_addr dst, uint8_t proto, uint32_t len)
{
	uint32_t sum = csum_fold64((uint64_t)src.s_addr + dst.s_addr, 0);

	return sum + proto + (len >> 16) + (len & 0xffff);
}

/**
 * csum_pseudo6() - accumulator of the IPv6 pseudo-header (RFC 8200 8.1)
 * @src:	source address
 * @dst:	final destination
 * @nh:		upper-layer protocol
 * @len:	upper-layer packet length
 *
 * Return: accumulator to chain into csum_partial().
 */
uint32_t csum_pseudo6(const struct in6_addr *src, const struct in6_addr *dst, uint8_t nh,
		      uint32_t len)
{
	uint32_t sum = 0;

	sum = csum_partial(src, 16, sum);
	sum = csum_partial(dst, 16, sum);
	return sum + nh + (len >> 16) + (len & 0xffff);
}

/**
 * csum_pkt_l4() - checksum over a packet from pkt_data() on, tail included
 * @p:		packet; its linear part must be even-sized if it has a tail
 * @sum:	pseudo-header accumulator
 *
 * Return: the folded, inverted checksum in host order; 0 means "verified"
 * when the checksum field was included in the sum.
 */
uint16_t csum_pkt_l4(const struct pkt *p, uint32_t sum)
{
	sum = csum_partial(pkt_data(p), p->len, sum);
	if (p->tail_len)
		sum = csum_partial(p->tail, p->tail_len, sum);
	return csum_fold(sum);
}
