// SPDX-License-Identifier: MIT
/*
 * test_datapath_tcp_kernel.c - the TCP engine against the Linux kernel's TCP
 *
 * The test process enters a new network namespace (root only; otherwise the
 * whole binary exits 77 = skipped) and creates a TUN device 10.9.0.1/24 there.
 * The engine plays 10.9.0.2 behind it: a minimal IPv4 adapter in this file
 * reads packets from the TUN fd, parses IPv4 + TCP (bounds-checked) into
 * struct tcp_seg_in, and turns emitted segments back into IPv4 packets with
 * real checksums, splitting GSO segments into MSS-sized packets the way the
 * datapath's software GSO will. Kernel sockets in the same namespace are the
 * peers: they see a remote host at 10.9.0.2. Optionally the adapter drops a
 * seeded share of the packets both ways, so the kernel's SACK/RACK and our
 * recovery meet. Transfers run in both directions at once with content
 * compared by hash, then a half-close, on the real clock with a time bound.
 * The adapter carries the IP header's ECN field both ways and can mark a
 * seeded share of the ECN-capable packets CE in either direction, as a
 * router with an AQM would.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "datapath/tcp/tcp.h"

/*
 * Check's ck_assert*() records every passing assertion (a write per call in
 * fork mode): in per-packet and per-byte paths use this, which only calls
 * into Check on failure.
 */
#define CHECK(cond, ...) do { if (!(cond)) ck_abort_msg(__VA_ARGS__); } while (0)

#define KBYTES	(4u << 20)
#define MTU	1500

static struct kt {
	int tun;
	struct tcp_stack *s;
	struct tcp_conn *c;
	struct tcp_listener *lis;
	uint32_t loss_ppm;
	uint32_t ce_to_kernel_ppm;	/* ECT packets of ours marked CE */
	uint32_t ce_to_us_ppm;		/* ECT packets of the kernel's marked CE */
	uint64_t ce_marked;
	uint64_t rng;
	uint16_t ip_id;
	/* our side */
	uint64_t sent, recvd, recv_gen, send_gen;
	bool peer_fin, shut, closed_ev, reset;
	uint64_t pkts_in, pkts_out, dropped;
} K;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t xr(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static uint8_t gen(uint64_t *st)
{
	return (uint8_t)(xr(st) >> 32);
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Mark an ECN-capable packet CE with probability @ppm. Return: its ECN field. */
static uint8_t ce_mark(uint8_t ecn, uint32_t ppm)
{
	if (ecn && ecn != TCP_ECN_CE && ppm && xr(&K.rng) % 1000000 < ppm) {
		K.ce_marked++;
		return TCP_ECN_CE;
	}
	return ecn;
}

static bool drop_now(void)
{
	if (K.loss_ppm && xr(&K.rng) % 1000000 < K.loss_ppm) {
		K.dropped++;
		return true;
	}
	return false;
}

/* Build and write one IPv4 packet for [off, off+n) of the segment's payload. */
static void kt_write_one(const struct tcp_seg_out *o, const uint8_t *payload, size_t n, uint32_t seq, uint8_t flags)
{
	uint8_t pkt[MTU + 100], *ip = pkt, *th = pkt + 20;
	int optlen = tcp_opts_write(&o->opts, th + 20, 40);
	size_t tl, total;
	uint32_t sum;

	CHECK(optlen >= 0, "tcp_opts_write: %d", optlen);
	tl = 20 + (size_t)optlen + n;
	total = 20 + tl;
	CHECK(total <= MTU, "packet of %zu bytes over the MTU", total);
	memset(pkt, 0, 40);
	ip[0] = 0x45;
	ip[1] = ce_mark(o->ecn, K.ce_to_kernel_ppm);
	ip[2] = (uint8_t)(total >> 8);
	ip[3] = (uint8_t)total;
	ip[4] = (uint8_t)(K.ip_id >> 8);
	ip[5] = (uint8_t)K.ip_id++;
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	memcpy(ip + 12, &o->src.a, 4);
	memcpy(ip + 16, &o->dst.a, 4);
	sum = csum_fold(csum_add(0, ip, 20));
	ip[10] = (uint8_t)(sum >> 8);
	ip[11] = (uint8_t)sum;
	th[0] = (uint8_t)(o->sport >> 8);
	th[1] = (uint8_t)o->sport;
	th[2] = (uint8_t)(o->dport >> 8);
	th[3] = (uint8_t)o->dport;
	th[4] = (uint8_t)(seq >> 24);
	th[5] = (uint8_t)(seq >> 16);
	th[6] = (uint8_t)(seq >> 8);
	th[7] = (uint8_t)seq;
	th[8] = (uint8_t)(o->ack >> 24);
	th[9] = (uint8_t)(o->ack >> 16);
	th[10] = (uint8_t)(o->ack >> 8);
	th[11] = (uint8_t)o->ack;
	th[12] = (uint8_t)(((20 + optlen) / 4) << 4);
	th[13] = flags;
	th[14] = (uint8_t)(o->wnd >> 8);
	th[15] = (uint8_t)o->wnd;
	memcpy(th + 20 + optlen, payload, n);
	/* pseudo-header: src, dst, zero, protocol, TCP length */
	sum = csum_add(0, ip + 12, 8);
	sum += IPPROTO_TCP + (uint32_t)tl;
	sum = csum_fold(csum_add(sum, th, tl));
	th[16] = (uint8_t)(sum >> 8);
	th[17] = (uint8_t)sum;
	K.pkts_out++;
	if (drop_now())
		return;
	CHECK(write(K.tun, pkt, total) == (ssize_t)total, "tun write: %s", strerror(errno));
}

static int kt_emit(void *ctx, const struct tcp_seg_out *o)
{
	static uint8_t flat[1 << 17];
	size_t off = 0, piece;
	int i;

	(void)ctx;
	CHECK(o->len <= sizeof(flat), "segment of %zu bytes", o->len);
	for (i = 0; i < o->iovcnt; i++) {
		memcpy(flat + off, o->iov[i].iov_base, o->iov[i].iov_len);
		off += o->iov[i].iov_len;
	}
	piece = o->gso_size ? o->gso_size : o->len;
	off = 0;
	do {
		size_t n = o->len - off < piece ? o->len - off : piece;
		bool last = off + n >= o->len;

		kt_write_one(o, flat + off, n, o->seq + (uint32_t)off,
			     last ? o->flags : (uint8_t)(o->flags & ~(TCP_FIN | TCP_PSH)));
		off += n;
	} while (off < o->len);
	return 0;
}

/* Parse one IPv4/TCP packet from the TUN device, bounds-checked. */
static void kt_input(const uint8_t *p, size_t n)
{
	struct tcp_seg_in s;
	size_t ihl, tot, doff;
	const uint8_t *th;

	if (n < 20 || (p[0] >> 4) != 4)
		return;	/* IPv6 router solicitations and such */
	ihl = (size_t)(p[0] & 0xf) * 4;
	tot = (size_t)p[2] << 8 | p[3];
	if (ihl < 20 || tot < ihl + 20 || tot > n || p[9] != IPPROTO_TCP || ((p[6] & 0x1f) | p[7]))
		return;
	th = p + ihl;
	doff = (size_t)(th[12] >> 4) * 4;
	if (doff < 20 || doff > tot - ihl)
		return;
	memset(&s, 0, sizeof(s));
	s.src.family = s.dst.family = AF_INET;
	memcpy(&s.src.a, p + 12, 4);
	memcpy(&s.dst.a, p + 16, 4);
	s.sport = (uint16_t)(th[0] << 8 | th[1]);
	s.dport = (uint16_t)(th[2] << 8 | th[3]);
	s.seq = (uint32_t)th[4] << 24 | th[5] << 16 | th[6] << 8 | th[7];
	s.ack = (uint32_t)th[8] << 24 | th[9] << 16 | th[10] << 8 | th[11];
	s.flags = th[13];
	s.wnd = (uint16_t)(th[14] << 8 | th[15]);
	if (tcp_opts_parse(th + 20, doff - 20, &s.opts) < 0)
		return;
	s.data = th + doff;
	s.len = tot - ihl - doff;
	s.ecn = ce_mark(p[1] & 3, K.ce_to_us_ppm);
	K.pkts_in++;
	if (drop_now())
		return;
	tcp_input(K.s, &s, now_us());
}

static void our_send(void)
{
	uint8_t buf[65536];

	while (K.c && !K.reset && K.sent < KBYTES) {
		uint64_t st = K.send_gen;
		size_t n = sizeof(buf), i;
		ssize_t w;

		if (n > KBYTES - K.sent)
			n = KBYTES - K.sent;
		for (i = 0; i < n; i++)
			buf[i] = gen(&st);
		w = tcp_send(K.c, buf, n, now_us());
		if (w <= 0)
			break;
		for (i = 0; i < (size_t)w; i++)
			gen(&K.send_gen);
		K.sent += (uint64_t)w;
	}
	if (K.c && K.sent == KBYTES && !K.shut) {
		K.shut = true;
		tcp_shutdown_write(K.c, now_us());
	}
}

static void our_read(void)
{
	uint8_t buf[65536];
	ssize_t n, i;

	while (K.c && (n = tcp_recv(K.c, buf, sizeof(buf), now_us())) > 0) {
		for (i = 0; i < n; i++)
			CHECK(buf[i] == gen(&K.recv_gen), "byte %llu from the kernel differs",
			      (unsigned long long)(K.recvd + (uint64_t)i));
		K.recvd += (uint64_t)n;
	}
}

static void our_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	(void)c;
	(void)user;
	switch (ev) {
	case TCP_EV_CONNECTED:
	case TCP_EV_WRITABLE:
		our_send();
		break;
	case TCP_EV_READABLE:
		our_read();
		break;
	case TCP_EV_PEER_FIN:
		K.peer_fin = true;
		break;
	case TCP_EV_CLOSED:
		K.closed_ev = true;
		break;
	case TCP_EV_RESET:
		K.reset = true;
		ck_abort_msg("the kernel reset us (%d)", err);
		break;
	default:
		break;
	}
}

static int our_accept(struct tcp_listener *l, void *user, struct tcp_conn *c)
{
	(void)l;
	(void)user;
	K.c = c;
	our_send();
	return 0;
}

static void tun_setup(void)
{
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	int fd;

	K.tun = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ck_assert_msg(K.tun >= 0, "open /dev/net/tun: %s", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	strcpy(ifr.ifr_name, "sntcp0");
	ck_assert_int_eq(ioctl(K.tun, TUNSETIFF, &ifr), 0);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, "10.9.0.1", &sin->sin_addr);
	ck_assert_int_eq(ioctl(fd, SIOCSIFADDR, &ifr), 0);
	inet_pton(AF_INET, "255.255.255.0", &sin->sin_addr);
	ck_assert_int_eq(ioctl(fd, SIOCSIFNETMASK, &ifr), 0);
	ifr.ifr_mtu = MTU;
	ck_assert_int_eq(ioctl(fd, SIOCSIFMTU, &ifr), 0);
	ck_assert_int_eq(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	ck_assert_int_eq(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
	close(fd);
}

static void kt_setup(void)
{
	struct tcp_stack_cfg cfg;

	memset(&K, 0, sizeof(K));
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0);
	tun_setup();
	memset(&cfg, 0, sizeof(cfg));
	cfg.emit = kt_emit;
	K.s = tcp_stack_new(&cfg);
	ck_assert_ptr_nonnull(K.s);
	K.rng = 0x9e3779b97f4a7c15ULL;
	K.send_gen = 11;
	K.recv_gen = 22;
}

static void kt_teardown(void)
{
	tcp_stack_free(K.s);
	close(K.tun);
}

static struct tcp_endpoint ep4(const char *ip, uint16_t port)
{
	struct tcp_endpoint e;

	memset(&e, 0, sizeof(e));
	e.addr.family = AF_INET;
	inet_pton(AF_INET, ip, e.addr.a.bytes);
	e.port = port;
	return e;
}

static struct tcp_conn_opts kt_opts(void)
{
	struct tcp_conn_opts o;

	memset(&o, 0, sizeof(o));
	o.mss = MTU - 40;
	o.gso_max_bytes = 65536;	/* split in kt_emit, as sw GSO will */
	return o;
}

/*
 * Pump both sides until the kernel socket got everything and EOF and our side
 * got everything, the peer FIN and the end of its own close.
 */
static void kt_pump(int ks, uint64_t limit_us)
{
	uint64_t start = now_us(), ksent = 0, krecvd = 0, kgen_send = 22, kgen_recv = 11;
	bool kshut = false, keof = false;
	uint8_t buf[65536];
	uint64_t last_print = 0;

	while (!(keof && krecvd == KBYTES && K.recvd == KBYTES && K.peer_fin && K.closed_ev)) {
		struct pollfd pf[2] = { { .fd = K.tun, .events = POLLIN }, { .fd = ks, .events = POLLIN } };
		uint64_t now = now_us(), dl = tcp_next_deadline(K.s);
		int timeout = 10;
		ssize_t n;

		CHECK(now - start < limit_us,
			      "stalled: kernel sent %llu got %llu eof %d; we sent %llu got %llu fin %d closed %d",
			      (unsigned long long)ksent, (unsigned long long)krecvd, keof, (unsigned long long)K.sent,
			      (unsigned long long)K.recvd, K.peer_fin, K.closed_ev);
		if (!kshut)
			pf[1].events |= POLLOUT;
		if (dl != UINT64_MAX)
			timeout = dl <= now ? 0 : (int)((dl - now) / 1000 + 1);
		if (timeout > 10)
			timeout = 10;
		poll(pf, 2, timeout);
		while ((n = read(K.tun, buf, sizeof(buf))) > 0)
			kt_input(buf, (size_t)n);
		tcp_timers_run(K.s, now_us());
		tcp_stack_tx_done(K.s);
		/* the kernel side */
		while (!kshut && ksent < KBYTES) {
			uint64_t st = kgen_send;
			size_t len = sizeof(buf) < KBYTES - ksent ? sizeof(buf) : KBYTES - ksent, i;

			for (i = 0; i < len; i++)
				buf[i] = gen(&st);
			n = send(ks, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n <= 0)
				break;
			for (i = 0; i < (size_t)n; i++)
				gen(&kgen_send);
			ksent += (uint64_t)n;
		}
		if (!kshut && ksent == KBYTES) {
			CHECK(shutdown(ks, SHUT_WR) == 0, "shutdown: %s", strerror(errno));	/* half-close */
			kshut = true;
		}
		while ((n = recv(ks, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
			ssize_t i;

			for (i = 0; i < n; i++)
				CHECK(buf[i] == gen(&kgen_recv), "byte %llu to the kernel differs",
				      (unsigned long long)(krecvd + (uint64_t)i));
			krecvd += (uint64_t)n;
		}
		if (n == 0)
			keof = true;
		else
			CHECK(errno == EAGAIN, "kernel recv: %s", strerror(errno));
		our_read();
		if (getenv("KT_VERBOSE") && now_us() - last_print > 500000) {
			struct tcp_conn_info i;

			last_print = now_us();
			if (K.c) {
				tcp_conn_info(K.c, &i);
				fprintf(stderr, "t=%.1f ksent %llu krecvd %llu | sent %llu recvd %llu | %s cwnd %u ssth %u "
					"srtt %u snd_wnd %u rcv_wnd %u unacked %u sndbuf %u/%u rto %llu rtx %llu\n",
					(double)(now_us() - start) / 1e6, (unsigned long long)ksent,
					(unsigned long long)krecvd, (unsigned long long)K.sent, (unsigned long long)K.recvd,
					tcp_state_name(i.state), i.cwnd, i.ssthresh, i.srtt_us, i.snd_wnd, i.rcv_wnd,
					i.unacked_bytes, i.sndbuf_used, i.sndbuf_cap, (unsigned long long)i.stats.rto_count,
					(unsigned long long)i.stats.retrans_segs);
			}
		}
	}
}

static void kt_report(const char *name, uint64_t t0)
{
	struct tcp_conn_info i;

	tcp_conn_info(K.c, &i);
	fprintf(stderr,
		"%s: %.2f s, in %llu out %llu dropped %llu; retrans %llu fast_rec %llu sack_rec %llu rto %llu "
		"srtt %u us cwnd %u rcvbuf %u\n",
		name, (double)(now_us() - t0) / 1e6, (unsigned long long)K.pkts_in, (unsigned long long)K.pkts_out,
		(unsigned long long)K.dropped, (unsigned long long)i.stats.retrans_segs, (unsigned long long)i.stats.fast_recoveries,
		(unsigned long long)i.stats.sack_recoveries, (unsigned long long)i.stats.rto_count, i.srtt_us, i.cwnd, i.rcvbuf_cap);
}

static void kernel_connects(uint32_t loss_ppm)
{
	struct tcp_endpoint l = ep4("10.9.0.2", 8080);
	struct tcp_conn_opts o = kt_opts();
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(8080) };
	uint64_t t0 = now_us();
	int ks;

	K.loss_ppm = loss_ppm;
	ck_assert_int_eq(tcp_listen(K.s, &l, 8, &o, our_accept, our_event, NULL, &K.lis), 0);
	ks = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	inet_pton(AF_INET, "10.9.0.2", &sa.sin_addr);
	ck_assert(connect(ks, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EINPROGRESS);
	kt_pump(ks, 60000000);
	kt_report(loss_ppm ? "kernel connects, lossy" : "kernel connects", t0);
	close(ks);
	tcp_close(K.c, now_us());
}

START_TEST(test_kernel_connects_to_us)
{
	kernel_connects(0);
}
END_TEST

START_TEST(test_kernel_connects_to_us_lossy)
{
	kernel_connects(20000);	/* 2 % each way */
}
END_TEST

/* Connect from our stack with @o to a kernel listener (CUBIC) on 10.9.0.1:@port, run the transfer. */
static void we_connect(const struct tcp_conn_opts *o, uint16_t port, const char *name)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct tcp_endpoint l = ep4("10.9.0.2", 0), r = ep4("10.9.0.1", port);
	uint64_t t0 = now_us(), start;
	int ls, ks = -1, one = 1;

	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* CUBIC reacts to ECN echoes; this namespace's default may be BBR, which does not */
	ck_assert_int_eq(setsockopt(ls, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5), 0);
	inet_pton(AF_INET, "10.9.0.1", &sa.sin_addr);
	ck_assert_int_eq(bind(ls, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(ls, 4), 0);
	ck_assert_int_eq(tcp_connect(K.s, &l, &r, o, our_event, NULL, now_us(), &K.c), 0);
	start = now_us();
	while (ks < 0) {
		uint8_t buf[MTU + 100];
		ssize_t n;

		CHECK(now_us() - start < 20000000, "no connection to the kernel");
		usleep(1000);
		while ((n = read(K.tun, buf, sizeof(buf))) > 0)
			kt_input(buf, (size_t)n);
		tcp_timers_run(K.s, now_us());
		ks = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	}
	kt_pump(ks, 60000000);
	kt_report(name, t0);
	close(ks);
	close(ls);
}

START_TEST(test_we_connect_to_kernel)
{
	struct tcp_conn_opts o = kt_opts();

	K.loss_ppm = 10000;
	we_connect(&o, 9090, "we connect, 1 % loss");
}
END_TEST

/* A counter of /proc/self/net/netstat (this test's namespace): "TcpExt" or "IpExt", @name. */
static long long netstat(const char *group, const char *name)
{
	char names[4096], vals[4096];
	long long v = -1;
	FILE *f = fopen("/proc/self/net/netstat", "r");

	if (!f)
		return -1;
	while (v < 0 && fgets(names, sizeof(names), f) && fgets(vals, sizeof(vals), f)) {
		char *sn, *sv, *n, *x;

		if (strncmp(names, group, strlen(group)) || names[strlen(group)] != ':')
			continue;
		n = strtok_r(names, " \n", &sn);
		x = strtok_r(vals, " \n", &sv);
		while ((n = strtok_r(NULL, " \n", &sn)) && (x = strtok_r(NULL, " \n", &sv)))
			if (!strcmp(n, name))
				v = atoll(x);
	}
	fclose(f);
	return v;
}

static void sysctl_write(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	ck_assert_int_ge(fputs(val, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

/*
 * ECN with the kernel as the receiver: we ask for it (--tcp-ecn on), the
 * kernel agrees, our data leaves ECT(0) and the adapter marks 1 % of it CE
 * on the way in. The kernel counts the CE packets and echoes them; we
 * reduce for the echoes (not once per packet: once per window), send CWR,
 * and the stream arrives intact without a single loss.
 */
START_TEST(test_ecn_we_send_kernel_echoes)
{
	struct tcp_conn_opts o = kt_opts();
	struct tcp_conn_info i;
	long long ce0 = netstat("IpExt", "InCEPkts");

	sysctl_write("/proc/sys/net/ipv4/tcp_ecn", "1");
	o.ecn = TCP_ECN_ON;
	K.ce_to_kernel_ppm = 10000;
	we_connect(&o, 9191, "ECN, we send, 1 % CE");
	tcp_conn_info(K.c, &i);
	fprintf(stderr, "  marked %llu; ece %llu, reductions %llu, retrans %llu; kernel InCEPkts +%lld\n",
		(unsigned long long)K.ce_marked, (unsigned long long)i.ece_rcvd, (unsigned long long)i.ecn_reductions,
		(unsigned long long)i.stats.retrans_segs, netstat("IpExt", "InCEPkts") - ce0);
	ck_assert(i.ecn);
	ck_assert_uint_gt(K.ce_marked, 0);
	ck_assert_int_eq(netstat("IpExt", "InCEPkts") - ce0, (long long)K.ce_marked);
	ck_assert_uint_gt(i.ece_rcvd, 0);
	ck_assert_uint_gt(i.ecn_reductions, 0);
	ck_assert_uint_le(i.ecn_reductions, K.ce_marked);
	ck_assert_uint_eq(i.stats.retrans_segs, 0);	/* no loss: marks instead of drops */
	tcp_close(K.c, now_us());
}
END_TEST

/*
 * ECN with the kernel as the sender (CUBIC): it asks on its SYN, we accept
 * (the default), its data arrives ECT and the adapter marks 1 % CE. We echo
 * until its CWR, and the kernel's own counter says its packets were
 * delivered CE-echoed (TCPDeliveredCE).
 */
START_TEST(test_ecn_kernel_sends_we_echo)
{
	struct tcp_endpoint l = ep4("10.9.0.2", 8181);
	struct tcp_conn_opts o = kt_opts();
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(8181) };
	long long ce0 = netstat("TcpExt", "TCPDeliveredCE");
	struct tcp_conn_info i;
	uint64_t t0 = now_us();
	int ks;

	sysctl_write("/proc/sys/net/ipv4/tcp_ecn", "1");
	K.ce_to_us_ppm = 10000;
	ck_assert_int_eq(tcp_listen(K.s, &l, 8, &o, our_accept, our_event, NULL, &K.lis), 0);
	ks = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(setsockopt(ks, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5), 0);
	inet_pton(AF_INET, "10.9.0.2", &sa.sin_addr);
	ck_assert(connect(ks, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EINPROGRESS);
	kt_pump(ks, 60000000);
	kt_report("ECN, the kernel sends, 1 % CE", t0);
	tcp_conn_info(K.c, &i);
	fprintf(stderr, "  marked %llu; we got %llu CE; kernel TCPDeliveredCE +%lld\n",
		(unsigned long long)K.ce_marked, (unsigned long long)i.ce_rcvd,
		netstat("TcpExt", "TCPDeliveredCE") - ce0);
	ck_assert(i.ecn);
	ck_assert_uint_gt(K.ce_marked, 0);
	ck_assert_uint_eq(i.ce_rcvd, K.ce_marked);
	ck_assert_int_gt(netstat("TcpExt", "TCPDeliveredCE") - ce0, 0);
	close(ks);
	tcp_close(K.c, now_us());
}
END_TEST

/*
 * BBR against the kernel (CUBIC) with 1 % loss each way: both streams
 * arrive intact, BBR left STARTUP, and its model holds a bandwidth.
 */
START_TEST(test_bbr_to_kernel_lossy)
{
	struct tcp_conn_opts o = kt_opts();
	struct tcp_conn_info i;

	o.cc = TCP_CC_BBR;
	K.loss_ppm = 10000;
	we_connect(&o, 9292, "BBR, we connect, 1 % loss");
	tcp_conn_info(K.c, &i);
	fprintf(stderr, "  %s %s bw %.1f Mbit/s min_rtt %u us cwnd %u\n", i.cc, i.cc_mode ? i.cc_mode : "-",
		(double)i.cc_bw * 8 / 1e6, i.min_rtt_us, i.cwnd);
	ck_assert_str_eq(i.cc, "bbr");
	ck_assert_ptr_nonnull(i.cc_mode);
	ck_assert_str_ne(i.cc_mode, "startup");
	ck_assert_uint_gt(i.cc_bw, 0);
	ck_assert_uint_gt(i.stats.retrans_segs, 0);
	tcp_close(K.c, now_us());
}
END_TEST

/* ---- many kernel clients against an echo service on our stack ---- */

#define NCLIENTS	1000
#define CLIENT_BYTES	(32u << 10)

struct echo {
	struct tcp_conn *c;
	bool peer_fin;
	bool shut;
	bool done;
};

static struct echo echoes[NCLIENTS + 8];
static unsigned int nechoes;

static void echo_pump(struct echo *e)
{
	struct iovec iov[2];
	uint64_t now = now_us();

	while (e->c && !e->done && tcp_peek(e->c, iov) > 0) {
		ssize_t n = tcp_send(e->c, iov[0].iov_base, iov[0].iov_len, now);

		if (n <= 0)
			break;
		tcp_consume(e->c, (size_t)n, now);
	}
	if (e->c && e->peer_fin && !e->shut && tcp_peek(e->c, iov) == 0) {
		e->shut = true;
		tcp_shutdown_write(e->c, now);
	}
}

static void echo_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	struct echo *e = user;

	(void)c;
	switch (ev) {
	case TCP_EV_READABLE:
	case TCP_EV_WRITABLE:
		echo_pump(e);
		break;
	case TCP_EV_PEER_FIN:
		e->peer_fin = true;
		echo_pump(e);
		break;
	case TCP_EV_CLOSED:
		e->done = true;
		break;
	case TCP_EV_RESET:
		ck_abort_msg("echo connection reset (%d)", err);
		break;
	default:
		break;
	}
}

static int echo_accept(struct tcp_listener *l, void *user, struct tcp_conn *c)
{
	struct echo *e;

	(void)l;
	(void)user;
	CHECK(nechoes < NCLIENTS + 8, "too many connections accepted");
	e = &echoes[nechoes++];
	memset(e, 0, sizeof(*e));
	e->c = c;
	tcp_conn_set_user(c, echo_event, e);
	return 0;
}

struct client {
	int fd;
	uint32_t sent, recvd;
	bool shut, eof;
};

START_TEST(test_many_kernel_clients_echo)
{
	static struct client cl[NCLIENTS];
	struct tcp_endpoint l = ep4("10.9.0.2", 7);
	struct tcp_conn_opts o = kt_opts();
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(7) };
	struct tcp_stack_stats st;
	uint64_t start = now_us();
	unsigned int i, done = 0;
	uint8_t buf[65536];

	struct rlimit rl;

	/* one fd per client */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < NCLIENTS + 64) {
		rl.rlim_cur = rl.rlim_max < NCLIENTS + 64 ? rl.rlim_max : NCLIENTS + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	ck_assert_uint_ge(rl.rlim_cur, NCLIENTS + 16);
	nechoes = 0;
	ck_assert_int_eq(tcp_listen(K.s, &l, 16, &o, echo_accept, echo_event, NULL, &K.lis), 0);
	inet_pton(AF_INET, "10.9.0.2", &sa.sin_addr);
	for (i = 0; i < NCLIENTS; i++) {
		memset(&cl[i], 0, sizeof(cl[i]));
		cl[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(cl[i].fd, 0);
		ck_assert(connect(cl[i].fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EINPROGRESS);
	}
	while (done < NCLIENTS) {
		ssize_t n;

		CHECK(now_us() - start < 60000000, "stalled: %u of %u clients done, %u accepted", done, NCLIENTS,
		      nechoes);
		usleep(200);
		while ((n = read(K.tun, buf, sizeof(buf))) > 0)
			kt_input(buf, (size_t)n);
		tcp_timers_run(K.s, now_us());
		tcp_stack_tx_done(K.s);
		for (i = 0; i < NCLIENTS; i++) {
			struct client *c = &cl[i];
			uint32_t k;

			if (c->eof)
				continue;
			while (c->sent < CLIENT_BYTES) {
				size_t len = CLIENT_BYTES - c->sent < 4096 ? CLIENT_BYTES - c->sent : 4096;

				for (k = 0; k < len; k++)
					buf[k] = (uint8_t)(c->sent + k + i);
				n = send(c->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
				if (n <= 0)
					break;
				c->sent += (uint32_t)n;
			}
			if (c->sent == CLIENT_BYTES && !c->shut) {
				CHECK(shutdown(c->fd, SHUT_WR) == 0, "shutdown: %s", strerror(errno));
				c->shut = true;
			}
			while ((n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
				for (k = 0; k < (uint32_t)n; k++)
					CHECK(buf[k] == (uint8_t)(c->recvd + k + i), "client %u: byte %u differs", i,
					      c->recvd + k);
				c->recvd += (uint32_t)n;
			}
			if (n == 0) {
				CHECK(c->recvd == CLIENT_BYTES, "client %u: EOF after %u bytes", i, c->recvd);
				c->eof = true;
				close(c->fd);
				done++;
			}
		}
	}
	tcp_stack_stats(K.s, &st);
	fprintf(stderr,
		"%u kernel clients echoed in %.2f s: syncookies sent %llu ok %llu bad %llu, synq overflow %llu\n",
		NCLIENTS, (double)(now_us() - start) / 1e6, (unsigned long long)st.syncookies_sent,
		(unsigned long long)st.syncookies_ok, (unsigned long long)st.syncookies_bad,
		(unsigned long long)st.synq_overflow);
	ck_assert_uint_eq(nechoes, NCLIENTS);
	for (i = 0; i < nechoes; i++)
		tcp_close(echoes[i].c, now_us());
}
END_TEST

static Suite *kernel_suite(void)
{
	Suite *s = suite_create("datapath_tcp_kernel");
	TCase *tc;

	tc = tcase_create("kernel_connects_to_us");
	tcase_add_checked_fixture(tc, kt_setup, kt_teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_kernel_connects_to_us);
	suite_add_tcase(s, tc);
	tc = tcase_create("kernel_connects_to_us_lossy");
	tcase_add_checked_fixture(tc, kt_setup, kt_teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_kernel_connects_to_us_lossy);
	suite_add_tcase(s, tc);
	tc = tcase_create("many_kernel_clients_echo");
	tcase_add_checked_fixture(tc, kt_setup, kt_teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_many_kernel_clients_echo);
	suite_add_tcase(s, tc);
	tc = tcase_create("we_connect_to_kernel");
	tcase_add_checked_fixture(tc, kt_setup, kt_teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_we_connect_to_kernel);
	suite_add_tcase(s, tc);
	tc = tcase_create("ecn");
	tcase_add_checked_fixture(tc, kt_setup, kt_teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_ecn_we_send_kernel_echoes);
	tcase_add_test(tc, test_ecn_kernel_sends_we_echo);
	suite_add_tcase(s, tc);
	tc = tcase_create("bbr");
	tcase_add_checked_fixture(tc, kt_setup, kt_teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_bbr_to_kernel_lossy);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed, fd;

	/* needs CAP_SYS_ADMIN for the namespace and /dev/net/tun */
	if (geteuid() != 0 || access("/dev/net/tun", R_OK | W_OK) != 0) {
		printf("skipped: needs root and /dev/net/tun\n");
		return 77;
	}
	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("skipped: /dev/net/tun: %s\n", strerror(errno));
		return 77;
	}
	close(fd);
	sr = srunner_create(kernel_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
