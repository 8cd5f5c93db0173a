// SPDX-License-Identifier: MIT
/*
 * tcp_in.c - segment arrival: RFC 9293 3.10.7 with RFC 5961 and RFC 7323
 *
 * Theory of operation
 *
 * tcp_input() checks the segment (family, lengths, flag combinations),
 * finds its connection (or listener) and runs the "SEGMENT ARRIVES" steps:
 *
 *   SYN-SENT       3.10.7.3: ACK check, RST (ECONNREFUSED), SYN -> ESTABLISHED
 *                  or SYN-RECEIVED (simultaneous open).
 *   other states   3.10.7.4: PAWS (RFC 7323 5; a reordered pure duplicate
 *                  ACK passes, as in Linux), sequence acceptability
 *                  (a bad segment is answered with an ACK), RST with the
 *                  RFC 5961 3 rule (exact rcv_nxt resets, else a challenge
 *                  ACK), SYN -> challenge ACK (RFC 5961 4), ACK processing
 *                  with the RFC 5961 5 range check, the send window update,
 *                  RTT sampling, SACK (D-SACKs noted), RACK (tcp_rack.c),
 *                  undo (tcp_undo.c), recovery and the tail loss probe's
 *                  answer (tcp_recovery.c), then text
 *                  (in order into the receive ring, out of order via
 *                  tcp_ooo.c), then FIN.
 *
 * ACKs for received data are delayed (one every two full segments, 40 ms at
 * most) except in quick-ACK mode (the first TCP_QUICKACK_SEGS segments) and
 * for out-of-order data or data that fills a hole, which are ACKed at once
 * (RFC 5681 4.2). Data carried on a SYN is dropped (the peer resends it).
 *
 * Callbacks (readable, peer FIN, closed) run last; since a callback may
 * close or abort the connection, every step after one re-checks the state.
 */
#include <sys/socket.h>

#include "datapath/tcp/tcp_int.h"

/**
 * tcp_opts_parse() - parse the option bytes of a TCP header
 * @buf: the options (header bytes 20 .. data offset)
 * @len: their length, at most 40
 * @out: the result; unknown options are skipped
 *
 * Return: 0, or -EINVAL for a malformed option list (the options parsed
 * before the fault are kept, as Linux does).
 */
int tcp_opts_parse(const uint8_t *buf, size_t len, struct tcp_opts *out)
{
	size_t i = 0;

	memset(out, 0, sizeof(*out));
	if (len > TCP_OPTS_MAX_BYTES)
		return -EINVAL;
	while (i < len) {
		uint8_t kind = buf[i], olen;

		if (kind == TCP_OPT_EOL)
			break;
		if (kind == TCP_OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return -EINVAL;
		olen = buf[i + 1];
		if (olen < 2 || olen > len - i)
			return -EINVAL;
		switch (kind) {
		case TCP_OPT_MSS:
			if (olen == TCP_OPTLEN_MSS) {
				out->has_mss = true;
				out->mss = (uint16_t)(buf[i + 2] << 8 | buf[i + 3]);
			}
			break;
		case TCP_OPT_WSCALE:
			if (olen == TCP_OPTLEN_WSCALE) {
				out->has_wscale = true;
				out->wscale = buf[i + 2] > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : buf[i + 2];
			}
			break;
		case TCP_OPT_SACK_PERM:
			if (olen == TCP_OPTLEN_SACK_PERM)
				out->sack_perm = true;
			break;
		case TCP_OPT_SACK:
			if (olen >= 2 + TCP_OPTLEN_SACK_BLOCK && (olen - 2) % TCP_OPTLEN_SACK_BLOCK == 0) {
				unsigned int n = (olen - 2) / TCP_OPTLEN_SACK_BLOCK, k;

				for (k = 0; k < n && k < TCP_SACK_MAX_BLOCKS; k++) {
					const uint8_t *p = buf + i + 2 + TCP_OPTLEN_SACK_BLOCK * k;

					out->sack[k].start = (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
					out->sack[k].end = (uint32_t)p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7];
				}
				out->nsack = (uint8_t)k;
			}
			break;
		case TCP_OPT_TS:
			if (olen == TCP_OPTLEN_TS) {
				const uint8_t *p = buf + i + 2;

				out->has_ts = true;
				out->ts_val = (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
				out->ts_ecr = (uint32_t)p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7];
			}
			break;
		default:
			break;
		}
		i += olen;
	}
	return 0;
}

/**
 * tcp_in_rtt_sample() - RFC 6298 2: fold one RTT measurement into the RTO
 * @c: the connection
 * @rtt_us: the measurement
 */
void tcp_in_rtt_sample(struct tcp_conn *c, uint32_t rtt_us)
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

/* RFC 7323 4.1: RTT from the echoed timestamp; a bogus echo (from the future
 * or older than 5 minutes) gives no sample. */
static void tcp_in_ts_rtt(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	uint32_t ms = tcp_out_ts_now(c, now_us) - seg->opts.ts_ecr;

	if (ms <= 300000)
		tcp_in_rtt_sample(c, ms * 1000);
}

/*
 * The ACK's RTT sample: from the send time of the earliest never-resent
 * segment it acknowledged (else SACKed), to the microsecond (tcp_rate.c);
 * without one (no records, or only resent data acknowledged), RFC 7323
 * 4.1 with timestamps (milliseconds), else Karn's one timed segment.
 */
static void tcp_in_ack_rtt(struct tcp_conn *c, const struct tcp_seg_in *seg, uint32_t acked, uint64_t now_us)
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
		tcp_in_rtt_sample(c, rtt > UINT32_MAX ? UINT32_MAX : (uint32_t)rtt);
		return;
	}
	if (!acked)
		return;
	if (c->ts_ok && seg->opts.has_ts && seg->opts.ts_ecr)
		tcp_in_ts_rtt(c, seg, now_us);
	else if (c->rtt_timing && seq_geq(seg->ack, c->rtt_seq)) {
		c->rtt_timing = false;
		tcp_in_rtt_sample(c, (uint32_t)(now_us - c->rtt_time_us));
	}
}

/**
 * tcp_in_negotiate() - take the peer's SYN options (RFC 7323, RFC 2018)
 * @c: the connection; ws_ok/sack_ok/ts_ok say what we offer
 * @syn: the SYN or SYN-ACK
 */
void tcp_in_negotiate(struct tcp_conn *c, const struct tcp_seg_in *syn)
{
	uint16_t peer_mss;
	int mss;

	c->irs = syn->seq;
	c->rcv_nxt = syn->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	c->ws_ok = c->ws_ok && syn->opts.has_wscale;
	c->snd_wscale = c->ws_ok ? syn->opts.wscale : 0;
	if (!c->ws_ok)
		c->rcv_wscale = 0;
	else if (!c->rcv_wscale)
		c->rcv_wscale = tcp_buf_wscale_for(c->rcvbuf_max);
	c->sack_ok = c->sack_ok && syn->opts.sack_perm;
	c->ts_ok = c->ts_ok && syn->opts.has_ts;
	if (c->ts_ok)
		c->ts_recent = syn->opts.ts_val;
	/* RFC 9293 3.7.1: without the option the peer takes 536 (v4) / 1220 (v6) */
	peer_mss = syn->opts.has_mss ? syn->opts.mss : (c->local.addr.family == AF_INET6 ? 1220 : 536);
	if (peer_mss < TCP_MIN_MSS)
		peer_mss = TCP_MIN_MSS;
	c->peer_mss = peer_mss;
	mss = peer_mss < c->opts.mss ? peer_mss : c->opts.mss;
	if (c->ts_ok)
		mss -= TCP_TS_OPT_BYTES;
	c->snd_mss = (uint16_t)mss;
	if (c->gso_max_bytes < c->snd_mss)
		c->gso_max_bytes = c->snd_mss;
	c->rcv_mss = c->snd_mss;
	tcp_ecn_negotiate(c, syn);
	c->snd_wnd = syn->wnd;	/* RFC 7323 2.2: never scaled on a SYN */
	c->max_snd_wnd = c->snd_wnd;
	c->snd_wl1 = syn->seq;
	c->snd_wl2 = syn->ack;
}

/**
 * tcp_in_established() - the handshake completed: start sending
 * @c: the connection
 * @now_us: the time
 */
void tcp_in_established(struct tcp_conn *c, uint64_t now_us)
{
	c->snd_buf_seq = c->iss + 1;
	c->snd_nxt = c->snd_max = c->snd_una;
	c->high_rxt = c->snd_una;
	c->recover = c->snd_una;
	c->retries = 0;
	c->t_rtx_us = TCP_NO_DEADLINE;
	c->cwnd = TCP_INIT_CWND;
	c->ssthresh = TCP_SSTHRESH_INIT;
	c->cc->init(c);
	c->last_rcv_us = now_us;
	tcp_conn_set_state(c, c->fin_queued ? TCPS_FIN_WAIT_1 : TCPS_ESTABLISHED, now_us);
	tcp_timer_keep_arm(c, now_us);
	tcp_timer_update(c);
}

/**
 * tcp_in_accept() - hand a passively opened connection to its listener
 * @c: the connection, just ESTABLISHED
 * @l: the listener
 * @now_us: the time
 *
 * Return: 0, or negative when the service refused it (the connection was
 * reset).
 */
int tcp_in_accept(struct tcp_conn *c, struct tcp_listener *l, uint64_t now_us)
{
	int ret;

	c->ev = l->ev;
	c->user = l->user;
	c->user_holds = true;
	ret = l->accept(l, l->user, c);
	if (ret < 0) {
		c->user_holds = false;
		tcp_out_rst(c, now_us);
		tcp_conn_set_state(c, TCPS_CLOSED, now_us);
		return ret;
	}
	return 0;
}

static void tcp_in_syn_sent(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	bool ack_ok = false;

	if (seg->flags & TCP_ACK) {
		/* RFC 9293 3.10.7.3 first check */
		if (seq_leq(seg->ack, c->iss) || seq_gt(seg->ack, c->snd_max)) {
			s->st.drop_bad_ack++;
			tcp_out_rst_reply(s, seg);
			/*
			 * A bare ACK is a challenge ACK (RFC 5961 4): the peer
			 * still holds this 4-tuple, a TIME-WAIT of an earlier
			 * connection (of a datapath before this one, or of the
			 * kernel before attach) whose ISN or timestamp it finds
			 * older. The RST at its ACK number ends it (Linux kills a
			 * TIME-WAIT on such a RST); the SYN goes again now instead
			 * of after the RTO, a second of nothing. Once: a peer that
			 * keeps answering this way gets the timer.
			 */
			if (!(seg->flags & (TCP_SYN | TCP_RST)) && !c->syn_resent) {
				c->syn_resent = true;
				s->st.syn_challenged++;
				tcp_out_retransmit(c, c->iss, 0, now_us);
			}
			return;
		}
		ack_ok = true;
	}
	if (seg->flags & TCP_RST) {
		if (ack_ok)
			tcp_conn_drop(c, -ECONNREFUSED, now_us);
		return;
	}
	if (!(seg->flags & TCP_SYN))
		return;
	tcp_in_negotiate(c, seg);
	if (ack_ok) {
		c->snd_una = seg->ack;
		if (c->ts_ok && seg->opts.ts_ecr && c->retries == 0)
			tcp_in_ts_rtt(c, seg, now_us);
		else if (c->retries == 0)
			tcp_in_rtt_sample(c, (uint32_t)(now_us - (c->t_rtx_us - c->rto_us)));
		tcp_in_established(c, now_us);
		c->ack_now = true;
		tcp_conn_event(c, TCP_EV_CONNECTED, 0);
		if (c->state != TCPS_CLOSED)
			tcp_out_push(c, now_us);
		return;
	}
	/* simultaneous open (RFC 9293 3.5 figure 8) */
	tcp_conn_set_state(c, TCPS_SYN_RECEIVED, now_us);
	tcp_out_emit(c, c->iss, TCP_SYN, 0, now_us);
}

/*
 * A segment for a catch-all's connection whose SYN-ACK is not sent yet
 * (tcp_synq.c): the peer only knows its own SYN. A copy of it is dropped
 * (it is retransmitting while the answer waits), a RST for it ends the
 * connection (its owner hears TCP_EV_RESET), a SYN with another ISN replaces
 * it (the peer started over), anything else cannot be about this
 * connection and is dropped.
 */
static void tcp_in_deferred(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_listener *l = c->listener;

	if ((seg->flags & TCP_RST) && seg->seq == c->rcv_nxt) {
		tcp_conn_drop(c, -ECONNRESET, now_us);
		return;
	}
	if ((seg->flags & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_SYN && seg->seq != c->irs && l) {
		/*
		 * A new SYN on the same 4-tuple: the peer gave up waiting and
		 * tries again (a new connect() from the same port). The old
		 * attempt ends (its owner hears TCP_EV_RESET) and the new SYN
		 * is taken as if it were the first.
		 */
		tcp_conn_drop(c, -ECONNRESET, now_us);
		tcp_synq_syn(l, seg, now_us);
		return;
	}
	if (!((seg->flags & TCP_SYN) && seg->seq == c->irs))
		c->stack->st.drop_out_of_window++;
}

static bool tcp_in_seq_ok(const struct tcp_conn *c, const struct tcp_seg_in *seg, uint32_t seg_len)
{
	uint32_t wnd = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0, space = tcp_buf_rcv_wnd(c);

	if (space > wnd)
		wnd = space;
	/* RFC 9293 3.10.7.4 table of the four cases */
	if (!seg_len)
		return wnd ? seq_leq(c->rcv_nxt, seg->seq) && seq_lt(seg->seq, c->rcv_nxt + wnd)
			   : seg->seq == c->rcv_nxt;
	if (!wnd)
		return false;
	return (seq_leq(c->rcv_nxt, seg->seq) && seq_lt(seg->seq, c->rcv_nxt + wnd)) ||
	       (seq_leq(c->rcv_nxt, seg->seq + seg_len - 1) && seq_lt(seg->seq + seg_len - 1, c->rcv_nxt + wnd));
}

static void tcp_in_fin_acked(struct tcp_conn *c, uint64_t now_us)
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

/*
 * A pure duplicate ACK that merely arrived after a newer segment (the
 * network reordered the ACKs) fails PAWS although it is harmless, and
 * dropping it loses its SACK blocks: RACK would then take SACKed data for
 * lost. Accept it, like Linux's tcp_disordered_ack(): no data, no flags
 * but ACK, SEG.SEQ = RCV.NXT, SEG.ACK = SND.UNA, the same window, and a
 * TSval at most one RTO (read as milliseconds) behind TS.Recent.
 */
static bool tcp_in_disordered_ack(const struct tcp_conn *c, const struct tcp_seg_in *seg)
{
	if (c->ts_recent - seg->opts.ts_val > c->rto_us / 1000 || (seg->flags & (TCP_SYN | TCP_RST)))
		return false;
	return !seg->len && (seg->flags & (TCP_SYN | TCP_FIN | TCP_RST | TCP_ACK)) == TCP_ACK &&
	       seg->seq == c->rcv_nxt && seg->ack == c->snd_una &&
	       ((uint32_t)seg->wnd << c->snd_wscale) == c->snd_wnd;
}

/* Step 5: the ACK field. Returns false when the segment must be dropped. */
static bool tcp_in_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	uint32_t acked = 0, wnd = (uint32_t)seg->wnd << c->snd_wscale, sacked_before, sacked_after, delivered;
	bool dupack, dsack, freed = false;

	if (c->state == TCPS_SYN_RECEIVED) {
		struct tcp_listener *l = c->listener;

		if (!seq_gt(seg->ack, c->snd_una) || seq_gt(seg->ack, c->snd_max)) {
			s->st.drop_bad_ack++;
			tcp_out_rst_reply(s, seg);
			return false;
		}
		c->snd_una = seg->ack;
		if (c->ts_ok && seg->opts.has_ts && seg->opts.ts_ecr && c->retries == 0)
			tcp_in_ts_rtt(c, seg, now_us);
		tcp_in_established(c, now_us);
		c->snd_wnd = wnd;
		c->max_snd_wnd = wnd;
		c->snd_wl1 = seg->seq;
		c->snd_wl2 = seg->ack;
		if (c->syn_owned) {
			tcp_conn_event(c, TCP_EV_CONNECTED, 0);
		} else if (c->passive) {
			if (!l || tcp_in_accept(c, l, now_us) < 0) {
				if (!l) {
					tcp_out_rst(c, now_us);
					tcp_conn_set_state(c, TCPS_CLOSED, now_us);
				}
				return false;
			}
		} else {
			tcp_conn_event(c, TCP_EV_CONNECTED, 0);
		}
		if (c->state == TCPS_CLOSED)
			return false;
		if (c->fin_queued && c->state == TCPS_ESTABLISHED)
			tcp_conn_set_state(c, TCPS_FIN_WAIT_1, now_us);
		return true;
	}

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
	tcp_in_ack_rtt(c, seg, acked, now_us);
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
		tcp_in_fin_acked(c, now_us);
	if (freed && c->writable_wanted && c->state != TCPS_CLOSED) {
		c->writable_wanted = false;
		tcp_conn_event(c, TCP_EV_WRITABLE, 0);
	}
	return c->state != TCPS_CLOSED;
}

/*
 * In-order bytes while nothing is unread: the sink may take them, copied
 * once (tcp_conn_set_sink()). What it takes counts as read.
 */
static uint32_t tcp_in_sink(struct tcp_conn *c, const uint8_t *data, uint32_t len, uint64_t now_us)
{
	size_t n = c->sink(c, c->user, data, len);

	if (!n)
		return 0;
	if (n > len)
		n = len;
	c->stack->st.rcv_sunk_bytes += n;
	tcp_buf_rcv_sunk(c, (uint32_t)n, now_us);
	c->sink_took = true;
	return (uint32_t)n;
}

/*
 * May the ACK for what the sink took wait for the owner's tcp_push() at the
 * end of its turn (tcp_conn_ack_at_push())? Then one ACK covers every
 * segment of the connection that the turn brought, where one per GSO frame
 * made the peer run its ACK processing and its next transmission once per
 * frame, on our time (a veth runs the peer's stack in the sender's system
 * call). It waits only where tcp_push() sends it (ESTABLISHED), with nothing
 * of ours to send that could carry it, and while the bytes it acknowledges
 * are under half the window last offered, so that the peer does not stall
 * for it. The delayed-ACK timer stays armed in case no push comes.
 */
static bool tcp_in_ack_waits(struct tcp_conn *c, uint64_t now_us)
{
	bool took = c->sink_took;

	c->sink_took = false;
	if (!took || !c->ack_at_push || c->state != TCPS_ESTABLISHED)
		return false;
	if (c->snd_buf_seq + c->snd.len != c->snd_nxt || c->fin_queued)
		return false;
	if (c->rcv_nxt - c->last_ack_sent >= (c->rcv_adv - c->last_ack_sent) / 2)
		return false;
	if (c->ack_now)
		c->stack->st.acks_at_push++;
	tcp_timer_delack(c, now_us);
	return true;
}

/*
 * An ACK for a segment out of order. RFC 5681 4.2 says at once, and the first
 * TCP_COMP_SACK_DUPS for one rcv_nxt do leave at once: they are the sender's
 * duplicate ACKs for fast retransmit. After them, while the hole stays, each
 * ACK only moves SACK blocks; on a fast path with a little loss a hole is
 * there most of the time, and an ACK per segment doubled the packets the
 * path and the sender carried (receiving at 10 ms and 0.1 % loss: 1.3
 * segments per ACK, the kernel's receiver 7.6). So the rest are compressed
 * as Linux does (tcp_comp_sack_*): one ACK for up to TCP_COMP_SACK_NR of
 * them, or after 1/20 of the RTT (at most TCP_COMP_SACK_DELAY_US), with the
 * most recent blocks (tcp_sack.c). A filled hole moves rcv_nxt and ACKs at
 * once again.
 */
static void tcp_in_ooo_ack(struct tcp_conn *c, uint64_t now_us)
{
	uint64_t delay_us;

	if (!c->sack_ok) {
		c->ack_now = true;
		return;
	}
	if (c->comp_rcv_nxt != c->rcv_nxt) {
		c->comp_rcv_nxt = c->rcv_nxt;
		c->comp_dups = 0;
	}
	if (c->comp_dups < TCP_COMP_SACK_DUPS) {
		c->comp_dups++;
		c->ack_now = true;
		return;
	}
	if (++c->comp_acks >= TCP_COMP_SACK_NR) {
		c->ack_now = true;
		return;
	}
	delay_us = c->srtt_us / 20;
	if (delay_us > TCP_COMP_SACK_DELAY_US)
		delay_us = TCP_COMP_SACK_DELAY_US;
	tcp_timer_delack_within(c, now_us, delay_us);
}

/*
 * Step 7: the text. Returns true when new in-order bytes are readable in
 * the receive ring (not when the sink took them all).
 */
static bool tcp_in_text(struct tcp_conn *c, const struct tcp_seg_in *seg, uint32_t *seq_io, uint32_t *len_io,
			bool *fin_io, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	const uint8_t *data = seg->data;
	uint32_t seq = *seq_io, len = *len_io, room, segs, taken = 0, stored;
	bool had_ooo = c->ooo.n > 0;

	if (seq_lt(seq, c->rcv_nxt)) {
		uint32_t skip = c->rcv_nxt - seq;

		/* RFC 2883: tell the sender what arrived twice */
		c->dsack = c->sack_ok;
		c->dsack_start = seq;
		c->dsack_end = seq + (skip < len ? skip : len);

		if (skip >= len) {
			*len_io = 0;
			*seq_io = c->rcv_nxt;
			if (skip > len)
				*fin_io = false;	/* an old FIN */
			c->ack_now = true;	/* a duplicate: ACK at once */
			return false;
		}
		data += skip;
		len -= skip;
		seq = c->rcv_nxt;
	}
	/* the space a ring of its capacity has, whether it holds memory yet
	 * or not (tcp_buf_rcv_ready() below gives it the same capacity) */
	room = tcp_buf_rcv_space(c);
	if (seq - c->rcv_nxt >= room) {
		s->st.drop_rcv_full++;
		*len_io = 0;
		*fin_io = false;
		c->ack_now = true;
		return false;
	}
	if (len > room - (seq - c->rcv_nxt)) {
		s->st.drop_rcv_full++;
		len = room - (seq - c->rcv_nxt);
		*fin_io = false;	/* RFC 9293: trimmed, the FIN is gone too */
	}
	if (seq == c->rcv_nxt && !c->rcv.len && !had_ooo && c->sink)
		taken = tcp_in_sink(c, data, len, now_us);
	if (taken < len && tcp_buf_rcv_ready(c) < 0) {
		*fin_io = false;
		if (!taken) {
			*len_io = 0;
			return false;
		}
		len = taken;	/* the sink's part is had; the rest comes again */
	}
	*seq_io = seq;
	*len_io = len;
	segs = len / c->opts.mss ? len / c->opts.mss : 1;
	if (len > c->rcv_mss)
		c->rcv_mss = len > 65535 ? 65535 : (uint16_t)len;
	if (seq != c->rcv_nxt) {
		/*
		 * A change to a range beyond the two newest would push one of
		 * them out of the held ACK's three blocks: what they gained
		 * would reach the sender only when they change again, as
		 * newly SACKed below newer data (reordering, to a Linux
		 * sender). Send the held ACK first, as Linux does.
		 */
		if (c->comp_acks && !tcp_ooo_extends_recent(c, seq, seq + len, TCP_COMP_SACK_BLOCKS))
			tcp_out_ack(c, now_us);
		if (c->sack_ok && tcp_ranges_bytes(&c->ooo, seq, seq + len) == len) {
			c->dsack = true;	/* all of it was already held */
			c->dsack_start = seq;
			c->dsack_end = seq + len;
		}
		if (tcp_ooo_insert(c, seq, data, len) < 0)
			s->st.drop_ooo_full++;
		else if (*fin_io) {
			c->ooo_fin = true;
			c->ooo_fin_seq = seq + len;
		}
		*fin_io = false;
		tcp_in_ooo_ack(c, now_us);
		return false;
	}
	stored = len - taken;
	if (stored) {	/* else the ring may hold no memory at all */
		tcp_ring_write_at(&c->rcv, c->rcv.len, data + taken, stored);
		c->rcv.len += stored;
	}
	c->rcv_nxt += len;
	c->stats.bytes_received += len;
	if (had_ooo) {
		uint32_t pulled = tcp_ooo_pull(c);

		c->stats.bytes_received += pulled;
		c->ack_now = true;	/* filled a hole */
		if (c->ooo_fin && c->ooo_fin_seq == c->rcv_nxt)
			*fin_io = true;
	}
	if (!c->ooo.n)
		c->ooo_fin = false;
	c->unacked_segs += segs;
	if (c->quickack) {
		c->quickack--;
		c->ack_now = true;
	}
	if (c->unacked_segs >= 2)
		c->ack_now = true;
	if (!c->ack_now)
		tcp_timer_delack(c, now_us);
	return c->rcv.len > 0;
}

static void tcp_in_fin(struct tcp_conn *c, uint64_t now_us)
{
	c->rcv_nxt++;
	c->fin_rcvd = true;
	c->ack_now = true;
	c->ooo_fin = false;
	switch (c->state) {
	case TCPS_ESTABLISHED:
		tcp_conn_set_state(c, TCPS_CLOSE_WAIT, now_us);
		break;
	case TCPS_FIN_WAIT_1:
		if (c->fin_sent && c->snd_una == c->snd_max) {
			tcp_conn_set_state(c, TCPS_TIME_WAIT, now_us);
		} else {
			tcp_conn_set_state(c, TCPS_CLOSING, now_us);
		}
		break;
	case TCPS_FIN_WAIT_2:
		tcp_conn_set_state(c, TCPS_TIME_WAIT, now_us);
		break;
	default:
		break;
	}
}

static void tcp_in_conn(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	uint32_t seg_len = (uint32_t)seg->len + !!(seg->flags & TCP_SYN) + !!(seg->flags & TCP_FIN);
	struct tcp_seg_in fixed;
	uint32_t seq, len;
	bool fin, readable = false;

	c->stats.segs_in++;
	if (c->state == TCPS_SYN_SENT) {
		tcp_in_syn_sent(c, seg, now_us);
		return;
	}
	if (c->deferred) {
		tcp_in_deferred(c, seg, now_us);
		return;
	}
	c->last_rcv_us = now_us;
	c->keep_probes = 0;
	if (c->state == TCPS_SYN_RECEIVED && (seg->flags & (TCP_SYN | TCP_RST)) == TCP_SYN && seg->seq == c->irs) {
		/* our SYN-ACK was lost (a SYN again), or the SYN-ACK of a simultaneous open */
		if (!(seg->flags & TCP_ACK) || !seq_gt(seg->ack, c->snd_una) || seq_gt(seg->ack, c->snd_max)) {
			tcp_out_emit(c, c->iss, TCP_SYN, 0, now_us);
			return;
		}
		fixed = *seg;
		fixed.flags &= ~TCP_SYN;
		fixed.seq = c->irs + 1;
		seg = &fixed;
		seg_len--;
	}
	/*
	 * RFC 7323 5.3: PAWS, with Linux's window of one tick
	 * (TCP_PAWS_WINDOW): a paced sender's segments a millisecond apart,
	 * reordered on the way, are not old duplicates.
	 */
	if (c->ts_ok && seg->opts.has_ts && !(seg->flags & TCP_RST) &&
	    (int32_t)(c->ts_recent - seg->opts.ts_val) > TCP_PAWS_WINDOW && !tcp_in_disordered_ack(c, seg)) {
		s->st.drop_paws++;
		tcp_out_ack(c, now_us);
		return;
	}
	/* RFC 6191-ish: a new SYN reopens a TIME-WAIT connection */
	if (c->state == TCPS_TIME_WAIT && (seg->flags & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_SYN &&
	    (seq_gt(seg->seq, c->rcv_nxt) ||
	     (c->ts_ok && seg->opts.has_ts && seq_gt(seg->opts.ts_val, c->ts_recent)))) {
		struct tcp_endpoint l = c->local;
		struct tcp_listener *lis = tcp_listener_lookup(s, &l);

		tcp_conn_set_state(c, TCPS_CLOSED, now_us);
		if (lis)
			tcp_synq_syn(lis, seg, now_us);
		return;
	}
	if (!tcp_in_seq_ok(c, seg, seg_len)) {
		s->st.drop_out_of_window++;
		if (seg->len && c->sack_ok && seq_leq(seg->seq + (uint32_t)seg->len, c->rcv_nxt)) {
			c->dsack = true;	/* RFC 2883: an old duplicate */
			c->dsack_start = seg->seq;
			c->dsack_end = seg->seq + (uint32_t)seg->len;
		}
		if (!(seg->flags & TCP_RST)) {
			if (c->state == TCPS_TIME_WAIT && (seg->flags & TCP_FIN))
				tcp_timer_timewait(c, now_us);
			tcp_out_ack(c, now_us);
		}
		return;
	}
	if (c->ts_ok && seg->opts.has_ts && seq_leq(seg->seq, c->last_ack_sent) &&
	    seq_geq(seg->opts.ts_val, c->ts_recent))
		c->ts_recent = seg->opts.ts_val;
	tcp_ecn_in(c, seg);
	/* RFC 5961 3.2 */
	if (seg->flags & TCP_RST) {
		if (seg->seq != c->rcv_nxt) {
			tcp_out_challenge_ack(c, now_us);
			return;
		}
		if (c->state == TCPS_TIME_WAIT || (c->state == TCPS_SYN_RECEIVED && c->passive && !c->user_holds))
			tcp_conn_set_state(c, TCPS_CLOSED, now_us);
		else
			tcp_conn_drop(c, c->state == TCPS_SYN_RECEIVED ? -ECONNREFUSED : -ECONNRESET, now_us);
		return;
	}
	/* RFC 5961 4.2: any SYN here gets a challenge ACK */
	if (seg->flags & TCP_SYN) {
		if (c->state == TCPS_SYN_RECEIVED && seg->seq == c->irs) {
			tcp_out_emit(c, c->iss, TCP_SYN, 0, now_us);	/* our SYN-ACK was lost */
			return;
		}
		tcp_out_challenge_ack(c, now_us);
		return;
	}
	if (!(seg->flags & TCP_ACK))
		return;
	if (!tcp_in_ack(c, seg, now_us))
		return;
	if (c->state == TCPS_TIME_WAIT) {
		if (seg->flags & TCP_FIN) {
			tcp_timer_timewait(c, now_us);
			tcp_out_ack(c, now_us);
		}
		return;
	}
	seq = seg->seq;
	len = (uint32_t)seg->len;
	fin = seg->flags & TCP_FIN;
	if (len || fin) {
		switch (c->state) {
		case TCPS_ESTABLISHED:
		case TCPS_FIN_WAIT_1:
		case TCPS_FIN_WAIT_2:
			if (len && !c->user_holds) {
				/* nobody will read it: reset like Linux does */
				tcp_out_rst(c, now_us);
				tcp_conn_set_state(c, TCPS_CLOSED, now_us);
				return;
			}
			if (len)
				readable = tcp_in_text(c, seg, &seq, &len, &fin, now_us);
			else if (seq != c->rcv_nxt) {
				if (seq_gt(seq, c->rcv_nxt) && c->rcv.cap) {
					c->ooo_fin = true;	/* a bare FIN beyond a hole */
					c->ooo_fin_seq = seq;
				}
				fin = false;
				c->ack_now = true;
			}
			break;
		default:
			fin = false;	/* CLOSE-WAIT, CLOSING, LAST-ACK: already had the FIN */
			if (seg->seq != c->rcv_nxt || len)
				c->ack_now = true;
			break;
		}
	}
	if (fin)
		tcp_in_fin(c, now_us);
	if (readable)
		tcp_conn_event(c, TCP_EV_READABLE, 0);
	if (c->state != TCPS_CLOSED && c->fin_rcvd && !c->peer_fin_told) {
		c->peer_fin_told = true;
		tcp_conn_event(c, TCP_EV_PEER_FIN, 0);
		if (c->state == TCPS_TIME_WAIT)
			tcp_conn_event(c, TCP_EV_CLOSED, 0);
	}
	if (c->state == TCPS_CLOSED || tcp_in_ack_waits(c, now_us))
		return;
	tcp_out_push(c, now_us);
}

static bool tcp_in_valid(struct tcp_stack *s, const struct tcp_seg_in *seg)
{
	if (seg->src.family != seg->dst.family ||
	    (seg->src.family != AF_INET && seg->src.family != AF_INET6) || !seg->sport || !seg->dport ||
	    seg->len > TCP_MAX_SEG_IN || (seg->len && !seg->data) || seg->opts.nsack > TCP_SACK_MAX_BLOCKS ||
	    (seg->flags & (TCP_SYN | TCP_FIN)) == (TCP_SYN | TCP_FIN) ||
	    (seg->flags & (TCP_SYN | TCP_RST)) == (TCP_SYN | TCP_RST)) {
		s->st.drop_malformed++;
		return false;
	}
	return true;
}

/**
 * tcp_input() - a segment arrived from the IP layer
 * @s: the stack
 * @seg: the parsed segment (its payload is copied if kept)
 * @now_us: the time
 *
 * Return: 0 when a connection or listener took it, -EINVAL for a malformed
 * segment, -ENOENT when nothing wanted it (a RST was sent when due).
 */
int tcp_input(struct tcp_stack *s, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_endpoint l, r;
	struct tcp_seg_in fixed;
	struct tcp_listener *lis;
	struct tcp_conn *c;
	int ret = 0;

	s->st.segs_in++;
	s->clock_us = now_us;
	if (!tcp_in_valid(s, seg))
		return -EINVAL;
	if (seg->opts.has_wscale && seg->opts.wscale > TCP_MAX_WSCALE) {
		fixed = *seg;
		fixed.opts.wscale = TCP_MAX_WSCALE;	/* RFC 7323 2.3 */
		seg = &fixed;
	}
	l.addr = seg->dst;
	l.port = seg->dport;
	r.addr = seg->src;
	r.port = seg->sport;
	tcp_conn_enter(s);
	c = tcp_conn_lookup(s, &l, &r);
	if (c && c->state == TCPS_SYN_RECEIVED && c->passive && c->listener &&
	    (seg->flags & (TCP_SYN | TCP_RST | TCP_ACK)) == TCP_ACK &&
	    (!seq_gt(seg->ack, c->snd_una) || seq_gt(seg->ack, c->snd_max))) {
		/*
		 * An ACK of another ISS: the peer may have completed a cookie
		 * handshake for an earlier copy of the SYN that made this
		 * half-open entry, and be ESTABLISHED with the cookie as our
		 * ISS. The RFC 9293 3.10.7.4 RST for an unacceptable ACK in
		 * SYN-RECEIVED would kill it: the cookie connection replaces
		 * the entry instead (or, when the segment only looks like a
		 * cookie ACK, see tcp_synq.c, it is dropped).
		 */
		int ck = tcp_synq_cookie_check(c->listener, seg, now_us);

		if (ck == -EAGAIN)
			goto out;
		if (ck == 0) {
			tcp_conn_set_state(c, TCPS_CLOSED, now_us);
			c = NULL;
		}
	}
	if (c) {
		tcp_in_conn(c, seg, now_us);
		goto out;
	}
	lis = tcp_listener_lookup(s, &l);
	if (lis) {
		/* RFC 9293 3.10.7.2 */
		if (seg->flags & TCP_RST)
			goto out;
		if (seg->flags & TCP_ACK) {
			int ck = (seg->flags & TCP_SYN) ? -ENOENT : tcp_synq_cookie_ack(lis, seg, now_us);

			if (ck == 0) {
				c = tcp_conn_lookup(s, &l, &r);
				if (c)
					tcp_in_conn(c, seg, now_us);
			} else if (ck != -EAGAIN) {
				tcp_out_rst_reply(s, seg);
			}
			goto out;
		}
		if (seg->flags & TCP_SYN)
			tcp_synq_syn(lis, seg, now_us);
		goto out;
	}
	s->st.drop_no_socket++;
	tcp_out_rst_reply(s, seg);
	ret = -ENOENT;
out:
	tcp_conn_leave(s);
	return ret;
}
