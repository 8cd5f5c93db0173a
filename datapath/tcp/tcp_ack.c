// SPDX-License-Identifier: MIT
/*
 * tcp_ack.c - what the peer's ACK does to the sending side: RFC 9293
 * 3.10.7.4 step 5, with RFC 5961 5, RFC 6298 and RFC 7323 4.1
 *
 * Theory of operation
 *
 * tcp_in.c hands over a segment that passed every check before step 5
 * (sequence acceptability, RST, SYN) and carries ACK, for a connection in a
 * synchronized state; the ACK that ends SYN-RECEIVED is tcp_open.c's.
 * tcp_ack_input() then:
 *
 *   - refuses an ACK outside [SND.UNA - MAX.SND.WND, SND.NXT] with a
 *     challenge ACK (RFC 5961 5.2);
 *   - moves SND.UNA: the acknowledged bytes leave the send ring, which
 *     parks when it is empty (tcp_pool.c), and the retry counts reset;
 *   - reads the SACK blocks into the scoreboard (tcp_sack.c; a reneging
 *     peer is caught there, D-SACKs are noted) and updates the send window
 *     by the SND.WL1/SND.WL2 rule (stopping the persist timer when it opens);
 *   - takes one RTT sample per ACK (below) and hands what was delivered
 *     (RFC 6937 DeliveredData) to RACK (tcp_rack.c), undo (tcp_undo.c),
 *     recovery and the tail loss probe (tcp_recovery.c), ECN (tcp_ecn.c),
 *     the delivery rate (tcp_rate.c) and the congestion controller;
 *   - stops the retransmission timer when all is acknowledged, or restarts
 *     it when something was, and moves the state on when our FIN is
 *     acknowledged; a send ring that freed room tells its owner
 *     (TCP_EV_WRITABLE) when it asked.
 *
 * RTT: the sample comes from the send time of the earliest never-resent
 * segment the ACK covered (else SACKed), to the microsecond; without one,
 * from the echoed timestamp (milliseconds), else Karn's one timed segment.
 * tcp_ack_rtt_sample() folds a sample into SRTT, RTTVAR and the RTO
 * (RFC 6298 2) for every caller, the handshake's too (tcp_open.c).
 *
 * This file only consumes ACKs: it never decides what to send next (the
 * caller pushes) and never touches the receiving side.
 */
#include "datapath/tcp/tcp_int.h"

/**
 * tcp_ack_rtt_sample() - RFC 6298 2: fold one RTT measurement into the RTO
 * @c: the connection
 * @rtt_us: the measurement
 */
void tcp_ack_rtt_sample(struct tcp_conn *c, uint32_t rtt_us)
{
	uint64_t rto;

	if (!rtt_us)
		rtt_us = 1;
	if (!c->srtt_us) {
		c->srtt_us = rtt_us;
		c->rttvar_us = rtt_us / 2;
	} else {
		uint32_t d = c->srtt_us > rtt_us ? c->srtt_us - rtt_us : rtt_us - c->srtt_us;

		c->rttvar_us = (3 * c->rttvar_us + d) / 4;
		c->srtt_us = (7 * (uint64_t)c->srtt_us + rtt_us) / 8;
	}
	rto = (uint64_t)c->srtt_us + (4 * (uint64_t)c->rttvar_us > 1000 ? 4 * (uint64_t)c->rttvar_us : 1000);
	if (rto < TCP_RTO_MIN_US)
		rto = TCP_RTO_MIN_US;
	if (rto > TCP_RTO_MAX_US)
		rto = TCP_RTO_MAX_US;
	c->rto_us = (uint32_t)rto;
	c->backoff = 0;
	tcp_hystart_rtt(c, rtt_us);
}

/**
 * tcp_ack_ts_rtt() - RFC 7323 4.1: an RTT sample from the echoed timestamp
 * @c: the connection
 * @seg: a segment whose TSecr echoes a TSval of ours
 * @now_us: the time
 *
 * A bogus echo (from the future or older than 5 minutes) gives no sample.
 */
void tcp_ack_ts_rtt(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	uint32_t ms = tcp_out_ts_now(c, now_us) - seg->opts.ts_ecr;

	if (ms <= 300000)
		tcp_ack_rtt_sample(c, ms * 1000);
}

/*
 * The ACK's RTT sample: from the send time of the earliest never-resent
 * segment it acknowledged (else SACKed), to the microsecond (tcp_rate.c);
 * without one (no records, or only resent data acknowledged), RFC 7323
 * 4.1 with timestamps (milliseconds), else Karn's one timed segment.
 */
static void tcp_ack_rtt(struct tcp_conn *c, const struct tcp_seg_in *seg, uint32_t acked, uint64_t now_us)
{
	int64_t rtt;

	if (c->ack_first_acked_us && !c->ack_karn)
		rtt = (int64_t)(now_us - c->ack_first_acked_us);
	else if (c->ack_first_sacked_us)
		rtt = (int64_t)(now_us - c->ack_first_sacked_us);
	else
		rtt = -1;
	if (rtt >= 0) {
		c->rtt_timing = false;
		tcp_ack_rtt_sample(c, rtt > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt);
		return;
	}
	if (!acked)
		return;
	if (c->ts_ok && seg->opts.has_ts && seg->opts.ts_ecr)
		tcp_ack_ts_rtt(c, seg, now_us);
	else if (c->rtt_timing && seq_geq(seg->ack, c->rtt_seq)) {
		c->rtt_timing = false;
		tcp_ack_rtt_sample(c, (uint32_t)(now_us - c->rtt_time_us));
	}
}

/* Our FIN is acknowledged: the state it moves to (RFC 9293 3.10.7.4 step 5). */
static void tcp_ack_fin_acked(struct tcp_conn *c, uint64_t now_us)
{
	switch (c->state) {
	case TCPS_FIN_WAIT_1:
		tcp_conn_set_state(c, TCPS_FIN_WAIT_2, now_us);
		if (!c->user_holds) {
			c->t_close_us = now_us + TCP_FIN_WAIT2_US;
			tcp_timer_update(c);
		}
		break;
	case TCPS_CLOSING:
		tcp_conn_set_state(c, TCPS_TIME_WAIT, now_us);
		tcp_conn_event(c, TCP_EV_CLOSED, 0);
		break;
	case TCPS_LAST_ACK:
		tcp_conn_set_state(c, TCPS_CLOSED, now_us);
		tcp_conn_event(c, TCP_EV_CLOSED, 0);
		break;
	default:
		break;
	}
}

/**
 * tcp_ack_input() - RFC 9293 3.10.7.4 step 5: the ACK field, in a
 * synchronized state (SYN-RECEIVED's ACK is tcp_open_syn_rcvd_ack()'s)
 * @c: the connection
 * @seg: the segment, acceptable so far, with ACK set
 * @now_us: the time
 *
 * Return: false when the segment must be dropped (or the connection closed).
 */
bool tcp_ack_input(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	uint32_t acked = 0, wnd = (uint32_t)seg->wnd << c->snd_wscale, sacked_before, sacked_after, delivered;
	bool dupack, dsack, freed = false;

	/* RFC 5961 5.2: acceptable range [SND.UNA - MAX.SND.WND, SND.NXT] */
	if (seq_gt(seg->ack, c->snd_max) || seq_lt(seg->ack, c->snd_una - c->max_snd_wnd)) {
		s->st.drop_bad_ack++;
		tcp_out_challenge_ack(c, now_us);
		return false;
	}
	tcp_rate_ack_begin(c);
	sacked_before = tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_max);
	dupack = seg->ack == c->snd_una && !seg->len && !(seg->flags & (TCP_SYN | TCP_FIN)) &&
		 wnd == c->snd_wnd && c->snd_una != c->snd_max;
	if (seq_gt(seg->ack, c->snd_una)) {
		uint32_t data_end = c->snd_buf_seq + c->snd.len, drop;

		acked = seg->ack - c->snd_una;
		c->snd_una = seg->ack;
		c->stats.bytes_acked += acked;
		drop = seq_gt(seq_min(seg->ack, data_end), c->snd_buf_seq) ? seq_min(seg->ack, data_end) - c->snd_buf_seq
									  : 0;
		if (drop) {
			tcp_ring_drop(&c->snd, drop);
			c->snd_buf_seq += drop;
			freed = true;
			/* acknowledged empty: the memory goes back to the pool (tcp_pool.c) */
			if (!c->snd.len)
				tcp_ring_park(&c->snd, true);
		}
		if (seq_lt(c->snd_nxt, c->snd_una))
			c->snd_nxt = c->snd_una;
		tcp_ranges_trim_below(&c->sacked, c->snd_una);
		c->retries = 0;
		c->persist_backoff = 0;
	}
	tcp_sack_update(c, &seg->opts);
	tcp_sack_check_renege(c);
	dsack = tcp_sack_dsack(c, &seg->opts, seg->ack);
	/* RFC 9293 3.10.7.4: send window update */
	if (seq_lt(c->snd_wl1, seg->seq) || (c->snd_wl1 == seg->seq && seq_leq(c->snd_wl2, seg->ack))) {
		c->snd_wnd = wnd;
		if (wnd > c->max_snd_wnd)
			c->max_snd_wnd = wnd;
		c->snd_wl1 = seg->seq;
		c->snd_wl2 = seg->ack;
		if (wnd && c->t_persist_us != TCP_NO_DEADLINE) {
			c->t_persist_us = TCP_NO_DEADLINE;
			c->persist_backoff = 0;
			tcp_timer_update(c);
		}
	}
	sacked_after = tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_max);
	/* RFC 6937 DeliveredData: newly acked + newly SACKed (what was SACKed below the new snd_una is in both) */
	delivered = acked + sacked_after > sacked_before ? acked + sacked_after - sacked_before : 0;
	tcp_rack_on_ack(c, &seg->opts, dsack, now_us);
	tcp_ack_rtt(c, seg, acked, now_us);
	tcp_undo_on_ack(c, seg, acked > 0, dsack);
	tcp_recovery_on_ack(c, acked, dupack, delivered, now_us);
	tcp_recovery_tlp_on_ack(c, seg, acked, delivered, dsack, now_us);
	tcp_ecn_ack(c, seg, now_us);
	tcp_rate_ack_end(c, now_us);
	if (c->cc->cong_control)
		c->cc->cong_control(c, &c->rs, now_us);	/* BBR: cwnd and the pacing rate from its model */
	else
		tcp_pace_update_rate(c);
	tcp_trace_emit(c, TCP_TRACE_ACK, now_us);
	if (c->snd_una == c->snd_max) {
		c->t_rtx_us = TCP_NO_DEADLINE;
		c->t_tlp_us = TCP_NO_DEADLINE;
		if (c->snd_nxt == c->snd_buf_seq + c->snd.len)
			c->t_pace_us = TCP_NO_DEADLINE;	/* nothing left to pace */
		c->backoff = 0;
		tcp_timer_update(c);
	} else if (acked) {
		tcp_timer_rtx_restart(c, now_us);
	}
	if (c->fin_sent && c->snd_una == c->snd_max)
		tcp_ack_fin_acked(c, now_us);
	if (freed && c->writable_wanted && c->state != TCPS_CLOSED) {
		c->writable_wanted = false;
		tcp_conn_event(c, TCP_EV_WRITABLE, 0);
	}
	return c->state != TCPS_CLOSED;
}
