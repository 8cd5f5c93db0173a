// SPDX-License-Identifier: MIT
/*
 * tcp_ooo.c - out-of-order reassembly in bounded memory
 *
 * Theory of operation
 *
 * A segment that arrives above rcv_nxt but inside the offered window is
 * copied straight into the receive ring at the offset its sequence number
 * maps to (rcv.len + seq - rcv_nxt): the window never offers more than the
 * ring's free space, so it always fits and out-of-order data costs no memory
 * beyond the buffer the window already promised. This file keeps the list of
 * sequence ranges stored that way (at most TCP_OOO_MAX_RANGES disjoint
 * ranges; a segment that would need one more is dropped and counted as
 * drop_ooo_full; the peer retransmits it). When in-order data reaches the
 * first range, tcp_ooo_pull() makes it readable without a copy.
 *
 * The same list gives the SACK blocks of our ACKs (RFC 2018 4): the block
 * holding the latest arrival first, then the others from the lowest.
 */
#include "datapath/tcp/tcp_int.h"

/**
 * tcp_ooo_insert() - store a segment that starts above rcv_nxt
 * @c: the connection (receive ring allocated)
 * @seq: its first sequence number, above rcv_nxt
 * @data: payload
 * @len: payload length, already trimmed to the window
 *
 * Return: 0 stored, -ENOSPC when the range list is full, -EINVAL when it
 * falls outside the ring.
 */
int tcp_ooo_insert(struct tcp_conn *c, uint32_t seq, const uint8_t *data, uint32_t len)
{
	uint32_t off = c->rcv.len + (seq - c->rcv_nxt);
	struct tcp_ranges save = c->ooo;

	if (!len || off > c->rcv.cap || len > c->rcv.cap - off)
		return -EINVAL;
	if (tcp_ranges_add(&c->ooo, seq, seq + len) < 0) {
		c->ooo = save;
		return -ENOSPC;
	}
	tcp_ring_write_at(&c->rcv, off, data, len);
	c->ooo_last_seq = seq;
	return 0;
}

/**
 * tcp_ooo_pull() - make stored ranges that now touch rcv_nxt readable
 * @c: the connection
 *
 * Advances rcv_nxt and rcv.len over them.
 *
 * Return: bytes made readable.
 */
uint32_t tcp_ooo_pull(struct tcp_conn *c)
{
	uint32_t pulled = 0;

	tcp_ranges_trim_below(&c->ooo, c->rcv_nxt);
	while (c->ooo.n && seq_leq(c->ooo.r[0].start, c->rcv_nxt)) {
		uint32_t n = c->ooo.r[0].end - c->rcv_nxt;

		c->rcv_nxt += n;
		c->rcv.len += n;
		pulled += n;
		tcp_ranges_trim_below(&c->ooo, c->rcv_nxt);
	}
	return pulled;
}

/**
 * tcp_ooo_bytes() - bytes held out of order
 * @c: the connection
 *
 * Return: the sum of the stored ranges.
 */
uint32_t tcp_ooo_bytes(const struct tcp_conn *c)
{
	uint32_t n = 0;
	unsigned int i;

	for (i = 0; i < c->ooo.n; i++)
		n += c->ooo.r[i].end - c->ooo.r[i].start;
	return n;
}

/**
 * tcp_ooo_sack_blocks() - SACK blocks for an outgoing ACK
 * @c: the connection
 * @first_start: unused when 0 == @first_end; a block to put first (D-SACK)
 * @first_end: its end
 * @o: options to fill (nsack, sack[])
 * @max: blocks that fit
 *
 * Return: the number of blocks written.
 */
int tcp_ooo_sack_blocks(const struct tcp_conn *c, uint32_t first_start, uint32_t first_end,
			struct tcp_opts *o, unsigned int max)
{
	unsigned int i, n = 0, latest = UINT32_MAX;

	if (max > TCP_SACK_MAX_BLOCKS)
		max = TCP_SACK_MAX_BLOCKS;
	if (first_start != first_end && n < max) {
		o->sack[n].start = first_start;
		o->sack[n].end = first_end;
		n++;
	}
	for (i = 0; i < c->ooo.n; i++) {
		if (seq_geq(c->ooo_last_seq, c->ooo.r[i].start) && seq_lt(c->ooo_last_seq, c->ooo.r[i].end))
			latest = i;
	}
	if (latest != UINT32_MAX && n < max) {
		o->sack[n].start = c->ooo.r[latest].start;
		o->sack[n].end = c->ooo.r[latest].end;
		n++;
	}
	for (i = 0; i < c->ooo.n && n < max; i++) {
		if (i == latest)
			continue;
		o->sack[n].start = c->ooo.r[i].start;
		o->sack[n].end = c->ooo.r[i].end;
		n++;
	}
	o->nsack = (uint8_t)n;
	return (int)n;
}
