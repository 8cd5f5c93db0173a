// SPDX-License-Identifier: MIT
/*
 * svc_udp.c - UDP publish and forward services
 *
 * Theory of operation
 *
 * UDP has no connections, so a service keeps "flows", one per remote party,
 * to carry replies back to whoever asked:
 *
 * publish udp:[ADDR:]PORT=TARGET
 *   A stack socket on PORT (ADDR, or every container address). The first
 *   datagram from a peer (address, port, and the container address it was
 *   sent to) creates a flow: a host socket connected to TARGET (for unix:
 *   an autobound abstract address, so the backend can answer with sendto()
 *   to the sender). Datagrams from the peer go out on that socket; whatever
 *   the backend sends back on it goes to the peer through the stack, from
 *   the address the peer used.
 *
 * forward udp:LISTEN=REMOTE
 *   A host socket bound to LISTEN before privileges are dropped. The first
 *   datagram from a local client creates a flow with its own stack socket on
 *   an ephemeral port; datagrams go to REMOTE through the stack, and only
 *   datagrams from REMOTE on that stack socket go back to the client with
 *   sendto() on the listening socket.
 *
 * Host-side I/O is batched like the link's: datagrams for the host (a
 * publish's backend, a forward's local client) are copied into a queue
 * shared by the services of one stack (struct svc_udp_table) and leave at
 * the end of the loop turn (the stack's STACK_TURN_HAND_DOWN phase, which
 * the table registers for) or when SVC_UDP_BATCH are waiting. Consecutive
 * datagrams for the same flow leave together: to an inet destination as
 * UDP_SEGMENT sends (a run of datagrams the size of the first, a shorter
 * last one allowed), which the host's kernel carries as one packet as far
 * as the receiving socket (seed 003: one crossing of the IP output path
 * instead of one per datagram); to a unix one, or once a host refused UDP
 * GSO (host_gso_off), in one sendmmsg(). A publish flow sends on its
 * connected socket, a forward flow through the listening socket to its
 * client's address (svc_flow_dest()). Host sockets are read with
 * recvmmsg(), SVC_UDP_BATCH datagrams at most per readable event so one busy
 * flow cannot starve the loop. A datagram the host refuses (ENOBUFS,
 * EAGAIN on a full socket, ECONNREFUSED after an ICMP error, ...) is counted
 * in the service's errors and dropped, as UDP would.
 *
 * Toward the stack, a recvmmsg() batch is handed down in runs (UDP GSO,
 * docs/gso.md): consecutive datagrams of one flow that all have the size of
 * the first, except a shorter last one, go to udp_sendto_gso() as one
 * payload with that size as the segment size, so that in hw mode they leave
 * as one GSO frame and in sw mode as one sendmmsg() of frames that share the
 * payload. A run of one is an ordinary udp_sendto().
 *
 * A flow idle for SVC_UDP_IDLE_MS is closed by a per-service sweep timer.
 *
 * Caps (docs/security.md): every flow holds a host socket, so the process
 * keeps at most --max-udp-flows of them (stack_limits.udp_flows, default
 * SVC_UDP_MAX_FLOWS_DEFAULT), all UDP services together. All flows are on
 * their table's list, most recently used first; a new flow at the cap
 * closes the least recently used one of any service (counted in the global hits and in that
 * service's flows_evicted). A publish flow is also capped per remote source
 * address per service (--max-udp-flows-per-source, stack_limits
 * .udp_flows_per_source, default SVC_UDP_FLOWS_PER_SOURCE_DEFAULT): a new
 * flow from a source that holds that many already closes that source's own
 * least recently used flow of the service and takes its place (counted in
 * source_cap_hits). So a client that opens many short exchanges keeps
 * working (only its oldest, likely finished exchanges are recycled), and a
 * sender cycling through source ports only churns its own slots, never
 * another source's. The datagram is never dropped for a cap. Forward flows
 * count toward the total only: their "sources" are local clients, most
 * often all 127.0.0.1. The per-source count comes free with the flow lookup,
 * which already walks the service's flows.
 *
 * A flow closed by a cap (or the sweep) may still have an event in the
 * loop's current epoll batch, so its memory is only released at the end of
 * the loop turn (loop_defer()): closing takes it off
 * every list and closes its sockets at once, and svc_pub_backend() ignores a
 * closed flow (fd -1). Freeing it at once was a use after free under
 * integration/hardening_udp_flows in the ASan build.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/udp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/out.h"
#include "datapath/flow.h"
#include "datapath/svc/svc.h"

#define SVC_UDP_IDLE_MS		180000
#define SVC_UDP_SWEEP_MS	1000
#define SVC_UDP_BATCH		64
#define SVC_UDP_BUF		65536
/* One UDP_SEGMENT send toward a backend: the kernel's UDP_MAX_SEGMENTS is 64
 * on older kernels (128 on 6.18), and the payload stays within one datagram's
 * 65507 bytes */
#define SVC_UDP_GSO_SEGS	64
#define SVC_UDP_GSO_BYTES	65507

struct svc_flow {
	struct svc_flow *next;
	struct loop_defer defer;		/* freed at the end of the turn */
	struct flow flow;			/* in its stack's flow table, FLOW_SVC_UDP */
	struct svc_udp *svc;
	/* publish */
	int fd;
	struct loop_fd lfd;
	struct net_addr peer;
	uint16_t peer_port;
	struct net_addr local;
	/* forward */
	struct udp_sock *us;
	struct sockaddr_storage client;
	socklen_t client_len;
};

struct svc_udp {
	struct svc_spec spec;
	struct svc_udp_table *tbl;
	struct stack *st;
	struct udp_sock *us;		/* publish */
	int listen_fd;			/* forward */
	bool listen_owned;		/* bound here, not by the supervisor */
	struct loop_fd lfd;
	bool started;
	struct svc_flow *flows;
	unsigned int n_flows;
	struct loop_timer sweep;
	uint64_t to_target, from_target, errors, flows_created;
	uint64_t host_syscalls_in, host_syscalls_out;
	uint64_t gso_sends, gso_datagrams;	/* runs handed to udp_sendto_gso() */
	uint64_t host_gso_sends, host_gso_datagrams;	/* UDP_SEGMENT sends to the backend */
	bool host_gso_off;		/* the host refused UDP GSO once: one by one */
	uint64_t source_cap_hits;	/* new flows that recycled their source's oldest */
	uint64_t flows_evicted;		/* flows closed at the total cap */
};

/* A datagram on its way to a host socket, flushed by svc_udp_flush(). */
struct svc_txq_entry {
	struct svc_flow *flow;
	struct pkt *p;
};

/**
 * struct svc_udp_table - what the UDP services of one stack share
 * @st:		the stack
 * @cap_hits:	new flows that found the total cap reached
 * @rxbuf:	receive buffers for recvmmsg() (SVC_UDP_BATCH of SVC_UDP_BUF;
 *		only the pages datagrams touch are ever faulted in)
 * @txq:	datagrams on their way to host sockets, @txq_len of them
 * @from:	the senders of a forward's recvmmsg() batch
 */
struct svc_udp_table {
	struct stack *st;
	uint64_t cap_hits;
	uint8_t (*rxbuf)[SVC_UDP_BUF];
	struct svc_txq_entry txq[SVC_UDP_BATCH];
	unsigned int txq_len;
	struct sockaddr_storage from[SVC_UDP_BATCH];
};

static void svc_rx_prepare(struct svc_udp_table *t, struct mmsghdr *m, struct iovec *iov,
			   struct sockaddr_storage *from)
{
	unsigned int i;

	memset(m, 0, sizeof(*m) * SVC_UDP_BATCH);
	for (i = 0; i < SVC_UDP_BATCH; i++) {
		iov[i].iov_base = t->rxbuf[i];
		iov[i].iov_len = SVC_UDP_BUF;
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
		if (from) {
			m[i].msg_hdr.msg_name = &from[i];
			m[i].msg_hdr.msg_namelen = sizeof(from[i]);
		}
	}
}

/**
 * struct svc_dest - where a flow's queued datagrams go (svc_flow_dest())
 * @fd:		a publish flow's connected socket, or a forward's listener
 * @name:	a forward's client, NULL for a publish; @len its length
 * @gso:	the destination may take UDP_SEGMENT sends (inet, and the
 *		service never saw one refused)
 */
struct svc_dest {
	int fd;
	const struct sockaddr *name;
	socklen_t len;
	bool gso;
};

static struct svc_dest svc_flow_dest(const struct svc_flow *f)
{
	const struct svc_udp *s = f->svc;

	if (s->spec.kind == SVC_PUBLISH)
		return (struct svc_dest){ .fd = f->fd, .gso = !s->spec.target.is_unix && !s->host_gso_off };
	return (struct svc_dest){
		.fd = s->listen_fd,
		.name = (const struct sockaddr *)&f->client,
		.len = f->client_len,
		.gso = f->client.ss_family != AF_UNIX && !s->host_gso_off,
	};
}

/* @n datagrams of @f reached the host: its backend, or its client. */
static void svc_flow_delivered(struct svc_flow *f, unsigned int n)
{
	if (f->svc->spec.kind == SVC_PUBLISH)
		f->svc->to_target += n;
	else
		f->svc->from_target += n;
}

/*
 * The end of the part of [@i, @j) (one flow's queued datagrams) that one
 * UDP_SEGMENT send carries: datagrams the size of the first, a shorter last
 * one ending it, at most SVC_UDP_GSO_SEGS of them and SVC_UDP_GSO_BYTES in
 * all. A run of one is sent plainly.
 */
static unsigned int svc_host_gso_run(const struct svc_udp_table *t, unsigned int i, unsigned int j)
{
	uint32_t size = t->txq[i].p->len, total = size;
	unsigned int k;

	if (!size)
		return i + 1;
	for (k = i + 1; k < j && k - i < SVC_UDP_GSO_SEGS; k++) {
		uint32_t len = t->txq[k].p->len;

		if (!len || len > size || total + len > SVC_UDP_GSO_BYTES)
			break;
		total += len;
		if (len < size)
			return k + 1;	/* a shorter last datagram ends the run */
	}
	return k;
}

/*
 * Datagrams [@i, @end) of @t's queue to @d in one sendmsg() with
 * UDP_SEGMENT: the host's kernel carries them as one packet as far as the
 * receiving socket, which gets them one by one.
 * Return: 0, -EOPNOTSUPP when the socket or its route takes no UDP GSO (the
 * caller sends them one by one, and does so from then on), or -errno: the
 * datagrams were refused (counted by the caller, as UDP would lose them).
 */
static int svc_host_gso_send(struct svc_udp_table *t, struct svc_flow *f, const struct svc_dest *d,
			     unsigned int i, unsigned int end)
{
	struct iovec iov[SVC_UDP_GSO_SEGS];
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(uint16_t))];
	} ctrl;
	struct msghdr mh = {
		.msg_name = (void *)d->name,
		.msg_namelen = d->len,
		.msg_iov = iov,
		.msg_iovlen = end - i,
		.msg_control = ctrl.buf,
		.msg_controllen = sizeof(ctrl.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	uint16_t gso = (uint16_t)t->txq[i].p->len;
	unsigned int k;
	ssize_t ret;

	for (k = i; k < end; k++) {
		iov[k - i].iov_base = pkt_data(t->txq[k].p);
		iov[k - i].iov_len = t->txq[k].p->len;
	}
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(gso));
	memcpy(CMSG_DATA(c), &gso, sizeof(gso));
	do
		ret = sendmsg(d->fd, &mh, MSG_DONTWAIT);
	while (ret < 0 && errno == EINTR);
	f->svc->host_syscalls_out++;
	if (ret >= 0)
		return 0;
	/* EINVAL/EIO: GSO is not for this socket or route (docs/gso.md) */
	return errno == EINVAL || errno == EIO || errno == EOPNOTSUPP ? -EOPNOTSUPP : -errno;
}

/* Datagrams [@i, @end) of @t's queue to @d, one sendmmsg() a try. */
static void svc_host_send_each(struct svc_udp_table *t, struct svc_flow *f, const struct svc_dest *d,
			       unsigned int i, unsigned int end)
{
	struct mmsghdr m[SVC_UDP_BATCH];
	struct iovec iov[SVC_UDP_BATCH];
	struct svc_udp *s = f->svc;
	unsigned int k, n = end - i;
	int sent;

	for (k = 0; k < n; k++) {
		iov[k].iov_base = pkt_data(t->txq[i + k].p);
		iov[k].iov_len = t->txq[i + k].p->len;
		memset(&m[k], 0, sizeof(m[k]));
		m[k].msg_hdr.msg_iov = &iov[k];
		m[k].msg_hdr.msg_iovlen = 1;
		m[k].msg_hdr.msg_name = (void *)d->name;
		m[k].msg_hdr.msg_namelen = d->len;
	}
	k = 0;
	while (k < n) {
		sent = sendmmsg(d->fd, m + k, n - k, MSG_DONTWAIT);
		s->host_syscalls_out++;
		if (sent > 0) {
			svc_flow_delivered(f, (unsigned int)sent);
			k += sent;
			continue;
		}
		if (sent < 0 && errno == EINTR)
			continue;
		/* the head datagram was refused: count it, go on */
		s->errors++;
		stack_drop(s->st, DROP_SERVICE);
		k++;
	}
}

/**
 * svc_udp_flush() - send the datagrams queued for host sockets
 * @t:		the services' table
 *
 * Called at the end of every loop turn, when the queue is full, and before a
 * flow is freed. Consecutive datagrams of one flow leave together: to an
 * inet backend as UDP_SEGMENT sends (svc_host_gso_run()), to a unix one, or
 * where the host takes no UDP GSO, in one sendmmsg().
 */
void svc_udp_flush(struct svc_udp_table *t)
{
	unsigned int i = 0, j, k, end;

	while (i < t->txq_len) {
		struct svc_flow *f = t->txq[i].flow;
		struct svc_udp *s = f->svc;
		int ret;

		for (j = i; j < t->txq_len && t->txq[j].flow == f; j++)
			;
		while (i < j) {
			struct svc_dest d = svc_flow_dest(f);

			end = d.gso ? svc_host_gso_run(t, i, j) : j;
			if (end - i < 2) {
				svc_host_send_each(t, f, &d, i, end);
			} else if (!(ret = svc_host_gso_send(t, f, &d, i, end))) {
				svc_flow_delivered(f, end - i);
				s->host_gso_sends++;
				s->host_gso_datagrams += end - i;
			} else if (ret == -EOPNOTSUPP) {
				s->host_gso_off = true;
				svc_host_send_each(t, f, &d, i, end);
			} else {
				/* refused (a full socket, ECONNREFUSED): lost, as UDP would */
				s->errors += end - i;
				for (k = i; k < end; k++)
					stack_drop(s->st, DROP_SERVICE);
			}
			for (; i < end; i++)
				pkt_free(t->txq[i].p);
		}
	}
	t->txq_len = 0;
}

/* The stack's STACK_TURN_HAND_DOWN phase: what the turn queued leaves. */
static void svc_udp_turn_end(void *ctx, bool links_idle)
{
	(void)links_idle;
	svc_udp_flush(ctx);
}

/**
 * svc_udp_table_new() - the table the UDP services of @st share
 * @st:		the stack; the table flushes its queue in its turn end
 *
 * Return: the table, or NULL (out of memory, or no room for the hook).
 */
struct svc_udp_table *svc_udp_table_new(struct stack *st)
{
	struct svc_udp_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->st = st;
	t->rxbuf = malloc(sizeof(*t->rxbuf) * SVC_UDP_BATCH);
	if (!t->rxbuf || stack_on_turn_end(st, STACK_TURN_HAND_DOWN, svc_udp_turn_end, t) < 0) {
		free(t->rxbuf);
		free(t);
		return NULL;
	}
	return t;
}

/**
 * svc_udp_table_free() - after every service of @t was freed
 * @t:		the table, or NULL
 */
void svc_udp_table_free(struct svc_udp_table *t)
{
	if (!t)
		return;
	svc_udp_flush(t);
	stack_off_turn_end(t->st, svc_udp_turn_end, t);
	free(t->rxbuf);
	free(t);
}

/*
 * The end of the run of datagrams from @i in a recvmmsg() batch that can go
 * down as one GSO send: not truncated, not empty, the size of datagram @i
 * except a shorter last one, and with @from (forward) the same sender.
 */
static int svc_gso_run(const struct mmsghdr *m, int i, int n, const struct sockaddr_storage *from)
{
	unsigned int size = m[i].msg_len;
	int j;

	if (!size || (m[i].msg_hdr.msg_flags & MSG_TRUNC))
		return i + 1;
	for (j = i + 1; j < n; j++) {
		if ((m[j].msg_hdr.msg_flags & MSG_TRUNC) || !m[j].msg_len || m[j].msg_len > size)
			break;
		if (from && (m[j].msg_hdr.msg_namelen != m[i].msg_hdr.msg_namelen ||
			     memcmp(&from[j], &from[i], m[i].msg_hdr.msg_namelen)))
			break;
		if (m[j].msg_len < size)
			return j + 1;	/* a shorter last datagram ends the run */
	}
	return j;
}

/*
 * Datagrams [@i, @end) of the batch in the table's rxbuf to @dst through @us: one
 * udp_sendto_gso() for a run, udp_sendto() for one. Return: how many were
 * sent (0 when the stack refused them, counted in errors).
 */
static unsigned int svc_to_stack(struct svc_udp *s, struct udp_sock *us, const struct net_addr *src,
				 const struct net_addr *dst, uint16_t dport,
				 const struct mmsghdr *m, int i, int end)
{
	struct iovec iov[SVC_UDP_BATCH];
	int k;

	if (end - i == 1) {
		if (udp_sendto(us, src, dst, dport, s->tbl->rxbuf[i], m[i].msg_len) < 0) {
			s->errors++;
			return 0;
		}
		return 1;
	}
	for (k = i; k < end; k++) {
		iov[k - i].iov_base = s->tbl->rxbuf[k];
		iov[k - i].iov_len = m[k].msg_len;
	}
	if (udp_sendto_gso(us, src, dst, dport, iov, (unsigned int)(end - i), m[i].msg_len) < 0) {
		s->errors++;
		return 0;
	}
	s->gso_sends++;
	s->gso_datagrams += (uint64_t)(end - i);
	return (unsigned int)(end - i);
}

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

/* @f carried a datagram now: the most recently used flow */
static void svc_flow_touch(struct svc_flow *f)
{
	flow_touch(f->svc->st->flows, &f->flow, stack_now_ms(f->svc->st));
}

/* A new flow of @s, filed under @hash, is on its lists and counted. */
static void svc_flow_link(struct svc_udp *s, struct svc_flow *f, uint64_t hash)
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

static void svc_flow_free(struct svc_flow *f)
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

/* Before a new flow of @s: at the total cap, the least recently used flow goes. */
static void svc_make_room(struct svc_udp *s)
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

/* publish: the backend answered on a flow's host socket */
static void svc_pub_backend(struct loop_fd *h, uint32_t events)
{
	struct svc_flow *f = h->ctx;
	struct svc_udp *s = f->svc;
	struct mmsghdr m[SVC_UDP_BATCH];
	struct iovec iov[SVC_UDP_BATCH];
	int n, i, end;

	(void)events;
	if (f->fd < 0)
		return;	/* closed earlier in this loop turn */
	svc_rx_prepare(s->tbl, m, iov, NULL);
	n = recvmmsg(f->fd, m, SVC_UDP_BATCH, MSG_DONTWAIT, NULL);
	s->host_syscalls_in++;
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			s->errors++;	/* ECONNREFUSED: nobody at TARGET */
		return;
	}
	svc_flow_touch(f);
	for (i = 0; i < n; i = end) {
		end = svc_gso_run(m, i, n, NULL);
		if (m[i].msg_hdr.msg_flags & MSG_TRUNC) {
			s->errors++;
			continue;
		}
		s->from_target += svc_to_stack(s, s->us, &f->local, &f->peer, f->peer_port, m, i, end);
	}
}

static struct svc_flow *svc_pub_flow(struct svc_udp *s, const struct net_addr *src, uint16_t sport,
				     const struct net_addr *dst)
{
	const struct svc_endpoint *t = &s->spec.target;
	unsigned int per_source = svc_max_per_source(s->st), same = 0;
	uint64_t hash = svc_pub_hash(s, src, sport, dst);
	struct svc_flow *f, *oldest = NULL;
	struct flow *fl;
	int ret;

	for (fl = flow_first(s->st->flows, FLOW_SVC_UDP, hash); fl; fl = flow_next(fl)) {
		f = svc_flow_of(fl);
		if (f->svc == s && f->peer_port == sport && net_addr_eq(&f->peer, src) &&
		    net_addr_eq(&f->local, dst))
			return f;
	}
	/* a new flow: the per-source cap counts this service's flows from @src
	 * (a walk of its list, once per new flow, never per datagram) */
	for (f = s->flows; per_source && f; f = f->next) {
		if (!net_addr_eq(&f->peer, src))
			continue;
		same++;
		if (!oldest || f->flow.last_ms < oldest->flow.last_ms)
			oldest = f;
	}
	if (per_source && same >= per_source && oldest) {
		/* the source's own oldest flow makes room: it never takes another's */
		s->source_cap_hits++;
		svc_flow_free(oldest);
	}
	svc_make_room(s);
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->svc = s;
	f->peer = *src;
	f->peer_port = sport;
	f->local = *dst;
	f->fd = socket(t->sa.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (f->fd < 0)
		goto err;
	if (t->is_unix) {
		sa_family_t fam = AF_UNIX;

		/* autobind: an abstract address the backend can reply to */
		if (bind(f->fd, (struct sockaddr *)&fam, sizeof(fam)) < 0)
			goto err;
	}
	if (connect(f->fd, (const struct sockaddr *)&t->sa, t->sa_len) < 0)
		goto err;
	ret = loop_fd_add(s->st->loop, &f->lfd, f->fd, EPOLLIN, svc_pub_backend, f);
	if (ret < 0)
		goto err;
	svc_flow_link(s, f, hash);
	return f;
err:
	if (f->fd >= 0)
		close(f->fd);
	free(f);
	return NULL;
}

/* A datagram for @f's host destination joins the queue (svc_udp_flush()). */
static void svc_host_queue(struct svc_udp *s, struct svc_flow *f, const uint8_t *data, size_t len)
{
	struct pkt *p = pkt_alloc(len);

	if (!p) {
		s->errors++;
		stack_drop(s->st, DROP_NO_MEMORY);
		return;
	}
	memcpy(pkt_put(p, len), data, len);
	s->tbl->txq[s->tbl->txq_len].flow = f;
	s->tbl->txq[s->tbl->txq_len].p = p;
	if (++s->tbl->txq_len == SVC_UDP_BATCH)
		svc_udp_flush(s->tbl);
}

/* publish: a datagram from a peer arrived at the stack port */
static void svc_pub_recv(struct udp_sock *us, const struct net_addr *src, uint16_t sport,
			 const struct net_addr *dst, const uint8_t *data, size_t len)
{
	struct svc_udp *s = us->ctx;
	struct svc_flow *f = svc_pub_flow(s, src, sport, dst);

	if (!f) {
		s->errors++;
		stack_drop(s->st, DROP_SERVICE);
		return;
	}
	svc_flow_touch(f);
	svc_host_queue(s, f, data, len);
}

/* forward: REMOTE answered a flow's stack socket */
static void svc_fwd_remote(struct udp_sock *us, const struct net_addr *src, uint16_t sport,
			   const struct net_addr *dst, const uint8_t *data, size_t len)
{
	struct svc_flow *f = us->ctx;
	struct svc_udp *s = f->svc;

	(void)dst;
	if (sport != s->spec.remote_port || !net_addr_eq(src, &s->spec.remote)) {
		stack_drop(s->st, DROP_SERVICE);
		return;
	}
	svc_flow_touch(f);
	svc_host_queue(s, f, data, len);
}

/* forward: local clients sent datagrams to LISTEN */
static void svc_fwd_listen(struct loop_fd *h, uint32_t events)
{
	struct svc_udp *s = h->ctx;
	struct sockaddr_storage *from = s->tbl->from;
	struct mmsghdr m[SVC_UDP_BATCH];
	struct iovec iov[SVC_UDP_BATCH];
	int n, i, err, end;

	(void)events;
	svc_rx_prepare(s->tbl, m, iov, from);
	n = recvmmsg(s->listen_fd, m, SVC_UDP_BATCH, MSG_DONTWAIT, NULL);
	s->host_syscalls_in++;
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			s->errors++;
		return;
	}
	for (i = 0; i < n; i = end) {
		socklen_t flen = m[i].msg_hdr.msg_namelen;
		struct svc_flow *f = NULL;
		struct flow *fl;
		uint64_t hash;

		end = i + 1;
		if (m[i].msg_hdr.msg_flags & MSG_TRUNC) {
			s->errors++;
			continue;
		}
		if (flen > sizeof(from[i]))
			flen = sizeof(from[i]);
		hash = svc_fwd_hash(s, &from[i], flen);
		for (fl = flow_first(s->st->flows, FLOW_SVC_UDP, hash); fl; fl = flow_next(fl)) {
			f = svc_flow_of(fl);
			if (f->svc == s && f->client_len == flen && !memcmp(&f->client, &from[i], flen))
				break;
			f = NULL;
		}
		if (!f) {
			svc_make_room(s);
			f = calloc(1, sizeof(*f));
			if (!f) {
				s->errors++;
				continue;
			}
			f->svc = s;
			f->fd = -1;
			memcpy(&f->client, &from[i], flen);
			f->client_len = flen;
			f->us = udp_open(s->st, NULL, 0, svc_fwd_remote, f, &err);
			if (!f->us) {
				free(f);
				s->errors++;
				continue;
			}
			snprintf(f->us->owner, sizeof(f->us->owner), "forward udp:%s",
				 s->spec.text + 4);
			svc_flow_link(s, f, hash);
		}
		svc_flow_touch(f);
		end = svc_gso_run(m, i, n, from);
		s->to_target += svc_to_stack(s, f->us, NULL, &s->spec.remote, s->spec.remote_port,
					     m, i, end);
	}
}

static void svc_sweep(struct loop_timer *t)
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

/**
 * svc_udp_new() - create a UDP service and bind what needs binding now
 * @tbl:	the table of its stack's UDP services (svc_udp_table_new()); the
 *		stack must have its links: a publish ADDR must be one of ours
 * @spec:	parsed SPEC
 * @listen_fd:	a forward's socket the supervisor bound, taken over; -1: bind it here
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Called before privileges are dropped: a forward's LISTEN socket is bound
 * here (or by the supervisor), so it may be a low port or live in a
 * root-owned directory.
 * Return: the service, or NULL with @err filled (@listen_fd closed).
 */
struct svc_udp *svc_udp_new(struct svc_udp_table *tbl, const struct svc_spec *spec, int listen_fd, char *err,
			    size_t err_len)
{
	struct stack *st = tbl->st;
	const char *opt = svc_opt(spec);
	struct svc_udp *s = svc_new_alloc(sizeof(*s), spec, listen_fd, err, err_len);
	int ret;

	if (!s)
		return NULL;
	s->spec = *spec;
	s->tbl = tbl;
	s->st = st;
	s->listen_fd = listen_fd;
	s->listen_owned = listen_fd < 0;
	loop_timer_init(&s->sweep, svc_sweep, s);
	if (svc_listen_check(spec, listen_fd, err, err_len) < 0)
		goto err;
	if (spec->kind == SVC_PUBLISH) {
		s->us = udp_open(st, spec->addr.family ? &spec->addr : NULL, spec->port,
				 svc_pub_recv, s, &ret);
		if (!s->us) {
			snprintf(err, err_len, "%s %s: stack port %u: %s", opt, spec->text,
				 spec->port, ret == -EADDRNOTAVAIL ?
				 "the address is not one of the container's" : strerror(-ret));
			goto err;
		}
		snprintf(s->us->owner, sizeof(s->us->owner), "publish udp:%s", spec->text + 4);
		return s;
	}
	if (svc_listen_ready(spec, &s->listen_fd, err, err_len) < 0)
		goto err;
	return s;
err:
	svc_udp_free(s);
	return NULL;
}

/**
 * svc_udp_start() - watch the listening socket and start the idle sweep
 * Return: 0 or negative errno.
 */
int svc_udp_start(struct svc_udp *s)
{
	int ret;

	if (s->listen_fd >= 0) {
		ret = loop_fd_add(s->st->loop, &s->lfd, s->listen_fd, EPOLLIN, svc_fwd_listen, s);
		if (ret < 0)
			return ret;
	}
	s->started = true;
	loop_timer_arm(s->st->loop, &s->sweep, SVC_UDP_SWEEP_MS);
	return 0;
}

/**
 * svc_udp_free() - close every flow and socket (a unix LISTEN path is removed)
 * @s:	service or NULL
 */
void svc_udp_free(struct svc_udp *s)
{
	if (!s)
		return;
	loop_timer_cancel(s->st->loop, &s->sweep);
	while (s->flows)
		svc_flow_free(s->flows);
	udp_close(s->us);
	svc_listen_close(s->started ? s->st->loop : NULL, &s->lfd, s->listen_fd, &s->spec, s->listen_owned);
	free(s);
}

/**
 * svc_udp_stats() - one row of the services table
 * @v:	the instances of one service, one per shard that runs it (NULL:
 *	a shard that does not), summed; at least one is not NULL
 * @n:	how many
 * @o:	the printer
 */
void svc_udp_stats(const struct svc_udp *const *v, unsigned int n, struct out *o)
{
	enum { FLOWS, CREATED, TO, FROM, ERRORS, SYS_IN, SYS_OUT, GSO, GSO_DGRAMS, HOST_GSO, HOST_GSO_DGRAMS,
	       SOURCE_CAP, EVICTED, MAX };
	static const char *const names[MAX] = {
		"flows", "flows_created", "to_target", "from_target", "errors", "host_syscalls_in",
		"host_syscalls_out", "gso_sends", "gso_datagrams", "host_gso_sends", "host_gso_datagrams",
		"source_cap_hits", "flows_evicted",
	};
	const struct svc_udp *first = NULL;
	uint64_t sum[MAX] = { 0 };
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct svc_udp *s = v[i];

		if (!s)
			continue;
		first = first ? first : s;
		sum[FLOWS] += s->n_flows;
		sum[CREATED] += s->flows_created;
		sum[TO] += s->to_target;
		sum[FROM] += s->from_target;
		sum[ERRORS] += s->errors;
		sum[SYS_IN] += s->host_syscalls_in;
		sum[SYS_OUT] += s->host_syscalls_out;
		sum[GSO] += s->gso_sends;
		sum[GSO_DGRAMS] += s->gso_datagrams;
		sum[HOST_GSO] += s->host_gso_sends;
		sum[HOST_GSO_DGRAMS] += s->host_gso_datagrams;
		sum[SOURCE_CAP] += s->source_cap_hits;
		sum[EVICTED] += s->flows_evicted;
	}
	if (first)
		svc_stats_row(o, &first->spec, names, sum, MAX);
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
