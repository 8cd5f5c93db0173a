// SPDX-License-Identifier: MIT
/*
 * tcp_trace.c - per-ACK samples of chosen connections' sender state, the
 * engine's side of `datapath ss --trace`
 *
 * Theory of operation
 *
 * A trace is a filter (an address, a port, or both, matched against
 * either end of a connection) and a callback. tcp_stack_set_trace() marks
 * every connection that matches (c->traced) and every new one that will
 * (tcp_trace_conn_new(), from tcp_conn_new()); the engine then calls the
 * callback with a struct tcp_trace_sample after every ACK such a
 * connection processes and at its timer events (RTO, tail loss probe,
 * RACK's reordering timer) and ECN reductions: cwnd, ssthresh, what is in
 * flight, SACKed and lost, the RTT state and this ACK's sample, the
 * delivery and pacing rates, the controller's own state. An untraced
 * connection pays one test of a flag per event.
 *
 * What becomes of the samples is the caller's (the datapath queues them
 * for the control socket, net/tcp_glue.c); the callback runs on the
 * engine's thread, in the middle of its work, and must neither block nor
 * call back into the engine.
 */
#include "datapath/tcp/tcp_int.h"

static const char *const tcp_trace_event_names[] = {
	[TCP_TRACE_ACK] = "ack",
	[TCP_TRACE_RTO] = "rto",
	[TCP_TRACE_TLP] = "tlp",
	[TCP_TRACE_RACK] = "rack_timer",
	[TCP_TRACE_ECE] = "ece",
};
_Static_assert(sizeof(tcp_trace_event_names) / sizeof(tcp_trace_event_names[0]) == TCP_TRACE_EVENT_MAX,
	       "trace event names");

static const char *const tcp_cong_state_names[] = {
	[TCP_CONG_OPEN] = "open",
	[TCP_CONG_RECOVERY] = "recovery",
	[TCP_CONG_LOSS] = "loss",
};
_Static_assert(sizeof(tcp_cong_state_names) / sizeof(tcp_cong_state_names[0]) == TCP_CONG_STATE_MAX,
	       "ca state names");

/**
 * tcp_trace_event_name() - the name of a trace event
 * @ev: the event
 *
 * Return: its name, "?" when out of range.
 */
const char *tcp_trace_event_name(enum tcp_trace_event ev)
{
	return (unsigned int)ev < TCP_TRACE_EVENT_MAX ? tcp_trace_event_names[ev] : "?";
}

/**
 * tcp_cong_state_name() - the name of a congestion state
 * @st: the state
 *
 * Return: its name, "?" when out of range.
 */
const char *tcp_cong_state_name(enum tcp_cong_state st)
{
	return (unsigned int)st < TCP_CONG_STATE_MAX ? tcp_cong_state_names[st] : "?";
}

/**
 * tcp_cong_state() - where the connection is in repairing losses
 * @c: the connection
 *
 * Return: enum tcp_cong_state.
 */
enum tcp_cong_state tcp_cong_state(const struct tcp_conn *c)
{
	if (c->in_recovery)
		return TCP_CONG_RECOVERY;
	if (c->after_rto)
		return TCP_CONG_LOSS;
	return TCP_CONG_OPEN;
}

static bool tcp_trace_end_matches(const struct tcp_trace_filter *f, const struct tcp_endpoint *e)
{
	if (f->port && e->port != f->port)
		return false;
	return f->any_addr || tcp_addr_eq(&f->addr, &e->addr);
}

static bool tcp_trace_matches(const struct tcp_stack *s, const struct tcp_conn *c)
{
	return s->trace_fn &&
	       (tcp_trace_end_matches(&s->trace_filter, &c->local) || tcp_trace_end_matches(&s->trace_filter, &c->remote));
}

/**
 * tcp_stack_set_trace() - follow the connections @f matches
 * @s: the stack
 * @f: the filter, or NULL to stop tracing
 * @fn: the callback for every sample (ignored when @f is NULL)
 * @ctx: for @fn
 *
 * Return: 0, or -EINVAL for a filter without a callback.
 */
int tcp_stack_set_trace(struct tcp_stack *s, const struct tcp_trace_filter *f, tcp_trace_fn fn, void *ctx)
{
	struct tcp_conn *c;

	if (f && !fn)
		return -EINVAL;
	if (f) {
		s->trace_filter = *f;
		s->trace_fn = fn;
		s->trace_ctx = ctx;
	} else {
		memset(&s->trace_filter, 0, sizeof(s->trace_filter));
		s->trace_fn = NULL;
		s->trace_ctx = NULL;
	}
	for (c = s->all; c; c = c->all_next)
		c->traced = tcp_trace_matches(s, c);
	return 0;
}

/**
 * tcp_trace_conn_new() - a new connection: is it traced?
 * @c: the connection, its endpoints set
 */
void tcp_trace_conn_new(struct tcp_conn *c)
{
	c->traced = tcp_trace_matches(c->stack, c);
}

/**
 * tcp_trace_emit() - a sample of a traced connection (no-op for others)
 * @c: the connection
 * @ev: what happened
 * @now_us: the time
 */
void tcp_trace_emit(struct tcp_conn *c, enum tcp_trace_event ev, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	struct tcp_trace_sample t;
	struct tcp_cc_info ci;

	if (!c->traced || !s->trace_fn)
		return;
	memset(&t, 0, sizeof(t));
	t.t_us = now_us;
	t.local = c->local;
	t.remote = c->remote;
	t.event = (uint8_t)ev;
	t.cong_state = (uint8_t)tcp_cong_state(c);
	t.app_limited = c->app_limited != 0;
	t.snd_una = c->snd_una - c->iss - 1;
	t.snd_nxt = c->snd_nxt - c->iss - 1;
	t.mss = c->snd_mss;
	t.cwnd = c->cwnd;
	t.ssthresh = c->ssthresh;
	t.pipe = tcp_sack_pipe(c);
	t.sacked = tcp_ranges_bytes(&c->sacked, c->snd_una, c->snd_max);
	t.lost = c->rack_lost_bytes;
	t.snd_wnd = c->snd_wnd;
	t.srtt_us = c->srtt_us;
	t.rttvar_us = c->rttvar_us;
	t.rto_us = c->rto_us;
	t.min_rtt_us = c->rack_min_rtt_us;
	t.rtt_us = ev == TCP_TRACE_ACK ? c->rs.rtt_us : -1;
	t.acked_sacked = ev == TCP_TRACE_ACK ? c->rs.acked_sacked : 0;
	t.delivered = c->delivered;
	if (ev == TCP_TRACE_ACK && c->rs.interval_us > 0)
		t.delivery_rate = c->rs.delivered * 1000000 / (uint64_t)c->rs.interval_us;
	t.pacing_rate = c->pacing_rate;
	t.retrans = c->stats.retrans_segs;
	t.rtos = c->stats.rto_count;
	t.recoveries = c->stats.fast_recoveries;
	if (c->cc->get_info) {
		c->cc->get_info(c, &ci);
		t.cc_mode = ci.mode;
		t.cc_bw = ci.bw;
	}
	s->trace_fn(s->trace_ctx, &t);
}
