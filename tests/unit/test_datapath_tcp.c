// SPDX-License-Identifier: MIT
/*
 * test_datapath_tcp.c - the TCP engine driven by hand-built segments: the
 * state machine, options, windows, loss recovery, timers (the peer and its
 * checks are tests/unit/tcp_harness.h; misbehaving peers and ECN are in
 * test_datapath_tcp_peer.c)
 */
#include "tests/unit/tcp_harness.h"

/* ---- options ---- */

START_TEST(test_opts_roundtrip)
{
	struct tcp_opts o = { 0 }, p;
	uint8_t buf[40];
	int n;

	o.has_mss = true;
	o.mss = 1460;
	o.sack_perm = true;
	o.has_ts = true;
	o.ts_val = 0x01020304;
	o.ts_ecr = 0xa0b0c0d0;
	o.has_wscale = true;
	o.wscale = 7;
	n = tcp_opts_write(&o, buf, sizeof(buf));
	ck_assert_int_eq(n, 20);
	ck_assert_int_eq(tcp_opts_parse(buf, (size_t)n, &p), 0);
	ck_assert(p.has_mss && p.mss == 1460 && p.sack_perm && p.has_ts && p.ts_val == 0x01020304 &&
		  p.ts_ecr == 0xa0b0c0d0 && p.has_wscale && p.wscale == 7 && p.nsack == 0);

	memset(&o, 0, sizeof(o));
	o.has_ts = true;
	o.nsack = 3;
	o.sack[0].start = 1;
	o.sack[0].end = 2;
	o.sack[2].start = 0xfffffff0;
	o.sack[2].end = 0x10;
	n = tcp_opts_write(&o, buf, sizeof(buf));
	ck_assert_int_eq(n, 40);
	ck_assert_int_eq(tcp_opts_parse(buf, (size_t)n, &p), 0);
	ck_assert_uint_eq(p.nsack, 3);
	ck_assert_uint_eq(p.sack[2].start, 0xfffffff0);
	ck_assert_uint_eq(p.sack[2].end, 0x10);
	o.nsack = 4;	/* 12 + 36 > 40 */
	ck_assert_int_eq(tcp_opts_write(&o, buf, sizeof(buf)), -ENOSPC);
}
END_TEST

START_TEST(test_opts_malformed)
{
	static const uint8_t zero_len[] = { 2, 0, 5, 0 };
	static const uint8_t overrun[] = { 1, 1, 8, 10, 0, 0 };
	static const uint8_t trunc_kind[] = { 1, 1, 1, 2 };
	static const uint8_t big_ws[] = { 3, 3, 30, 0 };
	static const uint8_t bad_sack[] = { 5, 7, 0, 0, 0, 0, 0, 0 };
	struct tcp_opts p;

	ck_assert_int_eq(tcp_opts_parse(zero_len, sizeof(zero_len), &p), -EINVAL);
	ck_assert_int_eq(tcp_opts_parse(overrun, sizeof(overrun), &p), -EINVAL);
	ck_assert_int_eq(tcp_opts_parse(trunc_kind, sizeof(trunc_kind), &p), -EINVAL);
	ck_assert_int_eq(tcp_opts_parse(big_ws, sizeof(big_ws), &p), 0);
	ck_assert_uint_eq(p.wscale, 14);	/* RFC 7323 2.3 */
	ck_assert_int_eq(tcp_opts_parse(bad_sack, sizeof(bad_sack), &p), 0);
	ck_assert_uint_eq(p.nsack, 0);
	ck_assert_int_eq(tcp_opts_parse(bad_sack, 41, &p), -EINVAL);
}
END_TEST

START_TEST(test_malformed_input)
{
	struct tcp_stack_stats st;
	struct tcp_seg_in s;

	s = pseg(TCP_SYN, 1, 0, NULL, 0);
	s.src.family = AF_INET6;
	ck_assert_int_eq(tcp_input(H.s, &s, H.now), -EINVAL);
	s = pseg(TCP_SYN | TCP_FIN, 1, 0, NULL, 0);
	ck_assert_int_eq(tcp_input(H.s, &s, H.now), -EINVAL);
	s = pseg(TCP_SYN | TCP_RST, 1, 0, NULL, 0);
	ck_assert_int_eq(tcp_input(H.s, &s, H.now), -EINVAL);
	s = pseg(TCP_ACK, 1, 0, NULL, 10);	/* length without data */
	ck_assert_int_eq(tcp_input(H.s, &s, H.now), -EINVAL);
	s = pseg(TCP_ACK, 1, 0, NULL, 0);
	s.sport = 0;
	ck_assert_int_eq(tcp_input(H.s, &s, H.now), -EINVAL);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.drop_malformed, 5);
	expect_none();
}
END_TEST

/* ---- opening ---- */

START_TEST(test_active_open)
{
	struct tcp_endpoint l = ep("10.0.0.1", 5555), r = ep("10.0.0.2", 40000);
	struct tcp_conn_info info;
	struct cap *c;

	H.our_port = 5555;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &H.conn), 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_SYN_SENT);
	c = expect_seg(TCP_SYN, OUR_ISS, 0, 0);
	ck_assert(c->h.opts.has_mss && c->h.opts.mss == 1460);
	ck_assert(c->h.opts.has_wscale && c->h.opts.wscale == 7);
	ck_assert(c->h.opts.sack_perm && c->h.opts.has_ts && c->h.opts.ts_ecr == 0);
	ck_assert_uint_eq(c->h.wnd, 65535);
	ck_assert_uint_eq(c->h.sport, 5555);
	ck_assert_uint_eq(c->h.dport, 40000);
	ck_assert(!memcmp(&c->h.dst.a, &r.addr.a, 16));
	in(TCP_SYN | TCP_ACK, PEER_ISS, OUR_ISS + 1, NULL, 0);
	c = expect_seg(TCP_ACK, OUR_ISS + 1, PEER_ISS + 1, 0);
	ck_assert(c->h.opts.has_ts && c->h.opts.ts_ecr == 100);
	ck_assert_uint_eq(c->h.wnd, 131072 >> 7);
	ck_assert(saw_event(TCP_EV_CONNECTED, 0));
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.snd_mss, 1448);
	ck_assert_uint_eq(info.snd_wscale, 7);
	ck_assert_uint_eq(info.rcv_wscale, 7);
	ck_assert(info.sack && info.ts);
	ck_assert_uint_eq(info.snd_wnd, 65535);	/* a SYN's window is not scaled */
	ck_assert_uint_eq(info.rto_us, 200000);	/* RFC 6298 with the 200 ms floor */
	ck_assert_str_eq(info.cc, "cubic");
	ck_assert_uint_eq(info.cwnd, 10);
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_active_open_no_options)
{
	struct tcp_conn_info info;

	H.peer_ts = false;
	H.peer_sack = false;
	H.peer_wscale = 0xff;
	establish_active(NULL);
	tcp_conn_info(H.conn, &info);
	ck_assert(!info.sack && !info.ts);
	ck_assert_uint_eq(info.snd_wscale, 0);
	ck_assert_uint_eq(info.rcv_wscale, 0);
	ck_assert_uint_eq(info.snd_mss, 1460);
	ck_assert_uint_eq(info.snd_wnd, 65535);
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_passive_open)
{
	struct tcp_conn_info info;
	struct cap *c;

	h_listen();
	in(TCP_SYN, PEER_ISS, 0, NULL, 0);
	c = expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, PEER_ISS + 1, 0);
	ck_assert(c->h.opts.has_mss && c->h.opts.has_wscale && c->h.opts.sack_perm && c->h.opts.has_ts);
	ck_assert_uint_eq(c->h.opts.ts_ecr, 100);
	ck_assert_ptr_null(H.conn);
	in(TCP_ACK, PEER_ISS + 1, OUR_ISS + 1, NULL, 0);
	expect_none();
	ck_assert_ptr_nonnull(H.conn);
	tcp_conn_info(H.conn, &info);
	ck_assert_int_eq(info.state, TCPS_ESTABLISHED);
	ck_assert_uint_eq(info.local.port, 80);
	ck_assert_uint_eq(info.remote.port, 40000);
	tcp_close(H.conn, H.now);
	expect_seg(TCP_FIN | TCP_ACK, O0, P0, 0);
}
END_TEST

START_TEST(test_synack_retransmit_and_timeout)
{
	struct tcp_stack_stats st;
	unsigned int n = 0;

	h_listen();
	in(TCP_SYN, PEER_ISS, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, PEER_ISS + 1, 0);
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + SEC);
	/* a retransmitted SYN gets the SYN-ACK again */
	in(TCP_SYN, PEER_ISS, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, PEER_ISS + 1, 0);
	while (tcp_next_deadline(H.s) != UINT64_MAX && n < 20) {
		run_until(tcp_next_deadline(H.s));
		if (H.ncap) {
			expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, PEER_ISS + 1, 0);
			n++;
		}
	}
	ck_assert_uint_eq(n, 5);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.conns, 0);
	ck_assert_ptr_null(H.conn);
}
END_TEST

START_TEST(test_accept_refused)
{
	H.accept_ret = -ECONNREFUSED;
	h_listen();
	in(TCP_SYN, PEER_ISS, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, PEER_ISS + 1, 0);
	in(TCP_ACK, PEER_ISS + 1, OUR_ISS + 1, NULL, 0);
	expect_seg(TCP_RST | TCP_ACK, OUR_ISS + 1, PEER_ISS + 1, 0);
}
END_TEST

START_TEST(test_syn_received_bad_ack)
{
	h_listen();
	in(TCP_SYN, PEER_ISS, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, PEER_ISS + 1, 0);
	in(TCP_ACK, PEER_ISS + 1, OUR_ISS + 77, NULL, 0);
	expect_seg(TCP_RST, OUR_ISS + 77, 0, 0);
	ck_assert_ptr_null(H.conn);
	/* RST for the half-open connection removes it */
	in(TCP_RST, PEER_ISS + 1, 0, NULL, 0);
	expect_none();
}
END_TEST

START_TEST(test_syn_sent_rst_refused)
{
	struct tcp_endpoint l = ep("10.0.0.1", 5555), r = ep("10.0.0.2", 40000);

	H.our_port = 5555;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &H.conn), 0);
	expect_seg(TCP_SYN, OUR_ISS, 0, 0);
	in(TCP_RST | TCP_ACK, 0, OUR_ISS + 5, NULL, 0);	/* unacceptable ACK: ignored */
	expect_none();
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_SYN_SENT);
	in(TCP_RST | TCP_ACK, 0, OUR_ISS + 1, NULL, 0);
	expect_none();
	ck_assert(saw_event(TCP_EV_RESET, -ECONNREFUSED));
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_CLOSED);
	ck_assert_int_eq(tcp_recv(H.conn, (char[4]){ 0 }, 4, H.now), -ENOTCONN);
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_syn_sent_bad_ack)
{
	struct tcp_endpoint l = ep("10.0.0.1", 5555), r = ep("10.0.0.2", 40000);

	H.our_port = 5555;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &H.conn), 0);
	expect_seg(TCP_SYN, OUR_ISS, 0, 0);
	in(TCP_SYN | TCP_ACK, PEER_ISS, OUR_ISS + 1000, NULL, 0);
	expect_seg(TCP_RST, OUR_ISS + 1000, 0, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_SYN_SENT);
	tcp_abort(H.conn, H.now);
	expect_none();	/* no RST for a SYN-SENT abort */
}
END_TEST

/*
 * A challenge ACK to our SYN (a peer's TIME-WAIT on this 4-tuple finds our
 * ISN or timestamp older): RST at its ACK number, and the SYN again at once,
 * not after the 1 s RTO; only once per connection.
 */
START_TEST(test_syn_sent_challenge_ack)
{
	struct tcp_endpoint l = ep("10.0.0.1", 5555), r = ep("10.0.0.2", 40000);
	struct tcp_stack_stats st;

	H.our_port = 5555;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &H.conn), 0);
	expect_seg(TCP_SYN, OUR_ISS, 0, 0);
	in(TCP_ACK, 77777, 999999, NULL, 0);
	expect_seg(TCP_RST, 999999, 0, 0);
	expect_seg(TCP_SYN, OUR_ISS, 0, 0);	/* now, not at +1 s */
	expect_none();
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_SYN_SENT);
	in(TCP_ACK, 77777, 999999, NULL, 0);
	expect_seg(TCP_RST, 999999, 0, 0);	/* the second: the timer's business */
	expect_none();
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.syn_challenged, 1);
	in(TCP_SYN | TCP_ACK, PEER_ISS, OUR_ISS + 1, NULL, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_ESTABLISHED);
	tcp_close(H.conn, H.now);
}
END_TEST

/*
 * tcp_reset_probe(): a bare SYN on a 4-tuple this stack has no connection
 * on; the peer's challenge ACK then meets the ordinary answer to a segment
 * nobody wants: a RST at its ACK number, which the peer takes.
 */
START_TEST(test_reset_probe)
{
	struct tcp_endpoint l = ep("10.0.0.1", 5555), r = ep("10.0.0.2", 40000);
	struct tcp_stack_stats st;
	struct cap *c;

	H.our_port = 5555;
	tcp_reset_probe(H.s, &l, &r, H.now);
	c = expect_seg(TCP_SYN, OUR_ISS, 0, 0);
	ck_assert_uint_eq(c->h.sport, 5555);
	ck_assert_uint_eq(c->h.dport, 40000);
	ck_assert(!c->h.opts.has_mss && !c->h.opts.has_ts);
	ck_assert_int_eq(in(TCP_ACK, 31337, 424242, NULL, 0), -ENOENT);	/* the challenge ACK */
	expect_seg(TCP_RST, 424242, 0, 0);
	expect_none();
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.reset_probes, 1);
	ck_assert_uint_eq(st.conns, 0);
}
END_TEST

/*
 * The secret keys ISNs and timestamp offsets: two stacks with the same one
 * (a datapath and the one its supervisor starts after it) give a 4-tuple
 * the same ISN at the same time, and a later one a larger ISN and a newer
 * timestamp, which a kernel's TIME-WAIT takes; the key cannot change under
 * a connection.
 */
START_TEST(test_secret_across_stacks)
{
	struct tcp_endpoint l = ep("10.0.0.1", 5555), r = ep("10.0.0.2", 40000);
	struct tcp_stack *b;
	uint8_t key[16];
	struct cap *c1, *c2;
	uint32_t isn1, tsv1;

	tcp_stack_free(H.s);
	H.cfg.isn_fixed = 0;
	h_start();
	memset(key, 0x5a, sizeof(key));
	ck_assert_int_eq(tcp_stack_set_secret(H.s, key), 0);
	H.our_port = 5555;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &H.conn), 0);
	c1 = pop_seg();
	ck_assert_uint_eq(c1->h.flags, TCP_SYN);
	isn1 = c1->h.seq;
	tsv1 = c1->h.opts.ts_val;
	ck_assert_int_eq(tcp_stack_set_secret(H.s, key), -EBUSY);
	tcp_abort(H.conn, H.now);
	H.conn = NULL;
	h_drain();

	/* the next datapath, 2 s later, the same key: newer on both counts */
	b = tcp_stack_new(&H.cfg);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(tcp_stack_set_secret(b, key), 0);
	H.now += 2 * SEC;
	ck_assert_int_eq(tcp_connect(b, &l, &r, NULL, h_event, &H, H.now, &H.conn), 0);
	c2 = pop_seg();
	ck_assert_uint_eq(c2->h.flags, TCP_SYN);
	ck_assert_uint_eq(c2->h.seq - isn1, (uint32_t)(2 * SEC / 4));
	ck_assert_uint_eq(c2->h.opts.ts_val - tsv1, 2000);
	tcp_abort(H.conn, H.now);
	H.conn = NULL;
	tcp_stack_free(b);
}
END_TEST

/*
 * Ring memory that stays warm (tcp_pool.c): a receive ring read empty and a
 * send ring acknowledged empty give their memory to the pool and keep their
 * capacity; the next bytes take the same buffer back (a pool hit, no new
 * mapping); a pool left unused is trimmed after 10 s; an idle connection
 * holds no ring memory.
 */
START_TEST(test_pool_park_and_reuse)
{
	struct tcp_conn_info ci;
	struct tcp_stack_stats st;
	uint8_t data[1000], got[1000];
	uint64_t maps;

	fill(data, sizeof(data), 3);
	establish_passive();
	in(TCP_ACK | TCP_PSH, P0, O0, data, sizeof(data));
	tcp_conn_info(H.conn, &ci);
	ck_assert_uint_eq(ci.rcvbuf_held, ci.rcvbuf_cap);
	ck_assert_uint_eq(tcp_recv(H.conn, got, sizeof(got), H.now), sizeof(got));
	ck_assert_mem_eq(got, data, sizeof(data));
	tcp_conn_info(H.conn, &ci);
	ck_assert_uint_eq(ci.rcvbuf_held, 0);		/* read empty: parked */
	ck_assert_uint_eq(ci.rcvbuf_cap, 128 * 1024);	/* its size kept */
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.buf_mem, 0);
	ck_assert_uint_eq(st.pool_cached, 128 * 1024);
	maps = st.pool_maps;

	/* the next bytes take the warm buffer back */
	in(TCP_ACK | TCP_PSH, P0 + 1000, O0, data, sizeof(data));
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.pool_maps, maps);
	ck_assert_uint_ge(st.pool_hits, 1);
	ck_assert_uint_eq(st.pool_cached, 0);
	ck_assert_uint_eq(tcp_recv(H.conn, got, sizeof(got), H.now), sizeof(got));
	ck_assert_mem_eq(got, data, sizeof(data));
	h_drain();

	/* a send ring acknowledged empty parks too, once the link let go of it */
	ck_assert_int_eq(tcp_send(H.conn, data, sizeof(data), H.now), sizeof(data));
	expect_seg(TCP_ACK | TCP_PSH, O0, P0 + 2000, sizeof(data));
	tcp_conn_info(H.conn, &ci);
	ck_assert_uint_eq(ci.sndbuf_held, ci.sndbuf_cap);
	in(TCP_ACK, P0 + 2000, O0 + sizeof(data), NULL, 0);
	tcp_conn_info(H.conn, &ci);
	ck_assert_uint_eq(ci.sndbuf_held, 0);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.buf_mem, 0);
	ck_assert_uint_eq(st.pool_cached, 128 * 1024);	/* the send ring is retired until tx_done */
	tcp_stack_tx_done(H.s);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_gt(st.pool_cached, 128 * 1024);

	/* unused for 10 s: given back */
	ck_assert_uint_le(tcp_next_deadline(H.s), H.now + SEC);
	run_until(H.now + 11 * SEC);
	run_until(H.now + SEC);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.pool_cached, 0);
	ck_assert_uint_gt(st.pool_trimmed, 128 * 1024);
	h_drain();
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_syn_retries)
{
	struct tcp_endpoint l = ep("10.0.0.1", 5555), r = ep("10.0.0.2", 40000);
	uint64_t start = H.now, expect_t = H.now;
	unsigned int n = 0;

	H.our_port = 5555;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &H.conn), 0);
	expect_seg(TCP_SYN, OUR_ISS, 0, 0);
	while (!saw_event(TCP_EV_RESET, 0) && n < 20) {
		expect_t += SEC << n;	/* 1 s, 2 s, 4 s ... (RFC 6298 5.5) */
		ck_assert_uint_eq(tcp_next_deadline(H.s), expect_t);
		run_until(tcp_next_deadline(H.s));
		if (H.ncap) {
			expect_seg(TCP_SYN, OUR_ISS, 0, 0);
			n++;
		}
	}
	ck_assert_uint_eq(n, 6);
	ck_assert(saw_event(TCP_EV_RESET, -ETIMEDOUT));
	ck_assert_uint_eq(H.now - start, 127 * SEC);
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_simultaneous_open)
{
	struct tcp_endpoint l = ep("10.0.0.1", 5555), r = ep("10.0.0.2", 40000);

	H.our_port = 5555;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &H.conn), 0);
	expect_seg(TCP_SYN, OUR_ISS, 0, 0);
	in(TCP_SYN, PEER_ISS, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, PEER_ISS + 1, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_SYN_RECEIVED);
	in(TCP_SYN | TCP_ACK, PEER_ISS, OUR_ISS + 1, NULL, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_ESTABLISHED);
	ck_assert(saw_event(TCP_EV_CONNECTED, 0));
	h_drain();
	ck_assert_int_eq(tcp_send(H.conn, "hi", 2, H.now), 2);
	expect_seg(TCP_PSH | TCP_ACK, OUR_ISS + 1, PEER_ISS + 1, 2);
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_no_listener_rst)
{
	struct tcp_stack_stats st;

	ck_assert_int_eq(in(TCP_SYN, 1000, 0, NULL, 0), -ENOENT);
	expect_seg(TCP_RST | TCP_ACK, 0, 1001, 0);
	ck_assert_int_eq(in(TCP_ACK, 1000, 777, NULL, 0), -ENOENT);
	expect_seg(TCP_RST, 777, 0, 0);
	ck_assert_int_eq(in(TCP_ACK | TCP_FIN, 1000, 777, "abc", 3), -ENOENT);
	expect_seg(TCP_RST, 777, 0, 0);
	ck_assert_int_eq(in(TCP_RST, 1000, 0, NULL, 0), -ENOENT);
	expect_none();	/* never answer a RST */
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.drop_no_socket, 4);
	ck_assert_uint_eq(st.rst_out, 3);
}
END_TEST

START_TEST(test_ipv6_open)
{
	struct tcp_endpoint l = ep("fd00::1", 5555), r = ep("fd00::2", 40000);
	struct tcp_conn_info info;
	struct tcp_seg_in s;
	struct cap *c;

	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &H.conn), 0);
	c = expect_seg(TCP_SYN, OUR_ISS, 0, 0);
	ck_assert_uint_eq(c->h.src.family, AF_INET6);
	s = pseg(TCP_SYN | TCP_ACK, PEER_ISS, OUR_ISS + 1, NULL, 0);
	s.src = r.addr;
	s.dst = l.addr;
	s.dport = 5555;
	s.opts.has_mss = false;	/* default MSS for IPv6 is 1220 */
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_ACK, OUR_ISS + 1, PEER_ISS + 1, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.snd_mss, 1220 - 12);
	tcp_abort(H.conn, H.now);
	expect_seg(TCP_RST | TCP_ACK, OUR_ISS + 1, PEER_ISS + 1, 0);
}
END_TEST

/* ---- data ---- */

START_TEST(test_data_in)
{
	char buf[16];
	struct cap *c;

	establish_passive();
	ck_assert_int_eq(tcp_recv(H.conn, buf, sizeof(buf), H.now), -EAGAIN);
	in(TCP_ACK | TCP_PSH, P0, O0, "hello", 5);
	c = expect_seg(TCP_ACK, O0, P0 + 5, 0);	/* quick ACK at the start */
	ck_assert_uint_eq(c->h.wnd, (131072 - 5) >> 7);	/* rounded down: never more than fits */
	ck_assert(saw_event(TCP_EV_READABLE, 0));
	ck_assert_int_eq(tcp_recv(H.conn, buf, sizeof(buf), H.now), 5);
	ck_assert(!memcmp(buf, "hello", 5));
	/* duplicate: ACKed at once with a D-SACK, not delivered twice */
	in(TCP_ACK | TCP_PSH, P0, O0, "hello", 5);
	c = expect_seg(TCP_ACK, O0, P0 + 5, 0);
	ck_assert_uint_eq(c->h.opts.nsack, 1);
	ck_assert_uint_eq(c->h.opts.sack[0].start, P0);
	ck_assert_uint_eq(c->h.opts.sack[0].end, P0 + 5);
	ck_assert_int_eq(tcp_recv(H.conn, buf, sizeof(buf), H.now), -EAGAIN);
	/* partly old, partly new */
	in(TCP_ACK, P0 + 3, O0, "loworld", 7);
	expect_seg(TCP_ACK, O0, P0 + 10, 0);
	ck_assert_int_eq(tcp_recv(H.conn, buf, sizeof(buf), H.now), 5);
	ck_assert(!memcmp(buf, "world", 5));
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_peek_consume)
{
	struct iovec iov[2];

	establish_passive();
	in(TCP_ACK, P0, O0, "abcdef", 6);
	h_drain();
	ck_assert_int_eq(tcp_peek(H.conn, iov), 1);
	ck_assert_uint_eq(iov[0].iov_len, 6);
	ck_assert(!memcmp(iov[0].iov_base, "abcdef", 6));
	ck_assert_int_eq(tcp_consume(H.conn, 7, H.now), -EINVAL);
	ck_assert_int_eq(tcp_consume(H.conn, 2, H.now), 0);
	ck_assert_int_eq(tcp_peek(H.conn, iov), 1);
	ck_assert(!memcmp(iov[0].iov_base, "cdef", 4));
	tcp_abort(H.conn, H.now);
	expect_seg(TCP_RST | TCP_ACK, O0, P0 + 6, 0);
}
END_TEST

/* A sink (tcp_conn_set_sink()) that takes up to S.room bytes. */
static struct {
	uint8_t buf[1024];
	size_t len, room;
	unsigned int calls;
} S;

static size_t h_sink(struct tcp_conn *c, void *user, const void *data, size_t len)
{
	ck_assert_ptr_eq(user, &H);
	ck_assert_ptr_eq(c, H.conn);
	S.calls++;
	if (len > S.room)
		len = S.room;
	ck_assert_uint_le(S.len + len, sizeof(S.buf));
	memcpy(S.buf + S.len, data, len);
	S.len += len;
	S.room -= len;
	return len;
}

/* The sink was not asked since @calls, and the ring holds @n bytes: @want. */
static void sink_passed_by(unsigned int calls, const uint8_t *want, size_t n)
{
	uint8_t out[800];

	h_drain();
	ck_assert_uint_eq(S.calls, calls);
	ck_assert_uint_le(n, sizeof(out));
	ck_assert_int_eq(tcp_recv(H.conn, out, sizeof(out), H.now), (int)n);
	ck_assert(!memcmp(out, want, n));
}

START_TEST(test_sink_takes_in_order)
{
	uint8_t d[800];
	struct tcp_stack_stats st;
	struct iovec iov[2];
	unsigned int calls;
	struct cap *c;

	fill(d, sizeof(d), 3);
	memset(&S, 0, sizeof(S));
	establish_passive();
	tcp_conn_set_sink(H.conn, h_sink);
	S.room = 250;
	/* all of it to the sink: ACKed, nothing stored, nothing to read */
	in(TCP_ACK, P0, O0, d, 100);
	c = expect_seg(TCP_ACK, O0, P0 + 100, 0);
	ck_assert_uint_eq(c->h.wnd, 131072 >> 7);	/* the ring's whole room */
	ck_assert_uint_eq(S.len, 100);
	ck_assert(!saw_event(TCP_EV_READABLE, 0));
	ck_assert_int_eq(tcp_peek(H.conn, iov), 0);
	/* it takes part: the rest waits in the ring, readable */
	in(TCP_ACK, P0 + 100, O0, d + 100, 200);
	expect_seg(TCP_ACK, O0, P0 + 300, 0);
	ck_assert_uint_eq(S.len, 250);
	ck_assert(saw_event(TCP_EV_READABLE, 0));
	/* while bytes wait in the ring the sink is not asked: the order holds */
	S.room = sizeof(S.buf) - S.len;
	calls = S.calls;
	in(TCP_ACK, P0 + 300, O0, d + 300, 100);
	sink_passed_by(calls, d + 250, 150);
	/* out of order, then the hole: both go to the ring, where the rest waits */
	in(TCP_ACK, P0 + 500, O0, d + 500, 100);
	in(TCP_ACK, P0 + 400, O0, d + 400, 100);
	sink_passed_by(calls, d + 400, 200);
	/* read empty: the sink takes the next bytes again */
	in(TCP_ACK, P0 + 600, O0, d + 600, 100);
	h_drain();
	ck_assert_uint_eq(S.calls, calls + 1);
	ck_assert_uint_eq(S.len, 350);
	ck_assert(!memcmp(S.buf, d, 250));
	ck_assert(!memcmp(S.buf + 250, d + 600, 100));
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.rcv_sunk_bytes, 350);
	/* a new user has no sink until it sets one */
	tcp_conn_set_user(H.conn, h_event, &H);
	in(TCP_ACK, P0 + 700, O0, d + 700, 100);
	sink_passed_by(calls + 1, d + 700, 100);
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

/* A sink that takes everything and keeps nothing (bulk bytes, counted). */
static size_t h_sink_all(struct tcp_conn *c, void *user, const void *data, size_t len)
{
	(void)c;
	(void)user;
	(void)data;
	S.calls++;
	S.len += len;
	return len;
}

/*
 * tcp_conn_ack_at_push(): the ACK for bytes the sink took waits for
 * tcp_push(), one for all of them; it leaves at once for out-of-order data
 * and once half the offered window is used, the delayed-ACK timer sends it
 * if no push comes, and a new user's ACKs do not wait.
 */
START_TEST(test_ack_waits_for_push)
{
	static uint8_t d[72000];
	struct tcp_stack_stats st;
	uint8_t out[400];
	uint32_t at;

	fill(d, sizeof(d), 7);
	memset(&S, 0, sizeof(S));
	establish_passive();
	tcp_conn_set_sink(H.conn, h_sink_all);
	tcp_conn_ack_at_push(H.conn);
	/* quick-ACK mode would answer each of these at once */
	in(TCP_ACK, P0, O0, d, 100);
	in(TCP_ACK, P0 + 100, O0, d + 100, 100);
	in(TCP_ACK, P0 + 200, O0, d + 200, 100);
	expect_none();
	ck_assert_uint_eq(S.len, 300);
	tcp_push(H.conn, H.now);
	expect_seg(TCP_ACK, O0, P0 + 300, 0);
	expect_none();
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.acks_at_push, 3);

	/* out of order: at once, and the segment that fills the hole too */
	in(TCP_ACK, P0 + 400, O0, d + 400, 100);
	expect_seg(TCP_ACK, O0, P0 + 300, 0);
	in(TCP_ACK, P0 + 300, O0, d + 300, 100);
	expect_seg(TCP_ACK, O0, P0 + 500, 0);
	/* those two went to the ring; the sink is asked again once it is read */
	ck_assert_int_eq(tcp_recv(H.conn, out, sizeof(out), H.now), 200);
	ck_assert(!memcmp(out, d + 300, 200));
	h_drain();

	/* two segments, an ACK due, and no push: the delayed-ACK timer sends it */
	S.calls = 0;
	in(TCP_ACK, P0 + 500, O0, d + 500, 1000);
	in(TCP_ACK, P0 + 1500, O0, d + 1500, 1000);
	ck_assert_uint_eq(S.calls, 2);
	expect_none();
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_ge(st.acks_at_push, 4);
	run_until(H.now + SEC / 2);
	expect_seg(TCP_ACK, O0, P0 + 2500, 0);
	expect_none();

	/* half the offered window (128 KiB) taken since the last ACK: at once */
	for (at = 2500; at - 2500 + 1000 < 65536; at += 1000)
		in(TCP_ACK, P0 + at, O0, d + at, 1000);
	expect_none();
	in(TCP_ACK, P0 + at, O0, d + at, 1000);
	expect_seg(TCP_ACK, O0, P0 + at + 1000, 0);
	expect_none();
	at += 1000;

	/* a new user: its ACKs do not wait */
	tcp_conn_set_user(H.conn, h_event, &H);
	tcp_conn_set_sink(H.conn, h_sink_all);
	in(TCP_ACK, P0 + at, O0, d + at, 1000);
	in(TCP_ACK, P0 + at + 1000, O0, d + at + 1000, 1000);
	expect_seg(TCP_ACK, O0, P0 + at + 2000, 0);
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

/* tcp_send_more() queues and sends nothing; tcp_push() sends it as one. */
START_TEST(test_send_more_then_push)
{
	uint8_t d[1000];
	struct cap *c;

	fill(d, sizeof(d), 5);
	establish_passive();
	ck_assert_int_eq(tcp_send_more(H.conn, d, 400, H.now), 400);
	ck_assert_int_eq(tcp_send_more(H.conn, d + 400, 600, H.now), 600);
	expect_none();
	tcp_push(H.conn, H.now);
	c = expect_seg(TCP_ACK | TCP_PSH, O0, P0, 1000);
	ck_assert(!memcmp(c->data, d, 1000));
	expect_none();
	tcp_shutdown_write(H.conn, H.now);
	h_drain();
	ck_assert_int_eq(tcp_send_more(H.conn, d, 10, H.now), -EPIPE);
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_delayed_ack)
{
	uint8_t d[100] = { 0 };
	uint32_t seq;
	int i;

	establish_passive();
	seq = P0;
	for (i = 0; i < 16; i++) {	/* quick-ACK mode */
		in(TCP_ACK, seq, O0, d, 100);
		seq += 100;
		expect_seg(TCP_ACK, O0, seq, 0);
	}
	in(TCP_ACK, seq, O0, d, 100);
	seq += 100;
	expect_none();
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 40 * MS);
	run_until(H.now + 40 * MS);
	expect_seg(TCP_ACK, O0, seq, 0);
	/* every second segment is ACKed at once */
	in(TCP_ACK, seq, O0, d, 100);
	seq += 100;
	expect_none();
	in(TCP_ACK, seq, O0, d, 100);
	seq += 100;
	expect_seg(TCP_ACK, O0, seq, 0);
	ck_assert_uint_eq(tcp_next_deadline(H.s), UINT64_MAX);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_data_out)
{
	uint8_t d[4000];
	struct tcp_conn_info info;
	struct cap *c;

	fill(d, sizeof(d), 1);
	establish_passive();
	ck_assert_int_eq(tcp_send(H.conn, d, 1000, H.now), 1000);
	c = expect_seg(TCP_ACK | TCP_PSH, O0, P0, 1000);
	ck_assert(!memcmp(c->data, d, 1000));
	ck_assert_uint_eq(c->h.gso_size, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_gt(info.records_held, 0);	/* a record per segment in flight */
	ck_assert_int_eq(tcp_send(H.conn, d + 1000, 3000, H.now), 3000);
	c = expect_seg(TCP_ACK, O0 + 1000, P0, 1448);
	ck_assert(!memcmp(c->data, d + 1000, 1448));
	expect_seg(TCP_ACK, O0 + 2448, P0, 1448);
	c = expect_seg(TCP_ACK | TCP_PSH, O0 + 3896, P0, 104);
	ck_assert(!memcmp(c->data, d + 3896, 104));
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 10 * MS);	/* the tail loss probe, before the RTO */
	in(TCP_ACK, P0, O0 + 4000, NULL, 0);
	expect_none();
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.bytes_acked, 4000);
	ck_assert_uint_eq(info.unacked_bytes, 0);
	ck_assert_uint_eq(info.sndbuf_used, 0);
	ck_assert_uint_eq(info.cwnd, 10);	/* application-limited: no growth */
	ck_assert_uint_eq(info.records_held, 0);	/* nothing in flight: an idle connection holds none */
	ck_assert_uint_eq(tcp_next_deadline(H.s), UINT64_MAX);
	/* sending again grows them back, and the data leaves as before */
	ck_assert_int_eq(tcp_send(H.conn, d, 1000, H.now), 1000);
	expect_seg(TCP_ACK | TCP_PSH, O0 + 4000, P0, 1000);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_gt(info.records_held, 0);
	in(TCP_ACK, P0, O0 + 5000, NULL, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.bytes_acked, 5000);
	ck_assert_uint_eq(info.records_held, 0);
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_gso_segments)
{
	static uint8_t d[100000];
	struct cap *c;

	fill(d, sizeof(d), 3);
	H.lopts.gso_max_bytes = 65536;
	establish_passive();
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	/* initial cwnd: 10 MSS, as one segment the link splits */
	c = expect_seg(TCP_ACK, O0, P0, 14480);
	ck_assert_uint_eq(c->h.gso_size, 1448);
	ck_assert(!memcmp(c->data, d, 14480));
	expect_none();
	in(TCP_ACK, P0, O0 + 14480, NULL, 0);
	/* cwnd 20: 28960 bytes, still cut at MSS multiples */
	c = expect_seg(TCP_ACK, O0 + 14480, P0, 28960);
	ck_assert_uint_eq(c->h.gso_size, 1448);
	in(TCP_ACK, P0, O0 + 14480 + 28960, NULL, 0);
	/* cwnd 40: the GSO limit now cuts, to a multiple of the MSS */
	c = expect_seg(TCP_ACK | TCP_PSH, O0 + 43440, P0, sizeof(d) - 43440);	/* the tail, not cut */
	ck_assert_uint_eq(c->h.gso_size, 1448);
	ck_assert(!memcmp(c->data, d + 43440, sizeof(d) - 43440));
	tcp_send(H.conn, d, sizeof(d), H.now);
	in(TCP_ACK, P0, O0 + sizeof(d), NULL, 0);
	c = expect_seg(TCP_ACK, O0 + sizeof(d), P0, 65160);	/* the GSO limit cuts, at an MSS multiple */
	ck_assert_uint_eq(c->h.gso_size, 1448);
	ck_assert_uint_eq(c->h.iovcnt, 1);
	h_drain();
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_sndbuf_backpressure)
{
	static uint8_t d[100000];
	ssize_t n;

	H.lopts.sndbuf_max = 16384;
	establish_passive();
	n = tcp_send(H.conn, d, sizeof(d), H.now);
	ck_assert_int_eq(n, 16384);
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), 0);
	ck_assert_uint_eq(tcp_send_space(H.conn), 0);
	h_drain();
	ck_assert(!saw_event(TCP_EV_WRITABLE, 0));
	in(TCP_ACK, P0, O0 + 14480, NULL, 0);
	ck_assert(saw_event(TCP_EV_WRITABLE, 0));
	expect_seg(TCP_ACK, O0 + 14480, P0, 1448);
	expect_seg(TCP_ACK | TCP_PSH, O0 + 14480 + 1448, P0, 16384 - 14480 - 1448);
	ck_assert_uint_eq(tcp_send_space(H.conn), 14480);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * The borrow rule (tcp_pool.c): a retransmission that the ACK made spurious
 * is still queued in the link when the service sends again; the ring space
 * its bytes sit in is not free until the link flushed. tcp_send() takes
 * only the rest, and WRITABLE follows the flush; the queued segment leaves
 * with the bytes it was emitted with.
 */
START_TEST(test_lent_bytes_stay)
{
	static uint8_t d[16384], e[16384];
	struct tcp_stack_stats st;
	unsigned int i;
	ssize_t n;
	bool found = false;

	fill(d, sizeof(d), 1);
	fill(e, sizeof(e), 2);
	H.lopts.sndbuf_max = 16384;
	H.lend = true;
	establish_passive();
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), 16384);
	h_drain();
	h_tx_done();			/* the first flight left */
	in(TCP_ACK, P0, O0 + 7240, NULL, 0);	/* 5 of 10 acknowledged: the rest of the data goes */
	h_drain();
	h_tx_done();
	/* the retransmission timer resends from O0 + 7240; before the link
	 * flushed, the ACK for everything up to O0 + 14480 comes in */
	run_until(H.now + 3 * SEC);
	for (i = 0; i < H.nlent; i++)
		found |= H.lent[i].seq == O0 + 7240;
	ck_assert_msg(found, "no retransmission from O0 + 7240 queued");
	in(TCP_ACK, P0, O0 + 14480, NULL, 0);
	/* the ring holds the last 1904 bytes; O0 + 7240 .. O0 + 14480 are lent */
	ck_assert_uint_eq(tcp_send_space(H.conn), 16384 - 1904 - 7240);
	n = tcp_send(H.conn, e, sizeof(e), H.now);
	ck_assert_int_eq(n, 16384 - 1904 - 7240);
	h_lent_intact();
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.snd_lent_limited, 1);
	ck_assert(!saw_event(TCP_EV_WRITABLE, 0));
	/* the link flushed: the next timer run says WRITABLE at once */
	h_tx_done();
	ck_assert_uint_le(tcp_next_deadline(H.s), H.now);
	run_until(H.now);
	ck_assert(saw_event(TCP_EV_WRITABLE, 0));
	ck_assert_uint_eq(tcp_send_space(H.conn), 7240);
	ck_assert_int_eq(tcp_send(H.conn, e + n, 7240, H.now), 7240);
	h_lent_intact();
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/* A ring that grew or parked leaves the loan on its old memory: no limit. */
START_TEST(test_lent_old_ring_no_limit)
{
	static uint8_t d[1000];
	struct tcp_stack_stats st;

	fill(d, sizeof(d), 4);
	H.lend = true;
	establish_passive();
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	/* acknowledged before the link flushed: the ring parks (its memory
	 * retired until tcp_stack_tx_done()), and the next send takes a new one */
	in(TCP_ACK, P0, O0 + sizeof(d), NULL, 0);
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	h_lent_intact();
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.snd_lent_limited, 0);
	h_tx_done();
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_nagle)
{
	H.lopts.nagle = true;
	establish_passive();
	ck_assert_int_eq(tcp_send(H.conn, "0123456789", 10, H.now), 10);
	expect_seg(TCP_ACK | TCP_PSH, O0, P0, 10);
	ck_assert_int_eq(tcp_send(H.conn, "abcdefghij", 10, H.now), 10);
	expect_none();	/* a small segment waits while data is unacked */
	in(TCP_ACK, P0, O0 + 10, NULL, 0);
	expect_seg(TCP_ACK | TCP_PSH, O0 + 10, P0, 10);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_no_nagle_default)
{
	establish_passive();
	ck_assert_int_eq(tcp_send(H.conn, "0123456789", 10, H.now), 10);
	expect_seg(TCP_ACK | TCP_PSH, O0, P0, 10);
	ck_assert_int_eq(tcp_send(H.conn, "abcdefghij", 10, H.now), 10);
	expect_seg(TCP_ACK | TCP_PSH, O0 + 10, P0, 10);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_ooo_reassembly)
{
	uint8_t d[300], out[300];
	struct cap *c;

	fill(d, sizeof(d), 9);
	establish_passive();
	in(TCP_ACK, P0 + 200, O0, d + 200, 100);
	c = expect_seg(TCP_ACK, O0, P0, 0);
	ck_assert_uint_eq(c->h.opts.nsack, 1);
	ck_assert_uint_eq(c->h.opts.sack[0].start, P0 + 200);
	ck_assert_uint_eq(c->h.opts.sack[0].end, P0 + 300);
	in(TCP_ACK, P0 + 100, O0, d + 100, 50);
	c = expect_seg(TCP_ACK, O0, P0, 0);
	ck_assert_uint_eq(c->h.opts.nsack, 2);
	ck_assert_uint_eq(c->h.opts.sack[0].start, P0 + 100);	/* the latest first */
	ck_assert_uint_eq(c->h.opts.sack[1].start, P0 + 200);
	ck_assert(!saw_event(TCP_EV_READABLE, 0));
	in(TCP_ACK, P0, O0, d, 150);	/* fills up to 150 */
	c = expect_seg(TCP_ACK, O0, P0 + 150, 0);
	ck_assert_uint_eq(c->h.opts.nsack, 1);
	in(TCP_ACK, P0 + 140, O0, d + 140, 70);	/* overlaps both sides */
	c = expect_seg(TCP_ACK, O0, P0 + 300, 0);
	ck_assert_uint_eq(c->h.opts.nsack, 1);	/* RFC 2883 D-SACK: [140, 150) came twice */
	ck_assert_uint_eq(c->h.opts.sack[0].start, P0 + 140);
	ck_assert_uint_eq(c->h.opts.sack[0].end, P0 + 150);
	in(TCP_ACK, P0 + 300, O0, NULL, 0);
	ck_assert_uint_eq(H.ncap, 0);	/* reported once */
	ck_assert_int_eq(tcp_recv(H.conn, out, sizeof(out), H.now), 300);
	ck_assert(!memcmp(out, d, 300));
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

/* The blocks of an ACK, as "start-end ..." relative to P0. */
static const char *sack_str(const struct cap *c)
{
	static char buf[128];
	size_t n = 0;
	unsigned int i;

	buf[0] = 0;
	for (i = 0; i < c->h.opts.nsack; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%u-%u", i ? " " : "",
				      c->h.opts.sack[i].start - P0, c->h.opts.sack[i].end - P0);
	return buf;
}

/* the longest an out-of-order ACK waits (SACK compression: at most 1 ms) */
#define COMP_SACK_WAIT	(1 * MS)

/*
 * RFC 2018 4: after the block of the latest arrival, the blocks that
 * changed most recently, so that each is in the ACKs after its last change
 * (three of them, with timestamps), not the lowest ones. Five ranges arrive
 * in order, then the second grows, then a segment joins the third and the
 * fourth.
 */
START_TEST(test_sack_blocks_most_recent)
{
	uint8_t d[1000] = { 0 };
	struct cap *c = NULL;
	int i;

	establish_passive();
	/* each ACK after the third for one rcv_nxt waits for the compression timer */
	for (i = 1; i <= 5; i++) {
		in(TCP_ACK, P0 + 1000 * i, O0, d, 100);
		run_until(H.now + COMP_SACK_WAIT);
		c = expect_seg(TCP_ACK, O0, P0, 0);
	}
	ck_assert_uint_eq(c->h.opts.nsack, 3);	/* timestamps: room for three */
	ck_assert_str_eq(sack_str(c), "5000-5100 4000-4100 3000-3100");
	in(TCP_ACK, P0 + 2100, O0, d, 100);
	run_until(H.now + COMP_SACK_WAIT);
	c = expect_seg(TCP_ACK, O0, P0, 0);
	ck_assert_str_eq(sack_str(c), "2000-2200 5000-5100 4000-4100");
	in(TCP_ACK, P0 + 3100, O0, d, 900);	/* 3000-4100 now one range */
	run_until(H.now + COMP_SACK_WAIT);
	c = expect_seg(TCP_ACK, O0, P0, 0);
	ck_assert_str_eq(sack_str(c), "3000-4100 2000-2200 5000-5100");
	in(TCP_ACK, P0, O0, d, 1000);	/* the first hole filled: 1000-1100 is in order now */
	c = expect_seg(TCP_ACK, O0, P0 + 1100, 0);
	ck_assert_str_eq(sack_str(c), "3000-4100 2000-2200 5000-5100");
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * SACK compression (Linux's tcp_comp_sack_*): for one rcv_nxt the first
 * three out-of-order segments are ACKed at once (the sender's duplicate
 * ACKs), the next ones together: after 1/20 of the RTT (at most 1 ms), or
 * at once on the 44th; the ACK then carries the newest blocks. Filling the
 * hole ACKs at once, and the count starts again for the new rcv_nxt.
 */
START_TEST(test_sack_compression)
{
	struct tcp_stack_stats st;
	uint8_t d[100] = { 0 };
	struct cap *c;
	uint64_t t0;
	int i;

	establish_passive_rtt(10 * MS);	/* RTT 10 ms: the timer is 0.5 ms */
	for (i = 1; i <= 3; i++) {
		in(TCP_ACK, P0 + 100 * i, O0, d, 100);
		expect_seg(TCP_ACK, O0, P0, 0);	/* at once */
	}
	t0 = H.now;
	for (i = 4; i <= 10; i++)
		in(TCP_ACK, P0 + 100 * i, O0, d, 100);
	expect_none();
	run_until(t0 + 10 * MS / 20 - 1);
	expect_none();
	run_until(t0 + 10 * MS / 20);
	c = expect_seg(TCP_ACK, O0, P0, 0);	/* one for the seven */
	ck_assert_str_eq(sack_str(c), "100-1100");
	expect_none();
	/* the 44th held back goes at once */
	for (i = 11; i <= 53; i++)
		in(TCP_ACK, P0 + 100 * i, O0, d, 100);
	expect_none();
	in(TCP_ACK, P0 + 5400, O0, d, 100);
	c = expect_seg(TCP_ACK, O0, P0, 0);
	ck_assert_str_eq(sack_str(c), "100-5500");
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.acks_compressed, 6 + 43);	/* the ACKs not sent */
	/* the hole filled: ACKed at once, and a new hole gets three at once again */
	in(TCP_ACK, P0, O0, d, 100);
	expect_seg(TCP_ACK, O0, P0 + 5500, 0);
	for (i = 1; i <= 3; i++) {
		in(TCP_ACK, P0 + 5500 + 100 * i, O0, d, 100);
		expect_seg(TCP_ACK, O0, P0 + 5500, 0);
	}
	in(TCP_ACK, P0 + 5900, O0, d, 100);	/* 5600-5900 grows: held */
	expect_none();
	/*
	 * A range that is not one of the newest two changes: the held ACK
	 * leaves first, with the blocks as they were, then this one's waits.
	 * (Else 5600-6000's growth would go unreported while the ranges below
	 * change, and come later as SACKed below newer data.)
	 */
	in(TCP_ACK, P0 + 6200, O0, d, 100);	/* a new range: held, the newest two now */
	expect_none();
	in(TCP_ACK, P0 + 6400, O0, d, 100);	/* a third: the held ACK first */
	c = expect_seg(TCP_ACK, O0, P0 + 5500, 0);
	ck_assert_str_eq(sack_str(c), "6200-6300 5600-6000");
	expect_none();
	run_until(H.now + COMP_SACK_WAIT);
	c = expect_seg(TCP_ACK, O0, P0 + 5500, 0);
	ck_assert_str_eq(sack_str(c), "6400-6500 6200-6300 5600-6000");
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_ooo_bounded)
{
	struct tcp_stack_stats st;
	uint8_t d[10] = { 0 };
	int i;

	establish_passive();
	for (i = 0; i < 520; i++)	/* 520 disjoint ranges; 512 are kept (TCP_RANGES_MAX) */
		in(TCP_ACK, P0 + 100 + 20 * i, O0, d, 10);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.drop_ooo_full, 8);
	h_drain();
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_out_of_window_data)
{
	struct tcp_stack_stats st;

	establish_passive();
	in(TCP_ACK, P0 + 200000, O0, "x", 1);
	expect_seg(TCP_ACK, O0, P0, 0);
	in(TCP_ACK, P0 - 5000, O0, "x", 1);
	expect_seg(TCP_ACK, O0, P0, 0);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.drop_out_of_window, 2);
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

/* A SYN to a listener whose receive ring is @bytes and never grows; its SYN-ACK. */
static struct cap *syn_to_fixed_ring(uint32_t bytes)
{
	H.lopts.rcvbuf_init = bytes;
	H.lopts.rcvbuf_max = bytes;
	h_listen();
	in(TCP_SYN, PEER_ISS, 0, NULL, 0);
	return expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, P0, 0);
}

START_TEST(test_window_update_on_read)
{
	static uint8_t d[4096], out[4096];
	struct cap *c;

	c = syn_to_fixed_ring(4096);
	ck_assert_uint_eq(c->h.wnd, 4096);
	ck_assert_uint_eq(c->h.opts.wscale, 0);
	in(TCP_ACK, P0, O0, NULL, 0);
	in(TCP_ACK, P0, O0, d, 1448);
	c = expect_seg(TCP_ACK, O0, P0 + 1448, 0);
	ck_assert_uint_eq(c->h.wnd, 4096 - 1448);
	in(TCP_ACK, P0 + 1448, O0, d, 1448);
	expect_seg(TCP_ACK, O0, P0 + 2896, 0);
	in(TCP_ACK, P0 + 2896, O0, d, 1200);
	c = expect_seg(TCP_ACK, O0, P0 + 4096, 0);
	ck_assert_uint_eq(c->h.wnd, 0);
	/* a byte beyond the closed window is not taken */
	in(TCP_ACK, P0 + 4096, O0, "z", 1);
	c = expect_seg(TCP_ACK, O0, P0 + 4096, 0);
	ck_assert_uint_eq(c->h.wnd, 0);
	ck_assert_int_eq(tcp_recv(H.conn, out, 1000, H.now), 1000);
	expect_none();	/* receiver SWS avoidance: 1000 < min(buf/2, MSS) */
	ck_assert_int_eq(tcp_recv(H.conn, out, sizeof(out), H.now), 3096);
	c = expect_seg(TCP_ACK, O0, P0 + 4096, 0);	/* window update */
	ck_assert_uint_eq(c->h.wnd, 4096);
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * With a window scale, an edge kept in place (receiver SWS avoidance) is not
 * always a whole number of scale units from rcv_nxt. Rounded up at each ACK,
 * it crept beyond the receive ring, and a sender that filled the window lost
 * its last bytes, trimmed on arrival: the container face's inner connections
 * retransmitted under load. Whatever the sender does inside the windows
 * offered, every byte of it is taken.
 */
START_TEST(test_scaled_window_fits_ring)
{
	static uint8_t d[1000];
	uint32_t snd, edge, limit;
	struct tcp_stack_stats st;
	unsigned int ws, i;
	struct cap *c;

	c = syn_to_fixed_ring(1000000);
	ws = c->h.opts.wscale;
	ck_assert_uint_eq(ws, 4);
	edge = P0 + c->h.wnd;
	in(TCP_ACK, P0, O0, NULL, 0);
	limit = P0 + 1000000;
	snd = P0;
	/* the application reads nothing: the window closes as the ring fills */
	for (i = 0; i < 5000 && seq_lt(snd, edge); i++) {
		uint32_t len = edge - snd < sizeof(d) ? edge - snd : sizeof(d);

		H.nev = 0;	/* readable, each time */
		in(TCP_ACK, snd, O0, d, len);
		snd += len;
		if (!H.ncap)
			run_until(tcp_next_deadline(H.s));	/* the delayed ACK */
		ck_assert_uint_gt(H.ncap, 0);
		while (H.ncap) {
			c = pop_seg();
			ck_assert_msg(c->h.ack == snd, "sent up to %u inside the window, %u acknowledged",
				      snd - P0, c->h.ack - P0);
			edge = c->h.ack + ((uint32_t)c->h.wnd << ws);
			ck_assert_msg(seq_leq(edge, limit), "edge offered %u bytes beyond the ring", edge - limit);
		}
	}
	ck_assert_uint_eq(snd, edge);	/* the window closed */
	ck_assert_uint_lt(limit - snd, 1u << ws);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.drop_rcv_full, 0);
	ck_assert_uint_eq(st.drop_out_of_window, 0);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_zero_window_persist)
{
	struct cap *c;

	establish_passive();
	H.peer_wnd = 0;
	in(TCP_ACK, P0, O0, NULL, 0);
	ck_assert_int_eq(tcp_send(H.conn, "data", 4, H.now), 4);
	expect_none();
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 200 * MS);
	run_until(H.now + 200 * MS);
	expect_seg(TCP_ACK, O0 - 1, P0, 0);	/* the probe */
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 400 * MS);
	run_until(H.now + 400 * MS);
	expect_seg(TCP_ACK, O0 - 1, P0, 0);
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 800 * MS);
	H.peer_wnd = 100;
	in(TCP_ACK, P0, O0, NULL, 0);
	c = expect_seg(TCP_ACK | TCP_PSH, O0, P0, 4);
	ck_assert(!memcmp(c->data, "data", 4));
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_sws_persist_forces_small_segment)
{
	static uint8_t d[3000];

	H.peer_wscale = 0xff;	/* no scaling: windows in bytes */
	H.peer_wnd = 3000;
	establish_passive();
	ck_assert_int_eq(tcp_send(H.conn, d, 3000, H.now), 3000);
	expect_seg(TCP_ACK, O0, P0, 1448);
	expect_seg(TCP_ACK, O0 + 1448, P0, 1448);
	expect_seg(TCP_ACK | TCP_PSH, O0 + 2896, P0, 104);
	H.peer_wnd = 100;	/* only 100 bytes of window after this ACK */
	ck_assert_int_eq(tcp_send(H.conn, d, 3000, H.now), 3000);
	in(TCP_ACK, P0, O0 + 3000, NULL, 0);
	expect_none();	/* 100 < max window / 2: SWS avoidance waits */
	run_until(tcp_next_deadline(H.s));
	expect_seg(TCP_ACK, O0 + 3000, P0, 100);	/* persist forces it */
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/* ---- closing ---- */

START_TEST(test_passive_close)
{
	char buf[4];

	establish_passive();
	in(TCP_FIN | TCP_ACK, P0, O0, NULL, 0);
	expect_seg(TCP_ACK, O0, P0 + 1, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_CLOSE_WAIT);
	ck_assert(saw_event(TCP_EV_PEER_FIN, 0));
	ck_assert_int_eq(tcp_recv(H.conn, buf, sizeof(buf), H.now), 0);
	/* still sending in CLOSE-WAIT */
	ck_assert_int_eq(tcp_send(H.conn, "ab", 2, H.now), 2);
	expect_seg(TCP_ACK | TCP_PSH, O0, P0 + 1, 2);
	ck_assert_int_eq(tcp_shutdown_write(H.conn, H.now), 0);
	expect_seg(TCP_FIN | TCP_ACK, O0 + 2, P0 + 1, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_LAST_ACK);
	ck_assert_int_eq(tcp_send(H.conn, "ab", 2, H.now), -EPIPE);
	in(TCP_ACK, P0 + 1, O0 + 3, NULL, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_CLOSED);
	ck_assert(saw_event(TCP_EV_CLOSED, 0));
	tcp_close(H.conn, H.now);
	expect_none();
}
END_TEST

START_TEST(test_active_close_timewait)
{
	struct tcp_stack_stats st;

	establish_passive();
	ck_assert_int_eq(tcp_shutdown_write(H.conn, H.now), 0);
	expect_seg(TCP_FIN | TCP_ACK, O0, P0, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_FIN_WAIT_1);
	in(TCP_ACK, P0, O0 + 1, NULL, 0);
	expect_none();
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_FIN_WAIT_2);
	/* half-closed: the peer still sends */
	in(TCP_ACK | TCP_PSH, P0, O0 + 1, "late", 4);
	expect_seg(TCP_ACK, O0 + 1, P0 + 4, 0);
	in(TCP_FIN | TCP_ACK, P0 + 4, O0 + 1, NULL, 0);
	expect_seg(TCP_ACK, O0 + 1, P0 + 5, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_TIME_WAIT);
	ck_assert(saw_event(TCP_EV_CLOSED, 0));
	tcp_close(H.conn, H.now);
	/* a retransmitted FIN is ACKed again in TIME-WAIT */
	in(TCP_FIN | TCP_ACK, P0 + 4, O0 + 1, NULL, 0);
	expect_seg(TCP_ACK, O0 + 1, P0 + 5, 0);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.timewait, 1);
	/* the next deadline is the pool's trim (its rings went there), then TIME-WAIT's end */
	ck_assert_uint_le(tcp_next_deadline(H.s), H.now + 60 * SEC);
	run_until(H.now + 60 * SEC - 1);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.timewait, 1);
	run_until(H.now + 1);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.timewait, 0);
	ck_assert_uint_eq(st.conns, 0);
	/* now nothing knows the tuple */
	in(TCP_ACK, P0 + 5, O0 + 1, NULL, 0);
	expect_seg(TCP_RST, O0 + 1, 0, 0);
}
END_TEST

START_TEST(test_closing_state)
{
	establish_passive();
	tcp_shutdown_write(H.conn, H.now);
	expect_seg(TCP_FIN | TCP_ACK, O0, P0, 0);
	in(TCP_FIN | TCP_ACK, P0, O0, NULL, 0);	/* crossed FINs */
	expect_seg(TCP_ACK, O0 + 1, P0 + 1, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_CLOSING);
	in(TCP_ACK, P0 + 1, O0 + 1, NULL, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_TIME_WAIT);
	tcp_close(H.conn, H.now);
	run_until(H.now + 60 * SEC);
	expect_none();
}
END_TEST

START_TEST(test_fin_wait1_fin_ack_together)
{
	establish_passive();
	tcp_shutdown_write(H.conn, H.now);
	expect_seg(TCP_FIN | TCP_ACK, O0, P0, 0);
	in(TCP_FIN | TCP_ACK, P0, O0 + 1, NULL, 0);
	expect_seg(TCP_ACK, O0 + 1, P0 + 1, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_TIME_WAIT);
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_fin_retransmit)
{
	establish_passive();
	tcp_shutdown_write(H.conn, H.now);
	expect_seg(TCP_FIN | TCP_ACK, O0, P0, 0);
	run_until(tcp_next_deadline(H.s));
	expect_seg(TCP_FIN | TCP_ACK, O0, P0, 0);
	in(TCP_ACK, P0, O0 + 1, NULL, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_FIN_WAIT_2);
	tcp_close(H.conn, H.now);
	/* orphaned FIN-WAIT-2 ends after 60 s */
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 60 * SEC);
	run_until(H.now + 60 * SEC);
	expect_none();
}
END_TEST

START_TEST(test_close_with_data_and_fin)
{
	establish_passive();
	tcp_send(H.conn, "bye", 3, H.now);
	expect_seg(TCP_ACK | TCP_PSH, O0, P0, 3);
	tcp_close(H.conn, H.now);
	expect_seg(TCP_FIN | TCP_ACK, O0 + 3, P0, 0);
	in(TCP_FIN | TCP_ACK, P0, O0 + 4, NULL, 0);
	expect_seg(TCP_ACK, O0 + 4, P0 + 1, 0);
	run_until(H.now + 60 * SEC);
}
END_TEST

START_TEST(test_close_unread_sends_rst)
{
	establish_passive();
	in(TCP_ACK, P0, O0, "unread", 6);
	expect_seg(TCP_ACK, O0, P0 + 6, 0);
	tcp_close(H.conn, H.now);
	expect_seg(TCP_RST | TCP_ACK, O0, P0 + 6, 0);
}
END_TEST

START_TEST(test_close_from_callback)
{
	establish_passive();
	H.close_on_readable = true;
	in(TCP_ACK, P0, O0, "x", 1);
	/* the ACK first, then the callback closes with unread data: RST */
	expect_seg(TCP_RST | TCP_ACK, O0, P0 + 1, 0);
	ck_assert_ptr_null(H.conn);
}
END_TEST

START_TEST(test_orphan_data_rst)
{
	establish_passive();
	tcp_close(H.conn, H.now);
	expect_seg(TCP_FIN | TCP_ACK, O0, P0, 0);
	in(TCP_ACK, P0, O0 + 1, "more", 4);	/* nobody can read it */
	expect_seg(TCP_RST | TCP_ACK, O0 + 1, P0, 0);
}
END_TEST

/* ---- RST, SYN, ACK checks (RFC 5961), PAWS ---- */

START_TEST(test_rst_exact)
{
	establish_passive();
	in(TCP_RST, P0, 0, NULL, 0);
	expect_none();
	ck_assert(saw_event(TCP_EV_RESET, -ECONNRESET));
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_CLOSED);
	ck_assert_int_eq(tcp_send(H.conn, "x", 1, H.now), -ENOTCONN);
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_rst_in_window_challenge)
{
	establish_passive();
	in(TCP_RST, P0 + 100, 0, NULL, 0);
	expect_seg(TCP_ACK, O0, P0, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_ESTABLISHED);
	in(TCP_RST, P0 + 10000000, 0, NULL, 0);	/* outside: dropped */
	expect_none();
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_ESTABLISHED);
	tcp_abort(H.conn, H.now);
	expect_seg(TCP_RST | TCP_ACK, O0, P0, 0);
}
END_TEST

START_TEST(test_syn_in_established_challenge)
{
	establish_passive();
	in(TCP_SYN, P0 + 5, 0, NULL, 0);
	expect_seg(TCP_ACK, O0, P0, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_ESTABLISHED);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_challenge_ack_rate_limit)
{
	struct tcp_stack_stats st;

	H.cfg.challenge_ack_limit = 2;
	teardown();
	H.s = tcp_stack_new(&H.cfg);
	establish_passive();
	in(TCP_RST, P0 + 1, 0, NULL, 0);
	in(TCP_RST, P0 + 2, 0, NULL, 0);
	in(TCP_RST, P0 + 3, 0, NULL, 0);
	expect_seg(TCP_ACK, O0, P0, 0);
	expect_seg(TCP_ACK, O0, P0, 0);
	expect_none();
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.challenge_acks, 2);
	ck_assert_uint_eq(st.challenge_acks_limited, 1);
	H.now += SEC;
	in(TCP_RST, P0 + 4, 0, NULL, 0);
	expect_seg(TCP_ACK, O0, P0, 0);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_ack_out_of_range)
{
	struct tcp_stack_stats st;

	establish_passive();
	in(TCP_ACK, P0, O0 + 5000, NULL, 0);	/* acks data never sent */
	expect_seg(TCP_ACK, O0, P0, 0);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.drop_bad_ack, 1);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_paws)
{
	struct tcp_stack_stats st;
	struct tcp_seg_in s;
	char buf[4];

	establish_passive();
	s = pseg(TCP_ACK, P0, O0, "x", 1);
	s.opts.ts_val = 50;	/* older than what the handshake showed */
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_ACK, O0, P0, 0);
	ck_assert_int_eq(tcp_recv(H.conn, buf, sizeof(buf), H.now), -EAGAIN);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.drop_paws, 1);
	/* a newer timestamp is fine, across the 32-bit wrap too */
	s = pseg(TCP_ACK, P0, O0, "x", 1);
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_ACK, O0, P0 + 1, 0);
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

/* ---- retransmission ---- */

START_TEST(test_rto_backoff)
{
	struct tcp_conn_info info;
	uint64_t t0;
	struct cap *c;

	establish_passive();
	tcp_send(H.conn, "hello", 5, H.now);
	expect_seg(TCP_ACK | TCP_PSH, O0, P0, 5);
	t0 = H.now;
	ck_assert_uint_eq(tcp_next_deadline(H.s), t0 + 200 * MS);
	run_until(t0 + 200 * MS);
	c = expect_seg(TCP_ACK | TCP_PSH, O0, P0, 5);
	ck_assert(!memcmp(c->data, "hello", 5));
	ck_assert_uint_eq(tcp_next_deadline(H.s), t0 + 600 * MS);
	run_until(t0 + 600 * MS);
	expect_seg(TCP_ACK | TCP_PSH, O0, P0, 5);
	ck_assert_uint_eq(tcp_next_deadline(H.s), t0 + 1400 * MS);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.rto_count, 2);
	ck_assert_uint_eq(info.stats.retrans_segs, 2);
	ck_assert_uint_eq(info.cwnd, 1);
	in(TCP_ACK, P0, O0 + 5, NULL, 0);
	ck_assert_uint_eq(tcp_next_deadline(H.s), UINT64_MAX);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.rto_us, 200000);	/* a new sample ends the backoff */
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_rto_gives_up)
{
	unsigned int n = 0;

	establish_passive();
	tcp_send(H.conn, "hello", 5, H.now);
	h_drain();
	while (!saw_event(TCP_EV_RESET, 0) && n < 30) {
		run_until(tcp_next_deadline(H.s));
		if (H.ncap) {
			expect_seg(TCP_ACK | TCP_PSH, O0, P0, 5);
			n++;
		}
	}
	ck_assert_uint_eq(n, 15);
	ck_assert(saw_event(TCP_EV_RESET, -ETIMEDOUT));
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_rto_goes_back_n)
{
	static uint8_t d[5 * 1448];

	establish_passive();
	tcp_send(H.conn, d, sizeof(d), H.now);
	h_drain();
	run_until(tcp_next_deadline(H.s));
	expect_seg(TCP_ACK | TCP_PSH, O0 + 4 * 1448, P0, 1448);	/* the tail loss probe */
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 200 * MS);
	run_until(tcp_next_deadline(H.s));
	expect_seg(TCP_ACK, O0, P0, 1448);	/* RTO: cwnd 1 */
	expect_none();
	in(TCP_ACK, P0, O0 + 1448, NULL, 0);
	expect_seg(TCP_ACK, O0 + 1448, P0, 1448);	/* slow start: 2 */
	expect_seg(TCP_ACK, O0 + 2896, P0, 1448);
	expect_none();
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_sack_fast_retransmit)
{
	struct tcp_conn_info info;

	establish_passive();
	send_ten();
	in_sack(O0, O0 + 1448, O0 + 2 * 1448);
	in_sack(O0, O0 + 1448, O0 + 3 * 1448);
	expect_none();
	in_sack(O0, O0 + 1448, O0 + 4 * 1448);	/* > 2 MSS SACKed above: lost */
	expect_seg(TCP_ACK, O0, P0, 1448);
	expect_none();
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.sack_recoveries, 1);
	ck_assert_uint_eq(info.ssthresh, 7);	/* CUBIC beta 0.7 */
	/* segment 6 was lost too: the partial ACK shows its hole, SACKed above */
	in_sack(O0, O0 + 1448, O0 + 5 * 1448);
	in_sack(O0, O0 + 1448, O0 + 6 * 1448);
	expect_none();
	in_sack(O0 + 6 * 1448, O0 + 7 * 1448, O0 + 10 * 1448);
	expect_seg(TCP_ACK, O0 + 6 * 1448, P0, 1448);
	in(TCP_ACK, P0, O0 + 10 * 1448, NULL, 0);	/* recovery ends */
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.unacked_bytes, 0);
	ck_assert_uint_eq(info.stats.retrans_segs, 2);
	ck_assert_uint_eq(info.stats.rto_count, 0);
	/*
	 * RFC 6937 3: it leaves with cwnd = ssthresh, though nothing is in
	 * flight (NewReno's min(ssthresh, FlightSize + MSS) gave 2: a sender
	 * whose recovery the send buffer held back slow-started again)
	 */
	ck_assert_uint_eq(info.cong_state, TCP_CONG_OPEN);
	ck_assert_uint_eq(info.cwnd, 7);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_newreno_fast_retransmit)
{
	struct tcp_conn_info info;

	H.peer_sack = false;
	H.lopts.cc = TCP_CC_RENO;
	establish_passive();
	send_ten();
	in(TCP_ACK, P0, O0, NULL, 0);
	in(TCP_ACK, P0, O0, NULL, 0);
	expect_none();
	in(TCP_ACK, P0, O0, NULL, 0);	/* third duplicate */
	expect_seg(TCP_ACK, O0, P0, 1448);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.fast_recoveries, 1);
	ck_assert_uint_eq(info.stats.sack_recoveries, 0);
	ck_assert_uint_eq(info.ssthresh, 5);	/* Reno: FlightSize / 2 */
	ck_assert_str_eq(info.cc, "reno");
	in(TCP_ACK, P0, O0 + 2 * 1448, NULL, 0);	/* partial ACK: next hole */
	expect_seg(TCP_ACK, O0 + 2 * 1448, P0, 1448);
	in(TCP_ACK, P0, O0 + 10 * 1448, NULL, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.unacked_bytes, 0);
	ck_assert_uint_eq(info.stats.retrans_segs, 2);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_pmtu_resplit)
{
	static uint8_t d[2896];
	struct tcp_endpoint l = ep("10.0.0.1", 80), r = ep("10.0.0.2", 40000);
	struct tcp_conn_info info;

	establish_passive();
	tcp_send(H.conn, d, sizeof(d), H.now);
	expect_seg(TCP_ACK, O0, P0, 1448);
	expect_seg(TCP_ACK | TCP_PSH, O0 + 1448, P0, 1448);
	tcp_pmtu_update(H.s, &l.addr, &r.addr, 1000, H.now);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.snd_mss, 1000 - 40 - 12);
	expect_seg(TCP_ACK, O0, P0, 948);
	expect_seg(TCP_ACK, O0 + 948, P0, 948);
	expect_seg(TCP_ACK, O0 + 1896, P0, 948);
	expect_seg(TCP_ACK | TCP_PSH, O0 + 2844, P0, 52);
	expect_none();
	tcp_pmtu_update(H.s, &l.addr, &r.addr, 20, H.now);	/* below minimum: ignored */
	expect_none();
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_seq_wraparound)
{
	static uint8_t d[5000], out[5000];
	uint32_t our = 0xfffffe00u, peer = 0xffffff00u;
	ssize_t n;

	H.cfg.isn_fixed = our;
	H.peer_iss = peer;
	H.peer_tsval = 0xfffffff0u;	/* timestamps wrap too */
	teardown();
	H.s = tcp_stack_new(&H.cfg);
	establish_passive();
	fill(d, sizeof(d), 11);
	ck_assert_int_eq(tcp_send(H.conn, d, 2000, H.now), 2000);
	expect_seg(TCP_ACK, our + 1, peer + 1, 1448);
	expect_seg(TCP_ACK | TCP_PSH, our + 1 + 1448, peer + 1, 552);
	in(TCP_ACK, peer + 1, our + 1 + 2000, NULL, 0);	/* ack wrapped */
	ck_assert_uint_eq(tcp_next_deadline(H.s), UINT64_MAX);
	in(TCP_ACK, peer + 1, our + 2001, d, 1000);
	in(TCP_ACK, peer + 1001, our + 2001, d + 1000, 1000);
	h_drain();
	n = tcp_recv(H.conn, out, sizeof(out), H.now);
	ck_assert_int_eq(n, 2000);
	ck_assert(!memcmp(out, d, 2000));
	in(TCP_FIN | TCP_ACK, peer + 2001, our + 2001, NULL, 0);
	expect_seg(TCP_ACK, our + 2001, peer + 2002, 0);
	tcp_close(H.conn, H.now);
	expect_seg(TCP_FIN | TCP_ACK, our + 2001, peer + 2002, 0);
	in(TCP_ACK, peer + 2002, our + 2002, NULL, 0);
	expect_none();
}
END_TEST

START_TEST(test_keepalive)
{
	H.lopts.keepalive_idle_ms = 1000;
	H.lopts.keepalive_intvl_ms = 500;
	H.lopts.keepalive_cnt = 2;
	establish_passive();
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + SEC);
	run_until(H.now + SEC);
	expect_seg(TCP_ACK, O0 - 1, P0, 0);
	/* an answer resets the probing */
	in(TCP_ACK, P0, O0, NULL, 0);
	run_until(H.now + 500 * MS);
	expect_none();
	run_until(H.now + 500 * MS);
	expect_seg(TCP_ACK, O0 - 1, P0, 0);
	run_until(H.now + 500 * MS);
	expect_seg(TCP_ACK, O0 - 1, P0, 0);
	run_until(H.now + 500 * MS);
	ck_assert(saw_event(TCP_EV_RESET, -ETIMEDOUT));
	tcp_close(H.conn, H.now);
}
END_TEST

START_TEST(test_rcvbuf_autotune)
{
	static uint8_t d[8192], out[8192];
	struct tcp_conn_info info;
	uint32_t seq;
	int round;

	H.lopts.rcvbuf_init = 16384;
	H.lopts.rcvbuf_max = 1 << 20;
	establish_passive();
	seq = P0;
	for (round = 0; round < 4; round++) {
		in(TCP_ACK, seq, O0, d, 8000);
		seq += 8000;
		ck_assert_int_eq(tcp_recv(H.conn, out, sizeof(out), H.now), 8000);
		H.now += 10 * MS;
	}
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_gt(info.rcvbuf_cap, 16384);
	ck_assert_uint_le(info.rcvbuf_cap, 1 << 20);
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

/* ---- SYN cookies, TIME-WAIT bound ---- */

START_TEST(test_syn_cookies)
{
	struct tcp_endpoint l = ep("10.0.0.1", 80);
	struct tcp_stack_stats st;
	struct tcp_conn_info info;
	struct tcp_seg_in s;
	struct cap *c;
	uint32_t cookie, tsval;
	char buf[8];

	ck_assert_int_eq(tcp_listen(H.s, &l, 1, NULL, h_accept, h_event, &H, &H.lis), 0);
	in(TCP_SYN, PEER_ISS, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, P0, 0);	/* the backlog's one */
	s = pseg(TCP_SYN, 7000, 0, NULL, 0);
	s.sport = 40001;
	tcp_input(H.s, &s, H.now);
	c = pop_seg();
	ck_assert_uint_eq(c->h.flags, TCP_SYN | TCP_ACK);
	ck_assert_uint_eq(c->h.ack, 7001);
	ck_assert(c->h.opts.has_ts && c->h.opts.sack_perm && c->h.opts.has_wscale);
	cookie = c->h.seq;
	tsval = c->h.opts.ts_val;
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.syncookies_sent, 1);
	ck_assert_uint_eq(st.conns, 1);	/* no state for the cookie */
	/* a forged ACK is refused */
	s = pseg(TCP_ACK, 9001, 123456, NULL, 0);
	s.sport = 40002;
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_RST, 123456, 0, 0);
	/* the real one opens the connection, with its data */
	s = pseg(TCP_ACK | TCP_PSH, 7001, cookie + 1, "cookie", 6);
	s.sport = 40001;
	s.opts.ts_ecr = tsval;
	tcp_input(H.s, &s, H.now + 2 * SEC);
	ck_assert_ptr_nonnull(H.conn);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.syncookies_ok, 1);
	ck_assert_uint_eq(st.conns, 2);
	ck_assert_int_eq(tcp_recv(H.conn, buf, sizeof(buf), H.now), 6);
	ck_assert(!memcmp(buf, "cookie", 6));
	tcp_conn_info(H.conn, &info);
	ck_assert(info.sack && info.ts);	/* carried in the TSval bits */
	ck_assert_uint_eq(info.snd_wscale, 7);
	ck_assert_uint_eq(info.rcv_wscale, 7);
	ck_assert_uint_eq(info.snd_mss, 1460 - 12);
	c = pop_seg();
	ck_assert_uint_eq(c->h.seq, cookie + 1);
	ck_assert_uint_eq(c->h.ack, 7007);
	tcp_close(H.conn, H.now);
	h_drain();
	/* too old: a cookie expires after two 67 s ticks */
	s = pseg(TCP_SYN, 8000, 0, NULL, 0);
	s.sport = 40003;
	tcp_input(H.s, &s, H.now);
	c = pop_seg();
	cookie = c->h.seq;
	s = pseg(TCP_ACK, 8001, cookie + 1, NULL, 0);
	s.sport = 40003;
	s.opts.ts_ecr = c->h.opts.ts_val;
	H.now += 140 * SEC;
	tcp_input(H.s, &s, H.now);
	c = pop_seg();
	ck_assert_uint_eq(c->h.flags, TCP_RST);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.syncookies_ok, 1);
}
END_TEST

/*
 * The peer's handshake ACK and its whole first flight were lost, so the first
 * segment to reach us carries the cookie in its ACK field but a seq beyond
 * the peer's ISN + 1: the cookie hash, which covers that ISN, cannot match.
 * The peer is ESTABLISHED, so a RST would kill it; the segment is dropped and
 * the peer's retransmission from ISN + 1 opens the connection. (Seen as
 * many_kernel_clients_echo's "EOF after 0 bytes" under CPU load: the TUN
 * queue dropped a client's flight and the kernel's tail loss probe sent new
 * data, which drew our RST.)
 */
START_TEST(test_syn_cookie_first_flight_lost)
{
	struct tcp_endpoint l = ep("10.0.0.1", 80);
	struct tcp_stack_stats st;
	uint8_t data[3000], buf[4000];
	struct tcp_seg_in s;
	uint32_t cookie, tsval;
	struct cap *c;

	fill(data, sizeof(data), 3);
	ck_assert_int_eq(tcp_listen(H.s, &l, 1, NULL, h_accept, h_event, &H, &H.lis), 0);
	in(TCP_SYN, PEER_ISS, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, P0, 0);	/* fills the backlog */
	s = pseg(TCP_SYN, 7000, 0, NULL, 0);
	s.sport = 40001;
	tcp_input(H.s, &s, H.now);
	c = pop_seg();
	ck_assert_uint_eq(c->h.flags, TCP_SYN | TCP_ACK);
	cookie = c->h.seq;
	tsval = c->h.opts.ts_val;
	/* lost: the ACK at 7001 and the data [7001, 8001); the probe [8001, 9001) arrives */
	H.now += 200 * MS;
	s = pseg(TCP_ACK | TCP_PSH, 8001, cookie + 1, data + 1000, 1000);
	s.sport = 40001;
	s.opts.ts_ecr = tsval;
	ck_assert_int_eq(tcp_input(H.s, &s, H.now), 0);
	expect_none();	/* no RST */
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.syncookies_ok, 0);
	ck_assert_uint_eq(st.syncookies_bad, 1);
	ck_assert_uint_eq(st.conns, 1);
	/* the peer's RTO resends from its ISN + 1: that completes the handshake */
	H.now += 300 * MS;
	s = pseg(TCP_ACK, 7001, cookie + 1, data, 1000);
	s.sport = 40001;
	s.opts.ts_ecr = tsval;
	ck_assert_int_eq(tcp_input(H.s, &s, H.now), 0);
	ck_assert_ptr_nonnull(H.conn);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.syncookies_ok, 1);
	ck_assert_uint_eq(st.conns, 2);
	expect_seg(TCP_ACK, cookie + 1, 8001, 0);
	s = pseg(TCP_ACK | TCP_PSH, 8001, cookie + 1, data + 1000, 2000);
	s.sport = 40001;
	s.opts.ts_ecr = tsval;
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_ACK, cookie + 1, 10001, 0);
	ck_assert_int_eq(tcp_recv(H.conn, buf, sizeof(buf), H.now), 3000);
	ck_assert(!memcmp(buf, data, 3000));
	/* a bad ACK echoing no TSval of our cookie clock still gets its RST */
	s = pseg(TCP_ACK, 9001, cookie + 1, NULL, 0);
	s.sport = 40002;
	s.opts.ts_ecr = tsval + 0x40000000;
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_RST, cookie + 1, 0, 0);
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * Two copies of one SYN: the first met a full backlog and got a cookie, the
 * second found room and made a SYN-RECEIVED entry. The peer completed the
 * cookie handshake, so its ACK names the cookie, not that entry's ISS: the
 * RST RFC 9293 prescribes for an unacceptable ACK in SYN-RECEIVED would
 * reset a connection the peer has ESTABLISHED. The cookie connection
 * replaces the half-open entry.
 */
START_TEST(test_syn_cookie_replaces_half_open)
{
	struct tcp_endpoint l = ep("10.0.0.1", 80);
	struct tcp_stack_stats st;
	struct tcp_conn *first;
	struct tcp_seg_in s;
	uint32_t cookie, tsval;
	struct cap *c;
	char buf[16];

	ck_assert_int_eq(tcp_listen(H.s, &l, 1, NULL, h_accept, h_event, &H, &H.lis), 0);
	in(TCP_SYN, PEER_ISS, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, P0, 0);	/* fills the backlog */
	s = pseg(TCP_SYN, 7000, 0, NULL, 0);
	s.sport = 40001;
	tcp_input(H.s, &s, H.now);
	c = pop_seg();
	ck_assert_uint_eq(c->h.flags, TCP_SYN | TCP_ACK);
	cookie = c->h.seq;
	tsval = c->h.opts.ts_val;
	ck_assert_uint_ne(cookie, OUR_ISS);
	in(TCP_ACK, P0, O0, NULL, 0);	/* the backlog empties */
	first = H.conn;
	ck_assert_ptr_nonnull(first);
	/* the second copy of the SYN makes a half-open entry */
	H.now += 10 * MS;
	s = pseg(TCP_SYN, 7000, 0, NULL, 0);
	s.sport = 40001;
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, 7001, 0);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.conns, 2);
	/* the peer answers the cookie SYN-ACK it got first */
	s = pseg(TCP_ACK | TCP_PSH, 7001, cookie + 1, "half", 4);
	s.sport = 40001;
	s.opts.ts_ecr = tsval;
	ck_assert_int_eq(tcp_input(H.s, &s, H.now), 0);
	expect_seg(TCP_ACK, cookie + 1, 7005, 0);	/* no RST */
	ck_assert_ptr_ne(H.conn, first);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_ESTABLISHED);
	ck_assert_int_eq(tcp_recv(H.conn, buf, sizeof(buf), H.now), 4);
	ck_assert(!memcmp(buf, "half", 4));
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.syncookies_ok, 1);
	ck_assert_uint_eq(st.conns, 2);	/* the half-open entry is gone */
	/* and its SYN-ACK timer with it */
	run_until(H.now + 10 * SEC);
	while (H.ncap) {
		c = pop_seg();
		ck_assert_msg(!(c->h.flags & TCP_SYN), "the replaced entry still sends SYN-ACKs");
	}
	tcp_close(first, H.now);
	tcp_close(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_timewait_bound)
{
	struct tcp_stack_stats st;
	int i;

	H.cfg.max_timewait = 1;
	teardown();
	H.s = tcp_stack_new(&H.cfg);
	h_listen();
	for (i = 0; i < 2; i++) {
		struct tcp_seg_in s = pseg(TCP_SYN, PEER_ISS, 0, NULL, 0);

		s.sport = 40000 + i;
		tcp_input(H.s, &s, H.now);
		s = pseg(TCP_ACK, P0, O0, NULL, 0);
		s.sport = 40000 + i;
		tcp_input(H.s, &s, H.now);
		tcp_close(H.conn, H.now);	/* FIN */
		s = pseg(TCP_FIN | TCP_ACK, P0, O0 + 1, NULL, 0);
		s.sport = 40000 + i;
		tcp_input(H.s, &s, H.now);
	}
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.timewait, 1);
	ck_assert_uint_eq(st.timewait_evicted, 1);
	ck_assert_uint_eq(st.conns, 1);
	h_drain();
}
END_TEST

/* one connection from the peer's port SPORT, accepted and closed by us: TIME-WAIT */
static void h_timewait_from(uint16_t sport)
{
	struct tcp_seg_in s = pseg(TCP_SYN, PEER_ISS, 0, NULL, 0);

	s.sport = sport;
	tcp_input(H.s, &s, H.now);
	s = pseg(TCP_ACK, P0, O0, NULL, 0);
	s.sport = sport;
	tcp_input(H.s, &s, H.now);
	tcp_close(H.conn, H.now);	/* FIN */
	s = pseg(TCP_FIN | TCP_ACK, P0, O0 + 1, NULL, 0);
	s.sport = sport;
	tcp_input(H.s, &s, H.now);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_TIME_WAIT);
	h_drain();
}

/* the next of @n TIME-WAIT connections, the only connections, ends at @at */
static void h_timewait_ends_at(uint64_t at, uint32_t n)
{
	struct tcp_stack_stats st;

	run_until(at - 1);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.timewait, n);
	ck_assert_uint_le(tcp_next_deadline(H.s), at);
	run_until(at);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.timewait, n - 1);
	ck_assert_uint_eq(st.conns, n - 1);
}

/*
 * TIME-WAIT connections wait on their FIFO, outside the timer heap: each
 * ends 60 s after its timer last started, a restarted one (its peer's FIN
 * again) after one that entered later, and a busy connection's timers run
 * among them at their own time.
 */
START_TEST(test_timewait_fifo_timers)
{
	struct tcp_stack_stats st;
	struct tcp_seg_in s;
	uint64_t t0 = H.now, t_send;

	h_listen();
	h_timewait_from(40000);	/* ends at t0 + 60 s, until restarted */
	H.now = t0 + 10 * SEC;
	h_timewait_from(40001);	/* ends at t0 + 70 s */
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.timewait, 2);

	/* the first one's FIN again at t0 + 30 s: ACKed, its 60 s start over */
	run_until(t0 + 30 * SEC);
	s = pseg(TCP_FIN | TCP_ACK, P0, O0 + 1, NULL, 0);
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_ACK, O0 + 1, P0 + 1, 0);

	/* a busy connection's retransmission comes first, at its own time */
	s = pseg(TCP_SYN, PEER_ISS, 0, NULL, 0);
	s.sport = 40002;
	tcp_input(H.s, &s, H.now);
	h_drain();
	s = pseg(TCP_ACK, P0, O0, NULL, 0);
	s.sport = 40002;
	tcp_input(H.s, &s, H.now);
	ck_assert_int_eq(tcp_send(H.conn, "hello", 5, H.now), 5);
	expect_seg(TCP_ACK | TCP_PSH, O0, P0, 5);
	t_send = H.now;
	ck_assert_uint_eq(tcp_next_deadline(H.s), t_send + 200 * MS);
	run_until(t_send + 200 * MS);
	expect_seg(TCP_ACK | TCP_PSH, O0, P0, 5);
	tcp_abort(H.conn, H.now);
	h_drain();

	h_timewait_ends_at(t0 + 70 * SEC, 2);	/* the second one */
	s = pseg(TCP_ACK, P0 + 1, O0 + 1, NULL, 0);
	s.sport = 40001;
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_RST, O0 + 1, 0, 0);	/* nothing knows its tuple now */
	h_timewait_ends_at(t0 + 90 * SEC, 1);	/* the restarted one */
	ck_assert_uint_eq(tcp_next_deadline(H.s), UINT64_MAX);
	H.conn = NULL;
	expect_none();
}
END_TEST

START_TEST(test_timewait_reopen)
{
	establish_passive();
	tcp_shutdown_write(H.conn, H.now);
	in(TCP_FIN | TCP_ACK, P0, O0 + 1, NULL, 0);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_TIME_WAIT);
	tcp_close(H.conn, H.now);
	H.conn = NULL;
	h_drain();
	/* a new SYN with a higher sequence number opens a new connection */
	in(TCP_SYN, P0 + 100000, 0, NULL, 0);
	expect_seg(TCP_SYN | TCP_ACK, OUR_ISS, P0 + 100001, 0);
	in(TCP_ACK, P0 + 100001, O0, NULL, 0);
	ck_assert_ptr_nonnull(H.conn);
	ck_assert_int_eq(tcp_conn_state(H.conn), TCPS_ESTABLISHED);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(tcp_state_name(TCPS_TIME_WAIT), "TIME-WAIT");
	ck_assert_str_eq(tcp_state_name(TCPS_STATE_MAX), "?");
	ck_assert_str_eq(tcp_event_name(TCP_EV_PEER_FIN), "peer_fin");
	ck_assert_str_eq(tcp_cc_name(TCP_CC_RENO), "reno");
}
END_TEST

START_TEST(test_connect_errors)
{
	struct tcp_endpoint l = ep("10.0.0.1", 0), r = ep("10.0.0.2", 40000), r6 = ep("fd00::2", 1);
	struct tcp_conn *c1, *c2;

	ck_assert_int_eq(tcp_connect(H.s, &l, &r6, NULL, h_event, &H, H.now, &c1), -EINVAL);
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &c1), 0);
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &c2), 0);
	ck_assert_uint_ne(c1 == c2, 1);
	ck_assert_uint_ge(pop_seg()->h.sport, 32768);
	ck_assert_uint_ge(pop_seg()->h.sport, 32768);
	l.port = 5555;
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &H.conn), 0);
	ck_assert_int_eq(tcp_connect(H.s, &l, &r, NULL, h_event, &H, H.now, &c2), -EADDRINUSE);
	tcp_close(c1, H.now);
	tcp_close(H.conn, H.now);
	h_drain();
	ck_assert_int_eq(tcp_listen(H.s, &l, 1, NULL, h_accept, h_event, &H, &H.lis), 0);
	ck_assert_int_eq(tcp_listen(H.s, &l, 1, NULL, h_accept, h_event, &H, &H.lis), -EADDRINUSE);
	tcp_listener_close(H.lis);
}
END_TEST

/* One round trip of a bulk sender: send what fits, ACK all of it 100 ms later. */
static uint32_t bulk_round(uint32_t *highest)
{
	static uint8_t d[1 << 16];
	struct tcp_conn_info info;

	while (tcp_send(H.conn, d, sizeof(d), H.now) > 0)
		;
	while (H.ncap) {
		struct cap *c = pop_seg();

		if (seq_gt(c->h.seq + (uint32_t)c->h.len, *highest))
			*highest = c->h.seq + (uint32_t)c->h.len;
	}
	H.now += 100 * MS;
	in(TCP_ACK, P0, *highest, NULL, 0);
	tcp_conn_info(H.conn, &info);
	return info.cwnd;
}

static uint64_t cc_recovery_time(enum tcp_cc_algo cc, uint32_t *w_out)
{
	struct tcp_conn_info info;
	uint32_t highest = O0, w, cwnd = 0;
	uint64_t t_loss;
	int i;

	H.lopts.no_pacing = true;	/* whole rounds at one instant (bulk_round()) */
	H.lopts.cc = cc;
	H.lopts.gso_max_bytes = 65535;
	establish_passive();
	while (cwnd < 100)
		cwnd = bulk_round(&highest);
	w = cwnd;
	/* lose everything in flight: the RTO fires */
	bulk_round(&highest);
	h_drain();
	for (i = 0; i < 3; i++) {	/* the tail loss probe is lost too */
		run_until(tcp_next_deadline(H.s));
		tcp_conn_info(H.conn, &info);
		if (info.stats.rto_count)
			break;	/* keep the retransmission: it gets through */
		h_drain();
	}
	ck_assert_uint_eq(info.stats.rto_count, 1);
	ck_assert_uint_eq(info.cwnd, 1);
	t_loss = H.now;
	w = info.ssthresh;
	highest = O0 + (uint32_t)info.stats.bytes_acked;
	for (i = 0; i < 400 && cwnd < w * 10 / 7; i++) {
		cwnd = bulk_round(&highest);
		if (getenv("CC_VERBOSE")) {
			tcp_conn_info(H.conn, &info);
			fprintf(stderr, "round %d cwnd %u ssthresh %u unacked %u rto %llu tlp %llu rec %llu\n", i,
				info.cwnd, info.ssthresh, info.unacked_bytes, (unsigned long long)info.stats.rto_count,
				(unsigned long long)info.stats.tlp_probes, (unsigned long long)info.stats.fast_recoveries);
		}
	}
	*w_out = w;
	tcp_abort(H.conn, H.now);
	h_drain();
	return H.now - t_loss;
}

START_TEST(test_cubic_vs_reno_growth)
{
	uint32_t w_cubic, w_reno;
	uint64_t t_cubic, t_reno;
	double k;

	t_cubic = cc_recovery_time(TCP_CC_CUBIC, &w_cubic);
	teardown();
	setup();
	t_reno = cc_recovery_time(TCP_CC_RENO, &w_reno);
	/* RFC 9438: back at W_max = ssthresh / 0.7 about K = cbrt(0.3 W / 0.4) s after slow start to ssthresh */
	k = 1;
	while (k * k * k < 0.3 * (w_cubic * 10 / 7) / 0.4)
		k += 0.01;
	/* (slow start ~0.8 s adds, the plateau within one MSS of W_max (+-1.4 s) takes off) */
	ck_assert_msg(t_cubic > (uint64_t)((k - 1.5) * SEC) && t_cubic < (uint64_t)((k + 2) * SEC),
		      "cubic took %.2f s to regain W_max, K = %.2f s", (double)t_cubic / SEC, k);
	/* Reno adds one MSS per RTT: (W_max - ssthresh) RTTs of 100 ms */
	ck_assert_msg(t_reno > (uint64_t)(w_reno * 3 / 7) * 100 * MS, "reno took %.2f s (ssthresh %u)",
		      (double)t_reno / SEC, w_reno);
	ck_assert_uint_lt(t_cubic, t_reno);
}
END_TEST

START_TEST(test_tlp_repairs_tail)
{
	static uint8_t d[3 * 1448];
	struct tcp_conn_info info;

	establish_passive();
	tcp_send(H.conn, d, sizeof(d), H.now);
	expect_seg(TCP_ACK, O0, P0, 1448);
	expect_seg(TCP_ACK, O0 + 1448, P0, 1448);
	expect_seg(TCP_ACK | TCP_PSH, O0 + 2896, P0, 1448);
	/* PTO = max(2 SRTT, 10 ms), before the 200 ms RTO */
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 10 * MS);
	run_until(H.now + 10 * MS);
	expect_seg(TCP_ACK | TCP_PSH, O0 + 2896, P0, 1448);	/* the last segment again */
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 200 * MS);	/* then the RTO, no second probe */
	in(TCP_ACK, P0, O0 + sizeof(d), NULL, 0);	/* the probe repaired the tail */
	expect_none();
	ck_assert_uint_eq(tcp_next_deadline(H.s), UINT64_MAX);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.tlp_probes, 1);
	ck_assert_uint_eq(info.stats.rto_count, 0);
	ck_assert_uint_eq(info.cwnd, 10);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_tlp_sacked_probe_starts_recovery)
{
	static uint8_t d[4 * 1448];
	struct tcp_conn_info info;

	establish_passive();
	tcp_send(H.conn, d, sizeof(d), H.now);
	h_drain();
	H.now += 5 * MS;
	in(TCP_ACK, P0, O0 + 1448, NULL, 0);	/* only the first one arrived */
	run_until(tcp_next_deadline(H.s));
	expect_seg(TCP_ACK | TCP_PSH, O0 + 3 * 1448, P0, 1448);	/* probe */
	/*
	 * the probe is SACKed an RTT later: both holes below it were sent
	 * more than RACK.rtt + reo_wnd before it, so they are lost (DupThresh
	 * would say no)
	 */
	H.now += 5 * MS;
	in_sack(O0 + 1448, O0 + 3 * 1448, O0 + 4 * 1448);
	expect_seg(TCP_ACK, O0 + 1448, P0, 1448);
	expect_seg(TCP_ACK, O0 + 2896, P0, 1448);
	expect_none();
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.sack_recoveries, 1);
	ck_assert_uint_eq(info.stats.rto_count, 0);
	in(TCP_ACK, P0, O0 + sizeof(d), NULL, 0);
	ck_assert_uint_eq(tcp_next_deadline(H.s), UINT64_MAX);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_no_tlp_without_sack)
{
	static uint8_t d[3 * 1448];

	H.peer_sack = false;
	establish_passive();
	tcp_send(H.conn, d, sizeof(d), H.now);
	h_drain();
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 200 * MS);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * A retransmission lost again with nothing sent after it: no delivery can
 * tell RACK, so without a probe only the RTO (200 ms) would find it. The
 * probe timer also runs during recovery: 2 SRTT without an ACK and the
 * first unSACKed segment goes again.
 */
START_TEST(test_tlp_repairs_lost_retransmission)
{
	static uint8_t d[4 * 1448];
	struct tcp_conn_info info;
	uint64_t t0;

	establish_passive_rtt(10 * MS);
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	h_drain();
	t0 = H.now;
	H.now += 10 * MS;
	in_sack(O0, O0 + 1448, O0 + 4 * 1448);	/* segment 1 lost */
	expect_seg(TCP_ACK, O0, P0, 1448);	/* RACK: lost, resent */
	expect_none();
	/* the resend is lost too: the probe comes 2 SRTT (20 ms) later, long before the RTO */
	ck_assert_uint_eq(tcp_next_deadline(H.s), H.now + 20 * MS);
	ck_assert_uint_lt(H.now + 20 * MS, t0 + 200 * MS);
	run_until(H.now + 20 * MS);
	expect_seg(TCP_ACK, O0, P0, 1448);
	expect_none();
	H.now += 10 * MS;
	in(TCP_ACK, P0, O0 + sizeof(d), NULL, 0);
	expect_none();
	ck_assert_uint_eq(tcp_next_deadline(H.s), UINT64_MAX);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.rto_count, 0);
	ck_assert_uint_eq(info.stats.tlp_probes, 1);
	ck_assert_uint_eq(info.stats.retrans_segs, 2);
	ck_assert_uint_eq(info.stats.sack_recoveries, 1);
	ck_assert_uint_eq(info.tlp_recoveries, 0);	/* the recovery already reduced cwnd: once */
	ck_assert_uint_eq(info.ssthresh, 7);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * RFC 8985 7.4: the probe resent the last segment. An ACK beyond the probe
 * without a D-SACK for it means only the probe arrived: the original was
 * lost, and that loss costs one cwnd reduction (CUBIC: 10 -> 7), once. A
 * D-SACK for the probe means both arrived: no reduction.
 */
static void tlp_probe_then_more(bool dsack)
{
	static uint8_t d[4 * 1448];
	struct tcp_conn_info info;
	int i;

	establish_passive();
	ck_assert_int_eq(tcp_send(H.conn, d, 3 * 1448, H.now), 3 * 1448);
	h_drain();
	run_until(tcp_next_deadline(H.s));
	expect_seg(TCP_ACK | TCP_PSH, O0 + 2896, P0, 1448);	/* the probe */
	expect_none();
	H.now += 1 * MS;
	if (dsack)
		in_sack(O0 + 3 * 1448, O0 + 2896, O0 + 3 * 1448);	/* the ACK with the probe's duplicate */
	else
		in(TCP_ACK, P0, O0 + 3 * 1448, NULL, 0);		/* from the probe, or the original? */
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.cwnd, 10);	/* not known yet */
	/* the next data's ACK goes beyond the probe */
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(tcp_send(H.conn, d, 1448, H.now), 1448);
		expect_seg(TCP_ACK | TCP_PSH, O0 + (3 + i) * 1448, P0, 1448);
		H.now += 1 * MS;
		in(TCP_ACK, P0, O0 + (4 + i) * 1448, NULL, 0);
		tcp_conn_info(H.conn, &info);
		ck_assert_uint_eq(info.cwnd, dsack ? 10 : 7);
		ck_assert_uint_eq(info.tlp_recoveries, dsack ? 0 : 1);
	}
	expect_none();
	ck_assert_uint_eq(info.stats.tlp_probes, 1);
	ck_assert_uint_eq(info.stats.rto_count, 0);
	ck_assert_uint_eq(info.stats.sack_recoveries, 0);
	tcp_abort(H.conn, H.now);
	h_drain();
}

START_TEST(test_tlp_repaired_loss_cuts_cwnd_once)
{
	tlp_probe_then_more(false);
}
END_TEST

START_TEST(test_tlp_dsacked_probe_no_cut)
{
	tlp_probe_then_more(true);
}
END_TEST

/*
 * RFC 8985 replaces Early Retransmit: with fewer than DupThresh segments
 * SACKed, the hole is lost only reo_wnd = min_RTT / 4 after RACK.rtt has
 * passed since it was sent, and the RACK reordering timer says when.
 */
START_TEST(test_rack_timer_marks_lost)
{
	static uint8_t d[3 * 1448];
	struct tcp_conn_info info;
	uint64_t t0;

	establish_passive_rtt(5 * MS);
	tcp_send(H.conn, d, sizeof(d), H.now);
	h_drain();
	t0 = H.now;
	H.now += 5 * MS;
	in_sack(O0, O0 + 1448, O0 + 2896);
	expect_none();	/* 1 of 3 SACKed: maybe reordered */
	in_sack(O0, O0 + 1448, O0 + 4344);
	expect_none();	/* 2 of 3: still below DupThresh, RACK waits */
	/* timer: sent at t0 + RACK.rtt (5 ms) + reo_wnd (5 ms / 4) */
	ck_assert_uint_eq(tcp_next_deadline(H.s), t0 + 6250);
	run_until(t0 + 6249);
	expect_none();
	run_until(t0 + 6250);
	expect_seg(TCP_ACK, O0, P0, 1448);
	expect_none();
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.sack_recoveries, 1);
	ck_assert_uint_eq(info.stats.tlp_probes, 0);
	ck_assert_uint_eq(info.rack_marked, 1);
	ck_assert_uint_eq(info.rack_reo_wnd_us, 1250);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * Reordering within reo_wnd costs nothing: the hole is filled before the
 * RACK timer. Once reordering was seen, even 4 segments SACKed above a hole
 * (DupThresh would retransmit at once) only arm the timer.
 */
START_TEST(test_rack_reordering_no_retransmit)
{
	static uint8_t d[10 * 1448];
	struct tcp_conn_info info;
	uint64_t t0;

	H.lopts.no_pacing = true;	/* one instant per flight: RACK's times are what is measured */
	establish_passive_rtt(10 * MS);
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	h_drain();
	t0 = H.now;
	H.now += 10 * MS;
	in_sack(O0, O0 + 1448, O0 + 2896);	/* segment 2 overtook segment 1 */
	expect_none();
	ck_assert_uint_eq(tcp_next_deadline(H.s), t0 + 12500);
	H.now += 1 * MS;
	in(TCP_ACK, P0, O0 + 2896, NULL, 0);	/* segment 1 arrives: reordering seen */
	expect_none();
	/* 4 .. 7 SACKed above segment 3: reo_wnd stays min_RTT / 4 */
	in_sack(O0 + 2896, O0 + 3 * 1448, O0 + 4 * 1448);
	in_sack(O0 + 2896, O0 + 3 * 1448, O0 + 5 * 1448);
	in_sack(O0 + 2896, O0 + 3 * 1448, O0 + 6 * 1448);
	in_sack(O0 + 2896, O0 + 3 * 1448, O0 + 7 * 1448);
	expect_none();
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.rack_reo_wnd_us, 2500);
	/* segment 7 was SACKed 11 ms after it left: RACK.rtt 11 ms + 2.5 ms */
	ck_assert_uint_eq(tcp_next_deadline(H.s), t0 + 13500);
	H.now += 1 * MS;
	in(TCP_ACK, P0, O0 + 10 * 1448, NULL, 0);	/* everything arrived */
	expect_none();
	ck_assert_uint_eq(tcp_next_deadline(H.s), UINT64_MAX);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.retrans_segs, 0);
	ck_assert_uint_eq(info.stats.sack_recoveries, 0);
	ck_assert_uint_ge(info.cwnd, 10);	/* no reduction */
	/* beyond the window it is a loss: segment 11 of the next flight */
	ck_assert_int_eq(tcp_send(H.conn, d, 3 * 1448, H.now), 3 * 1448);
	h_drain();
	t0 = H.now;
	H.now += 10 * MS;
	in_sack(O0 + 10 * 1448, O0 + 11 * 1448, O0 + 13 * 1448);
	expect_none();
	run_until(tcp_next_deadline(H.s));
	ck_assert_uint_eq(H.now, t0 + 12500);
	expect_seg(TCP_ACK, O0 + 10 * 1448, P0, 1448);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * A retransmission lost again: RACK finds it by time, from the delivery of
 * a retransmission sent after it, with no new data behind it.
 */
START_TEST(test_rack_lost_retransmission)
{
	static uint8_t d[10 * 1448];
	struct tcp_conn_info info;
	uint64_t t0;
	int n;

	H.lopts.no_pacing = true;	/* one instant per flight: RACK's times are what is measured */
	establish_passive_rtt(10 * MS);
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	h_drain();
	t0 = H.now;
	H.now += 10 * MS;
	/* reordering seen first, so that reo_wnd = 2.5 ms even in recovery */
	in_sack(O0, O0 + 1448, O0 + 2896);
	H.now += 1 * MS;
	in(TCP_ACK, P0, O0 + 2896, NULL, 0);
	/* segments 3 and 4 lost: 5 .. 10 SACKed 11 ms after they left */
	in_sack(O0 + 2896, O0 + 4 * 1448, O0 + 10 * 1448);
	expect_none();
	ck_assert_uint_eq(tcp_next_deadline(H.s), t0 + 13500);
	run_until(t0 + 13500);
	expect_seg(TCP_ACK, O0 + 2896, P0, 1448);
	expect_seg(TCP_ACK, O0 + 3 * 1448, P0, 1448);
	expect_none();
	/* the resent segment 4 is SACKed an RTT later, the resent 3 is not */
	H.now += 10 * MS;
	in_sack(O0 + 2896, O0 + 3 * 1448, O0 + 10 * 1448);
	expect_none();
	/* R3 left at t0 + 13.5 ms: lost at that + RACK.rtt (R4's 10 ms) + reo_wnd */
	ck_assert_uint_eq(tcp_next_deadline(H.s), t0 + 13500 + 10 * MS + 2500);
	run_until(tcp_next_deadline(H.s));
	expect_seg(TCP_ACK, O0 + 2896, P0, 1448);	/* found by the timer */
	expect_none();
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.retrans_segs, 3);
	ck_assert_uint_eq(info.rack_marked, 3);
	ck_assert_uint_eq(info.stats.rto_count, 0);
	n = in(TCP_ACK, P0, O0 + 10 * 1448, NULL, 0);
	ck_assert_int_eq(n, 0);
	ck_assert_uint_eq(tcp_next_deadline(H.s), UINT64_MAX);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * PAWS and reordered ACKs: a duplicate ACK that arrives after a newer one
 * has an older TSval; dropping it would lose its SACK blocks (Linux's
 * tcp_disordered_ack() accepts it, so do we). Data with an old TSval is
 * still dropped.
 */
START_TEST(test_paws_disordered_dupack)
{
	struct tcp_stack_stats st;
	struct tcp_seg_in s;

	establish_passive_rtt(10 * MS);
	send_ten();
	s = pseg(TCP_ACK, P0, O0, NULL, 0);
	s.opts.ts_val = 5000;
	s.opts.nsack = 1;
	s.opts.sack[0].start = O0 + 1448;
	s.opts.sack[0].end = O0 + 2 * 1448;
	tcp_input(H.s, &s, H.now);
	expect_none();
	s = pseg(TCP_ACK, P0, O0, NULL, 0);	/* sent before the one above */
	s.opts.ts_val = 4990;
	s.opts.nsack = 1;
	s.opts.sack[0].start = O0 + 1448;
	s.opts.sack[0].end = O0 + 4 * 1448;
	tcp_input(H.s, &s, H.now);
	expect_seg(TCP_ACK, O0, P0, 1448);	/* its SACK blocks count: segment 1 lost */
	expect_none();
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.drop_paws, 0);
	/* data with an old TSval is not a disordered ACK */
	s = pseg(TCP_ACK, P0, O0, "x", 1);
	s.opts.ts_val = 4990;
	tcp_input(H.s, &s, H.now);
	tcp_stack_stats(H.s, &st);
	ck_assert_uint_eq(st.drop_paws, 1);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * RFC 5681 4.1: after more than an RTO without sending, the next flight
 * starts from the initial window again; a shorter pause keeps cwnd.
 */
START_TEST(test_restart_after_idle)
{
	static uint8_t d[40 * 1448];
	struct tcp_conn_info info;
	unsigned int n;

	H.lopts.no_pacing = true;	/* bursts at one instant: what is measured here */
	establish_passive_rtt(10 * MS);
	ck_assert_int_eq(tcp_send(H.conn, d, 10 * 1448, H.now), 10 * 1448);
	h_drain();
	H.now += 10 * MS;
	in(TCP_ACK, P0, O0 + 10 * 1448, NULL, 0);	/* slow start: cwnd 20 */
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.cwnd, 20);
	/* a pause shorter than the RTO (200 ms): the whole cwnd goes out */
	H.now += 100 * MS;
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	for (n = 0; H.ncap; n++)
		pop_seg();
	ck_assert_uint_eq(n, 20);
	H.now += 10 * MS;
	in(TCP_ACK, P0, O0 + 30 * 1448, NULL, 0);
	h_drain();
	H.now += 10 * MS;
	in(TCP_ACK, P0, O0 + 50 * 1448, NULL, 0);
	h_drain();
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.unacked_bytes, 0);
	ck_assert_uint_ge(info.cwnd, 40);
	/* idle for a second: restart from 10 segments, ssthresh keeps 3/4 */
	H.now += 1 * SEC;
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	for (n = 0; H.ncap; n++)
		pop_seg();
	ck_assert_uint_eq(n, 10);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.cwnd, 10);
	ck_assert_uint_ge(info.ssthresh, 30);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * One slow-start round for the HyStart++ tests: keep the send buffer full,
 * take every segment out, and @rtt later ACK each one, echoing its own
 * TSval (so every ACK is an RTT sample of @rtt).
 */
static unsigned int ss_round(uint64_t rtt)
{
	static uint8_t d[1 << 20];
	static struct {
		uint32_t end, ts;
	} segs[1024];
	unsigned int n = 0, k;

	while (tcp_send(H.conn, d, sizeof(d), H.now) > 0)
		;
	while (H.ncap) {
		struct cap *c = pop_seg();

		ck_assert_uint_lt(n, 1024);
		segs[n].end = c->h.seq + c->h.len;
		segs[n].ts = c->h.opts.ts_val;
		n++;
	}
	H.now += rtt;
	for (k = 0; k < n; k++) {
		struct tcp_seg_in s = pseg(TCP_ACK, P0, segs[k].end, NULL, 0);

		s.opts.ts_ecr = segs[k].ts;
		tcp_input(H.s, &s, H.now);
	}
	return n;
}

/*
 * HyStart++ (RFC 9406): a round whose minimum RTT is 4 ms (at least) above
 * the last one's ends slow start: Conservative Slow Start grows a quarter
 * as fast for 5 rounds, then ssthresh = cwnd. With a steady RTT slow start
 * goes on doubling.
 */
START_TEST(test_hystart_exits_slow_start)
{
	struct tcp_conn_info info;
	unsigned int r, n, prev = 0;

	H.lopts.no_pacing = true;	/* bursts at one instant: what is measured here */
	establish_passive_rtt(10 * MS);
	for (r = 0; r < 3; r++)
		ss_round(10 * MS);	/* 10, 20, 40 segments */
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.cwnd, 80);
	ck_assert_uint_eq(info.ssthresh, 0x7fffffff);
	n = ss_round(20 * MS);	/* the queue builds: +10 ms */
	ck_assert_uint_eq(n, 80);
	tcp_conn_info(H.conn, &info);
	/* the 8th sample of the round starts CSS: 7 ACKs at full speed, 73 at a quarter */
	ck_assert_uint_eq(info.cwnd, 80 + 7 + 73 / 4);
	ck_assert_uint_eq(info.ssthresh, 0x7fffffff);
	for (r = 0; r < 5; r++) {
		n = ss_round(20 * MS);
		ck_assert_uint_lt(n, prev ? prev * 3 / 2 : 200);	/* ~1.25 per round, not 2 */
		prev = n;
	}
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.ssthresh, info.cwnd);	/* congestion avoidance now */
	ck_assert_uint_eq(info.stats.retrans_segs, 0);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_hystart_steady_rtt)
{
	struct tcp_conn_info info;
	unsigned int r;

	H.lopts.no_pacing = true;	/* bursts at one instant: what is measured here */
	establish_passive_rtt(10 * MS);
	for (r = 0; r < 5; r++)
		ss_round(10 * MS + r * 2 * MS);	/* +2 ms per round: below RttThresh */
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.cwnd, 320);
	ck_assert_uint_eq(info.ssthresh, 0x7fffffff);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/* RFC 3708: every retransmission of the episode D-SACKed: cwnd comes back. */
START_TEST(test_dsack_undo)
{
	struct tcp_conn_info info;
	struct tcp_seg_in s;
	uint32_t ssthresh0;

	establish_passive();
	tcp_conn_info(H.conn, &info);
	ssthresh0 = info.ssthresh;
	send_ten();
	in_sack(O0, O0 + 1448, O0 + 4 * 1448);	/* 3 SACKed: segment 1 "lost" */
	expect_seg(TCP_ACK, O0, P0, 1448);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.cwnd, 7);
	ck_assert_uint_eq(info.ssthresh, 7);
	/* it was only late: everything is acknowledged, recovery ends */
	H.now += 1 * MS;
	in(TCP_ACK, P0, O0 + 10 * 1448, NULL, 0);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.undos, 0);
	ck_assert_uint_le(info.cwnd, 7);
	/* then the retransmission arrives too: the peer reports a D-SACK */
	H.now += 9 * MS;
	s = pseg(TCP_ACK, P0, O0 + 10 * 1448, NULL, 0);
	s.opts.nsack = 1;
	s.opts.sack[0].start = O0;
	s.opts.sack[0].end = O0 + 1448;
	tcp_input(H.s, &s, H.now);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.dsacks_rx, 1);
	ck_assert_uint_eq(info.undos, 1);
	ck_assert_uint_eq(info.cwnd, 10);
	ck_assert_uint_eq(info.ssthresh, ssthresh0);
	expect_none();
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/* A D-SACK of data that was never retransmitted (a network duplicate) undoes nothing. */
START_TEST(test_dsack_of_original_no_undo)
{
	struct tcp_conn_info info;
	struct tcp_seg_in s;

	establish_passive();
	send_ten();
	in_sack(O0, O0 + 1448, O0 + 4 * 1448);
	expect_seg(TCP_ACK, O0, P0, 1448);
	H.now += 1 * MS;
	in(TCP_ACK, P0, O0 + 10 * 1448, NULL, 0);
	s = pseg(TCP_ACK, P0, O0 + 10 * 1448, NULL, 0);
	s.opts.nsack = 1;
	s.opts.sack[0].start = O0 + 5 * 1448;
	s.opts.sack[0].end = O0 + 6 * 1448;
	tcp_input(H.s, &s, H.now);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.dsacks_rx, 1);
	ck_assert_uint_eq(info.undos, 0);
	ck_assert_uint_le(info.cwnd, 7);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

/*
 * Eifel (RFC 3522 / 4015): the first ACK after an RTO retransmission echoes
 * the original's timestamp, so the RTO was spurious: cwnd and ssthresh come
 * back and no go-back-N follows.
 */
START_TEST(test_eifel_undo_rto)
{
	static uint8_t d[4 * 1448];
	struct tcp_conn_info info;
	struct tcp_seg_in s;
	uint32_t ts_orig;

	establish_passive();
	tcp_send(H.conn, d, sizeof(d), H.now);
	ts_orig = expect_seg(TCP_ACK, O0, P0, 1448)->h.opts.ts_val;
	h_drain();
	run_until(H.now + 10 * MS);	/* tail loss probe */
	h_drain();
	run_until(tcp_next_deadline(H.s));	/* RTO */
	expect_seg(TCP_ACK, O0, P0, 1448);
	expect_none();
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.stats.rto_count, 1);
	ck_assert_uint_eq(info.cwnd, 1);
	H.now += 1 * MS;
	s = pseg(TCP_ACK, P0, O0 + 2 * 1448, NULL, 0);
	s.opts.ts_ecr = ts_orig;	/* for the original, sent before the RTO */
	tcp_input(H.s, &s, H.now);
	tcp_conn_info(H.conn, &info);
	ck_assert_uint_eq(info.undos, 1);
	ck_assert_uint_ge(info.cwnd, 10);	/* 10 back, plus slow start for this ACK */
	/* segments 3 and 4 are not resent: they are in flight, not lost */
	expect_none();
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

START_TEST(test_prr_paces_recovery)
{
	static uint8_t d[30 * 1448];
	unsigned int k, sent = 0;

	H.lopts.no_pacing = true;	/* bursts at one instant: what is measured here */
	establish_passive();
	ck_assert_int_eq(tcp_send(H.conn, d, sizeof(d), H.now), sizeof(d));
	h_drain();	/* 10 segments out (cwnd 10), 20 more waiting */
	H.now += 10 * MS;
	in_sack(O0, O0 + 1448, O0 + 2 * 1448);
	expect_seg(TCP_ACK, O0 + 10 * 1448, P0, 1448);	/* pipe fell: one new segment (RFC 6675) */
	in_sack(O0, O0 + 1448, O0 + 3 * 1448);
	expect_seg(TCP_ACK, O0 + 11 * 1448, P0, 1448);
	in_sack(O0, O0 + 1448, O0 + 4 * 1448);	/* recovery: ssthresh 7, RecoverFS 12 segments */
	expect_seg(TCP_ACK, O0, P0, 1448);	/* the fast retransmit, nothing else yet */
	expect_none();
	for (k = 5; k <= 12; k++) {
		in_sack(O0, O0 + 1448, O0 + k * 1448);
		if (H.ncap) {
			expect_seg(TCP_ACK, O0 + (12 + sent) * 1448, P0, 1448);
			sent++;
		}
		expect_none();	/* at most one per ACK: paced, no burst */
	}
	/*
	 * PRR: about ssthresh / RecoverFS = 7/12 of a segment per segment
	 * delivered while pipe > ssthresh, then at most what brings pipe back
	 * to ssthresh (SSRB): 6 for these 9 delivered. RFC 6675 alone sends
	 * nothing until pipe falls below ssthresh.
	 */
	ck_assert_uint_ge(sent, 4);
	ck_assert_uint_le(sent, 7);
	tcp_abort(H.conn, H.now);
	h_drain();
}
END_TEST

static uint64_t xrand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Random segments around a live connection: nothing may crash or leak. */
START_TEST(test_random_segments)
{
	static uint8_t d[70000], out[70000];
	uint64_t x = 0x1234567ULL + (uint64_t)_i;
	int i;

	establish_passive();
	tcp_send(H.conn, d, 50000, H.now);
	for (i = 0; i < 20000; i++) {
		static const uint8_t fl[] = { TCP_ACK, TCP_ACK | TCP_PSH, TCP_ACK | TCP_FIN, TCP_RST, TCP_SYN,
					      TCP_ACK | TCP_RST, TCP_SYN | TCP_ACK, 0, TCP_FIN, TCP_ACK };
		struct tcp_seg_in s = pseg(fl[xrand(&x) % sizeof(fl)], 0, 0, NULL, 0);
		uint64_t r = xrand(&x);
		unsigned int k;

		s.seq = P0 + (uint32_t)(xrand(&x) % 400000) - 200000;
		if (r % 3 == 0)
			s.seq = P0 + (uint32_t)(xrand(&x) % 3000);
		s.ack = O0 + (uint32_t)(xrand(&x) % 200000) - 50000;
		if (r % 5 == 0)
			s.ack = O0 + (uint32_t)(xrand(&x) % 60000);
		s.wnd = (uint16_t)xrand(&x);
		s.len = r % 7 == 0 ? xrand(&x) % sizeof(d) : xrand(&x) % 3000;
		s.data = d;
		s.opts.has_ts = r % 11 != 0;
		s.opts.ts_val = r % 13 == 0 ? (uint32_t)xrand(&x) : H.peer_tsval++;
		s.opts.nsack = (uint8_t)(xrand(&x) % 5);
		for (k = 0; k < s.opts.nsack; k++) {
			s.opts.sack[k].start = O0 + (uint32_t)(xrand(&x) % 80000) - 10000;
			s.opts.sack[k].end = s.opts.sack[k].start + (uint32_t)(xrand(&x) % 20000) - 2000;
		}
		s.opts.has_wscale = r % 17 == 0;
		s.opts.wscale = (uint8_t)xrand(&x);
		s.opts.has_mss = r % 19 == 0;
		s.opts.mss = (uint16_t)xrand(&x);
		if (r % 23 == 0)
			s.sport = 40000 + (uint16_t)(xrand(&x) % 4);
		tcp_input(H.s, &s, H.now);
		switch (xrand(&x) % 16) {
		case 0:
			if (H.conn)
				tcp_send(H.conn, d, xrand(&x) % 20000, H.now);
			break;
		case 1:
			if (H.conn)
				tcp_recv(H.conn, out, xrand(&x) % sizeof(out), H.now);
			break;
		case 2:
			H.now += xrand(&x) % (2 * SEC);
			tcp_timers_run(H.s, H.now);
			break;
		case 3:
			if (H.conn && xrand(&x) % 50 == 0)
				tcp_shutdown_write(H.conn, H.now);
			break;
		default:
			H.now += xrand(&x) % (10 * MS);
			break;
		}
		tcp_stack_tx_done(H.s);
		h_drain();
	}
	H.now += 3600 * SEC;
	tcp_timers_run(H.s, H.now);
	h_drain();
}
END_TEST

static Suite *tcp_suite(void)
{
	Suite *s = suite_create("datapath_tcp");
	TCase *tc;

#define ADD(name, fn) do { tc = tcase_create(name); tcase_add_checked_fixture(tc, setup, teardown); \
	tcase_add_test(tc, fn); suite_add_tcase(s, tc); } while (0)
	ADD("opts_roundtrip", test_opts_roundtrip);
	ADD("opts_malformed", test_opts_malformed);
	ADD("malformed_input", test_malformed_input);
	ADD("names", test_names);
	ADD("connect_errors", test_connect_errors);
	ADD("active_open", test_active_open);
	ADD("active_open_no_options", test_active_open_no_options);
	ADD("passive_open", test_passive_open);
	ADD("synack_retransmit_and_timeout", test_synack_retransmit_and_timeout);
	ADD("accept_refused", test_accept_refused);
	ADD("syn_received_bad_ack", test_syn_received_bad_ack);
	ADD("syn_sent_rst_refused", test_syn_sent_rst_refused);
	ADD("syn_sent_bad_ack", test_syn_sent_bad_ack);
	ADD("syn_sent_challenge_ack", test_syn_sent_challenge_ack);
	ADD("reset_probe", test_reset_probe);
	ADD("secret_across_stacks", test_secret_across_stacks);
	ADD("pool_park_and_reuse", test_pool_park_and_reuse);
	ADD("lent_bytes_stay", test_lent_bytes_stay);
	ADD("lent_old_ring_no_limit", test_lent_old_ring_no_limit);
	ADD("syn_retries", test_syn_retries);
	ADD("simultaneous_open", test_simultaneous_open);
	ADD("no_listener_rst", test_no_listener_rst);
	ADD("ipv6_open", test_ipv6_open);
	ADD("data_in", test_data_in);
	ADD("peek_consume", test_peek_consume);
	ADD("sink_takes_in_order", test_sink_takes_in_order);
	ADD("ack_waits_for_push", test_ack_waits_for_push);
	ADD("send_more_then_push", test_send_more_then_push);
	ADD("delayed_ack", test_delayed_ack);
	ADD("data_out", test_data_out);
	ADD("gso_segments", test_gso_segments);
	ADD("sndbuf_backpressure", test_sndbuf_backpressure);
	ADD("nagle", test_nagle);
	ADD("no_nagle_default", test_no_nagle_default);
	ADD("ooo_reassembly", test_ooo_reassembly);
	ADD("ooo_bounded", test_ooo_bounded);
	ADD("sack_blocks_most_recent", test_sack_blocks_most_recent);
	ADD("sack_compression", test_sack_compression);
	ADD("out_of_window_data", test_out_of_window_data);
	ADD("window_update_on_read", test_window_update_on_read);
	ADD("scaled_window_fits_ring", test_scaled_window_fits_ring);
	ADD("zero_window_persist", test_zero_window_persist);
	ADD("sws_persist_forces_small_segment", test_sws_persist_forces_small_segment);
	ADD("passive_close", test_passive_close);
	ADD("active_close_timewait", test_active_close_timewait);
	ADD("closing_state", test_closing_state);
	ADD("fin_wait1_fin_ack_together", test_fin_wait1_fin_ack_together);
	ADD("fin_retransmit", test_fin_retransmit);
	ADD("close_with_data_and_fin", test_close_with_data_and_fin);
	ADD("close_unread_sends_rst", test_close_unread_sends_rst);
	ADD("close_from_callback", test_close_from_callback);
	ADD("orphan_data_rst", test_orphan_data_rst);
	ADD("rst_exact", test_rst_exact);
	ADD("rst_in_window_challenge", test_rst_in_window_challenge);
	ADD("syn_in_established_challenge", test_syn_in_established_challenge);
	ADD("challenge_ack_rate_limit", test_challenge_ack_rate_limit);
	ADD("ack_out_of_range", test_ack_out_of_range);
	ADD("paws", test_paws);
	ADD("rto_backoff", test_rto_backoff);
	ADD("rto_gives_up", test_rto_gives_up);
	ADD("rto_goes_back_n", test_rto_goes_back_n);
	ADD("sack_fast_retransmit", test_sack_fast_retransmit);
	ADD("newreno_fast_retransmit", test_newreno_fast_retransmit);
	ADD("pmtu_resplit", test_pmtu_resplit);
	ADD("seq_wraparound", test_seq_wraparound);
	ADD("keepalive", test_keepalive);
	ADD("rcvbuf_autotune", test_rcvbuf_autotune);
	ADD("syn_cookies", test_syn_cookies);
	ADD("syn_cookie_first_flight_lost", test_syn_cookie_first_flight_lost);
	ADD("syn_cookie_replaces_half_open", test_syn_cookie_replaces_half_open);
	ADD("timewait_bound", test_timewait_bound);
	ADD("timewait_reopen", test_timewait_reopen);
	ADD("timewait_fifo_timers", test_timewait_fifo_timers);
	ADD("cubic_vs_reno_growth", test_cubic_vs_reno_growth);
	ADD("tlp_repairs_tail", test_tlp_repairs_tail);
	ADD("tlp_sacked_probe_starts_recovery", test_tlp_sacked_probe_starts_recovery);
	ADD("no_tlp_without_sack", test_no_tlp_without_sack);
	ADD("tlp_repairs_lost_retransmission", test_tlp_repairs_lost_retransmission);
	ADD("tlp_repaired_loss_cuts_cwnd_once", test_tlp_repaired_loss_cuts_cwnd_once);
	ADD("tlp_dsacked_probe_no_cut", test_tlp_dsacked_probe_no_cut);
	ADD("rack_timer_marks_lost", test_rack_timer_marks_lost);
	ADD("rack_reordering_no_retransmit", test_rack_reordering_no_retransmit);
	ADD("rack_lost_retransmission", test_rack_lost_retransmission);
	ADD("paws_disordered_dupack", test_paws_disordered_dupack);
	ADD("restart_after_idle", test_restart_after_idle);
	ADD("hystart_exits_slow_start", test_hystart_exits_slow_start);
	ADD("hystart_steady_rtt", test_hystart_steady_rtt);
	ADD("dsack_undo", test_dsack_undo);
	ADD("dsack_of_original_no_undo", test_dsack_of_original_no_undo);
	ADD("eifel_undo_rto", test_eifel_undo_rto);
	ADD("prr_paces_recovery", test_prr_paces_recovery);
	tc = tcase_create("random_segments");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_random_segments, 0, 8);
	suite_add_tcase(s, tc);
#undef ADD
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(tcp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
