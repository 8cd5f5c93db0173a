// SPDX-License-Identifier: MIT
/*
 * tcp_open.c - a connection opens: the end of the three-way handshake on
 * both sides (RFC 9293 3.5, 3.10.7.3, 3.10.7.4 step 5 in SYN-RECEIVED)
 *
 * Theory of operation
 *
 * An active open waits in SYN-SENT for the peer's SYN-ACK
 * (tcp_open_syn_sent()): an ACK outside (ISS, SND.MAX] is answered with a
 * RST, and a bare one is taken for a challenge ACK from an old TIME-WAIT
 * on the 4-tuple (RFC 5961 4), after which the SYN goes again at once, once;
 * a RST with an acceptable ACK refuses the connection (ECONNREFUSED); a SYN
 * with one establishes it, a SYN without one is a simultaneous open
 * (SYN-RECEIVED, RFC 9293 3.5 figure 8).
 *
 * A passive open (tcp_synq.c makes the SYN-RECEIVED connection, or the
 * connection from a SYN cookie) and a simultaneous one end with the ACK of
 * our SYN (tcp_open_syn_rcvd_ack()): unacceptable, a RST; acceptable, the
 * connection is ESTABLISHED and, when nobody holds it yet, offered to its
 * listener's accept callback (tcp_open_accept(); a refusal resets it).
 *
 * On the way, tcp_open_negotiate() takes what the peer's SYN offers: its
 * ISN, MSS (RFC 9293 3.7.1 defaults without the option), window scale and
 * SACK (RFC 7323, RFC 2018, only when we offered them too), timestamps, ECN
 * (tcp_ecn.c), and its unscaled window; tcp_open_established() starts the
 * sending side: the controller's initial window, the keepalive timer.
 *
 * This file is called by tcp_in.c and tcp_synq.c and calls neither: the SYN
 * backlog and the cookies are tcp_synq.c's, every later segment tcp_in.c's.
 */
#include <sys/socket.h>

#include "datapath/tcp/tcp_int.h"

/**
 * tcp_open_negotiate() - take the peer's SYN options (RFC 7323, RFC 2018)
 * @c: the connection; ws_ok/sack_ok/ts_ok say what we offer
 * @syn: the SYN or SYN-ACK
 */
void tcp_open_negotiate(struct tcp_conn *c, const struct tcp_seg_in *syn)
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
 * tcp_open_established() - the handshake completed: start sending
 * @c: the connection
 * @now_us: the time
 */
void tcp_open_established(struct tcp_conn *c, uint64_t now_us)
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
 * tcp_open_accept() - hand a passively opened connection to its listener
 * @c: the connection, just ESTABLISHED
 * @l: the listener
 * @now_us: the time
 *
 * Return: 0, or negative when the service refused it (the connection was
 * reset).
 */
int tcp_open_accept(struct tcp_conn *c, struct tcp_listener *l, uint64_t now_us)
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

/**
 * tcp_open_syn_sent() - RFC 9293 3.10.7.3: a segment for a SYN-SENT connection
 * @c: the connection, SYN-SENT
 * @seg: the segment
 * @now_us: the time
 */
void tcp_open_syn_sent(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
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
	tcp_open_negotiate(c, seg);
	if (ack_ok) {
		c->snd_una = seg->ack;
		if (c->ts_ok && seg->opts.ts_ecr && c->retries == 0)
			tcp_ack_ts_rtt(c, seg, now_us);
		else if (c->retries == 0)
			tcp_ack_rtt_sample(c, (uint32_t)(now_us - (c->t_rtx_us - c->rto_us)));
		tcp_open_established(c, now_us);
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

/**
 * tcp_open_syn_rcvd_ack() - RFC 9293 3.10.7.4 step 5 in SYN-RECEIVED: the
 * ACK that completes a passive (or simultaneous) open
 * @c: the connection, SYN-RECEIVED
 * @seg: the segment, acceptable so far, with ACK set
 * @now_us: the time
 *
 * Return: false when the segment must be dropped (or the connection closed).
 */
bool tcp_open_syn_rcvd_ack(struct tcp_conn *c, const struct tcp_seg_in *seg, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	uint32_t wnd = (uint32_t)seg->wnd << c->snd_wscale;
	struct tcp_listener *l = c->listener;

	if (!seq_gt(seg->ack, c->snd_una) || seq_gt(seg->ack, c->snd_max)) {
		s->st.drop_bad_ack++;
		tcp_out_rst_reply(s, seg);
		return false;
	}
	c->snd_una = seg->ack;
	if (c->ts_ok && seg->opts.has_ts && seg->opts.ts_ecr && c->retries == 0)
		tcp_ack_ts_rtt(c, seg, now_us);
	tcp_open_established(c, now_us);
	c->snd_wnd = wnd;
	c->max_snd_wnd = wnd;
	c->snd_wl1 = seg->seq;
	c->snd_wl2 = seg->ack;
	if (c->syn_owned) {
		tcp_conn_event(c, TCP_EV_CONNECTED, 0);
	} else if (c->passive) {
		if (!l || tcp_open_accept(c, l, now_us) < 0) {
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
