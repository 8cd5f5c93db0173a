// SPDX-License-Identifier: MIT
/*
 * churn - many short TCP connections, as fast as they go
 *
 *   churn server --listen ADDR:PORT [--duration S]
 *   churn client --connect ADDR:PORT --count N [--parallel P] [--size B]
 *                [--duration S]
 *
 * Theory of operation: one thread, one epoll, non-blocking sockets on both
 * sides. The client keeps P connections in flight (default 200); each one
 * connects, writes a request of B bytes (default 64; byte i is (i * 7 + n)
 * mod 251 for connection n), reads the answer until EOF, checks that it is
 * the request sent back, and closes. The server accepts everything, reads
 * one request of B bytes (the first byte tells nothing: it reads until it has
 * as many bytes as the client announced in its first 4 bytes, big-endian),
 * writes it back and closes first, so the side that answers holds TIME-WAIT,
 * as a web server does. Every connection is bounded by an idle timeout, the
 * server by --duration (default 600 s), the client by --duration (default
 * 120 s).
 *
 * The client prints one line for scripts to parse:
 *   churn: ok=N failed=N connect_errors=N mismatches=N seconds=S rate=R
 * and exits 0 when every one of the N connections exchanged its bytes.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#define CHURN_MAX_SIZE		65536u
#define CHURN_MAX_PARALLEL	4096u
#define CHURN_IDLE_MS		10000
#define CHURN_HDR		4

struct churn_conn {
	int fd;
	bool used;
	bool connected;
	uint32_t n;		/* connection number (client) */
	uint32_t want;		/* request size */
	uint32_t sent;
	uint32_t got;
	uint64_t last_ms;
	uint8_t *buf;
};

static volatile sig_atomic_t churn_stop;

static void churn_on_signal(int sig)
{
	(void)sig;
	churn_stop = 1;
}

static uint64_t churn_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int churn_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[128];
	const char *colon = strrchr(s, ':');
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	size_t hl;
	long port;
	char *end;

	if (!colon)
		return -1;
	hl = (size_t)(colon - s);
	if (hl >= sizeof(host))
		return -1;
	memcpy(host, s, hl);
	host[hl] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535)
		return -1;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
			return -1;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
		return -1;
	in4->sin_family = AF_INET;
	in4->sin_port = htons((uint16_t)port);
	*len = sizeof(*in4);
	return 0;
}

static uint8_t churn_byte(uint32_t n, uint32_t i)
{
	return (uint8_t)((i * 7 + n) % 251);
}

static void churn_fill(struct churn_conn *c)
{
	uint32_t i;

	c->buf[0] = c->want >> 24;
	c->buf[1] = c->want >> 16;
	c->buf[2] = c->want >> 8;
	c->buf[3] = c->want & 0xff;
	for (i = CHURN_HDR; i < c->want; i++)
		c->buf[i] = churn_byte(c->n, i);
}

static void churn_close(int ep, struct churn_conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->used = false;
}

/* ---- server ---- */

static int churn_server(const char *listen_at, unsigned int duration)
{
	static struct churn_conn conns[CHURN_MAX_PARALLEL * 4];
	static uint8_t bufs[CHURN_MAX_PARALLEL * 4][CHURN_HDR + 256];
	struct epoll_event evs[256];
	struct sockaddr_storage ss;
	uint64_t end = churn_now_ms() + duration * 1000ULL, served = 0, last_sweep = 0;
	socklen_t sl;
	int lfd, ep, one = 1, n, i;
	unsigned int j;

	if (churn_addr(listen_at, &ss, &sl) < 0) {
		fprintf(stderr, "churn: --listen %s: expected ADDR:PORT\n", listen_at);
		return 2;
	}
	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)&ss, sl) < 0 || listen(lfd, 4096) < 0) {
		fprintf(stderr, "churn: --listen %s: %s\n", listen_at, strerror(errno));
		return 1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return 1;
	{
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };

		epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	}
	for (j = 0; j < sizeof(conns) / sizeof(conns[0]); j++) {
		conns[j].fd = -1;
		conns[j].buf = bufs[j];
	}
	fprintf(stderr, "churn: serving %s\n", listen_at);
	while (!churn_stop && churn_now_ms() < end) {
		uint64_t now;

		n = epoll_wait(ep, evs, 256, 200);
		now = churn_now_ms();
		for (i = 0; i < n; i++) {
			struct churn_conn *c = evs[i].data.ptr;
			ssize_t r;

			if (!c) {
				int fd;

				while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					struct epoll_event ev = { .events = EPOLLIN };

					for (j = 0; j < sizeof(conns) / sizeof(conns[0]) && conns[j].used; j++)
						;
					if (j == sizeof(conns) / sizeof(conns[0])) {
						close(fd);	/* too many at once */
						continue;
					}
					c = &conns[j];
					memset(c, 0, sizeof(*c));
					c->buf = bufs[j];
					c->fd = fd;
					c->used = true;
					c->last_ms = now;
					ev.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
				}
				continue;
			}
			c->last_ms = now;
			if (c->want == 0 || c->got < c->want) {
				r = recv(c->fd, c->buf + c->got, CHURN_HDR + 256 - c->got, 0);
				if (r <= 0) {
					if (r < 0 && errno == EAGAIN)
						continue;
					churn_close(ep, c);
					continue;
				}
				c->got += (uint32_t)r;
				if (c->got >= CHURN_HDR && !c->want) {
					c->want = (uint32_t)c->buf[0] << 24 | (uint32_t)c->buf[1] << 16 |
						  (uint32_t)c->buf[2] << 8 | c->buf[3];
					if (c->want < CHURN_HDR || c->want > CHURN_HDR + 256) {
						churn_close(ep, c);
						continue;
					}
				}
				if (!c->want || c->got < c->want)
					continue;
			}
			/* the whole request: answer it and close first */
			r = send(c->fd, c->buf + c->sent, c->want - c->sent, MSG_NOSIGNAL);
			if (r > 0)
				c->sent += (uint32_t)r;
			if (c->sent == c->want || (r < 0 && errno != EAGAIN)) {
				served += c->sent == c->want;
				churn_close(ep, c);
			} else {
				struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = c };

				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
			}
		}
		if (now - last_sweep >= 1000) {
			last_sweep = now;
			for (j = 0; j < sizeof(conns) / sizeof(conns[0]); j++)
				if (conns[j].used && now - conns[j].last_ms > CHURN_IDLE_MS)
					churn_close(ep, &conns[j]);
		}
	}
	fprintf(stderr, "churn: served %llu\n", (unsigned long long)served);
	close(ep);
	close(lfd);
	return 0;
}

/* ---- client ---- */

struct churn_stats {
	uint64_t ok, failed, connect_errors, mismatches;
};

static int churn_start(int ep, const struct sockaddr_storage *ss, socklen_t sl, struct churn_conn *c,
		       uint32_t n, uint32_t size, struct churn_stats *st)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = c };
	int fd;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		st->connect_errors++;
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)ss, sl) < 0 && errno != EINPROGRESS) {
		st->connect_errors++;
		close(fd);
		return -1;
	}
	c->fd = fd;
	c->used = true;
	c->connected = false;
	c->n = n;
	c->want = size;
	c->sent = c->got = 0;
	c->last_ms = churn_now_ms();
	churn_fill(c);
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	return 0;
}

/* Advance one connection; returns true when it finished (ok or not). */
static bool churn_step(int ep, struct churn_conn *c, struct churn_stats *st)
{
	uint8_t rb[CHURN_HDR + 256];
	ssize_t r;

	if (!c->connected) {
		int err = 0;
		socklen_t el = sizeof(err);

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			st->connect_errors++;
			st->failed++;
			return true;
		}
		c->connected = true;
	}
	if (c->sent < c->want) {
		r = send(c->fd, c->buf + c->sent, c->want - c->sent, MSG_NOSIGNAL);
		if (r < 0 && errno != EAGAIN) {
			st->failed++;
			return true;
		}
		if (r > 0)
			c->sent += (uint32_t)r;
		if (c->sent == c->want) {
			struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };

			epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
		}
		return false;
	}
	for (;;) {
		r = recv(c->fd, rb, sizeof(rb), 0);
		if (r < 0) {
			if (errno == EAGAIN)
				return false;
			st->failed++;
			return true;
		}
		if (r == 0)
			break;
		if (c->got + (uint32_t)r > c->want || memcmp(rb, c->buf + c->got, (size_t)r)) {
			st->mismatches++;
			st->failed++;
			return true;
		}
		c->got += (uint32_t)r;
	}
	if (c->got != c->want) {
		st->mismatches++;
		st->failed++;
		return true;
	}
	st->ok++;
	return true;
}

static int churn_client(const char *to, uint32_t count, uint32_t parallel, uint32_t size,
			unsigned int duration)
{
	static struct churn_conn conns[CHURN_MAX_PARALLEL];
	struct epoll_event evs[256];
	struct sockaddr_storage ss;
	struct churn_stats st = { 0 };
	uint64_t t0 = churn_now_ms(), end = t0 + duration * 1000ULL, last_sweep = t0, now;
	uint32_t started = 0, inflight = 0, j;
	double secs;
	socklen_t sl;
	int ep, n, i;

	if (churn_addr(to, &ss, &sl) < 0) {
		fprintf(stderr, "churn: --connect %s: expected ADDR:PORT\n", to);
		return 2;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return 1;
	for (j = 0; j < parallel; j++) {
		conns[j].fd = -1;
		conns[j].buf = malloc(size);
		if (!conns[j].buf)
			return 1;
	}
	while (!churn_stop && (started < count || inflight) && churn_now_ms() < end) {
		for (j = 0; j < parallel && started < count; j++) {
			if (conns[j].used)
				continue;
			if (churn_start(ep, &ss, sl, &conns[j], started, size, &st) == 0)
				inflight++;
			else
				st.failed++;
			started++;
		}
		n = epoll_wait(ep, evs, 256, 100);
		for (i = 0; i < n; i++) {
			struct churn_conn *c = evs[i].data.ptr;

			c->last_ms = churn_now_ms();
			if (churn_step(ep, c, &st)) {
				churn_close(ep, c);
				inflight--;
			}
		}
		now = churn_now_ms();
		if (now - last_sweep >= 1000) {
			last_sweep = now;
			for (j = 0; j < parallel; j++) {
				if (conns[j].used && now - conns[j].last_ms > CHURN_IDLE_MS) {
					churn_close(ep, &conns[j]);
					inflight--;
					st.failed++;
				}
			}
		}
	}
	for (j = 0; j < parallel; j++) {
		if (conns[j].used) {
			churn_close(ep, &conns[j]);
			st.failed++;
		}
		free(conns[j].buf);
	}
	st.failed += count - started;
	secs = (double)(churn_now_ms() - t0) / 1000.0;
	printf("churn: ok=%llu failed=%llu connect_errors=%llu mismatches=%llu seconds=%.2f rate=%.0f\n",
	       (unsigned long long)st.ok, (unsigned long long)st.failed,
	       (unsigned long long)st.connect_errors, (unsigned long long)st.mismatches, secs,
	       secs > 0 ? (double)st.ok / secs : 0.0);
	close(ep);
	return st.ok == count ? 0 : 1;
}

static const char churn_usage[] =
	"usage: churn server --listen ADDR:PORT [--duration S]\n"
	"       churn client --connect ADDR:PORT --count N [--parallel P] [--size B] [--duration S]\n";

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ "count", required_argument, NULL, 'n' },
		{ "parallel", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ 0 }
	};
	const char *listen_at = NULL, *to = NULL;
	unsigned long count = 0, parallel = 200, size = 64, duration = 0;
	bool server;
	int c;

	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fputs(churn_usage, stderr);
		return 2;
	}
	server = !strcmp(argv[1], "server");
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		char *end;
		unsigned long v = 0;

		if (c != 'l' && c != 'c' && c != '?') {
			v = strtoul(optarg, &end, 10);
			if (*end || !*optarg) {
				fprintf(stderr, "churn: %s: not a number\n", optarg);
				return 2;
			}
		}
		switch (c) {
		case 'l': listen_at = optarg; break;
		case 'c': to = optarg; break;
		case 'n': count = v; break;
		case 'p': parallel = v; break;
		case 's': size = v; break;
		case 'd': duration = v; break;
		default:
			fputs(churn_usage, stderr);
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, churn_on_signal);
	signal(SIGINT, churn_on_signal);
	if (server) {
		if (!listen_at) {
			fputs(churn_usage, stderr);
			return 2;
		}
		return churn_server(listen_at, duration ? (unsigned int)duration : 600);
	}
	if (!to || !count || !parallel || parallel > CHURN_MAX_PARALLEL || size < CHURN_HDR || size > CHURN_HDR + 256) {
		fprintf(stderr, "churn: client needs --connect, --count N > 0, --parallel 1..%u, --size %u..%u\n",
			CHURN_MAX_PARALLEL, CHURN_HDR, CHURN_HDR + 256);
		return 2;
	}
	return churn_client(to, (uint32_t)count, (uint32_t)parallel, (uint32_t)size,
			    duration ? (unsigned int)duration : 120);
}
