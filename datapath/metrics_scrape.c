// SPDX-License-Identifier: MIT
/*
 * metrics_scrape.c - ask every datapath of a folder for its summary, all at once
 *
 * Theory of operation: the folder is the one `datapath stats --all` reads
 * (/run/sandnet, where netsetup gives each datapath it starts detached the
 * control socket STATEFILE.ctl). metrics_scrape_dir() lists its *.ctl files
 * in name order, connects a non-blocking unix socket to each, sends
 * "summary json\n" on each and then waits for every answer in one poll()
 * loop with one deadline, reading each answer as it comes. So:
 *
 *   - a scrape takes at most @timeout_ms per METRICS_BATCH sockets, however
 *     many datapaths are slow: they are asked side by side, not in turn;
 *   - a datapath is never kept waiting on us: it writes its answer from its
 *     loop with a one-second send timeout (control.c), and we read each
 *     answer as soon as poll() says so, into memory, before anything is sent
 *     to an HTTP client (metrics.c answers only once the scrape is over);
 *   - a datapath that does not answer (no listener, a stalled one, garbage)
 *     costs only its own summary: its target keeps err and why, which the
 *     exposition turns into sandnet_datapath_up 0 and a count in
 *     sandnet_scrape_errors_total (metrics_expo.c).
 *
 * The datapath's pid comes from SO_PEERCRED on the connection (the kernel
 * gives it in our pid namespace, 0 when it is not visible there), not from
 * the summary, which holds the pid in the datapath's own namespace; it is
 * used for the CPU time and resident memory in /proc/PID/stat. For a
 * datapath that does not answer, the container's name is read from the
 * state file next to its socket ("owner NAME", written by netsetup), so
 * that sandnet_datapath_up{container=...} 0 still names it.
 *
 * What this does NOT do: keep any state between scrapes (the exporter's
 * own counters are metrics.c's), or follow a socket outside the folder.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "datapath/control_proto.h"
#include "datapath/datapath.h"
#include "datapath/metrics.h"

#define METRICS_BATCH		256	/* sockets asked at once: fds stay well under RLIMIT_NOFILE */
#define METRICS_REQUEST		CONTROL_REQ_SUMMARY_JSON

#define METRICS_X_NAME(name) #name,
static const char *const metrics_err_upper[] = { METRICS_ERR_LIST(METRICS_X_NAME) };
_Static_assert(sizeof(metrics_err_upper) / sizeof(metrics_err_upper[0]) == METRICS_ERR_MAX,
	       "metrics error names");

/**
 * metrics_err_name() - the reason label of an error ("timeout")
 * @e:	the error
 * Return: its lower-case name, "none" for METRICS_ERR_NONE.
 */
const char *metrics_err_name(enum metrics_err e)
{
	static char lower[METRICS_ERR_MAX][16];
	unsigned int i;

	if (e < 0 || e >= METRICS_ERR_MAX)
		return "none";
	if (!lower[e][0])
		for (i = 0; metrics_err_upper[e][i] && i + 1 < sizeof(lower[e]); i++)
			lower[e][i] = (char)tolower((unsigned char)metrics_err_upper[e][i]);
	return lower[e];
}

static uint64_t metrics_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void __attribute__((format(printf, 3, 4)))
metrics_fail(struct metrics_target *t, enum metrics_err err, const char *fmt, ...)
{
	va_list ap;

	t->err = err;
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}

/* The control sockets of @dir (control_sockets_list()), sorted; s->targets is NULL when there is none. */
static int metrics_list(const char *dir, struct metrics_scrape *s)
{
	char **names;
	int n, i;

	n = control_sockets_list(dir, &names);
	if (n < 0) {
		if (n == -ENOMEM)
			return n;
		s->folder_err = METRICS_ERR_FOLDER;
		snprintf(s->why, sizeof(s->why), "%s: %s", dir, strerror(-n));
		return n;
	}
	if (n > METRICS_MAX_TARGETS) {
		s->folder_err = METRICS_ERR_TOO_MANY;
		snprintf(s->why, sizeof(s->why), "%s: more than %d control sockets; the rest is not read",
			 dir, METRICS_MAX_TARGETS);
	}
	s->targets = n ? calloc((size_t)n, sizeof(*s->targets)) : NULL;
	if (n && !s->targets) {
		control_sockets_free(names, n);
		return -ENOMEM;
	}
	for (i = 0; i < n && s->n < METRICS_MAX_TARGETS; i++) {
		struct metrics_target *t = &s->targets[s->n];

		if (strlen(names[i]) >= sizeof(t->sock))
			continue;	/* a name no socket path could hold */
		t->fd = -1;
		t->err = METRICS_ERR_NONE;
		snprintf(t->sock, sizeof(t->sock), "%s", names[i]);
		s->n++;
	}
	control_sockets_free(names, n);
	return 0;
}

/* Connect to @t and send the request; on failure @t says why and holds no fd. */
static void metrics_ask(const char *dir, struct metrics_target *t)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int n;

	n = snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", dir, t->sock);
	if (n < 0 || (size_t)n >= sizeof(sun.sun_path)) {
		metrics_fail(t, METRICS_ERR_UNREACHABLE, "path too long for a unix socket");
		return;
	}
	t->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (t->fd < 0) {
		metrics_fail(t, METRICS_ERR_UNREACHABLE, "socket: %s", strerror(errno));
		return;
	}
	if (connect(t->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		/* a unix connect never completes later: EAGAIN is a full backlog */
		metrics_fail(t, METRICS_ERR_UNREACHABLE, "connect: %s", errno == EAGAIN ?
			     "its backlog is full (is the datapath stuck?)" : strerror(errno));
		return;
	}
	if (getsockopt(t->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0)
		t->pid = cred.pid;
	if (send(t->fd, METRICS_REQUEST, strlen(METRICS_REQUEST), MSG_NOSIGNAL) != (ssize_t)strlen(METRICS_REQUEST))
		metrics_fail(t, METRICS_ERR_UNREACHABLE, "send: %s", strerror(errno));
}

/* Read what @t has; 1 when its answer is complete (EOF) or it failed, else 0. */
static int metrics_read(struct metrics_target *t)
{
	char chunk[16384];
	ssize_t n;

	for (;;) {
		n = recv(t->fd, chunk, sizeof(chunk), 0);
		if (n < 0)
			break;
		if (n == 0) {
			close(t->fd);
			t->fd = -1;
			return 1;
		}
		if (t->len + (size_t)n > METRICS_SUMMARY_MAX_BYTES) {
			metrics_fail(t, METRICS_ERR_MALFORMED, "answer larger than %d bytes", METRICS_SUMMARY_MAX_BYTES);
			return 1;
		}
		{
			char *b = realloc(t->buf, t->len + (size_t)n + 1);

			if (!b) {
				metrics_fail(t, METRICS_ERR_MALFORMED, "out of memory");
				return 1;
			}
			t->buf = b;
		}
		memcpy(t->buf + t->len, chunk, (size_t)n);
		t->len += (size_t)n;
	}
	if (errno == EAGAIN || errno == EINTR)
		return 0;
	metrics_fail(t, METRICS_ERR_UNREACHABLE, "recv: %s", strerror(errno));
	return 1;
}

/* Ask the @n targets @t at once and read their answers until @timeout_ms has passed. */
static void metrics_batch(const char *dir, struct metrics_target *t, unsigned int n, unsigned int timeout_ms)
{
	struct pollfd pfd[METRICS_BATCH];
	uint64_t deadline = metrics_now_ms() + timeout_ms;
	unsigned int i, np, idx[METRICS_BATCH];

	for (i = 0; i < n; i++)
		metrics_ask(dir, &t[i]);
	for (;;) {
		uint64_t now = metrics_now_ms();

		np = 0;
		for (i = 0; i < n; i++) {
			if (t[i].fd < 0)
				continue;
			pfd[np].fd = t[i].fd;
			pfd[np].events = POLLIN;
			idx[np++] = i;
		}
		if (!np || now >= deadline)
			break;
		if (poll(pfd, np, (int)(deadline - now)) < 0 && errno != EINTR)
			break;
		for (i = 0; i < np; i++)
			if (pfd[i].revents)
				metrics_read(&t[idx[i]]);
	}
	for (i = 0; i < n; i++)
		if (t[i].fd >= 0)
			metrics_fail(&t[i], METRICS_ERR_TIMEOUT, "no answer within %u ms", timeout_ms);
}

/* The answer as a JSON object, or why not. */
static void metrics_parse(struct metrics_target *t)
{
	json_error_t jerr;
	const char *name;

	if (t->err != METRICS_ERR_NONE)
		return;
	if (!t->len) {
		metrics_fail(t, METRICS_ERR_MALFORMED, "empty answer");
		return;
	}
	t->buf[t->len] = '\0';
	if (!strncmp(t->buf, CONTROL_BUSY, strlen(CONTROL_BUSY))) {
		/* a shard did not stop to be read: no counters this time, rather than some */
		metrics_fail(t, METRICS_ERR_BUSY, "it answered \"%.*s\"", (int)strcspn(t->buf, "\n"), t->buf);
		return;
	}
	if (!strncmp(t->buf, CONTROL_ERROR, strlen(CONTROL_ERROR))) {
		/* a datapath that does not know the request says so in words */
		metrics_fail(t, METRICS_ERR_MALFORMED, "it answered \"%.100s\"", t->buf);
		return;
	}
	t->summary = json_loadb(t->buf, t->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!t->summary || !json_is_object(t->summary)) {
		char what[sizeof(jerr.text) + 48];

		snprintf(what, sizeof(what), "line %d column %d: %s", jerr.line, jerr.column,
			 t->summary ? "not a JSON object" : jerr.text);
		json_decref(t->summary);
		t->summary = NULL;
		metrics_fail(t, METRICS_ERR_MALFORMED, "not a summary: %s", what);
		return;
	}
	name = json_string_value(json_object_get(t->summary, "name"));
	if (name && name[0])
		snprintf(t->name, sizeof(t->name), "%.*s", METRICS_NAME_MAX - 1, name);
}

/* For a datapath that did not answer: "owner NAME" of the state file next to its socket. */
static void metrics_owner(const char *dir, struct metrics_target *t)
{
	char path[PATH_MAX], line[METRICS_NAME_MAX + 16];
	size_t len = strlen(t->sock) - 4;	/* without ".ctl" */
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%.*s", dir, (int)len, t->sock) >= (int)sizeof(path))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "owner ", 6))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (line[6])
			snprintf(t->name, sizeof(t->name), "%s", line + 6);
		break;
	}
	fclose(f);
}

/**
 * metrics_proc_stat() - a process's CPU time and resident memory
 * @pid:	the process
 * @cpu_seconds: user + system time
 * @rss_bytes:	resident set size
 *
 * From /proc/PID/stat (fields 14, 15 and 24; the command name in field 2
 * may hold spaces and parentheses, so fields are counted after the last ')').
 *
 * Return: 0 or negative errno.
 */
int metrics_proc_stat(pid_t pid, double *cpu_seconds, uint64_t *rss_bytes)
{
	unsigned long long utime = 0, stime = 0;
	long long rss = 0;
	char path[64], buf[1024], *p;
	int fd, field;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return -EIO;
	/* p + 2 is field 3 (state) */
	for (field = 3, p += 2; *p && field <= 24; field++) {
		if (field == 14)
			utime = strtoull(p, NULL, 10);
		else if (field == 15)
			stime = strtoull(p, NULL, 10);
		else if (field == 24)
			rss = strtoll(p, NULL, 10);
		p = strchr(p, ' ');
		if (!p)
			break;
		p++;
	}
	if (field <= 24)
		return -EIO;
	*cpu_seconds = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
	*rss_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
	return 0;
}

/**
 * metrics_scrape_dir() - ask every datapath whose control socket is in @dir
 * @dir:	the folder (/run/sandnet)
 * @timeout_ms:	how long the datapaths asked at once may take in all
 * @s:		filled: one target per socket, each with its summary or why not;
 *		free with metrics_scrape_free()
 *
 * A folder that does not exist has no datapath (not an error); one that
 * cannot be read sets @s->folder_err.
 *
 * Return: 0, or negative errno when @dir cannot be read or memory ran out.
 */
int metrics_scrape_dir(const char *dir, unsigned int timeout_ms, struct metrics_scrape *s)
{
	unsigned int i, n;
	int err;

	memset(s, 0, sizeof(*s));
	s->folder_err = METRICS_ERR_NONE;
	err = metrics_list(dir, s);
	if (err)
		return err;
	for (i = 0; i < s->n; i += n) {
		n = s->n - i < METRICS_BATCH ? s->n - i : METRICS_BATCH;
		metrics_batch(dir, &s->targets[i], n, timeout_ms);
	}
	for (i = 0; i < s->n; i++) {
		struct metrics_target *t = &s->targets[i];

		metrics_parse(t);
		free(t->buf);
		t->buf = NULL;
		if (!t->summary)
			metrics_owner(dir, t);
		if (t->pid > 0 && metrics_proc_stat(t->pid, &t->cpu_seconds, &t->rss_bytes) == 0)
			t->have_proc = true;
	}
	return 0;
}

/**
 * metrics_scrape_free() - release what metrics_scrape_dir() filled
 * @s:	the scrape
 */
void metrics_scrape_free(struct metrics_scrape *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++) {
		json_decref(s->targets[i].summary);
		free(s->targets[i].buf);
		if (s->targets[i].fd >= 0)
			close(s->targets[i].fd);
	}
	free(s->targets);
	memset(s, 0, sizeof(*s));
}
