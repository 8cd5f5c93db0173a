// SPDX-License-Identifier: MIT
/*
 * test_netsetup_steer.c - the steering hash: the BPF program the kernel runs
 * against its C form, and the kernel's own steering with it
 *
 *   - the program, run in this kernel with BPF_PROG_TEST_RUN, picks the shard
 *     flowhash_packet() picks, for every kind of packet and every truncation;
 *   - a flow and its reverse, and an ICMP error about either, have one shard,
 *     which is flowhash_flow()'s;
 *   - flows spread over the shards;
 *   - in a network namespace of the test's own: a multi-queue TUN with the
 *     program puts what the container sends on the queue of its shard, and a
 *     PACKET_FANOUT_EBPF group on a veth puts the answers, frames sent from
 *     the veth's other end, on the socket of the same shard.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>

#include "common/flowhash.h"
#include "netsetup/kernel/kernel_int.h"

#define ETH_LEN		14
#define MAX_FRAME	256

struct flow {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t proto;
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* An IP packet of @f at @p (no Ethernet header), with @ihl_words for IPv4
 * and @frag for its fragment field; 8 bytes of L4 header. Returns its length. */
static size_t build_ip(uint8_t *p, const struct flow *f, unsigned int ihl_words, uint16_t frag)
{
	size_t l4;

	if (f->family == AF_INET) {
		memset(p, 0, ihl_words * 4);
		p[0] = (uint8_t)(0x40 | ihl_words);
		put16(p + 6, frag);
		p[8] = 64;
		p[9] = f->proto;
		memcpy(p + 12, f->saddr, 4);
		memcpy(p + 16, f->daddr, 4);
		l4 = ihl_words * 4;
	} else {
		memset(p, 0, 40);
		p[0] = 0x60;
		p[6] = f->proto;
		p[7] = 64;
		memcpy(p + 8, f->saddr, 16);
		memcpy(p + 24, f->daddr, 16);
		l4 = 40;
	}
	memset(p + l4, 0, 8);
	put16(p + l4, f->sport);
	put16(p + l4 + 2, f->dport);
	if (f->family == AF_INET)
		put16(p + 2, (uint16_t)(l4 + 8));
	else
		put16(p + 4, 8);
	return l4 + 8;
}

/* An ICMP (or ICMPv6) error of @type from @from to @about's source, quoting
 * @about as it left. */
static size_t build_icmp_error(uint8_t *p, const struct flow *about, const uint8_t *from, uint8_t type)
{
	struct flow outer = *about;
	size_t hl = about->family == AF_INET ? 20 : 40, inner;

	outer.proto = about->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	memcpy(outer.saddr, from, 16);
	memcpy(outer.daddr, about->saddr, 16);
	outer.sport = 0;
	outer.dport = 0;
	build_ip(p, &outer, 5, 0);
	p[hl] = type;
	inner = build_ip(p + hl + 8, about, 5, 0);
	return hl + 8 + inner;
}

static void flow_reverse(struct flow *r, const struct flow *f)
{
	*r = *f;
	memcpy(r->saddr, f->daddr, 16);
	memcpy(r->daddr, f->saddr, 16);
	r->sport = f->dport;
	r->dport = f->sport;
}

static void flow_random(struct flow *f, int family, uint8_t proto)
{
	unsigned int i;

	memset(f, 0, sizeof(*f));
	f->family = family;
	f->proto = proto;
	for (i = 0; i < 16; i++) {
		f->saddr[i] = (uint8_t)rand();
		f->daddr[i] = (uint8_t)rand();
	}
	f->sport = (uint16_t)rand();
	f->dport = (uint16_t)rand();
}

static int prog_load(uint32_t seed, unsigned int n)
{
	struct ns_err e = { .text = "" };
	int fd = ns_steer_load(seed, n, &e);

	ck_assert_msg(fd >= 0, "%s", e.text);
	return fd;
}

/* The program's answer for the IP packet @l3, run in the kernel. */
static unsigned int prog_run(int prog_fd, const uint8_t *l3, size_t len)
{
	uint8_t frame[ETH_LEN + MAX_FRAME] = { 0 };
	union bpf_attr attr;
	uint16_t type = ETH_P_ARP;

	ck_assert_uint_le(len, MAX_FRAME);
	/* The test run refuses an IP frame shorter than the IP header; the
	 * program looks at the version, not at the EtherType, so a cut
	 * packet goes as an experimental type. */
	if (len >= 20 && l3[0] >> 4 == 4)
		type = ETH_P_IP;
	else if (len >= 40 && l3[0] >> 4 == 6)
		type = ETH_P_IPV6;
	else if (len)
		type = 0x88b5;
	memset(frame, 0x02, 12);
	put16(frame + 12, type);
	memcpy(frame + ETH_LEN, l3, len);
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)prog_fd;
	attr.test.data_in = (uintptr_t)frame;
	attr.test.data_size_in = (uint32_t)(ETH_LEN + len);
	attr.test.repeat = 1;
	ck_assert_msg(syscall(SYS_bpf, BPF_PROG_TEST_RUN, &attr, sizeof(attr)) == 0,
		      "BPF_PROG_TEST_RUN, %zu bytes: %s", len, strerror(errno));
	return attr.test.retval;
}

/* The packets the program must agree on; fills @pkts, returns how many. */
static unsigned int corpus(uint8_t pkts[][MAX_FRAME], size_t *lens, unsigned int max)
{
	static const int families[] = { AF_INET, AF_INET6 };
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP, 47, 0 };
	static const uint8_t errs4[] = { 3, 11, 12, 5, 0, 8 };
	static const uint8_t errs6[] = { 1, 2, 3, 4, 128, 135, 0, 5 };
	uint8_t router[16];
	unsigned int n = 0, fi, pi, k, i;
	struct flow f, about;

	for (i = 0; i < 16; i++)
		router[i] = (uint8_t)(0xa0 + i);
	for (k = 0; k < 8; k++)
		for (fi = 0; fi < 2; fi++)
			for (pi = 0; pi < sizeof(protos) && n < max; pi++) {
				flow_random(&f, families[fi], protos[pi]);
				lens[n] = build_ip(pkts[n], &f, 5, 0);
				n++;
			}
	for (k = 0; k < 8 && n + 4 < max; k++) {
		flow_random(&f, AF_INET, IPPROTO_TCP);
		lens[n] = build_ip(pkts[n], &f, 7, 0);		/* options */
		n++;
		lens[n] = build_ip(pkts[n], &f, 5, 0x2000);	/* MF: the first fragment */
		n++;
		lens[n] = build_ip(pkts[n], &f, 5, 0x00b9);	/* a later one */
		n++;
		lens[n] = build_ip(pkts[n], &f, 5, 0x4000);	/* DF only: not a fragment */
		n++;
	}
	for (k = 0; k < sizeof(errs4) && n < max; k++) {
		flow_random(&about, AF_INET, k & 1 ? IPPROTO_UDP : IPPROTO_TCP);
		lens[n] = build_icmp_error(pkts[n], &about, router, errs4[k]);
		n++;
	}
	for (k = 0; k < sizeof(errs6) && n < max; k++) {
		flow_random(&about, AF_INET6, k & 1 ? IPPROTO_UDP : IPPROTO_TCP);
		lens[n] = build_icmp_error(pkts[n], &about, router, errs6[k]);
		n++;
	}
	/* Not IP at all, and an IP version that is neither. */
	if (n + 2 <= max) {
		memset(pkts[n], 0, 28);
		pkts[n][1] = 1;
		lens[n++] = 28;
		flow_random(&f, AF_INET, IPPROTO_TCP);
		lens[n] = build_ip(pkts[n], &f, 5, 0);
		pkts[n][0] = 0x55;
		n++;
	}
	return n;
}

START_TEST(test_prog_matches_c)
{
	static uint8_t pkts[160][MAX_FRAME];
	static const unsigned int shards[] = { 1, 2, 3, 5, 8, 64 };
	static const uint32_t seeds[] = { 0, 0x9e3779b9, 0xffffffff };
	size_t lens[160], cut;
	unsigned int n, i, si, ni, want, got, checked = 0;
	int fd;

	srand(20);
	n = corpus(pkts, lens, 160);
	ck_assert_uint_ge(n, 100);
	for (si = 0; si < 3; si++)
		for (ni = 0; ni < 6; ni++) {
			fd = prog_load(seeds[si], shards[ni]);
			for (i = 0; i < n; i++) {
				want = flowhash_packet(pkts[i], lens[i], seeds[si], shards[ni]);
				got = prog_run(fd, pkts[i], lens[i]);
				ck_assert_msg(got == want, "packet %u (len %zu) seed %#x, %u shards: program %u, C %u",
					      i, lens[i], seeds[si], shards[ni], got, want);
				ck_assert_uint_lt(got, shards[ni]);
				checked++;
			}
			/* Every truncation of a few: where the program stops, so does C. */
			for (i = 0; i < n; i += 7)
				for (cut = 0; cut < lens[i]; cut++) {
					want = flowhash_packet(pkts[i], cut, seeds[si], shards[ni]);
					got = prog_run(fd, pkts[i], cut);
					ck_assert_msg(got == want, "packet %u cut to %zu, %u shards: program %u, C %u",
						      i, cut, shards[ni], got, want);
				}
			close(fd);
		}
	ck_assert_uint_ge(checked, 18 * 100);
}
END_TEST

/* A flow, its reverse, flowhash_flow() and an ICMP error about the flow from
 * a router all agree; a fragment of a TCP flow goes by its addresses. */
START_TEST(test_symmetric)
{
	static const int families[] = { AF_INET, AF_INET6 };
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP };
	uint8_t a[MAX_FRAME], b[MAX_FRAME], router[16] = { 10, 99, 0, 1 };
	unsigned int k, fi, pi, fwd, differ = 0;
	struct flow f, r, addr_only;
	size_t la, lb;

	srand(21);
	for (k = 0; k < 500; k++)
		for (fi = 0; fi < 2; fi++)
			for (pi = 0; pi < 2; pi++) {
				flow_random(&f, families[fi], protos[pi]);
				flow_reverse(&r, &f);
				la = build_ip(a, &f, 5, 0);
				lb = build_ip(b, &r, 5, 0);
				fwd = flowhash_packet(a, la, 77, 16);
				ck_assert_uint_eq(flowhash_packet(b, lb, 77, 16), fwd);
				ck_assert_uint_eq(flowhash_flow(f.family, f.proto, f.saddr, f.daddr, f.sport,
								f.dport, 77, 16), fwd);
				ck_assert_uint_eq(flowhash_flow(r.family, r.proto, r.saddr, r.daddr, r.sport,
								r.dport, 77, 16), fwd);
				lb = build_icmp_error(b, &f, router, f.family == AF_INET ? 3 : 1);
				ck_assert_uint_eq(flowhash_packet(b, lb, 77, 16), fwd);
				addr_only = f;
				addr_only.sport = 1;
				addr_only.dport = 2;
				if (f.proto == IPPROTO_UDP) {
					/* UDP goes by its addresses: the ports do not count. */
					ck_assert_uint_eq(flowhash_flow(f.family, f.proto, f.saddr, f.daddr, 1, 2,
									77, 16), fwd);
				} else if (f.family == AF_INET) {
					la = build_ip(a, &f, 5, 0x2000);
					lb = build_ip(b, &addr_only, 5, 0);
					b[9] = IPPROTO_UDP;
					ck_assert_uint_eq(flowhash_packet(a, la, 77, 16),
							  flowhash_packet(b, lb, 77, 16));
					differ += flowhash_flow(f.family, f.proto, f.saddr, f.daddr, 1, 2, 77, 16) != fwd;
				}
			}
	/* The ports of a TCP flow do count: 15 of 16 shards differ at random. */
	ck_assert_uint_gt(differ, 400);
}
END_TEST

START_TEST(test_spread)
{
	unsigned int count[4] = { 0 }, k, s;
	struct flow f;

	srand(22);
	for (k = 0; k < 8000; k++) {
		flow_random(&f, k & 1 ? AF_INET6 : AF_INET, IPPROTO_TCP);
		/* One container address, one server: only the client port varies. */
		memset(f.saddr, 0, 16);
		f.saddr[0] = 10;
		memset(f.daddr, 0, 16);
		f.daddr[0] = 192;
		f.dport = 443;
		count[flowhash_flow(f.family, f.proto, f.saddr, f.daddr, f.sport, f.dport, 5, 4)]++;
	}
	for (s = 0; s < 4; s++)
		ck_assert_msg(count[s] > 1700 && count[s] < 2300, "shard %u has %u of 8000", s, count[s]);
	ck_assert_int_eq(flowhash_prog(NULL, 0, 0, 0), -EINVAL);
	ck_assert_int_eq(flowhash_prog(NULL, 0, 0, FLOWHASH_MAX_SHARDS + 1), -EINVAL);
}
END_TEST

#define SHARDS		3

/* Is the IP packet @ip (host-order ports) of @family to destination port @dport? */
static bool is_flow(const uint8_t *ip, size_t len, int family, int dport)
{
	size_t hl = family == AF_INET ? (size_t)(ip[0] & 0xf) * 4 : 40;

	if (len < hl + 4 || ip[0] >> 4 != (family == AF_INET ? 4 : 6))
		return false;
	return (ip[hl + 2] << 8 | ip[hl + 3]) == dport;
}
#define TUN_NAME	"sfh-tun"

static void sh(const char *cmd)
{
	ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
}

static int tun_queue(void)
{
	struct ifreq ifr = { 0 };
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", TUN_NAME);
	ck_assert_msg(ioctl(fd, TUNSETIFF, &ifr) == 0, "TUNSETIFF: %s", strerror(errno));
	return fd;
}

static int fanout_member(int ifindex, int prog_fd, bool first)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = ifindex };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int arg = (int)(0x5a17u | (unsigned int)(PACKET_FANOUT_EBPF | PACKET_FANOUT_FLAG_DEFRAG) << 16);
	struct ns_err e = { .text = "" };

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	ck_assert_msg(setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) == 0, "PACKET_FANOUT: %s",
		      strerror(errno));
	if (first)
		ck_assert_msg(ns_steer_fanout(fd, prog_fd, &e) == 0, "%s", e.text);
	return fd;
}

/* The container's kernel sends TCP SYNs and UDP datagrams to many remote
 * ends through the TUN; each lands on the queue of its shard. Their
 * answers, sent as frames into the veth, land on the fanout socket of
 * the same shard. */
START_TEST(test_kernel_steering)
{
	int q[SHARDS], member[SHARDS], prog, tx, s, i, k, got;
	unsigned int seen[SHARDS] = { 0 }, answers = 0, total = 0, others = 0;
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = 6 };
	uint8_t buf[2048], frame[ETH_LEN + MAX_FRAME];
	struct ns_err e = { .text = "" };
	struct flow f, r;
	ssize_t n;
	size_t len;

	ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare: %s", strerror(errno));
	prog = prog_load(0x5eed, SHARDS);
	for (i = 0; i < SHARDS; i++)
		q[i] = tun_queue();
	ck_assert_msg(ns_steer_tun(q[0], prog, &e) == 0, "%s", e.text);
	sh("ip link set lo up && ip link set " TUN_NAME " up && ip addr add 10.77.0.1/24 dev " TUN_NAME
	   " && sysctl -qw net.ipv6.conf." TUN_NAME ".accept_dad=0"
	   " && ip addr add fd77::1/64 dev " TUN_NAME " nodad"
	   " && ip link add sfh-a type veth peer name sfh-b"
	   " && sysctl -qw net.ipv6.conf.sfh-a.disable_ipv6=1 net.ipv6.conf.sfh-b.disable_ipv6=1"
	   " && ip link set sfh-a up && ip link set sfh-b up");
	for (i = 0; i < SHARDS; i++)
		member[i] = fanout_member((int)if_nametoindex("sfh-b"), prog, i == 0);
	close(prog);
	tx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(tx, 0);
	to.sll_ifindex = (int)if_nametoindex("sfh-a");

	for (k = 0; k < 48; k++) {
		int family = k & 1 ? AF_INET6 : AF_INET, type = k % 3 == 2 ? SOCK_DGRAM : SOCK_STREAM;
		struct sockaddr_storage ss = { 0 };
		socklen_t sl;
		int c = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		ck_assert_int_ge(c, 0);
		if (family == AF_INET) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

			sin->sin_family = AF_INET;
			sin->sin_port = htons((uint16_t)(8000 + k));
			sin->sin_addr.s_addr = htonl(0x0a4d0002 + (uint32_t)(k % 7));
			sl = sizeof(*sin);
		} else {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons((uint16_t)(8000 + k));
			inet_pton(AF_INET6, "fd77::2", &sin6->sin6_addr);
			sin6->sin6_addr.s6_addr[15] = (uint8_t)(2 + k % 7);
			sl = sizeof(*sin6);
		}
		if (type == SOCK_DGRAM)
			ck_assert_int_eq(sendto(c, "x", 1, 0, (struct sockaddr *)&ss, sl), 1);
		else
			ck_assert(connect(c, (struct sockaddr *)&ss, sl) < 0 && errno == EINPROGRESS);
		/* Find the packet on whichever queue the program chose; whatever
		 * else the kernel sends (MLD) must be on its shard's queue too. */
		for (i = 0, n = -1; i < 200; i++) {
			for (s = 0; s < SHARDS; s++) {
				n = read(q[s], buf, sizeof(buf));
				if (n > (ssize_t)sizeof(struct virtio_net_hdr))
					break;
			}
			if (s == SHARDS) {
				usleep(1000);
				continue;
			}
			len = (size_t)n - sizeof(struct virtio_net_hdr);
			ck_assert_uint_eq((unsigned int)s,
					  flowhash_packet(buf + sizeof(struct virtio_net_hdr), len, 0x5eed, SHARDS));
			if (is_flow(buf + sizeof(struct virtio_net_hdr), len, family, 8000 + k))
				break;
			others++;
		}
		ck_assert_msg(i < 200, "flow %d: not on any queue", k);
		seen[s]++;
		total++;
		close(c);

		/* The answer from the remote end, as a frame into the link. */
		memset(&f, 0, sizeof(f));
		f.family = family;
		f.proto = type == SOCK_DGRAM ? IPPROTO_UDP : IPPROTO_TCP;
		{
			const uint8_t *ip = buf + sizeof(struct virtio_net_hdr);
			size_t hl = family == AF_INET ? (size_t)(ip[0] & 0xf) * 4 : 40, alen = family == AF_INET ? 4 : 16;

			memcpy(f.saddr, ip + (family == AF_INET ? 12 : 8), alen);
			memcpy(f.daddr, ip + (family == AF_INET ? 16 : 24), alen);
			f.sport = (uint16_t)(ip[hl] << 8 | ip[hl + 1]);
			f.dport = (uint16_t)(ip[hl + 2] << 8 | ip[hl + 3]);
		}
		flow_reverse(&r, &f);
		memset(frame, 0x02, 12);
		put16(frame + 12, family == AF_INET ? ETH_P_IP : ETH_P_IPV6);
		len = build_ip(frame + ETH_LEN, &r, 5, 0);
		ck_assert_int_eq(sendto(tx, frame, ETH_LEN + len, 0, (struct sockaddr *)&to, sizeof(to)),
				 (ssize_t)(ETH_LEN + len));
		for (i = 0, got = -1; i < 200 && got < 0; i++) {
			for (int m = 0; m < SHARDS; m++)
				while ((n = recv(member[m], buf, sizeof(buf), 0)) >= 0)
					if ((size_t)n == ETH_LEN + len && !memcmp(buf, frame, ETH_LEN + len))
						got = m;
			if (got < 0)
				usleep(1000);
		}
		ck_assert_msg(got == s, "flow %d: sent on queue %d, its answer reached member %d", k, s, got);
		answers++;
	}
	ck_assert_uint_eq(total, 48);
	ck_assert_uint_lt(others, 100);
	ck_assert_uint_eq(answers, 48);
	for (s = 0; s < SHARDS; s++)
		ck_assert_msg(seen[s] > 0, "no flow of 48 landed on shard %d", s);
	for (i = 0; i < SHARDS; i++) {
		close(q[i]);
		close(member[i]);
	}
	close(tx);
}
END_TEST

static Suite *flowhash_suite(void)
{
	Suite *s = suite_create("netsetup_steer");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_prog_matches_c);
	tcase_add_test(tc, test_symmetric);
	tcase_add_test(tc, test_spread);
	tcase_add_test(tc, test_kernel_steering);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(flowhash_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
