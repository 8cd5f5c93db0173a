// SPDX-License-Identifier: MIT
/*
 * udp_flood.c - the UDP load generator and sink of bench/run.sh
 *
 *   udp_flood send ADDR PORT SIZE SECONDS   sendmmsg() batches of 64 datagrams
 *                                           of SIZE bytes, as fast as it can
 *   udp_flood recv ADDR PORT SECONDS        count what arrives; stop SECONDS
 *                                           after the first datagram
 *
 * Both print one line "sent|recv DATAGRAMS BYTES SECONDS". The receiver's
 * count is the figure that matters: a sender can always outrun a path.
 * Built by bench/run.sh itself (it is not part of the product).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int addr_of(const char *a, int port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, a, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, a, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*len = sizeof(*sin6);
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	static char buf[BATCH][65536];
	struct mmsghdr m[BATCH];
	struct iovec iov[BATCH];
	unsigned long long n = 0, bytes = 0;
	double t0, t1, secs;
	int fd, i, sz = 8 << 20;

	if (argc < 5 || addr_of(argv[2], atoi(argv[3]), &ss, &sl) < 0) {
		fprintf(stderr, "usage: udp_flood send ADDR PORT SIZE SECONDS | recv ADDR PORT SECONDS\n");
		return 2;
	}
	fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	memset(m, 0, sizeof(m));
	if (!strcmp(argv[1], "send") && argc == 6) {
		int size = atoi(argv[4]);

		secs = atof(argv[5]);
		if (connect(fd, (struct sockaddr *)&ss, sl) < 0) {
			perror("connect");
			return 1;
		}
		for (i = 0; i < BATCH; i++) {
			memset(buf[i], 'a' + i % 26, size);
			iov[i].iov_base = buf[i];
			iov[i].iov_len = size;
			m[i].msg_hdr.msg_iov = &iov[i];
			m[i].msg_hdr.msg_iovlen = 1;
		}
		t0 = now_s();
		while ((t1 = now_s()) - t0 < secs) {
			int r = sendmmsg(fd, m, BATCH, 0);

			if (r > 0) {
				n += r;
				bytes += (unsigned long long)r * size;
			}
		}
		printf("sent %llu %llu %.3f\n", n, bytes, t1 - t0);
		return 0;
	}
	if (!strcmp(argv[1], "recv")) {
		struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };

		secs = atof(argv[4]);
		if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
			perror("bind");
			return 1;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		for (i = 0; i < BATCH; i++) {
			iov[i].iov_base = buf[i];
			iov[i].iov_len = sizeof(buf[i]);
			m[i].msg_hdr.msg_iov = &iov[i];
			m[i].msg_hdr.msg_iovlen = 1;
		}
		t0 = 0;
		t1 = now_s();
		for (;;) {
			int r = recvmmsg(fd, m, BATCH, MSG_WAITFORONE, NULL);

			t1 = now_s();
			if (r > 0) {
				if (!t0)
					t0 = t1;
				n += r;
				for (i = 0; i < r; i++)
					bytes += m[i].msg_len;
			}
			if (t0 && t1 - t0 >= secs)
				break;
			if (!t0 && r <= 0 && t1 > 0 && n == 0) {
				static int idle;

				if (++idle > 100)	/* 20 s without anything */
					break;
			}
		}
		printf("recv %llu %llu %.3f\n", n, bytes, t0 ? t1 - t0 : 0.0);
		return 0;
	}
	fprintf(stderr, "udp_flood: unknown mode %s\n", argv[1]);
	return 2;
}
