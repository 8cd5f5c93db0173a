// SPDX-License-Identifier: MIT
/*
 * control_client.c - the asking end of the control socket: `datapath stats`,
 * `datapath stats --all` and `datapath ss`
 *
 * Theory of operation: control_request() connects, sends one request line
 * (control_proto.h), reads the answer until EOF and turns an "error:"
 * answer into the datapath's own words; a "busy" one (a shard did not stop
 * to be read in time) is asked again a few times, so that an answer is the
 * whole process or an error, never a part. `datapath stats` prints the
 * answer; `--all` asks every control socket of a folder for its summary, all
 * at once as the exporter does (control_ask.c), and asks a busy one again.
 * `datapath ss` lists the TCP connections, or with a trace file starts a
 * trace, reads every CONTROL_TRACE_POLL_MS into the file, and stops it
 * after the given time or on SIGINT/SIGTERM; the file gets the samples
 * and, once at the end, one {"trace":"end",...} line with the reads'
 * samples and drops summed. The answering end is control.c and
 * control_tcp.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "datapath/obs/control_ask.h"
#include "datapath/obs/control_proto.h"
#include "datapath/obs/obs.h"

/* A busy datapath's answer must arrive, not a timeout of ours just before it. */
#define CONTROL_CLIENT_WAIT_S	(CONTROL_ANSWER_WAIT_MS / 1000)
_Static_assert(CONTROL_ANSWER_WAIT_MS % 1000 == 0, "SO_RCVTIMEO is set in whole seconds here");

/* Send @req to the control socket at @path; its answer into @out (malloc'd, NUL-terminated). */
static int control_ask_once(const char *path, const char *req, char **out, size_t *out_len,
			    char *err, size_t err_len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char buf[4096];
	ssize_t n;
	FILE *f;
	int fd, ret;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, err_len, "--control %s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		ret = -errno;
		snprintf(err, err_len, "--control %s: %s%s", path, strerror(errno),
			 errno == ENOENT || errno == ECONNREFUSED ? " (is the datapath running?)" : "");
		if (fd >= 0)
			close(fd);
		return ret;
	}
	control_sock_timeouts(fd, CONTROL_CLIENT_WAIT_S);
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		ret = -errno;
		snprintf(err, err_len, "--control %s: send: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	*out = NULL;
	f = open_memstream(out, out_len);
	if (!f) {
		close(fd);
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		fwrite(buf, 1, n, f);
	ret = n < 0 ? -errno : 0;
	close(fd);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (ret == -EAGAIN || ret == -EWOULDBLOCK) {
		/* SO_RCVTIMEO: not "busy", which is asked again */
		ret = -ETIMEDOUT;
		snprintf(err, err_len, "--control %s: no answer within %d s", path, CONTROL_CLIENT_WAIT_S);
		free(*out);
		*out = NULL;
		return ret;
	}
	if (ret < 0) {
		snprintf(err, err_len, "--control %s: recv: %s", path, strerror(-ret));
		free(*out);
		*out = NULL;
		return ret;
	}
	if (!strncmp(*out, CONTROL_ERROR, strlen(CONTROL_ERROR))) {
		/* the datapath's own words, without "error: " and the newline */
		const char *why = *out + strlen(CONTROL_ERROR) + ((*out)[strlen(CONTROL_ERROR)] == ' ');

		snprintf(err, err_len, "--control %s: the datapath answered: %.*s", path,
			 (int)strcspn(why, "\n"), why);
		ret = !strncmp(*out, CONTROL_BUSY, strlen(CONTROL_BUSY)) ? -EAGAIN : -EPROTO;
		free(*out);
		*out = NULL;
	}
	return ret;
}

#define CONTROL_BUSY_TRIES	5	/* a busy datapath is asked this often */
#define CONTROL_BUSY_WAIT_MS	200	/* between two tries */

/**
 * control_request() - ask a datapath, and ask a busy one again (a shard of
 * it was too busy to stop and be read): the answer is the whole process or
 * an error, never a part
 * @path:	its control socket
 * @req:	the request line, newline included (control_proto.h)
 * @out:	the answer (malloc'd, NUL-terminated)
 * @out_len:	its length
 * @err:	reason on failure (the datapath's own words for an error answer)
 * @err_len:	size of @err
 *
 * Return: 0, -EAGAIN when it stayed busy, -EPROTO for an error answer, or
 * another negative errno.
 */
int control_request(const char *path, const char *req, char **out, size_t *out_len, char *err, size_t err_len)
{
	const struct timespec wait = { .tv_nsec = CONTROL_BUSY_WAIT_MS * 1000000L };
	int i, ret = -EAGAIN;

	for (i = 0; i < CONTROL_BUSY_TRIES && ret == -EAGAIN; i++) {
		if (i)
			nanosleep(&wait, NULL);
		ret = control_ask_once(path, req, out, out_len, err, err_len);
	}
	return ret;
}

/**
 * control_client() - `datapath stats`: ask a running datapath
 * @path:	its control socket
 * @json:	ask for JSON
 * @out:	where the answer goes (stdout)
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0, -EAGAIN when it was still busy after CONTROL_BUSY_TRIES tries,
 * or another negative errno.
 */
int control_client(const char *path, bool json, FILE *out, char *err, size_t err_len)
{
	char *text;
	size_t len;
	int ret;

	ret = control_request(path, json ? CONTROL_REQ_STATS_JSON : CONTROL_REQ_STATS, &text, &len, err, err_len);
	if (ret < 0)
		return ret;
	fwrite(text, 1, len, out);
	free(text);
	return 0;
}

/**
 * control_client_all() - `datapath stats --all`: the summary of every
 * datapath whose control socket is in @dir (netsetup gives the ones it
 * starts detached STATEFILE.ctl there), in name order
 * @dir:	the folder (/run/sandnet)
 * @json:	one JSON array of the summaries instead of text
 * @out:	where the summaries go (stdout); what failed goes to stderr
 * @err:	how many failed, or why @dir cannot be read
 * @err_len:	size of @err
 *
 * They are asked all at once, as the exporter asks them (control_ask.c);
 * one that answered busy is asked again a few times. A datapath that does
 * not answer is reported on stderr, once, and skipped: the others are still
 * shown. No @dir at all is nothing served, not an error.
 *
 * Return: the number shown, or negative errno when one failed or @dir
 * cannot be read.
 */
int control_client_all(const char *dir, bool json, FILE *out, char *err, size_t err_len)
{
	const struct timespec wait = { .tv_nsec = CONTROL_BUSY_WAIT_MS * 1000000L };
	const char *req = json ? CONTROL_REQ_SUMMARY_JSON : CONTROL_REQ_SUMMARY;
	struct control_replies a;
	unsigned int i, shown = 0, failed = 0, tries;
	int ret;

	ret = control_ask_dir(dir, req, CONTROL_ANSWER_WAIT_MS, &a);
	if (ret < 0) {
		snprintf(err, err_len, "--all: %s", a.folder_err != CONTROL_ASK_OK ? a.why : strerror(-ret));
		control_replies_free(&a);
		return ret;
	}
	for (tries = 1; tries < CONTROL_BUSY_TRIES; tries++) {
		for (i = 0; i < a.n && a.r[i].err != CONTROL_ASK_ERR_BUSY; i++)
			;
		if (i == a.n)
			break;
		nanosleep(&wait, NULL);
		control_ask_again(dir, req, CONTROL_ANSWER_WAIT_MS, &a);
	}
	if (a.folder_err != CONTROL_ASK_OK)
		fprintf(stderr, "datapath stats: %s\n", a.why);
	if (json)
		fputc('[', out);
	for (i = 0; i < a.n; i++) {
		struct control_reply *r = &a.r[i];
		size_t len = r->len;

		if (r->err != CONTROL_ASK_OK) {
			/* said here, once; the others are still shown */
			fprintf(stderr, "datapath stats: %s/%s: %s\n", dir, r->sock, r->why);
			failed++;
			continue;
		}
		if (json) {
			/* one document each, without its newline, into the array */
			while (len && r->text[len - 1] == '\n')
				len--;
			if (shown)
				fputc(',', out);
			fwrite(r->text, 1, len, out);
		} else {
			fprintf(out, "%s== %s/%s\n%s", shown ? "\n" : "", dir, r->sock, r->text);
		}
		shown++;
	}
	if (json)
		fputs("]\n", out);
	if (failed)
		snprintf(err, err_len, "%u of %u datapaths did not answer (above)", failed, a.n);
	control_replies_free(&a);
	return failed ? -EIO : (int)shown;
}

static volatile sig_atomic_t control_ss_stop;

static void control_ss_signal(int sig)
{
	(void)sig;
	control_ss_stop = 1;
}

/* Ask @req; an answer "ok" or the document goes to @out (NULL: dropped). */
static int control_ss_ask(const char *path, const char *req, FILE *out, char *err, size_t err_len)
{
	char *text;
	size_t len;
	int ret = control_request(path, req, &text, &len, err, err_len);

	if (ret < 0)
		return ret;
	if (out)
		fwrite(text, 1, len, out);
	free(text);
	return 0;
}

/* What the reads of one trace brought: the end line the file gets once. */
struct control_ss_totals {
	unsigned long long samples, dropped;
};

/*
 * One "trace read": its sample lines go to @out as they are; its closing
 * {"trace":"end",...} line is added to @t instead, so that the file ends
 * with one such line for the whole trace.
 */
static int control_ss_read(const char *path, FILE *out, struct control_ss_totals *t, char *err, size_t err_len)
{
	static const char end[] = "{\"trace\":\"end\",";
	char *text, *line, *next;
	unsigned long long n, d;
	size_t len;
	int ret = control_request(path, CONTROL_REQ_TRACE_READ "\n", &text, &len, err, err_len);

	if (ret < 0)
		return ret;
	for (line = text; line < text + len; line = next) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));

		next = nl ? nl + 1 : text + len;
		if (!strncmp(line, end, sizeof(end) - 1) &&
		    sscanf(line, "{\"trace\":\"end\",\"samples\":%llu,\"dropped\":%llu}", &n, &d) == 2) {
			t->samples += n;
			t->dropped += d;
			continue;
		}
		fwrite(line, 1, (size_t)(next - line), out);
	}
	free(text);
	return 0;
}

/**
 * control_ss_client() - `datapath ss`: list the connections, or trace them
 * @path:	the control socket
 * @json:	the list as JSON
 * @filter:	what to trace (NULL: everything)
 * @trace:	the file the samples go to (JSON lines), NULL to list instead
 * @seconds:	how long to trace, 0 until SIGINT or SIGTERM
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0, or negative errno with @err set.
 */
int control_ss_client(const char *path, bool json, const char *filter, const char *trace, unsigned int seconds,
		      char *err, size_t err_len)
{
	struct sigaction sa = { .sa_handler = control_ss_signal };
	const struct timespec poll = { .tv_nsec = CONTROL_TRACE_POLL_MS * 1000000L };
	struct control_ss_totals totals = { 0, 0 };
	struct timespec start, now;
	char req[CONTROL_REQ_LINE_MAX];
	FILE *f;
	int ret;

	if (!trace)
		return control_ss_ask(path, json ? CONTROL_REQ_CONNS_JSON "\n" : CONTROL_REQ_CONNS "\n", stdout,
				      err, err_len);
	f = fopen(trace, "a");
	if (!f) {
		ret = -errno;
		snprintf(err, err_len, "--trace %s: %s", trace, strerror(errno));
		return ret;
	}
	if ((size_t)snprintf(req, sizeof(req), "%s %s\n", CONTROL_REQ_TRACE_START, filter ? filter : "") >=
	    sizeof(req)) {
		fclose(f);
		snprintf(err, err_len, "trace filter '%s': too long", filter);
		return -EINVAL;
	}
	ret = control_ss_ask(path, req, NULL, err, err_len);
	if (ret < 0) {
		fclose(f);
		return ret;
	}
	control_ss_stop = 0;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		ret = control_ss_read(path, f, &totals, err, err_len);
		if (ret < 0 || control_ss_stop)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (seconds && now.tv_sec - start.tv_sec >= (time_t)seconds)
			break;
		nanosleep(&poll, NULL);
	}
	if (ret >= 0) {
		ret = control_ss_ask(path, CONTROL_REQ_TRACE_STOP "\n", NULL, err, err_len);
		fprintf(f, "{\"trace\":\"end\",\"samples\":%llu,\"dropped\":%llu}\n", totals.samples,
			totals.dropped);
	} else {
		char ignored[64];

		/* the read's error is the one to tell; the trace stops anyway after CONTROL_TRACE_IDLE_MS */
		control_ss_ask(path, CONTROL_REQ_TRACE_STOP "\n", NULL, ignored, sizeof(ignored));
	}
	if (fclose(f) && ret >= 0) {
		ret = -errno;
		snprintf(err, err_len, "--trace %s: %s", trace, strerror(errno));
	}
	return ret;
}
