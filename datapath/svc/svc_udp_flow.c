// SPDX-License-Identifier: MIT
/*
 * svc_udp_flow.c - the UDP services' flows: their keys, their lifetime,
 * their caps
 *
 * Theory of operation
 *
 * A flow (struct svc_flow, svc_udp.c says what each kind carries) is one
 * remote party of a service. It lives in its stack's flow table
 * (datapath/flow.c) as kind FLOW_SVC_UDP, keyed by its service and a
 * publish flow's (peer, port, local address) or a forward flow's client
 * address (svc_flow_find_pub(), svc_flow_find_fwd()), and on its service's
 * list. Every datagram it carries makes it the most recently used
 * (svc_flow_touch()); a flow idle for SVC_UDP_IDLE_MS is closed by the
 * service's sweep timer (svc_flow_sweep()).
 *
 * Caps (docs/security.md): every flow holds a host socket, so the process
 * keeps at most --max-udp-flows of them (stack_limits.udp_flows, default
 * SVC_UDP_MAX_FLOWS_DEFAULT), all UDP services together. All flows are on
 * their table's list, most recently used first; a new flow at the cap
 * closes the least recently used one of any service (svc_flow_make_room();
 * counted in the global hits and in that service's flows_evicted). A
 * publish flow is also capped per remote source address per service
 * (--max-udp-flows-per-source, stack_limits.udp_flows_per_source, default
 * SVC_UDP_FLOWS_PER_SOURCE_DEFAULT): a new flow from a source that holds
 * that many already closes that source's own least recently used flow of the
 * service and takes its place (svc_flow_source_room(); counted in
 * source_cap_hits). So a client that opens many short exchanges keeps
 * working (only its oldest, likely finished exchanges are recycled), and a
 * sender cycling through source ports only churns its own slots, never
 * another source's. The datagram is never dropped for a cap. Forward flows
 * count toward the total only: their "sources" are local clients, most
 * often all 127.0.0.1. svc_udp_usage() shows the caps: in effect, in use,
 * reached.
 *
 * A flow closed by a cap (or the sweep) may still have an event in the
 * loop's current epoll batch, so its memory is only released at the end of
 * the loop turn (loop_defer()): closing (svc_flow_free()) sends what the
 * queue holds for the host (svc_udp_pump.c), takes it off every list and
 * closes its sockets at once, and svc_udp.c's backend reader ignores a
 * closed flow (fd -1). Freeing it at once was a use after free under
 * integration/hardening_udp_flows in the ASan build.
 *
 * This file makes no flow (the services do, svc_udp.c) and moves no
 * datagram.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datapath/svc/svc_udp_int.h"

#define SVC_UDP_IDLE_MS		180000

/*
 * A flow's key in the stack's flow table: its service, and a publish
 * flow's (peer, port, local address) or a forward flow's client address.
 */
struct svc_flow_key {
	const struct svc_udp *svc;
	union {
		struct {
			uint8_t family;
			uint8_t peer[16], local[16];
			uint16_t peer_port;
		} pub;
		uint8_t client[sizeof(struct sockaddr_storage)];
	} u;
};

static uint64_t svc_pub_hash(const struct svc_udp *s, const struct net_addr *peer, uint16_t peer_port,
			     const struct net_addr *local)
{
	struct svc_flow_key k;

	memset(&k, 0, sizeof(k));
	k.svc = s;
	k.u.pub.family = peer->family;
	memcpy(k.u.pub.peer, &peer->a, peer->family == AF_INET ? 4 : 16);
	memcpy(k.u.pub.local, &local->a, local->family == AF_INET ? 4 : 16);
	k.u.pub.peer_port = peer_port;
	return flow_hash(s->st->flows, &k, offsetof(struct svc_flow_key, u) + sizeof(k.u.pub));
}

static uint64_t svc_fwd_hash(const struct svc_udp *s, const struct sockaddr_storage *client, socklen_t len)
{
	struct svc_flow_key k;

	memset(&k, 0, sizeof(k));
	k.svc = s;
	memcpy(k.u.client, client, len);
	return flow_hash(s->st->flows, &k, offsetof(struct svc_flow_key, u) + len);
}

static struct svc_flow *svc_flow_of(struct flow *fl)
{
	return fl ? flow_entry(fl, struct svc_flow, flow) : NULL;
}

/**
 * svc_flow_find_pub() - a publish flow of @s by its peer and local address
 * @s:		the service
 * @src:	the peer, @sport its port
 * @dst:	the container address it sent to
 * @hash:	set to the key's hash, for svc_flow_link() of a new flow
 *
 * Return: the flow, or NULL.
 */
struct svc_flow *svc_flow_find_pub(struct svc_udp *s, const struct net_addr *src, uint16_t sport,
				   const struct net_addr *dst, uint64_t *hash)
{
	struct svc_flow *f;
	struct flow *fl;

	*hash = svc_pub_hash(s, src, sport, dst);
	for (fl = flow_first(s->st->flows, FLOW_SVC_UDP, *hash); fl; fl = flow_next(fl)) {
		f = svc_flow_of(fl);
		if (f->svc == s && f->peer_port == sport && net_addr_eq(&f->peer, src) &&
		    net_addr_eq(&f->local, dst))
			return f;
	}
	return NULL;
}

/**
 * svc_flow_find_fwd() - a forward flow of @s by its local client's address
 * @s:		the service
 * @client:	the client's address, @len its length
 * @hash:	set to the key's hash, for svc_flow_link() of a new flow
 *
 * Return: the flow, or NULL.
 */
struct svc_flow *svc_flow_find_fwd(struct svc_udp *s, const struct sockaddr_storage *client, socklen_t len,
				   uint64_t *hash)
{
	struct svc_flow *f;
	struct flow *fl;

	*hash = svc_fwd_hash(s, client, len);
	for (fl = flow_first(s->st->flows, FLOW_SVC_UDP, *hash); fl; fl = flow_next(fl)) {
		f = svc_flow_of(fl);
		if (f->svc == s && f->client_len == len && !memcmp(&f->client, client, len))
			return f;
	}
	return NULL;
}

/**
 * svc_flow_touch() - @f carried a datagram now: the most recently used flow
 * @f:	the flow
 */
void svc_flow_touch(struct svc_flow *f)
{
	flow_touch(f->svc->st->flows, &f->flow, stack_now_ms(f->svc->st));
}

/**
 * svc_flow_link() - a new flow of @s, filed under @hash, onto its lists, counted
 * @s:		the service
 * @f:		the flow, made by the service
 * @hash:	what svc_flow_find_pub() or svc_flow_find_fwd() gave for its key
 */
void svc_flow_link(struct svc_udp *s, struct svc_flow *f, uint64_t hash)
{
	f->next = s->flows;
	s->flows = f;
	s->n_flows++;
	s->flows_created++;
	flow_add(s->st->flows, &f->flow, FLOW_SVC_UDP, hash, stack_now_ms(s->st));
}

/* the end of the turn after a flow closed: nothing of the turn names it any more */
static void svc_flow_release(struct loop_defer *d)
{
	free(loop_defer_owner(d, struct svc_flow, defer));
}

/**
 * svc_flow_free() - close @f: off every list, its sockets closed, its memory
 * at the end of the turn
 * @f:	the flow; what the queue holds for the host is sent first
 */
void svc_flow_free(struct svc_flow *f)
{
	struct svc_udp *s = f->svc;
	struct svc_flow **pp;

	if (s->tbl->txq_len)
		svc_udp_flush(s->tbl);

	for (pp = &s->flows; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			s->n_flows--;
			break;
		}
	}
	flow_del(s->st->flows, &f->flow);
	if (f->fd >= 0) {
		loop_fd_del(s->st->loop, &f->lfd);
		close(f->fd);
		f->fd = -1;
	}
	udp_close(f->us);
	f->us = NULL;
	/* its event may be in this turn's batch */
	loop_defer(s->st->loop, &f->defer, svc_flow_release);
}

static unsigned int svc_max_flows(const struct stack *st)
{
	return st->limits.udp_flows ? st->limits.udp_flows : SVC_UDP_MAX_FLOWS_DEFAULT;
}

/* 0 when there is no per-source cap */
static unsigned int svc_max_per_source(const struct stack *st)
{
	uint32_t v = st->limits.udp_flows_per_source;

	if (v == SVC_UDP_NO_CAP)
		return 0;
	return v ? v : SVC_UDP_FLOWS_PER_SOURCE_DEFAULT;
}

/**
 * svc_flow_make_room() - before a new flow of @s: at the total cap, the least
 * recently used flow (of any service) goes
 * @s:	the service about to make a flow
 */
void svc_flow_make_room(struct svc_udp *s)
{
	struct svc_udp_table *t = s->tbl;
	struct svc_flow *old;

	if (flow_count(s->st->flows, FLOW_SVC_UDP) < svc_max_flows(s->st))
		return;
	t->cap_hits++;
	while (flow_count(s->st->flows, FLOW_SVC_UDP) >= svc_max_flows(s->st) &&
	       (old = svc_flow_of(flow_oldest(s->st->flows, FLOW_SVC_UDP)))) {
		old->svc->flows_evicted++;
		svc_flow_free(old);
	}
}

/**
 * svc_flow_source_room() - before a new publish flow from @src: at the
 * per-source cap, that source's own least recently used flow of @s goes
 * @s:		the service
 * @src:	the new flow's peer
 *
 * A walk of the service's list, once per new flow, never per datagram; the
 * source's own oldest flow makes room: it never takes another's.
 */
void svc_flow_source_room(struct svc_udp *s, const struct net_addr *src)
{
	unsigned int per_source = svc_max_per_source(s->st), same = 0;
	struct svc_flow *f, *oldest = NULL;

	for (f = s->flows; per_source && f; f = f->next) {
		if (!net_addr_eq(&f->peer, src))
			continue;
		same++;
		if (!oldest || f->flow.last_ms < oldest->flow.last_ms)
			oldest = f;
	}
	if (per_source && same >= per_source && oldest) {
		s->source_cap_hits++;
		svc_flow_free(oldest);
	}
}

/**
 * svc_flow_sweep() - the service's sweep timer: close its idle flows, again
 * in SVC_UDP_SWEEP_MS
 * @t:	the service's sweep timer
 */
void svc_flow_sweep(struct loop_timer *t)
{
	struct svc_udp *s = t->ctx;
	uint64_t now = stack_now_ms(s->st);
	struct svc_flow *f, *next;

	for (f = s->flows; f; f = next) {
		next = f->next;
		if (now - f->flow.last_ms >= SVC_UDP_IDLE_MS)
			svc_flow_free(f);
	}
	loop_timer_arm(s->st->loop, &s->sweep, SVC_UDP_SWEEP_MS);
}

static int svc_addr_cmp(const void *a, const void *b)
{
	const struct net_addr *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	return memcmp(&x->a, &y->a, x->family == AF_INET ? 4 : 16);
}

/*
 * Heapsort of @n addresses. Not qsort(): glibc's asks sysconf(_SC_PHYS_PAGES)
 * for large arrays, and sysinfo() is not in the seccomp allow-list (it killed
 * the datapath in integration/hardening_udp_flows).
 */
static void svc_addr_sort(struct net_addr *v, unsigned int n)
{
	unsigned int start = n / 2, end = n, root, child;
	struct net_addr t;

	while (end > 1) {
		if (start > 0) {
			start--;
		} else {
			end--;
			t = v[end];
			v[end] = v[0];
			v[0] = t;
		}
		for (root = start; (child = 2 * root + 1) < end; root = child) {
			if (child + 1 < end && svc_addr_cmp(&v[child], &v[child + 1]) < 0)
				child++;
			if (svc_addr_cmp(&v[root], &v[child]) >= 0)
				break;
			t = v[root];
			v[root] = v[child];
			v[child] = t;
		}
	}
}

/**
 * svc_udp_usage() - the UDP flow caps: in effect, in use, reached
 * @t:		the services' table (and its stack's limits)
 * @svcs:	the services on @t's stack (NULL entries: another stack's)
 * @n:		how many
 * @u:		filled in; @u->per_source_max is 0 when there is no per-source cap
 *
 * per_source_used is the most flows one source holds in one publish service,
 * found by sorting each service's peers (only when stats are asked for).
 */
void svc_udp_usage(const struct svc_udp_table *t, struct svc *const *svcs, unsigned int n,
		   struct svc_udp_usage *u)
{
	struct net_addr *peers;
	unsigned int i, k, run, cnt;
	struct svc_flow *f;

	memset(u, 0, sizeof(*u));
	u->flows_max = svc_max_flows(t->st);
	u->flows_used = flow_count(t->st->flows, FLOW_SVC_UDP);
	u->flows_hits = t->cap_hits;
	u->per_source_max = svc_max_per_source(t->st);
	for (i = 0; i < n; i++) {
		const struct svc_udp *s = svcs[i] && svcs[i]->proto == IPPROTO_UDP ? svcs[i]->udp : NULL;

		if (!s)
			continue;
		u->per_source_hits += s->source_cap_hits;
		if (s->spec.kind != SVC_PUBLISH || !s->n_flows)
			continue;
		peers = malloc(sizeof(*peers) * s->n_flows);
		if (!peers)
			continue;
		cnt = 0;
		for (f = s->flows; f && cnt < s->n_flows; f = f->next)
			peers[cnt++] = f->peer;
		svc_addr_sort(peers, cnt);
		for (k = 0, run = 0; k < cnt; k++) {
			run = k && !svc_addr_cmp(&peers[k], &peers[k - 1]) ? run + 1 : 1;
			if (run > u->per_source_used)
				u->per_source_used = run;
		}
		free(peers);
	}
}
