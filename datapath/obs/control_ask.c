// SPDX-License-Identifier: MIT
/*
 * control_ask.c - ask every datapath of a folder, all at once
 *
 * Theory of operation: the folder is /run/sandnet (or --dir), where netsetup
 * gives each datapath it starts detached the control socket STATEFILE.ctl,
 * and datapath@.service its units/NAME.ctl: control_sockets_list() finds
 * them, in name order. control_ask_dir() connects a non-blocking unix
 * socket to each, sends the one request line on each and then waits for
 * every answer in one poll() loop with one deadline, reading each answer as
 * it comes. `datapath stats --all` (control_client.c) and the exporter
 * (metrics_scrape.c) both ask this way. So:
 *
 *   - asking takes at most @timeout_ms per CONTROL_ASK_BATCH sockets,
 *     however many datapaths are slow: they are asked side by side, not in
 *     turn;
 *   - a datapath is never kept waiting on us: it writes its answer from its
 *     loop with a one-second send timeout (control.c), and we read each
 *     answer as soon as poll() says so, into memory;
 *   - a datapath that does not answer (no listener, a stalled one, an
 *     answer too large or empty, an error line) costs only its own answer:
 *     its reply keeps the reason and its words. "error: busy: ..." (a shard
 *     did not stop to be read within a second) is its own reason, which
 *     control_ask_again() asks once more.
 *
 * The datapath's pid comes from SO_PEERCRED on the connection (the kernel
 * gives it in our pid namespace, 0 when it is not visible there).
 *
 * What this does NOT do: parse an answer (the exporter parses JSON, stats
 * --all prints it), or follow a socket outside the folder.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "datapath/obs/control_ask.h"
#include "datapath/obs/control_proto.h"

#define CONTROL_ASK_BATCH	256	/* sockets asked at once: fds stay well under RLIMIT_NOFILE */

#define CONTROL_ASK_X_NAME(name) #name,
static const char *const control_ask_err_upper[] = { CONTROL_ASK_ERR_LIST(CONTROL_ASK_X_NAME) };
_Static_assert(sizeof(control_ask_err_upper) / sizeof(control_ask_err_upper[0]) == CONTROL_ASK_ERR_MAX,
	       "control_ask error names");

/**
 * control_ask_err_name() - the lower-case name of a reason ("timeout")
 * @e:	the reason
 * Return: its name, "none" for CONTROL_ASK_OK.
 */
const char *control_ask_err_name(enum control_ask_err e)
{
	static char lower[CONTROL_ASK_ERR_MAX][16];
	unsigned int i;

	if (e < 0 || e >= CONTROL_ASK_ERR_MAX)
		return "none";
	if (!lower[e][0])
		for (i = 0; control_ask_err_upper[e][i] && i + 1 < sizeof(lower[e]); i++)
			lower[e][i] = (char)tolower((unsigned char)control_ask_err_upper[e][i]);
	return lower[e];
}

/**
 * control_now_ms() - the monotonic clock in milliseconds (the askers' deadlines)
 * Return: the time.
 */
uint64_t control_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool control_is_socket_name(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && !strcmp(name + n - 4, ".ctl");
}

static int control_str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Append @prefix@name to @l (of @n, room for @cap): 0 or -ENOMEM. */
static int control_list_add(char ***l, int *n, int *cap, const char *prefix, const char *name)
{
	char **grown, *s;

	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		grown = realloc(*l, (size_t)*cap * sizeof(**l));
		if (!grown)
			return -ENOMEM;
		*l = grown;
	}
	if (asprintf(&s, "%s%s", prefix, name) < 0)
		return -ENOMEM;
	(*l)[(*n)++] = s;
	return 0;
}

/**
 * control_sockets_list() - the control sockets (*.ctl) in @dir and in its
 * subfolders one level down, as paths relative to @dir, in name order
 * @dir:	the folder (/run/sandnet)
 * @names:	receives the malloc'd names; control_sockets_free() them
 *
 * One level down, because a datapath that runs as an unprivileged user
 * from the start (datapath@.service) may not write in root's state folder:
 * its socket is in a subfolder of its user's (/run/sandnet/units). A
 * subfolder that cannot be read is skipped; the folder itself missing is
 * nothing served.
 *
 * Return: how many, or negative errno when @dir cannot be read or memory
 * ran out.
 */
int control_sockets_list(const char *dir, char ***names)
{
	char **l = NULL, sub[PATH_MAX];
	int n = 0, cap = 0, err = 0;
	struct dirent *d, *e;
	DIR *dh, *sh;

	*names = NULL;
	dh = opendir(dir);
	if (!dh)
		return errno == ENOENT ? 0 : -errno;
	while (!err && (d = readdir(dh))) {
		struct stat sb;

		if (d->d_name[0] == '.')
			continue;
		/* a file system that does not say the type in its entries: ask */
		if (d->d_type == DT_UNKNOWN && fstatat(dirfd(dh), d->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(sb.st_mode))
			d->d_type = DT_DIR;
		if (d->d_type != DT_DIR) {
			if (control_is_socket_name(d->d_name))
				err = control_list_add(&l, &n, &cap, "", d->d_name);
			continue;
		}
		if (snprintf(sub, sizeof(sub), "%s/%s", dir, d->d_name) >= (int)sizeof(sub) ||
		    !(sh = opendir(sub)))
			continue;
		snprintf(sub, sizeof(sub), "%s/", d->d_name);
		while (!err && (e = readdir(sh)))
			if (control_is_socket_name(e->d_name))
				err = control_list_add(&l, &n, &cap, sub, e->d_name);
		closedir(sh);
	}
	closedir(dh);
	if (err) {
		control_sockets_free(l, n);
		return err;
	}
	if (n)
		qsort(l, (size_t)n, sizeof(*l), control_str_cmp);
	*names = l;
	return n;
}

/**
 * control_sockets_free() - what control_sockets_list() gave
 * @names:	the names
 * @n:		how many
 */
void control_sockets_free(char **names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static void __attribute__((format(printf, 3, 4)))
control_ask_fail(struct control_reply *r, enum control_ask_err err, const char *fmt, ...)
{
	va_list ap;

	r->err = err;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	free(r->text);
	r->text = NULL;
	r->len = 0;
}

/* The control sockets of @dir (control_sockets_list()), sorted; a->r is NULL when there is none. */
static int control_ask_list(const char *dir, struct control_replies *a)
{
	char **names;
	int n, i;

	n = control_sockets_list(dir, &names);
	if (n < 0) {
		if (n == -ENOMEM)
			return n;
		a->folder_err = CONTROL_ASK_ERR_FOLDER;
		snprintf(a->why, sizeof(a->why), "%s: %s", dir, strerror(-n));
		return n;
	}
	if (n > CONTROL_ASK_MAX_SOCKETS) {
		a->folder_err = CONTROL_ASK_ERR_TOO_MANY;
		snprintf(a->why, sizeof(a->why), "%s: more than %d control sockets; the rest is not read",
			 dir, CONTROL_ASK_MAX_SOCKETS);
	}
	a->r = n ? calloc((size_t)n, sizeof(*a->r)) : NULL;
	if (n && !a->r) {
		control_sockets_free(names, n);
		return -ENOMEM;
	}
	for (i = 0; i < n && a->n < CONTROL_ASK_MAX_SOCKETS; i++) {
		struct control_reply *r = &a->r[a->n];

		if (strlen(names[i]) >= sizeof(r->sock))
			continue;	/* a name no socket path could hold */
		r->fd = -1;
		r->err = CONTROL_ASK_OK;
		snprintf(r->sock, sizeof(r->sock), "%s", names[i]);
		a->n++;
	}
	control_sockets_free(names, n);
	return 0;
}

/* Connect to @r and send @req; on failure @r says why and holds no fd. */
static void control_ask_one(const char *dir, const char *req, struct control_reply *r)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int n;

	n = snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", dir, r->sock);
	if (n < 0 || (size_t)n >= sizeof(sun.sun_path)) {
		control_ask_fail(r, CONTROL_ASK_ERR_UNREACHABLE, "path too long for a unix socket");
		return;
	}
	r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (r->fd < 0) {
		control_ask_fail(r, CONTROL_ASK_ERR_UNREACHABLE, "socket: %s", strerror(errno));
		return;
	}
	if (connect(r->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		/* a unix connect never completes later: EAGAIN is a full backlog */
		control_ask_fail(r, CONTROL_ASK_ERR_UNREACHABLE, "connect: %s", errno == EAGAIN ?
				 "its backlog is full (is the datapath stuck?)" : errno == ECONNREFUSED ?
				 "Connection refused (is the datapath running?)" : strerror(errno));
		return;
	}
	if (getsockopt(r->fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0)
		r->pid = cred.pid;
	if (send(r->fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req))
		control_ask_fail(r, CONTROL_ASK_ERR_UNREACHABLE, "send: %s", strerror(errno));
}

/* Read what @r has: the answer grows until EOF (then the fd is closed), or it failed. */
static void control_ask_read(struct control_reply *r)
{
	char chunk[16384];
	ssize_t n;

	for (;;) {
		char *b;

		n = recv(r->fd, chunk, sizeof(chunk), 0);
		if (n < 0)
			break;
		if (n == 0) {
			close(r->fd);
			r->fd = -1;
			return;
		}
		if (r->len + (size_t)n > CONTROL_ASK_MAX_BYTES) {
			control_ask_fail(r, CONTROL_ASK_ERR_MALFORMED, "answer larger than %d bytes",
					 CONTROL_ASK_MAX_BYTES);
			return;
		}
		b = realloc(r->text, r->len + (size_t)n + 1);
		if (!b) {
			control_ask_fail(r, CONTROL_ASK_ERR_MALFORMED, "out of memory");
			return;
		}
		r->text = b;
		memcpy(r->text + r->len, chunk, (size_t)n);
		r->len += (size_t)n;
		r->text[r->len] = '\0';
	}
	if (errno != EAGAIN && errno != EINTR)
		control_ask_fail(r, CONTROL_ASK_ERR_UNREACHABLE, "recv: %s", strerror(errno));
}

/* An answer read whole: an empty one or an error line is no answer. */
static void control_ask_judge(struct control_reply *r)
{
	if (r->err != CONTROL_ASK_OK)
		return;
	if (!r->len) {
		control_ask_fail(r, CONTROL_ASK_ERR_MALFORMED, "empty answer");
		return;
	}
	if (!strncmp(r->text, CONTROL_BUSY, strlen(CONTROL_BUSY))) {
		/* a shard did not stop to be read: nothing this time, rather than a part */
		control_ask_fail(r, CONTROL_ASK_ERR_BUSY, "it answered \"%.*s\"", (int)strcspn(r->text, "\n"),
				 r->text);
		return;
	}
	if (!strncmp(r->text, CONTROL_ERROR, strlen(CONTROL_ERROR)))
		/* a datapath that does not know the request says so in words */
		control_ask_fail(r, CONTROL_ASK_ERR_MALFORMED, "it answered \"%.*s\"",
				 (int)strcspn(r->text, "\n") < 100 ? (int)strcspn(r->text, "\n") : 100, r->text);
}

/* Ask the @n replies @r at once and read their answers until @timeout_ms has passed. */
static void control_ask_batch(const char *dir, const char *req, struct control_reply *r, unsigned int n,
			      unsigned int timeout_ms)
{
	struct pollfd pfd[CONTROL_ASK_BATCH];
	uint64_t deadline = control_now_ms() + timeout_ms;
	unsigned int i, np, idx[CONTROL_ASK_BATCH];

	for (i = 0; i < n; i++)
		control_ask_one(dir, req, &r[i]);
	for (;;) {
		uint64_t now = control_now_ms();

		np = 0;
		for (i = 0; i < n; i++) {
			if (r[i].fd < 0)
				continue;
			pfd[np].fd = r[i].fd;
			pfd[np].events = POLLIN;
			idx[np++] = i;
		}
		if (!np || now >= deadline)
			break;
		if (poll(pfd, np, (int)(deadline - now)) < 0 && errno != EINTR)
			break;
		for (i = 0; i < np; i++)
			if (pfd[i].revents)
				control_ask_read(&r[idx[i]]);
	}
	for (i = 0; i < n; i++) {
		if (r[i].fd >= 0)
			control_ask_fail(&r[i], CONTROL_ASK_ERR_TIMEOUT, "no answer within %u ms", timeout_ms);
		control_ask_judge(&r[i]);
	}
}

/* Ask, in batches, every reply of @a whose reason is @which (CONTROL_ASK_OK: all). */
static unsigned int control_ask_those(const char *dir, const char *req, unsigned int timeout_ms,
				      struct control_replies *a, enum control_ask_err which)
{
	struct control_reply *batch[CONTROL_ASK_BATCH];
	unsigned int i = 0, asked = 0;

	while (i < a->n) {
		struct control_reply part[CONTROL_ASK_BATCH];
		unsigned int n = 0, k;

		for (; i < a->n && n < CONTROL_ASK_BATCH; i++) {
			if (which != CONTROL_ASK_OK && a->r[i].err != which)
				continue;
			batch[n] = &a->r[i];
			part[n] = a->r[i];
			part[n].err = CONTROL_ASK_OK;
			part[n].why[0] = '\0';
			part[n].fd = -1;
			n++;
		}
		control_ask_batch(dir, req, part, n, timeout_ms);
		for (k = 0; k < n; k++)
			*batch[k] = part[k];
		asked += n;
	}
	return asked;
}

/**
 * control_ask_dir() - ask every datapath whose control socket is in @dir
 * @dir:	the folder (/run/sandnet)
 * @req:	the request line, newline included (control_proto.h)
 * @timeout_ms:	how long the datapaths asked at once may take in all
 * @a:		filled: one reply per socket, each with its answer or why
 *		not; free with control_replies_free()
 *
 * A folder that does not exist has no datapath (not an error); one that
 * cannot be read sets @a->folder_err.
 *
 * Return: 0, or negative errno when @dir cannot be read or memory ran out.
 */
int control_ask_dir(const char *dir, const char *req, unsigned int timeout_ms, struct control_replies *a)
{
	int err;

	memset(a, 0, sizeof(*a));
	a->folder_err = CONTROL_ASK_OK;
	err = control_ask_list(dir, a);
	if (err)
		return err;
	control_ask_those(dir, req, timeout_ms, a, CONTROL_ASK_OK);
	return 0;
}

/**
 * control_ask_again() - ask the datapaths that answered busy once more
 * @dir, @req, @timeout_ms: as control_ask_dir()
 * @a:		its replies: the busy ones are replaced by their new answers
 *
 * Return: how many were asked.
 */
unsigned int control_ask_again(const char *dir, const char *req, unsigned int timeout_ms,
			       struct control_replies *a)
{
	return control_ask_those(dir, req, timeout_ms, a, CONTROL_ASK_ERR_BUSY);
}

/**
 * control_replies_free() - release what control_ask_dir() filled
 * @a:	the replies
 */
void control_replies_free(struct control_replies *a)
{
	unsigned int i;

	for (i = 0; i < a->n; i++) {
		free(a->r[i].text);
		if (a->r[i].fd >= 0)
			close(a->r[i].fd);
	}
	free(a->r);
	memset(a, 0, sizeof(*a));
}
