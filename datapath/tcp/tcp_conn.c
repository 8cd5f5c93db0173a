// SPDX-License-Identifier: MIT
/*
 * tcp_conn.c - the stack object, the connection table, ISNs and lifetimes
 *
 * Theory of operation
 *
 * A stack holds every connection in a chained hash table keyed by a keyed
 * SipHash (libsodium crypto_shorthash) of the 4-tuple, so a peer cannot pick
 * tuples that collide. Listeners are a short list matched by local port and
 * address (or a wildcard address of the same family).
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
 * oldest one is dropped early (counted as timewait_evicted).
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

static const char *const tcp_cc_names[] = { [TCP_CC_CUBIC] = "cubic", [TCP_CC_RENO] = "reno" };
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

static bool tcp_addr_any(const struct net_addr *a)
{
	static const uint8_t zero[16];

	return !memcmp(&a->a, zero, net_addr_len(a->family));
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

static void tcp_opts_defaults(struct tcp_conn_opts *o)
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
	uint32_t h;

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
	tcp_opts_defaults(&c->opts);
	if (tcp_buf_pressure(s) && c->opts.rcvbuf_init > TCP_BUF_PRESSURE_MIN) {
		s->st.buf_pressure++;	/* a small receive ring, announced so */
		c->opts.rcvbuf_init = TCP_BUF_PRESSURE_MIN;
	}
	c->snd.acct = c->rcv.acct = s;
	c->heap_idx = UINT32_MAX;
	c->deadline_us = TCP_NO_DEADLINE;
	c->t_rtx_us = c->t_persist_us = c->t_delack_us = c->t_keep_us = c->t_close_us = TCP_NO_DEADLINE;
	c->t_tlp_us = TCP_NO_DEADLINE;
	c->state = TCPS_CLOSED;
	c->cc = c->opts.cc == TCP_CC_RENO ? &tcp_cc_reno_ops : &tcp_cc_cubic_ops;
	c->rto_us = TCP_RTO_INIT_US;
	c->snd_mss = c->opts.mss;
	c->rcv_mss = TCP_MIN_MSS;
	c->gso_max_bytes = c->opts.gso_max_bytes;
	c->sndbuf_max = c->opts.sndbuf_max;
	c->rcvbuf_max = c->opts.rcvbuf_max;
	c->quickack = TCP_QUICKACK_SEGS;
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

static void tcp_conn_maybe_reap(struct tcp_conn *c)
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
		c->tw_prev = s->tw_tail;
		if (s->tw_tail)
			s->tw_tail->tw_next = c;
		else
			s->tw_head = c;
		s->tw_tail = c;
		s->st.timewait++;
		c->t_rtx_us = c->t_persist_us = c->t_delack_us = c->t_keep_us = c->t_tlp_us = TCP_NO_DEADLINE;
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
static uint32_t tcp_conn_buckets(uint32_t max_conns)
{
	uint32_t buckets = 256;

	while (buckets < max_conns / 2 && buckets < (1u << 20))
		buckets <<= 1;
	return buckets;
}

/**
 * tcp_stack_set_limits() - change the caps (the datapath's options)
 * @s: the stack, with no connection yet when @max_conns changes the table
 * @max_conns: connections in all states (0 = TCP_MAX_CONNS_DEFAULT)
 * @max_half_open: SYN-RECEIVED connections of all listeners (0 = default)
 * @max_timewait: TIME-WAIT connections (0 = default)
 * @max_buf_mem: ring bytes of all connections (0 = default)
 *
 * Lowered caps apply to what comes next; nothing in place is cut.
 *
 * Return: 0, -EBUSY when the table would be resized with connections in
 * it, -ENOMEM.
 */
int tcp_stack_set_limits(struct tcp_stack *s, uint32_t max_conns, uint32_t max_half_open,
			 uint32_t max_timewait, uint64_t max_buf_mem)
{
	uint32_t buckets;

	max_conns = max_conns ? max_conns : TCP_MAX_CONNS_DEFAULT;
	buckets = tcp_conn_buckets(max_conns);
	if (buckets != s->table_mask + 1) {
		if (s->all)
			return -EBUSY;
		/* the next connection allocates the table of the new size */
		free(s->table);
		s->table = NULL;
		s->table_mask = buckets - 1;
	}
	s->cfg.max_conns = max_conns;
	s->cfg.max_half_open = max_half_open ? max_half_open : TCP_MAX_HALF_OPEN_DEFAULT;
	s->cfg.max_timewait = max_timewait ? max_timewait : TCP_MAX_TIMEWAIT_DEFAULT;
	s->cfg.max_buf_mem = max_buf_mem ? max_buf_mem : TCP_MAX_BUF_MEM_DEFAULT;
	return 0;
}

/**
 * tcp_stack_new() - create a stack
 * @cfg: parameters; @cfg->emit is required
 *
 * Return: the stack, or NULL with errno set (EINVAL, ENOMEM, or EIO when
 * libsodium cannot start).
 */
struct tcp_stack *tcp_stack_new(const struct tcp_stack_cfg *cfg)
{
	static const uint8_t zero[16];
	struct tcp_stack *s;
	uint32_t buckets;

	if (!cfg || !cfg->emit) {
		errno = EINVAL;
		return NULL;
	}
	if (sodium_init() < 0) {
		errno = EIO;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->cfg = *cfg;
	if (!s->cfg.max_conns)
		s->cfg.max_conns = TCP_MAX_CONNS_DEFAULT;
	if (!s->cfg.max_timewait)
		s->cfg.max_timewait = TCP_MAX_TIMEWAIT_DEFAULT;
	if (!s->cfg.max_half_open)
		s->cfg.max_half_open = TCP_MAX_HALF_OPEN_DEFAULT;
	if (!s->cfg.max_buf_mem)
		s->cfg.max_buf_mem = TCP_MAX_BUF_MEM_DEFAULT;
	if (!s->cfg.challenge_ack_limit)
		s->cfg.challenge_ack_limit = 1000;
	_Static_assert(sizeof(s->hash_key) == crypto_shorthash_KEYBYTES, "siphash key size");
	if (memcmp(cfg->secret, zero, 16))
		memcpy(s->hash_key, cfg->secret, 16);
	else
		randombytes_buf(s->hash_key, sizeof(s->hash_key));
	buckets = tcp_conn_buckets(s->cfg.max_conns);
	s->table_mask = buckets - 1;	/* the table itself comes with the first connection */
	s->next_port = 32768 + (uint16_t)(tcp_siphash(s, "port", 4) % 28232);
	s->tx_gen = 1;	/* a new connection's loan (generation 0) holds nothing */
	return s;
}

/**
 * tcp_stack_set_secret() - key ISNs, timestamp offsets, SYN cookies and the
 * table with @key instead of the random one the stack was made with
 * @s: the stack, before its first connection
 * @key: 16 bytes; a datapath's supervisor keeps the secret its key comes from
 *	across restarts (datapath/ledger.c), so that a new datapath's ISNs and
 *	timestamps on a 4-tuple continue the old one's
 *
 * Return: 0, or -EBUSY once a connection exists (its hash would change).
 */
int tcp_stack_set_secret(struct tcp_stack *s, const uint8_t key[16])
{
	if (s->st.conns)
		return -EBUSY;
	memcpy(s->hash_key, key, sizeof(s->hash_key));
	s->next_port = 32768 + (uint16_t)(tcp_siphash(s, "port", 4) % 28232);
	return 0;
}

/**
 * tcp_reset_probe() - make a peer reset a connection this stack forgot
 * @s: the stack
 * @local: our end of the 4-tuple
 * @remote: the peer's end
 * @now_us: the time
 *
 * After a datapath died, its successor does not know the sequence numbers
 * of the connections the container and the remote ends still hold, so it
 * cannot send an acceptable RST. It sends a bare SYN on the 4-tuple instead:
 * a peer with a synchronized connection answers any SYN with a challenge ACK
 * carrying its RCV.NXT (RFC 5961 4.2), that ACK finds no connection here and
 * is answered like any such segment, with a RST whose sequence number is its
 * ACK field (RFC 9293 3.10.7.1): exactly what the peer takes as a reset. A
 * peer with no connection there answers the SYN with a RST (ignored) or,
 * where something listens, a SYN-ACK (reset the same way). The SYN's
 * sequence number is the ISN this 4-tuple would get.
 */
void tcp_reset_probe(struct tcp_stack *s, const struct tcp_endpoint *local, const struct tcp_endpoint *remote,
		     uint64_t now_us)
{
	s->st.reset_probes++;
	tcp_out_syn_raw(s, local, remote, tcp_conn_isn(s, local, remote, now_us));
}

/**
 * tcp_stack_free() - free a stack and every connection and listener in it
 * @s: the stack (NULL is fine)
 *
 * No callback runs; connections are dropped without a segment.
 */
void tcp_stack_free(struct tcp_stack *s)
{
	if (!s)
		return;
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
	while (s->listeners) {
		struct tcp_listener *l = s->listeners;

		s->listeners = l->next;
		free(l);
	}
	tcp_stack_tx_done(s);
	tcp_pool_trim(s, s->clock_us, true);
	free(s->retired);
	free(s->heap);
	free(s->table);
	free(s);
}

/**
 * tcp_stack_stats() - copy the stack-wide counters
 * @s: the stack
 * @out: where to write them
 */
void tcp_stack_stats(const struct tcp_stack *s, struct tcp_stack_stats *out)
{
	*out = s->st;
	out->pool_cached = s->pool.cached;
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
	tcp_opts_defaults(&l->opts);
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
	tcp_opts_defaults(&l->opts);
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

static int tcp_pick_port(struct tcp_stack *s, struct tcp_endpoint *l, const struct tcp_endpoint *r)
{
	unsigned int i;

	for (i = 0; i < 28232; i++) {
		l->port = s->next_port++;
		if (s->next_port > 60999)
			s->next_port = 32768;
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
 * @user: passed to @ev
 */
void tcp_conn_set_user(struct tcp_conn *c, tcp_event_fn ev, void *user)
{
	c->ev = ev;
	c->user = user;
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
 * tcp_conn_set_mss() - the MSS and GSO limit of a catch-all's connection
 * @c: a connection tcp_syn_fn got, still unanswered
 * @mss: largest on-wire payload we take (the SYN-ACK's MSS option)
 * @gso_max_bytes: largest payload of one emitted segment
 *
 * A catch-all serves every destination, so its settings may differ per
 * connection (the route, the family): they are set here, before the answer.
 *
 * Return: 0, or -EINVAL when @c is not waiting for an answer.
 */
int tcp_conn_set_mss(struct tcp_conn *c, uint16_t mss, uint32_t gso_max_bytes)
{
	int snd;

	if (!c->deferred || mss < TCP_MIN_MSS)
		return -EINVAL;
	c->opts.mss = mss;
	c->opts.gso_max_bytes = gso_max_bytes;
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
	out->bytes_sent = c->bytes_sent;
	out->bytes_acked = c->bytes_acked;
	out->bytes_received = c->bytes_received;
	out->segs_out = c->segs_out;
	out->segs_in = c->segs_in;
	out->retrans_segs = c->retrans_segs;
	out->fast_recoveries = c->fast_recoveries;
	out->sack_recoveries = c->sack_recoveries;
	out->rto_count = c->rto_count;
	out->tlp_probes = c->tlp_probes;
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
	out->iss = c->iss;
	out->irs = c->irs;
	out->deferred = c->deferred;
}
