// SPDX-License-Identifier: MIT
/*
 * test_datapath_udp_gso.c - UDP GSO on transmit (udp_sendto_gso(), docs/gso.md)
 *
 * Same fixture as test_datapath_tcp_glue.c: a stack on a fake-clock loop with
 * one link whose channel is one end of a unix SOCK_DGRAM socketpair, so each
 * frame the link sends arrives whole, [vnet header (hw)][frame]. The tests
 * read every frame and check it against references of their own:
 *  - hw: every virtio_net_hdr field; the UDP length field (the whole L4
 *    length) and the partial checksum (the folded pseudo-header sum over it);
 *    then the kernel's segmentation is replayed (__udp_gso_segment(): the
 *    length swapped in the field and in the sum, the sum from csum_start
 *    finished) and every resulting datagram's checksum verified from scratch;
 *    the IPv4 ids skipped; the 128-segment, 65535-byte, gso_max_size and
 *    gso_max_segs limits; a short last segment; one datagram or datagrams
 *    above the MTU never in a GSO frame;
 *  - sw: one frame per datagram, its own length and full checksum, its
 *    payload slice, all in one sendmmsg(); off: one frame per syscall.
 */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "datapath/net/net.h"
#include "tests/unit/datapath_testlib.h"


static struct loop *lp;
static enum proto_gso_mode setup_mode = PROTO_GSO_HW;
static struct stack st;
static struct link *lk;
static struct udp_sock *us;
static int peer_fd = -1;
static struct in_addr a_us, a_peer;
static struct in6_addr a6_us, a6_peer;
static uint8_t payload[200000];

/* ---- references, independent of csum.c ---- */

static uint32_t ref_add(const uint8_t *b, size_t len, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

static uint16_t ref_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static uint32_t ref_pseudo(int family, const uint8_t *f, uint32_t len)
{
	/* addresses straight from the IP header of frame @f */
	if (family == AF_INET)
		return ref_add(f + 14 + 12, 8, 0) + IPPROTO_UDP + (len >> 16) + (len & 0xffff);
	return ref_add(f + 14 + 8, 32, 0) + IPPROTO_UDP + (len >> 16) + (len & 0xffff);
}

/* One's complement 16-bit add/sub, as the kernel's csum16_add/csum16_sub. */
static uint16_t ref_c16_add(uint16_t a, uint16_t b)
{
	return ref_fold((uint32_t)a + b);
}

static uint16_t ref_c16_sub(uint16_t a, uint16_t b)
{
	return ref_c16_add(a, (uint16_t)~b);
}

static uint16_t get16(const uint8_t *b)
{
	return (uint16_t)(b[0] << 8 | b[1]);
}

/* ---- fixture ---- */

static void on_recv(struct udp_sock *s, const struct net_addr *src, uint16_t sport,
		    const struct net_addr *dst, const uint8_t *data, size_t len)
{
	(void)s; (void)src; (void)sport; (void)dst; (void)data; (void)len;
}

static void setup(void)
{
	const struct dpt_link_opts o = {
		.mode = setup_mode, .addr4 = "10.0.0.2", .addr6 = "fd00::2", .nodad = true,
		.gso_max_size = 65536, .gso_max_segs = 65535, .sockbuf = 4 << 20,
	};
	size_t i;
	int e;

	inet_pton(AF_INET, "10.0.0.2", &a_us);
	inet_pton(AF_INET, "10.0.0.1", &a_peer);
	inet_pton(AF_INET6, "fd00::2", &a6_us);
	inet_pton(AF_INET6, "fd00::1", &a6_peer);
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + i / 251);
	lk = dpt_stack_up(&lp, &st, &o, &peer_fd);
	ck_assert_int_eq(stack_start(&st), 0);
	dpt_neigh_add(&st, lk, "10.0.0.1");
	dpt_neigh_add(&st, lk, "fd00::1");
	us = udp_open(&st, NULL, 4000, on_recv, NULL, &e);
	ck_assert_ptr_nonnull(us);
	loop_advance_ms(lp, 1);
	dpt_drain(peer_fd);
}

static void teardown(void)
{
	udp_close(us);
	dpt_stack_down(lp, &st, peer_fd);
}

static void setup_hw(void)
{
	setup_mode = PROTO_GSO_HW;
	setup();
}

static void setup_sw(void)
{
	setup_mode = PROTO_GSO_SW;
	setup();
}

static void setup_off(void)
{
	setup_mode = PROTO_GSO_OFF;
	setup();
}

/* ---- what the link sent ---- */

/**
 * struct out_frame - one UDP frame the stack sent, checked and parsed
 * @vh:		its virtio_net_hdr (zero outside hw mode)
 * @f:		the frame from the Ethernet header on
 * @len:	frame bytes
 * @l3:		IP header length
 * @ulen:	UDP length field
 * @l4len:	UDP bytes in the frame (header + payload)
 * @ip_id:	IPv4 identification
 * @frag:	an IPv4 fragment (MF or an offset)
 */
struct out_frame {
	struct virtio_net_hdr vh;
	uint8_t f[70000];
	size_t len, l3, ulen, l4len;
	uint16_t ip_id;
	bool frag;
};

static int send_burst(int family, size_t total, size_t gso_size)
{
	struct net_addr dst = { .family = (uint8_t)family };
	struct iovec iov[3];
	size_t a = total / 3, b = total / 2;

	if (family == AF_INET)
		dst.a.v4 = a_peer;
	else
		dst.a.v6 = a6_peer;
	/* three buffers, cut off the segment boundaries: the payload is their concatenation */
	iov[0].iov_base = payload;
	iov[0].iov_len = a;
	iov[1].iov_base = payload + a;
	iov[1].iov_len = b - a;
	iov[2].iov_base = payload + b;
	iov[2].iov_len = total - b;
	return udp_sendto_gso(us, NULL, &dst, 5000, iov, 3, gso_size);
}

/* The next frame: IP header (checksum), lengths; false when none is left. */
static bool next_frame(struct out_frame *o)
{
	static uint8_t buf[sizeof(o->f) + sizeof(o->vh)];
	size_t vl = lk->vnet ? sizeof(o->vh) : 0;
	uint8_t *f = o->f;
	ssize_t n;

	n = recv(peer_fd, buf, vl + sizeof(o->f), MSG_DONTWAIT);
	if (n < 0)
		return false;
	ck_assert_int_ge(n, (ssize_t)(vl + 14 + 28));
	memset(&o->vh, 0, sizeof(o->vh));
	memcpy(&o->vh, buf, vl);
	memcpy(o->f, buf + vl, (size_t)n - vl);
	o->len = (size_t)n - vl;
	if (f[12] == 0x08) {
		ck_assert_uint_eq(f[13], 0x00);
		ck_assert_uint_eq(f[14], 0x45);
		ck_assert_uint_eq(ref_fold(ref_add(f + 14, 20, 0)), 0xffff);
		o->l3 = 20;
		ck_assert_uint_eq(get16(f + 16), o->len - 14);
		o->ip_id = get16(f + 18);
		o->frag = (get16(f + 20) & 0x3fff) != 0;
		ck_assert_uint_eq(f[23], IPPROTO_UDP);
	} else {
		ck_assert_uint_eq(get16(f + 12), 0x86dd);
		o->l3 = 40;
		ck_assert_uint_eq(get16(f + 18), o->len - 54);
		ck_assert_uint_eq(f[20], IPPROTO_UDP);
		o->frag = false;
	}
	o->l4len = o->len - 14 - o->l3;
	o->ulen = get16(f + 14 + o->l3 + 4);
	return true;
}

/* A frame that is one datagram: its length, full checksum and payload bytes. */
static void check_datagram(const struct out_frame *o, int family, const uint8_t *want, size_t n)
{
	const uint8_t *u = o->f + 14 + o->l3;

	ck_assert_uint_eq(o->vh.flags, 0);
	ck_assert_uint_eq(o->vh.gso_type, 0);
	ck_assert_uint_eq(o->ulen, 8 + n);
	ck_assert_uint_eq(o->l4len, 8 + n);
	ck_assert_uint_eq(get16(u), 4000);
	ck_assert_uint_eq(get16(u + 2), 5000);
	ck_assert_uint_ne(get16(u + 6), 0);
	ck_assert_msg(ref_fold(ref_add(u, 8 + n, ref_pseudo(family, o->f, 8 + n))) == 0xffff,
		      "bad UDP checksum on a datagram of %zu bytes", n);
	ck_assert_mem_eq(u + 8, want, n);
}

/*
 * A hw GSO frame: its vnet header and partial checksum, then the kernel's
 * segmentation replayed; each datagram's checksum and payload checked.
 * Return: datagrams in it.
 */
static unsigned int check_gso_frame(struct out_frame *o, int family, const uint8_t *want,
				    size_t gso_size)
{
	uint8_t *u = o->f + 14 + o->l3, seg[2048];
	size_t data = o->l4len - 8, off;
	uint16_t field, check, newlen;
	unsigned int k = 0;

	ck_assert_uint_eq(o->vh.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
	ck_assert_uint_eq(o->vh.gso_type, 5);		/* VIRTIO_NET_HDR_GSO_UDP_L4 */
	ck_assert_uint_eq(o->vh.gso_size, gso_size);
	ck_assert_uint_eq(o->vh.csum_start, 14 + o->l3);
	ck_assert_uint_eq(o->vh.csum_offset, 6);
	ck_assert_uint_eq(o->vh.hdr_len, 14 + o->l3 + 8);
	ck_assert_uint_gt(data, gso_size);		/* else it is no GSO frame */
	ck_assert_uint_le(o->len, 65535);
	/* udp_send_skb(): length and pseudo-header sum of the whole L4 part */
	ck_assert_uint_eq(o->ulen, o->l4len);
	field = get16(u + 6);
	ck_assert_uint_eq(field, ref_fold(ref_pseudo(family, o->f, (uint32_t)o->l4len)));
	for (off = 0; off < data; off += gso_size, k++) {
		size_t n = data - off < gso_size ? data - off : gso_size;

		/* __udp_gso_segment(): swap the length in the sum and the field */
		newlen = (uint16_t)(8 + n);
		check = ref_c16_add(ref_c16_sub(field, (uint16_t)o->ulen), newlen);
		memcpy(seg, u, 8);
		seg[4] = newlen >> 8;
		seg[5] = newlen & 0xff;
		seg[6] = check >> 8;
		seg[7] = check & 0xff;
		memcpy(seg + 8, u + 8 + off, n);
		/* the checksum completion: the sum from csum_start, inverted */
		check = (uint16_t)~ref_fold(ref_add(seg, 8 + n, 0));
		seg[6] = check >> 8;
		seg[7] = check & 0xff;
		/* verify from scratch, the way a receiver does */
		ck_assert_msg(ref_fold(ref_add(seg, 8 + n, ref_pseudo(family, o->f, 8 + n))) == 0xffff,
			      "datagram %u of a GSO frame: bad checksum", k);
		ck_assert_mem_eq(seg + 8, want + off, n);
	}
	return k;
}

/* ---- tests ---- */

/*
 * hw: 10 datagrams of 1000 bytes and a short last one of 333 leave as one
 * frame with the header of docs/gso.md's table; the next IPv4 id skips the
 * ids the kernel gives the 11 datagrams.
 */
START_TEST(test_hw_frame_fields)
{
	int family = _i ? AF_INET6 : AF_INET;
	static struct out_frame o;
	uint16_t id;

	ck_assert_int_eq(send_burst(family, 10333, 1000), 0);
	loop_advance_ms(lp, 1);
	ck_assert(next_frame(&o));
	ck_assert_uint_eq(o.l4len, 8 + 10333);
	ck_assert_uint_eq(check_gso_frame(&o, family, payload, 1000), 11);
	ck_assert(!next_frame(&o));
	id = o.ip_id;
	ck_assert_uint_eq(lk->stats.tx_gso_frames, 1);
	ck_assert_uint_eq(lk->stats.tx_over_mtu, 1);
	ck_assert_uint_eq(st.ctr[CTR_UDP_TX_GSO_FRAMES], 1);
	ck_assert_uint_eq(st.ctr[CTR_UDP_TX_GSO_SEGMENTS], 11);
	ck_assert_uint_eq(st.ctr[CTR_UDP_OUT], 11);
	ck_assert_uint_eq(us->tx_datagrams, 11);
	ck_assert_uint_eq(us->tx_bytes, 10333);

	/* one datagram: a plain frame with its full checksum, no offload request */
	ck_assert_int_eq(send_burst(family, 700, 1000), 0);
	loop_advance_ms(lp, 1);
	ck_assert(next_frame(&o));
	check_datagram(&o, family, payload, 700);
	if (family == AF_INET)
		ck_assert_uint_eq(o.ip_id, (uint16_t)(id + 11));
	/* a payload of exactly one segment is one datagram too */
	ck_assert_int_eq(send_burst(family, 1000, 1000), 0);
	loop_advance_ms(lp, 1);
	ck_assert(next_frame(&o));
	check_datagram(&o, family, payload, 1000);
	/* two datagrams, the last of 1 byte: a GSO frame */
	ck_assert_int_eq(send_burst(family, 1001, 1000), 0);
	loop_advance_ms(lp, 1);
	ck_assert(next_frame(&o));
	ck_assert_uint_eq(check_gso_frame(&o, family, payload, 1000), 2);
	ck_assert(!next_frame(&o));
	ck_assert_uint_eq(lk->stats.tx_gso_frames, 2);
}
END_TEST

/*
 * hw limits: at most 128 datagrams per frame (the kernel's UDP_MAX_SEGMENTS;
 * 129 is EINVAL, measured on 6.18), at most 65535 bytes with the Ethernet
 * header, below gso_max_size, at most gso_max_segs; what is left goes in the
 * next frames, a last single datagram plain.
 */
START_TEST(test_hw_limits)
{
	int family = _i ? AF_INET6 : AF_INET;
	size_t hdrs = 14 + (family == AF_INET ? 20 : 40) + 8, mtu_pl = 1500 - (hdrs - 14);
	size_t per = (65535 - hdrs) / mtu_pl, off;
	static struct out_frame o;
	unsigned int k;

	ck_assert_uint_eq(udp_gso_max_segs(lk, family, 1), 128);
	ck_assert_uint_eq(udp_gso_max_segs(lk, family, 10), 128);
	ck_assert_uint_eq(udp_gso_max_segs(lk, family, mtu_pl), per);
	ck_assert_uint_eq(udp_gso_max_segs(lk, family, mtu_pl + 1), 0);	/* over the MTU */
	ck_assert_uint_eq(udp_gso_max_segs(lk, family, 0), 0);

	/* 300 datagrams of 10 bytes: 128 + 128 + 44 */
	ck_assert_int_eq(send_burst(family, 3000, 10), 0);
	loop_advance_ms(lp, 1);
	for (off = 0, k = 0; k < 3; k++) {
		unsigned int want = k < 2 ? 128 : 44;

		ck_assert(next_frame(&o));
		ck_assert_uint_eq(check_gso_frame(&o, family, payload + off, 10), want);
		off += want * 10;
	}
	ck_assert(!next_frame(&o));

	/* MTU-sized datagrams: as many as fit 65535 bytes, then the rest */
	ck_assert_int_eq(send_burst(family, 64 * mtu_pl, mtu_pl), 0);
	loop_advance_ms(lp, 1);
	ck_assert(next_frame(&o));
	ck_assert_uint_eq(check_gso_frame(&o, family, payload, mtu_pl), per);
	ck_assert_uint_le(o.len, 65535);
	ck_assert_uint_gt(o.len + mtu_pl, 65535);
	ck_assert(next_frame(&o));
	ck_assert_uint_eq(check_gso_frame(&o, family, payload + per * mtu_pl, mtu_pl), 64 - per);
	ck_assert(!next_frame(&o));

	/* the link's gso_max_size and gso_max_segs */
	lk->gso_max_size = 20000;
	ck_assert_uint_eq(udp_gso_max_segs(lk, family, mtu_pl), (19999 - hdrs) / mtu_pl);
	lk->gso_max_segs = 4;
	ck_assert_uint_eq(udp_gso_max_segs(lk, family, mtu_pl), 4);
	ck_assert_int_eq(send_burst(family, 9 * 100 + 50, 100), 0);	/* 4 + 4 + 2 */
	loop_advance_ms(lp, 1);
	ck_assert(next_frame(&o));
	ck_assert_uint_eq(check_gso_frame(&o, family, payload, 100), 4);
	ck_assert(next_frame(&o));
	ck_assert_uint_eq(check_gso_frame(&o, family, payload + 400, 100), 4);
	ck_assert(next_frame(&o));
	ck_assert_uint_eq(check_gso_frame(&o, family, payload + 800, 100), 2);
	ck_assert(!next_frame(&o));
	/* 9 datagrams, gso_max_segs 4: 4 + 4 and a last one alone, plain */
	ck_assert_int_eq(send_burst(family, 900, 100), 0);
	loop_advance_ms(lp, 1);
	ck_assert(next_frame(&o));
	ck_assert(next_frame(&o));
	ck_assert(next_frame(&o));
	check_datagram(&o, family, payload + 800, 100);
	ck_assert(!next_frame(&o));
	lk->gso_max_segs = 1;		/* a link that takes no more than one: no GSO */
	ck_assert_uint_eq(udp_gso_max_segs(lk, family, 100), 1);
	ck_assert_int_eq(send_burst(family, 300, 100), 0);
	loop_advance_ms(lp, 1);
	for (k = 0; k < 3; k++) {
		ck_assert(next_frame(&o));
		check_datagram(&o, family, payload + k * 100, 100);
	}
	ck_assert(!next_frame(&o));
	ck_assert_uint_eq(lk->stats.tx_errors, 0);
}
END_TEST

/* hw: datagrams above the MTU never go in a GSO frame; IP fragments each. */
START_TEST(test_hw_over_mtu_fragmented)
{
	static struct out_frame o;
	unsigned int frags = 0;

	ck_assert_int_eq(send_burst(AF_INET, 3 * 2000 + 500, 2000), 0);
	loop_advance_ms(lp, 1);
	while (next_frame(&o)) {
		ck_assert_uint_eq(o.vh.gso_type, 0);
		ck_assert_uint_le(o.len, 1514);
		if (o.frag)
			frags++;
		else
			check_datagram(&o, AF_INET, payload + 6000, 500);
	}
	ck_assert_uint_eq(frags, 6);
	ck_assert_uint_eq(st.ctr[CTR_UDP_TX_GSO_FRAMES], 0);
	ck_assert_uint_eq(st.ctr[CTR_UDP_OUT], 4);
}
END_TEST

/*
 * sw: one frame per datagram with its own header and full checksum, the
 * payload in slices of one shared block, all in one sendmmsg().
 */
START_TEST(test_sw_pieces)
{
	int family = _i ? AF_INET6 : AF_INET;
	static struct out_frame o;
	uint64_t calls = lk->stats.tx_syscalls;
	unsigned int k;
	uint16_t id = 0;

	ck_assert_int_eq(send_burst(family, 40 * 1200 + 7, 1200), 0);
	loop_advance_ms(lp, 1);
	ck_assert_uint_eq(lk->stats.tx_syscalls - calls, 1);
	for (k = 0; k < 41; k++) {
		ck_assert(next_frame(&o));
		check_datagram(&o, family, payload + k * 1200, k < 40 ? 1200 : 7);
		if (family == AF_INET && k)
			ck_assert_uint_eq(o.ip_id, (uint16_t)(id + 1));
		id = o.ip_id;
	}
	ck_assert(!next_frame(&o));
	ck_assert_uint_eq(st.ctr[CTR_UDP_TX_SW_SEGMENTS], 41);
	ck_assert_uint_eq(lk->stats.tx_sw_segments, 41);
	ck_assert_uint_eq(lk->stats.tx_gso_frames, 0);
	ck_assert_uint_eq(st.ctr[CTR_UDP_TX_GSO_FRAMES], 0);
	ck_assert_uint_eq(us->tx_datagrams, 41);
	/* 1-byte datagrams */
	ck_assert_int_eq(send_burst(family, 5, 1), 0);
	loop_advance_ms(lp, 1);
	for (k = 0; k < 5; k++) {
		ck_assert(next_frame(&o));
		check_datagram(&o, family, payload + k, 1);
	}
	ck_assert(!next_frame(&o));
}
END_TEST

/* off: the same datagrams, one frame per syscall. */
START_TEST(test_off_one_per_syscall)
{
	static struct out_frame o;
	uint64_t calls = lk->stats.tx_syscalls;
	unsigned int k;

	ck_assert_int_eq(send_burst(AF_INET, 5 * 300 + 20, 300), 0);
	loop_advance_ms(lp, 1);
	ck_assert_uint_eq(lk->stats.tx_syscalls - calls, 6);
	for (k = 0; k < 6; k++) {
		ck_assert(next_frame(&o));
		check_datagram(&o, AF_INET, payload + k * 300, k < 5 ? 300 : 20);
	}
	ck_assert(!next_frame(&o));
	ck_assert_uint_eq(st.ctr[CTR_UDP_TX_SW_SEGMENTS], 0);
	ck_assert_uint_eq(st.ctr[CTR_UDP_TX_GSO_FRAMES], 0);
	ck_assert_uint_eq(st.ctr[CTR_UDP_OUT], 6);
}
END_TEST

/* Errors: no route, an oversize segment, an empty payload. */
START_TEST(test_errors)
{
	struct net_addr far = { .family = AF_INET };
	struct iovec iov = { payload, 3000 };
	static struct out_frame o;

	inet_pton(AF_INET, "192.0.2.1", &far.a.v4);	/* no default route */
	ck_assert_int_eq(udp_sendto_gso(us, NULL, &far, 5000, &iov, 1, 1000), -ENETUNREACH);
	far.a.v4 = a_peer;
	iov.iov_len = 70000;
	ck_assert_int_eq(udp_sendto_gso(us, NULL, &far, 5000, &iov, 1, 66000), -EMSGSIZE);
	ck_assert_uint_eq(us->tx_errors, 2);
	/* no payload: one empty datagram */
	ck_assert_int_eq(udp_sendto_gso(us, NULL, &far, 5000, NULL, 0, 1000), 0);
	loop_advance_ms(lp, 1);
	ck_assert(next_frame(&o));
	check_datagram(&o, AF_INET, payload, 0);
	ck_assert(!next_frame(&o));
}
END_TEST

static Suite *udp_gso_suite(void)
{
	Suite *s = suite_create("datapath_udp_gso");
	TCase *tc = tcase_create("hw");

	tcase_add_checked_fixture(tc, setup_hw, teardown);
	tcase_add_loop_test(tc, test_hw_frame_fields, 0, 2);
	tcase_add_loop_test(tc, test_hw_limits, 0, 2);
	tcase_add_test(tc, test_hw_over_mtu_fragmented);
	tcase_add_test(tc, test_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("sw");
	tcase_add_checked_fixture(tc, setup_sw, teardown);
	tcase_add_loop_test(tc, test_sw_pieces, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("off");
	tcase_add_checked_fixture(tc, setup_off, teardown);
	tcase_add_test(tc, test_off_one_per_syscall);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(udp_gso_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
