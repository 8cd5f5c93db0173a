// SPDX-License-Identifier: MIT
/*
 * control.c - the control socket: the datapath's side
 *
 * Theory of operation: --control SOCKET makes a unix SOCK_STREAM listener,
 * bound before privileges are dropped (so it may live in /run/sandnet) and
 * made 0600: only root and the datapath's own user may ask. A client sends
 * one line, "stats" or "stats json" (everything: stats_print()), "summary"
 * or "summary json" (the few figures per container: stats_print_summary(),
 * what `datapath stats --all` shows and `datapath metrics` exports), "ss ..."
 * (the connections, control_tcp.c), and reads the answer until EOF. The
 * request is read and the answer written with 1-second socket timeouts right
 * in the loop's turn: the answer is a few KiB and the client is local, so a
 * stuck client costs at most a second or two, and no state is kept per
 * client.
 *
 * An answer that cannot be whole (a shard did not stop to be read within a
 * second) is an error line, "error: busy: ...". The client
 * (control_client.c) asks a busy datapath again a few times before it gives
 * up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "datapath/flowlog.h"
#include "datapath/obs/control_proto.h"
#include "datapath/obs/obs.h"
#include "datapath/obs/obs_int.h"
#include "datapath/proc/proc.h"
#include "datapath/proc/shard.h"
#include "datapath/obs/stats.h"

#define CONTROL_REQ_MAX	(CONTROL_REQ_LINE_MAX - 1)

/* A busy datapath's answer must arrive, not a timeout of its askers just before it. */
_Static_assert(CONTROL_ANSWER_WAIT_MS > 2 * SHARD_PARK_MS, "askers outwait a busy datapath");

/**
 * control_answer() - answer one client of a control socket
 * @listen_fd:	the listening socket (non-blocking)
 * @print:	prints the answer: everything, or the summary
 * @ctx:	for @print
 *
 * Shared by a datapath (its loop) and its supervisor (while no datapath
 * runs): the same requests, the same printer.
 */
void control_answer(int listen_fd, control_print_fn print, control_request_fn more, void *ctx)
{
	char req[CONTROL_REQ_MAX + 1];
	char *text = NULL;
	size_t text_len = 0, off = 0, got = 0;
	ssize_t n;
	int fd, ret = 0;
	FILE *f;

	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	control_sock_timeouts(fd, 1);
	while (got < CONTROL_REQ_MAX && !memchr(req, '\n', got)) {
		n = recv(fd, req + got, CONTROL_REQ_MAX - got, 0);
		if (n <= 0)
			break;
		got += n;
	}
	req[got] = '\0';
	f = open_memstream(&text, &text_len);
	if (!f) {
		close(fd);
		return;
	}
	if (!strcmp(req, CONTROL_REQ_STATS) || !strcmp(req, CONTROL_REQ_STATS_JSON))
		ret = print(ctx, f, !strcmp(req, CONTROL_REQ_STATS_JSON), false);
	else if (!strcmp(req, CONTROL_REQ_SUMMARY) || !strcmp(req, CONTROL_REQ_SUMMARY_JSON))
		ret = print(ctx, f, !strcmp(req, CONTROL_REQ_SUMMARY_JSON), true);
	else {
		req[strcspn(req, "\n")] = '\0';
		ret = more ? more(ctx, req, f, fd) : -ENOENT;
	}
	if (ret == CONTROL_FD_TAKEN) {	/* a follower: the flow log has it, and sends to it from now */
		fclose(f);
		free(text);
		return;
	}
	if (ret == -ENOENT) {
		ret = 0;
		fprintf(f, CONTROL_ERROR " unknown request (expected \"stats\", \"stats json\", \"summary\", \"summary json\"%s)\n",
			more ? ", \"conns\", \"conns json\", \"trace start [FILTER]\", \"trace read\", \"trace stop\" or "
			       "\"flows follow\""
			     : "; the rest only a running datapath answers");
	}
	if (ret == -ETIMEDOUT)
		fprintf(f, CONTROL_BUSY " a shard did not stop within %u ms to be read; ask again\n",
			SHARD_PARK_MS);
	else if (ret < 0)
		fprintf(f, CONTROL_ERROR " %s\n", strerror(-ret));
	fclose(f);
	while (off < text_len) {
		n = send(fd, text + off, text_len - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += n;
	}
	free(text);
	close(fd);
}

static int control_dp_print(void *ctx, FILE *f, bool json, bool summary)
{
	return summary ? stats_print_summary(ctx, f, json) : stats_print(ctx, f, json);
}

static int control_dp_request(void *ctx, const char *req, FILE *f, int fd)
{
	struct dp *dp = ctx;
	int ret;

	if (strcmp(req, CONTROL_REQ_FLOWS_FOLLOW))
		return control_tcp_request(dp, req, f);
	if (!dp->flowlog)
		return -ENOTSUP;
	ret = flowlog_follow(dp->flowlog, fd);
	if (ret == -EBUSY)
		fprintf(f, CONTROL_ERROR " %d followers already (the most a datapath takes)\n", FLOWLOG_FOLLOWERS_MAX);
	else if (ret < 0)
		return ret;
	return ret < 0 ? 0 : CONTROL_FD_TAKEN;
}

static void control_event(struct loop_fd *h, uint32_t events)
{
	struct dp *dp = h->ctx;

	(void)events;
	control_answer(dp->control_fd, control_dp_print, control_dp_request, dp);
}

/**
 * control_bind() - bind and listen on the control socket at @path (before
 * the privilege drop: it may live in /run/sandnet)
 * @path:	filesystem path; a stale socket there is replaced
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: the listening socket (non-blocking, mode 0600, or 0660 when the
 * umask leaves the group write), or negative errno.
 */
int control_bind(const char *path, char *err, size_t err_len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat sb;
	mode_t mask;
	int fd, ret;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, err_len, "--control %s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			snprintf(err, err_len, "--control %s: exists and is not a socket", path);
			return -EEXIST;
		}
		unlink(path);
	}
	/* the owner's alone, or its group's too when the umask leaves group write (datapath@.service: 0007) */
	mask = umask(0);
	umask(mask);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    chmod(path, (mask & 0060) ? 0600 : 0660) < 0 || listen(fd, 16) < 0) {
		ret = -errno;
		snprintf(err, err_len, "--control %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	return fd;
}

/**
 * control_adopt() - serve the control socket the supervisor bound
 * @dp:		the datapath
 * @fd:		the listening socket (--control-fd), owned from now on; its
 *		path stays when the datapath stops (the supervisor keeps the
 *		socket for the next one)
 *
 * Return: 0, or -ENOTSOCK when @fd is not a listening unix stream socket.
 */
int control_adopt(struct dp *dp, int fd)
{
	int v = 0, dom = 0;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0 || !v ||
	    (len = sizeof(dom), getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) < 0) || dom != AF_UNIX) {
		close(fd);
		return -ENOTSOCK;
	}
	dp->control_fd = fd;
	return 0;
}

/**
 * control_start() - serve the control socket from the loop
 * Return: 0 or negative errno.
 */
int control_start(struct dp *dp)
{
	if (dp->control_fd < 0)
		return 0;
	return loop_fd_add(dp->loop, &dp->control_lfd, dp->control_fd, EPOLLIN, control_event, dp);
}

/**
 * control_close() - stop serving (the socket stays: its supervisor has it)
 */
void control_close(struct dp *dp)
{
	control_tcp_close(dp);
	if (dp->control_fd < 0)
		return;
	loop_fd_del(dp->loop, &dp->control_lfd);
	close(dp->control_fd);
	dp->control_fd = -1;
}
