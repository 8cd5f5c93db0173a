// SPDX-License-Identifier: MIT
/*
 * csum.c - the Internet checksum (RFC 1071) and the pseudo-headers
 *
 * Theory of operation: csum_partial() adds 16-bit big-endian words into a
 * 32-bit accumulator that callers chain across pieces (pseudo-header, header,
 * payload). Internally it sums 32-bit loads into a 64-bit register, eight
 * bytes per step, and folds at the end: the one's-complement sum is
 * byte-order independent (RFC 1071 2.B), so summing native words and
 * swapping once gives the same result as a 16-bit loop. Loads use memcpy so
 * unaligned packet data is fine on every architecture. A piece of odd length
 * must be the last one of a chain (as in every caller here); the trailing
 * byte is padded with zero as the RFC says.
 *
 * csum_fold() turns the accumulator into the final 16-bit value, inverted,
 * ready to be stored in network order by the caller with htons().
 */
#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#include "datapath/net/net.h"

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
	uint64_t acc = 0;
	uint32_t w32;
	uint16_t w16;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, b, 8);
		acc += (uint32_t)w;
		acc += w >> 32;
		b += 8;
		len -= 8;
	}
	if (len >= 4) {
		memcpy(&w32, b, 4);
		acc += w32;
		b += 4;
		len -= 4;
	}
	if (len >= 2) {
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
	/* Fold 64 -> 16 in native order, then to host-order big-endian words. */
	acc = (acc & 0xffffffff) + (acc >> 32);
	acc = (acc & 0xffffffff) + (acc >> 32);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	w16 = ntohs((uint16_t)acc);
	return sum + w16;
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
	uint32_t sum = 0;

	sum = csum_partial(&src, 4, sum);
	sum = csum_partial(&dst, 4, sum);
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
