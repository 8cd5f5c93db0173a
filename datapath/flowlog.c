// SPDX-License-Identifier: MIT
/*
 * flowlog.c - one record per conversation of the container, when it ends
 *
 * Theory of operation
 *
 * Every TCP connection, UDP flow and ICMP echo flow of the container face,
 * and every conversation the policy refused, ends in a record (struct
 * flowlog_record): who, to whom, for which name, the verdict and the rule
 * that gave it, the bytes and packets each way, how long, how it ended.
 * With --flow-log-starts a conversation the policy let through has a
 * record when it begins too (event "start", no counts, end null).
 * The face fills it on the shard that carried the conversation and hands it
 * to flowlog_add(), which copies it into a ring under a mutex and wakes the
 * writer. The writer is a thread of its own: it takes what the ring holds,
 * formats it as JSON lines (flowlog_print()), and writes them to the file
 * (--flow-log PATH: the supervisor opens it, as root, before it drops its
 * privileges, and every datapath it starts writes to the same fd) and sends
 * them to every follower (`datapath flows --follow`, a client of the control
 * socket that stays connected).
 *
 * The shards never wait for the disk, nor for a follower: holding the
 * mutex is a copy of a few hundred bytes. Nor do they wake the writer for
 * every record: woken by the first record in an empty ring, it sleeps
 * FLOWLOG_GATHER_MS before it takes what came meanwhile, and a record that
 * arrives while it sleeps signals nobody (no futex call). With a record per
 * connection and a wake-up per record, the hw-flowlog row of bench/nginx.sh
 * spent 25-55 % more CPU per 100-byte request than hw-names; records reach
 * the file and the followers up to FLOWLOG_GATHER_MS later instead. A ring that is full (the writer
 * is behind: a slow disk, a flood of refusals) drops the record and counts
 * it (dropped), as does a file that refuses a write. A follower that does
 * not read fast enough misses records (follower_dropped): its current line
 * is finished, so that it reads whole lines, and the rest of the batch is
 * skipped; one that cannot take a line within a second, or hung up, is let
 * go. With neither a file nor a follower, nothing is recorded: @on is false
 * and the face does not fill records.
 *
 * The writer is made before the system call filter (seccomp.c allows no
 * clone, nor what a new thread calls first: flowlog_start() waits until it
 * runs); it needs write, sendto, recvfrom, futex, nanosleep and the clock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/out.h"
#include "datapath/flowlog.h"

#define FLOWLOG_BATCH		256	/* records the writer takes at once */
#define FLOWLOG_WAKE_MS		1000	/* the writer looks for followers that hung up this often */
#define FLOWLOG_GATHER_MS	50	/* woken by a record, the writer waits this long for more */
#define FLOWLOG_STOP_WAIT_S	2	/* a stop waits this long for the writer to finish */

const char *const flowlog_end_names[FLOWLOG_END_MAX] = {
	[FLOWLOG_END_CLOSED] = "closed",
	[FLOWLOG_END_RESET] = "reset",
	[FLOWLOG_END_REFUSED] = "refused",
	[FLOWLOG_END_POLICY] = "policy",
	[FLOWLOG_END_NAME] = "name",
	[FLOWLOG_END_IDLE] = "idle",
	[FLOWLOG_END_EVICTED] = "evicted",
	[FLOWLOG_END_LIMIT] = "limit",
	[FLOWLOG_END_STOP] = "stop",
};

static const struct stat_desc flowlog_stats_rows[] = {
	{ .key = "records", .offset = STAT_AT(struct flowlog_stats, records), .kind = STAT_COUNTER,
	  .family = "sandnet_flow_log_records_total",
	  .help = "Flow log records written: to the --flow-log file, or to a live view when there is none." },
	{ .key = "dropped", .offset = STAT_AT(struct flowlog_stats, dropped), .kind = STAT_COUNTER,
	  .family = "sandnet_flow_log_dropped_total",
	  .help = "Flow log records lost: the writer was behind (its ring full) or the file refused them." },
	{ .key = "followers", .offset = STAT_AT(struct flowlog_stats, followers), .kind = STAT_GAUGE,
	  .family = "sandnet_flow_log_followers",
	  .help = "Live views of the flow log attached now (datapath flows --follow)." },
	{ .key = "follower_dropped", .offset = STAT_AT(struct flowlog_stats, follower_dropped),
	  .kind = STAT_COUNTER, .family = "sandnet_flow_log_follower_dropped_total",
	  .help = "Flow log records a live view missed because it did not read them fast enough." },
};

const struct stat_table flowlog_stats_table = STAT_TABLE(flowlog_stats_rows);

static const char *flowlog_proto_name(uint8_t proto)
{
	switch (proto) {
	case 6:
		return "tcp";
	case 17:
		return "udp";
	case 1:
		return "icmp";
	case 58:
		return "icmpv6";
	default:
		return "?";
	}
}

/**
 * flowlog_print() - one record as one JSON line (docs/face.md, "Flow log")
 * @f:		where it goes
 * @r:		the record
 * @container:	the datapath's --name ("" without)
 */
void flowlog_print(FILE *f, const struct flowlog_record *r, const char *container)
{
	char when[40], src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	time_t secs = (time_t)(r->end_unix_us / 1000000);
	struct tm tm;

	if (!gmtime_r(&secs, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(when, sizeof(when), "@%llu", (unsigned long long)secs);
	if (!inet_ntop(r->family, r->src, src, sizeof(src)))
		strcpy(src, "?");
	if (!inet_ntop(r->family, r->dst, dst, sizeof(dst)))
		strcpy(dst, "?");
	fprintf(f, "{\"time\":\"%s.%06uZ\",\"event\":\"%s\",\"container\":", when,
		(unsigned int)(r->end_unix_us % 1000000), r->start ? "start" : "end");
	out_json_str(f, container);
	fprintf(f, ",\"proto\":\"%s\",\"direction\":\"%s\",\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\",\"dport\":%u,"
		   "\"name\":",
		flowlog_proto_name(r->proto), r->inbound ? "ingress" : "egress", src, r->sport, dst, r->dport);
	if (r->name[0])
		out_json_str(f, r->name);
	else
		fputs("null", f);
	fprintf(f, ",\"verdict\":\"%s\",\"rule\":", r->verdict == FLOWLOG_DENY ? "deny" : "allow");
	if (r->rule[0])
		out_json_str(f, r->rule);
	else
		fputs("null", f);
	fprintf(f, ",\"bytes_out\":%llu,\"packets_out\":%llu,\"bytes_in\":%llu,\"packets_in\":%llu,"
		   "\"duration_s\":%llu.%06u,\"end\":%s%s%s}\n",
		(unsigned long long)r->bytes_out, (unsigned long long)r->packets_out,
		(unsigned long long)r->bytes_in, (unsigned long long)r->packets_in,
		(unsigned long long)(r->duration_us / 1000000), (unsigned int)(r->duration_us % 1000000),
		r->start ? "" : "\"", r->start ? "null" : r->end < FLOWLOG_END_MAX ? flowlog_end_names[r->end] : "?",
		r->start ? "" : "\"");
}

/* Under the lock: records go somewhere. */
static void flowlog_update_on(struct flowlog *fl)
{
	__atomic_store_n(&fl->on, fl->started && !fl->stopping && (fl->fd >= 0 || fl->n_followers > 0),
			 __ATOMIC_RELAXED);
}

/* Under the lock: let follower @i go. */
static void flowlog_unfollow(struct flowlog *fl, unsigned int i)
{
	close(fl->followers[i]);
	fl->followers[i] = fl->followers[--fl->n_followers];
	flowlog_update_on(fl);
}

/*
 * Send @text (@n_lines lines of @len bytes) to a follower. Return: the lines
 * it missed, or -1 to let it go. A partial send finishes its line, blocking
 * for at most the socket's send timeout (set by flowlog_follow()).
 */
static long flowlog_send(int fd, const char *text, size_t len, unsigned int n_lines)
{
	ssize_t n = send(fd, text, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	const char *nl;
	size_t off, rest;
	unsigned int sent_lines = 0;

	if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
		return -1;
	off = n < 0 ? 0 : (size_t)n;
	if (off == len)
		return 0;
	/* whole lines only: finish the one cut, skip the rest */
	for (nl = text; (nl = memchr(nl, '\n', off - (size_t)(nl - text))) != NULL; nl++)
		sent_lines++;
	if (off && text[off - 1] != '\n') {
		nl = memchr(text + off, '\n', len - off);
		rest = (size_t)(nl - (text + off)) + 1;
		while (rest) {
			n = send(fd, text + off, rest, MSG_NOSIGNAL);
			if (n <= 0)
				return -1;
			off += (size_t)n;
			rest -= (size_t)n;
		}
		sent_lines++;
	}
	return (long)(n_lines - sent_lines);
}

/* A follower that hung up reads as end of file. */
static bool flowlog_follower_gone(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* Write @text to the file, all of it. Return: 0 or negative errno. */
static int flowlog_write(int fd, const char *text, size_t len)
{
	while (len) {
		ssize_t n = write(fd, text, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

static void *flowlog_run(void *arg)
{
	struct flowlog *fl = arg;
	struct flowlog_record *batch = fl->batch;
	int fds[FLOWLOG_FOLLOWERS_MAX];
	bool gone[FLOWLOG_FOLLOWERS_MAX];
	bool warned = false;

	pthread_mutex_lock(&fl->lock);
	/* started: flowlog_start() waits for this before the filter comes */
	fl->running = true;
	pthread_cond_broadcast(&fl->wake);
	for (;;) {
		unsigned int n = 0, nf, i;
		uint64_t lost = 0, missed = 0, written = 0;
		char *text = NULL;
		size_t len = 0;
		FILE *f;

		if (!fl->n && !fl->stopping) {
			struct timespec ts;

			/* with followers, wake now and then to let go of those that hung up */
			if (fl->n_followers) {
				clock_gettime(CLOCK_MONOTONIC, &ts);
				ts.tv_sec += FLOWLOG_WAKE_MS / 1000;
				pthread_cond_timedwait(&fl->wake, &fl->lock, &ts);
			} else {
				pthread_cond_wait(&fl->wake, &fl->lock);
			}
			if (fl->n && !fl->stopping) {
				/* gather: one wake-up a batch, not one a record (see above) */
				pthread_mutex_unlock(&fl->lock);
				nanosleep(&(struct timespec){ .tv_nsec = FLOWLOG_GATHER_MS * 1000000L }, NULL);
				pthread_mutex_lock(&fl->lock);
			}
		}
		while (n < FLOWLOG_BATCH && fl->n) {
			batch[n++] = fl->ring[fl->head];
			fl->head = (fl->head + 1) % fl->cap;
			fl->n--;
		}
		if (!n && fl->stopping)
			break;
		nf = fl->n_followers;
		memcpy(fds, fl->followers, nf * sizeof(fds[0]));
		pthread_mutex_unlock(&fl->lock);

		f = n ? open_memstream(&text, &len) : NULL;
		if (f) {
			for (i = 0; i < n; i++)
				flowlog_print(f, &batch[i], fl->container ? fl->container : "");
			if (fclose(f))
				len = 0;
		}
		if (n && !len) {
			lost = n;	/* out of memory */
		} else if (n && fl->fd >= 0) {
			int err = flowlog_write(fl->fd, text, len);

			if (err < 0) {
				lost = n;
				if (!warned)
					fprintf(stderr, "datapath: --flow-log: %s; records are dropped and counted\n",
						strerror(-err));
				warned = true;
			} else {
				written = n;
			}
		} else if (n && nf) {
			written = n;
		}
		for (i = 0; i < nf; i++) {
			long m = n && len ? flowlog_send(fds[i], text, len, n) : 0;

			gone[i] = m < 0 || flowlog_follower_gone(fds[i]);
			if (m > 0)
				missed += (uint64_t)m;
		}
		free(text);

		pthread_mutex_lock(&fl->lock);
		fl->stats.records += written;
		fl->stats.dropped += lost;
		fl->stats.follower_dropped += missed;
		/* followers only come in meanwhile (flowlog_follow() appends): @fds is a prefix */
		for (i = nf; i-- > 0;)
			if (gone[i] && fl->followers[i] == fds[i])
				flowlog_unfollow(fl, i);
	}
	pthread_mutex_unlock(&fl->lock);
	return NULL;
}

/**
 * flowlog_init() - a flow log with no writer yet
 * @fl:		the flow log
 * @fd:		the file records go to (the datapath owns it from now), or
 *		-1: followers only
 * @container:	the datapath's --name, or NULL
 * @cap:	records the ring holds (0: FLOWLOG_RING_DEFAULT)
 *
 * Return: 0 or -ENOMEM.
 */
int flowlog_init(struct flowlog *fl, int fd, const char *container, unsigned int cap)
{
	memset(fl, 0, sizeof(*fl));
	fl->fd = fd;
	fl->cap = cap ? cap : FLOWLOG_RING_DEFAULT;
	fl->ring = calloc(fl->cap, sizeof(*fl->ring));
	fl->batch = malloc(FLOWLOG_BATCH * sizeof(*fl->batch));	/* the writer's, made here: it cannot fail there */
	fl->container = strdup(container ? container : "");
	pthread_mutex_init(&fl->lock, NULL);
	pthread_cond_init(&fl->wake, NULL);
	if (!fl->ring || !fl->batch || !fl->container) {
		flowlog_fini(fl);
		return -ENOMEM;
	}
	return 0;
}

/**
 * flowlog_start() - start the writer (before the system call filter)
 * @fl:	the flow log
 *
 * Return: 0 or negative errno.
 */
int flowlog_start(struct flowlog *fl)
{
	pthread_condattr_t ca;
	int ret;

	/* the writer's timed wait is on the monotonic clock */
	pthread_cond_destroy(&fl->wake);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&fl->wake, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&fl->thread, NULL, flowlog_run, fl);
	if (ret)
		return -ret;
	/*
	 * A new thread's first system calls (set_robust_list, rseq, its
	 * arena's mmap) are not on the filter's list: it must have made them
	 * before the caller installs it.
	 */
	pthread_mutex_lock(&fl->lock);
	while (!fl->running)
		pthread_cond_wait(&fl->wake, &fl->lock);
	fl->started = true;
	flowlog_update_on(fl);
	pthread_mutex_unlock(&fl->lock);
	return 0;
}

/**
 * flowlog_fini() - write what the ring holds, stop the writer, close the
 * file and the followers
 * @fl:	the flow log (initialised, or zeroed)
 */
void flowlog_fini(struct flowlog *fl)
{
	unsigned int i;

	if (!fl->cap)
		return;
	if (fl->started) {
		struct timespec until;

		pthread_mutex_lock(&fl->lock);
		fl->stopping = true;
		flowlog_update_on(fl);
		pthread_cond_signal(&fl->wake);
		pthread_mutex_unlock(&fl->lock);
		/* a write that never returns (a FIFO nobody reads, a hung disk) must not keep the stop waiting */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += FLOWLOG_STOP_WAIT_S;
		if (pthread_timedjoin_np(fl->thread, NULL, &until)) {
			unsigned int left;

			pthread_mutex_lock(&fl->lock);	/* the writer waits in write(), not holding it */
			left = fl->n;
			pthread_mutex_unlock(&fl->lock);
			fprintf(stderr, "datapath: --flow-log: the writer is stuck in a write; %u record(s) not written\n",
				left);
			return;	/* left as it is: the thread may still touch it, and the process ends */
		}
		fl->started = false;
	}
	for (i = 0; i < fl->n_followers; i++)
		close(fl->followers[i]);
	fl->n_followers = 0;
	if (fl->fd >= 0)
		close(fl->fd);
	fl->fd = -1;
	free(fl->ring);
	free(fl->batch);
	free(fl->container);
	fl->ring = NULL;
	fl->batch = NULL;
	fl->container = NULL;
	pthread_mutex_destroy(&fl->lock);
	pthread_cond_destroy(&fl->wake);
	fl->cap = 0;
}

/**
 * flowlog_wanted() - does a record have a taker?
 * @fl:	the flow log, or NULL
 *
 * Return: true when the caller should fill a record and flowlog_add() it.
 */
bool flowlog_wanted(const struct flowlog *fl)
{
	return fl && __atomic_load_n(&fl->on, __ATOMIC_RELAXED);
}

/**
 * flowlog_add() - hand a record to the writer; never waits for it
 * @fl:	the flow log
 * @r:	the record (copied)
 */
void flowlog_add(struct flowlog *fl, const struct flowlog_record *r)
{
	pthread_mutex_lock(&fl->lock);
	if (!fl->on) {
		pthread_mutex_unlock(&fl->lock);
		return;
	}
	if (fl->n == fl->cap) {
		fl->stats.dropped++;
	} else {
		fl->ring[(fl->head + fl->n) % fl->cap] = *r;
		if (fl->n++ == 0)
			pthread_cond_signal(&fl->wake);
	}
	pthread_mutex_unlock(&fl->lock);
}

/**
 * flowlog_follow() - a live view: records from now on are sent to @fd too
 * @fl:	the flow log, started
 * @fd:	a connected stream socket; the flow log owns it from now, unless
 *	this fails
 *
 * Return: 0, -EBUSY with FLOWLOG_FOLLOWERS_MAX followers already, or
 * -ENOTCONN when the writer is not running.
 */
int flowlog_follow(struct flowlog *fl, int fd)
{
	struct timeval tv = { .tv_sec = 1 };
	int ret = 0;

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	pthread_mutex_lock(&fl->lock);
	if (!fl->started || fl->stopping)
		ret = -ENOTCONN;
	else if (fl->n_followers >= FLOWLOG_FOLLOWERS_MAX)
		ret = -EBUSY;
	else
		fl->followers[fl->n_followers++] = fd;
	flowlog_update_on(fl);
	pthread_mutex_unlock(&fl->lock);
	return ret;
}

/**
 * flowlog_stats() - what the flow log did
 * @fl:	the flow log, or NULL (all zero)
 * @s:	filled
 */
void flowlog_stats(struct flowlog *fl, struct flowlog_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (!fl || !fl->cap)
		return;
	pthread_mutex_lock(&fl->lock);
	*s = fl->stats;
	s->followers = fl->n_followers;
	pthread_mutex_unlock(&fl->lock);
}
