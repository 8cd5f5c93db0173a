// SPDX-License-Identifier: MIT
/*
 * tcp_rack.c - RACK: time-based loss detection (RFC 8985 6)
 *
 * Theory of operation
 *
 * Every segment the connection emits above snd_una has a record (struct
 * tcp_rack_seg): its sequence range, the time of its latest transmission
 * and whether it is SACKed, deemed lost (and not resent since) or was ever
 * retransmitted. The records sit in one array ordered by sequence number,
 * contiguous from snd_una to snd_max; new data is appended one MSS per
 * record (the link splits a GSO segment at exactly those boundaries, so the
 * peer's SACK blocks fall on them), a retransmission splits the record it
 * covers when it does not match it and moves the record's time forward, a
 * cumulative ACK drops records from the front. The array grows by doubling
 * to TCP_RACK_MAX_SEGS; at that size the newest record absorbs further new
 * data (coarser, later times: losses are found later, never wrongly). When
 * an ACK leaves nothing in flight the array goes back to the allocator: the
 * ten thousand idle keep-alive connections of a web client hold none, and a
 * connection that sends again grows a new one from TCP_RACK_MIN_CAP. If
 * memory cannot be had the connection falls back to RFC 6675's DupThresh
 * rules for good (rack_off), as does a connection without SACK.
 *
 * On every ACK (tcp_rack_on_ack()), for each segment newly delivered
 * (cumulatively acknowledged or newly covered by the scoreboard):
 *   - RACK_update (6.2 step 1): unless it is a retransmission the ACK may
 *     be for (an RTT below the minimum, or, when the cumulative ACK covers
 *     it, a TSecr older than the retransmission: a SACK block's ACK echoes
 *     the TSval of the last in-order segment, RFC 7323 4.3, so there the
 *     TSecr tells nothing), it becomes RACK's segment when sent after the
 *     current one: RACK.xmit_ts, RACK.end_seq and RACK.rtt follow it;
 *   - RACK_detect_reordering (step 2): a segment that was never resent and
 *     ends below RACK.fack (the highest delivered end) was reordered;
 *   - the reordering window (step 4): a D-SACK once per round trip raises
 *     reo_wnd_mult, which persists for 16 recoveries; reo_wnd =
 *     min(reo_wnd_mult * min_RTT / 4, SRTT), but 0 before any reordering
 *     was seen when in recovery or once DupThresh segments are SACKed.
 * Then RACK_detect_loss (step 5): a segment neither SACKed nor already
 * lost, sent before RACK's segment, is lost once now >= its time +
 * RACK.rtt + reo_wnd; the earliest time one is not yet lost arms the
 * reordering timer (t_rack_us), whose expiry runs the detection again. The
 * scan stops at the first never-resent segment sent after RACK's: every
 * later one was sent later still.
 *
 * tcp_sack.c asks the records for pipe (lost, not resent bytes are out of
 * it), the next segment to resend (the first LOST one) and for entering
 * recovery (anything LOST); an RTO or a PMTU drop marks every unSACKed
 * segment lost (go-back-N without resending SACKed data). A retransmission
 * that is lost again is found the same way as any loss, by time, as soon
 * as something sent after it is delivered (with nothing sent after it, the
 * probe timer of tcp_timer.c resends it). min_RTT is the smallest RTT
 * seen over the connection's life (RFC 8985 suggests a windowed minimum).
 */
#include "datapath/tcp/tcp_int.h"

#define TCP_RACK_MIN_CAP	64u
#define TCP_RACK_REO_MIN_US	1000u

static struct tcp_rack_seg *tcp_rack_at(const struct tcp_conn *c, uint32_t i)
{
	return &c->rack_segs[c->rack_head + i];
}

/**
 * tcp_rack_on() - whether RACK decides about losses on this connection
 * @c: the connection
 *
 * Return: true with SACK and working records.
 */
bool tcp_rack_on(const struct tcp_conn *c)
{
	return c->sack_ok && !c->rack_off;
}

/**
 * tcp_rack_records_on() - whether the connection keeps its records
 * @c: the connection
 *
 * Without SACK the records still give RTT and delivery-rate samples
 * (tcp_rate.c); only RACK's loss detection needs SACK.
 *
 * Return: true unless they could not be kept.
 */
bool tcp_rack_records_on(const struct tcp_conn *c)
{
	return !c->rack_off;
}

/**
 * tcp_rack_free() - release the records
 * @c: the connection
 */
void tcp_rack_free(struct tcp_conn *c)
{
	free(c->rack_segs);
	c->rack_segs = NULL;
	c->rack_cap = c->rack_head = c->rack_n = 0;
	c->rack_lost_bytes = 0;
}

/* Give up on the records: RFC 6675 rules from now on. */
static void tcp_rack_disable(struct tcp_conn *c)
{
	tcp_rack_free(c);
	c->rack_off = true;
	if (c->t_rack_us) {
		c->t_rack_us = 0;
		tcp_timer_update(c);
	}
}

/* Room for one more record at the end (compacting or growing). */
static int tcp_rack_room(struct tcp_conn *c)
{
	struct tcp_rack_seg *n;
	uint32_t cap;

	if (c->rack_head + c->rack_n < c->rack_cap)
		return 0;
	if (c->rack_head && (c->rack_n <= c->rack_cap / 2 || c->rack_cap >= TCP_RACK_MAX_SEGS)) {
		memmove(c->rack_segs, tcp_rack_at(c, 0), c->rack_n * sizeof(*n));
		c->rack_head = 0;
		return 0;
	}
	if (c->rack_cap >= TCP_RACK_MAX_SEGS)
		return -ENOSPC;
	cap = c->rack_cap ? c->rack_cap * 2 : TCP_RACK_MIN_CAP;
	n = malloc(cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	if (c->rack_n)
		memcpy(n, tcp_rack_at(c, 0), c->rack_n * sizeof(*n));
	free(c->rack_segs);
	c->rack_segs = n;
	c->rack_cap = cap;
	c->rack_head = 0;
	return 0;
}

/* Index of the record holding @seq (it must be in [first start, last end)). */
static uint32_t tcp_rack_find(const struct tcp_conn *c, uint32_t seq)
{
	uint32_t lo = 0, hi = c->rack_n, base = tcp_rack_at(c, 0)->start;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (tcp_rack_at(c, mid)->start - base <= seq - base)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The first record at or after index @i that does not lie inside a
 * scoreboard range; *@j walks the ranges along (start it at 0). Skipping
 * whole SACKed ranges by binary search keeps the scans below to the holes.
 */
static uint32_t tcp_rack_skip_sacked(const struct tcp_conn *c, uint32_t i, unsigned int *j)
{
	while (i < c->rack_n) {
		const struct tcp_rack_seg *r = tcp_rack_at(c, i);
		const struct tcp_range *g;

		while (*j < c->sacked.n && seq_leq(c->sacked.r[*j].end, r->start))
			(*j)++;
		if (*j == c->sacked.n)
			return i;
		g = &c->sacked.r[*j];
		if (seq_lt(r->start, g->start) || seq_gt(r->end, g->end))
			return i;
		/* r lies inside g: continue at the record holding g->end */
		if (!seq_lt(g->end, tcp_rack_at(c, c->rack_n - 1)->end))
			return c->rack_n;
		i = tcp_rack_find(c, g->end) > i ? tcp_rack_find(c, g->end) : i + 1;
		(*j)++;
	}
	return i;
}

/* Split record @i at @seq (inside it, not its start): [start, seq) [seq, end). */
static int tcp_rack_split(struct tcp_conn *c, uint32_t i, uint32_t seq)
{
	struct tcp_rack_seg *r;
	int ret = tcp_rack_room(c);

	if (ret < 0)
		return ret;
	r = tcp_rack_at(c, i);
	memmove(r + 1, r, (c->rack_n - i) * sizeof(*r));
	c->rack_n++;
	r[0].end = seq;
	r[1].start = seq;
	return 0;
}

/* Stamp a (re)transmission: its time and its order within that time. */
static void tcp_rack_stamp(struct tcp_conn *c, struct tcp_rack_seg *r, uint64_t now_us)
{
	if (now_us != c->rack_last_xmit_us) {
		c->rack_last_xmit_us = now_us;
		c->rack_next_order = 0;
	}
	r->xmit_us = now_us;
	r->order = c->rack_next_order < UINT16_MAX ? c->rack_next_order++ : UINT16_MAX;
	tcp_rate_stamp(c, r);
}

static void tcp_rack_set_flags(struct tcp_conn *c, struct tcp_rack_seg *r, uint32_t flags)
{
	bool was = r->flags & TCP_RACK_LOST, is = flags & TCP_RACK_LOST;

	if (was && !is) {
		c->rack_lost_bytes -= r->end - r->start;
	} else if (!was && is) {
		c->rack_lost_bytes += r->end - r->start;
		c->lost_total += r->end - r->start;
	}
	r->flags = flags;
}

/**
 * tcp_rack_sent() - record a segment just emitted
 * @c: the connection (snd_max not yet advanced past it)
 * @seq: its first sequence number
 * @end: one past its last (FIN included)
 * @now_us: the time
 *
 * The part below snd_max is a retransmission: its records are split to
 * match it, lose their LOST mark and take the new time. The part above is
 * new data: one record per MSS.
 */
void tcp_rack_sent(struct tcp_conn *c, uint32_t seq, uint32_t end, uint64_t now_us)
{
	uint32_t old_end = seq_min(end, c->snd_max);

	if (!tcp_rack_records_on(c) || !seq_lt(seq, end))
		return;
	seq = seq_max(seq, c->snd_una);
	if (seq_lt(seq, old_end) && c->rack_n) {
		struct tcp_rack_seg *first = tcp_rack_at(c, 0), *last = tcp_rack_at(c, c->rack_n - 1);
		uint32_t i;

		if (seq_lt(seq, first->start) || seq_gt(old_end, last->end))
			goto broken;
		i = tcp_rack_find(c, seq);
		if (tcp_rack_at(c, i)->start != seq) {
			if (tcp_rack_split(c, i, seq) < 0)
				goto broken;
			i++;
		}
		for (; i < c->rack_n && seq_lt(tcp_rack_at(c, i)->start, old_end); i++) {
			struct tcp_rack_seg *r = tcp_rack_at(c, i);

			if (seq_gt(r->end, old_end)) {
				if (tcp_rack_split(c, i, old_end) < 0)
					goto broken;
				r = tcp_rack_at(c, i);
			}
			tcp_rack_stamp(c, r, now_us);
			tcp_rack_set_flags(c, r, (r->flags & ~TCP_RACK_LOST) | TCP_RACK_RETRANS);
		}
	}
	seq = seq_max(seq, c->snd_max);
	while (seq_lt(seq, end)) {
		uint32_t len = end - seq;
		struct tcp_rack_seg *r;
		int ret;

		if (c->rack_n && tcp_rack_at(c, c->rack_n - 1)->end != seq)
			goto broken;
		if (len > c->snd_mss)
			len = c->snd_mss;
		ret = tcp_rack_room(c);
		if (ret == -ENOSPC) {
			/* full: the newest record grows (its time moves later) */
			r = tcp_rack_at(c, c->rack_n - 1);
			if (r->flags & TCP_RACK_LOST) {
				c->rack_lost_bytes += end - seq;
				c->lost_total += end - seq;
			}
			r->end = end;
			tcp_rack_stamp(c, r, now_us);
			return;
		}
		if (ret < 0)
			goto broken;
		r = tcp_rack_at(c, c->rack_n++);
		r->start = seq;
		r->end = seq + len;
		r->flags = 0;
		tcp_rack_stamp(c, r, now_us);
		seq += len;
	}
	return;
broken:
	tcp_rack_disable(c);
}

/*
 * RACK_sent_after(): was (t1, o1) sent after (t2, o2)? The RFC breaks ties
 * of equal times by sequence number; the send order is exact (a
 * retransmission may leave in the same clock tick as higher new data).
 */
static bool tcp_rack_sent_after(uint64_t t1, uint16_t o1, uint64_t t2, uint16_t o2)
{
	return t1 > t2 || (t1 == t2 && o1 > o2);
}

/*
 * Steps 1 and 2 for one newly delivered segment (@sacked: by a SACK block,
 * not the cumulative ACK).
 */
static void tcp_rack_delivered(struct tcp_conn *c, const struct tcp_rack_seg *r, const struct tcp_opts *o,
			       bool sacked, uint64_t now_us)
{
	uint64_t rtt = now_us > r->xmit_us ? now_us - r->xmit_us : 0;

	if (r->flags & TCP_RACK_RETRANS) {
		bool ts_older = c->ts_ok && o->has_ts && o->ts_ecr &&
				(int32_t)(o->ts_ecr - tcp_out_ts_now(c, r->xmit_us)) < 0;

		/*
		 * The ACK may be for the original: no RTT, no RACK update. A
		 * SACK for out-of-order data echoes the TSval of the last
		 * in-order segment (RFC 7323 4.3), older than the
		 * retransmission even when it is the retransmission that
		 * arrived: there only the RTT tells (as Linux does).
		 */
		if (ts_older && !sacked)
			return;
		if (rtt < c->rack_min_rtt_us)
			return;
	} else {
		if (seq_gt(r->end, c->rack_fack) || !c->rack_xmit_us)
			c->rack_fack = r->end;
		else if (seq_lt(r->end, c->rack_fack))
			c->rack_reord = true;
	}
	if (rtt > UINT32_MAX)
		rtt = UINT32_MAX;
	if (!c->rack_min_rtt_us || rtt < c->rack_min_rtt_us)
		c->rack_min_rtt_us = rtt ? (uint32_t)rtt : 1;
	if (!c->rack_xmit_us || tcp_rack_sent_after(r->xmit_us, r->order, c->rack_xmit_us, c->rack_order)) {
		c->rack_xmit_us = r->xmit_us ? r->xmit_us : 1;
		c->rack_end_seq = r->end;
		c->rack_order = r->order;
		c->rack_rtt_us = (uint32_t)rtt;
	}
}

/* Step 4: RACK.reo_wnd. */
static uint32_t tcp_rack_reo_wnd(struct tcp_conn *c)
{
	uint64_t w;

	if (!c->rack_reord) {
		uint32_t sacked = tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_max);

		if (c->in_recovery || c->after_rto || sacked >= TCP_DUPTHRESH * (uint32_t)c->snd_mss)
			return 0;
	}
	w = (uint64_t)(c->rack_reo_mult ? c->rack_reo_mult : 1) * c->rack_min_rtt_us / 4;
	if (c->srtt_us && w > c->srtt_us)
		w = c->srtt_us;
	if (w < TCP_RACK_REO_MIN_US)
		w = TCP_RACK_REO_MIN_US;	/* on a veth a batch reorders by more than min_RTT / 4 */
	return (uint32_t)w;
}

/**
 * tcp_rack_spurious() - a D-SACK arrived, or an undo proved a loss spurious
 * @c: the connection
 *
 * Step 4: once per round trip this widens the reordering window by
 * min_RTT / 4 (RACK.reo_wnd_mult), kept for the next 16 recoveries. The
 * RFC counts D-SACKs; a spurious recovery found by timestamps (Eifel) is
 * the same evidence and counts too.
 */
void tcp_rack_spurious(struct tcp_conn *c)
{
	if (c->rack_dsack_round_on && seq_geq(c->snd_una, c->rack_dsack_round))
		c->rack_dsack_round_on = false;
	if (c->rack_dsack_round_on)
		return;
	c->rack_dsack_round_on = true;
	c->rack_dsack_round = c->snd_max;
	if (c->rack_reo_mult < UINT8_MAX)
		c->rack_reo_mult = c->rack_reo_mult ? c->rack_reo_mult + 1 : 2;
	c->rack_reo_persist = 16;
}

/**
 * tcp_rack_recovery_done() - a fast or RTO recovery ended (RACK.reo_wnd_persist)
 * @c: the connection
 */
void tcp_rack_recovery_done(struct tcp_conn *c)
{
	if (c->rack_reo_persist && --c->rack_reo_persist == 0)
		c->rack_reo_mult = 1;
}

/**
 * tcp_rack_detect() - RACK_detect_loss() (RFC 8985 6.2 step 5) and the timer
 * @c: the connection
 * @now_us: the time
 *
 * Return: true when segments were newly marked lost.
 */
bool tcp_rack_detect(struct tcp_conn *c, uint64_t now_us)
{
	uint64_t timeout = 0, reo;
	bool marked = false;
	unsigned int j = 0;
	uint32_t i;

	if (!tcp_rack_on(c))
		return false;
	reo = tcp_rack_reo_wnd(c);
	c->rack_reo_wnd_us = (uint32_t)reo;
	for (i = tcp_rack_skip_sacked(c, 0, &j); c->rack_xmit_us && i < c->rack_n;
	     i = tcp_rack_skip_sacked(c, i + 1, &j)) {
		struct tcp_rack_seg *r = tcp_rack_at(c, i);
		uint64_t due;

		if (r->flags & (TCP_RACK_SACKED | TCP_RACK_LOST))
			continue;
		if (!tcp_rack_sent_after(c->rack_xmit_us, c->rack_order, r->xmit_us, r->order)) {
			if (!(r->flags & TCP_RACK_RETRANS))
				break;	/* every later segment was sent later */
			continue;
		}
		due = r->xmit_us + c->rack_rtt_us + reo;
		if (now_us >= due) {
			tcp_rack_set_flags(c, r, r->flags | TCP_RACK_LOST);
			c->rack_marked++;
			c->stack->st.rack_marked++;
			marked = true;
		} else if (!timeout || due < timeout) {
			timeout = due;
		}
	}
	if (c->t_rack_us != timeout) {
		c->t_rack_us = timeout;
		tcp_timer_update(c);
	}
	return marked;
}

/*
 * Records newly SACKed by block [bs, be), which the scoreboard merged into
 * range @g: only records overlapping the block can have changed.
 */
static void tcp_rack_sacked(struct tcp_conn *c, const struct tcp_range *g, uint32_t bs, uint32_t be,
			    const struct tcp_opts *o, uint64_t now_us)
{
	uint32_t i;

	bs = seq_max(bs, tcp_rack_at(c, 0)->start);
	if (!seq_lt(bs, be) || !seq_lt(bs, tcp_rack_at(c, c->rack_n - 1)->end))
		return;
	for (i = tcp_rack_find(c, bs); i < c->rack_n; i++) {
		struct tcp_rack_seg *r = tcp_rack_at(c, i);

		if (seq_geq(r->start, be))
			break;
		if ((r->flags & TCP_RACK_SACKED) || seq_lt(r->start, g->start) || seq_gt(r->end, g->end))
			continue;
		tcp_rack_set_flags(c, r, (r->flags & ~TCP_RACK_LOST) | TCP_RACK_SACKED);
		tcp_rack_delivered(c, r, o, true, now_us);
		tcp_rate_delivered(c, r, now_us);
		if (!(r->flags & TCP_RACK_RETRANS) && (!c->ack_first_sacked_us || r->xmit_us < c->ack_first_sacked_us))
			c->ack_first_sacked_us = r->xmit_us;
	}
}

/**
 * tcp_rack_on_ack() - update RACK from an ACK and detect losses
 * @c: the connection (snd_una advanced, scoreboard updated)
 * @o: the ACK's options
 * @dsack: the ACK carried a D-SACK
 * @now_us: the time
 */
void tcp_rack_on_ack(struct tcp_conn *c, const struct tcp_opts *o, bool dsack, uint64_t now_us)
{
	unsigned int k;

	if (!tcp_rack_records_on(c))
		return;
	/* cumulatively acknowledged records */
	while (c->rack_n) {
		struct tcp_rack_seg *r = tcp_rack_at(c, 0);

		if (seq_gt(r->end, c->snd_una)) {
			if (seq_lt(r->start, c->snd_una)) {
				if (r->flags & TCP_RACK_LOST)
					c->rack_lost_bytes -= c->snd_una - r->start;
				if (!(r->flags & TCP_RACK_SACKED)) {
					c->delivered += c->snd_una - r->start;	/* a part: no sample of its own */
					c->rs.acked_sacked += c->snd_una - r->start;
				}
				r->start = c->snd_una;
			}
			break;
		}
		if (!(r->flags & TCP_RACK_SACKED)) {
			if (tcp_rack_on(c))
				tcp_rack_delivered(c, r, o, false, now_us);
			tcp_rate_delivered(c, r, now_us);
			if (r->flags & TCP_RACK_RETRANS)
				c->ack_karn = true;	/* the ACK may be for either copy: no RTT (Karn) */
			else if (!c->ack_first_acked_us)
				c->ack_first_acked_us = r->xmit_us;
		}
		tcp_rack_set_flags(c, r, 0);
		c->rack_head++;
		c->rack_n--;
	}
	/* nothing in flight: an idle connection holds no records */
	if (!c->rack_n)
		tcp_rack_free(c);
	if (!tcp_rack_on(c))
		return;
	/* records the ACK's SACK blocks completed */
	for (k = 0; c->rack_n && k < o->nsack && k < TCP_SACK_MAX_BLOCKS; k++) {
		unsigned int j;

		for (j = 0; j < c->sacked.n; j++) {
			const struct tcp_range *g = &c->sacked.r[j];

			if (seq_lt(o->sack[k].start, g->end) && seq_gt(o->sack[k].end, g->start)) {
				tcp_rack_sacked(c, g, o->sack[k].start, o->sack[k].end, o, now_us);
				break;
			}
		}
	}
	if (dsack)
		tcp_rack_spurious(c);
	tcp_rack_detect(c, now_us);
}

/**
 * tcp_rack_next_lost() - the first segment marked lost and not resent
 * @c: the connection
 * @seq: its start
 * @len: its length
 *
 * Return: true when there is one.
 */
bool tcp_rack_next_lost(const struct tcp_conn *c, uint32_t *seq, uint32_t *len)
{
	unsigned int j = 0;
	uint32_t i;

	if (!c->rack_lost_bytes)
		return false;
	for (i = tcp_rack_skip_sacked(c, 0, &j); i < c->rack_n; i = tcp_rack_skip_sacked(c, i + 1, &j)) {
		const struct tcp_rack_seg *r = tcp_rack_at(c, i);

		if (r->flags & TCP_RACK_LOST) {
			/* with the LOST segments right after it (one resend may cover several) */
			*seq = seq_max(r->start, c->snd_una);
			while (i + 1 < c->rack_n && (tcp_rack_at(c, i + 1)->flags & TCP_RACK_LOST) &&
			       tcp_rack_at(c, i + 1)->start - *seq < 65536)
				r = tcp_rack_at(c, ++i);
			*len = r->end - *seq;
			return *len > 0;
		}
	}
	return false;
}

/**
 * tcp_rack_mark_all_lost() - RTO or PMTU drop: every unSACKed segment is lost
 * @c: the connection
 */
void tcp_rack_mark_all_lost(struct tcp_conn *c)
{
	uint32_t i;

	if (!tcp_rack_on(c))
		return;
	for (i = 0; i < c->rack_n; i++) {
		struct tcp_rack_seg *r = tcp_rack_at(c, i);

		if (!(r->flags & TCP_RACK_SACKED))
			tcp_rack_set_flags(c, r, r->flags | TCP_RACK_LOST);
	}
}

/**
 * tcp_rack_unmark_lost() - a spurious RTO was undone: nothing is lost
 * @c: the connection
 */
void tcp_rack_unmark_lost(struct tcp_conn *c)
{
	uint32_t i;

	for (i = 0; i < c->rack_n; i++)
		tcp_rack_set_flags(c, tcp_rack_at(c, i), tcp_rack_at(c, i)->flags & ~TCP_RACK_LOST);
}

/**
 * tcp_rack_unsack_all() - the receiver reneged: nothing is SACKed any more
 * @c: the connection
 */
void tcp_rack_unsack_all(struct tcp_conn *c)
{
	uint32_t i;

	for (i = 0; i < c->rack_n; i++)
		tcp_rack_at(c, i)->flags &= ~TCP_RACK_SACKED;
}
