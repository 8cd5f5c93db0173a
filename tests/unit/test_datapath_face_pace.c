// SPDX-License-Identifier: MIT
/*
 * test_datapath_face_pace.c - the face's pacer with a fake clock: what a
 * datapath keeping up passes on leaves at once; what a stall piled up
 * leaves spaced as it arrived (3/4 of each gap), only a bounded catch-up
 * at once; a held item is sent by FACE_PACE_MAX_HOLD_US at the latest (an
 * overrun); what had to wait is flushed as it leaves, what did not waits
 * for the turn's end; what fini hands back; the TUN's stamps spread a
 * backlog by the rate and, once the datapath keeps up, stay within a read of
 * when a datagram came.
 */
#include <check.h>
#include <stdlib.h>

#include "datapath/face/face_int.h"

#define N_ITEMS	64

struct sent_item {
	struct face_pace_item item;
	int id;
};

static struct loop *g_loop;
static uint64_t sent_at[N_ITEMS];
static int sent_order[N_ITEMS], n_sent, n_dropped;
static int n_flushes, sent_at_flush;	/* flushes asked for; n_sent at the last */

static void on_send(struct face_pace_item *it, void *ctx)
{
	struct sent_item *s = (struct sent_item *)it;

	(void)ctx;
	sent_at[s->id] = loop_now_us(g_loop);
	sent_order[n_sent++] = s->id;
	free(s);
}

static void on_flush(void *ctx)
{
	(void)ctx;
	n_flushes++;
	sent_at_flush = n_sent;
}

static void on_drop(struct face_pace_item *it)
{
	n_dropped++;
	free(it);
}

static void submit(struct face_pacer *pc, int id, uint64_t arrived_us, size_t bytes)
{
	struct sent_item *s = calloc(1, sizeof(*s));

	ck_assert_ptr_nonnull(s);
	s->id = id;
	s->item.arrived_us = arrived_us;
	s->item.bytes = bytes;
	face_pace_submit(pc, &s->item);
}

static void setup(struct face_pacer *pc)
{
	g_loop = loop_new(true);
	ck_assert_ptr_nonnull(g_loop);
	n_sent = n_dropped = n_flushes = sent_at_flush = 0;
	face_pace_init(pc, g_loop, on_send, on_flush, NULL);
}

static void teardown(struct face_pacer *pc)
{
	face_pace_fini(pc, on_drop);
	loop_free(g_loop);
}

/* Advance the fake clock in steps of @step_us until @until_us. */
static void run_until(uint64_t until_us, uint64_t step_us)
{
	while (loop_now_us(g_loop) < until_us)
		loop_advance_us(g_loop, step_us);
}

START_TEST(test_keeping_up_holds_nothing)
{
	struct face_pacer pc;
	int i;

	setup(&pc);
	loop_advance_us(g_loop, 1000);
	for (i = 0; i < 20; i++) {
		/* each read 5 us after it arrived, 100 us apart */
		submit(&pc, i, loop_now_us(g_loop) - 5, 14000);
		ck_assert_int_eq(n_sent, i + 1);
		loop_advance_us(g_loop, 100);
	}
	ck_assert_uint_eq(pc.stats.held, 0);
	ck_assert_uint_eq(pc.n, 0);
	ck_assert_int_eq(n_flushes, 0);	/* nothing waited: it leaves with the turn */
	teardown(&pc);
}
END_TEST

START_TEST(test_stall_replayed_at_three_quarters)
{
	struct face_pacer pc;
	int i, at_once;

	setup(&pc);
	loop_advance_us(g_loop, 1000);
	submit(&pc, 0, 990, 1400);	/* kept up: sent, the clock starts */
	ck_assert_int_eq(n_sent, 1);
	/* a stall: 20 items that arrived 100 us apart from 1100 on, read at 10000 */
	run_until(10000, 1000);
	for (i = 1; i <= 20; i++)
		submit(&pc, i, 1000 + 100 * (uint64_t)i, 1400);
	/* at once: the first (its gap is long gone) and the bounded catch-up */
	at_once = n_sent;
	ck_assert_int_ge(at_once, 2);
	ck_assert_int_le(at_once, 1 + 1 + (200 + 50) / 75);
	ck_assert_uint_eq(pc.stats.held, (uint64_t)(21 - at_once));
	/* what waited is flushed in the same step as it leaves, not at the turn's end */
	while (n_sent < 21 && loop_now_us(g_loop) < 20000) {
		int before = n_sent, flushes = n_flushes;

		loop_advance_us(g_loop, 5);
		if (n_sent > before) {
			ck_assert_int_eq(n_flushes, flushes + 1);
			ck_assert_int_eq(sent_at_flush, n_sent);
		}
	}
	ck_assert_int_eq(n_sent, 21);
	for (i = 0; i < 21; i++)
		ck_assert_int_eq(sent_order[i], i);
	/* the rest spaced as they came, at 3/4 of each gap (the clock moves in 5 us steps) */
	for (i = at_once + 1; i <= 20; i++)
		ck_assert_uint_ge(sent_at[i] - sent_at[i - 1], 75 - 5);
	/* and done within 3/4 of the stall's spread, plus the slack's worth */
	ck_assert_uint_le(sent_at[20] - sent_at[1], 19 * 75 + 50);
	ck_assert_uint_eq(pc.stats.overruns, 0);
	ck_assert_uint_eq(pc.n, 0);
	teardown(&pc);
}
END_TEST

START_TEST(test_catch_up_bounded)
{
	struct face_pacer pc;
	int i;

	setup(&pc);
	loop_advance_us(g_loop, 1000);
	submit(&pc, 0, 999, 1400);
	run_until(20000, 1000);
	/* 63 items that arrived over 6.3 ms, read at once after a stall */
	for (i = 1; i < N_ITEMS; i++)
		submit(&pc, i, 1000 + 100 * (uint64_t)i, 1400);
	/*
	 * What leaves at once: the first, then as many as fit in the
	 * departure clock's allowed lag (200 us) and the slack (50 us) at
	 * 75 us each; not the 6.3 ms that piled up.
	 */
	ck_assert_int_gt(n_sent, 1);
	ck_assert_int_le(n_sent, 1 + 1 + (200 + 50) / 75);
	run_until(40000, 5);
	ck_assert_int_eq(n_sent, N_ITEMS);
	ck_assert_uint_eq(pc.stats.overruns, 0);
	teardown(&pc);
}
END_TEST

START_TEST(test_held_at_most_max_hold)
{
	struct face_pacer pc;

	setup(&pc);
	loop_advance_us(g_loop, 1000);
	submit(&pc, 0, 1000, 1400);
	run_until(50000, 1000);
	/* a stall of 49 ms: two items 40 ms apart, read together */
	submit(&pc, 1, 5000, 1400);	/* its due is long past: at once */
	ck_assert_int_eq(n_sent, 2);
	submit(&pc, 2, 45000, 1400);	/* due 3/4 of 40 ms after the first left */
	ck_assert_int_eq(n_sent, 2);
	ck_assert_uint_eq(pc.stats.held, 1);
	run_until(50000 + 24900, 100);
	ck_assert_int_eq(n_sent, 2);
	run_until(50000 + 25100, 100);
	ck_assert_int_eq(n_sent, 3);
	ck_assert_uint_eq(sent_at[2], 50000 + 25000);	/* held 25 ms, not 30 */
	ck_assert_uint_eq(pc.stats.overruns, 1);
	teardown(&pc);
}
END_TEST

START_TEST(test_fini_hands_back_held)
{
	struct face_pacer pc;
	int i, at_once;

	setup(&pc);
	loop_advance_us(g_loop, 1000);
	submit(&pc, 0, 1000, 1400);
	run_until(10000, 1000);
	for (i = 1; i <= 10; i++)
		submit(&pc, i, 1000 + 200 * (uint64_t)i, 1400);
	at_once = n_sent;
	ck_assert_int_lt(at_once, 11);
	face_pace_fini(&pc, on_drop);
	ck_assert_int_eq(n_dropped, 11 - at_once);
	ck_assert_uint_eq(pc.n, 0);
	ck_assert_uint_eq(pc.bytes, 0);
	loop_advance_us(g_loop, 10000);	/* the timer went with them */
	ck_assert_int_eq(n_sent, at_once);
	loop_free(g_loop);
}
END_TEST

START_TEST(test_tun_stamps_spread_a_backlog)
{
	struct face_pacer pc;
	uint64_t at, prev = 0, read;
	int i;

	setup(&pc);
	loop_advance_us(g_loop, 1000);
	/* 1400 bytes every 100 us for 20 ms: 14 000 bytes a millisecond */
	for (i = 0; i < 200; i++) {
		read = loop_now_us(g_loop);
		at = face_pace_arrival(&pc, read, 0, 1400);
		ck_assert_uint_le(at, read);
		loop_advance_us(g_loop, 100);
	}
	/* a 10 ms stall: the 100 datagrams that came meanwhile, read at once */
	loop_advance_us(g_loop, 10000);
	read = loop_now_us(g_loop);
	for (i = 0; i < 100; i++) {
		at = face_pace_arrival(&pc, read, 0, 1400);
		ck_assert_uint_le(at, read);
		if (i) {
			ck_assert_uint_ge(at - prev, 99);	/* 1400 B at 14 B/us */
			ck_assert_uint_le(at - prev, 101);
		}
		prev = at;
	}
	ck_assert_uint_ge(prev, read - 1000);	/* the last about when they were read */
	/* after a pause, one datagram: stamped as if at the rate, and in the past */
	loop_advance_us(g_loop, 100000);
	read = loop_now_us(g_loop);
	at = face_pace_arrival(&pc, read, 0, 1400);
	ck_assert_uint_le(at, read);
	teardown(&pc);
}
END_TEST

/*
 * A backlog's bytes make the rate look four times what it is for the next
 * windows, so the stamps of what follows fall behind: the link's "its
 * queue was empty at" (after_us) brings each back to within a read of when
 * it came, and the next stall's backlog spreads over that stall, from its
 * start, without a pause that was not there. (Before after_us, the stamps
 * stayed behind by up to the spread's bound, for as long as the flow
 * lasted.)
 */
START_TEST(test_tun_stamps_keep_up_after_a_backlog)
{
	struct face_pacer pc;
	uint64_t at = 0, prev, read, drained = 0, stall_start;
	int i;

	setup(&pc);
	loop_advance_us(g_loop, 1000);
	for (i = 0; i < 200; i++) {	/* 1400 B every 100 us, each read alone */
		read = loop_now_us(g_loop);
		at = face_pace_arrival(&pc, read, drained, 1400);
		drained = read;
		loop_advance_us(g_loop, 100);
	}
	/* a 30 ms stall: 300 datagrams read at once */
	stall_start = drained;
	loop_advance_us(g_loop, 30000);
	read = loop_now_us(g_loop);
	for (i = 0; i < 300; i++)
		at = face_pace_arrival(&pc, read, drained, 1400);
	drained = read;
	/* 50 ms of steady reads again: the rate looks 4x for two windows */
	for (i = 0; i < 500; i++) {
		loop_advance_us(g_loop, 100);
		read = loop_now_us(g_loop);
		at = face_pace_arrival(&pc, read, drained, 1400);
		ck_assert_uint_le(at, read);
		ck_assert_uint_ge(at, drained);	/* within a read of when it came */
		drained = read;
	}
	/* another stall: its backlog spreads from where it began, evenly */
	stall_start = drained;
	loop_advance_us(g_loop, 25000);
	read = loop_now_us(g_loop);
	prev = at;
	for (i = 0; i < 250; i++) {
		at = face_pace_arrival(&pc, read, drained, 1400);
		ck_assert_uint_ge(at, stall_start);
		ck_assert_uint_le(at - prev, 101);	/* no pause replayed */
		ck_assert_uint_ge(at - prev, 99);	/* nor a pile */
		prev = at;
	}
	ck_assert_uint_ge(at, read - 1000);
	teardown(&pc);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("datapath_face_pace");
	TCase *tc = tcase_create("pace");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_keeping_up_holds_nothing);
	tcase_add_test(tc, test_stall_replayed_at_three_quarters);
	tcase_add_test(tc, test_catch_up_bounded);
	tcase_add_test(tc, test_tun_stamps_keep_up_after_a_backlog);
	tcase_add_test(tc, test_held_at_most_max_hold);
	tcase_add_test(tc, test_fini_hands_back_held);
	tcase_add_test(tc, test_tun_stamps_spread_a_backlog);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
