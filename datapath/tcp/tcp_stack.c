// SPDX-License-Identifier: MIT
/*
 * tcp_stack.c - the stack object: its configuration and caps, its secret,
 * its counters, and its end
 *
 * A stack is one engine: every connection, listener, timer and buffer of one
 * side (the outer network's, or the container face's) belongs to one, and
 * one thread owns it. Its secret keys the connection table, the ISNs and
 * timestamp offsets (tcp_conn.c) and the SYN cookies (tcp_synq.c); a
 * datapath's supervisor keeps it across restarts (tcp_stack_set_secret()).
 */
#include <errno.h>
#include <sodium.h>

#include "datapath/tcp/tcp_int.h"

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
	tcp_conn_free_all(s);
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
