// SPDX-License-Identifier: MIT
/*
 * control_flows.c - `datapath flows --follow`: the flow log, live
 *
 * Theory of operation: the client connects to the control socket, sends
 * "flows follow" and stays; the datapath's flow log writer (flowlog.c)
 * sends it one JSON line per conversation of the container as it ends, the
 * same lines --flow-log writes, until the client goes, in the spirit of
 * `conntrack -E`. With --json the lines are printed as they come; without,
 * each becomes one line of text. An answer that begins "error:" (too many
 * followers, or no datapath runs: the supervisor answers) is the error.
 * SIGINT, SIGTERM or --seconds end it; so does the datapath's end (EOF).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "datapath/obs/control_proto.h"
#include "datapath/obs/obs.h"

#define CONTROL_FLOWS_LINE_MAX	4096

static volatile sig_atomic_t control_flows_stop;

static void control_flows_signal(int sig)
{
	(void)sig;
	control_flows_stop = 1;
}

/* A string member, or @none. */
static const char *control_flows_str(json_t *o, const char *key, const char *none)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : none;
}

static unsigned long long control_flows_u64(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (unsigned long long)json_integer_value(v) : 0;
}

/* One record as a line of text: what, who to whom, for which name, the verdict, what it carried. */
static void control_flows_text(const char *line, FILE *out)
{
	json_error_t je;
	json_t *o = json_loads(line, 0, &je);
	const char *proto, *dst;
	bool v6;

	if (!json_is_object(o)) {
		fprintf(out, "? %s", line);	/* not ours to judge: as it came */
		json_decref(o);
		return;
	}
	proto = control_flows_str(o, "proto", "?");
	dst = control_flows_str(o, "dst", "?");
	v6 = strchr(dst, ':') != NULL;
	fprintf(out, "%s %-6s %-7s %s%s%s:%llu -> %s%s%s:%llu name=%s %s rule=%s out=%llu/%llu in=%llu/%llu %.3fs %s\n",
		control_flows_str(o, "time", "?"), proto, control_flows_str(o, "direction", "?"),
		v6 ? "[" : "", control_flows_str(o, "src", "?"), v6 ? "]" : "", control_flows_u64(o, "sport"),
		v6 ? "[" : "", dst, v6 ? "]" : "", control_flows_u64(o, "dport"), control_flows_str(o, "name", "-"),
		control_flows_str(o, "verdict", "?"), control_flows_str(o, "rule", "default"),
		control_flows_u64(o, "bytes_out"), control_flows_u64(o, "packets_out"),
		control_flows_u64(o, "bytes_in"), control_flows_u64(o, "packets_in"),
		json_real_value(json_object_get(o, "duration_s")) +
			(double)json_integer_value(json_object_get(o, "duration_s")),
		control_flows_str(o, "end", "open"));	/* a start record's end is null */
	json_decref(o);
}

/**
 * control_flows_client() - `datapath flows --follow`
 * @path:	the control socket
 * @json:	print the records' JSON lines as they are
 * @seconds:	how long to follow, 0 until SIGINT, SIGTERM or the datapath's end
 * @out:	where the records go
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0, or negative errno with @err set.
 */
int control_flows_client(const char *path, bool json, unsigned int seconds, FILE *out, char *err, size_t err_len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct sigaction sa = { .sa_handler = control_flows_signal };
	static const char req[] = CONTROL_REQ_FLOWS_FOLLOW "\n";
	char *buf = malloc(CONTROL_FLOWS_LINE_MAX + 1);
	struct timespec start, now;
	size_t have = 0;
	bool first = true;
	int fd = -1, ret = 0;

	if (!buf) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, err_len, "--control %s: path too long", path);
		ret = -ENAMETOOLONG;
		goto out;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1) {
		ret = -errno;
		snprintf(err, err_len, "--control %s: %s", path, strerror(errno));
		goto out;
	}
	control_flows_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!control_flows_stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *nl, *line;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (seconds && now.tv_sec - start.tv_sec >= (time_t)seconds)
			break;
		if (poll(&p, 1, 200) <= 0)
			continue;	/* EINTR (a signal: the loop's test) or nothing yet */
		n = recv(fd, buf + have, CONTROL_FLOWS_LINE_MAX - have, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* the datapath stopped, or hung up on us */
		have += (size_t)n;
		buf[have] = '\0';
		if (first && have >= sizeof(CONTROL_ERROR) - 1) {
			first = false;
			if (!strncmp(buf, CONTROL_ERROR, sizeof(CONTROL_ERROR) - 1)) {
				buf[strcspn(buf, "\n")] = '\0';
				snprintf(err, err_len, "%s", buf + sizeof(CONTROL_ERROR));
				ret = -EIO;
				goto out;
			}
		}
		for (line = buf; (nl = memchr(line, '\n', have - (size_t)(line - buf))) != NULL; line = nl + 1) {
			*nl = '\0';
			if (json)
				fprintf(out, "%s\n", line);
			else
				control_flows_text(line, out);
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == CONTROL_FLOWS_LINE_MAX)
			have = 0;	/* a line longer than any record: not ours */
		fflush(out);
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}
