// SPDX-License-Identifier: MIT
/*
 * svc_tcp.c - TCP publish and forward services
 *
 * Theory of operation
 *
 * Every service connection is a "pair": a connection of the stack's TCP
 * engine (struct tcp_conn) joined to a stream socket in the datapath's own
 * netns (TCP or unix), with bytes copied between them in both directions.
 *
 * publish tcp:[ADDR:]PORT=TARGET
 *   The engine listens on PORT (ADDR, or any address of both families).
 *   When a handshake completes, the accept callback opens a non-blocking
 *   socket to TARGET. Until that connect finishes, data from the peer waits
 *   in the engine's receive buffer (its window closes when it is full). A
 *   connect that fails resets the container's connection: the peer sees
 *   ECONNRESET, as if the service had died right after accepting.
 *
 * forward tcp:LISTEN=REMOTE
 *   A listening socket bound before privileges are dropped. Each accepted
 *   client gets an engine connection to REMOTE from our address on the
 *   route; the client's bytes are read only once it is established. A
 *   refused or timed-out connect closes the client's socket (EOF).
 *
 * Backpressure. Host -> stack: the host socket is peeked (MSG_PEEK), the
 *   engine takes what fits its send buffer (which grows with the window),
 *   and only those bytes are then taken from the socket; when the buffer is
 *   full the socket leaves epoll until TCP_EV_WRITABLE. Stack -> host: received data is written straight
 *   from the engine's receive ring (tcp_peek()/writev()/tcp_consume()); what
 *   the host socket does not take stays there, closing the advertised
 *   window, and EPOLLOUT resumes. Memory per pair is thus bounded by the
 *   engine's buffers plus the kernel socket's.
 *
 * Half-close. EOF from the host socket becomes tcp_shutdown_write() (FIN
 *   after the buffered data); the peer's FIN becomes shutdown(SHUT_WR) once
 *   everything before it was written. When both directions are finished
 *   the pair closes both ends gracefully. A reset on either side resets the
 *   other (tcp_abort(), or close with SO_LINGER 0).
 *
 * Lifetime. A finished pair is unlinked and its fd closed at once, but its
 * memory is freed at the end of the loop turn: epoll may still hold an event
 * for it in this turn, and engine callbacks may be on the stack. Handlers
 * check the dead flag first. The host socket is registered with epoll only
 * while the pair wants to read or write it (level-triggered), so a socket
 * that hung up cannot spin the loop while the pair waits for the engine.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "datapath/net/tcp_glue.h"
#include "common/out.h"
#include "datapath/svc/svc_tcp.h"

#define SVC_TCP_BACKLOG		SVC_LISTEN_BACKLOG
#define SVC_TCP_ACCEPT_BATCH	64
#define SVC_TCP_READ_ROUNDS	16
#define SVC_TCP_BUF		65536

struct svc_tcp;

/**
 * struct svc_tcp_pair - one service connection: engine side and host side
 * @host_up:	the host socket is connected
 * @conn_up:	the engine connection is established
 * @host_eof:	the host socket sent EOF (our FIN is queued in the engine)
 * @conn_eof:	the peer sent FIN through the engine
 * @host_shut:	shutdown(SHUT_WR) done on the host socket
 * @want_in, @want_out: epoll interest in the host socket
 * @in_epoll:	the host socket is registered
 * @dead:	finished; freed at the end of the turn (@defer)
 */
struct svc_tcp_pair {
	struct svc_tcp_pair *next, *prev;
	struct loop_defer defer;
	struct svc_tcp *svc;
	struct tcp_conn *c;
	int fd;
	struct loop_fd lfd;
	bool host_up, conn_up, host_eof, conn_eof, host_shut;
	bool want_in, want_out, in_epoll, dead;
};

struct svc_tcp {
	struct svc_spec spec;
	struct stack *st;
	struct tcp_listener *ls[2];	/* publish: IPv4 and/or IPv6 */
	int listen_fd;			/* forward */
	bool listen_owned;		/* bound here, not by the supervisor */
	struct loop_fd lfd;
	bool started;
	struct svc_tcp_pair *pairs;
	unsigned int n_pairs;
	uint64_t accepted, connect_failed, resets_in, resets_out, closed;
	uint64_t to_target, from_target, errors;
};

/* Scratch for one pump; per thread, so that every shard has its own. */
static __thread uint8_t svc_tcp_buf[SVC_TCP_BUF];

static void svc_tcp_pair_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err);

static uint64_t svc_tcp_now(const struct svc_tcp *s)
{
	return tcp_glue_now_us(s->st);
}

/* An engine connection no pair owns any more: nothing to tell. */
static void svc_tcp_orphan_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	(void)c;
	(void)user;
	(void)ev;
	(void)err;
}

/* the end of the turn after a pair finished: no callback of the turn names it any more */
static void svc_tcp_pair_release(struct loop_defer *d)
{
	free(loop_defer_owner(d, struct svc_tcp_pair, defer));
}

/*
 * End a pair. @rst_conn: reset the engine connection (else close it
 * gracefully); @rst_host: reset the host socket (SO_LINGER 0, else close).
 */
static void svc_tcp_pair_kill(struct svc_tcp_pair *p, bool rst_conn, bool rst_host)
{
	struct svc_tcp *s = p->svc;
	struct tcp_conn *c = p->c;

	if (p->dead)
		return;
	p->dead = true;
	p->c = NULL;
	if (c) {
		tcp_conn_set_user(c, svc_tcp_orphan_event, NULL);
		if (rst_conn)
			tcp_abort(c, svc_tcp_now(s));
		else
			tcp_close(c, svc_tcp_now(s));
	}
	if (p->fd >= 0) {
		if (rst_host) {
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };

			setsockopt(p->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		}
		if (p->in_epoll)
			loop_fd_del(s->st->loop, &p->lfd);
		close(p->fd);
		p->fd = -1;
	}
	if (p->prev)
		p->prev->next = p->next;
	else
		s->pairs = p->next;
	if (p->next)
		p->next->prev = p->prev;
	s->n_pairs--;
	loop_defer(s->st->loop, &p->defer, svc_tcp_pair_release);
}

static void svc_tcp_host_event(struct loop_fd *h, uint32_t events);

/* Register the host socket for what the pair wants now; finish a done pair. */
static void svc_tcp_pair_update(struct svc_tcp_pair *p)
{
	struct svc_tcp *s = p->svc;
	uint32_t ev;
	int ret;

	if (p->dead)
		return;
	if (p->host_eof && p->conn_eof && p->host_shut) {
		s->closed++;
		svc_tcp_pair_kill(p, false, false);
		return;
	}
	ev = (p->want_in ? EPOLLIN : 0) | (p->want_out ? EPOLLOUT : 0);
	if (!ev) {
		if (p->in_epoll)
			loop_fd_del(s->st->loop, &p->lfd);
		p->in_epoll = false;
		return;
	}
	ret = p->in_epoll ? loop_fd_mod(s->st->loop, &p->lfd, ev) :
		loop_fd_add(s->st->loop, &p->lfd, p->fd, ev, svc_tcp_host_event, p);
	if (ret < 0) {
		s->errors++;
		svc_tcp_pair_kill(p, true, true);
		return;
	}
	p->in_epoll = true;
}

/* Stack -> host: write what the engine received; SHUT_WR after the peer's FIN. */
static void svc_tcp_to_host(struct svc_tcp_pair *p)
{
	struct svc_tcp *s = p->svc;
	struct iovec iov[2];
	ssize_t w;
	size_t total;
	int n, i;

	if (p->dead || !p->host_up || !p->c)
		return;
	p->want_out = false;
	for (;;) {
		n = tcp_peek(p->c, iov);
		if (n <= 0)
			break;
		for (total = 0, i = 0; i < n; i++)
			total += iov[i].iov_len;
		w = writev(p->fd, iov, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			p->want_out = true;
			return;
		}
		if (w < 0) {
			/* the host side reset or went away: reset the peer */
			s->resets_out++;
			svc_tcp_pair_kill(p, true, true);
			return;
		}
		tcp_consume(p->c, (size_t)w, svc_tcp_now(s));
		if (p->dead)
			return;
		s->from_target += s->spec.kind == SVC_FORWARD ? (uint64_t)w : 0;
		s->to_target += s->spec.kind == SVC_PUBLISH ? (uint64_t)w : 0;
		if ((size_t)w < total) {
			p->want_out = true;
			return;
		}
	}
	if (p->conn_eof && !p->host_shut) {
		shutdown(p->fd, SHUT_WR);
		p->host_shut = true;
	}
}

/*
 * Host -> stack: peek at what the socket holds, offer it to the engine (which
 * grows its send buffer as the window grows), and only then take from the
 * socket the bytes the engine accepted. A short tcp_send() means the buffer
 * is full: the socket leaves epoll until TCP_EV_WRITABLE.
 */
static void svc_tcp_from_host(struct svc_tcp_pair *p)
{
	struct svc_tcp *s = p->svc;
	int trunc = p->svc->spec.kind == SVC_PUBLISH ? !s->spec.target.is_unix :
		!s->spec.listen.is_unix;
	unsigned int round;
	ssize_t n, sent, got;

	if (p->dead || !p->host_up || !p->conn_up || p->host_eof || !p->c)
		return;
	for (round = 0; round < SVC_TCP_READ_ROUNDS; round++) {
		n = recv(p->fd, svc_tcp_buf, sizeof(svc_tcp_buf), MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			p->want_in = true;
			return;
		}
		if (n < 0) {
			s->resets_out++;
			svc_tcp_pair_kill(p, true, true);
			return;
		}
		if (n == 0) {
			p->host_eof = true;
			p->want_in = false;
			tcp_shutdown_write(p->c, svc_tcp_now(s));
			return;
		}
		sent = tcp_send(p->c, svc_tcp_buf, (size_t)n, svc_tcp_now(s));
		if (p->dead)
			return;
		if (sent < 0) {
			s->errors++;
			svc_tcp_pair_kill(p, true, true);
			return;
		}
		/* drop the accepted bytes from the socket (TCP: without a copy) */
		do {
			got = recv(p->fd, svc_tcp_buf, (size_t)sent,
				   MSG_DONTWAIT | (trunc ? MSG_TRUNC : 0));
		} while (got < 0 && errno == EINTR);
		if (got != sent) {
			s->errors++;
			svc_tcp_pair_kill(p, true, true);
			return;
		}
		s->to_target += s->spec.kind == SVC_FORWARD ? (uint64_t)sent : 0;
		s->from_target += s->spec.kind == SVC_PUBLISH ? (uint64_t)sent : 0;
		if (sent < n) {
			p->want_in = false;	/* TCP_EV_WRITABLE turns it back on */
			return;
		}
	}
	p->want_in = true;	/* more may be there: level-triggered epoll says so */
}

/* publish: the connect to TARGET finished (or failed) */
static void svc_tcp_host_connected(struct svc_tcp_pair *p)
{
	struct svc_tcp *s = p->svc;
	socklen_t len = sizeof(int);
	int err = 0;

	if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err) {
		s->connect_failed++;
		svc_tcp_pair_kill(p, true, false);	/* RST to the container's peer */
		return;
	}
	p->host_up = true;
	p->want_out = false;
	p->want_in = !p->host_eof;
	svc_tcp_to_host(p);
}

static void svc_tcp_host_event(struct loop_fd *h, uint32_t events)
{
	struct svc_tcp_pair *p = h->ctx;

	if (p->dead)
		return;
	if (!p->host_up) {
		if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
			svc_tcp_host_connected(p);
		svc_tcp_pair_update(p);
		return;
	}
	if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
		svc_tcp_to_host(p);
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		svc_tcp_from_host(p);
	svc_tcp_pair_update(p);
}

/* The engine's events for a pair's connection (may run inside tcp_input()). */
static void svc_tcp_pair_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	struct svc_tcp_pair *p = user;
	struct svc_tcp *s = p->svc;

	(void)c;
	if (p->dead)
		return;
	switch (ev) {
	case TCP_EV_CONNECTED:
		p->conn_up = true;
		p->want_in = p->host_up && !p->host_eof;
		break;
	case TCP_EV_READABLE:
		svc_tcp_to_host(p);
		break;
	case TCP_EV_WRITABLE:
		p->want_in = p->host_up && p->conn_up && !p->host_eof;
		break;
	case TCP_EV_PEER_FIN:
		p->conn_eof = true;
		svc_tcp_to_host(p);
		break;
	case TCP_EV_RESET:
		if (!p->conn_up) {
			/* forward: REMOTE refused or did not answer; the client sees EOF */
			s->connect_failed++;
			svc_tcp_pair_kill(p, false, false);
		} else {
			(void)err;
			s->resets_in++;
			svc_tcp_pair_kill(p, false, true);
		}
		return;
	case TCP_EV_CLOSED:
	default:
		break;
	}
	svc_tcp_pair_update(p);
}

static struct svc_tcp_pair *svc_tcp_pair_new(struct svc_tcp *s, int fd)
{
	struct svc_tcp_pair *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->svc = s;
	p->fd = fd;
	p->next = s->pairs;
	if (s->pairs)
		s->pairs->prev = p;
	s->pairs = p;
	s->n_pairs++;
	return p;
}

static void svc_tcp_nodelay(int fd, int family)
{
	int one = 1;

	if (family == AF_INET || family == AF_INET6)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* publish: a handshake completed; open the socket to TARGET */
static int svc_tcp_pub_accept(struct tcp_listener *l, void *user, struct tcp_conn *c)
{
	struct svc_tcp *s = user;
	const struct svc_endpoint *t = &s->spec.target;
	struct svc_tcp_pair *p;
	int fd, ret;

	(void)l;
	fd = socket(t->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		s->errors++;
		return -errno;
	}
	svc_tcp_nodelay(fd, t->sa.ss_family);
	if (connect(fd, (const struct sockaddr *)&t->sa, t->sa_len) < 0 && errno != EINPROGRESS) {
		ret = -errno;
		close(fd);
		s->connect_failed++;
		return ret;	/* the engine answers with RST */
	}
	p = svc_tcp_pair_new(s, fd);
	if (!p) {
		close(fd);
		s->errors++;
		return -ENOMEM;
	}
	/* EPOLLOUT: the connect finished */
	ret = loop_fd_add(s->st->loop, &p->lfd, fd, EPOLLOUT, svc_tcp_host_event, p);
	if (ret < 0) {
		s->errors++;
		svc_tcp_pair_kill(p, false, false);	/* no connection yet: closes the fd */
		return ret;
	}
	s->accepted++;
	p->in_epoll = true;
	p->want_out = true;
	p->c = c;
	p->conn_up = true;
	tcp_conn_set_user(c, svc_tcp_pair_event, p);
	return 0;
}

/* Connection events before the accept callback took the connection: none expected. */
static void svc_tcp_listen_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	(void)c;
	(void)user;
	(void)ev;
	(void)err;
}

/* forward: local clients connected to LISTEN */
static void svc_tcp_fwd_accept(struct loop_fd *h, uint32_t events)
{
	struct svc_tcp *s = h->ctx;
	struct tcp_endpoint local, remote;
	struct tcp_conn_opts opts;
	struct svc_tcp_pair *p;
	unsigned int i;
	int fd, ret;

	(void)events;
	memset(&local, 0, sizeof(local));
	memset(&remote, 0, sizeof(remote));
	remote.addr = s->spec.remote;
	remote.port = s->spec.remote_port;
	tcp_glue_conn_opts(s->st, s->spec.remote.family, &s->spec.remote, &opts);
	for (i = 0; i < SVC_TCP_ACCEPT_BATCH; i++) {
		fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				s->errors++;
			return;
		}
		svc_tcp_nodelay(fd, s->spec.listen.sa.ss_family);
		ret = tcp_glue_pick_src(s->st, &s->spec.remote, &local.addr);
		p = ret < 0 ? NULL : svc_tcp_pair_new(s, fd);
		if (!p) {
			close(fd);
			s->errors++;
			continue;
		}
		s->accepted++;
		p->host_up = true;
		ret = tcp_connect(tcp_glue_stack(s->st), &local, &remote, &opts, svc_tcp_pair_event, p,
				  svc_tcp_now(s), &p->c);
		if (ret < 0) {
			p->c = NULL;
			s->connect_failed++;
			svc_tcp_pair_kill(p, false, false);
			continue;
		}
		svc_tcp_pair_update(p);	/* nothing to read before CONNECTED */
	}
}

static int svc_tcp_listen_family(struct svc_tcp *s, uint8_t family, const struct net_addr *addr,
				 struct tcp_listener **out)
{
	struct tcp_endpoint local;
	struct tcp_conn_opts opts;

	memset(&local, 0, sizeof(local));
	if (addr)
		local.addr = *addr;
	local.addr.family = family;
	local.port = s->spec.port;
	tcp_glue_conn_opts(s->st, family, NULL, &opts);
	return tcp_listen(tcp_glue_stack(s->st), &local, SVC_TCP_BACKLOG, &opts, svc_tcp_pub_accept,
			  svc_tcp_listen_event, s, out);
}

/**
 * svc_tcp_new() - create a TCP service and bind what needs binding now
 * @st:		stack (with its links: a publish ADDR must be one of ours)
 * @spec:	parsed SPEC, proto IPPROTO_TCP
 * @listen_fd:	a forward's listener the supervisor bound, taken over; -1: bind it here
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Called before privileges are dropped: a forward's LISTEN socket is bound
 * and listening here (or by the supervisor), so it may be a low port or in
 * a root-owned directory.
 * Return: the service, or NULL with @err filled (@listen_fd closed).
 */
struct svc_tcp *svc_tcp_new(struct stack *st, const struct svc_spec *spec, int listen_fd, char *err,
			    size_t err_len)
{
	const char *opt = svc_opt(spec);
	struct svc_tcp *s = svc_new_alloc(sizeof(*s), spec, listen_fd, err, err_len);
	int ret = 0;

	if (!s)
		return NULL;
	s->spec = *spec;
	s->st = st;
	s->listen_fd = listen_fd;
	s->listen_owned = listen_fd < 0;
	if (svc_listen_check(spec, listen_fd, err, err_len) < 0)
		goto err;
	if (!tcp_glue_stack(st)) {
		snprintf(err, err_len, "%s %s: the stack has no TCP", opt, spec->text);
		goto err;
	}
	if (spec->kind == SVC_PUBLISH) {
		const struct net_addr *a = &spec->addr;

		if ((a->family == AF_INET && !ipv4_is_ours(st, a->a.v4)) ||
		    (a->family == AF_INET6 && !ipv6_find_addr(st, &a->a.v6, NULL))) {
			snprintf(err, err_len, "%s %s: stack port %u: the address is not one of the container's",
				 opt, spec->text, spec->port);
			goto err;
		}
		if (a->family != AF_INET6)
			ret = svc_tcp_listen_family(s, AF_INET, a->family ? a : NULL, &s->ls[0]);
		if (!ret && a->family != AF_INET)
			ret = svc_tcp_listen_family(s, AF_INET6, a->family ? a : NULL, &s->ls[1]);
		if (ret < 0) {
			snprintf(err, err_len, "%s %s: stack port %u: %s", opt, spec->text, spec->port,
				 strerror(-ret));
			goto err;
		}
		return s;
	}
	if (svc_listen_ready(spec, &s->listen_fd, err, err_len) < 0)
		goto err;
	return s;
err:
	svc_tcp_free(s);
	return NULL;
}

/**
 * svc_tcp_start() - watch the listening socket (forward)
 * Return: 0 or negative errno.
 */
int svc_tcp_start(struct svc_tcp *s)
{
	s->started = true;
	if (s->listen_fd >= 0)
		return loop_fd_add(s->st->loop, &s->lfd, s->listen_fd, EPOLLIN, svc_tcp_fwd_accept, s);
	return 0;
}

/**
 * svc_tcp_free() - reset every connection, close the listeners (a unix
 * LISTEN path is removed)
 * @s:	service or NULL
 */
void svc_tcp_free(struct svc_tcp *s)
{
	unsigned int i;

	if (!s)
		return;
	while (s->pairs)
		svc_tcp_pair_kill(s->pairs, true, true);
	for (i = 0; i < 2; i++)
		if (s->ls[i])
			tcp_listener_close(s->ls[i]);
	svc_listen_close(s->started ? s->st->loop : NULL, &s->lfd, s->listen_fd, &s->spec, s->listen_owned);
	free(s);
}

/**
 * svc_tcp_stats() - one row of the services table
 * @v:	the instances of one service, one per shard that runs it (NULL:
 *	a shard that does not), summed; at least one is not NULL
 * @n:	how many
 * @o:	the printer
 */
void svc_tcp_stats(const struct svc_tcp *const *v, unsigned int n, struct out *o)
{
	enum { CONNS, ACCEPTED, CLOSED, FAILED, RST_IN, RST_OUT, TO, FROM, ERRORS, MAX };
	static const char *const names[MAX] = { "conns", "accepted", "closed", "connect_failed", "resets_in",
						"resets_out", "to_target", "from_target", "errors" };
	const struct svc_tcp *first = NULL;
	uint64_t sum[MAX] = { 0 };
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct svc_tcp *s = v[i];

		if (!s)
			continue;
		first = first ? first : s;
		sum[CONNS] += s->n_pairs;
		sum[ACCEPTED] += s->accepted;
		sum[CLOSED] += s->closed;
		sum[FAILED] += s->connect_failed;
		sum[RST_IN] += s->resets_in;
		sum[RST_OUT] += s->resets_out;
		sum[TO] += s->to_target;
		sum[FROM] += s->from_target;
		sum[ERRORS] += s->errors;
	}
	if (first)
		svc_stats_row(o, &first->spec, names, sum, MAX);
}
