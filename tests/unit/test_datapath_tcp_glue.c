// SPDX-License-Identifier: MIT
/*
 * test_datapath_tcp_glue.c - the TCP engine joined to the stack (tcp_glue.c)
 *
 * Same fixture as test_datapath_stack.c: a stack on a fake-clock loop with
 * one link whose channel is one end of a unix SOCK_DGRAM socketpair. The test
 * plays the peer with hand-built Ethernet/IPv4/IPv6/TCP frames (checksums from
 * a separate reference) and checks every frame the stack sends: header
 * fields, options, and the TCP checksum recomputed here, over a payload the
 * stack sent as a borrowed tail. Drops are checked by reason; time moves with
 * loop_advance_ms() so the engine's timers run through the loop's wheel.
 */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/net/net.h"
#include "datapath/wire/proto_hdr.h"
#include "datapath/link/vnet.h"
#include "datapath/net/tcp_glue.h"
#include "tests/unit/datapath_testlib.h"


static struct loop *lp;
static enum proto_gso_mode setup_mode = PROTO_GSO_SW;
static struct stack st;
static struct link *lk;
static int peer_fd = -1;
static struct in_addr a_us, a_peer;
static struct in6_addr a6_us, a6_peer;

/* ---- reference checksum and frame builders ---- */

struct seg {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;
	const uint8_t *opts;
	size_t optlen;
	const void *data;
	size_t len;
};

/* An Ethernet + IPv4/IPv6 + TCP frame from the peer; returns its length. */
static size_t build_tcp(uint8_t *f, int family, const struct seg *s, bool bad_csum)
{
	size_t o = 14, hl = 20 + s->optlen, tl = hl + s->len;
	const void *src = family == AF_INET ? (const void *)&a_peer : (const void *)&a6_peer;
	const void *dst = family == AF_INET ? (const void *)&a_us : (const void *)&a6_us;
	uint8_t *t;
	uint16_t c;

	memcpy(f, dpt_our_mac, 6);
	memcpy(f + 6, dpt_peer_mac, 6);
	f[12] = family == AF_INET ? 0x08 : 0x86;
	f[13] = family == AF_INET ? 0x00 : 0xdd;
	if (family == AF_INET) {
		memset(f + o, 0, 20);
		f[o] = 0x45;
		f[o + 2] = (20 + tl) >> 8;
		f[o + 3] = (20 + tl) & 0xff;
		f[o + 8] = 64;
		f[o + 9] = IPPROTO_TCP;
		memcpy(f + o + 12, src, 4);
		memcpy(f + o + 16, dst, 4);
		c = dpt_ref_sum(f + o, 20, 0);
		f[o + 10] = c >> 8;
		f[o + 11] = c & 0xff;
		o += 20;
	} else {
		memset(f + o, 0, 40);
		f[o] = 0x60;
		f[o + 4] = tl >> 8;
		f[o + 5] = tl & 0xff;
		f[o + 6] = IPPROTO_TCP;
		f[o + 7] = 64;
		memcpy(f + o + 8, src, 16);
		memcpy(f + o + 24, dst, 16);
		o += 40;
	}
	t = f + o;
	memset(t, 0, 20);
	t[0] = s->sport >> 8;
	t[1] = s->sport & 0xff;
	t[2] = s->dport >> 8;
	t[3] = s->dport & 0xff;
	t[4] = s->seq >> 24; t[5] = s->seq >> 16; t[6] = s->seq >> 8; t[7] = s->seq;
	t[8] = s->ack >> 24; t[9] = s->ack >> 16; t[10] = s->ack >> 8; t[11] = s->ack;
	t[12] = (uint8_t)((hl / 4) << 4);
	t[13] = s->flags;
	t[14] = s->wnd >> 8;
	t[15] = s->wnd & 0xff;
	if (s->optlen)
		memcpy(t + 20, s->opts, s->optlen);
	if (s->len)
		memcpy(t + hl, s->data, s->len);
	c = dpt_ref_sum(t, tl, dpt_ref_pseudo(family, src, dst, IPPROTO_TCP, tl));
	if (bad_csum)
		c ^= 0x0101;
	t[16] = c >> 8;
	t[17] = c & 0xff;
	return o + tl;
}

/* ---- I/O through the link ---- */

static void inject(const void *frame, size_t len)
{
	if (lk->vnet) {			/* hw mode: a zero vnet header first */
		struct virtio_net_hdr vh = { 0 };
		struct iovec iov[2] = { { &vh, sizeof(vh) }, { (void *)frame, len } };
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

		ck_assert_int_eq(sendmsg(peer_fd, &mh, 0), (ssize_t)(sizeof(vh) + len));
		link_rx(&lk->ch[0]);
		loop_advance_ms(lp, 1);
		return;
	}
	ck_assert_int_eq(send(peer_fd, frame, len, 0), (ssize_t)len);
	link_rx(&lk->ch[0]);
	loop_advance_ms(lp, 1);		/* the turn end: flush, tx_done, timers */
}

/* What the stack sent, parsed, with its TCP checksum verified by reference. */
struct out_seg {
	int family;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;
	size_t hl, len;
	uint8_t opts[40];
	uint8_t data[65536];
	uint8_t ip_flags;	/* IPv4: DF/MF byte */
	uint16_t ip_id;		/* IPv4 identification */
	uint16_t csum_field;	/* the TCP checksum as sent */
	struct virtio_net_hdr vnet;	/* hw mode: the header the frame came with */
};

/*
 * The next TCP frame the stack sent. In hw mode the frame starts with a
 * virtio_net_hdr; with NEEDS_CSUM the checksum field must hold the folded,
 * not inverted, pseudo-header sum (docs/gso.md), and the kernel's completion
 * is simulated (sum from csum_start on, inverted, stored) before the full
 * checksum is verified like any other.
 */
static bool next_tcp(struct out_seg *o)
{
	static uint8_t buf[70000];
	size_t vl = lk->vnet ? sizeof(struct virtio_net_hdr) : 0;
	struct virtio_net_hdr vh = { 0 };
	uint8_t *f = buf + vl;
	ssize_t n;
	size_t l3, tl;
	uint8_t *t;
	uint32_t ph;

	for (;;) {
		n = recv(peer_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			return false;
		ck_assert_int_ge(n, (ssize_t)(vl + 14));
		memcpy(&vh, buf, vl);
		n -= (ssize_t)vl;
		if (f[12] == 0x08 && f[13] == 0x00 && f[14 + 9] == IPPROTO_TCP)
			break;
		if (f[12] == 0x86 && f[13] == 0xdd && f[14 + 6] == IPPROTO_TCP)
			break;
	}
	memset(o, 0, sizeof(*o));
	o->vnet = vh;
	o->family = f[12] == 0x08 ? AF_INET : AF_INET6;
	l3 = o->family == AF_INET ? 20 : 40;
	if (o->family == AF_INET) {
		tl = (size_t)(f[16] << 8 | f[17]) - 20;
		ck_assert_uint_eq(dpt_ref_sum(f + 14, 20, 0), 0);
		o->ip_flags = f[14 + 6];
		o->ip_id = (uint16_t)(f[14 + 4] << 8 | f[14 + 5]);
	} else {
		tl = (size_t)(f[18] << 8 | f[19]);
	}
	ck_assert_uint_eq(14 + l3 + tl, (size_t)n);
	t = f + 14 + l3;
	ph = dpt_ref_pseudo(o->family, f + 14 + (o->family == AF_INET ? 12 : 8),
			    f + 14 + (o->family == AF_INET ? 16 : 24), IPPROTO_TCP, tl);
	o->csum_field = (uint16_t)(t[16] << 8 | t[17]);
	if (vh.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		uint16_t c;

		ck_assert_uint_eq(vh.csum_start, 14 + l3);
		ck_assert_uint_eq(vh.csum_offset, 16);
		ck_assert_uint_eq(o->csum_field, (uint16_t)~dpt_ref_sum(t, 0, ph));
		c = dpt_ref_sum(t, tl, 0);
		t[16] = c >> 8;
		t[17] = c & 0xff;
	}
	ck_assert_msg(dpt_ref_sum(t, tl, ph) == 0, "bad TCP checksum on a segment of %zu bytes", tl);
	o->sport = t[0] << 8 | t[1];
	o->dport = t[2] << 8 | t[3];
	o->seq = (uint32_t)t[4] << 24 | t[5] << 16 | t[6] << 8 | t[7];
	o->ack = (uint32_t)t[8] << 24 | t[9] << 16 | t[10] << 8 | t[11];
	o->hl = (t[12] >> 4) * 4;
	o->flags = t[13];
	o->wnd = t[14] << 8 | t[15];
	memcpy(o->opts, t + 20, o->hl - 20);
	o->len = tl - o->hl;
	ck_assert_uint_le(o->len, sizeof(o->data));
	memcpy(o->data, t + o->hl, o->len);
	return true;
}

/* The MSS option of a SYN, 0 if none. */
static unsigned int opt_mss(const struct out_seg *o)
{
	size_t i = 0;

	while (i < o->hl - 20) {
		if (o->opts[i] == 0)
			break;
		if (o->opts[i] == 1) {
			i++;
			continue;
		}
		if (o->opts[i] == 2)
			return o->opts[i + 2] << 8 | o->opts[i + 3];
		i += o->opts[i + 1] ? o->opts[i + 1] : 1;
	}
	return 0;
}

static void setup(void)
{
	const struct dpt_link_opts o = {
		.mode = setup_mode, .addr4 = "10.0.0.2", .addr6 = "fd00::2", .nodad = true,
		.gso_max_size = 65536, .gso_max_segs = 65535,
	};

	inet_pton(AF_INET, "10.0.0.2", &a_us);
	inet_pton(AF_INET, "10.0.0.1", &a_peer);
	inet_pton(AF_INET6, "fd00::2", &a6_us);
	inet_pton(AF_INET6, "fd00::1", &a6_peer);
	lk = dpt_stack_up(&lp, &st, &o, &peer_fd);
	ck_assert_int_eq(stack_start(&st), 0);
	dpt_neigh_add(&st, lk, "10.0.0.1");
	dpt_neigh_add(&st, lk, "fd00::1");
	loop_advance_ms(lp, 1);
	dpt_drain(peer_fd);
}

static void teardown(void)
{
	dpt_stack_down(lp, &st, peer_fd);
}

/* ---- a listener that keeps what it accepts ---- */

static struct tcp_conn *accepted;
static int n_readable, n_reset;

static void on_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	(void)c;
	(void)user;
	(void)err;
	if (ev == TCP_EV_READABLE)
		n_readable++;
	if (ev == TCP_EV_RESET)
		n_reset++;
}

static int on_accept(struct tcp_listener *l, void *user, struct tcp_conn *c)
{
	(void)l;
	(void)user;
	accepted = c;
	return 0;
}

static struct tcp_listener *listen_on(int family, uint16_t port)
{
	struct tcp_endpoint ep = { .addr = { .family = family }, .port = port };
	struct tcp_conn_opts o;
	struct tcp_listener *l;

	tcp_glue_conn_opts(&st, family, NULL, &o);
	ck_assert_int_eq(tcp_listen(tcp_glue_stack(&st), &ep, 16, &o, on_accept, on_event, NULL, &l), 0);
	return l;
}

/* Handshake from the peer (ISN 1000, no options but MSS); returns our ISN. */
static uint32_t handshake(int family, uint16_t port)
{
	static const uint8_t mss[4] = { 2, 4, 0x05, 0xb4 };
	struct seg s = { .sport = 40000, .dport = port, .seq = 1000, .flags = TCP_SYN, .wnd = 65535,
			 .opts = mss, .optlen = 4 };
	struct out_seg o;
	uint8_t f[2048];
	uint32_t isn;

	inject(f, build_tcp(f, family, &s, false));
	ck_assert(next_tcp(&o));
	ck_assert_uint_eq(o.family, family);
	ck_assert_uint_eq(o.flags, TCP_SYN | TCP_ACK);
	ck_assert_uint_eq(o.sport, port);
	ck_assert_uint_eq(o.dport, 40000);
	ck_assert_uint_eq(o.ack, 1001);
	ck_assert_uint_eq(opt_mss(&o), family == AF_INET ? 1460 : 1440);	/* MTU 1500 */
	if (family == AF_INET)
		ck_assert_uint_eq(o.ip_flags & 0x40, 0x40);			/* DF */
	isn = o.seq;
	s.flags = TCP_ACK;
	s.seq = 1001;
	s.ack = isn + 1;
	s.optlen = 0;
	inject(f, build_tcp(f, family, &s, false));
	ck_assert_ptr_nonnull(accepted);
	return isn;
}

/* ---- tests ---- */

START_TEST(test_handshake_and_data_both_ways)
{
	int family = _i ? AF_INET6 : AF_INET;
	struct tcp_listener *l = listen_on(family, 80);
	uint8_t f[4096], payload[3000], got[3000];
	struct seg s = { .sport = 40000, .dport = 80, .seq = 1001, .flags = TCP_ACK | TCP_PSH,
			 .wnd = 65535 };
	static struct out_seg o;
	size_t have = 0;
	uint32_t isn;
	unsigned int i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	isn = handshake(family, 80);
	s.ack = isn + 1;
	s.data = "hello";
	s.len = 5;
	inject(f, build_tcp(f, family, &s, false));
	ck_assert_int_eq(n_readable, 1);
	ck_assert_int_eq(tcp_recv(accepted, got, sizeof(got), tcp_glue_now_us(&st)), 5);
	ck_assert_mem_eq(got, "hello", 5);

	/* our data: borrowed from the send ring, cut to the MSS, checksummed */
	ck_assert_int_eq(tcp_send(accepted, payload, sizeof(payload), tcp_glue_now_us(&st)),
			 (ssize_t)sizeof(payload));
	loop_advance_ms(lp, 1);
	while (next_tcp(&o)) {
		if (!o.len)
			continue;
		ck_assert_uint_eq(o.seq, isn + 1 + have);
		/* hw mode: a GSO frame the kernel cuts at gso_size */
		ck_assert_uint_le(o.vnet.gso_type ? o.vnet.gso_size : o.len,
				  family == AF_INET ? 1460 : 1440);
		ck_assert_uint_le(have + o.len, sizeof(got));
		memcpy(got + have, o.data, o.len);
		have += o.len;
	}
	ck_assert_uint_eq(have, sizeof(payload));
	ck_assert_mem_eq(got, payload, sizeof(payload));
	tcp_abort(accepted, tcp_glue_now_us(&st));
	tcp_listener_close(l);
}
END_TEST

START_TEST(test_bad_segments_dropped_by_reason)
{
	struct tcp_listener *l = listen_on(AF_INET, 80);
	struct seg s = { .sport = 40000, .dport = 80, .seq = 1, .flags = TCP_SYN, .wnd = 1000 };
	struct out_seg o;
	uint8_t f[2048];
	size_t n;

	inject(f, build_tcp(f, AF_INET, &s, true));
	ck_assert_uint_eq(st.drop[DROP_BAD_CHECKSUM], 1);
	ck_assert(!next_tcp(&o));

	n = build_tcp(f, AF_INET, &s, false);
	f[14 + 20 + 12] = 0x40;				/* data offset 4 words */
	inject(f, n);
	ck_assert_uint_eq(st.drop[DROP_BAD_HEADER], 1);

	n = build_tcp(f, AF_INET, &s, false);
	f[14 + 20 + 12] = 0xf0;				/* 60-byte header in 20 */
	inject(f, n);
	ck_assert_uint_eq(st.drop[DROP_TRUNCATED], 1);

	n = build_tcp(f, AF_INET, &s, false);		/* 10 bytes of TCP only */
	f[16] = 0;
	f[17] = 30;
	f[24] = f[25] = 0;
	{
		uint16_t c = dpt_ref_sum(f + 14, 20, 0);

		f[24] = c >> 8;
		f[25] = c & 0xff;
	}
	inject(f, 14 + 30);
	ck_assert_uint_eq(st.drop[DROP_TRUNCATED], 2);
	ck_assert(!next_tcp(&o));
	ck_assert_uint_eq(st.ctr[CTR_TCP_IN], 4);
	tcp_listener_close(l);
}
END_TEST

START_TEST(test_closed_port_gets_rst)
{
	struct seg s = { .sport = 40000, .dport = 81, .seq = 5000, .flags = TCP_SYN, .wnd = 1000 };
	struct out_seg o;
	uint8_t f[2048];

	inject(f, build_tcp(f, AF_INET, &s, false));
	ck_assert(next_tcp(&o));
	ck_assert_uint_eq(o.flags, TCP_RST | TCP_ACK);
	ck_assert_uint_eq(o.ack, 5001);
	ck_assert_uint_eq(o.sport, 81);
}
END_TEST

START_TEST(test_timers_run_from_the_loop)
{
	struct tcp_listener *l = listen_on(AF_INET, 80);
	struct seg s = { .sport = 40000, .dport = 80, .seq = 1000, .flags = TCP_SYN, .wnd = 65535 };
	struct out_seg o;
	uint8_t f[2048];
	uint32_t isn;

	inject(f, build_tcp(f, AF_INET, &s, false));
	ck_assert(next_tcp(&o));
	isn = o.seq;
	loop_advance_ms(lp, 900);
	ck_assert(!next_tcp(&o));
	loop_advance_ms(lp, 200);			/* initial RTO 1 s: SYN-ACK again */
	ck_assert(next_tcp(&o));
	ck_assert_uint_eq(o.flags, TCP_SYN | TCP_ACK);
	ck_assert_uint_eq(o.seq, isn);
	tcp_listener_close(l);
}
END_TEST

START_TEST(test_frag_needed_lowers_mss_and_splits)
{
	struct tcp_listener *l = listen_on(AF_INET, 80);
	uint8_t f[2048], payload[4000], ic[8 + 28];
	struct out_seg o;
	uint32_t isn;
	size_t have = 0;
	unsigned int i;
	uint16_t c;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13);
	isn = handshake(AF_INET, 80);
	/* ICMP fragmentation needed, MTU 1200, quoting our segment 10.0.0.2:80 -> 10.0.0.1:40000 */
	memset(ic, 0, sizeof(ic));
	ic[0] = 3;
	ic[1] = 4;
	ic[6] = 1200 >> 8;
	ic[7] = 1200 & 0xff;
	ic[8] = 0x45;
	ic[8 + 9] = IPPROTO_TCP;
	memcpy(ic + 8 + 12, &a_us, 4);
	memcpy(ic + 8 + 16, &a_peer, 4);
	ic[28] = 0;
	ic[29] = 80;
	ic[30] = 40000 >> 8;
	ic[31] = 40000 & 0xff;
	c = dpt_ref_sum(ic, sizeof(ic), 0);
	ic[2] = c >> 8;
	ic[3] = c & 0xff;
	memcpy(f, dpt_our_mac, 6);
	memcpy(f + 6, dpt_peer_mac, 6);
	f[12] = 0x08;
	f[13] = 0;
	memset(f + 14, 0, 20);
	f[14] = 0x45;
	f[16] = 0;
	f[17] = 20 + sizeof(ic);
	f[14 + 8] = 64;
	f[14 + 9] = IPPROTO_ICMP;
	memcpy(f + 14 + 12, &a_peer, 4);
	memcpy(f + 14 + 16, &a_us, 4);
	c = dpt_ref_sum(f + 14, 20, 0);
	f[24] = c >> 8;
	f[25] = c & 0xff;
	memcpy(f + 34, ic, sizeof(ic));
	inject(f, 34 + sizeof(ic));

	ck_assert_int_eq(tcp_send(accepted, payload, sizeof(payload), tcp_glue_now_us(&st)),
			 (ssize_t)sizeof(payload));
	loop_advance_ms(lp, 1);
	while (next_tcp(&o)) {
		if (!o.len)
			continue;
		ck_assert_uint_eq(o.seq, isn + 1 + have);
		ck_assert_uint_le(o.len, 1160);
		ck_assert_mem_eq(o.data, payload + have, o.len);
		have += o.len;
	}
	ck_assert_uint_eq(have, sizeof(payload));
	tcp_abort(accepted, tcp_glue_now_us(&st));
	tcp_listener_close(l);
}
END_TEST

/* ACK everything up to @ack from the peer (port 80 <- 40000). */
static void peer_ack(int family, uint32_t ack)
{
	struct seg s = { .sport = 40000, .dport = 80, .seq = 1001, .ack = ack, .flags = TCP_ACK,
			 .wnd = 65535 };
	uint8_t f[128];

	inject(f, build_tcp(f, family, &s, false));
}

START_TEST(test_gso_bytes_per_mode)
{
	static struct link l;

	memset(&l, 0, sizeof(l));
	l.l2_len = ETH_HLEN;
	l.gso_mode = PROTO_GSO_OFF;
	l.gso_max_size = 65536;
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1460), 1460);
	ck_assert_uint_eq(vnet_tcp_gso_bytes(NULL, AF_INET, 1460), 1460);
	l.gso_mode = PROTO_GSO_HW;
	/* frame <= 65535 with Ethernet, IP and a 60-byte TCP header */
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1460), 65535 - 14 - 20 - 60);
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET6, 1440), 65535 - 14 - 40 - 60);
	l.gso_mode = PROTO_GSO_SW;
	l.gso_max_size = 200000;		/* BIG TCP sizes: still 64 KiB here */
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1460), 65535 - 14 - 20 - 60);
	l.gso_max_size = 16000;			/* below gso_max_size, not at it */
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1460), 15999 - 14 - 20 - 60);
	l.gso_max_segs = 4;
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1460), 4 * 1460);
	l.gso_max_size = 1000;			/* smaller than one segment: one MSS */
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1460), 1460);
	/*
	 * BIG TCP: netsetup's IPv4 frame limit over 64 KiB (gso_ipv4_max_size)
	 * counts for IPv4 in hw mode only, on a link with vnet headers
	 */
	l.gso_max_segs = 0;
	l.gso_max_size = 65535;
	l.gso_ipv4_max_size = 184999;
	l.gso_mode = PROTO_GSO_HW;
	l.vnet = true;
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1448), 184999 - 14 - 20 - 60);
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET6, 1428), 65534 - 14 - 40 - 60);
	l.gso_max_segs = 100;
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1448), 100 * 1448);
	l.gso_max_segs = 0;
	l.gso_ipv4_max_size = 1000000;		/* at most the kernel's GSO_MAX_SIZE */
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1448), 524280 - 14 - 20 - 60);
	l.gso_ipv4_max_size = 65535;		/* not raised: 64 KiB */
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1448), 65534 - 14 - 20 - 60);
	l.gso_ipv4_max_size = 184999;
	l.gso_mode = PROTO_GSO_SW;		/* sw cuts to the MSS anyway */
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1448), 65534 - 14 - 20 - 60);
	l.gso_mode = PROTO_GSO_HW;
	l.vnet = false;
	ck_assert_uint_eq(vnet_tcp_gso_bytes(&l, AF_INET, 1448), 65534 - 14 - 20 - 60);
}
END_TEST

/*
 * sw mode: one large segment from the engine leaves as MSS pieces, each with
 * its own seq, IP id and valid checksum, PSH only on the last, the payload
 * borrowed (no copy), all in one sendmmsg.
 */
START_TEST(test_sw_split_pieces)
{
	int family = _i ? AF_INET6 : AF_INET;
	uint32_t mss = family == AF_INET ? 1460 : 1440;
	struct tcp_listener *l = listen_on(family, 80);
	static uint8_t payload[10000];
	static struct out_seg o;
	uint64_t sys0, frames0, split0;
	unsigned int i, n = 0;
	uint16_t id = 0;
	size_t have = 0;
	uint32_t isn;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 31 + 7);
	isn = handshake(family, 80);
	sys0 = lk->stats.tx_syscalls;
	frames0 = lk->stats.tx_frames;
	split0 = lk->stats.tx_sw_segments;
	ck_assert_int_eq(tcp_send(accepted, payload, sizeof(payload), tcp_glue_now_us(&st)),
			 (ssize_t)sizeof(payload));
	loop_advance_ms(lp, 1);
	while (next_tcp(&o)) {
		ck_assert_uint_eq(o.vnet.gso_type, 0);
		ck_assert_uint_eq(o.seq, isn + 1 + have);
		ck_assert_uint_le(o.len, mss);
		ck_assert_mem_eq(o.data, payload + have, o.len);
		if (family == AF_INET && n)
			ck_assert_uint_eq(o.ip_id, (uint16_t)(id + 1));
		id = o.ip_id;
		have += o.len;
		n++;
		ck_assert_uint_eq(!!(o.flags & TCP_PSH), have == sizeof(payload));
	}
	ck_assert_uint_eq(have, sizeof(payload));
	ck_assert_uint_eq(n, (sizeof(payload) + mss - 1) / mss);
	ck_assert_uint_eq(lk->stats.tx_sw_segments - split0, n);
	ck_assert_uint_eq(lk->stats.tx_frames - frames0, n);
	ck_assert_uint_eq(lk->stats.tx_syscalls - sys0, 1);
	ck_assert_uint_eq(lk->stats.tx_gso_frames, 0);
	ck_assert_uint_le(lk->stats.tx_max_frame, 1514);
	tcp_abort(accepted, tcp_glue_now_us(&st));
	tcp_listener_close(l);
}
END_TEST

/*
 * sw mode across the send ring's wrap (256 KiB at first): 360000 bytes
 * offered in 30000-byte writes and acknowledged as they arrive, so large
 * segments straddle the wrap; every piece has the right seq, bytes and
 * checksum (next_tcp() checks it) and none exceeds the MSS.
 */
START_TEST(test_sw_split_ring_wrap)
{
	int family = _i ? AF_INET6 : AF_INET;
	uint32_t mss = family == AF_INET ? 1460 : 1440;
	struct tcp_listener *l = listen_on(family, 80);
	static uint8_t payload[12 * 30000];
	static struct out_seg o;
	size_t have = 0, sent = 0;
	unsigned int i, turns = 0;
	uint32_t isn;
	ssize_t n;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 13 + i / 251);
	isn = handshake(family, 80);
	while (have < sizeof(payload)) {
		ck_assert_uint_lt(turns++, 5000);
		if (sent < sizeof(payload)) {
			n = tcp_send(accepted, payload + sent,
				     sizeof(payload) - sent < 30000 ? sizeof(payload) - sent : 30000,
				     tcp_glue_now_us(&st));
			ck_assert_int_ge(n, 0);
			sent += (size_t)n;
		}
		loop_advance_ms(lp, 1);
		while (next_tcp(&o)) {
			if (!o.len)
				continue;
			ck_assert_uint_eq(o.seq, isn + 1 + have);
			ck_assert_uint_le(o.len, mss);
			ck_assert_mem_eq(o.data, payload + have, o.len);
			have += o.len;
		}
		peer_ack(family, isn + 1 + (uint32_t)have);
	}
	ck_assert_uint_le(lk->stats.tx_max_frame, 1514);
	ck_assert_uint_eq(lk->stats.tx_gso_frames, 0);
	tcp_abort(accepted, tcp_glue_now_us(&st));
	tcp_listener_close(l);
}
END_TEST

/*
 * hw mode: one frame for the large segment with the virtio_net_hdr of
 * docs/gso.md's table, the partial checksum checked in next_tcp(); the next
 * frame's IPv4 id skips the ids the kernel gave the segments; a
 * retransmission is one MSS and not a GSO frame.
 */
START_TEST(test_hw_gso_frame)
{
	int family = _i ? AF_INET6 : AF_INET;
	uint32_t mss = family == AF_INET ? 1460 : 1440, l3 = family == AF_INET ? 20 : 40;
	struct tcp_listener *l = listen_on(family, 80);
	static uint8_t payload[13000];
	static struct out_seg o;
	uint16_t id;
	uint32_t isn;
	unsigned int i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 17 + 1);
	isn = handshake(family, 80);
	ck_assert_uint_eq(o.vnet.gso_type, 0);
	ck_assert_int_eq(tcp_send(accepted, payload, 10000, tcp_glue_now_us(&st)), 10000);
	loop_advance_ms(lp, 1);
	ck_assert(next_tcp(&o));
	ck_assert_uint_eq(o.vnet.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
	ck_assert_uint_eq(o.vnet.gso_type, family == AF_INET ? VIRTIO_NET_HDR_GSO_TCPV4 :
							       VIRTIO_NET_HDR_GSO_TCPV6);
	ck_assert_uint_eq(o.vnet.gso_size, mss);
	ck_assert_uint_eq(o.vnet.csum_start, 14 + l3);
	ck_assert_uint_eq(o.vnet.csum_offset, 16);
	ck_assert_uint_eq(o.vnet.hdr_len, 14 + l3 + o.hl);
	ck_assert_uint_eq(o.seq, isn + 1);
	ck_assert_uint_eq(o.len, 10000);
	ck_assert_uint_eq(o.flags, TCP_ACK | TCP_PSH);
	ck_assert_mem_eq(o.data, payload, 10000);
	ck_assert(!next_tcp(&o));
	ck_assert_uint_eq(lk->stats.tx_gso_frames, 1);
	ck_assert_uint_eq(lk->stats.tx_over_mtu, 1);
	id = o.ip_id;

	/* the next frame, a single segment: full checksum, no offload request */
	peer_ack(family, isn + 1 + 10000);
	ck_assert_int_eq(tcp_send(accepted, payload + 10000, 1000, tcp_glue_now_us(&st)), 1000);
	loop_advance_ms(lp, 1);
	ck_assert(next_tcp(&o));
	ck_assert_uint_eq(o.vnet.flags, 0);
	ck_assert_uint_eq(o.vnet.gso_type, 0);
	ck_assert_uint_eq(o.len, 1000);
	if (family == AF_INET)
		ck_assert_uint_eq(o.ip_id, (uint16_t)(id + 7));	/* 10000 / 1460: 7 segments */

	/* unacknowledged: the RTO resends one MSS at most, never a GSO frame */
	ck_assert_int_eq(tcp_send(accepted, payload + 11000, 2000, tcp_glue_now_us(&st)), 2000);
	loop_advance_ms(lp, 1);
	while (next_tcp(&o))
		;
	loop_advance_ms(lp, 1500);
	ck_assert(next_tcp(&o));
	ck_assert_uint_eq(o.seq, isn + 1 + 10000);
	ck_assert_uint_le(o.len, mss);
	ck_assert_uint_eq(o.vnet.gso_type, 0);
	tcp_abort(accepted, tcp_glue_now_us(&st));
	tcp_listener_close(l);
}
END_TEST

static void reset_globals(void)
{
	accepted = NULL;
	n_readable = n_reset = 0;
	setup_mode = PROTO_GSO_SW;
	setup();
}

static void reset_globals_hw(void)
{
	accepted = NULL;
	n_readable = n_reset = 0;
	setup_mode = PROTO_GSO_HW;
	setup();
}

static Suite *glue_suite(void)
{
	Suite *s = suite_create("datapath_tcp_glue");
	TCase *tc = tcase_create("glue");

	tcase_add_checked_fixture(tc, reset_globals, teardown);
	tcase_add_loop_test(tc, test_handshake_and_data_both_ways, 0, 2);
	tcase_add_test(tc, test_bad_segments_dropped_by_reason);
	tcase_add_test(tc, test_closed_port_gets_rst);
	tcase_add_test(tc, test_timers_run_from_the_loop);
	tcase_add_test(tc, test_frag_needed_lowers_mss_and_splits);
	tcase_add_test(tc, test_gso_bytes_per_mode);
	tcase_add_loop_test(tc, test_sw_split_pieces, 0, 2);
	tcase_add_loop_test(tc, test_sw_split_ring_wrap, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("hw");
	tcase_add_checked_fixture(tc, reset_globals_hw, teardown);
	tcase_add_loop_test(tc, test_handshake_and_data_both_ways, 0, 2);
	tcase_add_loop_test(tc, test_hw_gso_frame, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(glue_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
