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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "datapath/datapath.h"
#include "datapath/face/face.h"
#include "datapath/pkt.h"
#include "datapath/shard.h"

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
			l = stack_link_by_ifindex(sh->st, (uint32_t)m->ifindex);
			if (l)
				neigh_adopt(sh->st, l, m->family, &m->addr, m->mac, m->confirmed);
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

static struct shard *shard_new(struct shards *s, unsigned int index, struct loop *loop, struct stack *st)
{
	struct shard *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	sh->index = index;
	sh->set = s;
	sh->loop = loop;
	sh->st = st;
	sh->ledger.fd = -1;
	sh->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&sh->lock, NULL);
	if (sh->wake_fd < 0 || loop_fd_add(loop, &sh->wake_lfd, sh->wake_fd, EPOLLIN, shard_wake, sh) < 0) {
		if (sh->wake_fd >= 0)
			close(sh->wake_fd);
		pthread_mutex_destroy(&sh->lock);
		free(sh);
		return NULL;
	}
	stack_on_neigh_learned(st, shard_neigh_learned, sh);
	return sh;
}

/**
 * shards_init() - one shard: the process's loop and stack
 * @s:		the shards
 * @loop, @st:	the main thread's
 *
 * Return: 0 or -ENOMEM.
 */
int shards_init(struct shards *s, struct loop *loop, struct stack *st)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	s->sh[0] = shard_new(s, 0, loop, st);
	if (!s->sh[0])
		return -ENOMEM;
	s->n = 1;
	return 0;
}

/* A cap of @total for all shards: each gets its share, at least 1. */
static uint32_t shard_share(uint32_t total, unsigned int n)
{
	return total ? (total / n ? total / n : 1) : 0;
}

/**
 * shards_grow() - shards 1..@n-1, each a stack like shard 0's
 * @s:		the shards, still one
 * @n:		2..SHARD_MAX
 * @err, @err_len: why not
 *
 * Shard 0's stack must have its secret, policy, ledger and caps
 * (limits_apply()). The caps are totals for the process, the defaults as
 * much as those given on the command line: each shard gets its share, so
 * that N shards hold no more connections, buffer memory or flows than one
 * would (issue 20). The UDP flows per source stay whole: a source's flows
 * all reach one shard, whose address pair they share. The ledger is split
 * in slices, one per shard.
 *
 * Return: 0 or negative errno.
 */
int shards_grow(struct shards *s, unsigned int n, char *err, size_t err_len)
{
	struct stack *st0 = s->sh[0]->st;
	struct stack_limits share = st0->limits;
	unsigned int i;
	int ret;

	if (s->n != 1 || n < 2 || n > SHARD_MAX) {
		snprintf(err, err_len, "%u shards: out of range 2..%d", n, SHARD_MAX);
		return -EINVAL;
	}
	share.max_conns = shard_share(share.max_conns, n);
	share.max_half_open = shard_share(share.max_half_open, n);
	share.max_timewait = shard_share(share.max_timewait, n);
	share.tcp_mem = share.tcp_mem / n ? share.tcp_mem / n : 1;
	share.reasm_mem = share.reasm_mem / n ? share.reasm_mem / n : 1;
	share.udp_flows = shard_share(share.udp_flows, n);
	if (st0->ledger) {
		ledger_share(st0->ledger, 0, n, &s->sh[0]->ledger);
		st0->ledger = &s->sh[0]->ledger;
	}
	ret = limits_apply(st0, &share);
	stack_icmp_share(st0, n);
	for (i = 1; i < n && ret >= 0; i++) {
		struct loop *loop = loop_new(false);
		struct stack *st = calloc(1, sizeof(*st));
		struct shard *sh;

		if (loop)	/* every shard polls as the main thread's loop does */
			loop_set_busy_poll(loop, loop_busy_poll_us(s->sh[0]->loop));

		if (!loop || !st || stack_init(st, loop) < 0) {
			free(st);
			loop_free(loop);
			snprintf(err, err_len, "shard %u: out of memory", i);
			return -ENOMEM;
		}
		st->tcp_settings = st0->tcp_settings;
		sh = shard_new(s, i, loop, st);
		if (!sh) {
			stack_fini(st);
			free(st);
			loop_free(loop);
			snprintf(err, err_len, "shard %u: out of memory or fds", i);
			return -ENOMEM;
		}
		s->sh[s->n++] = sh;
		if (st0->policy) {
			sh->policy = *st0->policy;
			policy_clear_hits(&sh->policy);
			st->policy = &sh->policy;
		}
		if (st0->ledger) {
			ledger_share(st0->ledger, i, n, &sh->ledger);
			st->ledger = &sh->ledger;
		}
		ret = st0->has_secret ? stack_set_secret(st, st0->secret) : 0;
		if (ret >= 0)
			ret = limits_apply(st, &share);
		stack_icmp_share(st, n);
	}
	if (ret < 0) {
		snprintf(err, err_len, "shards: %s", strerror(-ret));
		return ret;
	}
	return 0;
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
		stack_steer_set(s->sh[i]->st, seed, s->n, i);
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
	face_tcp_stop(face_of(sh->st));
	stack_links_flush(sh->st);
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
 * shards_free() - release every shard; shard 0's loop and stack stay
 * @s:	the shards, stopped, and shard 0's stack finished (stack_fini():
 *	its pairs leave the ledger slice freed here)
 */
void shards_free(struct shards *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		struct shard *sh = s->sh[i];
		struct shard_msg *m, *next;

		loop_fd_del(sh->loop, &sh->wake_lfd);
		close(sh->wake_fd);
		for (m = sh->inbox; m; m = next) {
			next = m->next;
			free(m);
		}
		if (i) {
			stack_fini(sh->st);
			free(sh->st);
			loop_free(sh->loop);
		}
		ledger_unmap(&sh->ledger);
		pthread_mutex_destroy(&sh->lock);
		free(sh);
	}
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
