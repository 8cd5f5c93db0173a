// SPDX-License-Identifier: MIT
/*
 * tcp_recovery.c - fast recovery: entering it, how much it sends per ACK
 * (PRR), leaving it, and the tail loss probe's answer
 *
 * Theory of operation
 *
 * Recovery is entered when RACK marks a loss (fallback: on the third
 * duplicate ACK, when IsLost(snd_una), or by Early Retransmit, RFC 5827,
 * when fewer than 4 segments are out) with ssthresh from the controller
 * and cwnd = ssthresh, and left when the cumulative ACK reaches the
 * RecoveryPoint, again with cwnd = ssthresh (RFC 6937 3). In the fallback
 * a retransmission lost again shows when data sent after it is SACKed
 * while its hole stays open; the holes are then resent. Not done: rule 3 of NextSeg() (retransmitting holes not yet
 * deemed lost), the rescue retransmission. What is lost and what the pipe
 * holds is the scoreboard's (tcp_sack.c); entering opens an undo episode
 * (tcp_undo.c).
 *
 * How much recovery sends per ACK follows PRR (RFC 6937, with SSRB): the
 * flight shrinks smoothly from RecoverFS to ssthresh as ACKs report
 * delivered data, instead of stopping until pipe falls below ssthresh.
 *
 * The tail loss probe's answer (tcp_recovery_tlp_on_ack(), the probe itself
 * is in tcp_timer.c): RFC 8985 7.4, a probe that resent the last segment
 * and is followed by an ACK beyond it without a D-SACK for it repaired a
 * real loss, which costs one cwnd reduction like a recovery would have.
 */
#include "datapath/tcp/tcp_int.h"

/*
 * RFC 5827 Early Retransmit: with fewer than 4 segments outstanding and no
 * new data to send, three duplicate ACKs can never come; oseg - 1 SACKed
 * segments (or duplicate ACKs) are enough.
 */
static bool tcp_sack_early_retransmit(const struct tcp_conn *c)
{
	uint32_t out = c->snd_max - c->snd_una, oseg = (out + c->snd_mss - 1) / c->snd_mss, got;

	if (oseg < 2 || oseg >= 4 || seq_lt(c->snd_nxt, c->snd_buf_seq + c->snd.len))
		return false;
	if (c->sack_ok)
		got = (tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_max) + c->snd_mss - 1) / c->snd_mss;
	else
		got = c->dupacks;
	return got >= oseg - 1;
}

static void tcp_recovery_enter(struct tcp_conn *c, uint64_t now_us)
{
	uint32_t seq = c->snd_una, len = c->snd_mss;

	if (!c->after_rto)
		tcp_undo_start(c);
	c->cc->on_loss(c, now_us);
	if (!c->cc->cong_control)
		c->cwnd = c->ssthresh;	/* a model (BBR) keeps its own cwnd */
	c->cwnd_acc = 0;
	c->in_recovery = true;
	c->recover = c->snd_max;
	c->high_rxt = c->snd_una;
	c->rxt_mark = c->snd_max;
	c->prr_delivered = 0;
	c->prr_out = 0;
	c->prr_budget = 0;
	c->prr_recover_fs = c->snd_max - c->snd_una;
	c->stats.fast_recoveries++;
	c->stack->st.fast_recoveries++;
	if (c->sack_ok) {
		c->stats.sack_recoveries++;
		c->stack->st.sack_recoveries++;
	}
	/* RFC 6675 5 (4.3) / RFC 6582 3.2 (2): resend the first (lost) segment now */
	if (tcp_rack_on(c) && !tcp_rack_next_lost(c, &seq, &len))
		return;
	tcp_recovery_sent(c, (uint32_t)tcp_out_retransmit(c, seq, len < c->snd_mss ? len : c->snd_mss, now_us));
	c->high_rxt = seq_max(c->high_rxt, seq_min(c->snd_una + c->snd_mss, c->snd_max));
}


/**
 * tcp_recovery_sent() - count bytes sent during recovery against PRR's budget
 * @c: the connection
 * @bytes: sequence space just sent (new data or retransmitted)
 */
void tcp_recovery_sent(struct tcp_conn *c, uint32_t bytes)
{
	if (!c->in_recovery || (int32_t)bytes <= 0)
		return;
	c->prr_out += bytes;
	c->prr_budget = c->prr_budget > bytes ? c->prr_budget - bytes : 0;
}

/*
 * RFC 6937 3: how much recovery may send for this ACK. Above ssthresh the
 * sending rate follows the delivery rate scaled by ssthresh / RecoverFS
 * (proportional); at or below it, slow start back up to ssthresh with at
 * most one extra MSS per ACK (PRR-SSRB).
 */
static void tcp_recovery_prr(struct tcp_conn *c, uint32_t delivered)
{
	uint64_t ssthresh = (uint64_t)c->ssthresh * c->snd_mss, pipe = tcp_sack_pipe(c);
	int64_t sndcnt;

	c->prr_delivered += delivered;
	if (pipe > ssthresh) {
		uint64_t fs = c->prr_recover_fs ? c->prr_recover_fs : 1;

		sndcnt = (int64_t)(((uint64_t)c->prr_delivered * ssthresh + fs - 1) / fs) - c->prr_out;
	} else {
		int64_t limit = (int64_t)c->prr_delivered - c->prr_out;

		if (limit < (int64_t)delivered)
			limit = delivered;
		limit += c->snd_mss;
		sndcnt = (int64_t)(ssthresh - pipe) < limit ? (int64_t)(ssthresh - pipe) : limit;
	}
	c->prr_budget = sndcnt > 0 ? (uint32_t)sndcnt : 0;
}

/**
 * tcp_recovery_on_ack() - loss detection and recovery for one ACK
 * @c: the connection (snd_una already advanced by @acked)
 * @acked: bytes newly acknowledged
 * @dupack: the ACK is a duplicate (RFC 5681 2 definition)
 * @delivered: bytes newly acknowledged or SACKed (RFC 6937 DeliveredData)
 * @now_us: the time
 */
void tcp_recovery_on_ack(struct tcp_conn *c, uint32_t acked, bool dupack, uint32_t delivered, uint64_t now_us)
{
	c->high_rxt = seq_max(c->high_rxt, c->snd_una);
	if (acked) {
		if (c->sack_ok) {
			c->dupacks = 0;
		} else {
			uint32_t segs = (acked + c->snd_mss - 1) / c->snd_mss;

			c->dupacks = c->dupacks > segs ? c->dupacks - segs : 0;
		}
	} else if (dupack) {
		c->dupacks++;
	}
	if (c->after_rto && seq_geq(c->snd_una, c->recover)) {
		c->after_rto = false;
		tcp_rack_recovery_done(c);
	}
	if (c->in_recovery) {
		if (seq_geq(c->snd_una, c->recover)) {
			/*
			 * RFC 6582 3.2 (3) full ACK / RFC 6675 5: leave, with
			 * cwnd = ssthresh (RFC 6937 3, Linux's
			 * tcp_end_cwnd_reduction()), not NewReno's
			 * min(ssthresh, FlightSize + MSS): a recovery held back
			 * by the send buffer or the application can end with
			 * almost nothing in flight, and that rule then made the
			 * sender slow-start back up to ssthresh, a round trip
			 * per doubling. What it may now send at once the pacer
			 * spreads.
			 */
			c->in_recovery = false;
			c->dupacks = 0;
			tcp_rack_recovery_done(c);
			if (!c->cc->cong_control)
				c->cwnd = c->ssthresh > 2 ? c->ssthresh : 2;
		} else if (c->sack_ok && !tcp_rack_on(c) && seq_gt(tcp_sack_highest(c), c->rxt_mark) &&
			   tcp_sack_holes(c, c->snd_una, c->high_rxt)) {
			/*
			 * Data sent after our latest retransmission was SACKed
			 * while holes we retransmitted are still open: those
			 * retransmissions were lost too (Linux's lost-retransmit
			 * detection, a step toward RACK). Resend from snd_una.
			 */
			c->high_rxt = c->snd_una;
			c->rxt_mark = c->snd_max;
		} else if (acked && !c->sack_ok) {
			/* RFC 6582 3.2 (3): a partial ACK resends the next segment now */
			int n = tcp_out_retransmit(c, c->snd_una, c->snd_mss, now_us);

			if (n > 0)
				c->high_rxt = seq_max(c->high_rxt, c->snd_una + (uint32_t)n);
			tcp_recovery_sent(c, (uint32_t)n);
		}
		if (c->in_recovery && !c->cc->cong_control)
			tcp_recovery_prr(c, delivered);
		return;
	}
	if (acked && c->cwnd_limited && !c->cc->cong_control)
		c->cc->on_ack(c, acked, now_us);
	if (c->after_rto || c->snd_una == c->snd_max)
		return;
	if (tcp_rack_on(c) ? c->rack_lost_bytes > 0
			   : c->dupacks >= TCP_DUPTHRESH || (c->sack_ok && tcp_sack_is_lost(c, c->snd_una)) ||
			     tcp_sack_early_retransmit(c)) {
		/* RFC 6582 4.1: not again for losses of the same window */
		if (seq_lt(c->snd_una, c->recover) && c->stats.fast_recoveries + c->stats.rto_count)
			return;
		tcp_recovery_enter(c, now_us);
		if (!c->cc->cong_control)
			tcp_recovery_prr(c, delivered);
	}
}

/**
 * tcp_recovery_rack_timer() - RACK's reordering timer expired
 * @c: the connection
 * @now_us: the time
 *
 * Runs RACK's loss detection again; what it marks lost is resent, entering
 * recovery first when not in one (RFC 8985 6.3).
 */
void tcp_recovery_rack_timer(struct tcp_conn *c, uint64_t now_us)
{
	c->t_rack_us = 0;
	if (c->snd_una == c->snd_max || !tcp_rack_detect(c, now_us))
		return;
	/* not again for losses of the same window (RFC 6582 4.1), as on ACKs */
	if (!c->in_recovery && !c->after_rto &&
	    !(seq_lt(c->snd_una, c->recover) && c->stats.fast_recoveries + c->stats.rto_count))
		tcp_recovery_enter(c, now_us);
	if (c->in_recovery) {
		/* PRR gives little for no delivery: let the lost segments out now */
		tcp_recovery_prr(c, 0);
		if (c->prr_budget < c->snd_mss)
			c->prr_budget = c->snd_mss;
	}
	tcp_trace_emit(c, TCP_TRACE_RACK, now_us);
	tcp_out_push(c, now_us);
}

/**
 * tcp_recovery_tlp_on_ack() - what an ACK says about the tail loss probe
 * @c: the connection (the ACK processed: snd_una, scoreboard, recovery)
 * @seg: the ACK
 * @acked: bytes it newly acknowledged
 * @delivered: bytes it newly acknowledged or SACKed
 * @dsack: its first SACK block is a D-SACK
 * @now_us: the time
 *
 * A probe is answered once snd_una reaches what was sent before it (a
 * probe sent during a recovery: by any ACK that delivers something). RFC
 * 8985 7.4 for a probe that resent the last segment outside recovery: if
 * the original arrived as well, a D-SACK for the probe follows (or, from a
 * peer without D-SACK, a pure duplicate ACK); if instead an ACK beyond the
 * probe comes first, only the probe arrived: the loss it repaired costs
 * one cwnd reduction (unless a recovery since then made it). During a
 * recovery, every ACK that delivers something restarts the probe timer: it
 * fires only after 2 SRTT without any ACK.
 */
void tcp_recovery_tlp_on_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, uint32_t acked, uint32_t delivered,
			     bool dsack, uint64_t now_us)
{
	const struct tcp_opts *o = &seg->opts;

	if (c->tlp_active) {
		if (seq_geq(c->snd_una, c->tlp_high_seq)) {
			c->tlp_active = false;
			c->tlp_check = c->tlp_is_retrans && !c->tlp_in_recovery;
		} else if (c->tlp_in_recovery && (delivered || dsack)) {
			c->tlp_active = false;
		}
	}
	if (c->tlp_check) {
		if (dsack && seq_lt(o->sack[0].start, c->tlp_high_seq) && seq_gt(o->sack[0].end, c->tlp_seq)) {
			c->tlp_check = false;	/* both copies arrived: no loss */
		} else if (seq_gt(seg->ack, c->tlp_high_seq)) {
			c->tlp_check = false;
			if (!c->in_recovery && !c->after_rto && c->stats.fast_recoveries + c->stats.rto_count == c->tlp_episodes) {
				c->cc->on_loss(c, now_us);
				if (!c->cc->cong_control && c->cwnd > c->ssthresh)
					c->cwnd = c->ssthresh;
				c->cwnd_acc = 0;
				c->tlp_recoveries++;
			}
		} else if (!acked && !dsack && !seg->len && !(seg->flags & (TCP_SYN | TCP_FIN)) &&
			   seg->ack == c->snd_una) {
			c->tlp_check = false;	/* a duplicate ACK without D-SACK: the same */
		}
	}
	if (!acked && (delivered || dsack) && (c->in_recovery || c->after_rto) && c->snd_una != c->snd_max &&
	    c->t_rtx_us != TCP_NO_DEADLINE)
		tcp_timer_tlp_arm(c, now_us);
}
