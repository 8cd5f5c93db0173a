// SPDX-License-Identifier: MIT
/*
 * test_datapath_tcp_peer.c - the TCP engine against peers that misbehave,
 * and ECN (RFC 3168)
 *
 * The peer is tests/unit/tcp_harness.h's: hand-built segments in, every
 * emitted segment checked. A misbehaving peer (one that reneges on its
 * SACKs, D-SACKs everything, acknowledges data never sent, shrinks its
 * window, or echoes ECE on every ACK) must not stall a connection for good,
 * corrupt a byte or make the engine hold more than it should: each case
 * runs a transfer to its end and checks what arrived. ECN: the negotiation
 * both ways, the receiver's echo until CWR, the sender's one reduction per
 * window, CWR alone on its segment, ECT only on new data.
 */
#include "tests/unit/tcp_harness.h"

/* What the peer received in order, and how it answers (bulk_peer()). */
static struct {
	uint32_t rcv_nxt;
	uint8_t data[1 << 20];	/* the bytes at O0 + i */
	bool ece_always;	/* ECE on every ACK */
	bool dsack_always;	/* a D-SACK block below the ACK on every ACK */
	bool shrink;		/* the window closes and opens every other round */
	unsigned int rounds;
} P;

/*
 * One round trip of a bulk transfer: the peer takes every segment we sent
 * in order (at most what it allowed), then answers each (a probe too) with
 * an ACK with the twists set. Return: the segments with data it got.
 */
static unsigned int bulk_peer(void)
{
	unsigned int n = 0;

	H.now += 10 * MS;
	P.rounds++;
	while (H.ncap) {
		struct cap *c = pop_seg();
		struct tcp_seg_in s;
		uint32_t off = c->h.seq - O0;

		if (c->h.len && c->h.seq == O0 + P.rcv_nxt && off + c->h.len <= sizeof(P.data)) {
			memcpy(P.data + off, c->data, c->h.len);
			P.rcv_nxt += (uint32_t)c->h.len;
		}
		n += c->h.len > 0;
		if (P.shrink)
			H.peer_wnd = P.rounds % 2 ? 0 : 4096;
		s = pseg(TCP_ACK | (P.ece_always ? TCP_ECE : 0), P0, O0 + P.rcv_nxt, NULL, 0);
		if (P.dsack_always && P.rcv_nxt > 1448) {
			/* a duplicate report of data it had, never resent by us */
			s.opts.nsack = 1;
			s.opts.sack[0].start = O0 + P.rcv_nxt - 1448;
			s.opts.sack[0].end = O0 + P.rcv_nxt - 1000;
		}
		tcp_input(H.s, &s, H.now);
	}
	if (!n)
		run_until(tcp_next_deadline(H.s) == UINT64_MAX ? H.now : tcp_next_deadline(H.s));
	return n;
}

/* Send @len bytes of a pattern through bulk_peer() rounds; check they all arrived intact. */
static void bulk_transfer(size_t len, unsigned int max_rounds)
{
	static uint8_t d[1 << 20];
	size_t sent = 0;
	unsigned int r;

	ck_assert_uint_le(len, sizeof(d));
	fill(d, len, 9);
	for (r = 0; r < max_rounds && P.rcv_nxt < len; r++) {
		ssize_t w = sent < len ? tcp_send(H.conn, d + sent, len - sent, H.now) : 0;

		if (w > 0)
			sent += (size_t)w;
		bulk_peer();
	}
	ck_assert_msg(P.rcv_nxt == len, "the peer got %u of %zu bytes in %u rounds", P.rcv_nxt, len, r);
	ck_assert(!memcmp(P.data, d, len));
}

static void peer_reset(void)
{
	memset(&P, 0, sizeof(P));
}

/* ---- ECN ---- */

/* A SYN with ECE and CWR asks (RFC 3168 6.1.1); we accept with ECE on the SYN-ACK, unless ECN is off. */
START_TEST(test_ecn_passive_negotiation)
{
	struct tcp_conn_info info;

	h_listen();
	in(TCP_SYN | TCP_ECE | TCP_CWR, H.peer_iss, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK | TCP_ECE, H.cfg.isn_fixed, P0, 0);
	in(TCP_ACK, P0, O0, NULL, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert(info.ecn);
	tcp_abort(H.conn, H.now);
	h_drain();
	tcp_listener_close(H.lis);
	/* off: a plain SYN-ACK */
	H.lopts.ecn = TCP_ECN_OFF;
	H.peer_iss += 100000;
	h_listen();
	in(TCP_SYN | TCP_ECE | TCP_CWR, H.peer_iss, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, H.cfg.isn_fixed, P0, 0);
	in(TCP_ACK, P0, O0, NULL, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert(!info.ecn);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * An active open asks only in mode "on"; ECE without CWR on the SYN-ACK
 * agrees, ECE with CWR (a peer that only echoes flags) does not.
 */
START_TEST(test_ecn_active_negotiation)
{
	struct tcp_endpoint l = ep("10.0.0.1", 5555), r = ep("10.0.0.2", 40000);
	struct tcp_conn_opts o;
	struct tcp_conn_info info;

	memset(&o, 0, sizeof(o));
	H.our_port = 5555;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, &o, h_event, &H, H.now, &H.conn), 0);
	expect_seg(TCP_SYN, H.cfg.isn_fixed, 0, 0);	/* accept (the default): not asked */
	tcp_abort(H.conn, H.now);
	h_drain();
	o.ecn = TCP_ECN_ON;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, &o, h_event, &H, H.now, &H.conn), 0);
	expect_seg(TCP_SYN | TCP_ECE | TCP_CWR, H.cfg.isn_fixed, 0, 0);
	in(TCP_SYN | TCP_ACK | TCP_ECE, H.peer_iss, O0, NULL, 0);
	expect_seg(TCP_ACK, O0, P0, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert(info.ecn);
	tcp_abort(H.conn, H.now);
	h_drain();
	r.port = 40001;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, &o, h_event, &H, H.now, &H.conn), 0);
	expect_seg(TCP_SYN | TCP_ECE | TCP_CWR, H.cfg.isn_fixed, 0, 0);
	{
		struct tcp_seg_in s = pseg(TCP_SYN | TCP_ACK | TCP_ECE | TCP_CWR, H.peer_iss, O0, NULL, 0);

		s.sport = 40001;
		tcp_input(H.s, &s, H.now);
	}
	expect_seg(TCP_ACK, O0, P0, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert(!info.ecn);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

static void establish_ecn(void)
{
	h_listen();
	in(TCP_SYN | TCP_ECE | TCP_CWR, H.peer_iss, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK | TCP_ECE, H.cfg.isn_fixed, P0, 0);
	H.now += 10 * MS;
	in(TCP_ACK, P0, O0, NULL, 0);
	expect_none();
}

/* The receiver: CE on data starts ECE on every ACK, at once; CWR ends it. */
START_TEST(test_ecn_receiver_echoes_until_cwr)
{
	struct tcp_conn_info info;
	struct tcp_seg_in s;
	uint8_t d[100] = { 0 };

	establish_ecn();
	s = pseg(TCP_ACK, P0, O0, d, 100);
	s.ecn = TCP_ECN_CE;
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_ACK | TCP_ECE, O0, P0 + 100, 0);	/* at once, echoing */
	s = pseg(TCP_ACK, P0 + 100, O0, d, 100);
	s.ecn = TCP_ECN_ECT0;
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_ACK | TCP_ECE, O0, P0 + 200, 0);	/* still, until CWR */
	s = pseg(TCP_ACK | TCP_CWR, P0 + 200, O0, d, 100);
	s.ecn = TCP_ECN_ECT0;
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_ACK, O0, P0 + 300, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.ce_rcvd, 1);
	/* CE on a connection without ECN is nobody's business */
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * The sender: new data leaves ECT(0); an ECN echo reduces cwnd once for the
 * window (more echoes for the same window do nothing), the next new segment
 * carries CWR alone (one MSS even with GSO), and a retransmission is never
 * ECN-capable.
 */
START_TEST(test_ecn_sender_reduces_once_per_window)
{
	static uint8_t d[30 * 1448];
	struct tcp_conn_info info;
	struct tcp_seg_in s;
	struct cap *c;
	int i;

	H.lopts.no_pacing = true;
	H.lopts.gso_max_bytes = 65535;
	establish_ecn();
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	c = pop_seg();	/* one GSO segment of the initial window */
	ck_assert_uint_eq(c->h.len, 10 * 1448);
	ck_assert_uint_eq(c->h.ecn, TCP_ECN_ECT0);
	ck_assert(!(c->h.flags & (TCP_CWR | TCP_ECE)));
	expect_none();
	H.now += 10 * MS;
	for (i = 1; i <= 3; i++) {
		s = pseg(TCP_ACK | TCP_ECE, P0, O0 + i * 1448, NULL, 0);
		tcp_input(H.s, &s, H.now);
	}
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.ecn_reductions, 1);
	ck_assert_uint_eq(info.ece_rcvd, 3);
	ck_assert_uint_eq(info.cwnd, 7);	/* CUBIC: 10 x 0.7 */
	expect_none();	/* 7 in flight: cwnd is full */
	in(TCP_ACK, P0, O0 + 5 * 1448, NULL, 0);
	c = pop_seg();	/* the first new data after the reduction: CWR, alone */
	ck_assert(c->h.flags & TCP_CWR);
	ck_assert_uint_eq(c->h.len, 1448);
	ck_assert_uint_eq(c->h.seq, O0 + 10 * 1448);
	ck_assert_uint_eq(c->h.ecn, TCP_ECN_ECT0);
	while (H.ncap) {
		c = pop_seg();
		ck_assert(!(c->h.flags & TCP_CWR));
	}
	/* ECE up to the CWR segment is about the marks already answered */
	s = pseg(TCP_ACK | TCP_ECE, P0, O0 + 10 * 1448, NULL, 0);
	tcp_input(H.s, &s, H.now);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.ecn_reductions, 1);
	/* ECE on an ACK that covers the CWR segment: a new mark, a new reduction */
	s = pseg(TCP_ACK | TCP_ECE, P0, O0 + 11 * 1448, NULL, 0);
	tcp_input(H.s, &s, H.now);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.ecn_reductions, 2);
	h_drain();
	/* a retransmission (the RTO) is not ECN-capable */
	run_until(tcp_next_deadline(H.s) + 1000 * MS);
	while (H.ncap) {
		c = pop_seg();
		if (c->h.len && c->h.seq < O0 + 20 * 1448)
			ck_assert_uint_eq(c->h.ecn, TCP_ECN_NOT_ECT);
	}
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/* ---- misbehaving peers ---- */

/*
 * ECE on every ACK: the sender reduces at most once per window and never
 * below two segments, and the transfer completes intact.
 */
START_TEST(test_peer_ece_on_every_ack)
{
	struct tcp_conn_info info;

	peer_reset();
	P.ece_always = true;
	establish_ecn();
	bulk_transfer(256 << 10, 2000);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_ge(info.cwnd, 2);
	ck_assert_uint_gt(info.ecn_reductions, 0);
	ck_assert_uint_le(info.ecn_reductions, P.rounds);
	ck_assert_uint_eq(info.stats.retrans_segs, 0);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * D-SACKs on every ACK for data never retransmitted: nothing to undo,
 * RACK's reordering window grows no further than SRTT, and the transfer
 * completes intact without a retransmission.
 */
START_TEST(test_peer_dsacks_everything)
{
	struct tcp_conn_info info;

	peer_reset();
	P.dsack_always = true;
	establish_passive_rtt(10 * MS);
	bulk_transfer(256 << 10, 2000);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_gt(info.dsacks_rx, 10);
	ck_assert_uint_eq(info.undos, 0);
	ck_assert_uint_eq(info.stats.retrans_segs, 0);
	ck_assert_uint_le(info.rack_reo_wnd_us, info.srtt_us > 1000 ? info.srtt_us : 1000);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * A window that closes and opens every other round trip, the right edge
 * moving left with data in flight beyond it: the sender waits (persist)
 * and goes on; nothing is lost or stalls.
 */
START_TEST(test_peer_shrinks_window)
{
	struct tcp_conn_info info;

	peer_reset();
	P.shrink = true;
	establish_passive_rtt(10 * MS);
	bulk_transfer(128 << 10, 4000);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.bytes_acked, 128 << 10);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * ACKs for data never sent (RFC 5961 5.2) are dropped with a challenge ACK,
 * every time, and change nothing: the transfer after them completes.
 */
START_TEST(test_peer_acks_unsent_data)
{
	struct tcp_stack_stats st;
	int i;

	peer_reset();
	establish_passive_rtt(10 * MS);
	for (i = 0; i < 5; i++) {
		in(TCP_ACK, P0, O0 + 100000 + i, NULL, 0);
		expect_seg(TCP_ACK, O0, P0, 0);
	}
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.drop_bad_ack, 5);
	bulk_transfer(64 << 10, 1000);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * Reneging (RFC 2018 8): the peer SACKs segments 2-10, then acknowledges
 * segment 1 with a block that starts at the new snd_una: it threw away what
 * it had SACKed. The scoreboard is forgotten, and the RTO resends 2-10
 * instead of waiting for ever for data the peer does not have.
 */
START_TEST(test_peer_reneges_sack)
{
	struct tcp_conn_info info;
	struct tcp_stack_stats st;
	unsigned int resent = 0;

	H.lopts.no_pacing = true;
	establish_passive_rtt(10 * MS);
	send_ten();
	in_sack(O0, O0 + 1448, O0 + 10 * 1448);	/* 1 missing, 2-10 SACKed */
	expect_seg(TCP_ACK, O0, P0, 1448);	/* RACK: 1 is lost */
	expect_none();
	H.now += 10 * MS;
	in_sack(O0 + 1448, O0 + 1448, O0 + 10 * 1448);	/* "2-10" at snd_una: reneged */
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.sack_reneges, 1);
	h_drain();
	/* the peer says nothing more; the timers resend what it threw away */
	while (resent < 9 && tcp_next_deadline(H.s) != UINT64_MAX && H.now < 1000 * SEC + 30 * SEC) {
		run_until(tcp_next_deadline(H.s));
		while (H.ncap) {
			struct cap *c = pop_seg();

			if (c->h.len && c->h.seq >= O0 + 1448)
				resent++;
		}
	}
	ck_assert_uint_ge(resent, 9);
	in(TCP_ACK, P0, O0 + 10 * 1448, NULL, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.bytes_acked, 10 * 1448);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

static Suite *peer_suite(void)
{
	Suite *s = suite_create("datapath_tcp_peer");
	TCase *tc;

#define ADD(name, fn) do { tc = tcase_create(name); tcase_add_checked_fixture(tc, setup, teardown); \
	tcase_add_test(tc, fn); suite_add_tcase(s, tc); } while (0)
	ADD("ecn_passive_negotiation", test_ecn_passive_negotiation);
	ADD("ecn_active_negotiation", test_ecn_active_negotiation);
	ADD("ecn_receiver_echoes_until_cwr", test_ecn_receiver_echoes_until_cwr);
	ADD("ecn_sender_reduces_once_per_window", test_ecn_sender_reduces_once_per_window);
	ADD("peer_ece_on_every_ack", test_peer_ece_on_every_ack);
	ADD("peer_dsacks_everything", test_peer_dsacks_everything);
	ADD("peer_shrinks_window", test_peer_shrinks_window);
	ADD("peer_acks_unsent_data", test_peer_acks_unsent_data);
	ADD("peer_reneges_sack", test_peer_reneges_sack);
#undef ADD
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(peer_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
