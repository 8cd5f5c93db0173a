// SPDX-License-Identifier: MIT
/*
 * test_datapath_face.c - the container face, driven packet by packet on a
 * virtual clock: the container's TUN and the outer wire are both socketpairs
 * (datapath_testlib.h), so every test writes what the container or the peer
 * sends and asserts on what the datapath writes back, on either side.
 *
 *  - TCP out: the container's SYN is held until the outer connection is up;
 *    a RST, an ICMP error or a timeout on the outer side become the answer
 *    the container's connect() gets; data and FINs cross; a SYN with a new
 *    ISN replaces an abandoned attempt;
 *  - TCP in: a SYN from the peer opens a connection to the container from the
 *    peer's address; the container's RST refuses it;
 *  - UDP both ways, flows and their caps; ICMP echo both ways;
 *  - bad input from the container, each drop under its reason; bad vnet
 *    headers; UDP GSO from the container leaving as UDP GSO (hw);
 *  - the TUN link says, of each frame, when its queue was last found empty;
 *  - no packet buffer is left at the end of any test.
 */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/face/face.h"
#include "datapath/face/face_int.h"
#include "datapath/link/vnet.h"
#include "datapath/net/net.h"
#include "datapath/wire/proto_hdr.h"
#include "datapath/net/tcp_glue.h"
#include "tests/unit/datapath_testlib.h"

static struct loop *lp;
static struct stack st;
static struct link *lk, *tun;
static int peer_fd = -1, ct_fd = -1;
static enum proto_gso_mode mode = PROTO_GSO_SW;

/* the container C (10.0.0.2, fd00::2) and its peer P (10.0.0.1, fd00::1) */
static const char *C4 = "10.0.0.2", *P4 = "10.0.0.1", *C6 = "fd00::2", *P6 = "fd00::1";

static uint32_t cap_flows, cap_per_source;	/* UDP caps of the next setup(), 0: default */

static void setup(void)
{
	struct dpt_link_opts o = { .mode = mode, .addr4 = "10.0.0.2", .addr6 = "fd00::2", .nodad = true };
	struct proto_face cfg = { .ifindex = 3, .ifname = "sn-eth0", .mtu = 1500, .offloads = 0x67 };
	char err[256];
	int sv[2];

	lk = dpt_stack_up(&lp, &st, &o, &peer_fd);
	dpt_neigh_add(&st, lk, P4);
	dpt_neigh_add(&st, lk, P6);
	st.limits.udp_flows = cap_flows;
	st.limits.udp_flows_per_source = cap_per_source;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv), 0);
	cfg.n_fds = 1;
	cfg.fds[0] = sv[0];
	ct_fd = sv[1];
	ck_assert_msg(face_add(&st, lk, &cfg, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(cfg.n_fds, 0);
	tun = st.inner[0];
	ck_assert_int_eq(stack_start(&st), 0);
	ck_assert_int_eq(face_start(face_of(&st)), 0);
	loop_advance_ms(lp, 10);
	dpt_drain(peer_fd);
}

static void teardown(void)
{
	close(ct_fd);
	dpt_stack_down(lp, &st, peer_fd);
}

static void setup_hw(void)
{
	mode = PROTO_GSO_HW;
	setup();
}

static void setup_caps(void)
{
	cap_flows = 8;
	cap_per_source = 3;
	setup();
}

static unsigned int flows(void)
{
	struct face_udp_usage u;

	face_udp_usage(face_of(&st), &u);
	return u.flows;
}

/* ---- packet building ---- */

static int fam_of(const char *a)
{
	return strchr(a, ':') ? AF_INET6 : AF_INET;
}

/* An IP packet from @src to @dst around an L4 part; its L4 checksum is filled. */
static size_t build_ip(uint8_t *b, const char *src, const char *dst, uint8_t proto, const uint8_t *l4,
		       size_t l4len, int csum_off)
{
	int fam = fam_of(src);
	uint8_t s[16], d[16];
	size_t o = fam == AF_INET ? 20 : 40;
	uint8_t *t = b + o;

	ck_assert_int_eq(inet_pton(fam, src, s), 1);
	ck_assert_int_eq(inet_pton(fam, dst, d), 1);
	memset(b, 0, o);
	if (fam == AF_INET) {
		uint16_t c;

		b[0] = 0x45;
		b[2] = (uint8_t)((o + l4len) >> 8);
		b[3] = (uint8_t)(o + l4len);
		b[6] = 0x40;
		b[8] = 64;
		b[9] = proto;
		memcpy(b + 12, s, 4);
		memcpy(b + 16, d, 4);
		c = dpt_ref_sum(b, 20, 0);
		b[10] = c >> 8;
		b[11] = c & 0xff;
	} else {
		b[0] = 0x60;
		b[4] = (uint8_t)(l4len >> 8);
		b[5] = (uint8_t)l4len;
		b[6] = proto;
		b[7] = 64;
		memcpy(b + 8, s, 16);
		memcpy(b + 24, d, 16);
	}
	memcpy(t, l4, l4len);
	if (csum_off >= 0) {
		uint16_t c;

		t[csum_off] = t[csum_off + 1] = 0;
		c = proto == IPPROTO_ICMP ? dpt_ref_sum(t, l4len, 0) :
		    dpt_ref_sum(t, l4len, dpt_ref_pseudo(fam, s, d, proto, (uint32_t)l4len));
		t[csum_off] = c >> 8;
		t[csum_off + 1] = c & 0xff;
	}
	return o + l4len;
}

static size_t tcp_hdr(uint8_t *t, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack, uint8_t flags,
		      const void *data, size_t len)
{
	memset(t, 0, 20);
	t[0] = sport >> 8; t[1] = sport & 0xff; t[2] = dport >> 8; t[3] = dport & 0xff;
	t[4] = seq >> 24; t[5] = seq >> 16; t[6] = seq >> 8; t[7] = seq;
	t[8] = ack >> 24; t[9] = ack >> 16; t[10] = ack >> 8; t[11] = ack;
	t[12] = 5 << 4;
	t[13] = flags;
	t[14] = 0xff; t[15] = 0xff;
	if (len)
		memcpy(t + 20, data, len);
	return 20 + len;
}

static size_t tcp_pkt(uint8_t *b, const char *src, uint16_t sport, const char *dst, uint16_t dport, uint32_t seq,
		      uint32_t ack, uint8_t flags, const void *data, size_t len)
{
	uint8_t l4[2048];

	return build_ip(b, src, dst, IPPROTO_TCP, l4, tcp_hdr(l4, sport, dport, seq, ack, flags, data, len), 16);
}

static size_t udp_pkt(uint8_t *b, const char *src, uint16_t sport, const char *dst, uint16_t dport,
		      const void *data, size_t len)
{
	static uint8_t l4[65536];

	ck_assert_uint_le(len, sizeof(l4) - 8);
	l4[0] = sport >> 8; l4[1] = sport & 0xff; l4[2] = dport >> 8; l4[3] = dport & 0xff;
	l4[4] = (uint8_t)((8 + len) >> 8); l4[5] = (uint8_t)(8 + len);
	memcpy(l4 + 8, data, len);
	return build_ip(b, src, dst, IPPROTO_UDP, l4, 8 + len, 6);
}

static size_t echo_pkt(uint8_t *b, const char *src, const char *dst, uint8_t type, uint16_t id, uint16_t seq)
{
	uint8_t l4[16] = { type, 0, 0, 0, (uint8_t)(id >> 8), (uint8_t)id, (uint8_t)(seq >> 8), (uint8_t)seq,
			   'p', 'i', 'n', 'g', 'p', 'i', 'n', 'g' };

	return build_ip(b, src, dst, fam_of(src) == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6, l4, sizeof(l4), 2);
}

/* ---- the two wires ---- */

/* What the container sends: [vnet][IP] into the TUN, read and handled. */
static void from_ct(const uint8_t *p, size_t len, const struct virtio_net_hdr *vh)
{
	struct virtio_net_hdr z = { 0 };
	struct iovec iov[2] = { { (void *)(vh ? vh : &z), sizeof(z) }, { (void *)p, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	ck_assert_int_eq(sendmsg(ct_fd, &mh, 0), (ssize_t)(sizeof(z) + len));
	link_rx(&tun->ch[0]);
	loop_advance_ms(lp, 1);
}

/* What the peer sends: an Ethernet frame around @p onto the outer wire. */
static void from_peer(const uint8_t *p, size_t len)
{
	uint8_t f[70000];
	struct virtio_net_hdr z = { 0 };

	memcpy(f, dpt_our_mac, 6);
	memcpy(f + 6, dpt_peer_mac, 6);
	f[12] = (p[0] >> 4) == 4 ? 0x08 : 0x86;
	f[13] = (p[0] >> 4) == 4 ? 0x00 : 0xdd;
	memcpy(f + 14, p, len);
	if (lk->vnet) {
		struct iovec iov[2] = { { &z, sizeof(z) }, { f, 14 + len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

		ck_assert_int_eq(sendmsg(peer_fd, &mh, 0), (ssize_t)(sizeof(z) + 14 + len));
	} else {
		ck_assert_int_eq(send(peer_fd, f, 14 + len, 0), (ssize_t)(14 + len));
	}
	link_rx(&lk->ch[0]);
	loop_advance_ms(lp, 1);
}

/* A parsed IP packet one side received. */
struct got {
	int family;
	uint8_t proto;
	char src[64], dst[64];
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint8_t type, code;		/* ICMP */
	const uint8_t *l4;
	size_t l4len;
	struct virtio_net_hdr vnet;
	uint8_t buf[70000];
};

static void parse_ip(struct got *g, const uint8_t *ip, size_t len)
{
	size_t hl;

	ck_assert_uint_ge(len, 20);
	g->family = (ip[0] >> 4) == 4 ? AF_INET : AF_INET6;
	if (g->family == AF_INET) {
		hl = (ip[0] & 15u) * 4;
		g->proto = ip[9];
		inet_ntop(AF_INET, ip + 12, g->src, sizeof(g->src));
		inet_ntop(AF_INET, ip + 16, g->dst, sizeof(g->dst));
		ck_assert_uint_eq(dpt_ref_sum(ip, hl, 0), 0);
	} else {
		hl = 40;
		g->proto = ip[6];
		inet_ntop(AF_INET6, ip + 8, g->src, sizeof(g->src));
		inet_ntop(AF_INET6, ip + 24, g->dst, sizeof(g->dst));
	}
	g->l4 = ip + hl;
	g->l4len = len - hl;
	if (g->proto == IPPROTO_TCP || g->proto == IPPROTO_UDP) {
		g->sport = (uint16_t)(g->l4[0] << 8 | g->l4[1]);
		g->dport = (uint16_t)(g->l4[2] << 8 | g->l4[3]);
	}
	if (g->proto == IPPROTO_TCP) {
		g->seq = (uint32_t)g->l4[4] << 24 | (uint32_t)g->l4[5] << 16 | (uint32_t)g->l4[6] << 8 | g->l4[7];
		g->ack = (uint32_t)g->l4[8] << 24 | (uint32_t)g->l4[9] << 16 | (uint32_t)g->l4[10] << 8 | g->l4[11];
		g->flags = g->l4[13];
	}
	if (g->proto == IPPROTO_ICMP || g->proto == IPPROTO_ICMPV6) {
		g->type = g->l4[0];
		g->code = g->l4[1];
	}
}

/* The next TCP/UDP/ICMP packet on a wire; false when there is none. */
static bool next_from(int fd, bool eth, bool vnet, struct got *g)
{
	ssize_t n;
	size_t off = 0;

	for (;;) {
		memset(g, 0, offsetof(struct got, buf));
		n = recv(fd, g->buf, sizeof(g->buf), MSG_DONTWAIT);
		if (n < 0)
			return false;
		if (vnet) {
			memcpy(&g->vnet, g->buf, sizeof(g->vnet));
			off = sizeof(g->vnet);
		}
		if (eth) {
			uint16_t type = (uint16_t)(g->buf[off + 12] << 8 | g->buf[off + 13]);

			if (type != 0x0800 && type != 0x86dd)
				continue;	/* ARP */
			off += 14;
		}
		parse_ip(g, g->buf + off, (size_t)n - off);
		if (g->proto == IPPROTO_ICMPV6 && g->type >= 133)
			continue;	/* NDP */
		return true;
	}
}

static bool to_ct(struct got *g)
{
	return next_from(ct_fd, false, true, g);
}

static bool to_peer(struct got *g)
{
	return next_from(peer_fd, true, lk->vnet, g);
}

static uint64_t fctr(enum face_ctr c)
{
	return face_of(&st)->ctr[c];
}

static uint64_t fdrop(enum face_drop d)
{
	return face_of(&st)->drop[d];
}

/* ---- TCP out ---- */

/*
 * The container's SYN: held (nothing comes back) while the outer SYN goes to
 * the peer from the container's address and port. Returns the outer SYN.
 */
static void ct_syn(const char *c, const char *p, uint16_t cport, uint32_t isn, struct got *outer)
{
	uint8_t b[256];
	struct got g;

	from_ct(b, tcp_pkt(b, c, cport, p, 80, isn, 0, TCP_SYN, NULL, 0), NULL);
	ck_assert_msg(!to_ct(&g), "the container got an answer before the peer did");
	ck_assert(to_peer(outer));
	ck_assert_int_eq(outer->proto, IPPROTO_TCP);
	ck_assert_uint_eq(outer->flags, TCP_SYN);
	ck_assert_str_eq(outer->src, c);
	ck_assert_str_eq(outer->dst, p);
	ck_assert_uint_eq(outer->sport, cport);
	ck_assert_uint_eq(outer->dport, 80);
}

START_TEST(test_tcp_out_connect_and_data)
{
	const char *c = _i ? C6 : C4, *p = _i ? P6 : P4;
	uint8_t b[2048];
	struct got o, g;
	uint32_t isn = 1000, pisn = 50000, our;

	ct_syn(c, p, 40000, isn, &o);
	/* the peer answers: only now does the container get its SYN-ACK */
	from_peer(b, tcp_pkt(b, p, 80, c, 40000, pisn, o.seq + 1, TCP_SYN | TCP_ACK, NULL, 0));
	ck_assert(to_peer(&g));			/* the outer handshake's ACK */
	ck_assert_uint_eq(g.flags, TCP_ACK);
	ck_assert(to_ct(&g));
	ck_assert_uint_eq(g.flags, TCP_SYN | TCP_ACK);
	ck_assert_str_eq(g.src, p);
	ck_assert_str_eq(g.dst, c);
	ck_assert_uint_eq(g.sport, 80);
	ck_assert_uint_eq(g.dport, 40000);
	ck_assert_uint_eq(g.ack, isn + 1);
	ck_assert_uint_ne(g.seq, pisn);		/* its own ISN: nothing of the peer's crosses */
	our = g.seq;
	/* the container's ACK and 5 bytes go out on the outer connection */
	from_ct(b, tcp_pkt(b, c, 40000, p, 80, isn + 1, our + 1, TCP_ACK | TCP_PSH, "hello", 5), NULL);
	ck_assert_uint_eq(fctr(FACE_CTR_TCP_CONNECTED), 1);
	do
		ck_assert(to_peer(&g));
	while (g.l4len == 20);
	ck_assert_uint_eq(g.seq, o.seq + 1);
	ck_assert_mem_eq(g.l4 + 20, "hello", 5);
	/* 5 bytes from the peer reach the container, checksum left to the kernel */
	from_peer(b, tcp_pkt(b, p, 80, c, 40000, pisn + 1, o.seq + 6, TCP_ACK | TCP_PSH, "world", 5));
	do
		ck_assert(to_ct(&g));
	while (g.l4len == 20);
	ck_assert_uint_eq(g.seq, our + 1);
	ck_assert_mem_eq(g.l4 + 20, "world", 5);
	ck_assert(g.vnet.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM);
	ck_assert_uint_eq(g.vnet.csum_offset, 16);
	ck_assert_uint_eq(g.vnet.csum_start, _i ? 40 : 20);
	/* the peer's FIN becomes the container's, and the container's the peer's */
	from_peer(b, tcp_pkt(b, p, 80, c, 40000, pisn + 6, o.seq + 6, TCP_ACK | TCP_FIN, NULL, 0));
	do
		ck_assert(to_ct(&g));
	while (!(g.flags & TCP_FIN));
	from_ct(b, tcp_pkt(b, c, 40000, p, 80, isn + 6, our + 7, TCP_ACK | TCP_FIN, NULL, 0), NULL);
	do
		ck_assert(to_peer(&g));
	while (!(g.flags & TCP_FIN));
	ck_assert_uint_eq(fctr(FACE_CTR_TCP_CLOSED), 1);
	ck_assert_uint_eq(face_of(&st)->n_pairs, 0);
}
END_TEST

START_TEST(test_tcp_out_refused)
{
	const char *c = _i ? C6 : C4, *p = _i ? P6 : P4;
	uint8_t b[256];
	struct got o, g;

	ct_syn(c, p, 40001, 7777, &o);
	from_peer(b, tcp_pkt(b, p, 80, c, 40001, 0, o.seq + 1, TCP_RST | TCP_ACK, NULL, 0));
	ck_assert(to_ct(&g));
	ck_assert_uint_eq(g.flags & TCP_RST, TCP_RST);
	ck_assert_uint_eq(g.flags & TCP_ACK, TCP_ACK);
	ck_assert_uint_eq(g.ack, 7778);		/* acceptable in SYN-SENT: ECONNREFUSED */
	ck_assert_uint_eq(fctr(FACE_CTR_TCP_REFUSED), 1);
	ck_assert_uint_eq(face_of(&st)->n_pairs, 0);
}
END_TEST

START_TEST(test_tcp_out_icmp_unreachable)
{
	const char *c = _i ? C6 : C4, *p = _i ? P6 : P4;
	uint8_t b[512], quote[64], icmp[128];
	struct got o, g;
	size_t qlen, n;

	ct_syn(c, p, 40002, 4242, &o);
	/* the peer's host unreachable, quoting the outer SYN */
	qlen = tcp_pkt(quote, c, 40002, p, 80, o.seq, 0, TCP_SYN, NULL, 0);
	memset(icmp, 0, 8);
	icmp[0] = _i ? ICMP6_DST_UNREACH : ICMP_DEST_UNREACH;
	icmp[1] = _i ? 3 : 1;
	memcpy(icmp + 8, quote, qlen);
	n = build_ip(b, p, c, _i ? IPPROTO_ICMPV6 : IPPROTO_ICMP, icmp, 8 + qlen, 2);
	from_peer(b, n);
	ck_assert(to_ct(&g));
	ck_assert_int_eq(g.proto, _i ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	ck_assert_uint_eq(g.type, _i ? ICMP6_DST_UNREACH : ICMP_DEST_UNREACH);
	ck_assert_uint_eq(g.code, _i ? 3 : 1);	/* EHOSTUNREACH at the container */
	ck_assert_str_eq(g.dst, c);
	{
		/* it quotes the container's own SYN: its ports and ISN */
		const uint8_t *q = g.l4 + 8 + (_i ? 40 : 20);
		uint32_t seq = (uint32_t)q[4] << 24 | (uint32_t)q[5] << 16 | (uint32_t)q[6] << 8 | q[7];

		ck_assert_uint_eq((uint16_t)(q[0] << 8 | q[1]), 40002);
		ck_assert_uint_eq((uint16_t)(q[2] << 8 | q[3]), 80);
		ck_assert_uint_eq(seq, 4242);
	}
	ck_assert_uint_eq(fctr(FACE_CTR_TCP_UNREACHABLE), 1);
	ck_assert_uint_eq(face_of(&st)->n_pairs, 0);
}
END_TEST

START_TEST(test_tcp_out_timeout_and_new_isn)
{
	uint8_t b[256];
	struct got o, g;
	int i;

	ct_syn(C4, P4, 40003, 100, &o);
	/* the container retries the same SYN: absorbed, no second outer attempt */
	from_ct(b, tcp_pkt(b, C4, 40003, P4, 80, 100, 0, TCP_SYN, NULL, 0), NULL);
	ck_assert(!to_ct(&g));
	ck_assert(!to_peer(&g));
	/* a new connect() from the same port: the old attempt is replaced */
	ct_syn(C4, P4, 40003, 90000, &o);
	ck_assert_uint_eq(face_of(&st)->n_pairs, 1);
	/* silence: the outer attempt times out, the container hears nothing */
	for (i = 0; i < 300; i++)
		loop_advance_ms(lp, 1000);
	ck_assert(!to_ct(&g));
	ck_assert_uint_eq(fctr(FACE_CTR_TCP_TIMED_OUT), 1);
	ck_assert_uint_eq(face_of(&st)->n_pairs, 0);
	dpt_drain(peer_fd);
}
END_TEST

/* ---- TCP in ---- */

START_TEST(test_tcp_in)
{
	const char *c = _i ? C6 : C4, *p = _i ? P6 : P4;
	uint8_t b[256];
	struct got g, s;

	/* a SYN from the peer: a SYN to the container from the peer's own address */
	from_peer(b, tcp_pkt(b, p, 51000, c, 22, 3000, 0, TCP_SYN, NULL, 0));
	ck_assert(!to_peer(&g));		/* held: the container answers first */
	ck_assert(to_ct(&s));
	ck_assert_uint_eq(s.flags, TCP_SYN);
	ck_assert_str_eq(s.src, p);
	ck_assert_uint_eq(s.sport, 51000);
	ck_assert_uint_eq(s.dport, 22);
	ck_assert_uint_ne(s.seq, 3000);
	/* the container has no socket on 22: its RST refuses the peer */
	from_ct(b, tcp_pkt(b, c, 22, p, 51000, 0, s.seq + 1, TCP_RST | TCP_ACK, NULL, 0), NULL);
	ck_assert(to_peer(&g));
	ck_assert_uint_eq(g.flags & TCP_RST, TCP_RST);
	ck_assert_uint_eq(g.ack, 3001);
	ck_assert_uint_eq(fctr(FACE_CTR_TCP_INBOUND), 1);
	ck_assert_uint_eq(fctr(FACE_CTR_TCP_REFUSED), 1);
	/* a second SYN, answered: the peer gets its SYN-ACK only now */
	from_peer(b, tcp_pkt(b, p, 51001, c, 22, 4000, 0, TCP_SYN, NULL, 0));
	ck_assert(to_ct(&s));
	from_ct(b, tcp_pkt(b, c, 22, p, 51001, 8000, s.seq + 1, TCP_SYN | TCP_ACK, NULL, 0), NULL);
	ck_assert(to_peer(&g));
	ck_assert_uint_eq(g.flags, TCP_SYN | TCP_ACK);
	ck_assert_uint_eq(g.ack, 4001);
	ck_assert_uint_eq(face_of(&st)->n_pairs, 1);
}
END_TEST

/* ---- UDP and ICMP ---- */

START_TEST(test_udp_both_ways)
{
	const char *c = _i ? C6 : C4, *p = _i ? P6 : P4;
	uint8_t b[4096];
	struct got g;

	from_ct(b, udp_pkt(b, c, 5353, p, 53, "query", 5), NULL);
	ck_assert(to_peer(&g));
	ck_assert_int_eq(g.proto, IPPROTO_UDP);
	ck_assert_str_eq(g.src, c);
	ck_assert_uint_eq(g.sport, 5353);
	ck_assert_mem_eq(g.l4 + 8, "query", 5);
	from_peer(b, udp_pkt(b, p, 53, c, 5353, "answer", 6));
	ck_assert(to_ct(&g));
	ck_assert_str_eq(g.src, p);
	ck_assert_uint_eq(g.sport, 53);
	ck_assert_uint_eq(g.dport, 5353);
	ck_assert_mem_eq(g.l4 + 8, "answer", 6);
	/* a datagram the network opens goes to the container's own socket too */
	from_peer(b, udp_pkt(b, p, 7000, c, 6000, "hi", 2));
	ck_assert(to_ct(&g));
	ck_assert_uint_eq(g.dport, 6000);
	ck_assert_uint_eq(flows(), 2);
	/* idle flows age out */
	loop_advance_ms(lp, 61000);
	ck_assert_uint_eq(flows(), 0);
	ck_assert_uint_eq(fctr(FACE_CTR_UDP_FLOWS_EXPIRED), 2);
}
END_TEST

START_TEST(test_udp_flow_caps)
{
	struct face_udp_usage u;
	uint8_t b[256];
	unsigned int i;

	/* one source opens 5 flows to the container: it keeps its 3 newest */
	for (i = 0; i < 5; i++)
		from_peer(b, udp_pkt(b, P4, (uint16_t)(7000 + i), C4, 6000, "x", 1));
	face_udp_usage(face_of(&st), &u);
	ck_assert_uint_eq(u.max, 8);
	ck_assert_uint_eq(u.flows, 3);
	ck_assert_uint_eq(u.inbound, 3);
	ck_assert_uint_eq(u.per_source_hits, 2);
	/* the container opens 10: the total stays at the cap, the oldest go */
	for (i = 0; i < 10; i++)
		from_ct(b, udp_pkt(b, C4, (uint16_t)(20000 + i), P4, 53, "q", 1), NULL);
	face_udp_usage(face_of(&st), &u);
	ck_assert_uint_eq(u.flows, 8);
	ck_assert_uint_eq(u.cap_hits, 5);
	/* every datagram went through: a cap drops none */
	ck_assert_uint_eq(fctr(FACE_CTR_UDP_TO_INNER), 5);
	ck_assert_uint_eq(fctr(FACE_CTR_UDP_TO_OUTER), 10);
	dpt_drain(peer_fd);
	dpt_drain(ct_fd);
}
END_TEST

START_TEST(test_echo_both_ways)
{
	const char *c = _i ? C6 : C4, *p = _i ? P6 : P4;
	uint8_t req = _i ? ICMP6_ECHO_REQUEST : ICMP_ECHO, rep = _i ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY;
	uint8_t b[256];
	struct got g;

	from_ct(b, echo_pkt(b, c, p, req, 77, 1), NULL);
	ck_assert(to_peer(&g));
	ck_assert_uint_eq(g.type, req);
	ck_assert_str_eq(g.src, c);
	from_peer(b, echo_pkt(b, p, c, rep, 77, 1));
	ck_assert(to_ct(&g));
	ck_assert_uint_eq(g.type, rep);
	ck_assert_str_eq(g.src, p);
	ck_assert_mem_eq(g.l4 + 8, "pingping", 8);
	/* a reply nobody asked for goes nowhere */
	from_peer(b, echo_pkt(b, p, c, rep, 78, 1));
	ck_assert(!to_ct(&g));
	ck_assert_uint_eq(fdrop(FACE_DROP_NO_FLOW), 1);
}
END_TEST

/* ---- bad input from the container ---- */

START_TEST(test_bad_input)
{
	uint8_t b[256], u[64];
	struct virtio_net_hdr vh;
	struct got g;
	size_t n;

	n = udp_pkt(b, C4, 1, P4, 9, "x", 1);
	b[0] = 0x55;				/* version 5 */
	from_ct(b, n, NULL);
	ck_assert_uint_eq(fdrop(FACE_DROP_BAD_HEADER), 1);
	n = udp_pkt(b, C4, 1, P4, 9, "x", 1);
	b[3] += 50;				/* longer than it is */
	from_ct(b, n, NULL);
	ck_assert_uint_eq(fdrop(FACE_DROP_BAD_LENGTH), 1);
	n = udp_pkt(b, C4, 1, P4, 9, "x", 1);
	b[10] ^= 1;
	from_ct(b, n, NULL);
	ck_assert_uint_eq(fdrop(FACE_DROP_BAD_CHECKSUM), 1);
	from_ct(b, udp_pkt(b, "10.9.9.9", 1, P4, 9, "x", 1), NULL);
	ck_assert_uint_eq(fdrop(FACE_DROP_BAD_SOURCE), 1);
	from_ct(b, udp_pkt(b, C4, 1, C4, 9, "x", 1), NULL);
	ck_assert_uint_eq(fdrop(FACE_DROP_TO_SELF), 1);
	from_ct(b, udp_pkt(b, C4, 1, "224.0.0.1", 9, "x", 1), NULL);
	from_ct(b, udp_pkt(b, C4, 1, "10.0.0.255", 9, "x", 1), NULL);
	from_ct(b, udp_pkt(b, C6, 1, "ff02::1", 9, "x", 1), NULL);
	ck_assert_uint_eq(fdrop(FACE_DROP_MULTICAST), 3);
	n = udp_pkt(b, C4, 1, P4, 9, "x", 1);
	b[20 + 6] ^= 1;				/* the UDP checksum */
	from_ct(b, n, NULL);
	ck_assert_uint_eq(fdrop(FACE_DROP_BAD_CHECKSUM), 2);
	/* an unknown protocol: protocol unreachable, from where it went */
	memset(u, 0, sizeof(u));
	from_ct(b, build_ip(b, C4, P4, 253, u, 8, -1), NULL);
	ck_assert_uint_eq(fdrop(FACE_DROP_UNKNOWN_PROTOCOL), 1);
	ck_assert(to_ct(&g));
	ck_assert_uint_eq(g.type, ICMP_DEST_UNREACH);
	ck_assert_uint_eq(g.code, ICMP_PROT_UNREACH);
	ck_assert_str_eq(g.src, P4);
	/* GSO headers: a TCP GSO frame that is UDP, an unknown type, a checksum beyond the frame */
	n = udp_pkt(b, C4, 1, P4, 9, "xxxx", 4);
	memset(&vh, 0, sizeof(vh));
	vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	vh.gso_size = 2;
	vh.csum_start = 20;
	vh.csum_offset = 6;
	from_ct(b, n, &vh);
	ck_assert_uint_eq(fdrop(FACE_DROP_BAD_GSO), 1);
	vh.gso_type = 9;
	from_ct(b, n, &vh);
	vh.gso_type = VIRTIO_NET_HDR_GSO_NONE;
	vh.csum_start = 200;
	from_ct(b, n, &vh);
	ck_assert_uint_eq(tun->stats.rx_bad_vnet, 2);
	ck_assert(!to_peer(&g));		/* nothing of it left */
	ck_assert(!to_ct(&g));
}
END_TEST

START_TEST(test_udp_gso_from_container)
{
	uint8_t b[8192], data[6000];
	struct virtio_net_hdr vh;
	struct got g;
	size_t n;
	unsigned int i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	/* a UDP_SEGMENT send: 6 datagrams of 1000 in one frame, UDP length the whole */
	n = udp_pkt(b, C4, 4444, P4, 5555, data, sizeof(data));
	memset(&vh, 0, sizeof(vh));
	vh.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	vh.gso_type = VNET_GSO_UDP_L4;
	vh.gso_size = 1000;
	vh.csum_start = 20;
	vh.csum_offset = 6;
	vh.hdr_len = 28;
	from_ct(b, n, &vh);
	ck_assert_uint_eq(fctr(FACE_CTR_UDP_GSO_FROM_INNER), 1);
	ck_assert(to_peer(&g));
	/* hw: one UDP GSO frame again on the outer link */
	ck_assert_uint_eq(g.vnet.gso_type, VNET_GSO_UDP_L4);
	ck_assert_uint_eq(g.vnet.gso_size, 1000);
	ck_assert_uint_eq(g.l4len, 8 + sizeof(data));
	ck_assert_mem_eq(g.l4 + 8, data, sizeof(data));
	ck_assert(!to_peer(&g));
}
END_TEST

/* What the TUN link handed up, and when its queue had last been found empty. */
static uint64_t seen_after[8];
static unsigned int n_seen;

static void record_after(void *ctx, struct link *l, struct pkt *p)
{
	(void)ctx;
	(void)l;
	if (n_seen < 8)
		seen_after[n_seen++] = p->rx_after_us;
}

/* Write @n datagrams into the container's side of the TUN without reading them. */
static void ct_write(unsigned int n)
{
	struct virtio_net_hdr z = { 0 };
	uint8_t b[128];
	size_t len = udp_pkt(b, C4, 1, P4, 9, "abcd", 4);
	struct iovec iov[2] = { { &z, sizeof(z) }, { b, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

	while (n--)
		ck_assert_int_eq(sendmsg(ct_fd, &mh, 0), (ssize_t)(sizeof(z) + len));
}

/*
 * Each frame the TUN reads says when a read last found its queue empty
 * (pkt->rx_after_us, what the face's pacer stamps a backlog from): 0 before
 * any, then the time of the read that emptied it, not of later reads that
 * found frames.
 */
START_TEST(test_tun_reads_say_when_queue_was_empty)
{
	link_rx_fn fn = tun->rx_fn;
	void *ctx = tun->rx_ctx;
	uint64_t t1, t2;

	tun->rx_fn = record_after;
	tun->rx_ctx = NULL;
	n_seen = 0;
	ct_write(1);
	t1 = loop_now_us(lp);
	link_rx(&tun->ch[0]);		/* reads it, then finds the queue empty */
	ck_assert_uint_eq(n_seen, 1);
	ck_assert_uint_eq(seen_after[0], 0);
	ck_assert_uint_eq(tun->ch[0].drained_us, t1);
	loop_advance_ms(lp, 30);		/* a stall: three wait meanwhile */
	ct_write(3);
	t2 = loop_now_us(lp);
	link_rx(&tun->ch[0]);
	ck_assert_uint_eq(n_seen, 4);
	ck_assert_uint_eq(seen_after[1], t1);	/* they came after the queue was empty at t1 */
	ck_assert_uint_eq(seen_after[2], t1);
	ck_assert_uint_eq(seen_after[3], t1);
	ck_assert_uint_eq(tun->ch[0].drained_us, t2);
	tun->rx_fn = fn;
	tun->rx_ctx = ctx;
}
END_TEST

static Suite *face_suite(void)
{
	Suite *s = suite_create("datapath_face");
	TCase *tc = tcase_create("face");
	TCase *hw = tcase_create("face_hw");
	TCase *caps = tcase_create("face_caps");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_tcp_out_connect_and_data, 0, 2);
	tcase_add_loop_test(tc, test_tcp_out_refused, 0, 2);
	tcase_add_loop_test(tc, test_tcp_out_icmp_unreachable, 0, 2);
	tcase_add_test(tc, test_tcp_out_timeout_and_new_isn);
	tcase_add_loop_test(tc, test_tcp_in, 0, 2);
	tcase_add_loop_test(tc, test_udp_both_ways, 0, 2);
	tcase_add_loop_test(tc, test_echo_both_ways, 0, 2);
	tcase_add_test(tc, test_bad_input);
	tcase_add_test(tc, test_tun_reads_say_when_queue_was_empty);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(hw, setup_hw, teardown);
	tcase_add_test(hw, test_udp_gso_from_container);
	tcase_add_loop_test(hw, test_tcp_out_connect_and_data, 0, 2);
	suite_add_tcase(s, hw);
	tcase_add_checked_fixture(caps, setup_caps, teardown);
	tcase_add_test(caps, test_udp_flow_caps);
	suite_add_tcase(s, caps);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(face_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
