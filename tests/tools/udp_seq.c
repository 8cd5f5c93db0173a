// SPDX-License-Identifier: MIT
/*
 * udp_seq.c - numbered UDP datagrams, sent at a rate and checked on arrival
 * (tests/integration/face_udp_seq.sh)
 *
 *   udp_seq send ADDR PORT SIZE COUNT MBIT [SEGS] [steady]
 *	COUNT datagrams of SIZE bytes (at least 16) at MBIT Mbit/s (0: as
 *	fast as it can; at a rate it sleeps while it is ahead, and what the
 *	sleep's slack held back leaves at once after it), numbered from 0;
 *	with "steady", a sender woken late sends the next datagram at once
 *	and the rest spaced from it, never a burst to catch up (a flow that
 *	is even as it leaves, whatever the sender's own scheduling; the rate
 *	is then at most MBIT); with SEGS > 1, SEGS datagrams per
 *	sendmsg() with UDP_SEGMENT. Prints "sent N ENOBUFS M" (M: calls the
 *	kernel refused for buffer space, their datagrams not counted in N).
 *   udp_seq recv ADDR PORT SIZE COUNT SECONDS [gro] [defbuf]
 *	receives until COUNT arrived or SECONDS passed without a datagram;
 *	with "gro", UDP_GRO on the socket (a coalesced read is cut by its
 *	segment size); with "defbuf", the socket keeps the receive buffer
 *	the namespace gives it (net.core.rmem_default), as a program that
 *	never sets one does (else 32 MiB, forced). Each datagram must be SIZE
 *	bytes and carry its number's pattern. Prints "recv got N inorder N
 *	late N dup N bad N gro_reads N secs S most_in_1ms M rcvbuf B" (S: from
 *	the first datagram to the last; M: the most datagrams the socket
 *	received within any millisecond, by the kernel's receive timestamps:
 *	how clumped they arrived; B: the buffer's size) and exits 0 only when
 *	all COUNT arrived intact, in order, once. Before that, for each of the
 *	first MAX_GAPS_SHOWN gaps in the numbers, a line "gap: N lost before
 *	K, ..." with when K arrived (ms after the first datagram), how many
 *	arrived in the millisecond before it, and how late the program read it
 *	and the datagram before the gap: a burst, or a receiver kept from
 *	reading. With UDP_SEQ_TRACE=FILE in the environment, FILE gets a line
 *	per datagram: its number, the kernel's receive time and when it was
 *	read (CLOCK_REALTIME, ns).
 *
 * A datagram: bytes 0..7 its number (big endian), then byte i = (number * 7
 * + i) & 0xff. A test tool, not part of the product.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define MAX_SEGS	64
#define RECV_BUF	(1 << 16)
#define CLUMP_NS	1000000		/* the window of most_in_1ms */
#define CLUMP_RING	65536		/* arrival times kept for it */
#define MAX_GAPS_SHOWN	8		/* "gap:" lines printed, at most */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int addr_of(const char *a, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, a, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len = sizeof(*sin);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, a, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*sin6);
		return AF_INET6;
	}
	return -1;
}

static void fill(uint8_t *d, size_t size, uint64_t n)
{
	size_t i;

	for (i = 0; i < 8; i++)
		d[i] = (uint8_t)(n >> (56 - 8 * i));
	for (i = 8; i < size; i++)
		d[i] = (uint8_t)((n * 7 + i) & 0xff);
}

/* The datagram's number, or UINT64_MAX when its bytes are not the pattern. */
static uint64_t check(const uint8_t *d, size_t len, size_t size)
{
	uint64_t n = 0;
	size_t i;

	if (len != size)
		return UINT64_MAX;
	for (i = 0; i < 8; i++)
		n = n << 8 | d[i];
	for (i = 8; i < size; i++)
		if (d[i] != (uint8_t)((n * 7 + i) & 0xff))
			return UINT64_MAX;
	return n;
}

static long num(const char *s, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		fprintf(stderr, "udp_seq: %s %s: want %ld..%ld\n", what, s, min, max);
		exit(2);
	}
	return v;
}

static int do_send(int fd, size_t size, long count, long mbit, int segs, int steady)
{
	static uint8_t buf[MAX_SEGS * 65507];
	double t0 = now_s(), per = mbit ? (double)size * 8 / ((double)mbit * 1e6) : 0;
	long sent = 0, nobufs = 0;

	while (sent < count) {
		long k = count - sent < segs ? count - sent : segs, i;
		ssize_t r;

		for (i = 0; i < k; i++)
			fill(buf + (size_t)i * size, size, (uint64_t)(sent + i));
		if (per) {	/* pace: never ahead of the rate, asleep while ahead (as programs are) */
			double ahead = t0 + (double)sent * per - now_s();

			if (ahead > 0) {
				struct timespec ts = { (time_t)ahead, (long)((ahead - (double)(time_t)ahead) * 1e9) };

				nanosleep(&ts, NULL);
			} else if (steady && ahead < -per) {
				t0 -= ahead + per;	/* late: the rest keeps the spacing, no catching up */
			}
		}
		r = send(fd, buf, (size_t)k * size, 0);
		if (r < 0 && errno == ENOBUFS) {
			nobufs++;	/* not sent: the next call sends the same numbers */
			continue;
		}
		if (r < 0) {
			perror("udp_seq: send");
			return 1;
		}
		sent += k;
	}
	printf("sent %ld ENOBUFS %ld\n", sent, nobufs);
	return 0;
}

/*
 * Arrival times, to find the most datagrams within any CLUMP_NS: a window
 * from the oldest kept time to the newest, moved on as datagrams arrive.
 */
struct clump {
	int64_t at[CLUMP_RING];
	unsigned long head, tail;	/* the window: at[tail % RING] .. at[(head - 1) % RING] */
	unsigned long most;
};

static void clump_add(struct clump *c, int64_t ns, unsigned long n)
{
	while (n--) {
		c->at[c->head++ % CLUMP_RING] = ns;
		while (c->head - c->tail > CLUMP_RING || ns - c->at[c->tail % CLUMP_RING] >= CLUMP_NS)
			c->tail++;
		if (c->head - c->tail > c->most)
			c->most = c->head - c->tail;
	}
}

static int do_recv(int fd, size_t size, long count, long secs, int gro, int rcvbuf)
{
	static uint8_t buf[RECV_BUF];
	static struct clump clump;
	char cbuf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(struct timespec))];
	long got = 0, inorder = 0, late = 0, dup = 0, bad = 0, gro_reads = 0, gaps = 0;
	int64_t first_stamp = 0, prev_stamp = 0, prev_read = 0;
	double first = 0, last = 0;
	uint64_t next = 0;
	uint8_t *seen = calloc((size_t)count, 1);
	struct timeval tv = { .tv_sec = secs };
	FILE *trace = getenv("UDP_SEQ_TRACE") ? fopen(getenv("UDP_SEQ_TRACE"), "w") : NULL;

	if (!seen)
		return 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (got + bad < count) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				     .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		struct timespec rt;
		size_t seg, off;
		int64_t stamp = 0, read_ns;
		ssize_t r = recvmsg(fd, &mh, 0);

		if (r < 0)
			break;	/* SECONDS without a datagram */
		last = now_s();
		if (!first)
			first = last;
		clock_gettime(CLOCK_REALTIME, &rt);
		read_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
		seg = (size_t)r;
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
				int g;

				memcpy(&g, CMSG_DATA(cm), sizeof(g));
				seg = (size_t)g;
				gro_reads++;
			} else if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;

				memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
				stamp = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
			}
		if (stamp && !first_stamp)
			first_stamp = stamp;
		if (stamp && seg)
			clump_add(&clump, stamp, ((size_t)r + seg - 1) / seg);
		for (off = 0; off < (size_t)r; off += seg) {
			size_t len = (size_t)r - off < seg ? (size_t)r - off : seg;
			uint64_t n = check(buf + off, len, size);

			if (n == UINT64_MAX || n >= (uint64_t)count) {
				bad++;
				continue;
			}
			if (seen[n]) {
				dup++;
				continue;
			}
			seen[n] = 1;
			got++;
			if (n > next && gaps < MAX_GAPS_SHOWN) {
				gaps++;
				printf("gap: %llu lost before %llu, it arrived %.3f ms in, %lu in the ms before, "
				       "read %.3f ms after it arrived; the one before it arrived %.3f ms in, "
				       "read %.3f ms after\n",
				       (unsigned long long)(n - next), (unsigned long long)n,
				       (stamp - first_stamp) / 1e6, clump.head - clump.tail, (read_ns - stamp) / 1e6,
				       (prev_stamp - first_stamp) / 1e6, (prev_read - prev_stamp) / 1e6);
			}
			prev_read = read_ns;
			prev_stamp = stamp;
			if (trace)
				fprintf(trace, "%llu %lld %lld\n", (unsigned long long)n, (long long)stamp,
					(long long)read_ns);
			if (n >= next) {
				inorder += n == next;
				next = n + 1;
			} else {
				late++;
			}
		}
	}
	printf("recv got %ld inorder %ld late %ld dup %ld bad %ld gro_reads %ld secs %.6f most_in_1ms %lu rcvbuf %d%s\n",
	       got, inorder, late, dup, bad, gro_reads, last - first, clump.most, rcvbuf, gro ? " (gro)" : "");
	free(seen);
	if (trace)
		fclose(trace);
	return got == count && inorder == count && !late && !dup && !bad ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	size_t size;
	long count;
	int fam, fd, one = 1, gro = 0, defbuf = 0, rcvbuf = 0, i;

	if (argc < 7 || (strcmp(argv[1], "send") && strcmp(argv[1], "recv"))) {
		fprintf(stderr, "usage: udp_seq send ADDR PORT SIZE COUNT MBIT [SEGS] [steady]\n"
				"       udp_seq recv ADDR PORT SIZE COUNT SECONDS [gro] [defbuf]\n");
		return 2;
	}
	fam = addr_of(argv[2], (int)num(argv[3], "port", 1, 65535), &ss, &sl);
	if (fam < 0) {
		fprintf(stderr, "udp_seq: %s: not an IPv4 or IPv6 address\n", argv[2]);
		return 2;
	}
	size = (size_t)num(argv[4], "size", 16, 65507);
	count = num(argv[5], "count", 1, 100000000);
	fd = socket(fam, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("udp_seq: socket");
		return 1;
	}
	if (!strcmp(argv[1], "send")) {
		int segs = 1, steady = 0;

		for (i = 7; i < argc; i++) {
			if (!strcmp(argv[i], "steady"))
				steady = 1;
			else
				segs = (int)num(argv[i], "segs", 1, MAX_SEGS);
		}

		if (segs > 1 && setsockopt(fd, SOL_UDP, UDP_SEGMENT, &(int){ (int)size }, sizeof(int)) < 0) {
			perror("udp_seq: UDP_SEGMENT");
			return 1;
		}
		if (connect(fd, (struct sockaddr *)&ss, sl) < 0) {
			perror("udp_seq: connect");
			return 1;
		}
		return do_send(fd, size, count, num(argv[6], "mbit", 0, 100000), segs, steady);
	}
	for (i = 7; i < argc; i++) {
		if (!strcmp(argv[i], "gro")) {
			gro = 1;
		} else if (!strcmp(argv[i], "defbuf")) {
			defbuf = 1;
		} else {
			fprintf(stderr, "udp_seq: recv: %s: want gro or defbuf\n", argv[i]);
			return 2;
		}
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	/* unless asked for the default: a buffer any burst the path delivers fits in */
	if (!defbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &(int){ 32 << 20 }, sizeof(int));
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &(socklen_t){ sizeof(rcvbuf) }) < 0) {
		perror("udp_seq: SO_RCVBUF");
		return 1;
	}
	if (gro && setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) < 0) {
		perror("udp_seq: UDP_GRO");
		return 1;
	}
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		perror("udp_seq: bind");
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	return do_recv(fd, size, count, num(argv[6], "seconds", 1, 3600), gro, rcvbuf);
}
