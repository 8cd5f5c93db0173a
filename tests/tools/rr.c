// SPDX-License-Identifier: MIT
/*
 * rr - TCP request/response latency, netperf TCP_RR style
 *
 *   rr server --listen ADDR:PORT [--duration S]
 *   rr client --connect ADDR:PORT [--size BYTES] [--count N] [--duration S]
 *
 * netperf is not packaged here, so the benchmark measures request/response
 * latency with this tool: the BIG TCP seed's measure is netperf TCP_RR with
 * 80000-byte requests and responses.
 *
 * Theory of operation: the client connects (TCP_NODELAY), sends an 8-byte
 * hello ("RR1\0" and the transaction size as a big-endian 32-bit number) and
 * then, N times, writes one request of SIZE bytes and reads the whole
 * response of SIZE bytes; one transaction is the time from the first byte
 * written to the last byte read (CLOCK_MONOTONIC). The server reads the hello
 * and then answers every whole request it read with a response of the same
 * size, until the client closes. The server serves one connection at a time
 * (a benchmark runs one client); every connection is bounded by an idle
 * timeout, the server by --duration (default 600 s), the client by --count
 * and --duration (default 60 s), so neither side can hang a benchmark.
 *
 * The client prints one line, key=value, for scripts to parse:
 *   rr: transactions=N size=B min_us=.. p50_us=.. p90_us=.. p99_us=.. max_us=.. tps=..
 * and exits 0 when it completed at least one transaction and was not cut
 * short by an error (stopping on --duration is not an error).
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
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
#include <sys/socket.h>

#define RR_MAGIC	"RR1"
#define RR_HELLO_LEN	8
#define RR_MAX_SIZE	(64u << 20)
#define RR_MAX_COUNT	10000000u
#define RR_IDLE_MS	10000	/* a connection with nothing for this long is dropped */

static volatile sig_atomic_t rr_stop;

static void rr_on_signal(int sig)
{
	(void)sig;
	rr_stop = 1;
}

static uint64_t rr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* rr_parse_addr: "HOST:PORT" or "[V6]:PORT" into a resolved address list. */
static int rr_parse_addr(const char *spec, bool passive, struct addrinfo **out)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	char host[256];
	const char *port, *h = spec;
	size_t hlen;
	int ret;

	if (spec[0] == '[') {
		const char *end = strchr(spec, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		h = spec + 1;
		hlen = (size_t)(end - h);
		port = end + 2;
	} else {
		const char *colon = strrchr(spec, ':');

		if (!colon)
			return -EINVAL;
		hlen = (size_t)(colon - spec);
		port = colon + 1;
	}
	if (hlen == 0 || hlen >= sizeof(host) || !*port)
		return -EINVAL;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (passive)
		hints.ai_flags |= AI_PASSIVE;
	ret = getaddrinfo(host, port, &hints, out);
	if (ret)
		return ret == EAI_SYSTEM ? -errno : -ENOENT;
	return 0;
}

/* rr_wait: poll one fd for EVENTS, at most RR_IDLE_MS; 0 ready, negative errno. */
static int rr_wait(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	for (;;) {
		if (rr_stop)
			return -EINTR;
		n = poll(&p, 1, RR_IDLE_MS);
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/* rr_io_all: read or write exactly LEN bytes; 0 done, -EPIPE on EOF, negative errno. */
static int rr_io_all(int fd, void *buf, size_t len, bool writing)
{
	uint8_t *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		n = writing ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
			    : recv(fd, p, len, MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		ret = rr_wait(fd, writing ? POLLOUT : POLLIN);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * rr_serve_one: answer the requests of one connection until the client
 * closes. Returns the number of transactions served, or negative errno.
 */
static long rr_serve_one(int fd)
{
	uint8_t hello[RR_HELLO_LEN];
	uint8_t *buf = NULL;
	uint32_t size;
	long served = 0;
	int ret;

	ret = rr_io_all(fd, hello, sizeof(hello), false);
	if (ret < 0)
		goto err;
	memcpy(&size, hello + 4, sizeof(size));
	size = ntohl(size);
	if (memcmp(hello, RR_MAGIC, 4) || size == 0 || size > RR_MAX_SIZE) {
		ret = -EPROTO;
		goto err;
	}
	buf = malloc(size);
	if (!buf) {
		ret = -ENOMEM;
		goto err;
	}
	for (;;) {
		ret = rr_io_all(fd, buf, size, false);
		if (ret == -EPIPE)
			break;	/* the client is done */
		if (ret < 0)
			goto err;
		ret = rr_io_all(fd, buf, size, true);
		if (ret < 0)
			goto err;
		served++;
	}
	free(buf);
	return served;
err:
	free(buf);
	return ret;
}

static int rr_server(const char *addr, unsigned int duration_s)
{
	struct addrinfo *ai = NULL;
	uint64_t end = rr_now_ns() + (uint64_t)duration_s * 1000000000u;
	int lfd = -1, fd, one = 1, ret;
	long served;

	ret = rr_parse_addr(addr, true, &ai);
	if (ret < 0) {
		fprintf(stderr, "rr server: listen address '%s': %s\n", addr,
			ret == -EINVAL ? "not HOST:PORT" : "cannot be resolved");
		goto err;
	}
	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 16)) {
		ret = -errno;
		fprintf(stderr, "rr server: listen on %s: %s\n", addr, strerror(errno));
		goto err;
	}
	fprintf(stderr, "rr server: listening on %s\n", addr);
	while (!rr_stop && rr_now_ns() < end) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (poll(&p, 1, 200) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		served = rr_serve_one(fd);
		if (served < 0)
			fprintf(stderr, "rr server: connection dropped: %s\n", strerror((int)-served));
		close(fd);
	}
	ret = 0;
err:
	if (lfd >= 0)
		close(lfd);
	if (ai)
		freeaddrinfo(ai);
	return ret;
}

static int rr_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* rr_pct: the P-th percentile (nearest rank) of N sorted values, in microseconds. */
static double rr_pct(const uint64_t *v, size_t n, double p)
{
	size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return (double)v[rank - 1] / 1000.0;
}

static int rr_client(const char *addr, uint32_t size, unsigned int count, unsigned int duration_s)
{
	struct addrinfo *ai = NULL, *a;
	uint8_t hello[RR_HELLO_LEN] = RR_MAGIC;
	uint64_t *lat = NULL, t0, start, end;
	uint8_t *buf = NULL;
	uint32_t nsize = htonl(size);
	size_t done = 0;
	int fd = -1, one = 1, ret;

	ret = rr_parse_addr(addr, false, &ai);
	if (ret < 0) {
		fprintf(stderr, "rr client: address '%s': %s\n", addr,
			ret == -EINVAL ? "not HOST:PORT" : "cannot be resolved");
		goto err;
	}
	lat = calloc(count, sizeof(*lat));
	buf = malloc(size);
	if (!lat || !buf) {
		ret = -ENOMEM;
		fprintf(stderr, "rr client: no memory for %u transactions of %u bytes\n", count, size);
		goto err;
	}
	memset(buf, 0x5a, size);
	ret = -ECONNREFUSED;
	for (a = ai; a; a = a->ai_next) {
		struct timeval tv = { .tv_sec = RR_IDLE_MS / 1000 };

		fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));	/* bounds connect() */
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		ret = -errno;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		fprintf(stderr, "rr client: connect to %s: %s\n", addr, strerror(-ret));
		goto err;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memcpy(hello + 4, &nsize, sizeof(nsize));
	ret = rr_io_all(fd, hello, sizeof(hello), true);
	if (ret < 0) {
		fprintf(stderr, "rr client: hello to %s: %s\n", addr, strerror(-ret));
		goto err;
	}
	start = rr_now_ns();
	end = start + (uint64_t)duration_s * 1000000000u;
	while (done < count && !rr_stop && rr_now_ns() < end) {
		t0 = rr_now_ns();
		ret = rr_io_all(fd, buf, size, true);
		if (ret == 0)
			ret = rr_io_all(fd, buf, size, false);
		if (ret < 0) {
			fprintf(stderr, "rr client: transaction %zu with %s: %s\n", done + 1, addr,
				ret == -EPIPE ? "the server closed" : strerror(-ret));
			goto err;
		}
		lat[done++] = rr_now_ns() - t0;
	}
	end = rr_now_ns();
	if (!done) {
		ret = -ETIMEDOUT;
		fprintf(stderr, "rr client: no transaction completed with %s\n", addr);
		goto err;
	}
	qsort(lat, done, sizeof(*lat), rr_cmp_u64);
	printf("rr: transactions=%zu size=%u min_us=%.1f p50_us=%.1f p90_us=%.1f p99_us=%.1f "
	       "max_us=%.1f tps=%.1f\n", done, size, (double)lat[0] / 1000.0,
	       rr_pct(lat, done, 50), rr_pct(lat, done, 90), rr_pct(lat, done, 99),
	       (double)lat[done - 1] / 1000.0, (double)done * 1e9 / (double)(end - start));
	ret = 0;
err:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(lat);
	if (ai)
		freeaddrinfo(ai);
	return ret;
}

static const char rr_usage[] =
	"usage: rr server --listen ADDR:PORT [--duration S]\n"
	"       rr client --connect ADDR:PORT [--size BYTES] [--count N] [--duration S]\n"
	"  --size      request and response size (default 80000)\n"
	"  --count     transactions (default 1000, at most 10000000)\n"
	"  --duration  stop after S seconds (client default 60, server default 600)\n";

/* rr_num: a decimal number in [lo, hi], or -1. */
static long rr_num(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa = { .sa_handler = rr_on_signal };
	const char *mode, *listen_addr = NULL, *connect_addr = NULL;
	long size = 80000, count = 1000, duration = -1;
	int c;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(rr_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'l': listen_addr = optarg; break;
		case 'c': connect_addr = optarg; break;
		case 's': size = rr_num(optarg, 1, RR_MAX_SIZE); break;
		case 'n': count = rr_num(optarg, 1, RR_MAX_COUNT); break;
		case 'd': duration = rr_num(optarg, 1, 86400); break;
		case 'h': fputs(rr_usage, stdout); return 0;
		default: fputs(rr_usage, stderr); return 2;
		}
		if (size < 0 || count < 0) {
			fprintf(stderr, "rr: --%s '%s': not a number in range\n%s",
				size < 0 ? "size" : "count", optarg, rr_usage);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "rr: unexpected argument '%s'\n%s", argv[optind], rr_usage);
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!strcmp(mode, "server") && listen_addr && !connect_addr)
		return rr_server(listen_addr, duration > 0 ? (unsigned int)duration : 600) ? 1 : 0;
	if (!strcmp(mode, "client") && connect_addr && !listen_addr)
		return rr_client(connect_addr, (uint32_t)size, (unsigned int)count,
				 duration > 0 ? (unsigned int)duration : 60) ? 1 : 0;
	fputs(rr_usage, stderr);
	return 2;
}
