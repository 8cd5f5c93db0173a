// SPDX-License-Identifier: MIT
/*
 * metrics.c - `datapath metrics`: serve the datapaths' summaries to Prometheus
 *
 *   datapath metrics --listen ADDRESS:PORT [--dir DIR] [--datapath-timeout MS] [--client-timeout S]
 *
 * Theory of operation: one process, one poll() loop, no threads. It binds
 * the TCP listener, then drops every capability (privdrop.c: it keeps its
 * uid, which must be able to open the control sockets: root, whose files
 * they are; docs/security.md says why that is the choice), and serves:
 *
 *   - at most METRICS_MAX_CLIENTS connections at once, each with its own
 *     request buffer and one deadline: --client-timeout seconds to send the
 *     request head (a slow or silent client is answered 408 and cut), the
 *     same again to take the answer (a client that does not read is cut);
 *     one client more is answered 503 at once. So a stalled client holds
 *     only its own slot, never the datapaths and never another client for
 *     longer than one scrape;
 *   - each request is judged by metrics_http_request() as soon as its head
 *     is complete (the request line as soon as it is): GET or HEAD of
 *     /metrics is answered, another path 404, another method 405, anything
 *     malformed 400 with what was wrong, a head over 8 KiB 431, another
 *     HTTP version 505. Every answer closes the connection (Connection:
 *     close), so there is no keep-alive state;
 *   - GET /metrics scrapes the folder (metrics_scrape.c: every datapath at
 *     once, --datapath-timeout milliseconds at most per batch), prints the
 *     exposition into memory (metrics_expo.c) and only then starts writing
 *     to the client: the datapaths are done with before any byte goes out.
 *     The loop does not serve other clients during a scrape; they wait, at
 *     most that timeout.
 *
 * The exporter's own counters (scrape errors by reason, requests by status)
 * live in struct metrics_self for the process's life; nothing else is kept
 * between scrapes. SIGTERM or SIGINT stops it (exit 0).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "datapath/obs/control_proto.h"
#include "datapath/proc/proc.h"
#include "datapath/obs/metrics.h"
#include "datapath/obs/metrics_expo.h"

#define METRICS_MAX_CLIENTS	16
#define METRICS_PATH		"/metrics"

/* The usage below repeats the default's figure */
_Static_assert(CONTROL_ANSWER_WAIT_MS == 3000, "metrics_usage names the --datapath-timeout default");

static const char metrics_usage[] =
	"usage: datapath metrics --listen ADDRESS:PORT [--dir DIR] [--datapath-timeout MS]\n"
	"                        [--client-timeout SECONDS]\n"
	"  serves GET /metrics (Prometheus text format) for every datapath whose control socket\n"
	"  is in DIR (default $SANDNET_STATE_DIR, else /run/sandnet): what `datapath stats --all` sees\n"
	"  --listen ADDRESS:PORT      127.0.0.1:9476, [::1]:9476, 0.0.0.0:9476 or [::]:9476\n"
	"  --datapath-timeout MS      longest wait for the datapaths' answers (default 3000, 10..60000)\n"
	"  --client-timeout SECONDS   a client's time to send its request, and again to read the\n"
	"                             answer, before it is cut (default 5, 1..300)\n"
	"See datapath(8).\n";

/**
 * struct metrics_client - one HTTP connection
 * @fd:		the socket, -1 when the slot is free
 * @deadline_ms: when it is cut (reading: the head; writing: the answer)
 * @head:	what it sent so far; @got its length
 * @resp:	the whole answer once decided; @resp_len, @sent
 * @draining:	the answer is sent and our side shut: what the client still
 *		sends is read and dropped until its EOF (or 1 s), since closing
 *		with unread bytes would send a RST that can destroy the answer
 *		before the client has read it
 * @peer:	"ADDRESS:PORT", for the log
 */
struct metrics_client {
	int fd;
	uint64_t deadline_ms;
	char head[METRICS_HEAD_MAX_BYTES + 1];
	size_t got;
	char *resp;
	size_t resp_len, sent;
	bool draining;
	char peer[INET6_ADDRSTRLEN + 8];
};

struct metrics_server {
	const char *dir;
	unsigned int datapath_timeout_ms;
	unsigned int client_timeout_ms;
	int listen_fd;
	int sig_fd;
	struct metrics_client clients[METRICS_MAX_CLIENTS];
	struct metrics_self self;
};

/**
 * metrics_http_reason() - the reason phrase of a status code we send
 * @code:	the status
 * Return: "Not Found" for 404 and so on; "Error" for a code we never send.
 */
const char *metrics_http_reason(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

/**
 * metrics_http_head_end() - where a request head ends
 * @buf:	what the client sent so far
 * @len:	its length
 *
 * Return: the length of the head with its blank line (CRLF CRLF, or LF LF
 * from a lenient client), or -1 while it is not complete.
 */
ssize_t metrics_http_head_end(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (buf[i + 1] == '\n')
			return (ssize_t)(i + 2);
		if (buf[i + 1] == '\r' && i + 2 < len && buf[i + 2] == '\n')
			return (ssize_t)(i + 3);
	}
	return -1;
}

/* RFC 9110 5.6.2: a token character. */
static bool metrics_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The request line (without its line end); the status it calls for, with @why. */
static int metrics_request_line(const char *line, size_t len, struct metrics_request *r, char *why, size_t why_len)
{
	const char *sp1, *sp2, *path, *end = line + len;
	size_t mlen, tlen, plen;

	sp1 = memchr(line, ' ', len);
	if (!sp1 || sp1 == line) {
		snprintf(why, why_len, "malformed request line: expected METHOD TARGET HTTP/1.1");
		return 400;
	}
	mlen = (size_t)(sp1 - line);
	for (const char *c = line; c < sp1; c++) {
		if (!metrics_tchar(*c) || mlen >= sizeof(r->method)) {
			snprintf(why, why_len, "malformed request line: the method is not a token");
			return 400;
		}
	}
	memcpy(r->method, line, mlen);
	r->method[mlen] = '\0';
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1 || memchr(sp2 + 1, ' ', (size_t)(end - sp2 - 1))) {
		snprintf(why, why_len, "malformed request line: expected METHOD TARGET HTTP/1.1, one space apart");
		return 400;
	}
	tlen = (size_t)(sp2 - sp1 - 1);
	snprintf(r->target, sizeof(r->target), "%.*s", (int)tlen, sp1 + 1);
	for (const char *c = sp1 + 1; c < sp2; c++) {
		if ((unsigned char)*c <= 0x20 || *c == 0x7f) {
			snprintf(why, why_len, "malformed request target: a control character");
			return 400;
		}
	}
	if (end - sp2 - 1 != 8 || strncmp(sp2 + 1, "HTTP/", 5) || sp2[6] < '0' || sp2[6] > '9' || sp2[7] != '.' ||
	    sp2[8] < '0' || sp2[8] > '9') {
		snprintf(why, why_len, "malformed request line: the version is not HTTP/1.1 or HTTP/1.0");
		return 400;
	}
	if (sp2[6] != '1') {
		snprintf(why, why_len, "HTTP/%c.%c: only HTTP/1.0 and HTTP/1.1 are spoken", sp2[6], sp2[8]);
		return 505;
	}
	/* origin-form, or absolute-form (RFC 9112 3.2.2): the path after the authority */
	path = sp1 + 1;
	if (tlen > 7 && !strncasecmp(path, "http://", 7)) {
		path = memchr(path + 7, '/', (size_t)(sp2 - path - 7));
		if (!path)
			path = sp2;
	} else if (path[0] != '/') {
		snprintf(why, why_len, "malformed request target '%s': expected a path such as %s", r->target,
			 METRICS_PATH);
		return 400;
	}
	plen = (size_t)(sp2 - path);
	for (size_t i = 0; i < plen; i++)
		if (path[i] == '?' || path[i] == '#')
			plen = i;
	if (plen != strlen(METRICS_PATH) || strncmp(path, METRICS_PATH, plen)) {
		snprintf(why, why_len, "%s: no such path; the metrics are at %s", r->target, METRICS_PATH);
		return 404;
	}
	if (strcmp(r->method, "GET") && strcmp(r->method, "HEAD")) {
		snprintf(why, why_len, "method %s: %s answers GET and HEAD only", r->method, METRICS_PATH);
		return 405;
	}
	r->head_only = !strcmp(r->method, "HEAD");
	return 200;
}

/**
 * metrics_http_request() - judge a request head
 * @head:	the request line, or the whole head (request line, header
 *		lines, blank line); no NUL needed
 * @len:	its length
 * @r:		filled: the method and target (for the log), HEAD or not
 * @why:	what was wrong, in words, when the result is not 200
 * @why_len:	size of @why
 *
 * The request line decides the answer; header lines must each be
 * "NAME: value" with a token NAME (no folding, no control characters but
 * tab), and nothing in them changes the answer.
 *
 * Return: the HTTP status to answer: 200, 400, 404, 405 or 505.
 */
int metrics_http_request(const char *head, size_t len, struct metrics_request *r, char *why, size_t why_len)
{
	const char *line = head, *end = head + len, *nl;
	unsigned int n = 0;
	int code;

	memset(r, 0, sizeof(*r));
	why[0] = '\0';
	if (memchr(head, '\0', len)) {
		snprintf(why, why_len, "a NUL byte in the request");
		return 400;
	}
	nl = memchr(line, '\n', len);
	if (!nl)
		nl = end;
	code = metrics_request_line(line, (size_t)(nl - line) - (nl > line && nl[-1] == '\r'), r, why, why_len);
	if (code == 400 || code == 505)
		return code;
	for (line = nl + 1; line < end; line = nl + 1) {
		const char *colon, *c;
		size_t llen;

		n++;
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			nl = end;
		llen = (size_t)(nl - line) - (nl > line && nl[-1] == '\r');
		if (!llen)
			break;	/* the blank line: the end of the head */
		colon = memchr(line, ':', llen);
		if (!colon || colon == line) {
			snprintf(why, why_len, "malformed header line %u: expected NAME: VALUE", n);
			return 400;
		}
		for (c = line; c < colon; c++) {
			if (!metrics_tchar(*c)) {
				snprintf(why, why_len, "malformed header line %u: the name is not a token%s", n,
					 *c == ' ' || *c == '\t' ? " (no space before the colon, no folding)" : "");
				return 400;
			}
		}
		for (c = colon + 1; c < line + llen; c++) {
			if (((unsigned char)*c < 0x20 && *c != '\t') || *c == 0x7f) {
				snprintf(why, why_len, "malformed header line %u: a control character", n);
				return 400;
			}
		}
	}
	return code;
}

/**
 * metrics_listen_parse() - ADDRESS:PORT as a socket address
 * @spec:	"127.0.0.1:9476", "[::1]:9476", "0.0.0.0:9476", "[::]:9476"
 * @ss:		filled
 * @ss_len:	its length
 * @err:	what was wrong, on failure
 * @err_len:	size of @err
 *
 * Numbers only: a host name would make the exporter's address depend on
 * the resolver at start.
 *
 * Return: 0 or -EINVAL.
 */
int metrics_listen_parse(const char *spec, struct sockaddr_storage *ss, socklen_t *ss_len, char *err,
			 size_t err_len)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM };
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *port;
	struct addrinfo *ai;
	char *end;
	long p;
	int ret;

	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host)) {
			snprintf(err, err_len, "--listen '%s': expected [IPV6]:PORT", spec);
			return -EINVAL;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(close - spec - 1), spec + 1);
		port = close + 2;
	} else {
		colon = strrchr(spec, ':');
		if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host) || memchr(spec, ':', (size_t)(colon - spec))) {
			snprintf(err, err_len, "--listen '%s': expected ADDRESS:PORT (127.0.0.1:9476, [::1]:9476)",
				 spec);
			return -EINVAL;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
		port = colon + 1;
	}
	errno = 0;
	p = strtol(port, &end, 10);
	if (!port[0] || *end || errno || p < 1 || p > 65535) {
		snprintf(err, err_len, "--listen '%s': port '%s' is not a number in 1..65535", spec, port);
		return -EINVAL;
	}
	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret) {
		snprintf(err, err_len, "--listen '%s': '%s' is not an IPv4 or IPv6 address", spec, host);
		return -EINVAL;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*ss_len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static void metrics_client_close(struct metrics_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->resp);
	c->resp = NULL;
	c->got = c->resp_len = c->sent = 0;
	c->draining = false;
}

/* Start answering @c with @code: the body is @body (@body_len bytes), or @why for an error. */
static void metrics_respond(struct metrics_server *srv, struct metrics_client *c, int code, const char *body,
			    size_t body_len, bool head_only)
{
	char err_body[512];
	FILE *f;

	if (code != 200) {
		snprintf(err_body, sizeof(err_body), "datapath metrics: %d %s: %s\n", code, metrics_http_reason(code),
			 body);
		body = err_body;
		body_len = strlen(err_body);
	}
	srv->self.requests[code - 100]++;
	f = open_memstream(&c->resp, &c->resp_len);
	if (!f) {
		metrics_client_close(c);
		return;
	}
	fprintf(f, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n",
		code, metrics_http_reason(code),
		code == 200 ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8", body_len,
		code == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (!head_only)
		fwrite(body, 1, body_len, f);
	if (fclose(f)) {
		metrics_client_close(c);
		return;
	}
	c->sent = 0;
	c->deadline_ms = control_now_ms() + srv->client_timeout_ms;
}

/* GET /metrics: ask every datapath, then print. */
static void metrics_answer(struct metrics_server *srv, struct metrics_client *c, bool head_only)
{
	struct metrics_scrape s;
	uint64_t start = control_now_ms();
	char *body = NULL;
	size_t len = 0, i;
	FILE *f;

	if (metrics_scrape_dir(srv->dir, srv->datapath_timeout_ms, &s) < 0 && s.folder_err == CONTROL_ASK_OK) {
		metrics_scrape_free(&s);
		metrics_respond(srv, c, 500, "out of memory", 13, false);
		return;
	}
	if (s.folder_err != CONTROL_ASK_OK) {
		srv->self.scrape_errors[s.folder_err]++;
		fprintf(stderr, "datapath metrics: %s\n", s.why);
	}
	for (i = 0; i < s.n; i++) {
		if (s.targets[i].err == CONTROL_ASK_OK)
			continue;
		srv->self.scrape_errors[s.targets[i].err]++;
		fprintf(stderr, "datapath metrics: %s/%s: %s\n", srv->dir, s.targets[i].sock, s.targets[i].why);
	}
	metrics_expo_names(s.targets, s.n);
	srv->self.scrape_seconds = (double)(control_now_ms() - start) / 1000;
	f = open_memstream(&body, &len);
	if (f) {
		metrics_expo_write(f, &s, &srv->self);
		if (fclose(f)) {
			free(body);
			body = NULL;
		}
	}
	metrics_scrape_free(&s);
	if (!body) {
		metrics_respond(srv, c, 500, "out of memory", 13, false);
		return;
	}
	/* this answer itself counts in sandnet_exporter_http_requests_total from the next one on */
	metrics_respond(srv, c, 200, body, len, head_only);
	free(body);
}

/* The client sent more: judge the request once its line, then its head, is complete. */
static void metrics_client_read(struct metrics_server *srv, struct metrics_client *c)
{
	struct metrics_request r;
	char why[384];
	ssize_t n, end;
	int code;

	n = recv(c->fd, c->head + c->got, METRICS_HEAD_MAX_BYTES - c->got, 0);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		metrics_client_close(c);	/* gone before asking anything */
		return;
	}
	c->got += (size_t)n;
	end = metrics_http_head_end(c->head, c->got);
	if (end < 0 && memchr(c->head, '\n', c->got)) {
		/* the request line alone may already be wrong: no need to wait for the rest */
		code = metrics_http_request(c->head, (size_t)((char *)memchr(c->head, '\n', c->got) - c->head + 1),
					    &r, why, sizeof(why));
		if (code == 400 || code == 505)
			goto refuse;
	}
	if (end < 0) {
		if (c->got < METRICS_HEAD_MAX_BYTES)
			return;
		code = memchr(c->head, '\n', c->got) ? 431 : 414;
		snprintf(why, sizeof(why), "%s longer than %d bytes", code == 414 ? "the request line is" :
			 "the request head is", METRICS_HEAD_MAX_BYTES);
		memset(&r, 0, sizeof(r));
		goto refuse;
	}
	code = metrics_http_request(c->head, (size_t)end, &r, why, sizeof(why));
	if (code == 200) {
		metrics_answer(srv, c, r.head_only);
		return;
	}
refuse:
	fprintf(stderr, "datapath metrics: %s: %d %s: %s\n", c->peer, code, metrics_http_reason(code), why);
	metrics_respond(srv, c, code, why, strlen(why), false);
}

static void metrics_client_write(struct metrics_client *c)
{
	ssize_t n = send(c->fd, c->resp + c->sent, c->resp_len - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			metrics_client_close(c);
		return;
	}
	c->sent += (size_t)n;
	if (c->sent < c->resp_len)
		return;
	/* all sent: FIN, then wait for the client's EOF (a lingering close) */
	shutdown(c->fd, SHUT_WR);
	c->draining = true;
	c->deadline_ms = control_now_ms() + 1000;
}

/* Drop what a client sends after its answer; close at its EOF. */
static void metrics_client_drain(struct metrics_client *c)
{
	char sink[4096];
	ssize_t n;

	while ((n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
		;
	if (n == 0 || (errno != EAGAIN && errno != EINTR))
		metrics_client_close(c);
}

static void metrics_accept(struct metrics_server *srv)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct metrics_client *c = NULL;
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int i;
	int fd;

	fd = accept4(srv->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
	else if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
	for (i = 0; i < METRICS_MAX_CLIENTS && !c; i++)
		if (srv->clients[i].fd < 0)
			c = &srv->clients[i];
	if (!c) {
		static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
					   "Connection: close\r\n\r\n";

		srv->self.requests[503 - 100]++;
		fprintf(stderr, "datapath metrics: %s: 503: %d connections open already\n", host,
			METRICS_MAX_CLIENTS);
		send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);	/* best effort: cut either way */
		close(fd);
		return;
	}
	c->fd = fd;
	c->got = 0;
	c->deadline_ms = control_now_ms() + srv->client_timeout_ms;
	snprintf(c->peer, sizeof(c->peer), ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host,
		 ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
						  ((struct sockaddr_in *)&ss)->sin_port));
}

/* Clients past their deadline: one still asking gets 408 (if it takes it at once), every one is cut. */
static int metrics_expire(struct metrics_server *srv)
{
	uint64_t now = control_now_ms(), next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < METRICS_MAX_CLIENTS; i++) {
		struct metrics_client *c = &srv->clients[i];

		if (c->fd < 0)
			continue;
		if (now < c->deadline_ms) {
			next = c->deadline_ms < next ? c->deadline_ms : next;
			continue;
		}
		if (!c->resp) {
			char why[96];

			snprintf(why, sizeof(why), "no complete request within %u s", srv->client_timeout_ms / 1000);
			fprintf(stderr, "datapath metrics: %s: 408 %s: %s\n", c->peer, metrics_http_reason(408), why);
			metrics_respond(srv, c, 408, why, strlen(why), false);
			if (c->resp)
				metrics_client_write(c);
		} else if (!c->draining) {
			fprintf(stderr, "datapath metrics: %s: cut: the answer was not taken within %u s\n", c->peer,
				srv->client_timeout_ms / 1000);
		}
		metrics_client_close(c);
	}
	return next == UINT64_MAX ? -1 : (int)(next - now);
}

static int metrics_serve(struct metrics_server *srv)
{
	struct pollfd pfd[METRICS_MAX_CLIENTS + 2];
	unsigned int i, np, idx[METRICS_MAX_CLIENTS + 2];
	int timeout;

	for (;;) {
		timeout = metrics_expire(srv);
		pfd[0] = (struct pollfd){ .fd = srv->sig_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = srv->listen_fd, .events = POLLIN };
		np = 2;
		for (i = 0; i < METRICS_MAX_CLIENTS; i++) {
			if (srv->clients[i].fd < 0)
				continue;
			pfd[np].fd = srv->clients[i].fd;
			pfd[np].events = srv->clients[i].resp && !srv->clients[i].draining ? POLLOUT : POLLIN;
			idx[np++] = i;
		}
		if (poll(pfd, np, timeout) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "datapath metrics: poll: %s\n", strerror(errno));
			return 1;
		}
		if (pfd[0].revents)
			return 0;	/* SIGTERM, SIGINT */
		for (i = 2; i < np; i++) {
			struct metrics_client *c = &srv->clients[idx[i]];

			if (!pfd[i].revents || c->fd < 0)
				continue;
			if (c->draining) {
				metrics_client_drain(c);
				continue;
			}
			if (!c->resp)
				metrics_client_read(srv, c);
			if (c->fd >= 0 && c->resp)
				metrics_client_write(c);
		}
		if (pfd[1].revents)
			metrics_accept(srv);
	}
}

static int metrics_number(const char *opt, const char *v, long min, long max, unsigned int *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (!v[0] || *end || errno || n < min || n > max) {
		fprintf(stderr, "datapath metrics: %s '%s': expected a number in %ld..%ld\n", opt, v, min, max);
		return -EINVAL;
	}
	*out = (unsigned int)n;
	return 0;
}

/**
 * metrics_main() - `datapath metrics`
 * @argc:	arguments from "metrics" on
 * @argv:	argv[0] is "metrics"
 *
 * Return: the exit status: 0 after SIGTERM or SIGINT, 1 when it cannot
 * serve, 2 for a malformed command line.
 */
int metrics_main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "dir", required_argument, NULL, 'd' },
		{ "datapath-timeout", required_argument, NULL, 't' },
		{ "client-timeout", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static struct metrics_server srv;
	const char *listen_spec = NULL;
	struct sockaddr_storage ss;
	socklen_t ss_len;
	unsigned int client_s = 5, i;
	char err[512], uid[16];
	sigset_t mask;
	int c, one = 1, rc = 1;

	srv.datapath_timeout_ms = CONTROL_ANSWER_WAIT_MS;
	srv.listen_fd = srv.sig_fd = -1;
	for (i = 0; i < METRICS_MAX_CLIENTS; i++)
		srv.clients[i].fd = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_spec = optarg;
			break;
		case 'd':
			srv.dir = optarg;
			break;
		case 't':
			if (metrics_number("--datapath-timeout", optarg, 10, 60000, &srv.datapath_timeout_ms) < 0)
				return 2;
			break;
		case 'c':
			if (metrics_number("--client-timeout", optarg, 1, 300, &client_s) < 0)
				return 2;
			break;
		case 'h':
			fputs(metrics_usage, stdout);
			return 0;
		default:
			fputs(metrics_usage, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "datapath metrics: unexpected argument '%s'\n%s", argv[optind], metrics_usage);
		return 2;
	}
	if (!listen_spec) {
		fprintf(stderr, "datapath metrics: --listen ADDRESS:PORT is needed\n%s", metrics_usage);
		return 2;
	}
	if (metrics_listen_parse(listen_spec, &ss, &ss_len, err, sizeof(err)) < 0) {
		fprintf(stderr, "datapath metrics: %s\n", err);
		return 2;
	}
	srv.client_timeout_ms = client_s * 1000;
	/* where netsetup keeps its state, as `datapath stats --all` finds it */
	if (!srv.dir)
		srv.dir = getenv("SANDNET_STATE_DIR") && *getenv("SANDNET_STATE_DIR") ?
			  getenv("SANDNET_STATE_DIR") : "/run/sandnet";

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	srv.sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	srv.listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv.sig_fd < 0 || srv.listen_fd < 0 ||
	    setsockopt(srv.listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(srv.listen_fd, (struct sockaddr *)&ss, ss_len) < 0 || listen(srv.listen_fd, 64) < 0) {
		fprintf(stderr, "datapath metrics: --listen %s: %s\n", listen_spec, strerror(errno));
		goto out;
	}
	/* Bound: nothing more needs a capability. The uid stays (docs/security.md). */
	snprintf(uid, sizeof(uid), "%u", (unsigned int)getuid());
	if (privdrop(uid, err, sizeof(err)) < 0) {
		fprintf(stderr, "datapath metrics: dropping privileges: %s\n", err);
		goto out;
	}
	fprintf(stderr, "datapath metrics: serving %s/metrics for the datapaths in %s, as uid %s without capabilities\n",
		listen_spec, srv.dir, uid);
	rc = metrics_serve(&srv);
	if (!rc)
		fprintf(stderr, "datapath metrics: stopped\n");
out:
	for (i = 0; i < METRICS_MAX_CLIENTS; i++)
		metrics_client_close(&srv.clients[i]);
	if (srv.listen_fd >= 0)
		close(srv.listen_fd);
	if (srv.sig_fd >= 0)
		close(srv.sig_fd);
	return rc;
}
