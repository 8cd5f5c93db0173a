// SPDX-License-Identifier: MIT
/*
 * test_datapath_caps.c - every resource cap of the datapath is reached, and
 * what happens then is what docs/security.md says, counted where it says
 *
 * TCP caps: two engines ("client" 10.0.0.2 and "server" 10.0.0.1:80) wired
 * back to back through a FIFO of segments on a virtual clock; a side can be
 * made a black hole (what it emits is lost) to keep the other half-open.
 * Every test checks the engine's counters (tcp_stack_stats()) and, for the
 * ring memory, that the accounted total equals the rings' capacities.
 * Stack caps (reassembly memory, neighbour entries): a stack with one link
 * on a socketpair, as in test_datapath_stack.c. Option parsing: the CLI
 * strings of each cap, good and bad.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/proc/limits.h"
#include "datapath/proc/proc.h"
#include "datapath/obs/stats.h"
#include "datapath/wire/proto_hdr.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/tcp/tcp.h"
#include "tests/unit/datapath_testlib.h"

#define SEC	1000000ULL
#define NCONN	64

/* ---- two engines back to back ---- */

struct wire_seg {
	struct tcp_seg_in in;
	uint8_t *data;
	int to;			/* 0 = server, 1 = client */
};

struct side {
	struct tcp_stack *s;
	int id;
	bool blackhole;
	uint64_t lost;
};

static struct {
	struct side side[2];
	struct wire_seg *q;
	unsigned int qhead, qlen, qcap;
	uint64_t now;
	struct tcp_listener *lis;
	struct tcp_conn *srv[NCONN];
	unsigned int nsrv;
	struct tcp_conn *cli[NCONN];
	unsigned int ncli;
	unsigned int cli_connected, cli_reset, srv_readable;
	bool cli_close_on_fin;
	/* the server's last TSval per client port: it must never go back */
	uint32_t srv_tsval[65536];
	bool srv_ts_seen[65536];
} W;

static int w_emit(void *ctx, const struct tcp_seg_out *o)
{
	struct side *sd = ctx;
	struct wire_seg *w;
	size_t off = 0;
	int i;

	if (sd->id == 0 && o->opts.has_ts) {
		/* PAWS at the peer: a cookie SYN-ACK's TSval included */
		if (W.srv_ts_seen[o->dport])
			ck_assert_msg((int32_t)(o->opts.ts_val - W.srv_tsval[o->dport]) >= 0,
				      "port %u: TSval %u after %u", o->dport, o->opts.ts_val,
				      W.srv_tsval[o->dport]);
		W.srv_tsval[o->dport] = o->opts.ts_val;
		W.srv_ts_seen[o->dport] = true;
	}
	if (sd->blackhole) {
		sd->lost++;
		return 0;
	}
	if (W.qlen == W.qcap) {
		struct wire_seg *n = malloc(sizeof(*n) * (W.qcap ? W.qcap * 2 : 256));
		unsigned int j;

		ck_assert_ptr_nonnull(n);
		for (j = 0; j < W.qlen; j++)
			n[j] = W.q[(W.qhead + j) % W.qcap];
		free(W.q);
		W.q = n;
		W.qhead = 0;
		W.qcap = W.qcap ? W.qcap * 2 : 256;
	}
	w = &W.q[(W.qhead + W.qlen++) % W.qcap];
	memset(w, 0, sizeof(*w));
	w->to = !sd->id;
	w->in.src = o->src;
	w->in.dst = o->dst;
	w->in.sport = o->sport;
	w->in.dport = o->dport;
	w->in.seq = o->seq;
	w->in.ack = o->ack;
	w->in.flags = o->flags;
	w->in.wnd = o->wnd;
	w->in.opts = o->opts;
	w->data = o->len ? malloc(o->len) : NULL;
	for (i = 0; i < o->iovcnt; i++) {
		memcpy(w->data + off, o->iov[i].iov_base, o->iov[i].iov_len);
		off += o->iov[i].iov_len;
	}
	ck_assert_uint_eq(off, o->len);
	w->in.data = w->data;
	w->in.len = o->len;
	return 0;
}

/* Deliver everything in flight (and what it causes), at the current time. */
static void pump(void)
{
	unsigned int n = 0;

	while (W.qlen) {
		struct wire_seg w = W.q[W.qhead];

		W.qhead = (W.qhead + 1) % W.qcap;
		W.qlen--;
		tcp_input(W.side[w.to].s, &w.in, W.now);
		free(w.data);
		ck_assert_uint_lt(++n, 1000000);
	}
	tcp_stack_tx_done(W.side[0].s);
	tcp_stack_tx_done(W.side[1].s);
}

static void advance_ms(unsigned int ms)
{
	W.now += ms * 1000ULL;
	tcp_timers_run(W.side[0].s, W.now);
	tcp_timers_run(W.side[1].s, W.now);
	pump();
}

static void srv_ev(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	(void)user;
	(void)err;
	if (ev == TCP_EV_READABLE)
		W.srv_readable++;
	if (ev == TCP_EV_RESET || ev == TCP_EV_CLOSED) {
		unsigned int i;

		for (i = 0; i < W.nsrv; i++)
			if (W.srv[i] == c)
				W.srv[i] = NULL;
		tcp_close(c, W.now);
	}
}

static int srv_accept(struct tcp_listener *l, void *user, struct tcp_conn *c)
{
	(void)l;
	(void)user;
	ck_assert_uint_lt(W.nsrv, NCONN);
	W.srv[W.nsrv++] = c;
	return 0;
}

static void cli_ev(struct tcp_conn *c, void *user, enum tcp_event ev, int err)
{
	unsigned int i = (unsigned int)(uintptr_t)user;

	(void)err;
	if (ev == TCP_EV_CONNECTED)
		W.cli_connected++;
	if (ev == TCP_EV_RESET)
		W.cli_reset++;
	if (ev == TCP_EV_PEER_FIN && W.cli_close_on_fin) {
		uint8_t b[256];

		while (tcp_recv(c, b, sizeof(b), W.now) > 0)
			;
	}
	if (ev == TCP_EV_RESET || ev == TCP_EV_CLOSED || (ev == TCP_EV_PEER_FIN && W.cli_close_on_fin)) {
		tcp_close(c, W.now);
		W.cli[i] = NULL;
	}
}

static struct tcp_endpoint ep(const char *ip, uint16_t port)
{
	struct tcp_endpoint e;

	memset(&e, 0, sizeof(e));
	e.addr.family = AF_INET;
	inet_pton(AF_INET, ip, e.addr.a.bytes);
	e.port = port;
	return e;
}

static void w_setup(void)
{
	struct tcp_stack_cfg cfg;
	struct tcp_endpoint l = ep("10.0.0.1", 80);
	int i;

	memset(&W, 0, sizeof(W));
	W.now = 1000 * SEC;
	for (i = 0; i < 2; i++) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.emit = w_emit;
		cfg.emit_ctx = &W.side[i];
		memset(cfg.secret, 3 + i, sizeof(cfg.secret));
		W.side[i].id = i;
		W.side[i].s = tcp_stack_new(&cfg);
		ck_assert_ptr_nonnull(W.side[i].s);
	}
	ck_assert_int_eq(tcp_listen(W.side[0].s, &l, 128, NULL, srv_accept, srv_ev, NULL, &W.lis), 0);
}

static void w_teardown(void)
{
	while (W.qlen) {
		free(W.q[W.qhead].data);
		W.qhead = (W.qhead + 1) % W.qcap;
		W.qlen--;
	}
	free(W.q);
	tcp_stack_free(W.side[0].s);
	tcp_stack_free(W.side[1].s);
}

static struct tcp_stack *srv(void)
{
	return W.side[0].s;
}

static struct tcp_stack_stats sstats(struct tcp_stack *s)
{
	struct tcp_stack_stats st;

	tcp_stack_stats(s, &st);
	return st;
}

static void cli_connect(unsigned int n)
{
	struct tcp_endpoint l = ep("10.0.0.2", 0), r = ep("10.0.0.1", 80);
	unsigned int i;

	for (i = 0; i < n; i++) {
		ck_assert_uint_lt(W.ncli, NCONN);
		ck_assert_int_eq(tcp_connect(W.side[1].s, &l, &r, NULL, cli_ev, (void *)(uintptr_t)W.ncli, W.now,
					     &W.cli[W.ncli]), 0);
		W.ncli++;
	}
}

static int sum_rings(struct tcp_conn *c, void *arg)
{
	struct tcp_conn_info ci;

	tcp_conn_info(c, &ci);
	*(uint64_t *)arg += (uint64_t)ci.sndbuf_held + ci.rcvbuf_held;
	return 0;
}

/* The accounted ring memory is exactly what the rings hold (a parked one: none). */
static void check_buf_mem(struct tcp_stack *s)
{
	uint64_t sum = 0;

	tcp_foreach_conn(s, sum_rings, &sum);
	ck_assert_uint_eq(sstats(s).buf_mem, sum);
}

/*
 * @n more connections, each of whose clients sends 200 KiB that the server
 * does not read: their receive rings fill (128 KiB each, or what the cap
 * leaves).
 */
static void connect_unread(unsigned int n)
{
	static const uint8_t big[200 * 1024];
	unsigned int i, first = W.ncli;

	cli_connect(n);
	pump();
	ck_assert_uint_eq(W.nsrv, first + n);
	for (i = first; i < first + n; i++)
		ck_assert_int_gt(tcp_send(W.cli[i], big, sizeof(big), W.now), 0);
	pump();
}

START_TEST(test_max_conns)
{
	static const char msg[] = "hello";
	struct tcp_endpoint l = ep("10.0.0.1", 0), r = ep("10.0.0.9", 9);
	struct tcp_stack_stats st;
	struct tcp_conn *extra;
	unsigned int i, accepted;

	ck_assert_int_eq(tcp_stack_set_limits(srv(), 16, 0, 0, 0), 0);
	cli_connect(20);
	pump();
	/* every client thinks it is connected: the last 4 got cookies */
	ck_assert_uint_eq(W.cli_connected, 20);
	st = sstats(srv());
	ck_assert_uint_eq(st.conns, 16);
	ck_assert_uint_eq(W.nsrv, 16);
	ck_assert_uint_eq(st.syncookies_sent, 4);
	/* 4 SYNs and 4 cookie ACKs met the cap; no RST: the peers may retry */
	ck_assert_uint_eq(st.conns_limited, 8);
	ck_assert_uint_eq(st.rst_out, 0);
	ck_assert_uint_eq(st.syncookies_ok, 0);
	/* an active open at the cap fails at once */
	ck_assert_int_eq(tcp_connect(srv(), &l, &r, NULL, srv_ev, NULL, W.now, &extra), -EAGAIN);
	ck_assert_uint_eq(sstats(srv()).conns_limited, 9);

	/* each client sends a few bytes; the 4 over the cap are lost for now */
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(tcp_send(W.cli[i], msg, 5, W.now), 5);
	pump();
	ck_assert_uint_eq(W.srv_readable, 16);
	/* room frees: 4 accepted connections are reset by the service */
	for (i = 0; i < 4; i++) {
		tcp_abort(W.srv[i], W.now);
		W.srv[i] = NULL;
	}
	pump();
	ck_assert_uint_eq(W.cli_reset, 4);
	/* the data retransmission carries the cookie and gets in */
	for (i = 0; i < 10 && W.nsrv < 20; i++)
		advance_ms(1000);
	ck_assert_uint_eq(W.nsrv, 20);
	st = sstats(srv());
	ck_assert_uint_eq(st.syncookies_ok, 4);
	ck_assert_uint_eq(st.conns, 16);
	ck_assert_uint_eq(W.srv_readable, 20);
	for (i = 0, accepted = 0; i < W.nsrv; i++)
		accepted += W.srv[i] != NULL;
	ck_assert_uint_eq(accepted, 16);
}
END_TEST

START_TEST(test_max_half_open)
{
	struct tcp_stack_stats st;
	unsigned int i;

	ck_assert_int_eq(tcp_stack_set_limits(srv(), 0, 4, 0, 0), 0);
	W.side[0].blackhole = true;	/* the SYN-ACKs are lost: half-open stays */
	cli_connect(10);
	pump();
	st = sstats(srv());
	ck_assert_uint_eq(st.half_open, 4);
	ck_assert_uint_eq(st.conns, 4);
	ck_assert_uint_eq(st.synq_overflow, 6);
	ck_assert_uint_eq(st.syncookies_sent, 6);
	ck_assert_uint_eq(W.side[0].lost, 10);	/* 4 SYN-ACKs, 6 cookie SYN-ACKs */
	/* the network heals; the clients' SYN retransmissions complete all 10 */
	W.side[0].blackhole = false;
	for (i = 0; i < 10 && W.nsrv < 10; i++)
		advance_ms(1100);
	ck_assert_uint_eq(W.nsrv, 10);
	ck_assert_uint_eq(W.cli_connected, 10);
	st = sstats(srv());
	ck_assert_uint_eq(st.half_open, 0);
	ck_assert_uint_eq(st.conns, 10);
	ck_assert_uint_ge(st.syncookies_ok, 1);
}
END_TEST

/* A cookie SYN-ACK's TSval (with the option bits) is never ahead of the
 * connection's own clock, at any millisecond: else the peer's PAWS drops
 * the first segments and the connection waits for an RTO (w_emit checks). */
START_TEST(test_cookie_tsval)
{
	struct tcp_seg_in syn;
	unsigned int i;

	ck_assert_int_eq(tcp_stack_set_limits(srv(), 0, 1, 0, 0), 0);
	memset(&syn, 0, sizeof(syn));
	syn.src = ep("10.0.0.99", 0).addr;
	syn.dst = ep("10.0.0.1", 0).addr;
	syn.sport = 999;
	syn.dport = 80;
	syn.seq = 12345;
	syn.flags = TCP_SYN;
	syn.wnd = 65535;
	W.side[0].blackhole = true;	/* a half-open entry that stays */
	tcp_input(srv(), &syn, W.now);
	W.side[0].blackhole = false;
	ck_assert_uint_eq(sstats(srv()).half_open, 1);
	for (i = 0; i < 64; i++) {
		W.now += 1000;
		cli_connect(1);
		pump();
		ck_assert_uint_eq(W.nsrv, i + 1);
		ck_assert_int_eq(tcp_send(W.srv[i], "x", 1, W.now), 1);
		pump();
		ck_assert_uint_eq(tcp_send_space(W.srv[i]) > 0, 1);
	}
	ck_assert_uint_eq(sstats(srv()).syncookies_ok, 64);
	ck_assert_uint_eq(sstats(srv()).retrans_segs, 0);
}
END_TEST

START_TEST(test_max_timewait)
{
	struct tcp_stack_stats st;
	unsigned int i;

	ck_assert_int_eq(tcp_stack_set_limits(srv(), 0, 0, 3, 0), 0);
	W.cli_close_on_fin = true;
	cli_connect(5);
	pump();
	ck_assert_uint_eq(W.nsrv, 5);
	/* a request and an answer each */
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(tcp_send(W.cli[i], "hello", 5, W.now), 5);
	pump();
	ck_assert_uint_gt(sstats(srv()).buf_mem, 0);
	for (i = 0; i < 5; i++) {
		char b[8];

		ck_assert_int_eq(tcp_recv(W.srv[i], b, sizeof(b), W.now), 5);
		ck_assert_int_eq(tcp_send(W.srv[i], "world", 5, W.now), 5);
	}
	/* the server closes first: it holds TIME-WAIT */
	for (i = 0; i < 5; i++)
		tcp_close(W.srv[i], W.now);
	pump();
	st = sstats(srv());
	ck_assert_uint_eq(st.timewait, 3);
	ck_assert_uint_eq(st.timewait_evicted, 2);
	ck_assert_uint_eq(st.conns, 3);
	ck_assert_uint_eq(st.buf_mem, 0);	/* TIME-WAIT holds no ring */
	check_buf_mem(srv());
	ck_assert_uint_eq(sstats(W.side[1].s).conns, 0);
	/* and TIME-WAIT runs out */
	advance_ms(61000);
	st = sstats(srv());
	ck_assert_uint_eq(st.timewait, 0);
	ck_assert_uint_eq(st.conns, 0);
}
END_TEST

START_TEST(test_tcp_mem)
{
	static uint8_t big[200 * 1024];
	struct tcp_stack_stats st;
	struct tcp_conn_info ci;
	unsigned int i;
	ssize_t n;

	/* 1 MiB: 8 receive rings of 128 KiB */
	ck_assert_int_eq(tcp_stack_set_limits(srv(), 0, 0, 0, 1 << 20), 0);
	connect_unread(8);
	st = sstats(srv());
	ck_assert_uint_eq(st.buf_mem, 8 * 128 * 1024);
	ck_assert_uint_eq(st.buf_pressure, 0);
	check_buf_mem(srv());

	/* at the cap: a new connection announces and gets a 16 KiB receive ring */
	cli_connect(2);
	pump();
	ck_assert_uint_eq(W.nsrv, 10);
	ck_assert_uint_eq(sstats(srv()).buf_pressure, 2);
	for (i = 8; i < 10; i++)
		ck_assert_int_gt(tcp_send(W.cli[i], big, sizeof(big), W.now), 0);
	pump();
	tcp_conn_info(W.srv[8], &ci);
	ck_assert_uint_eq(ci.rcvbuf_cap, TCP_BUF_PRESSURE_MIN);
	ck_assert_uint_le(ci.rcvbuf_used, TCP_BUF_PRESSURE_MIN);	/* filled, and no more */
	ck_assert_uint_gt(ci.rcvbuf_used, TCP_BUF_PRESSURE_MIN / 2);
	tcp_conn_info(W.cli[8], &ci);
	ck_assert_uint_le(ci.snd_wnd, TCP_BUF_PRESSURE_MIN);	/* what the peer was told */
	/* a send ring made under pressure is 16 KiB and does not grow */
	n = tcp_send(W.srv[0], big, sizeof(big), W.now);
	ck_assert_int_eq(n, TCP_BUF_PRESSURE_MIN);
	ck_assert_uint_eq(tcp_send_space(W.srv[0]), 0);
	ck_assert_uint_eq(sstats(srv()).buf_pressure, 3);
	pump();
	check_buf_mem(srv());
	st = sstats(srv());
	ck_assert_uint_le(st.buf_mem, (1 << 20) + 3 * TCP_BUF_PRESSURE_MIN);

	/* the readers drain and close: memory comes back, rings grow again */
	for (i = 0; i < 10; i++) {
		tcp_abort(W.srv[i], W.now);
		W.srv[i] = NULL;
	}
	pump();
	ck_assert_uint_eq(sstats(srv()).buf_mem, 0);
	cli_connect(1);
	pump();
	ck_assert_int_gt(tcp_send(W.cli[10], big, sizeof(big), W.now), 0);
	pump();
	tcp_conn_info(W.srv[10], &ci);
	ck_assert_uint_eq(ci.rcvbuf_cap, 128 * 1024);
	check_buf_mem(srv());
	ck_assert_uint_eq(sstats(srv()).buf_pressure, 3);
}
END_TEST

/* Ring memory accounting through growth, retirement and auto-tuning. */
START_TEST(test_tcp_mem_accounting)
{
	static uint8_t big[1 << 20];
	static uint8_t sink[1 << 16];
	unsigned int round;
	struct tcp_conn *c;

	cli_connect(1);
	pump();
	ck_assert_uint_eq(W.nsrv, 1);
	c = W.cli[0];
	for (round = 0; round < 40; round++) {
		tcp_send(c, big, sizeof(big), W.now);
		pump();
		while (tcp_recv(W.srv[0], sink, sizeof(sink), W.now) > 0)
			;
		advance_ms(10);
		check_buf_mem(srv());
		check_buf_mem(W.side[1].s);
	}
	{
		struct tcp_conn_info ci;

		/* the send ring grew (its memory parked whenever all was acknowledged) */
		tcp_conn_info(c, &ci);
		ck_assert_uint_gt(ci.sndbuf_cap, 256 * 1024);
	}
	tcp_abort(W.srv[0], W.now);
	pump();
	ck_assert_uint_eq(sstats(srv()).buf_mem, 0);
	ck_assert_uint_eq(sstats(W.side[1].s).buf_mem, 0);
}
END_TEST

/*
 * A ring grows only within what the cap has left, a parked one too: the
 * total stays within --tcp-mem and the 16 KiB minimum per connection.
 */
START_TEST(test_tcp_mem_growth)
{
	static uint8_t big[1 << 20];
	static uint8_t sink[1 << 16];
	const uint64_t cap = 3 << 19;	/* 1.5 MiB: not a ring size */
	struct tcp_stack *cs = W.side[1].s;
	struct tcp_conn_info ci;
	unsigned int round;
	uint64_t peak = 0;

	ck_assert_int_eq(tcp_stack_set_limits(cs, 0, 0, 0, cap), 0);
	cli_connect(1);
	pump();
	ck_assert_uint_eq(W.nsrv, 1);
	for (round = 0; round < 40; round++) {
		tcp_send(W.cli[0], big, sizeof(big), W.now);
		if (sstats(cs).buf_mem > peak)
			peak = sstats(cs).buf_mem;
		pump();
		while (tcp_recv(W.srv[0], sink, sizeof(sink), W.now) > 0)
			;
		advance_ms(10);
		if (sstats(cs).buf_mem > peak)
			peak = sstats(cs).buf_mem;
		check_buf_mem(cs);
	}
	tcp_conn_info(W.cli[0], &ci);
	ck_assert_uint_le(peak, cap + TCP_BUF_PRESSURE_MIN);
	ck_assert_uint_le(ci.sndbuf_cap, cap);
	ck_assert_uint_ge(ci.sndbuf_cap, 1 << 20);	/* it did grow, up to the cap */
	tcp_abort(W.srv[0], W.now);
	pump();
	ck_assert_uint_eq(sstats(cs).buf_mem, 0);
}
END_TEST

/*
 * The cap is hard on the receive side (as the kernel's tcp_mem[2]): a
 * receive ring parked while the cap had room, with a window of 128 KiB
 * announced, comes back at the 16 KiB minimum once the cap is full, and the
 * in-window bytes past it are dropped and counted rather than the cap
 * crossed. The sender recovers them by retransmission: every byte of 1 MiB
 * arrives, in order and unchanged. (The engine before this took the
 * announced window back: 1 MiB + 128 KiB held at the peak.)
 */
static uint8_t hard_rcv_byte(uint32_t i)
{
	return (uint8_t)(i * 2654435761u >> 24);
}

START_TEST(test_tcp_mem_hard_rcv)
{
	static uint8_t chunk[64 * 1024], sink[1 << 16];
	const uint32_t total = 1 << 20;
	uint32_t sent = 0, got = 0, i, bad = 0;
	struct tcp_stack_stats st;
	struct tcp_conn_info ci;
	unsigned int round;
	ssize_t n;

	ck_assert_int_eq(tcp_stack_set_limits(srv(), 0, 0, 0, 1 << 20), 0);
	cli_connect(1);
	pump();
	ck_assert_uint_eq(W.nsrv, 1);
	ck_assert_int_eq(tcp_send(W.cli[0], chunk, 64 * 1024, W.now), 64 * 1024);
	pump();
	while (tcp_recv(W.srv[0], sink, sizeof(sink), W.now) > 0)
		;
	pump();
	tcp_conn_info(W.srv[0], &ci);
	ck_assert_uint_eq(ci.rcvbuf_held, 0);	/* parked */
	ck_assert_uint_eq(ci.rcvbuf_cap, 128 * 1024);
	tcp_conn_info(W.cli[0], &ci);
	ck_assert_uint_gt(ci.snd_wnd, 64 * 1024);	/* the window the peer may fill */
	/* eight more fill the cap with what their service does not read */
	connect_unread(8);
	ck_assert_uint_eq(sstats(srv()).buf_mem, 1 << 20);
	for (round = 0; round < 3000 && got < total; round++) {
		while (sent < total) {
			uint32_t k = total - sent < sizeof(chunk) ? total - sent : sizeof(chunk);

			for (i = 0; i < k; i++)
				chunk[i] = hard_rcv_byte(sent + i);
			n = tcp_send(W.cli[0], chunk, k, W.now);
			if (n <= 0)
				break;
			sent += (uint32_t)n;
		}
		pump();
		while ((n = tcp_recv(W.srv[0], sink, sizeof(sink), W.now)) > 0) {
			for (i = 0; i < (uint32_t)n; i++)
				bad += sink[i] != hard_rcv_byte(got + i);
			got += (uint32_t)n;
		}
		pump();
		advance_ms(10);
		check_buf_mem(srv());
	}
	ck_assert_uint_eq(got, total);
	ck_assert_uint_eq(bad, 0);
	st = sstats(srv());
	ck_assert_uint_le(st.buf_mem_peak, (1 << 20) + TCP_BUF_PRESSURE_MIN);
	ck_assert_uint_gt(st.drop_rcv_mem, 0);	/* the window was larger than the ring */
	ck_assert_uint_eq(st.drop_rcv_full, 0);
	ck_assert_uint_gt(st.buf_pressure, 0);
	ck_assert_uint_gt(sstats(W.side[1].s).retrans_segs, 0);	/* the peer sent them again */
	tcp_conn_info(W.srv[0], &ci);
	ck_assert_uint_eq(ci.rcvbuf_cap, TCP_BUF_PRESSURE_MIN);
}
END_TEST

/* A connection made near the cap gets the receive ring that still fits. */
START_TEST(test_tcp_mem_partial)
{
	static uint8_t big[200 * 1024];
	const uint64_t cap = (1 << 20) + 64 * 1024;
	struct tcp_conn_info ci;

	ck_assert_int_eq(tcp_stack_set_limits(srv(), 0, 0, 0, cap), 0);
	connect_unread(8);
	ck_assert_uint_eq(sstats(srv()).buf_mem, 8 * 128 * 1024);
	ck_assert_uint_eq(sstats(srv()).buf_pressure, 0);
	cli_connect(1);
	pump();
	ck_assert_uint_eq(W.nsrv, 9);
	ck_assert_int_gt(tcp_send(W.cli[8], big, sizeof(big), W.now), 0);
	pump();
	tcp_conn_info(W.srv[8], &ci);
	ck_assert_uint_eq(ci.rcvbuf_cap, 64 * 1024);
	tcp_conn_info(W.cli[8], &ci);
	ck_assert_uint_le(ci.snd_wnd, 64 * 1024);	/* what the peer was told */
	ck_assert_uint_eq(sstats(srv()).buf_mem, cap);
	ck_assert_uint_eq(sstats(srv()).buf_pressure, 1);
	check_buf_mem(srv());
}
END_TEST

/* ---- stack caps: reassembly memory and neighbour entries ---- */

static struct loop *lp;
static struct stack st;
static struct link *lk;
static int peer_fd = -1;
static struct in_addr a_us, a_peer;

static void s_setup(void)
{
	const struct dpt_link_opts o = { .mode = PROTO_GSO_SW, .addr4 = "10.0.0.2", .prefixlen4 = 16 };

	inet_pton(AF_INET, "10.0.0.2", &a_us);
	inet_pton(AF_INET, "10.0.0.1", &a_peer);
	lk = dpt_stack_up(&lp, &st, &o, &peer_fd);
	ck_assert_int_eq(stack_start(&st), 0);
	link_tx_flush(lk);
	dpt_drain(peer_fd);
}

static void s_teardown(void)
{
	dpt_stack_down(lp, &st, peer_fd);
}

/* A first fragment (MF, offset 0) of UDP datagram @id with @len bytes. */
static void inject_frag(uint16_t id, size_t len)
{
	uint8_t f[1514];
	uint16_t c;

	memset(f, 0, sizeof(f));
	memcpy(f, dpt_our_mac, 6);
	memcpy(f + 6, dpt_peer_mac, 6);
	f[12] = 0x08;
	f[14] = 0x45;
	f[16] = (20 + len) >> 8;
	f[17] = (20 + len) & 0xff;
	f[18] = id >> 8;
	f[19] = id & 0xff;
	f[20] = 0x20;	/* MF */
	f[22] = 64;
	f[23] = IPPROTO_UDP;
	memcpy(f + 26, &a_peer, 4);
	memcpy(f + 30, &a_us, 4);
	c = dpt_ref_sum(f + 14, 20, 0);
	f[24] = c >> 8;
	f[25] = c & 0xff;
	ck_assert_int_eq(send(peer_fd, f, 34 + len, 0), (ssize_t)(34 + len));
	link_rx(&lk->ch[0]);
	link_tx_flush(lk);
}

START_TEST(test_reasm_mem)
{
	struct stack_limits lim = { .reasm_mem = 16 * 1024 };
	unsigned int i;

	ck_assert_uint_eq(ip_reasm_limit(&st), 4u << 20);
	ck_assert_int_eq(limits_apply(&st, &lim), 0);
	ck_assert_uint_eq(ip_reasm_limit(&st), 16 * 1024);
	/* 40 datagrams that never complete, 1480 bytes each: 10 fit */
	for (i = 0; i < 40; i++) {
		inject_frag((uint16_t)(100 + i), 1480);
		ck_assert_uint_le(ip_reasm_bytes(&st), 16 * 1024);
	}
	ck_assert_uint_eq(ip_reasm_queues(&st), 10);
	ck_assert_uint_eq(st.drop[DROP_FRAG_NO_MEMORY], 30);
	ck_assert_uint_gt(ip_reasm_bytes(&st), 10 * 1480);	/* the list nodes count too */
	dpt_drain(peer_fd);
}
END_TEST

START_TEST(test_neigh_max)
{
	struct stack_limits lim = { .neigh_max = 4 };
	union proto_inaddr a;
	unsigned int i;

	ck_assert_uint_eq(neigh_limit(&st), NEIGH_MAX);
	ck_assert_int_eq(limits_apply(&st, &lim), 0);
	ck_assert_uint_eq(neigh_limit(&st), 4);
	/* 6 neighbours talk to us (learned as STALE from their ARP) */
	for (i = 0; i < 6; i++) {
		uint8_t mac[6] = { 0x02, 0, 0, 0, 1, (uint8_t)i };

		a.v4.s_addr = htonl(0x0a000010 + i);
		loop_advance_ms(lp, 10);
		neigh_update(&st, lk, AF_INET, &a, mac, true, true);
		ck_assert_uint_le(neigh_count(&st), 4);
	}
	ck_assert_uint_eq(neigh_count(&st), 4);
	ck_assert_uint_eq(st.ctr[CTR_NEIGH_TABLE_FULL], 2);
	/* the oldest went, the newest are there */
	a.v4.s_addr = htonl(0x0a000010);
	ck_assert_ptr_null(neigh_lookup(&st, AF_INET, &a));
	a.v4.s_addr = htonl(0x0a000015);
	ck_assert_ptr_nonnull(neigh_lookup(&st, AF_INET, &a));
	/* permanent entries are never evicted: with 4 of them a new one fails */
	for (i = 0; i < 4; i++) {
		struct proto_neigh pn = { .family = AF_INET };

		pn.addr.v4.s_addr = htonl(0x0a000020 + i);
		memcpy(pn.lladdr, dpt_peer_mac, 6);
		ck_assert_int_eq(neigh_add_permanent(&st, lk, &pn), 0);
	}
	{
		struct proto_neigh pn = { .family = AF_INET };

		pn.addr.v4.s_addr = htonl(0x0a000030);
		ck_assert_int_eq(neigh_add_permanent(&st, lk, &pn), -ENOSPC);
	}
	ck_assert_uint_eq(neigh_count(&st), 4);
	ck_assert_uint_eq(st.ctr[CTR_NEIGH_TABLE_FULL], 7);
	dpt_drain(peer_fd);
}
END_TEST

START_TEST(test_limits_apply_and_stats)
{
	struct stack_limits lim = { .max_conns = 100, .tcp_mem = 8u << 20, .icmp_rate = 300 };
	struct shard_conf conf = { .virtual_clock = true };
	struct tcp_stack_stats ts;
	struct shards sh;
	char err[256], *text = NULL;
	unsigned int i;
	size_t len = 0;
	struct dp dp;
	FILE *f;

	ck_assert_int_eq(limits_apply(&st, &lim), 0);
	ck_assert_uint_eq(st.limits.max_conns, 100);
	ck_assert_uint_eq(st.limits.max_half_open, TCP_MAX_HALF_OPEN_DEFAULT);
	ck_assert_uint_eq(st.limits.max_timewait, TCP_MAX_TIMEWAIT_DEFAULT);
	ck_assert_uint_eq(st.limits.tcp_mem, 8u << 20);
	ck_assert_uint_eq(st.limits.reasm_mem, 4u << 20);
	ck_assert_uint_eq(st.limits.neigh_max, NEIGH_MAX);
	tcp_stack_stats(tcp_glue_stack(&st), &ts);
	ck_assert_uint_eq(ts.conns, 0);
	/* a shard made with these caps prints each as max/used/hits */
	memset(&dp, 0, sizeof(dp));
	conf.limits = lim;
	ck_assert_msg(shards_init(&sh, &conf, err, sizeof(err)) == 0, "%s", err);
	dp.shards = &sh;
	dp.loop = sh.sh[0]->loop;
	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(stats_print(&dp, f, true), 0);
	fclose(f);
	/* two shards: each its half, shard 0 as the one made after it */
	ck_assert_msg(shards_grow(&sh, 2, err, sizeof(err)) == 0, "%s", err);
	for (i = 0; i < 2; i++) {
		ck_assert_uint_eq(sh.sh[i]->st.limits.max_conns, 50);
		ck_assert_uint_eq(sh.sh[i]->st.limits.max_timewait, TCP_MAX_TIMEWAIT_DEFAULT / 2);
		ck_assert_uint_eq(sh.sh[i]->st.limits.tcp_mem, 4u << 20);
		ck_assert_uint_eq(sh.sh[i]->st.limits.icmp_rate, 150);	/* --icmp-ratelimit */
		ck_assert(sh.sh[i]->st.icmp_rate == 150.0 && sh.sh[i]->st.icmp_burst == 15.0);
		/* what stays whole: a source's flows all reach one shard */
		ck_assert_uint_eq(sh.sh[i]->st.limits.udp_flows_per_source, SVC_UDP_FLOWS_PER_SOURCE_DEFAULT);
	}
	shards_free(&sh);
	ck_assert_ptr_nonnull(strstr(text, "\"limits\":{"));
	ck_assert_ptr_nonnull(strstr(text, "\"tcp_conns\":{\"max\":100,\"used\":0,\"hits\":0}"));
	ck_assert_ptr_nonnull(strstr(text, "\"tcp_mem\":{\"max\":8388608,"));
	ck_assert_ptr_nonnull(strstr(text, "\"reasm_mem\":{\"max\":4194304,"));
	ck_assert_ptr_nonnull(strstr(text, "\"neigh\":{\"max\":512,"));
	free(text);
}
END_TEST

/* ---- the options ---- */

START_TEST(test_limit_parse)
{
	struct stack_limits lim;
	char err[256];

	memset(&lim, 0, sizeof(lim));
	ck_assert_int_eq(limits_parse(&lim, "max-conns", "1000", err, sizeof(err)), 0);
	ck_assert_uint_eq(lim.max_conns, 1000);
	ck_assert_int_eq(limits_parse(&lim, "max-half-open", "64", err, sizeof(err)), 0);
	ck_assert_uint_eq(lim.max_half_open, 64);
	ck_assert_int_eq(limits_parse(&lim, "max-timewait", "10", err, sizeof(err)), 0);
	ck_assert_uint_eq(lim.max_timewait, 10);
	ck_assert_int_eq(limits_parse(&lim, "tcp-mem", "64M", err, sizeof(err)), 0);
	ck_assert_uint_eq(lim.tcp_mem, 64u << 20);
	ck_assert_int_eq(limits_parse(&lim, "tcp-mem", "2G", err, sizeof(err)), 0);
	ck_assert_uint_eq(lim.tcp_mem, 2ull << 30);
	ck_assert_int_eq(limits_parse(&lim, "reasm-mem", "512k", err, sizeof(err)), 0);
	ck_assert_uint_eq(lim.reasm_mem, 512u << 10);
	ck_assert_int_eq(limits_parse(&lim, "reasm-mem", "1048576", err, sizeof(err)), 0);
	ck_assert_uint_eq(lim.reasm_mem, 1u << 20);
	ck_assert_int_eq(limits_parse(&lim, "max-neigh", "64", err, sizeof(err)), 0);
	ck_assert_uint_eq(lim.neigh_max, 64);
	ck_assert_int_eq(limits_parse(&lim, "icmp-ratelimit", "20", err, sizeof(err)), 0);
	ck_assert_uint_eq(lim.icmp_rate, 20);

	ck_assert_int_eq(limits_parse(&lim, "max-conns", "", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "max-conns", "-5", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "max-conns", "12x", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "max-conns", "10M", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "max-conns", "0", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "out of range"));
	ck_assert_int_eq(limits_parse(&lim, "max-neigh", "513", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "icmp-ratelimit", "0", err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--icmp-ratelimit 0: out of range 1..1000000");
	ck_assert_int_eq(limits_parse(&lim, "tcp-mem", "1K", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "tcp-mem", "5T", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "tcp-mem", "99999999999999999999", err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "tcp-mem", "17179869184G", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "max-things", "1", err, sizeof(err)), -ENOENT);
	/* nothing bad was stored */
	ck_assert_uint_eq(lim.max_conns, 1000);
	ck_assert_uint_eq(lim.tcp_mem, 2ull << 30);
	ck_assert_uint_eq(lim.neigh_max, 64);
	ck_assert_uint_eq(lim.icmp_rate, 20);
}
END_TEST

/* A memory limit lowers the caps left to their defaults, and only those. */
START_TEST(test_limits_fit_memory)
{
	char err[128];
	struct stack_limits lim;

	/* 64 MiB: 48 MiB after the base, a quarter to each engine's buffers, half to connections at 4 KiB */
	memset(&lim, 0, sizeof(lim));
	ck_assert(limits_fit_memory(&lim, 64ull << 20));
	ck_assert_uint_eq(lim.tcp_mem, 12ull << 20);
	ck_assert_uint_eq(lim.max_conns, (24u << 20) / 4096);
	ck_assert_uint_eq(lim.max_timewait, lim.max_conns / 2);
	ck_assert_uint_eq(lim.max_half_open, 0);	/* not a memory cap: the default stays */
	/* given on the command line: kept, even above what fits */
	memset(&lim, 0, sizeof(lim));
	ck_assert_int_eq(limits_parse(&lim, "max-conns", "50000", err, sizeof(err)), 0);
	ck_assert(limits_fit_memory(&lim, 64ull << 20));
	ck_assert_uint_eq(lim.max_conns, 50000);
	ck_assert_uint_eq(lim.tcp_mem, 12ull << 20);
	ck_assert_uint_eq(lim.max_timewait, 0);	/* half of 50000 is above the default */
	/* less than the base: the smallest budget, never zero */
	memset(&lim, 0, sizeof(lim));
	ck_assert(limits_fit_memory(&lim, 16ull << 20));
	ck_assert_uint_eq(lim.tcp_mem, 2ull << 20);
	ck_assert_uint_gt(lim.max_conns, 16);
	/* a limit the defaults fit in: nothing changes */
	memset(&lim, 0, sizeof(lim));
	ck_assert(!limits_fit_memory(&lim, 64ull << 30));
	ck_assert_uint_eq(lim.tcp_mem, 0);
	ck_assert_uint_eq(lim.max_conns, 0);
	ck_assert_uint_eq(lim.max_timewait, 0);
}
END_TEST

static Suite *caps_suite(void)
{
	Suite *s = suite_create("datapath_caps");
	TCase *tc;

#define ADD(name, fn, su, td) do { tc = tcase_create(name); tcase_add_checked_fixture(tc, su, td); \
		tcase_add_test(tc, fn); suite_add_tcase(s, tc); } while (0)
	ADD("max_conns", test_max_conns, w_setup, w_teardown);
	ADD("max_half_open", test_max_half_open, w_setup, w_teardown);
	ADD("max_timewait", test_max_timewait, w_setup, w_teardown);
	ADD("cookie_tsval", test_cookie_tsval, w_setup, w_teardown);
	ADD("tcp_mem", test_tcp_mem, w_setup, w_teardown);
	ADD("tcp_mem_accounting", test_tcp_mem_accounting, w_setup, w_teardown);
	ADD("tcp_mem_growth", test_tcp_mem_growth, w_setup, w_teardown);
	ADD("tcp_mem_hard_rcv", test_tcp_mem_hard_rcv, w_setup, w_teardown);
	ADD("tcp_mem_partial", test_tcp_mem_partial, w_setup, w_teardown);
	ADD("reasm_mem", test_reasm_mem, s_setup, s_teardown);
	ADD("neigh_max", test_neigh_max, s_setup, s_teardown);
	ADD("limits_apply_and_stats", test_limits_apply_and_stats, s_setup, s_teardown);
	tc = tcase_create("limit_parse");
	tcase_add_test(tc, test_limit_parse);
	tcase_add_test(tc, test_limits_fit_memory);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(caps_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
