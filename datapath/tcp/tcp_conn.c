// SPDX-License-Identifier: MIT
/*
 * tcp_conn.c - the connection table, ISNs and lifetimes
 *
 * Theory of operation
 *
 * A stack (tcp_stack.c) holds every connection in a chained hash table
 * keyed by a keyed SipHash (libsodium crypto_shorthash) of the 4-tuple, so
 * a peer cannot pick tuples that collide. The table comes with the first
 * connection, sized for the connection cap (tcp_conn_buckets()).
 *
 * ISNs follow RFC 6528: ISN = M + F(4-tuple, secret), M a 4 us clock and F
 * SipHash keyed with the stack secret.
 *
 * Lifetime. A connection is freed when the service no longer holds it
 * (tcp_close()/tcp_abort(), or never handed out) and its state is CLOSED.
 * Entering CLOSED takes it out of the table and the timer heap at once, but
 * the memory is only released from the "reap" list when the outermost entry
 * point (tcp_input(), tcp_timers_run(), a socket call) returns: a callback
 * may close the very connection whose segment is being processed.
 *
 * TIME_WAIT connections are also kept on a FIFO; above cfg.max_timewait the
 * oldest one is dropped early (counted as timewait_evicted). The FIFO is
 * in the order of their close deadlines (every start and restart of the
 * TIME-WAIT timer puts the connection at its tail), so it is also their
 * timer: tcp_timer.c expires them from its head and keeps them out of the
 * heap, which then holds only the connections that carry data.
 *
 * Caps (docs/security.md): at cfg.max_conns (every state, TIME_WAIT
 * included) tcp_conn_new() refuses (conns_limited): tcp_connect() fails with
 * -EAGAIN, a SYN is answered with a SYN cookie and the cookie's ACK is
 * dropped without a RST while the table is still full, so the peer's
 * retransmission gets in once room frees (Linux's listen overflow). The
 * half-open count (SYN-RECEIVED of all listeners, cfg.max_half_open) is
 * kept here and enforced by tcp_synq.c; ring memory by tcp_buf.c.
 */
#include <sys/socket.h>
#include <sodium.h>

#include "datapath/tcp/tcp_int.h"

static const char *const tcp_state_names[] = {
	[TCPS_CLOSED] = "CLOSED", [TCPS_LISTEN] = "LISTEN", [TCPS_SYN_SENT] = "SYN-SENT",
	[TCPS_SYN_RECEIVED] = "SYN-RECEIVED", [TCPS_ESTABLISHED] = "ESTABLISHED",
	[TCPS_FIN_WAIT_1] = "FIN-WAIT-1", [TCPS_FIN_WAIT_2] = "FIN-WAIT-2",
	[TCPS_CLOSE_WAIT] = "CLOSE-WAIT", [TCPS_CLOSING] = "CLOSING", [TCPS_LAST_ACK] = "LAST-ACK",
	[TCPS_TIME_WAIT] = "TIME-WAIT",
};
_Static_assert(sizeof(tcp_state_names) / sizeof(tcp_state_names[0]) == TCPS_STATE_MAX, "state names");

static const char *const tcp_event_names[] = {
	[TCP_EV_CONNECTED] = "connected", [TCP_EV_READABLE] = "readable", [TCP_EV_WRITABLE] = "writable",
	[TCP_EV_PEER_FIN] = "peer_fin", [TCP_EV_RESET] = "reset", [TCP_EV_CLOSED] = "closed",
};
_Static_assert(sizeof(tcp_event_names) / sizeof(tcp_event_names[0]) == TCP_EV_MAX, "event names");

static const char *const tcp_cc_names[] = { [TCP_CC_CUBIC] = "cubic", [TCP_CC_RENO] = "reno", [TCP_CC_BBR] = "bbr" };
_Static_assert(sizeof(tcp_cc_names) / sizeof(tcp_cc_names[0]) == TCP_CC_MAX, "cc names");

/**
 * tcp_state_name() - the RFC 9293 name of a state
 * @s: the state
 *
 * Return: a static string ("?" when out of range).
 */
const char *tcp_state_name(enum tcp_state s)
{
	return (unsigned int)s < TCPS_STATE_MAX ? tcp_state_names[s] : "?";
}

/**
 * tcp_event_name() - the name of an event
 * @ev: the event
 *
 * Return: a static string.
 */
const char *tcp_event_name(enum tcp_event ev)
{
	return (unsigned int)ev < TCP_EV_MAX ? tcp_event_names[ev] : "?";
}

static const char *const tcp_ecn_mode_names[] = {
	[TCP_ECN_ACCEPT] = "accept", [TCP_ECN_OFF] = "off", [TCP_ECN_ON] = "on"
};
_Static_assert(sizeof(tcp_ecn_mode_names) / sizeof(tcp_ecn_mode_names[0]) == TCP_ECN_MODE_MAX, "ecn mode names");

/**
 * tcp_ecn_mode_name() - the name of an ECN mode
 * @m: the mode
 *
 * Return: its name, "?" when out of range.
 */
const char *tcp_ecn_mode_name(enum tcp_ecn_mode m)
{
	return (unsigned int)m < TCP_ECN_MODE_MAX ? tcp_ecn_mode_names[m] : "?";
}

/**
 * tcp_ecn_mode_by_name() - the enum tcp_ecn_mode of "off", "accept" or "on"
 * @name: the name
 *
 * Return: it, or -EINVAL.
 */
int tcp_ecn_mode_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < TCP_ECN_MODE_MAX; i++)
		if (!strcmp(name, tcp_ecn_mode_names[i]))
			return (int)i;
	return -EINVAL;
}

/**
 * tcp_cc_ops_of() - the controller behind a name of enum tcp_cc_algo
 * @cc: which (out of range: the default, CUBIC)
 *
 * Return: its operations.
 */
const struct tcp_cc_ops *tcp_cc_ops_of(enum tcp_cc_algo cc)
{
	switch (cc) {
	case TCP_CC_RENO:
		return &tcp_cc_reno_ops;
	case TCP_CC_BBR:
		return &tcp_cc_bbr_ops;
	default:
		return &tcp_cc_cubic_ops;
	}
}

/**
 * tcp_cc_by_name() - the enum tcp_cc_algo of a name ("cubic", "reno", "bbr")
 * @name: the name
 *
 * Return: it, or -EINVAL for no controller of that name.
 */
int tcp_cc_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < TCP_CC_MAX; i++)
		if (!strcmp(name, tcp_cc_names[i]))
			return (int)i;
	return -EINVAL;
}

/**
 * tcp_cc_name() - the name of a congestion controller
 * @cc: the algorithm
 *
 * Return: a static string.
 */
const char *tcp_cc_name(enum tcp_cc_algo cc)
{
	return (unsigned int)cc < TCP_CC_MAX ? tcp_cc_names[cc] : "?";
}

/**
 * tcp_addr_eq() - compare two addresses, family included
 * @a: one address
 * @b: the other
 *
 * Return: true when equal.
 */
bool tcp_addr_eq(const struct net_addr *a, const struct net_addr *b)
{
	return a->family == b->family && !memcmp(&a->a, &b->a, net_addr_len(a->family));
}

/**
 * tcp_siphash() - SipHash-2-4 of @data keyed with the stack secret
 * @s: the stack
 * @data: bytes to hash
 * @len: their length
 *
 * Return: the 64-bit hash.
 */
uint64_t tcp_siphash(const struct tcp_stack *s, const void *data, size_t len)
{
	uint64_t h;

	crypto_shorthash((unsigned char *)&h, data, len, s->hash_key);
	return h;
}

struct tcp_tuple_key {
	uint8_t laddr[16];
	uint8_t raddr[16];
	uint16_t lport;
	uint16_t rport;
	uint8_t family;
	uint8_t pad[3];
};

static void tcp_tuple_key(struct tcp_tuple_key *k, const struct tcp_endpoint *l, const struct tcp_endpoint *r)
{
	/* only the family's bytes: the rest of an IPv4 address is not part of it */
	memset(k, 0, sizeof(*k));
	memcpy(k->laddr, &l->addr.a, net_addr_len(l->addr.family));
	memcpy(k->raddr, &r->addr.a, net_addr_len(r->addr.family));
	k->lport = l->port;
	k->rport = r->port;
	k->family = l->addr.family;
}

/**
 * tcp_conn_hash() - the keyed hash of a 4-tuple
 * @s: the stack
 * @l: local endpoint
 * @r: remote endpoint
 *
 * Return: 32 bits of SipHash over the tuple.
 */
uint32_t tcp_conn_hash(const struct tcp_stack *s, const struct tcp_endpoint *l, const struct tcp_endpoint *r)
{
	struct tcp_tuple_key k;

	tcp_tuple_key(&k, l, r);
	return (uint32_t)tcp_siphash(s, &k, sizeof(k));
}

/**
 * tcp_conn_isn() - an initial sequence number per RFC 6528
 * @s: the stack
 * @l: local endpoint
 * @r: remote endpoint
 * @now_us: the time
 *
 * Return: M + F(tuple, secret), M ticking every 4 us.
 */
uint32_t tcp_conn_isn(struct tcp_stack *s, const struct tcp_endpoint *l, const struct tcp_endpoint *r,
		      uint64_t now_us)
{
	struct tcp_tuple_key k;

	if (s->cfg.isn_fixed)
		return s->cfg.isn_fixed;
	tcp_tuple_key(&k, l, r);
	k.pad[0] = 'I';	/* a different function than the table hash */
	return (uint32_t)(now_us / 4) + (uint32_t)tcp_siphash(s, &k, sizeof(k));
}

static bool tcp_ep_eq(const struct tcp_endpoint *a, const struct tcp_endpoint *b)
{
	return a->port == b->port && tcp_addr_eq(&a->addr, &b->addr);
}

/**
 * tcp_conn_lookup() - find the connection of a 4-tuple
 * @s: the stack
 * @l: local endpoint (the segment's destination)
 * @r: remote endpoint (the segment's source)
 *
 * Return: the connection or NULL.
 */
struct tcp_conn *tcp_conn_lookup(struct tcp_stack *s, const struct tcp_endpoint *l, const struct tcp_endpoint *r)
{
	struct tcp_conn *c;

	if (!s->table)
		return NULL;	/* no connection yet (tcp_conn_table()) */
	for (c = s->table[tcp_conn_hash(s, l, r) & s->table_mask]; c; c = c->hnext)
		if (tcp_ep_eq(&c->local, l) && tcp_ep_eq(&c->remote, r))
			return c;
	return NULL;
}

/*
 * The connection table, allocated at the first connection: an engine nobody
 * connects through (the container face's, the fuzz targets' short-lived
 * ones) costs no table, and resizing it before then (tcp_stack_set_limits())
 * costs nothing. Return: 0 or -ENOMEM (errno set).
 */
static int tcp_conn_table(struct tcp_stack *s)
{
	s->table = calloc(s->table_mask + 1, sizeof(*s->table));
	if (!s->table) {
		errno = ENOMEM;
		return -ENOMEM;
	}
	return 0;
}

static void tcp_conn_unhash(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;
	struct tcp_conn **pp = &s->table[tcp_conn_hash(s, &c->local, &c->remote) & s->table_mask];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == c) {
			*pp = c->hnext;
			c->hnext = NULL;
			return;
		}
	}
}

void tcp_conn_opts_defaults(struct tcp_conn_opts *o)
{
	if (!o->mss)
		o->mss = TCP_DEFAULT_MSS;
	if (o->mss < TCP_MIN_MSS)
		o->mss = TCP_MIN_MSS;
	if (o->gso_max_bytes < o->mss)
		o->gso_max_bytes = o->mss;
	if (!o->sndbuf_max)
		o->sndbuf_max = TCP_SNDBUF_MAX;
	if (!o->rcvbuf_max)
		o->rcvbuf_max = TCP_RCVBUF_MAX;
	if (!o->rcvbuf_init)
		o->rcvbuf_init = TCP_RCVBUF_INIT;
	if (o->rcvbuf_init > o->rcvbuf_max)
		o->rcvbuf_init = o->rcvbuf_max;
	if (!o->keepalive_intvl_ms)
		o->keepalive_intvl_ms = 75000;
	if (!o->keepalive_cnt)
		o->keepalive_cnt = 9;
	if ((unsigned int)o->cc >= TCP_CC_MAX)
		o->cc = TCP_CC_CUBIC;
}

/**
 * tcp_conn_new() - allocate a connection and put it in the table
 * @s: the stack
 * @l: local endpoint
 * @r: remote endpoint
 * @opts: settings (NULL for defaults)
 *
 * The connection starts CLOSED with no buffers; the caller sets its state.
 *
 * Return: the connection, or NULL (errno ENOMEM or EAGAIN at max_conns).
 */
struct tcp_conn *tcp_conn_new(struct tcp_stack *s, const struct tcp_endpoint *l, const struct tcp_endpoint *r,
			      const struct tcp_conn_opts *opts)
{
	struct tcp_conn *c;
	uint32_t h, init;

	if (s->st.conns >= s->cfg.max_conns) {
		s->st.conns_limited++;
		errno = EAGAIN;
		return NULL;
	}
	if (!s->table && tcp_conn_table(s) < 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->stack = s;
	c->local = *l;
	c->remote = *r;
	if (opts)
		c->opts = *opts;
	tcp_conn_opts_defaults(&c->opts);
	init = tcp_buf_new_fit(s, c->opts.rcvbuf_init);
	if (init < c->opts.rcvbuf_init) {
		s->st.buf_pressure++;	/* a smaller receive ring, announced so */
		c->opts.rcvbuf_init = init;
	}
	c->snd.acct = c->rcv.acct = s;
	c->heap_idx = UINT32_MAX;
	c->deadline_us = TCP_NO_DEADLINE;
	c->t_rtx_us = c->t_persist_us = c->t_delack_us = c->t_keep_us = c->t_close_us = TCP_NO_DEADLINE;
	c->t_tlp_us = c->t_pace_us = TCP_NO_DEADLINE;
	c->state = TCPS_CLOSED;
	c->cc = tcp_cc_ops_of(c->opts.cc);
	c->rto_us = TCP_RTO_INIT_US;
	c->snd_mss = c->opts.mss;
	c->rcv_mss = TCP_MIN_MSS;
	c->gso_max_bytes = c->opts.gso_max_bytes;
	c->sndbuf_max = c->opts.sndbuf_max;
	c->rcvbuf_max = c->opts.rcvbuf_max;
	c->quickack = TCP_QUICKACK_SEGS;
	tcp_trace_conn_new(c);
	c->ts_offset = (uint32_t)tcp_conn_hash(s, r, l);
	tcp_ranges_init(&c->ooo, TCP_OOO_MAX_RANGES);
	tcp_ranges_init(&c->sacked, TCP_SACK_MAX_RANGES);
	c->cc->init(c);

	h = tcp_conn_hash(s, l, r) & s->table_mask;
	c->hnext = s->table[h];
	s->table[h] = c;
	c->all_next = s->all;
	if (s->all)
		s->all->all_prev = c;
	s->all = c;
	s->st.conns++;
	return c;
}

static void tcp_conn_free(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;

	if (c->all_prev)
		c->all_prev->all_next = c->all_next;
	else
		s->all = c->all_next;
	if (c->all_next)
		c->all_next->all_prev = c->all_prev;
	tcp_snd_lent_unwait(c);
	/* Segments still queued in the link may point into the send ring: it
	 * goes to the retired list like a replaced one (tcp_stack_tx_done()). */
	tcp_ring_free(&c->snd, true);
	tcp_ring_free(&c->rcv, false);
	tcp_rack_free(c);
	tcp_ranges_free(&c->ooo);
	tcp_ranges_free(&c->sacked);
	tcp_ranges_free(&c->undo_rxt);
	s->st.conns--;
	free(c);
	tcp_pool_conn_freed(s);
}

static void tcp_tw_link(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;

	c->tw_prev = s->tw_tail;
	if (s->tw_tail)
		s->tw_tail->tw_next = c;
	else
		s->tw_head = c;
	s->tw_tail = c;
	s->st.timewait++;
}

static void tcp_tw_unlink(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;

	if (c->tw_prev)
		c->tw_prev->tw_next = c->tw_next;
	else
		s->tw_head = c->tw_next;
	if (c->tw_next)
		c->tw_next->tw_prev = c->tw_prev;
	else
		s->tw_tail = c->tw_prev;
	c->tw_next = c->tw_prev = NULL;
	s->st.timewait--;
}

/**
 * tcp_conn_tw_requeue() - a TIME-WAIT connection whose timer restarted
 * @c: the connection, in TIME_WAIT
 *
 * Goes to the FIFO's tail, where the latest deadline is.
 */
void tcp_conn_tw_requeue(struct tcp_conn *c)
{
	if (c->stack->tw_tail == c)
		return;
	tcp_tw_unlink(c);
	tcp_tw_link(c);
}

void tcp_conn_maybe_reap(struct tcp_conn *c)
{
	struct tcp_stack *s = c->stack;

	if (c->dead || c->user_holds || c->state != TCPS_CLOSED)
		return;
	c->dead = true;
	c->hnext = s->reap;	/* unhashed already: reuse the chain */
	s->reap = c;
}

/**
 * tcp_conn_set_state() - move a connection to a new state
 * @c: the connection
 * @st: the new state
 * @now_us: the time
 *
 * Keeps the listener's SYN queue count, the TIME_WAIT FIFO, the table and the
 * timers consistent with the state.
 */
void tcp_conn_set_state(struct tcp_conn *c, enum tcp_state st, uint64_t now_us)
{
	struct tcp_stack *s = c->stack;
	enum tcp_state old = c->state;

	if (old == st)
		return;
	if (old == TCPS_SYN_RECEIVED && c->listener) {
		c->listener->synq_len--;
		s->st.half_open--;
		c->listener = NULL;
	}
	if (old == TCPS_TIME_WAIT)
		tcp_tw_unlink(c);
	c->state = st;
	if (st == TCPS_TIME_WAIT) {
		tcp_tw_link(c);
		/* everything we sent is acknowledged: the close is its one timer */
		c->t_rtx_us = c->t_persist_us = c->t_delack_us = c->t_keep_us = c->t_tlp_us = TCP_NO_DEADLINE;
		c->t_rack_us = 0;
		tcp_timer_timewait(c, now_us);
		if (!c->user_holds)
			tcp_buf_release(c);	/* no rings in TIME-WAIT (tcp_buf.c) */
		if (s->st.timewait > s->cfg.max_timewait && s->tw_head != c) {
			s->st.timewait_evicted++;
			tcp_conn_set_state(s->tw_head, TCPS_CLOSED, now_us);
		}
	}
	if (st == TCPS_CLOSED) {
		tcp_conn_unhash(c);
		tcp_timer_heap_remove(c);
		c->t_rtx_us = c->t_persist_us = c->t_delack_us = c->t_keep_us = c->t_close_us = TCP_NO_DEADLINE;
		c->t_tlp_us = TCP_NO_DEADLINE;
		tcp_conn_maybe_reap(c);
	}
}

/**
 * tcp_conn_event() - tell the service about an event, if it holds the conn
 * @c: the connection
 * @ev: the event
 * @err: negative errno for TCP_EV_RESET, else 0
 */
void tcp_conn_event(struct tcp_conn *c, enum tcp_event ev, int err)
{
	if (c->user_holds && c->ev)
		c->ev(c, c->user, ev, err);
}

/**
 * tcp_conn_drop() - the connection died (RST, timeout): go CLOSED and tell
 * @c: the connection
 * @err: -ECONNRESET, -ECONNREFUSED or -ETIMEDOUT
 * @now_us: the time
 */
void tcp_conn_drop(struct tcp_conn *c, int err, uint64_t now_us)
{
	tcp_conn_set_state(c, TCPS_CLOSED, now_us);
	tcp_conn_event(c, TCP_EV_RESET, err);
}

/**
 * tcp_conn_enter() - an entry point starts
 * @s: the stack
 */
void tcp_conn_enter(struct tcp_stack *s)
{
	s->depth++;
}

/**
 * tcp_conn_leave() - an entry point ends: free dead connections at depth 0
 * @s: the stack
 */
void tcp_conn_leave(struct tcp_stack *s)
{
	if (--s->depth)
		return;
	while (s->reap) {
		struct tcp_conn *c = s->reap;

		s->reap = c->hnext;
		tcp_conn_free(c);
	}
}

/* Hash buckets for @max_conns: one per two connections, 256 to 2^20. */
uint32_t tcp_conn_buckets(uint32_t max_conns)
{
	uint32_t buckets = 256;

	while (buckets < max_conns / 2 && buckets < (1u << 20))
		buckets <<= 1;
	return buckets;
}

/**
 * tcp_conn_free_all() - free every connection, no segment sent, no callback
 * @s: the stack (tcp_stack_free())
 */
void tcp_conn_free_all(struct tcp_stack *s)
{
	while (s->all) {
		struct tcp_conn *c = s->all;

		if (c->dead) {	/* on the reap list: unlink from there first */
			struct tcp_conn **pp;

			for (pp = &s->reap; *pp != c; pp = &(*pp)->hnext)
				;
			*pp = c->hnext;
		}
		if (c->state == TCPS_TIME_WAIT)
			tcp_tw_unlink(c);
		tcp_conn_unhash(c);
		tcp_conn_free(c);
	}
}

/**
 * tcp_foreach_conn() - call @fn for each connection (for `datapath stats`)
 * @s: the stack
 * @fn: called with each; a non-zero return stops the walk
 * @arg: passed to @fn
 *
 * @fn must not close connections.
 *
 * Return: the first non-zero return of @fn, else 0.
 */
int tcp_foreach_conn(struct tcp_stack *s, int (*fn)(struct tcp_conn *c, void *arg), void *arg)
{
	struct tcp_conn *c;
	int ret;

	for (c = s->all; c; c = c->all_next) {
		if (c->dead)
			continue;
		ret = fn(c, arg);
		if (ret)
			return ret;
	}
	return 0;
}
