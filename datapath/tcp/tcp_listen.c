// SPDX-License-Identifier: MIT
/*
 * tcp_listen.c - listeners: a short list matched by local port and address
 * (or a wildcard address of the same family), and the catch-all that takes
 * every SYN nothing else takes (the container face's)
 *
 * A listener's SYN queue and its SYN cookies are tcp_synq.c's.
 */
#include <errno.h>

#include "datapath/tcp/tcp_int.h"

static bool tcp_addr_any(const struct net_addr *a)
{
	static const uint8_t zero[16];

	return !memcmp(&a->a, zero, net_addr_len(a->family));
}

/**
 * tcp_listener_lookup() - the listener a SYN to @local goes to
 * @s: the stack
 * @local: the segment's destination
 *
 * Return: an exact address match first, else a wildcard of the same family,
 * else the catch-all (tcp_listen_any()), else NULL.
 */
struct tcp_listener *tcp_listener_lookup(struct tcp_stack *s, const struct tcp_endpoint *local)
{
	struct tcp_listener *l, *wild = NULL;

	for (l = s->listeners; l; l = l->next) {
		if (l->syn || l->local.port != local->port || l->local.addr.family != local->addr.family)
			continue;
		if (tcp_addr_eq(&l->local.addr, &local->addr))
			return l;
		if (tcp_addr_any(&l->local.addr))
			wild = l;
	}
	return wild ? wild : s->catch_all;
}

/**
 * tcp_listen() - accept connections on @local
 * @s: the stack
 * @local: address (all-zero = any of that family) and port
 * @backlog: SYN_RECEIVED connections kept before SYN cookies take over
 * @opts: settings of accepted connections (NULL = defaults)
 * @accept: called when a handshake completes
 * @ev: the event function accepted connections start with
 * @user: passed to @accept and @ev
 * @out: the listener
 *
 * Return: 0, -EINVAL (bad family or port 0), -EADDRINUSE, -ENOMEM.
 */
int tcp_listen(struct tcp_stack *s, const struct tcp_endpoint *local, unsigned int backlog,
	       const struct tcp_conn_opts *opts, tcp_accept_fn accept, tcp_event_fn ev, void *user,
	       struct tcp_listener **out)
{
	struct tcp_listener *l;

	if (!local->port || !accept || (local->addr.family != AF_INET && local->addr.family != AF_INET6))
		return -EINVAL;
	for (l = s->listeners; l; l = l->next)
		if (!l->syn && l->local.port == local->port && tcp_addr_eq(&l->local.addr, &local->addr))
			return -EADDRINUSE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->stack = s;
	l->local = *local;
	if (opts)
		l->opts = *opts;
	tcp_conn_opts_defaults(&l->opts);
	l->accept = accept;
	l->ev = ev;
	l->user = user;
	l->backlog = backlog ? backlog : 128;
	l->next = s->listeners;
	s->listeners = l;
	*out = l;
	return 0;
}

/**
 * tcp_listen_any() - take every SYN no connection or other listener takes
 * @s: the stack
 * @opts: settings of its connections (NULL = defaults)
 * @syn: called with each new connection, before anything is answered
 * @ev: the event function its connections start with
 * @user: passed to @syn and @ev
 * @out: the listener
 *
 * A terminating proxy's listener (the container face): a SYN to any address
 * and port of either family becomes a SYN-RECEIVED connection that @syn
 * owns and answers later, with tcp_conn_answer() once the other side it
 * stands for is connected, or tcp_conn_refuse(). The other listeners come
 * first. There is no SYN cookie: a SYN beyond cfg.max_half_open (or
 * max_conns) is dropped (syn_deferred_dropped) and the peer retransmits it.
 *
 * Return: 0, -EINVAL (no @syn), -EADDRINUSE (the stack has one), -ENOMEM.
 */
int tcp_listen_any(struct tcp_stack *s, const struct tcp_conn_opts *opts, tcp_syn_fn syn, tcp_event_fn ev,
		   void *user, struct tcp_listener **out)
{
	struct tcp_listener *l;

	if (!syn)
		return -EINVAL;
	if (s->catch_all)
		return -EADDRINUSE;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->stack = s;
	if (opts)
		l->opts = *opts;
	tcp_conn_opts_defaults(&l->opts);
	l->syn = syn;
	l->ev = ev;
	l->user = user;
	l->backlog = UINT32_MAX;	/* only max_half_open bounds it */
	l->next = s->listeners;
	s->listeners = l;
	s->catch_all = l;
	*out = l;
	return 0;
}

/**
 * tcp_listener_close() - stop listening; SYN_RECEIVED connections are reset
 * @l: the listener
 */
void tcp_listener_close(struct tcp_listener *l)
{
	struct tcp_stack *s = l->stack;
	struct tcp_listener **pp;
	struct tcp_conn *c;

	tcp_conn_enter(s);
	for (c = s->all; c; c = c->all_next) {
		if (c->listener == l && c->state == TCPS_SYN_RECEIVED) {
			tcp_out_rst(c, 0);
			if (c->syn_owned)
				tcp_conn_drop(c, -ECONNABORTED, 0);	/* its owner lets go */
			else
				tcp_conn_set_state(c, TCPS_CLOSED, 0);
		}
	}
	if (s->catch_all == l)
		s->catch_all = NULL;
	for (pp = &s->listeners; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	free(l);
	tcp_conn_leave(s);
}
