// SPDX-License-Identifier: MIT
/*
 * tcp_glue.c - the adapter between an IP layer (the outer stack, or the
 * inner side above it) and a TCP engine of datapath/tcp/: the instance, its
 * clock and timer, and the settings of its connections
 *
 * Theory of operation
 *
 * The engine is a pure protocol machine (docs/tcp.md): it takes parsed
 * segments and the time, and emits segments through a callback. A struct
 * tcp_glue is everything around one engine; where its segments go is the
 * instance's struct tcp_glue_ops. Two instances run: the outer stack's
 * (st->tcp, tcp_outer.c: routed by longest prefix, resolved by ARP/NDP, out
 * of an AF_PACKET link) and the inner side's (straight into its TUN, with
 * its own struct tcp_glue_ops). The code is the same for both: segments come in through tcp_rx.c
 * and leave through tcp_emit.c.
 *
 * Time and timers. The engine's clock is the loop's, in microseconds (the
 * loop reads the clock once per turn). One precise loop timer stands for
 * every connection's timers: at the end of each turn it is armed for
 * tcp_next_deadline() to the microsecond (a pacing gap or RACK's reordering
 * window may be far below the wheel's 10 ms tick); when it fires,
 * tcp_timers_run() does the due work.
 *
 * Per connection, the MSS comes from the MTU of the link its segments leave
 * by (minus the IP and TCP headers) and the largest emitted payload
 * (gso_max_bytes) from the link's GSO mode (vnet_tcp_gso_bytes(),
 * docs/gso.md). The engine then emits segments of up to that size with
 * gso_size = its sending MSS (in-flight data and cwnd stay in bytes,
 * retransmissions stay one MSS); how such a segment leaves is tcp_emit.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/link/vnet.h"
#include "datapath/net/tcp_glue_int.h"

/**
 * tcp_glue_now_us() - the engines' clock: the loop's time in microseconds
 */
uint64_t tcp_glue_now_us(const struct stack *st)
{
	return loop_now_us(st->loop);
}

/**
 * tcp_glue_engine() - the engine of one instance
 */
struct tcp_stack *tcp_glue_engine(const struct tcp_glue *g)
{
	return g ? g->tcp : NULL;
}

/**
 * tcp_glue_stack() - the outer stack's engine (services open sockets on it)
 */
struct tcp_stack *tcp_glue_stack(const struct stack *st)
{
	return tcp_glue_engine(st->tcp);
}

/**
 * tcp_glue_counters() - the counters of one instance
 */
struct tcp_glue_counters *tcp_glue_counters(struct tcp_glue *g)
{
	return &g->c;
}

/**
 * tcp_glue_endpoint_str() - "10.0.0.1:80" or "[fd00::1]:80"
 * Return: @buf.
 */
const char *tcp_glue_endpoint_str(const struct tcp_endpoint *e, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(e->addr.family, e->addr.a.bytes, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, e->addr.family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, e->port);
	return buf;
}

/**
 * tcp_glue_conn_opts_link() - settings for a connection whose segments leave by @l
 * @l:		the link (NULL: MTU 1500, no GSO)
 * @family:	AF_INET or AF_INET6
 * @o:		result: MSS from the link's MTU, gso_max_bytes from its GSO mode
 */
void tcp_glue_conn_opts_link(const struct link *l, uint8_t family, struct tcp_conn_opts *o)
{
	uint32_t mtu = l ? l->mtu : 1500;
	uint32_t hdrs = (family == AF_INET6 ? IPV6_HLEN : IPV4_HLEN) + TCP_HLEN;
	uint32_t mss = mtu > hdrs + 88 ? mtu - hdrs : 88;
	uint32_t gso;

	memset(o, 0, sizeof(*o));
	o->mss = mss > 65495 ? 65495 : (uint16_t)mss;
	gso = vnet_tcp_gso_bytes(l, family, o->mss);
	o->gso_max_bytes = gso > o->mss ? gso : o->mss;
}

/*
 * --tcp-cc, --tcp-ecn, --tcp-pacing: the stack's own, or those given for
 * link @l by name (a listener, with no link: the stack's).
 */
static void tcp_glue_conn_settings(const struct stack *st, const struct link *l, struct tcp_conn_opts *o)
{
	const struct stack_tcp_settings *t = &st->tcp_settings;
	unsigned int i;

	o->cc = (enum tcp_cc_algo)t->cc;
	o->ecn = t->ecn;
	o->no_pacing = t->no_pacing;
	for (i = 0; l && i < t->n_links; i++) {
		if (strcmp(t->link[i].name, l->name))
			continue;
		if (t->link[i].cc >= 0)
			o->cc = (enum tcp_cc_algo)t->link[i].cc;
		if (t->link[i].ecn >= 0)
			o->ecn = (uint8_t)t->link[i].ecn;
	}
}

/**
 * tcp_glue_conn_opts() - settings for an outer connection of @family to @remote
 * @st:		stack
 * @family:	AF_INET or AF_INET6
 * @remote:	the peer, or NULL for a listener (then the smallest link MTU
 *		and the smallest GSO limit of all links)
 * @o:		result (tcp_glue_conn_opts_link() of the route's link)
 */
void tcp_glue_conn_opts(const struct stack *st, uint8_t family, const struct net_addr *remote,
			struct tcp_conn_opts *o)
{
	struct tcp_conn_opts each;
	unsigned int i;

	if (remote && remote->family == family) {
		const struct route *r = route_lookup(st, family, &remote->a);

		if (r && r->link) {
			tcp_glue_conn_opts_link(r->link, family, o);
			tcp_glue_conn_settings(st, r->link, o);
			return;
		}
	}
	tcp_glue_conn_opts_link(NULL, family, o);
	for (i = 0; i < st->n_links; i++) {
		tcp_glue_conn_opts_link(st->links[i], family, &each);
		if (i == 0 || each.mss < o->mss)
			o->mss = each.mss;
		if (i == 0 || each.gso_max_bytes < o->gso_max_bytes)
			o->gso_max_bytes = each.gso_max_bytes;
	}
	if (o->gso_max_bytes < o->mss)
		o->gso_max_bytes = o->mss;
	tcp_glue_conn_settings(st, NULL, o);
}

/**
 * tcp_glue_pick_src() - our address for a connection to @dst
 * Return: 0, or -ENETUNREACH / -EAFNOSUPPORT.
 */
int tcp_glue_pick_src(const struct stack *st, const struct net_addr *dst, struct net_addr *src)
{
	struct net_addr a = { .family = dst->family };
	int ret;

	if (dst->family == AF_INET)
		ret = ipv4_pick_src(st, dst->a.v4, &a.a.v4);
	else if (dst->family == AF_INET6)
		ret = ipv6_pick_src(st, NULL, &dst->a.v6, &a.a.v6);
	else
		return -EAFNOSUPPORT;
	if (ret < 0)
		return ret;
	*src = a;
	return 0;
}

static void tcp_glue_timer(struct loop_timer *t)
{
	struct tcp_glue *g = t->ctx;

	g->armed_us = UINT64_MAX;
	tcp_timers_run(g->tcp, tcp_glue_now_us(g->st));
}

/**
 * tcp_glue_turn_end() - the end of a loop turn, after the links were flushed
 * @g:		the instance
 * @quiet:	no link holds a frame with a borrowed tail any more
 *
 * Releases the engine's retired send memory once no frame borrows it and
 * arms the timer for the earliest deadline (stack_turn_end() calls it).
 */
void tcp_glue_turn_end(struct tcp_glue *g, bool quiet)
{
	struct stack *st = g->st;
	uint64_t next;

	if (quiet)
		tcp_stack_tx_done(g->tcp);
	next = tcp_next_deadline(g->tcp);
	if (next == UINT64_MAX) {
		loop_timer_cancel(st->loop, &g->timer);
		g->armed_us = UINT64_MAX;
		return;
	}
	if (next == g->armed_us && loop_timer_armed(&g->timer))
		return;
	g->armed_us = next;
	loop_timer_arm_at_us(st->loop, &g->timer, next);
}

/* The ports the engine picks: only those whose flow the kernel steers here. */
static bool tcp_glue_port_ok(void *ctx, const struct tcp_endpoint *local, const struct tcp_endpoint *remote)
{
	const struct tcp_glue *g = ctx;

	return stack_owns_flow(g->st, IPPROTO_TCP, &local->addr, local->port, &remote->addr, remote->port);
}

/**
 * tcp_glue_new() - an engine joined to an IP layer
 * @st:		the stack (loop, drop counters)
 * @ops:	where its segments go
 * @ctx:	for @ops
 *
 * Return: the instance, or NULL (out of memory).
 */
struct tcp_glue *tcp_glue_new(struct stack *st, const struct tcp_glue_ops *ops, void *ctx)
{
	struct tcp_stack_cfg cfg;
	struct tcp_glue *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	memset(&cfg, 0, sizeof(cfg));
	cfg.emit = tcp_glue_emit;
	cfg.emit_ctx = g;
	g->st = st;
	g->ops = ops;
	g->ctx = ctx;
	g->armed_us = UINT64_MAX;
	g->tcp = tcp_stack_new(&cfg);
	if (!g->tcp) {
		free(g);
		return NULL;
	}
	tcp_stack_set_port_filter(g->tcp, tcp_glue_port_ok, g);
	loop_timer_init(&g->timer, tcp_glue_timer, g);
	return g;
}

/**
 * tcp_glue_free() - free the engine (its users closed their connections)
 * @g:	the instance, or NULL
 *
 * Called before the links are freed: nothing borrowed is queued any more
 * once the links are gone, and the engine's memory goes with it.
 */
void tcp_glue_free(struct tcp_glue *g)
{
	if (!g)
		return;
	loop_timer_cancel(g->st->loop, &g->timer);
	tcp_glue_trace_stop(g);
	tcp_stack_free(g->tcp);
	free(g);
}
