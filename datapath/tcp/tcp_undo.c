// SPDX-License-Identifier: MIT
/*
 * tcp_undo.c - D-SACKs, and undoing a reduction that was not needed
 *
 * Theory of operation
 *
 * Undo (RFC 3708 with RFC 2883 D-SACKs, and Eifel, RFC 3522 / RFC 4015):
 * a fast recovery or an RTO opens an episode that remembers cwnd, ssthresh
 * and CUBIC's W_max and counts its retransmissions (and their ranges). A
 * D-SACK (the first block below the ACK or inside the second block) for a
 * range it retransmitted counts one off; when none is left every
 * retransmission was a duplicate and the reduction is undone. After an RTO
 * the first ACK past the first retransmission that echoes an older TSval
 * proves the RTO spurious (Eifel detection, RFC 4015 response: restore,
 * resume with new data instead of go-back-N). Eifel is not applied to fast
 * recovery: with reordering it undid too eagerly (the simulated link's
 * reordering runs resent 5-10 times more). An undo also widens RACK's
 * reordering window.
 */
#include "datapath/tcp/tcp_int.h"

/**
 * tcp_sack_dsack() - RFC 2883 4: is the ACK's first SACK block a D-SACK?
 * @c: the connection
 * @o: the ACK's options
 * @ack: its acknowledgment number
 *
 * A D-SACK lies below the cumulative ACK or inside the second block.
 *
 * Return: true when it is one (counted in dsacks_rx).
 */
bool tcp_sack_dsack(struct tcp_conn *c, const struct tcp_opts *o, uint32_t ack)
{
	uint32_t a, b;

	if (!c->sack_ok || !o->nsack)
		return false;
	a = o->sack[0].start;
	b = o->sack[0].end;
	if (!seq_lt(a, b) || b - a > c->max_snd_wnd + 65535u)
		return false;
	if (!seq_leq(b, ack) &&
	    !(o->nsack > 1 && seq_geq(a, o->sack[1].start) && seq_leq(b, o->sack[1].end)))
		return false;
	c->dsacks_rx++;
	c->stack->st.dsacks_rx++;
	return true;
}

/**
 * tcp_undo_start() - a loss episode begins: remember what to restore
 * @c: the connection
 *
 * RFC 3708 / Linux's undo: the episode counts its retransmissions; when
 * D-SACKs report every one of them as a duplicate, or the first ACK after
 * its first retransmission echoes an older timestamp (Eifel, RFC 3522),
 * the loss was spurious and cwnd/ssthresh are put back (RFC 4015's
 * response). The episode stays open after recovery ends (D-SACKs come an
 * RTT after the retransmissions) until the next one begins or it is undone.
 */
void tcp_undo_start(struct tcp_conn *c)
{
	c->undo_on = true;
	c->undo_eifel = false;
	c->undo_ts_set = false;
	c->undo_cwnd = c->cwnd;
	c->undo_ssthresh = c->ssthresh;
	c->undo_wmax = c->cubic_wmax;
	c->undo_marker = c->snd_una;
	c->undo_retrans = 0;
	tcp_ranges_init(&c->undo_rxt, TCP_SACK_MAX_RANGES);
}

/**
 * tcp_undo_retransmitted() - count a retransmission in the open episode
 * @c: the connection
 * @seq: its first sequence number
 * @end: one past its last
 * @now_us: the time
 */
void tcp_undo_retransmitted(struct tcp_conn *c, uint32_t seq, uint32_t end, uint64_t now_us)
{
	if (!c->undo_on || !seq_lt(seq, end))
		return;
	if (tcp_ranges_add(&c->undo_rxt, seq, end) < 0) {
		c->undo_on = false;	/* cannot tell them apart: no undo */
		return;
	}
	c->undo_retrans += (end - seq + c->snd_mss - 1) / c->snd_mss;
	if (!c->undo_ts_set && c->ts_ok) {
		c->undo_ts_set = true;
		c->undo_tsval = tcp_out_ts_now(c, now_us);
		c->undo_eifel_end = end;
		c->undo_eifel = c->after_rto;	/* Eifel for RTOs; D-SACKs for fast retransmits */
	}
}

/* The episode's losses were spurious: restore what it cut. */
static void tcp_undo(struct tcp_conn *c)
{
	if (c->cc->undo) {
		c->cc->undo(c);	/* a model of the path (BBR) keeps its cwnd */
	} else {
		if (c->cwnd < c->undo_cwnd)
			c->cwnd = c->undo_cwnd;
		if (c->ssthresh < c->undo_ssthresh)
			c->ssthresh = c->undo_ssthresh;
		if (c->cubic_wmax < c->undo_wmax)
			c->cubic_wmax = c->undo_wmax;
	}
	c->cubic_epoch_us = 0;
	c->cwnd_acc = 0;
	if (c->in_recovery || c->after_rto) {
		c->in_recovery = false;
		c->after_rto = false;
		c->recover = c->snd_una;
		c->high_rxt = c->snd_una;
		c->dupacks = 0;
		tcp_rack_unmark_lost(c);
		tcp_rack_recovery_done(c);
	}
	c->undo_on = false;
	c->undo_eifel = false;
	tcp_rack_spurious(c);
	c->undos++;
	c->stack->st.undos++;
}

/**
 * tcp_undo_on_ack() - undo a spurious episode on D-SACK or timestamp proof
 * @c: the connection
 * @seg: the ACK
 * @advanced: it advanced snd_una
 * @dsack: its first SACK block is a D-SACK
 */
void tcp_undo_on_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, bool advanced, bool dsack)
{
	const struct tcp_opts *o = &seg->opts;

	if (!c->undo_on)
		return;
	if (dsack && c->undo_retrans && seq_geq(o->sack[0].start, c->undo_marker)) {
		uint32_t covered = tcp_ranges_bytes(&c->undo_rxt, o->sack[0].start, o->sack[0].end);
		uint32_t segs = (covered + c->snd_mss - 1) / c->snd_mss;

		if (segs) {
			c->undo_retrans = c->undo_retrans > segs ? c->undo_retrans - segs : 0;
			if (!c->undo_retrans) {
				tcp_undo(c);
				return;
			}
		}
	}
	if (advanced && c->undo_eifel && seq_geq(c->snd_una, c->undo_eifel_end)) {
		c->undo_eifel = false;
		if (o->has_ts && o->ts_ecr && (int32_t)(o->ts_ecr - c->undo_tsval) < 0)
			tcp_undo(c);
	}
}
