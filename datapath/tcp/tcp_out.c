// SPDX-License-Identifier: MIT
/*
 * tcp_out.c - building and sending segments
 *
 * Theory of operation
 *
 * Every segment leaves through tcp_out_send(), which fills a struct
 * tcp_seg_out (addresses, ports, seq, ack = rcv_nxt, the window, the
 * options), points its payload at the send ring (no copy) and calls the
 * stack's emit callback. It also keeps snd_max, the ACK state (last_ack_sent,
 * rcv_adv, the delayed ACK) and the retransmission timer in step.
 *
 * tcp_out_push() is the sending loop. While cwnd (in MSS units: cwnd * MSS
 * bytes) exceeds the RFC 6675 pipe, and pacing lets the next segment go
 * (tcp_pace.c), it sends, in order:
 *   1. lost holes (recovery or after an RTO), one MSS each, from HighRxt;
 *   2. new data from snd_nxt, as one segment of up to gso_max_bytes (or
 *      what pacing lets one send carry), limited by the peer window and the
 *      cwnd budget and cut to a multiple of the MSS unless it ends at the
 *      end of the buffered data (emitted with gso_size = MSS so the link can
 *      split it);
 *   3. the FIN, with the last data or alone.
 * Small segments obey sender SWS avoidance (RFC 9293 3.8.6.2.1) and, when
 * enabled, Nagle. The loop records whether cwnd was what stopped it
 * (cwnd_limited): an application- or window-limited sender does not grow
 * cwnd (the idea of RFC 7661), so cwnd stays meaningful after idle periods;
 * after more than an RTO without sending it restarts from the initial
 * window (RFC 5681 4.1). If data waits on a zero window with nothing in flight the
 * persist timer takes over (tcp_timer.c).
 *
 * The window offered follows receiver SWS avoidance (RFC 9293 3.8.6.2.2):
 * the right edge only moves by at least min(buffer / 2, MSS), and never moves
 * left. SYN windows are not scaled (RFC 7323 2.2).
 *
 * SACK blocks ride on every ACK while out-of-order data is held, led by a
 * D-SACK block (RFC 2883) after a duplicate arrived; a data segment carries
 * them only if its payload still fits the on-wire MSS.
 */
#include "datapath/tcp/tcp_int.h"

/**
 * tcp_opts_write() - write options in on-wire form, padded to 4 bytes
 * @o: the options
 * @buf: destination
 * @cap: its size
 *
 * Return: bytes written (a multiple of 4, at most 40), -ENOSPC.
 */
int tcp_opts_write(const struct tcp_opts *o, uint8_t *buf, size_t cap)
{
	uint8_t tmp[TCP_OPTS_MAX_BYTES + 40];
	size_t n = 0;
	unsigned int i;

	if (o->has_mss) {
		tmp[n++] = TCP_OPT_MSS;
		tmp[n++] = TCP_OPTLEN_MSS;
		tmp[n++] = o->mss >> 8;
		tmp[n++] = o->mss & 0xff;
	}
	/* the layout Linux sends, so that middleboxes see nothing new */
	if (o->sack_perm && o->has_ts) {
		tmp[n++] = TCP_OPT_SACK_PERM;
		tmp[n++] = TCP_OPTLEN_SACK_PERM;
	} else if (o->sack_perm) {
		tmp[n++] = TCP_OPT_NOP;
		tmp[n++] = TCP_OPT_NOP;
		tmp[n++] = TCP_OPT_SACK_PERM;
		tmp[n++] = TCP_OPTLEN_SACK_PERM;
	} else if (o->has_ts) {
		tmp[n++] = TCP_OPT_NOP;
		tmp[n++] = TCP_OPT_NOP;
	}
	if (o->has_ts) {
		tmp[n++] = TCP_OPT_TS;
		tmp[n++] = TCP_OPTLEN_TS;
		for (i = 0; i < 4; i++)
			tmp[n++] = o->ts_val >> (24 - 8 * i);
		for (i = 0; i < 4; i++)
			tmp[n++] = o->ts_ecr >> (24 - 8 * i);
	}
	if (o->has_wscale) {
		tmp[n++] = TCP_OPT_NOP;
		tmp[n++] = TCP_OPT_WSCALE;
		tmp[n++] = TCP_OPTLEN_WSCALE;
		tmp[n++] = o->wscale;
	}
	if (o->nsack && o->nsack <= TCP_SACK_MAX_BLOCKS) {
		tmp[n++] = TCP_OPT_NOP;
		tmp[n++] = TCP_OPT_NOP;
		tmp[n++] = TCP_OPT_SACK;
		tmp[n++] = 2 + TCP_OPTLEN_SACK_BLOCK * o->nsack;
		for (i = 0; i < o->nsack; i++) {
			unsigned int k;

			for (k = 0; k < 4; k++)
				tmp[n++] = o->sack[i].start >> (24 - 8 * k);
			for (k = 0; k < 4; k++)
				tmp[n++] = o->sack[i].end >> (24 - 8 * k);
		}
	}
	while (n % 4)
		tmp[n++] = TCP_OPT_EOL;
	if (n > TCP_OPTS_MAX_BYTES || n > cap)
		return -ENOSPC;
	memcpy(buf, tmp, n);
	return (int)n;
}

static unsigned int tcp_opts_len(const struct tcp_opts *o)
{
	uint8_t tmp[TCP_OPTS_MAX_BYTES];
	int n = tcp_opts_write(o, tmp, sizeof(tmp));

	return n < 0 ? TCP_OPTS_MAX_BYTES : (unsigned int)n;
}

/**
 * tcp_out_ts_now() - our TSval clock: milliseconds plus a per-conn offset
 * @c: the connection
 * @now_us: the time
 *
 * Return: the TSval to send.
 */
uint32_t tcp_out_ts_now(const struct tcp_conn *c, uint64_t now_us)
{
	return (uint32_t)(now_us / 1000) + c->ts_offset;
}

/**
 * tcp_out_mss_opt() - the MSS option we announce
 * @o: connection settings
 *
 * Return: the configured MSS (route MTU minus headers).
 */
uint16_t tcp_out_mss_opt(const struct tcp_conn_opts *o)
{
	return o->mss;
}

static uint16_t tcp_out_wnd(struct tcp_conn *c, bool syn)
{
	uint32_t wnd = tcp_buf_rcv_wnd(c), edge, thresh, scaled;

	if (syn)
		return wnd > 65535 ? 65535 : (uint16_t)wnd;
	edge = c->rcv_nxt + wnd;
	thresh = tcp_buf_rcv_space(c) + c->rcv.len;	/* the capacity */
	thresh = thresh / 2 < c->snd_mss ? thresh / 2 : c->snd_mss;
	if (seq_geq(c->rcv_adv, c->rcv_nxt) && (seq_lt(edge, c->rcv_adv) || edge - c->rcv_adv < thresh)) {
		/*
		 * Keep the old edge. With a scale it is rounded down: the edge
		 * may seem to retract by less than one unit (RFC 7323 2.4),
		 * and rcv_adv keeps the true one, which the ring always holds
		 * and tcp_in_seq_ok() accepts. Rounded up, it crept one unit
		 * further at each ACK, beyond the ring.
		 */
		wnd = c->rcv_adv - c->rcv_nxt;
	}
	scaled = wnd >> c->rcv_wscale;	/* never offer more than fits */
	if (scaled > 65535)
		scaled = 65535;
	return (uint16_t)scaled;
}

static void tcp_out_fill(struct tcp_stack *s, struct tcp_seg_out *o, const struct tcp_endpoint *l,
			 const struct tcp_endpoint *r)
{
	memset(o, 0, sizeof(*o));
	o->src = l->addr;
	o->dst = r->addr;
	o->sport = l->port;
	o->dport = r->port;
	(void)s;
}

static int tcp_out_call(struct tcp_stack *s, const struct tcp_seg_out *o)
{
	int ret = s->cfg.emit(s->cfg.emit_ctx, o);

	s->st.segs_out++;
	if (o->flags & TCP_RST)
		s->st.rst_out++;
	if (ret < 0)
		s->st.emit_errors++;
	return ret;
}

/*
 * Send one segment of @c: @len payload bytes from sequence @seq (which must
 * be inside the send ring when @len > 0).
 */
static int tcp_out_send(struct tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t len, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	struct tcp_seg_out o;
	uint32_t end, mss_total;
	bool new_data;
	uint16_t wnd;
	int n, ret;

	tcp_out_fill(s, &o, &c->local, &c->remote);
	o.seq = seq;
	o.flags = flags;
	if (c->state != TCPS_SYN_SENT || !(flags & TCP_SYN))
		o.flags |= TCP_ACK;
	if (flags & TCP_RST && c->state == TCPS_SYN_SENT)
		o.flags &= ~TCP_ACK;
	if (o.flags & TCP_ACK)
		o.ack = c->rcv_nxt;
	wnd = tcp_out_wnd(c, flags & TCP_SYN);
	o.wnd = (flags & TCP_RST) ? 0 : wnd;
	if (flags & TCP_SYN) {
		o.flags |= tcp_ecn_syn_flags(c);
		o.opts.has_mss = true;
		o.opts.mss = tcp_out_mss_opt(&c->opts);
		o.opts.sack_perm = c->sack_ok;
		o.opts.has_wscale = c->ws_ok;
		o.opts.wscale = c->rcv_wscale;
	}
	if (c->ts_ok && !(flags & TCP_RST)) {
		o.opts.has_ts = true;
		o.opts.ts_val = tcp_out_ts_now(c, now_us);
		o.opts.ts_ecr = (o.flags & TCP_ACK) ? c->ts_recent : 0;
	}
	if (c->sack_ok && (c->ooo.n || c->dsack) && !(flags & (TCP_SYN | TCP_RST))) {
		struct tcp_opts with = o.opts;

		/* RFC 2883: a duplicate we received goes first, once */
		if (c->dsack)
			tcp_ooo_sack_blocks(c, c->dsack_start, c->dsack_end, &with, c->ts_ok ? 3 : 4);
		else
			tcp_ooo_sack_blocks(c, 0, 0, &with, c->ts_ok ? 3 : 4);
		c->dsack = false;
		mss_total = c->snd_mss + (c->ts_ok ? TCP_TS_OPT_BYTES : 0);
		if (!len || tcp_opts_len(&with) + (len < c->snd_mss ? len : c->snd_mss) <= mss_total)
			o.opts = with;
	}
	o.ecn = tcp_ecn_out(c, &o.flags, len && seq_geq(seq, c->snd_max));
	if (len) {
		n = tcp_ring_iov(&c->snd, seq - c->snd_buf_seq, len, o.iov);
		if (n < 0)
			return n;
		c->last_data_us = now_us;
		o.iovcnt = n;
		o.len = len;
		if (len > c->snd_mss)
			o.gso_size = c->snd_mss;
	}
	if (o.flags & TCP_ACK) {
		c->last_ack_sent = c->rcv_nxt;
		if (!(flags & (TCP_SYN | TCP_RST))) {
			uint32_t edge = c->rcv_nxt + ((uint32_t)wnd << c->rcv_wscale);

			if (seq_gt(edge, c->rcv_adv) || !seq_geq(c->rcv_adv, c->rcv_nxt))
				c->rcv_adv = edge;
		} else if (flags & TCP_SYN) {
			c->rcv_adv = c->rcv_nxt + wnd;
		}
		c->unacked_segs = 0;
		if (c->comp_acks) {	/* this one stands for the ones held */
			c->stack->st.acks_compressed += c->comp_acks - 1u;
			c->comp_acks = 0;
		}
		c->ack_now = false;
		if (c->t_delack_us != TCP_NO_DEADLINE) {
			c->t_delack_us = TCP_NO_DEADLINE;
			tcp_timer_update(c);
		}
	}
	end = seq + len + !!(flags & TCP_SYN) + !!(flags & TCP_FIN);
	new_data = seq_gt(end, c->snd_max);
	if (end != seq && !(flags & (TCP_SYN | TCP_RST)))
		tcp_rack_sent(c, seq, end, now_us);
	if (seq_gt(end, c->snd_max) && !(flags & TCP_RST)) {
		if (!c->rtt_timing && len && !c->ts_ok && seq_geq(seq, c->snd_max)) {
			c->rtt_timing = true;
			c->rtt_seq = end;
			c->rtt_time_us = now_us;
		}
		c->stats.bytes_sent += end - seq_max(seq, c->snd_max);
		c->snd_max = end;
	}
	c->stats.segs_out++;
	if (end != seq && !(flags & TCP_RST)) {
		if (c->t_rtx_us == TCP_NO_DEADLINE)
			tcp_timer_rtx_arm(c, now_us);
		else if (new_data || c->in_recovery || c->after_rto)
			tcp_timer_tlp_arm(c, now_us);	/* RFC 8985 7.2: re-arm on new data (any data in recovery) */
	}
	ret = tcp_out_call(s, &o);
	if (ret == TCP_EMIT_LENT && len)
		tcp_snd_lend(c, seq);
	return ret;
}

/**
 * tcp_out_emit() - send a segment of @c as is (SYN, data, FIN, ACK)
 * @c: the connection
 * @seq: its sequence number
 * @flags: TCP_SYN, TCP_FIN, TCP_PSH, TCP_RST (ACK is added when due)
 * @len: payload bytes from the send ring at @seq
 * @now_us: the time
 *
 * Return: the emit callback's result.
 */
int tcp_out_emit(struct tcp_conn *c, uint32_t seq, uint8_t flags, uint32_t len, uint64_t now_us)
{
	return tcp_out_send(c, seq, flags, len, now_us);
}

/**
 * tcp_out_ack() - send a pure ACK now
 * @c: the connection
 * @now_us: the time
 */
void tcp_out_ack(struct tcp_conn *c, uint64_t now_us)
{
	tcp_out_send(c, c->snd_nxt, 0, 0, now_us);
}

/**
 * tcp_out_probe() - a zero-window or keepalive probe: SEG.SEQ = SND.UNA - 1
 * @c: the connection
 * @now_us: the time
 *
 * The peer answers an old sequence number with an ACK that carries its
 * current window (RFC 9293 3.8.6.1; the form Linux uses).
 */
void tcp_out_probe(struct tcp_conn *c, uint64_t now_us)
{
	tcp_out_send(c, c->snd_una - 1, 0, 0, now_us);
}

/**
 * tcp_out_rst() - reset the connection: <SEQ=SND.NXT><CTL=RST,ACK>
 * @c: the connection
 * @now_us: the time
 */
void tcp_out_rst(struct tcp_conn *c, uint64_t now_us)
{
	tcp_out_send(c, c->snd_max, TCP_RST, 0, now_us);
}

/**
 * tcp_out_challenge_ack() - RFC 5961 challenge ACK, rate-limited per stack
 * @c: the connection
 * @now_us: the time
 */
void tcp_out_challenge_ack(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	uint64_t sec = now_us / 1000000;

	if (sec != s->chack_second) {
		s->chack_second = sec;
		s->chack_count = 0;
	}
	if (s->chack_count >= s->cfg.challenge_ack_limit) {
		s->st.challenge_acks_limited++;
		return;
	}
	s->chack_count++;
	s->st.challenge_acks++;
	tcp_out_ack(c, now_us);
}

/**
 * tcp_out_rst_reply() - answer a segment no connection wants (RFC 9293 3.10.7.1)
 * @s: the stack
 * @seg: the segment (not a RST)
 */
void tcp_out_rst_reply(struct tcp_stack *s, const struct tcp_seg_in *seg)
{
	struct tcp_endpoint l = { .addr = seg->dst, .port = seg->dport };
	struct tcp_endpoint r = { .addr = seg->src, .port = seg->sport };
	struct tcp_seg_out o;

	if (seg->flags & TCP_RST)
		return;
	tcp_out_fill(s, &o, &l, &r);
	if (seg->flags & TCP_ACK) {
		o.seq = seg->ack;
		o.flags = TCP_RST;
	} else {
		o.seq = 0;
		o.ack = seg->seq + (uint32_t)seg->len + !!(seg->flags & TCP_SYN) + !!(seg->flags & TCP_FIN);
		o.flags = TCP_RST | TCP_ACK;
	}
	tcp_out_call(s, &o);
}

/**
 * tcp_out_syn_raw() - a bare SYN without a connection (tcp_reset_probe())
 * @s: the stack
 * @l: our end
 * @r: the peer's
 * @seq: its sequence number
 */
void tcp_out_syn_raw(struct tcp_stack *s, const struct tcp_endpoint *l, const struct tcp_endpoint *r, uint32_t seq)
{
	struct tcp_seg_out out;

	tcp_out_fill(s, &out, l, r);
	out.seq = seq;
	out.flags = TCP_SYN;
	out.wnd = 0;
	tcp_out_call(s, &out);
}

/**
 * tcp_out_synack_raw() - a SYN-ACK without a connection (SYN cookies)
 * @s: the stack
 * @syn: the SYN answered
 * @o: options to send
 * @iss: our sequence number (the cookie)
 * @wnd: the window
 */
void tcp_out_synack_raw(struct tcp_stack *s, const struct tcp_seg_in *syn, const struct tcp_opts *o,
			uint32_t iss, uint16_t wnd)
{
	struct tcp_endpoint l = { .addr = syn->dst, .port = syn->dport };
	struct tcp_endpoint r = { .addr = syn->src, .port = syn->sport };
	struct tcp_seg_out out;

	tcp_out_fill(s, &out, &l, &r);
	out.seq = iss;
	out.ack = syn->seq + 1;
	out.flags = TCP_SYN | TCP_ACK;
	out.wnd = wnd;
	out.opts = *o;
	tcp_out_call(s, &out);
}

/**
 * tcp_out_retransmit() - resend at most @max_len bytes from @seq
 * @c: the connection
 * @seq: where (at or above snd_una)
 * @max_len: at most this much payload (callers pass the MSS)
 * @now_us: the time
 *
 * Resends the SYN or SYN-ACK when @seq is the ISS, the FIN when @seq is the
 * end of the data and the FIN was sent.
 *
 * Return: sequence space covered, 0 when nothing was there.
 */
int tcp_out_retransmit(struct tcp_conn *c, uint32_t seq, uint32_t max_len, uint64_t now_us)
{
	uint32_t data_end = c->snd_buf_seq + c->snd.len, len = 0;
	uint8_t flags = 0;

	if (c->state == TCPS_SYN_SENT || c->state == TCPS_SYN_RECEIVED) {
		c->stats.retrans_segs++;
		c->stack->st.retrans_segs++;
		c->rtt_timing = false;
		tcp_out_send(c, c->iss, TCP_SYN, 0, now_us);
		return 1;
	}
	if (seq_lt(seq, data_end)) {
		len = data_end - seq;
		if (len > max_len)
			len = max_len;
	}
	if (c->fin_sent && seq + len == data_end && seq_lt(data_end, c->snd_max))
		flags |= TCP_FIN;
	if (!len && !flags)
		return 0;
	if (len && seq + len == data_end)
		flags |= TCP_PSH;
	c->stats.retrans_segs++;
	c->stack->st.retrans_segs++;
	c->rtt_timing = false;	/* Karn */
	tcp_undo_retransmitted(c, seq, seq + len + !!(flags & TCP_FIN), now_us);
	tcp_out_send(c, seq, flags, len, now_us);
	return (int)(len + !!(flags & TCP_FIN));
}

/*
 * Sending starts again with nothing in flight. The controller hears it
 * (on_tx_start: BBR paces at its estimate after idle). RFC 5681 4.1: after
 * an idle period longer than the RTO (nothing in flight, nothing sent), cwnd
 * no longer reflects the path: restart from min(IW, cwnd). As in Linux,
 * ssthresh keeps 3/4 of the old cwnd so that slow start finds the old rate
 * again quickly, and CUBIC starts a new epoch; a controller with a model of
 * the path (cong_control) does not restart. (RFC 7661's part, not growing
 * cwnd while application-limited, is cwnd_limited.)
 */
static void tcp_out_idle_restart(struct tcp_conn *c, uint64_t now_us)
{
	uint32_t keep;

	if (c->snd_una != c->snd_max || !seq_lt(c->snd_nxt, c->snd_buf_seq + c->snd.len))
		return;
	if (c->cc->on_tx_start)
		c->cc->on_tx_start(c, now_us);	/* sending starts with nothing in flight */
	/* a model of the path (BBR) knows its rate after idle: no restart */
	if (c->cc->cong_control || !c->last_data_us || now_us - c->last_data_us <= c->rto_us ||
	    c->cwnd <= TCP_INIT_CWND)
		return;
	keep = c->cwnd - c->cwnd / 4;
	if (c->ssthresh < keep)
		c->ssthresh = keep;
	c->cwnd = TCP_INIT_CWND;
	c->cwnd_acc = 0;
	c->cubic_epoch_us = 0;
	c->idle_restarts++;
}

static bool tcp_out_can_send_data(const struct tcp_conn *c)
{
	switch (c->state) {
	case TCPS_ESTABLISHED:
	case TCPS_CLOSE_WAIT:
	case TCPS_FIN_WAIT_1:
	case TCPS_CLOSING:
	case TCPS_LAST_ACK:
		return true;
	default:
		return false;
	}
}

/**
 * tcp_out_push() - send what cwnd, the peer window and the data allow
 * @c: the connection
 * @now_us: the time
 *
 * Also sends a pending immediate ACK if no data segment carried it, and arms
 * the persist timer when data waits on a zero window.
 */
void tcp_out_push(struct tcp_conn *c, uint64_t now_us)
{
	bool sent = false;

	if (!tcp_out_can_send_data(c)) {
		if (c->ack_now)
			tcp_out_ack(c, now_us);
		return;
	}
	tcp_out_idle_restart(c, now_us);
	for (;;) {
		uint32_t pipe = tcp_sack_pipe(c), budget, data_end, avail, wnd_end, usable, len, s, l;
		uint64_t cwnd_bytes = (uint64_t)c->cwnd * c->snd_mss;
		bool fin;

		if (tcp_pace_wait(c, now_us))
			break;	/* the pacing timer sends the rest (tcp_pace.c) */
		if (c->in_recovery && !c->cc->cong_control) {
			/* PRR decides, not cwnd (tcp_recovery.c); a model (BBR) sets cwnd itself */
			if (!c->prr_budget)
				break;
			budget = c->prr_budget > c->snd_mss ? c->prr_budget : c->snd_mss;
		} else if (pipe >= cwnd_bytes) {
			break;
		} else {
			budget = cwnd_bytes - pipe > UINT32_MAX ? UINT32_MAX : (uint32_t)(cwnd_bytes - pipe);
		}
		if (tcp_sack_next_lost(c, &s, &l)) {
			int n = tcp_out_retransmit(c, s, l < c->snd_mss ? l : c->snd_mss, now_us);

			if (n <= 0)
				break;
			c->high_rxt = s + (uint32_t)n;
			c->rxt_mark = c->snd_max;
			tcp_recovery_sent(c, (uint32_t)n);
			tcp_pace_sent(c, (uint32_t)n, now_us);
			sent = true;
			continue;
		}
		data_end = c->snd_buf_seq + c->snd.len;
		avail = seq_gt(data_end, c->snd_nxt) ? data_end - c->snd_nxt : 0;
		wnd_end = c->snd_una + c->snd_wnd;
		usable = seq_gt(wnd_end, c->snd_nxt) ? wnd_end - c->snd_nxt : 0;
		len = avail < usable ? avail : usable;
		if (len > tcp_pace_quantum(c))
			len = tcp_pace_quantum(c);
		if (len > budget)
			len = budget >= c->snd_mss ? budget : (avail <= budget ? avail : 0);
		if (len > c->snd_mss && len < avail)
			len -= len % c->snd_mss;
		if (c->ecn_cwr_pending && len > c->snd_mss)
			len = c->snd_mss;	/* CWR leaves on one segment, not on every one of a GSO frame */
		fin = c->fin_queued && !c->fin_sent && len == avail;
		if (!len && !fin)
			break;
		if (len && len < c->snd_mss) {
			if (len < avail) {
				/* RFC 9293 3.8.6.2.1: no small window-limited segments */
				if (len < c->max_snd_wnd / 2 || c->snd_una != c->snd_max)
					break;
			} else if (c->opts.nagle && c->snd_una != c->snd_max && !fin) {
				break;
			}
		}
		tcp_out_send(c, c->snd_nxt, (len && len == avail ? TCP_PSH : 0) | (fin ? TCP_FIN : 0), len, now_us);
		c->snd_nxt += len + fin;
		if (fin)
			c->fin_sent = true;
		tcp_recovery_sent(c, len + fin);
		tcp_pace_sent(c, len, now_us);
		sent = true;
	}
	if (!sent && c->ack_now)
		tcp_out_ack(c, now_us);
	{
		/* grow cwnd only when it limits us; in slow start when half used */
		uint32_t pipe = tcp_sack_pipe(c), data_end = c->snd_buf_seq + c->snd.len;
		uint64_t cwnd_bytes = (uint64_t)c->cwnd * c->snd_mss;

		c->cwnd_limited = pipe + c->snd_mss > cwnd_bytes || (c->cwnd < c->ssthresh && 2 * (uint64_t)pipe >= cwnd_bytes);
		tcp_rate_check_app_limited(c, seq_gt(data_end, c->snd_nxt) ? data_end - c->snd_nxt : 0, pipe);
	}
	/* persist: data waits (window or SWS limited) with nothing in flight */
	if (c->snd_una == c->snd_max && seq_lt(c->snd_nxt, c->snd_buf_seq + c->snd.len))
		tcp_timer_persist_arm(c, now_us);
}
