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
 * Files: this one runs the services (their sockets, the datagrams' way
 * between the stack and the host, per kind); svc_udp_flow.c keeps the
 * flows (lookup, lifetime, the idle sweep, the caps); svc_udp_pump.c moves
 * datagrams in batches (the queue toward host sockets and its flush,
 * recvmmsg() batches handed down to the stack in GSO runs). Each includes
 * svc_udp_int.h; this file calls both, svc_udp_flow.c calls the pump's
 * flush (a closing flow's datagrams leave first), the pump calls neither.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "common/out.h"
#include "datapath/svc/svc_udp_int.h"

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
	svc_pump_rx_prepare(s->tbl, m, iov, NULL);
	n = recvmmsg(f->fd, m, SVC_UDP_BATCH, MSG_DONTWAIT, NULL);
	s->host_syscalls_in++;
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			s->errors++;	/* ECONNREFUSED: nobody at TARGET */
		return;
	}
	svc_flow_touch(f);
	for (i = 0; i < n; i = end) {
		end = svc_pump_run(m, i, n, NULL);
		if (m[i].msg_hdr.msg_flags & MSG_TRUNC) {
			s->errors++;
			continue;
		}
		s->from_target += svc_pump_to_stack(s, s->us, &f->local, &f->peer, f->peer_port, m, i, end);
	}
}

/* publish: the flow of a peer's datagram, a new one (and its backend socket) if need be */
static struct svc_flow *svc_pub_flow(struct svc_udp *s, const struct net_addr *src, uint16_t sport,
				     const struct net_addr *dst)
{
	const struct svc_endpoint *t = &s->spec.target;
	struct svc_flow *f;
	uint64_t hash;
	int ret;

	f = svc_flow_find_pub(s, src, sport, dst, &hash);
	if (f)
		return f;
	svc_flow_source_room(s, src);
	svc_flow_make_room(s);
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
	svc_pump_to_host(s, f, data, len);
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
	svc_pump_to_host(s, f, data, len);
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
	svc_pump_rx_prepare(s->tbl, m, iov, from);
	n = recvmmsg(s->listen_fd, m, SVC_UDP_BATCH, MSG_DONTWAIT, NULL);
	s->host_syscalls_in++;
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			s->errors++;
		return;
	}
	for (i = 0; i < n; i = end) {
		socklen_t flen = m[i].msg_hdr.msg_namelen;
		struct svc_flow *f;
		uint64_t hash;

		end = i + 1;
		if (m[i].msg_hdr.msg_flags & MSG_TRUNC) {
			s->errors++;
			continue;
		}
		if (flen > sizeof(from[i]))
			flen = sizeof(from[i]);
		f = svc_flow_find_fwd(s, &from[i], flen, &hash);
		if (!f) {
			svc_flow_make_room(s);
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
		end = svc_pump_run(m, i, n, from);
		s->to_target += svc_pump_to_stack(s, f->us, NULL, &s->spec.remote, s->spec.remote_port,
						  m, i, end);
	}
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
	loop_timer_init(&s->sweep, svc_flow_sweep, s);
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
