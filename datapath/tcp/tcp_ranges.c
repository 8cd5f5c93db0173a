// SPDX-License-Identifier: MIT
/*
 * tcp_ranges.c - sets of sequence ranges: the SACK scoreboard's and the
 * undo episode's (tcp_sack.c, tcp_undo.c)
 *
 * Theory of operation: a sorted array of disjoint [start, end) ranges in
 * sequence space, merged on insertion, at most @max of them (a range that
 * would need one more is refused: for the scoreboard that only makes us
 * retransmit more, for the receiver's out-of-order data that it drops the
 * segment). The array is allocated with the first range, TCP_RANGES_FIRST
 * of them, doubled as they come (most connections never see a loss; one
 * with a window of thousands of segments on a lossy path holds dozens of
 * holes), and freed with the connection (tcp_ranges_free()). Comparisons
 * are modulo 2^32 (seq_lt() and friends), so the set is only meaningful
 * within one window.
 */
#include "datapath/tcp/tcp_int.h"

/**
 * tcp_ranges_init() - an empty range set
 * @rs: the set
 * @max: most ranges it may hold (at most TCP_RANGES_MAX)
 */
void tcp_ranges_init(struct tcp_ranges *rs, unsigned int max)
{
	rs->n = 0;
	rs->max = max > TCP_RANGES_MAX ? TCP_RANGES_MAX : max;
}

/**
 * tcp_ranges_free() - release a set's array (it is empty then)
 * @rs: the set
 */
void tcp_ranges_free(struct tcp_ranges *rs)
{
	free(rs->r);
	rs->r = NULL;
	rs->n = 0;
	rs->cap = 0;
}

/* Room for one more range: 0, -ENOSPC at @max, -ENOMEM. */
static int tcp_ranges_room(struct tcp_ranges *rs)
{
	struct tcp_range *r;
	unsigned int cap;

	if (rs->n < rs->cap)
		return 0;
	if (rs->n >= rs->max)
		return -ENOSPC;
	cap = rs->cap ? rs->cap * 2 : TCP_RANGES_FIRST;
	if (cap > rs->max)
		cap = rs->max;
	r = realloc(rs->r, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	rs->r = r;
	rs->cap = cap;
	return 0;
}

/**
 * tcp_ranges_add() - add [start, end), merging with what it touches
 * @rs: the set
 * @start: first sequence number
 * @end: one past the last
 *
 * Return: 0, -EINVAL for an empty range, -ENOSPC when a new range would be
 * needed and the set is full, -ENOMEM (the set is then unchanged).
 */
int tcp_ranges_add(struct tcp_ranges *rs, uint32_t start, uint32_t end)
{
	unsigned int i = 0, j;

	if (!seq_lt(start, end))
		return -EINVAL;
	while (i < rs->n && seq_lt(rs->r[i].end, start))
		i++;
	/* i: first range that ends at or after start */
	if (i == rs->n || seq_lt(end, rs->r[i].start)) {
		int ret = tcp_ranges_room(rs);

		if (ret < 0)
			return ret;
		memmove(&rs->r[i + 1], &rs->r[i], (rs->n - i) * sizeof(rs->r[0]));
		rs->r[i].start = start;
		rs->r[i].end = end;
		rs->n++;
		return 0;
	}
	rs->r[i].start = seq_min(rs->r[i].start, start);
	rs->r[i].end = seq_max(rs->r[i].end, end);
	j = i + 1;
	while (j < rs->n && seq_leq(rs->r[j].start, rs->r[i].end)) {
		rs->r[i].end = seq_max(rs->r[i].end, rs->r[j].end);
		j++;
	}
	memmove(&rs->r[i + 1], &rs->r[j], (rs->n - j) * sizeof(rs->r[0]));
	rs->n -= j - i - 1;
	return 0;
}

/**
 * tcp_ranges_trim_below() - forget everything below @seq
 * @rs: the set
 * @seq: the new lower bound
 */
void tcp_ranges_trim_below(struct tcp_ranges *rs, uint32_t seq)
{
	unsigned int i = 0;

	while (i < rs->n && seq_leq(rs->r[i].end, seq))
		i++;
	if (i) {
		memmove(&rs->r[0], &rs->r[i], (rs->n - i) * sizeof(rs->r[0]));
		rs->n -= i;
	}
	if (rs->n && seq_lt(rs->r[0].start, seq))
		rs->r[0].start = seq;
}

/**
 * tcp_ranges_find() - the range that holds @seq
 * @rs: the set
 * @seq: a sequence number
 *
 * Return: its index, or -1 when no range holds it.
 */
int tcp_ranges_find(const struct tcp_ranges *rs, uint32_t seq)
{
	unsigned int lo = 0, hi = rs->n;

	while (lo < hi) {	/* the first range that ends above @seq */
		unsigned int mid = lo + (hi - lo) / 2;

		if (seq_leq(rs->r[mid].end, seq))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rs->n && seq_geq(seq, rs->r[lo].start) ? (int)lo : -1;
}

/**
 * tcp_ranges_bytes() - bytes of the set inside [from, to)
 * @rs: the set
 * @from: lower bound
 * @to: upper bound
 *
 * Return: the byte count.
 */
uint32_t tcp_ranges_bytes(const struct tcp_ranges *rs, uint32_t from, uint32_t to)
{
	uint32_t n = 0;
	unsigned int i;

	for (i = 0; i < rs->n; i++) {
		uint32_t a = seq_max(rs->r[i].start, from), b = seq_min(rs->r[i].end, to);

		if (seq_lt(a, b))
			n += b - a;
	}
	return n;
}
