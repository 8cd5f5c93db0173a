// SPDX-License-Identifier: MIT
/*
 * shard.c - a stack per thread, both halves of each conversation on one
 *
 * Theory of operation (docs/architecture.md, "Shards")
 *
 * netsetup's steering program (common/flowhash.c) puts every packet of a
 * conversation, from the container's TUN queue or from a link's fanout
 * group, on one shard's channel. A shard is a thread with its own loop,
 * stack (both TCP engines, the face and its flows, the packet pool), a copy
 * of the policy whose hits are its own, and its slice of the supervisor's
 * ledger; nothing on the per-packet path is shared or locked. Shard 0 is
 * the main thread, which also holds the signals, the control socket and
 * the supervisor's socket.
 *
 * Shards talk through inboxes: a list under a mutex and an eventfd in the
 * receiver's loop. Three messages:
 *   NEIGH  a neighbour one shard learned (an ARP or NDP answer reaches one
 *          shard, the program sends what is not IP to shard 0): the others
 *          adopt it, and send what waited for it;
 *   STOP   leave the loop: reset the face's connections, flush, return;
 *   PARK   `datapath stats`: wait until shard 0 has read every shard's
 *          counters (shards_pause()), so that nothing is read while written.
 *
 * Start: shards_grow() makes shards 1..n-1 when the configuration says the
 * links are steered; their threads (shards_spawn()) wait at a gate until
 * shards_go(), so that the seccomp filter (loaded with TSYNC) and each
 * stack's start happen before any of them runs. A shard that fails takes
 * the process down (abort()): the supervisor starts the next datapath, all
 * shards at once, and a container is never half served.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "datapath/face/face.h"
#include "datapath/proc/limits.h"
#include "datapath/pkt.h"
#include "datapath/proc/shard.h"

enum shard_msg_kind {
	SHARD_MSG_NEIGH,
	SHARD_MSG_STOP,
	SHARD_MSG_PARK,
};

struct shard_msg {
	struct shard_msg *next;
	enum shard_msg_kind kind;
	int ifindex;
	uint8_t family;
	bool confirmed;
	union proto_inaddr addr;
	uint8_t mac[6];
};

static void shard_post(struct shard *to, struct shard_msg *m)
{
	uint64_t one = 1;

	m->next = NULL;
	pthread_mutex_lock(&to->lock);
	if (to->inbox_tail)
		to->inbox_tail->next = m;
	else
		to->inbox = m;
	to->inbox_tail = m;
	pthread_mutex_unlock(&to->lock);
	if (write(to->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is full, the reader is woken anyway */
	}
}

/*
 * A PARK message: stand still until shard 0 has read us. A pause counts
 * each shard once (a PARK of an earlier pause that gave up on us may still
 * be queued), and a shard waits for the pause it parked for only: when
 * shard 0 releases one pause and starts the next before this thread has
 * woken, the new pause must not find it held but uncounted, and give up on
 * it a second later. It leaves, and parks again for the new pause's PARK.
 */
static void shard_park(struct shard *sh)
{
	struct shards *s = sh->set;
	uint64_t gen;

	pthread_mutex_lock(&s->lock);
	gen = s->pause_gen;
	if (s->hold && sh->parked_gen != gen) {
		sh->parked_gen = gen;
		s->parked++;
		pthread_cond_broadcast(&s->cond);
		while (s->hold && s->pause_gen == gen)
			pthread_cond_wait(&s->cond, &s->lock);
	}
	pthread_mutex_unlock(&s->lock);
}

static void shard_wake(struct loop_fd *h, uint32_t events)
{
	struct shard *sh = h->ctx;
	struct shard_msg *m, *next;
	uint64_t n;

	(void)events;
	if (read(sh->wake_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: another wake-up took it; the list says what is there */
	}
	pthread_mutex_lock(&sh->lock);
	m = sh->inbox;
	sh->inbox = sh->inbox_tail = NULL;
	pthread_mutex_unlock(&sh->lock);
	for (; m; m = next) {
		struct link *l;

		next = m->next;
		switch (m->kind) {
		case SHARD_MSG_NEIGH:
			l = stack_link_by_ifindex(&sh->st, (uint32_t)m->ifindex);
			if (l)
				neigh_adopt(&sh->st, l, m->family, &m->addr, m->mac, m->confirmed);
			break;
		case SHARD_MSG_STOP:
			loop_stop(sh->loop);
			break;
		case SHARD_MSG_PARK:
			shard_park(sh);
			break;
		}
		free(m);
	}
}

/* A neighbour this shard's stack learned: every other shard adopts it. */
static void shard_neigh_learned(void *ctx, const struct link *l, uint8_t family, const union proto_inaddr *addr,
				const uint8_t *mac, bool confirmed)
{
	struct shard *sh = ctx;
	struct shards *s = sh->set;
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		struct shard_msg *m;

		if (i == sh->index)
			continue;
		m = calloc(1, sizeof(*m));
		if (!m)
			continue;	/* the other shard resolves it itself */
		m->kind = SHARD_MSG_NEIGH;
		m->ifindex = (int)l->ifindex;
		m->family = family;
		m->confirmed = confirmed;
		m->addr = *addr;
		memcpy(m->mac, mac, sizeof(m->mac));
		shard_post(s->sh[i], m);
	}
}

/*
 * What a shard's share of the process is, as one of @n: its slice of the
 * ledger, and of every cap that is a total (limits_share()): the defaults
 * as much as those given on the command line, so that N shards hold no
 * more connections, buffer memory or flows, nor send more ICMP errors, than
 * one would. Done again for shard 0 when the set grows, before any pair or
 * connection is made.
 */
static int shard_share_out(struct shard *sh, unsigned int n)
{
	const struct shard_conf *c = &sh->set->conf;
	struct stack_limits share;
	int ret;

	if (c->ledger) {
		ledger_unmap(&sh->ledger);	/* a slice: the mapping stays */
		ledger_share(c->ledger, sh->index, n, &sh->ledger);
		sh->st.ledger = &sh->ledger;
	}
	ret = limits_apply(&sh->st, &c->limits);	/* the defaults filled in */
	if (ret < 0 || n == 1)
		return ret;
	limits_share(&sh->st.limits, n, &share);
	return limits_apply(&sh->st, &share);
}

static void shard_free(struct shard *sh)
{
	struct shard_msg *m, *next;
	unsigned int i;

	for (i = 0; i < sh->set->n_svcs; i++)
		svc_free(sh->svc[i]);
	svc_udp_table_free(sh->svc_udp);
	stack_fini(&sh->st);	/* its pairs leave the ledger slice first */
	loop_fd_del(sh->loop, &sh->wake_lfd);
	close(sh->wake_fd);
	for (m = sh->inbox; m; m = next) {
		next = m->next;
		free(m);
	}
	ledger_unmap(&sh->ledger);
	loop_free(sh->loop);
	pthread_mutex_destroy(&sh->lock);
	free(sh);
}

/*
 * Shard @index of @n, made from the set's configuration: its loop, its
 * stack, its copy of the policy, the secret, its share. The one way every
 * shard is made, the first as the others.
 */
static struct shard *shard_new(struct shards *s, unsigned int index, unsigned int n, char *err, size_t err_len)
{
	const struct shard_conf *c = &s->conf;
	struct shard *sh = calloc(1, sizeof(*sh));
	int ret;

	if (!sh) {
		snprintf(err, err_len, "shard %u: out of memory", index);
		return NULL;
	}
	sh->index = index;
	sh->set = s;
	sh->ledger.fd = -1;
	pthread_mutex_init(&sh->lock, NULL);
	sh->loop = loop_new(c->virtual_clock);
	sh->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!sh->loop || sh->wake_fd < 0 ||
	    loop_fd_add(sh->loop, &sh->wake_lfd, sh->wake_fd, EPOLLIN, shard_wake, sh) < 0) {
		snprintf(err, err_len, "shard %u: epoll or eventfd: %s", index, strerror(errno));
		goto err_loop;
	}
	loop_set_busy_poll(sh->loop, c->busy_poll_us);
	ret = stack_init(&sh->st, sh->loop);
	if (ret < 0) {
		snprintf(err, err_len, "shard %u: stack: %s", index, strerror(-ret));
		goto err_loop;
	}
	sh->st.tcp_settings = c->tcp_settings;
	if (c->policy) {
		sh->policy = *c->policy;
		policy_clear_hits(&sh->policy);
		sh->st.policy = &sh->policy;
	}
	sh->st.flowlog = c->flowlog;
	/* the supervisor's secret: ISNs and timestamps continue the dead one's */
	ret = c->secret ? stack_set_secret(&sh->st, c->secret) : 0;
	if (ret < 0) {
		snprintf(err, err_len, "shard %u: secret: %s", index, strerror(-ret));
		goto err;
	}
	ret = shard_share_out(sh, n);
	if (ret < 0) {
		snprintf(err, err_len, "shard %u: resource caps: %s", index, strerror(-ret));
		goto err;
	}
	stack_on_neigh_learned(&sh->st, shard_neigh_learned, sh);
	return sh;
err:
	shard_free(sh);
	return NULL;
err_loop:
	if (sh->wake_fd >= 0)
		close(sh->wake_fd);
	loop_free(sh->loop);
	pthread_mutex_destroy(&sh->lock);
	free(sh);
	return NULL;
}

/**
 * shards_init() - the first shard, made from @conf
 * @s:		the shards
 * @conf:	what every shard is made from (copied; what it points to
 *		must stay until shards_free())
 * @err, @err_len: why not
 *
 * Return: 0 or negative errno.
 */
int shards_init(struct shards *s, const struct shard_conf *conf, char *err, size_t err_len)
{
	memset(s, 0, sizeof(*s));
	s->conf = *conf;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->sh[0] = shard_new(s, 0, 1, err, err_len);
	if (!s->sh[0]) {
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		return -ENOMEM;
	}
	s->n = 1;
	return 0;
}

/**
 * shards_grow() - shards 1..@n-1, made as shard 0 was; shard 0's share
 * shrinks to one of @n
 * @s:		the shards, still one, with no link or service yet
 * @n:		2..SHARD_MAX
 * @err, @err_len: why not
 *
 * Return: 0 or negative errno.
 */
int shards_grow(struct shards *s, unsigned int n, char *err, size_t err_len)
{
	int ret;

	if (s->n != 1 || n < 2 || n > SHARD_MAX) {
		snprintf(err, err_len, "%u shards: out of range 2..%d", n, SHARD_MAX);
		return -EINVAL;
	}
	ret = shard_share_out(s->sh[0], n);
	if (ret < 0) {
		snprintf(err, err_len, "shards: %s", strerror(-ret));
		return ret;
	}
	while (s->n < n) {
		struct shard *sh = shard_new(s, s->n, n, err, err_len);

		if (!sh)
			return -ENOMEM;
		s->sh[s->n++] = sh;
	}
	return 0;
}

/**
 * shards_add_service() - one --publish or --forward, on the shards that
 * run it
 * @s:		the shards, grown (and steered, with more than one)
 * @spec:	the service
 * @listen_fd:	a forward's listener the supervisor bound, or -1; taken
 * @err, @err_len: why not
 *
 * A publish and a TCP forward run on every shard, the forward's listener
 * shared (each shard's copy of the fd; accept() decides, and each picks
 * ports whose flows the kernel steers back to it); a UDP forward on the
 * shard its remote's address pair is steered to, since its flows all share
 * that pair.
 *
 * Return: 0 or negative errno; what was placed is freed with the shards.
 */
int shards_add_service(struct shards *s, const struct svc_spec *spec, int listen_fd, char *err, size_t err_len)
{
	unsigned int idx = s->n_svcs, first = 0, end = s->n, k;
	int owner;

	if (idx >= SHARD_MAX_SVCS) {
		snprintf(err, err_len, "%s: more than %d services", spec->text, SHARD_MAX_SVCS);
		if (listen_fd >= 0)
			close(listen_fd);
		return -E2BIG;
	}
	for (k = 0; k < s->n; k++) {
		if (s->sh[k]->svc_udp)
			continue;
		s->sh[k]->svc_udp = svc_udp_table_new(&s->sh[k]->st);
		if (!s->sh[k]->svc_udp) {
			snprintf(err, err_len, "stack: no memory or room for the UDP services' table");
			if (listen_fd >= 0)
				close(listen_fd);
			return -ENOMEM;
		}
	}
	s->n_svcs++;
	if (spec->kind == SVC_FORWARD && spec->proto == IPPROTO_UDP && end > 1) {
		owner = stack_owner_of_remote(&s->sh[0]->st, &spec->remote);
		first = owner < 0 ? 0 : (unsigned int)owner;	/* no route: shard 0 counts the errors */
		end = first + 1;
	}
	if (spec->kind == SVC_FORWARD && listen_fd < 0 && end - first > 1) {
		listen_fd = svc_listen_open(spec, err, err_len);
		if (listen_fd < 0)
			return listen_fd;
	}
	for (k = first; k < end; k++) {
		bool last = k + 1 == end;	/* the last one takes @listen_fd itself */
		int fd = listen_fd;

		if (listen_fd >= 0 && !last) {
			fd = fcntl(listen_fd, F_DUPFD_CLOEXEC, 3);
			if (fd < 0) {
				int e = errno;

				snprintf(err, err_len, "%s: dup: %s", spec->text, strerror(e));
				close(listen_fd);
				return -e;
			}
		}
		s->sh[k]->svc[idx] = svc_new(&s->sh[k]->st, s->sh[k]->svc_udp, spec, fd, err, err_len);
		if (!s->sh[k]->svc[idx]) {
			if (!last && listen_fd >= 0)
				close(listen_fd);
			return -EINVAL;
		}
	}
	return 0;
}

/**
 * shards_start() - start every shard's stack, face and services
 * @s:	the shards, configured; their threads not yet through the gate
 *
 * Return: 0 or negative errno.
 */
int shards_start(struct shards *s)
{
	unsigned int i, k;
	int ret = 0;

	for (k = 0; ret >= 0 && k < s->n; k++) {
		struct shard *sh = s->sh[k];

		ret = stack_start(&sh->st);
		if (ret >= 0)
			ret = face_start(face_of(&sh->st));
		for (i = 0; ret >= 0 && i < s->n_svcs; i++)
			ret = sh->svc[i] ? svc_start(sh->svc[i]) : 0;
	}
	return ret;
}

/**
 * shards_steer() - the steering program's secret: each stack then picks
 * only ports whose flows the kernel steers to it (stack_steer_set())
 * @s:		the shards, grown
 * @seed:	the secret netsetup loaded the program with
 */
void shards_steer(struct shards *s, uint32_t seed)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		stack_steer_set(&s->sh[i]->st, seed, s->n, i);
	s->steered = true;
}

/**
 * shards_cpu_ns() - CPU time a shard's thread has used, in nanoseconds
 * @s:	the shards, or NULL (one: the calling thread is shard 0)
 * @i:	which; 0 is the main thread, the caller's own
 *
 * Return: the time, 0 when the clock cannot be read.
 */
uint64_t shards_cpu_ns(const struct shards *s, unsigned int i)
{
	clockid_t clk = CLOCK_THREAD_CPUTIME_ID;
	struct timespec ts;

	if (s && i > 0 && (i >= s->n || !s->sh[i]->thread_started ||
			   pthread_getcpuclockid(s->sh[i]->thread, &clk) != 0))
		return 0;
	if (clock_gettime(clk, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *shard_main(void *arg)
{
	struct shard *sh = arg;
	struct shards *s = sh->set;
	int ret;

	pthread_mutex_lock(&s->lock);
	s->at_gate++;
	pthread_cond_broadcast(&s->cond);
	while (!s->go)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	ret = loop_run(sh->loop);
	if (ret < 0) {
		fprintf(stderr, "datapath: shard %u: event loop: %s\n", sh->index, strerror(-ret));
		abort();	/* the supervisor starts the next datapath */
	}
	/* asked to stop: the container and the remote ends hear a RST now */
	face_tcp_stop(face_of(&sh->st));
	stack_links_flush(&sh->st);
	pkt_pool_drain();
	return NULL;
}

/**
 * shards_spawn() - a thread for each shard but the first, waiting at the gate
 * Return: 0 or negative errno with @err filled.
 */
int shards_spawn(struct shards *s, char *err, size_t err_len)
{
	unsigned int i;
	int ret;

	for (i = 1; i < s->n; i++) {
		ret = pthread_create(&s->sh[i]->thread, NULL, shard_main, s->sh[i]);
		if (ret) {
			snprintf(err, err_len, "shard %u: pthread_create: %s", i, strerror(ret));
			return -ret;
		}
		s->sh[i]->thread_started = true;
	}
	/* Every thread at the gate: what glibc does as a thread starts is done
	 * before the seccomp filter, which then binds the threads as they are. */
	pthread_mutex_lock(&s->lock);
	while (s->at_gate < s->n - 1)
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/** shards_go() - open the gate: every shard's loop runs */
void shards_go(struct shards *s)
{
	pthread_mutex_lock(&s->lock);
	s->go = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/**
 * shards_stop() - stop every shard but the first and wait for its thread
 * @s:	the shards; safe before shards_go() and with threads never started
 */
void shards_stop(struct shards *s)
{
	unsigned int i;

	for (i = 1; i < s->n; i++) {
		struct shard_msg *m;

		if (!s->sh[i]->thread_started)
			continue;
		m = calloc(1, sizeof(*m));
		if (!m)
			abort();	/* a thread that cannot be told to stop */
		m->kind = SHARD_MSG_STOP;
		shard_post(s->sh[i], m);
	}
	shards_go(s);
	for (i = 1; i < s->n; i++) {
		if (s->sh[i]->thread_started)
			pthread_join(s->sh[i]->thread, NULL);
		s->sh[i]->thread_started = false;
	}
}

/**
 * shards_free() - release every shard: its services, stack and loop
 * @s:	the shards, stopped
 */
void shards_free(struct shards *s)
{
	unsigned int i;

	for (i = s->n; i-- > 0;)
		shard_free(s->sh[i]);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
}

/**
 * shards_pause() - hold every other shard still, for reading its counters
 * @s:	the shards; called from shard 0's thread
 *
 * A shard parks when its loop next turns. One that does not within
 * SHARD_PARK_MS is named on stderr and counted (shards_park_misses()): its
 * counters cannot be read safely, and a caller answers "ask again" rather
 * than a part of the process passed off as the whole.
 *
 * Return: 0 when every shard is parked (shards_resume() releases them),
 * -ETIMEDOUT when one did not park in time, -ENOMEM (both released).
 */
int shards_pause(struct shards *s)
{
	struct timespec until;
	unsigned int i;
	int ret = 0;

	if (s->n == 1)
		return 0;
	pthread_mutex_lock(&s->lock);
	s->hold = true;
	s->parked = 0;
	s->pause_gen++;
	pthread_cond_broadcast(&s->cond);	/* a shard still held by the last pause leaves */
	pthread_mutex_unlock(&s->lock);
	for (i = 1; i < s->n; i++) {
		struct shard_msg *m = calloc(1, sizeof(*m));

		if (!m) {
			shards_resume(s);
			return -ENOMEM;
		}
		m->kind = SHARD_MSG_PARK;
		shard_post(s->sh[i], m);
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (long)SHARD_PARK_MS % 1000 * 1000000L;
	until.tv_sec += SHARD_PARK_MS / 1000 + until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&s->lock);
	while (s->parked < s->n - 1)
		if (pthread_cond_timedwait(&s->cond, &s->lock, &until))
			break;
	if (s->parked < s->n - 1) {
		ret = -ETIMEDOUT;
		s->park_misses++;
		for (i = 1; i < s->n; i++)
			if (s->sh[i]->parked_gen != s->pause_gen)
				fprintf(stderr, "datapath: shard %u did not park within %u ms to be read"
					" (%llu such misses)\n", i, SHARD_PARK_MS,
					(unsigned long long)s->park_misses);
	}
	pthread_mutex_unlock(&s->lock);
	if (ret)
		shards_resume(s);
	return ret;
}

/** shards_park_misses() - how often shards_pause() timed out */
uint64_t shards_park_misses(struct shards *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->lock);
	n = s->park_misses;
	pthread_mutex_unlock(&s->lock);
	return n;
}

/** shards_resume() - let the shards shards_pause() held go on */
void shards_resume(struct shards *s)
{
	pthread_mutex_lock(&s->lock);
	s->hold = false;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}
