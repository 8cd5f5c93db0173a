// SPDX-License-Identifier: MIT
/*
 * tcp_socket.c - what a service does with a connection (tcp.h's socket
 * calls): open one, set who hears its events, shut down, close, abort, and
 * the catch-all's answer or refusal of a SYN it held; and what the IP layer
 * reports about one (ICMP errors), and what `datapath stats` shows of it
 *
 * Sending and receiving bytes are tcp_buf.c's (tcp_send(), tcp_recv(),
 * tcp_peek(), tcp_consume()).
 */
#include <errno.h>

#include "datapath/tcp/tcp_int.h"

/**
 * tcp_stack_set_port_filter() - a test every ephemeral port must pass
 * @s:		the stack
 * @fn:		true when a port may be used, or NULL for any free one
 * @ctx:	its first argument
 *
 * A datapath in shards picks only ports whose flow the kernel steers back
 * to the shard that picks them (stack_owns_flow()).
 */
void tcp_stack_set_port_filter(struct tcp_stack *s, tcp_port_ok_fn fn, void *ctx)
{
	s->port_ok = fn;
	s->port_ok_ctx = ctx;
}

static int tcp_pick_port(struct tcp_stack *s, struct tcp_endpoint *l, const struct tcp_endpoint *r)
{
	unsigned int i;

	for (i = 0; i < 28232; i++) {
		l->port = s->next_port++;
		if (s->next_port > 60999)
			s->next_port = 32768;
		if (s->port_ok && !s->port_ok(s->port_ok_ctx, l, r))
			continue;
		if (!tcp_conn_lookup(s, l, r) && tcp_listener_lookup(s, l) == s->catch_all)
			return 0;	/* the catch-all takes any port: it reserves none */
	}
	return -EADDRNOTAVAIL;
}

/**
 * tcp_connect() - active open: send a SYN to @remote
 * @s: the stack
 * @local: local address; port 0 picks an ephemeral port
 * @remote: the peer
 * @opts: settings (NULL = defaults)
 * @ev: event function (TCP_EV_CONNECTED, or TCP_EV_RESET with
 *	-ECONNREFUSED/-ETIMEDOUT)
 * @user: passed to @ev
 * @now_us: the time
 * @out: the connection, owned by the caller until tcp_close()
 *
 * Return: 0, -EINVAL, -EADDRINUSE (tuple taken), -EADDRNOTAVAIL, -ENOMEM,
 * -EAGAIN (too many connections).
 */
int tcp_connect(struct tcp_stack *s, const struct tcp_endpoint *local, const struct tcp_endpoint *remote,
		const struct tcp_conn_opts *opts, tcp_event_fn ev, void *user, uint64_t now_us,
		struct tcp_conn **out)
{
	struct tcp_endpoint l = *local;
	struct tcp_conn *c;
	int ret;

	if ((l.addr.family != AF_INET && l.addr.family != AF_INET6) || l.addr.family != remote->addr.family ||
	    !remote->port)
		return -EINVAL;
	if (!l.port) {
		ret = tcp_pick_port(s, &l, remote);
		if (ret)
			return ret;
	} else if (tcp_conn_lookup(s, &l, remote)) {
		return -EADDRINUSE;
	}
	c = tcp_conn_new(s, &l, remote, opts);
	if (!c)
		return errno == EAGAIN ? -EAGAIN : -ENOMEM;
	tcp_conn_enter(s);
	c->ev = ev;
	c->user = user;
	c->user_holds = true;
	c->iss = tcp_conn_isn(s, &l, remote, now_us);
	c->snd_una = c->snd_nxt = c->snd_max = c->iss;
	c->sack_ok = !c->opts.no_sack;
	c->ts_ok = !c->opts.no_ts;
	c->ws_ok = !c->opts.no_wscale;
	c->rcv_wscale = c->ws_ok ? tcp_buf_wscale_for(c->rcvbuf_max) : 0;
	tcp_conn_set_state(c, TCPS_SYN_SENT, now_us);
	tcp_out_emit(c, c->iss, TCP_SYN, 0, now_us);
	tcp_timer_rtx_arm(c, now_us);
	*out = c;
	tcp_conn_leave(s);
	return 0;
}

/**
 * tcp_conn_set_user() - set the event function and user pointer
 * @c: the connection
 * @ev: event function
 * @user: passed to @ev (and to the sink)
 *
 * A sink belongs to the user it was set for: a new user has none until
 * tcp_conn_set_sink(), and its ACKs do not wait (tcp_conn_ack_at_push()).
 */
void tcp_conn_set_user(struct tcp_conn *c, tcp_event_fn ev, void *user)
{
	c->ev = ev;
	c->user = user;
	c->sink = NULL;
	c->ack_at_push = false;
}

/**
 * tcp_conn_set_sink() - take in-order bytes as they arrive (tcp_sink_fn)
 * @c: the connection
 * @sink: called with the user pointer of tcp_conn_set_user(); NULL: none,
 *	every byte waits in the receive ring for tcp_peek()/tcp_recv()
 */
void tcp_conn_set_sink(struct tcp_conn *c, tcp_sink_fn sink)
{
	c->sink = sink;
}

/**
 * tcp_conn_ack_at_push() - let ACKs for what the sink took wait for tcp_push()
 * @c: the connection
 *
 * For an owner that calls tcp_push() on @c at the end of every turn in
 * which its sink took bytes: the ACK then leaves once for all of them, not
 * once a segment. It still leaves at once where it must (out of order
 * data, half the offered window consumed, see tcp_in.c), and the
 * delayed-ACK timer sends it if no push comes.
 */
void tcp_conn_ack_at_push(struct tcp_conn *c)
{
	c->ack_at_push = true;
}

/**
 * tcp_conn_state() - the state of a connection
 * @c: the connection
 *
 * Return: its state.
 */
enum tcp_state tcp_conn_state(const struct tcp_conn *c)
{
	return c->state;
}

/**
 * tcp_shutdown_write() - half-close: send FIN after the buffered data
 * @c: the connection
 * @now_us: the time
 *
 * Return: 0, or -ENOTCONN when the connection cannot send any more.
 */
int tcp_shutdown_write(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;

	switch (c->state) {
	case TCPS_SYN_SENT:
	case TCPS_SYN_RECEIVED:
	case TCPS_ESTABLISHED:
	case TCPS_CLOSE_WAIT:
		break;
	default:
		return c->fin_queued ? 0 : -ENOTCONN;
	}
	if (c->fin_queued)
		return 0;
	tcp_conn_enter(s);
	c->fin_queued = true;
	if (c->state == TCPS_ESTABLISHED)
		tcp_conn_set_state(c, TCPS_FIN_WAIT_1, now_us);
	else if (c->state == TCPS_CLOSE_WAIT)
		tcp_conn_set_state(c, TCPS_LAST_ACK, now_us);
	/* SYN states: the FIN goes once established (RFC 9293 3.10.4) */
	if (c->state != TCPS_SYN_SENT && c->state != TCPS_SYN_RECEIVED)
		tcp_out_push(c, now_us);
	tcp_conn_leave(s);
	return 0;
}

/**
 * tcp_close() - the service lets go of the connection
 * @c: the connection; do not use it afterwards
 * @now_us: the time
 *
 * Sends FIN after the buffered data (graceful close), or RST when received
 * data was left unread (RFC 2525 2.17). The engine finishes the close alone.
 */
void tcp_close(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;

	tcp_conn_enter(s);
	c->user_holds = false;
	switch (c->state) {
	case TCPS_SYN_SENT:
		tcp_conn_set_state(c, TCPS_CLOSED, now_us);
		break;
	case TCPS_SYN_RECEIVED:
	case TCPS_ESTABLISHED:
	case TCPS_CLOSE_WAIT:
		if (c->rcv.len || c->ooo.n) {
			tcp_out_rst(c, now_us);
			tcp_conn_set_state(c, TCPS_CLOSED, now_us);
			break;
		}
		tcp_shutdown_write(c, now_us);
		break;
	case TCPS_FIN_WAIT_2:
		if (c->t_close_us == TCP_NO_DEADLINE) {
			c->t_close_us = now_us + TCP_FIN_WAIT2_US;
			tcp_timer_update(c);
		}
		break;
	case TCPS_TIME_WAIT:
		tcp_buf_release(c);
		break;
	default:
		break;
	}
	tcp_conn_maybe_reap(c);
	tcp_conn_leave(s);
}

/**
 * tcp_abort() - reset the connection and let go of it
 * @c: the connection; do not use it afterwards
 * @now_us: the time
 */
void tcp_abort(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;

	tcp_conn_enter(s);
	c->user_holds = false;
	switch (c->state) {
	case TCPS_SYN_RECEIVED:
	case TCPS_ESTABLISHED:
	case TCPS_FIN_WAIT_1:
	case TCPS_FIN_WAIT_2:
	case TCPS_CLOSE_WAIT:
		tcp_out_rst(c, now_us);
		break;
	default:
		break;
	}
	tcp_conn_set_state(c, TCPS_CLOSED, now_us);
	tcp_conn_maybe_reap(c);
	tcp_conn_leave(s);
}

/**
 * tcp_conn_answer() - send the SYN-ACK a catch-all's connection held back
 * @c: a connection tcp_syn_fn got, still unanswered
 * @now_us: the time
 *
 * The handshake then goes on as for any passive open (the SYN-ACK is
 * retransmitted, TCP_EV_CONNECTED when the peer's ACK arrives).
 *
 * Return: 0, or -EINVAL when @c is not waiting for an answer.
 */
int tcp_conn_answer(struct tcp_conn *c, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;

	if (!c->deferred || c->state != TCPS_SYN_RECEIVED)
		return -EINVAL;
	tcp_conn_enter(s);
	c->deferred = false;
	tcp_out_emit(c, c->iss, TCP_SYN, 0, now_us);
	tcp_conn_leave(s);
	return 0;
}

/**
 * tcp_conn_set_path() - the settings of a catch-all's connection for its path
 * @c: a connection tcp_syn_fn got, still unanswered
 * @o: its settings: mss (the largest on-wire payload we take, the SYN-ACK's
 *     MSS option), gso_max_bytes (the largest payload of one emitted
 *     segment), the congestion control, the ECN mode and pacing
 *
 * A catch-all serves every destination, so its settings may differ per
 * connection (the route, the family, the link): they are set here, before
 * the answer. ECN is used when the SYN asked and @o's mode is not off.
 *
 * Return: 0, or -EINVAL when @c is not waiting for an answer.
 */
int tcp_conn_set_path(struct tcp_conn *c, const struct tcp_conn_opts *o)
{
	uint16_t mss = o->mss;
	uint32_t gso_max_bytes = o->gso_max_bytes;
	int snd;

	if (!c->deferred || mss < TCP_MIN_MSS)
		return -EINVAL;
	c->opts.mss = mss;
	c->opts.gso_max_bytes = gso_max_bytes;
	c->opts.cc = o->cc;
	c->cc = tcp_cc_ops_of(o->cc);	/* it starts when the handshake completes */
	c->opts.ecn = o->ecn;
	c->ecn_ok = c->ecn_peer_asked && o->ecn != TCP_ECN_OFF;
	c->opts.no_pacing = o->no_pacing;
	snd = c->peer_mss < mss ? c->peer_mss : mss;
	if (c->ts_ok)
		snd -= TCP_TS_OPT_BYTES;
	c->snd_mss = (uint16_t)snd;
	c->rcv_mss = c->snd_mss;
	c->gso_max_bytes = gso_max_bytes < c->snd_mss ? c->snd_mss : gso_max_bytes;
	return 0;
}

/**
 * tcp_conn_refuse() - turn down a catch-all's connection and let go of it
 * @c: a connection tcp_syn_fn got; do not use it afterwards
 * @rst: answer the SYN with a RST (the peer's connect() sees ECONNREFUSED);
 *	 else say nothing (it retransmits, then times out)
 * @now_us: the time
 */
void tcp_conn_refuse(struct tcp_conn *c, bool rst, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;

	tcp_conn_enter(s);
	c->user_holds = false;
	if (rst && c->state == TCPS_SYN_RECEIVED)
		tcp_out_rst(c, now_us);	/* <SEQ=ISS><ACK=IRS+1><CTL=RST,ACK> */
	tcp_conn_set_state(c, TCPS_CLOSED, now_us);
	tcp_conn_maybe_reap(c);
	tcp_conn_leave(s);
}

/**
 * tcp_icmp_error() - an ICMP error that quotes a segment of @local -> @remote
 * @s: the stack
 * @local: our end as the quote names it
 * @remote: the peer's
 * @seq: the quoted sequence number
 * @err: the errno it means (tcp_icmp_errno(): -EHOSTUNREACH, ...)
 * @now_us: the time
 *
 * A connection attempt (SYN-SENT) whose SYN the quote carries ends with
 * @err, as Linux's tcp_v4_err() ends it; an established connection takes
 * destination unreachable as a soft error (RFC 1122 4.2.3.9) and ignores it.
 *
 * Return: 0 when a connection was ended, -ENOENT otherwise.
 */
int tcp_icmp_error(struct tcp_stack *s, const struct tcp_endpoint *local, const struct tcp_endpoint *remote,
		   uint32_t seq, int err, uint64_t now_us)
{
	struct tcp_conn *c = tcp_conn_lookup(s, local, remote);
	int ret = -ENOENT;

	if (!c || c->state != TCPS_SYN_SENT || seq != c->iss || err >= 0)
		return ret;
	tcp_conn_enter(s);
	s->st.icmp_aborts++;
	tcp_conn_drop(c, err, now_us);
	tcp_conn_leave(s);
	return 0;
}

/**
 * tcp_conn_endpoints() - the two ends of a connection
 * @c: the connection
 * @local: our end
 * @remote: the peer's
 */
void tcp_conn_endpoints(const struct tcp_conn *c, struct tcp_endpoint *local, struct tcp_endpoint *remote)
{
	*local = c->local;
	*remote = c->remote;
}

/**
 * tcp_conn_info() - fill what `ss -ti` shows
 * @c: the connection
 * @out: the result
 */
void tcp_conn_info(const struct tcp_conn *c, struct tcp_conn_info *out)
{
	memset(out, 0, sizeof(*out));
	out->state = c->state;
	out->local = c->local;
	out->remote = c->remote;
	out->cc = c->cc->name;
	out->snd_mss = c->snd_mss;
	out->rcv_mss = c->rcv_mss;
	out->cwnd = c->cwnd;
	out->ssthresh = c->ssthresh;
	out->srtt_us = c->srtt_us;
	out->rttvar_us = c->rttvar_us;
	out->rto_us = c->rto_us;
	out->snd_wnd = c->snd_wnd;
	out->rcv_wnd = tcp_buf_rcv_wnd(c);
	out->snd_wscale = c->snd_wscale;
	out->rcv_wscale = c->rcv_wscale;
	out->sack = c->sack_ok;
	out->ts = c->ts_ok;
	out->stats = c->stats;
	out->rack_reo_wnd_us = c->rack_reo_wnd_us;
	out->rack_marked = c->rack_marked;
	out->dsacks_rx = c->dsacks_rx;
	out->undos = c->undos;
	out->tlp_recoveries = c->tlp_recoveries;
	out->unacked_bytes = c->snd_max - c->snd_una;
	out->sndbuf_used = c->snd.len;
	out->sndbuf_cap = c->snd.cap;
	out->sndbuf_held = c->snd.buf ? c->snd.cap : 0;
	out->rcvbuf_used = c->rcv.len;
	out->rcvbuf_cap = c->rcv.cap;
	out->rcvbuf_held = c->rcv.buf ? c->rcv.cap : 0;
	out->ooo_bytes = tcp_ooo_bytes(c);
	out->records_held = c->rack_cap * (uint32_t)sizeof(*c->rack_segs);
	out->iss = c->iss;
	out->irs = c->irs;
	out->deferred = c->deferred;
	out->cong_state = (uint8_t)tcp_cong_state(c);
	out->pipe = tcp_sack_pipe(c);
	out->sacked_bytes = tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_max);
	out->lost_bytes = c->rack_lost_bytes;
	out->min_rtt_us = c->rack_min_rtt_us;
	out->delivered = c->delivered;
	out->delivery_rate = tcp_rate_delivery_bps(c);
	out->pacing_rate = c->pacing_rate;
	out->app_limited = c->app_limited != 0;
	out->ecn = c->ecn_ok;
	out->ce_rcvd = c->ce_rcvd;
	out->ece_rcvd = c->ece_rcvd;
	out->ecn_reductions = c->ecn_reductions;
	if (c->cc->get_info) {
		struct tcp_cc_info ci;

		c->cc->get_info(c, &ci);
		out->cc_mode = ci.mode;
		out->cc_bw = ci.bw;
	}
}
