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
 * holding the latest arrival first, then the blocks that changed most
 * recently before it, newest first (c->ooo_recent keeps a byte of each of
 * the last TCP_SACK_MAX_BLOCKS; a range two of them fell into when a hole
 * filled counts once), then, if room is left, the others from the lowest.
 * So every range is reported by the three or four ACKs after its last
 * change, as the RFC asks: with ACKs lost on the way, the sender still
 * learns its whole extent at once. Reported only while it was the newest
 * (the lowest ranges taking the other places), a range whose last ACK was
 * lost came back in a later ACK as newly SACKed below data SACKed long
 * before: a Linux sender reads that as reordering, raised its reordering
 * window to the maximum and sent D-SACKed retransmissions (1 % and 2 %
 * loss at 40 ms: 0.6-0.8x the rate it reached against its own kernel).
 */
#include "datapath/tcp/tcp_int.h"

/* The range holding @seq changed last: first in the recency list, every other entry of that range gone. */
static void tcp_ooo_recent(struct tcp_conn *c, uint32_t seq)
{
	int k = tcp_ranges_find(&c->ooo, seq);
	uint32_t keep[TCP_SACK_MAX_BLOCKS];
	unsigned int i, n = 0;

	keep[n++] = seq;
	for (i = 0; i < c->ooo_n_recent && n < TCP_SACK_MAX_BLOCKS; i++) {
		int j = tcp_ranges_find(&c->ooo, c->ooo_recent[i]);

		if (j >= 0 && j != k)	/* still held above rcv_nxt, in another range */
			keep[n++] = c->ooo_recent[i];
	}
	memcpy(c->ooo_recent, keep, n * sizeof(keep[0]));
	c->ooo_n_recent = (uint8_t)n;
}

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
	tcp_ooo_recent(c, seq);
	return 0;
}

/**
 * tcp_ooo_extends_recent() - would [@seq, @end) change one of the newest ranges?
 * @c: the connection
 * @seq: first sequence number of a segment out of order
 * @end: one past its last
 * @n: how many of the most recently changed ranges count
 *
 * Return: true when it overlaps or touches one of them, or when there are
 * fewer than @n ranges (a new one still fits among the newest).
 */
bool tcp_ooo_extends_recent(const struct tcp_conn *c, uint32_t seq, uint32_t end, unsigned int n)
{
	unsigned int i;

	if (c->ooo.n < n)
		return true;
	for (i = 0; i < c->ooo_n_recent && i < n; i++) {
		int k = tcp_ranges_find(&c->ooo, c->ooo_recent[i]);

		if (k >= 0 && seq_leq(seq, c->ooo.r[k].end) && seq_geq(end, c->ooo.r[k].start))
			return true;
	}
	return false;
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
	int used[TCP_SACK_MAX_BLOCKS];
	unsigned int i, j, n = 0, n_used = 0;

	if (max > TCP_SACK_MAX_BLOCKS)
		max = TCP_SACK_MAX_BLOCKS;
	if (first_start != first_end && n < max) {
		o->sack[n].start = first_start;
		o->sack[n].end = first_end;
		n++;
	}
	for (i = 0; i < c->ooo_n_recent && n < max; i++) {
		int k = tcp_ranges_find(&c->ooo, c->ooo_recent[i]);

		for (j = 0; j < n_used && used[j] != k; j++)
			;
		if (k < 0 || j < n_used)	/* gone below rcv_nxt, or merged with a newer one */
			continue;
		used[n_used++] = k;
		o->sack[n].start = c->ooo.r[k].start;
		o->sack[n].end = c->ooo.r[k].end;
		n++;
	}
	for (i = 0; i < c->ooo.n && n < max; i++) {
		for (j = 0; j < n_used && used[j] != (int)i; j++)
			;
		if (j < n_used)
			continue;
		o->sack[n].start = c->ooo.r[i].start;
		o->sack[n].end = c->ooo.r[i].end;
		n++;
	}
	o->nsack = (uint8_t)n;
	return (int)n;
}
