/* SPDX-License-Identifier: MIT */
/*
 * tcp_harness.h - the peer of the TCP engine's unit tests: hand-built
 * segments in, every emitted segment captured
 *
 * Theory of operation
 *
 * The test plays the peer: it builds segments (struct tcp_seg_in, pseg()),
 * feeds them to one stack on a virtual clock (in(), run_until()) and asserts
 * on the segments the stack emits, in order (expect_seg(), expect_none()). A
 * mismatch prints the expected and the actual segment (smoltcp style). The
 * stack is "us" at 10.0.0.1:80 (listening) or :5555 (connecting); the peer
 * is 10.0.0.2:40000. Our ISS is fixed at OUR_ISS, the peer's is PEER_ISS.
 * setup() and teardown() are the Check fixture; teardown frees everything
 * (the ASan build finds what a test leaked).
 *
 * Everything is static inline: each test binary includes this once and uses
 * what it needs, and -Werror must not complain about the rest.
 */
#ifndef SANDNET_TESTS_TCP_HARNESS_H
#define SANDNET_TESTS_TCP_HARNESS_H

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "datapath/tcp/tcp.h"

#define OUR_ISS		5000u
#define PEER_ISS	1000u
#define MAXCAP		4096
#define MS		1000ULL
#define SEC		1000000ULL

struct cap {
	struct tcp_seg_out h;
	uint8_t *data;
};

struct evrec {
	enum tcp_event ev;
	int err;
};

static struct harness {
	struct tcp_stack *s;
	struct tcp_stack_cfg cfg;
	struct cap caps[MAXCAP];
	unsigned int ncap, head;
	uint64_t now;
	/* the peer */
	uint16_t peer_wnd;
	uint8_t peer_wscale;
	bool peer_ts;
	bool peer_sack;
	uint32_t peer_tsval;
	uint32_t our_tsval;	/* last TSval we sent */
	uint16_t our_port;
	/* the service */
	struct tcp_listener *lis;
	struct tcp_conn *conn;
	struct tcp_conn *conns[8];
	unsigned int nconns;
	uint32_t peer_iss;
	struct tcp_conn_opts lopts;
	struct evrec evs[256];
	unsigned int nev;
	int accept_ret;
	bool close_on_readable;
	/* lend: emit answers TCP_EMIT_LENT and keeps what each segment points
	 * at, with a copy of its bytes then, as a link's queue would, until
	 * h_tx_done() (the borrow rule, tcp_pool.c) */
	bool lend;
	struct lent {
		struct iovec iov[2];
		int iovcnt;
		uint32_t seq;
		uint8_t *copy;
	} lent[64];
	unsigned int nlent;
} H;

static inline int h_emit(void *ctx, const struct tcp_seg_out *seg)
{
	struct harness *h = ctx;
	struct cap *c;
	size_t off = 0;
	int i;

	ck_assert_msg(h->ncap < MAXCAP, "too many segments captured");
	c = &h->caps[(h->head + h->ncap++) % MAXCAP];
	c->h = *seg;
	c->data = seg->len ? malloc(seg->len) : NULL;
	for (i = 0; i < seg->iovcnt; i++) {
		memcpy(c->data + off, seg->iov[i].iov_base, seg->iov[i].iov_len);
		off += seg->iov[i].iov_len;
	}
	ck_assert_uint_eq(off, seg->len);
	if (seg->opts.has_ts)
		h->our_tsval = seg->opts.ts_val;
	if (!h->lend || !seg->len)
		return 0;
	ck_assert_uint_lt(h->nlent, 64);
	h->lent[h->nlent].iovcnt = seg->iovcnt;
	h->lent[h->nlent].seq = seg->seq;
	memcpy(h->lent[h->nlent].iov, seg->iov, sizeof(seg->iov[0]) * seg->iovcnt);
	h->lent[h->nlent].copy = malloc(seg->len);
	memcpy(h->lent[h->nlent].copy, c->data, seg->len);
	h->nlent++;
	return TCP_EMIT_LENT;
}

/* Every segment still "queued" carries the bytes it was emitted with. */
static inline void h_lent_intact(void)
{
	unsigned int i;

	for (i = 0; i < H.nlent; i++) {
		size_t off = 0;
		int k;

		for (k = 0; k < H.lent[i].iovcnt; k++) {
			ck_assert_msg(!memcmp(H.lent[i].iov[k].iov_base, H.lent[i].copy + off, H.lent[i].iov[k].iov_len),
				      "the queued segment at seq %u carries other bytes than it was emitted with",
				      H.lent[i].seq);
			off += H.lent[i].iov[k].iov_len;
		}
	}
}

/* The link flushed: the queued segments are gone, the loans end. */
static inline void h_tx_done(void)
{
	h_lent_intact();
	while (H.nlent)
		free(H.lent[--H.nlent].copy);
	tcp_stack_tx_done(H.s);
}

static inline void h_event(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	struct harness *h = user;

	ck_assert_uint_lt(h->nev, 256);
	h->evs[h->nev].ev = ev;
	h->evs[h->nev].err = err;
	h->nev++;
	if (ev == TCP_EV_READABLE && h->close_on_readable) {
		tcp_close(c, h->now);
		h->conn = NULL;
	}
}

static inline int h_accept(struct tcp_listener *l, void *user, struct tcp_conn *c)
{
	struct harness *h = user;

	(void)l;
	if (h->accept_ret)
		return h->accept_ret;
	h->conn = c;
	if (h->nconns < 8)
		h->conns[h->nconns++] = c;
	return 0;
}

static inline void h_setup_cfg(void)
{
	memset(&H, 0, sizeof(H));
	H.cfg.emit = h_emit;
	H.cfg.emit_ctx = &H;
	memset(H.cfg.secret, 7, sizeof(H.cfg.secret));
	H.cfg.isn_fixed = OUR_ISS;
	H.now = 1000 * SEC;
	H.peer_wnd = 65535;
	H.peer_wscale = 7;
	H.peer_ts = true;
	H.peer_sack = true;
	H.peer_tsval = 100;
	H.our_port = 80;
	H.peer_iss = PEER_ISS;
}

static inline void h_start(void)
{
	H.s = tcp_stack_new(&H.cfg);
	ck_assert_ptr_nonnull(H.s);
}

static inline void setup(void)
{
	h_setup_cfg();
	h_start();
}

static inline void h_drain(void)
{
	while (H.ncap) {
		free(H.caps[H.head].data);
		H.head = (H.head + 1) % MAXCAP;
		H.ncap--;
	}
}

static inline void teardown(void)
{
	while (H.nlent)
		free(H.lent[--H.nlent].copy);
	h_drain();
	tcp_stack_free(H.s);
	H.s = NULL;
}

static inline struct tcp_endpoint ep(const char *ip, uint16_t port)
{
	struct tcp_endpoint e;

	memset(&e, 0, sizeof(e));
	if (strchr(ip, ':')) {
		e.addr.family = AF_INET6;
		inet_pton(AF_INET6, ip, e.addr.a.bytes);
	} else {
		e.addr.family = AF_INET;
		inet_pton(AF_INET, ip, e.addr.a.bytes);
	}
	e.port = port;
	return e;
}

static inline void fmt_flags(char *b, size_t n, uint8_t f)
{
	snprintf(b, n, "%s%s%s%s%s%s%s", f & TCP_SYN ? "S" : "", f & TCP_FIN ? "F" : "", f & TCP_RST ? "R" : "",
		 f & TCP_PSH ? "P" : "", f & TCP_ACK ? "." : "", f & TCP_ECE ? "E" : "", f & TCP_CWR ? "W" : "");
}

static inline void fmt_seg(char *b, size_t n, uint8_t flags, uint32_t seq, uint32_t ack, size_t len, int wnd)
{
	char f[12];

	fmt_flags(f, sizeof(f), flags);
	snprintf(b, n, "[%s seq=%u ack=%u len=%zu wnd=%d]", f, seq, ack, len, wnd);
}

/* Pop the next emitted segment; fail printing both when it is not as expected. */
#define expect_seg(flags, seq, ack, len) expect_seg_at(__LINE__, flags, seq, ack, len)
static inline struct cap *expect_seg_at(int line, uint8_t flags, uint32_t seq, uint32_t ack, size_t len)
{
	static struct cap last;
	char want[128], got[128];
	struct cap *c;

	fmt_seg(want, sizeof(want), flags, seq, (flags & TCP_ACK) ? ack : 0, len, -1);
	if (!H.ncap)
		ck_abort_msg("line %d: expected %s, got nothing", line, want);
	c = &H.caps[H.head];
	H.head = (H.head + 1) % MAXCAP;
	H.ncap--;
	free(last.data);
	last = *c;
	fmt_seg(got, sizeof(got), last.h.flags, last.h.seq, last.h.ack, last.h.len, last.h.wnd);
	if (last.h.flags != flags || last.h.seq != seq || ((flags & TCP_ACK) && last.h.ack != ack) ||
	    last.h.len != len)
		ck_abort_msg("line %d: expected %s, got %s", line, want, got);
	return &last;
}

/* Pop the next emitted segment whatever it is. */
static inline struct cap *pop_seg(void)
{
	static struct cap last;

	ck_assert_msg(H.ncap > 0, "expected a segment, got nothing");
	free(last.data);
	last = H.caps[H.head];
	H.head = (H.head + 1) % MAXCAP;
	H.ncap--;
	return &last;
}

#define expect_none() expect_none_at(__LINE__)
static inline void expect_none_at(int line)
{
	if (H.ncap) {
		char got[128];
		struct cap *c = &H.caps[H.head];

		fmt_seg(got, sizeof(got), c->h.flags, c->h.seq, c->h.ack, c->h.len, c->h.wnd);
		ck_abort_msg("line %d: expected no segment, got %s", line, got);
	}
}

static inline bool saw_event(enum tcp_event ev, int err)
{
	unsigned int i;

	for (i = 0; i < H.nev; i++)
		if (H.evs[i].ev == ev && (!err || H.evs[i].err == err))
			return true;
	return false;
}

static inline struct tcp_seg_in pseg(uint8_t flags, uint32_t seq, uint32_t ack, const void *data, size_t len)
{
	struct tcp_seg_in s;

	memset(&s, 0, sizeof(s));
	s.src = ep("10.0.0.2", 40000).addr;
	s.dst = ep("10.0.0.1", 80).addr;
	s.sport = 40000;
	s.dport = H.our_port;
	s.seq = seq;
	s.ack = ack;
	s.flags = flags;
	s.wnd = H.peer_wnd;
	if (H.peer_ts) {
		s.opts.has_ts = true;
		s.opts.ts_val = H.peer_tsval++;
		s.opts.ts_ecr = (flags & TCP_ACK) ? H.our_tsval : 0;
	}
	if (flags & TCP_SYN) {
		s.opts.has_mss = true;
		s.opts.mss = 1460;
		s.opts.has_wscale = H.peer_wscale != 0xff;
		s.opts.wscale = H.peer_wscale;
		s.opts.sack_perm = H.peer_sack;
	}
	s.data = data;
	s.len = len;
	return s;
}

#define P0 (H.peer_iss + 1)
#define O0 (H.cfg.isn_fixed + 1)

static inline int in(uint8_t flags, uint32_t seq, uint32_t ack, const void *data, size_t len)
{
	struct tcp_seg_in s = pseg(flags, seq, ack, data, len);

	return tcp_input(H.s, &s, H.now);
}

static inline void run_until(uint64_t t)
{
	H.now = t;
	tcp_timers_run(H.s, H.now);
}

static inline void h_listen(void)
{
	struct tcp_endpoint l = ep("10.0.0.1", 80);

	ck_assert_int_eq(tcp_listen(H.s, &l, 16, &H.lopts, h_accept, h_event, &H, &H.lis), 0);
}

/* Passive open; afterwards the peer sends P0.., we send O0.. */
static inline void establish_passive(void)
{
	h_listen();
	in(TCP_SYN, H.peer_iss, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, H.cfg.isn_fixed, P0, 0);
	in(TCP_ACK, P0, O0, NULL, 0);
	expect_none();
	ck_assert_ptr_nonnull(H.conn);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_ESTABLISHED);
}

/* Passive open whose handshake takes @rtt (so SRTT and the PTO are realistic). */
static inline void establish_passive_rtt(uint64_t rtt)
{
	h_listen();
	in(TCP_SYN, H.peer_iss, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, H.cfg.isn_fixed, P0, 0);
	H.now += rtt;
	in(TCP_ACK, P0, O0, NULL, 0);
	expect_none();
	ck_assert_ptr_nonnull(H.conn);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_ESTABLISHED);
}

static inline void establish_active(const struct tcp_conn_opts *o)
{
	struct tcp_endpoint l = ep("10.0.0.1", 5555), r = ep("10.0.0.2", 40000);

	H.our_port = 5555;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, o, h_event, &H, H.now, &H.conn), 0);
	expect_seg(TCP_SYN, H.cfg.isn_fixed, 0, 0);
	in(TCP_SYN | TCP_ACK, H.peer_iss, O0, NULL, 0);
	expect_seg(TCP_ACK, O0, P0, 0);
	ck_assert(saw_event(TCP_EV_CONNECTED, 0));
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_ESTABLISHED);
}

static inline void fill(uint8_t *b, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 31 + seed);
}

static inline void send_ten(void)
{
	static uint8_t d[10 * 1448];
	int i;

	fill(d, sizeof(d), 5);
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	for (i = 0; i < 10; i++)
		expect_seg(TCP_ACK | (i == 9 ? TCP_PSH : 0), O0 + 1448 * i, P0, 1448);
	H.now += 10 * MS;	/* the ACKs come an RTT later */
}

static inline int in_sack(uint32_t ack, uint32_t s0, uint32_t e0)
{
	struct tcp_seg_in s = pseg(TCP_ACK, P0, ack, NULL, 0);

	s.opts.nsack = 1;
	s.opts.sack[0].start = s0;
	s.opts.sack[0].end = e0;
	return tcp_input(H.s, &s, H.now);
}

#endif /* SANDNET_TESTS_TCP_HARNESS_H */
