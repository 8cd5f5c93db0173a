// SPDX-License-Identifier: MIT
/*
 * impair_relay - bridge two links with seeded loss, delay, reordering and duplication
 *
 * The kernel on these machines has no netem, so tests that need a bad network
 * put this relay in a middle namespace between two veths:
 *
 *   peer ns: veth --- mid ns: [ifA <-> impair_relay <-> ifB] --- veth: container ns
 *
 * Theory of operation: one AF_PACKET socket per side, bound to the link with
 * PACKET_VNET_HDR so that GSO frames cross whole (the virtio_net_hdr that came
 * in goes out unchanged) and PACKET_IGNORE_OUTGOING so the relay never sees
 * its own frames. Every frame gets a release time: now + delay + a uniform
 * jitter; a reordered frame gets an extra delay so that later ones overtake
 * it; a duplicated frame is queued twice; a lost one is dropped. Frames sit in
 * a binary heap ordered by release time (ties by arrival, so that without
 * impairments order is kept) and leave when due. One xorshift generator seeded
 * from --seed makes a run repeatable for the same arrival order.
 *
 * It stops by itself after --duration seconds, or on SIGTERM/SIGINT, and then
 * prints its counters. The queue is bounded (--queue frames); a frame that
 * finds it full is dropped and counted.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
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
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

#define FRAME_MAX	(10 + 65536)	/* vnet header + the largest frame a veth passes whole */
#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

struct frame {
	uint64_t due_us;
	uint64_t order;		/* arrival number: keeps FIFO among equal release times */
	int out;		/* side index to send on */
	size_t len;
	uint8_t *data;
};

struct relay_opts {
	const char *ifname[2];
	uint64_t seed;
	unsigned int delay_ms, jitter_ms, reorder_ms;
	double loss, dup, reorder;	/* probabilities 0..1 */
	unsigned int duration_s;
	unsigned int queue_max;
};

struct relay_stats {
	uint64_t in[2], out[2], lost, duplicated, reordered, queue_full, send_errors;
	uint64_t socket_drops;	/* frames the kernel dropped before the relay read them */
};

/* Add the kernel's drop count of @fd (reset by reading it) to @st. */
static void socket_drops_add(int fd, struct relay_stats *st)
{
	struct tpacket_stats ts;
	socklen_t len = sizeof(ts);

	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &ts, &len) == 0)
		st->socket_drops += ts.tp_drops;
}

static volatile sig_atomic_t relay_stop;

static void on_signal(int sig)
{
	(void)sig;
	relay_stop = 1;
}

static uint64_t rng_state;

/* xorshift64*: fast, seedable, good enough to pick which frames to impair. */
static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static double rng_unit(void)
{
	return (double)(rng_next() >> 11) / (double)(1ull << 53);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The heap of frames waiting for their release time. */
struct heap {
	struct frame *v;
	size_t n, cap;
};

static bool frame_before(const struct frame *a, const struct frame *b)
{
	return a->due_us < b->due_us || (a->due_us == b->due_us && a->order < b->order);
}

static void heap_swap(struct heap *h, size_t i, size_t j)
{
	struct frame t = h->v[i];

	h->v[i] = h->v[j];
	h->v[j] = t;
}

static void heap_push(struct heap *h, struct frame f)
{
	size_t i = h->n++;

	h->v[i] = f;
	while (i && frame_before(&h->v[i], &h->v[(i - 1) / 2])) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static struct frame heap_pop(struct heap *h)
{
	struct frame top = h->v[0];
	size_t i = 0;

	h->v[0] = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && frame_before(&h->v[l], &h->v[m]))
			m = l;
		if (r < h->n && frame_before(&h->v[r], &h->v[m]))
			m = r;
		if (m == i)
			break;
		heap_swap(h, i, m);
		i = m;
	}
	return top;
}

static int side_open(const char *ifname)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	int one = 1, bufsize = 16 << 20, fd;

	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "impair_relay: link %s: %s\n", ifname, strerror(errno));
		return -1;
	}
	/* Protocol 0 first, then bind with ETH_P_ALL: no frame arrives before the bind. */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "impair_relay: AF_PACKET socket: %s\n", strerror(errno));
		return -1;
	}
	/*
	 * A large receive buffer, and drops read back with PACKET_STATISTICS:
	 * otherwise a burst the relay cannot take is lost where nobody counts it.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsize, sizeof(bufsize)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bufsize, sizeof(bufsize)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "impair_relay: link %s: set up: %s\n", ifname, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: impair_relay --a IFNAME --b IFNAME [--seed N] [--delay-ms N] [--jitter-ms N]\n"
		"                    [--loss PCT] [--dup PCT] [--reorder PCT] [--reorder-ms N]\n"
		"                    [--queue FRAMES] [--duration SECONDS]\n");
}

static int parse_pct(const char *name, const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < 0 || v > 100) {
		fprintf(stderr, "impair_relay: --%s: '%s' is not a percentage 0..100\n", name, s);
		return -1;
	}
	*out = v / 100.0;
	return 0;
}

static int parse_uint(const char *name, const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-') {
		fprintf(stderr, "impair_relay: --%s: '%s' is not a number 0..%u\n", name, s, max);
		return -1;
	}
	*out = (unsigned int)v;
	return 0;
}

static int parse_opts(int argc, char **argv, struct relay_opts *o)
{
	static const struct option longopts[] = {
		{ "a", required_argument, NULL, 'a' },
		{ "b", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "delay-ms", required_argument, NULL, 'd' },
		{ "jitter-ms", required_argument, NULL, 'j' },
		{ "loss", required_argument, NULL, 'l' },
		{ "dup", required_argument, NULL, 'u' },
		{ "reorder", required_argument, NULL, 'r' },
		{ "reorder-ms", required_argument, NULL, 'R' },
		{ "queue", required_argument, NULL, 'q' },
		{ "duration", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned int seed = 1;
	int c;

	*o = (struct relay_opts){ .reorder_ms = 5, .duration_s = 600, .queue_max = 65536 };
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int err = 0;

		switch (c) {
		case 'a': o->ifname[0] = optarg; break;
		case 'b': o->ifname[1] = optarg; break;
		case 's': err = parse_uint("seed", optarg, UINT32_MAX, &seed); break;
		case 'd': err = parse_uint("delay-ms", optarg, 10000, &o->delay_ms); break;
		case 'j': err = parse_uint("jitter-ms", optarg, 10000, &o->jitter_ms); break;
		case 'l': err = parse_pct("loss", optarg, &o->loss); break;
		case 'u': err = parse_pct("dup", optarg, &o->dup); break;
		case 'r': err = parse_pct("reorder", optarg, &o->reorder); break;
		case 'R': err = parse_uint("reorder-ms", optarg, 10000, &o->reorder_ms); break;
		case 'q': err = parse_uint("queue", optarg, 1u << 20, &o->queue_max); break;
		case 't': err = parse_uint("duration", optarg, 86400, &o->duration_s); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
		if (err)
			return -1;
	}
	if (!o->ifname[0] || !o->ifname[1] || optind != argc || !o->queue_max) {
		usage(stderr);
		return -1;
	}
	/* xorshift must not start at 0. */
	o->seed = ((uint64_t)seed << 32) ^ 0x9e3779b97f4a7c15ull;
	return 0;
}

/* Read every frame waiting on side @in and schedule it for the other side. */
static void side_drain(int fd, int in, const struct relay_opts *o, struct heap *h,
		       struct relay_stats *st, uint64_t *order)
{
	for (;;) {
		uint8_t *buf = malloc(FRAME_MAX);
		ssize_t n;
		int copies = 1;
		bool queued = false;
		uint64_t due;

		if (!buf)
			return;
		n = recv(fd, buf, FRAME_MAX, MSG_TRUNC);
		if (n <= 0 || n > FRAME_MAX) {
			free(buf);
			return;	/* EAGAIN, or a frame too large to pass whole: dropped by the kernel path */
		}
		st->in[in]++;
		if (rng_unit() < o->loss) {
			st->lost++;
			free(buf);
			continue;
		}
		if (rng_unit() < o->dup) {
			copies = 2;
			st->duplicated++;
		}
		due = now_us() + (uint64_t)o->delay_ms * 1000u;
		if (o->jitter_ms)
			due += rng_next() % ((uint64_t)o->jitter_ms * 1000u);
		if (rng_unit() < o->reorder) {
			due += (uint64_t)o->reorder_ms * 1000u;
			st->reordered++;
		}
		/* Keep only what arrived: the queue may hold thousands of frames. */
		uint8_t *data = realloc(buf, (size_t)n);

		if (!data) {
			free(buf);
			return;
		}
		for (int i = 0; i < copies; i++) {
			struct frame f = { .due_us = due, .order = (*order)++, .out = !in,
					   .len = (size_t)n, .data = data };

			if (h->n >= o->queue_max) {
				st->queue_full++;
				break;
			}
			if (i) {
				/* The copy is made from the original, which the queue owns now. */
				f.data = malloc((size_t)n);
				if (!f.data)
					break;
				memcpy(f.data, data, (size_t)n);
			}
			heap_push(h, f);
			if (!i)
				queued = true;
		}
		if (!queued)
			free(data);
	}
}

int main(int argc, char **argv)
{
	struct relay_stats st = { 0 };
	struct relay_opts o;
	struct heap h = { 0 };
	uint64_t order = 0, deadline;
	int fd[2] = { -1, -1 }, rc = 1;

	if (parse_opts(argc, argv, &o))
		return 2;
	rng_state = o.seed;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);

	h.cap = o.queue_max;
	h.v = calloc(h.cap, sizeof(*h.v));
	if (!h.v)
		goto out;
	for (int i = 0; i < 2; i++)
		if ((fd[i] = side_open(o.ifname[i])) < 0)
			goto out;
	fprintf(stderr, "impair_relay: %s <-> %s ready\n", o.ifname[0], o.ifname[1]);

	deadline = now_us() + (uint64_t)o.duration_s * 1000000u;
	while (!relay_stop && now_us() < deadline) {
		struct pollfd pfd[2] = { { .fd = fd[0], .events = POLLIN },
					 { .fd = fd[1], .events = POLLIN } };
		int timeout_ms = 100;
		uint64_t t = now_us();

		if (h.n)
			timeout_ms = h.v[0].due_us <= t ? 0 : (int)((h.v[0].due_us - t + 999) / 1000);
		if (timeout_ms > 100)
			timeout_ms = 100;
		if (poll(pfd, 2, timeout_ms) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++)
			if (pfd[i].revents & POLLIN)
				side_drain(fd[i], i, &o, &h, &st, &order);
		t = now_us();
		while (h.n && h.v[0].due_us <= t) {
			struct frame f = heap_pop(&h);

			if (send(fd[f.out], f.data, f.len, 0) < 0)
				st.send_errors++;
			else
				st.out[f.out]++;
			free(f.data);
		}
	}
	rc = 0;
	for (int i = 0; i < 2; i++)
		socket_drops_add(fd[i], &st);
	printf("impair_relay: in a=%" PRIu64 " b=%" PRIu64 " out a=%" PRIu64 " b=%" PRIu64
	       " lost=%" PRIu64 " duplicated=%" PRIu64 " reordered=%" PRIu64 " queue_full=%" PRIu64
	       " send_errors=%" PRIu64 " socket_drops=%" PRIu64 "\n",
	       st.in[0], st.in[1], st.out[0], st.out[1], st.lost, st.duplicated, st.reordered,
	       st.queue_full, st.send_errors, st.socket_drops);
out:
	while (h.n) {
		struct frame f = heap_pop(&h);

		free(f.data);
	}
	free(h.v);
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return rc;
}
