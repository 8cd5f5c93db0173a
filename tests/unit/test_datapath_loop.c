// SPDX-License-Identifier: MIT
/*
 * test_datapath_loop.c - the timer wheel with a fake clock, epoll dispatch,
 * turn-end hooks and busy polling.
 */
#include <check.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "datapath/loop.h"

static int fired[8];
static uint64_t fired_at[8];
static int order[16], n_order;
static struct loop *g_loop;

static void on_timer(struct loop_timer *t)
{
	int i = (int)(intptr_t)t->ctx;

	fired[i]++;
	fired_at[i] = loop_now_ms(g_loop);
	order[n_order++] = i;
}

START_TEST(test_timers_fire_in_order)
{
	struct loop_timer t[4];
	int i;

	g_loop = loop_new(true);
	ck_assert_ptr_nonnull(g_loop);
	n_order = 0;
	for (i = 0; i < 4; i++) {
		fired[i] = 0;
		loop_timer_init(&t[i], on_timer, (void *)(intptr_t)i);
	}
	loop_timer_arm(g_loop, &t[0], 300);
	loop_timer_arm(g_loop, &t[1], 15);
	loop_timer_arm(g_loop, &t[2], 7000);	/* beyond one wheel revolution */
	loop_timer_arm(g_loop, &t[3], 100);
	loop_timer_cancel(g_loop, &t[3]);
	loop_advance_ms(g_loop, 10);
	ck_assert_int_eq(fired[1], 0);
	loop_advance_ms(g_loop, 10);
	ck_assert_int_eq(fired[1], 1);
	ck_assert_uint_ge(fired_at[1], 15);
	loop_advance_ms(g_loop, 5000);
	ck_assert_int_eq(fired[0], 1);
	ck_assert_int_eq(fired[2], 0);		/* same slot after a revolution: not yet */
	ck_assert_int_eq(fired[3], 0);		/* cancelled */
	loop_advance_ms(g_loop, 2000);
	ck_assert_int_eq(fired[2], 1);
	ck_assert_uint_ge(fired_at[2], 7000);
	ck_assert_int_eq(n_order, 3);
	ck_assert_int_eq(order[0], 1);
	ck_assert_int_eq(order[1], 0);
	ck_assert_int_eq(order[2], 2);
	ck_assert(!loop_timer_armed(&t[2]));
	loop_free(g_loop);
}
END_TEST

static struct loop_timer rearm_t;
static int rearm_count;

static void on_rearm(struct loop_timer *t)
{
	if (++rearm_count < 5)
		loop_timer_arm(g_loop, t, 0);
}

START_TEST(test_rearm_from_callback_terminates)
{
	g_loop = loop_new(true);
	rearm_count = 0;
	loop_timer_init(&rearm_t, on_rearm, NULL);
	loop_timer_arm(g_loop, &rearm_t, 0);
	loop_advance_ms(g_loop, 100);
	ck_assert_int_eq(rearm_count, 5);
	loop_free(g_loop);
}
END_TEST

static int fd_events, hook_calls;

static size_t rx_per_event;	/* what on_fd tells the loop it received */

static void on_fd(struct loop_fd *h, uint32_t events)
{
	char c;

	if (events & EPOLLIN && read(h->fd, &c, 1) == 1) {
		fd_events++;
		if (rx_per_event)
			loop_count_rx(g_loop, rx_per_event, 0);
	}
}

static void on_turn(void *ctx)
{
	(void)ctx;
	hook_calls++;
}

START_TEST(test_fd_dispatch_and_hooks)
{
	struct loop_fd h;
	int p[2];

	g_loop = loop_new(false);
	ck_assert_int_eq(pipe(p), 0);
	fd_events = hook_calls = 0;
	ck_assert_int_eq(loop_fd_add(g_loop, &h, p[0], EPOLLIN, on_fd, NULL), 0);
	ck_assert_int_eq(loop_on_turn_end(g_loop, on_turn, NULL), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(loop_run_once(g_loop, 1000), 1);
	ck_assert_int_eq(fd_events, 1);
	ck_assert_int_eq(hook_calls, 1);
	ck_assert_int_eq(loop_run_once(g_loop, 0), 0);	/* nothing ready: returns at once */
	ck_assert_int_eq(hook_calls, 2);
	loop_fd_del(g_loop, &h);
	close(p[0]);
	close(p[1]);
	loop_free(g_loop);
}
END_TEST

START_TEST(test_real_clock_timer_wait)
{
	struct loop_timer t;
	int i;

	g_loop = loop_new(false);
	fired[5] = 0;
	loop_timer_init(&t, on_timer, (void *)(intptr_t)5);
	loop_timer_arm(g_loop, &t, 30);
	/* the loop sleeps until the timer; it must not spin */
	for (i = 0; i < 20 && !fired[5]; i++)
		loop_run_once(g_loop, -1);
	ck_assert_int_eq(fired[5], 1);
	ck_assert_uint_le(loop_turns(g_loop), 4);
	loop_free(g_loop);
}
END_TEST

static uint64_t precise_at[4];
static int precise_rearms;

static void on_precise(struct loop_timer *t)
{
	int i = (int)(intptr_t)t->ctx;

	precise_at[i] = loop_now_us(g_loop);
	order[n_order++] = i;
	/* armed again for a time already past: the next turn, not this run */
	if (i == 3 && ++precise_rearms < 3)
		loop_timer_arm_at_us(g_loop, t, loop_now_us(g_loop));
}

/* Precise timers run at their microsecond, in order, among wheel timers. */
START_TEST(test_precise_timers)
{
	struct loop_timer p[4], w;

	g_loop = loop_new(true);
	n_order = 0;
	precise_rearms = 0;
	fired[4] = 0;
	for (int i = 0; i < 4; i++) {
		precise_at[i] = 0;
		loop_timer_init(&p[i], on_precise, (void *)(intptr_t)i);
	}
	loop_timer_init(&w, on_timer, (void *)(intptr_t)4);
	loop_timer_arm_at_us(g_loop, &p[0], 1500);
	loop_timer_arm_at_us(g_loop, &p[1], 250);
	loop_timer_arm_at_us(g_loop, &p[2], 120);
	loop_timer_arm(g_loop, &w, 15);
	loop_timer_arm_at_us(g_loop, &p[2], 130);	/* armed again: moves */
	loop_advance_us(g_loop, 200);
	ck_assert_int_eq(n_order, 1);
	ck_assert_uint_eq(precise_at[2], 130);
	loop_advance_us(g_loop, 1800);
	ck_assert_int_eq(n_order, 3);
	ck_assert_int_eq(order[1], 1);
	ck_assert_uint_eq(precise_at[1], 250);
	ck_assert_int_eq(order[2], 0);
	ck_assert_uint_eq(precise_at[0], 1500);
	ck_assert_int_eq(fired[4], 0);
	/* a cancelled one never runs; one armed in the past runs next */
	loop_timer_arm_at_us(g_loop, &p[1], 3000);
	loop_timer_cancel(g_loop, &p[1]);
	loop_timer_arm_at_us(g_loop, &p[3], 100);
	loop_advance_us(g_loop, 10);
	ck_assert_int_eq(order[3], 3);
	ck_assert_int_eq(precise_rearms, 3);	/* re-armed at "now" twice, each in a turn of its own */
	loop_advance_ms(g_loop, 20);
	ck_assert_int_eq(fired[4], 1);
	ck_assert_uint_ge(fired_at[4], 15);
	ck_assert(!loop_timer_armed(&p[1]));
	ck_assert_int_eq(n_order, 7);	/* 2, 1, 0, 3 three times, the wheel's 4 */
	ck_assert_int_eq(order[5], 3);
	ck_assert_int_eq(order[6], 4);
	loop_free(g_loop);
}
END_TEST

/* With a real clock the wait ends at a precise timer, not at the wheel's next tick. */
START_TEST(test_precise_timer_real_clock)
{
	struct loop_timer t;
	uint64_t start_us;
	int i;

	g_loop = loop_new(false);
	n_order = 0;
	precise_at[2] = 0;
	loop_timer_init(&t, on_precise, (void *)(intptr_t)2);
	loop_run_once(g_loop, 0);
	start_us = loop_now_us(g_loop);
	loop_timer_arm_at_us(g_loop, &t, start_us + 2000);
	for (i = 0; i < 20 && !precise_at[2]; i++)
		loop_run_once(g_loop, -1);
	ck_assert_uint_ge(precise_at[2], start_us + 2000);
	/* a 10 ms tick would have made it at least 8 ms late; allow a loaded machine 5 */
	ck_assert_uint_lt(precise_at[2], start_us + 7000);
	ck_assert_uint_le(loop_turns(g_loop), 5);
	loop_free(g_loop);
}
END_TEST

/* A pipe with an fd handler on g_loop, and a turn that handled it. */
static void busy_setup(struct loop_fd *h, int p[2], unsigned int usec)
{
	g_loop = loop_new(false);
	ck_assert_int_eq(pipe(p), 0);
	fd_events = 0;
	ck_assert_int_eq(loop_fd_add(g_loop, h, p[0], EPOLLIN, on_fd, NULL), 0);
	loop_set_busy_poll(g_loop, usec);
	ck_assert_uint_eq(loop_busy_poll_us(g_loop), usec);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(loop_run_once(g_loop, 1000), 1);	/* on_fd reads it */
}

static void busy_teardown(struct loop_fd *h, int p[2])
{
	loop_fd_del(g_loop, h);
	close(p[0]);
	close(p[1]);
	loop_free(g_loop);
}

static void *write_later(void *arg)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	if (write(*(int *)arg, "y", 1) != 1)
		return arg;
	return NULL;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* An fd that becomes ready within the budget is found by the poll. */
START_TEST(test_busy_poll_finds_event)
{
	struct loop_busy_stats b;
	struct loop_fd h;
	pthread_t th;
	void *ret;
	int p[2];

	busy_setup(&h, p, 1000 * 1000);	/* 1 s: the writer comes after 20 ms */
	ck_assert_int_eq(pthread_create(&th, NULL, write_later, &p[1]), 0);
	ck_assert_int_eq(loop_run_once(g_loop, -1), 1);
	ck_assert_int_eq(pthread_join(th, &ret), 0);
	ck_assert_ptr_null(ret);
	ck_assert_int_eq(fd_events, 2);
	b = loop_busy_stats(g_loop);
	ck_assert_uint_eq(b.hits, 1);
	ck_assert_uint_eq(b.misses, 0);
	ck_assert_uint_ge(b.polls, 1);
	busy_teardown(&h, p);
}
END_TEST

/*
 * A poll that finds nothing sleeps after all, ends at a due timer, and makes
 * the next wakeups skip polling, one more each time; an idle loop never polls.
 */
START_TEST(test_busy_poll_miss_and_backoff)
{
	struct loop_busy_stats b;
	struct loop_timer t;
	struct loop_fd h;
	uint64_t t0, polls;
	int p[2];

	busy_setup(&h, p, 1000 * 1000);
	fired[6] = 0;
	loop_timer_init(&t, on_timer, (void *)(intptr_t)6);
	loop_timer_arm(g_loop, &t, 20);
	t0 = mono_ms();
	/* the poll stops where the timer is due, not at the 1 s budget */
	while (!fired[6] && mono_ms() - t0 < 5000)
		ck_assert_int_eq(loop_run_once(g_loop, -1), 0);
	ck_assert_int_eq(fired[6], 1);
	ck_assert_uint_lt(mono_ms() - t0, 900);
	b = loop_busy_stats(g_loop);
	ck_assert_uint_eq(b.hits, 0);
	ck_assert_uint_eq(b.misses, 1);
	/* the turn that missed handled nothing: the next wait does not poll */
	polls = b.polls;
	ck_assert_int_eq(loop_run_once(g_loop, 0), 0);
	ck_assert_uint_eq(loop_busy_stats(g_loop).polls, polls);

	loop_set_busy_poll(g_loop, 1000);
	/* the first miss skips none; the second skips one wakeup */
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(loop_run_once(g_loop, 1000), 1);	/* on_fd reads it */
	ck_assert_int_eq(loop_run_once(g_loop, 5), 0);
	ck_assert_uint_eq(loop_busy_stats(g_loop).misses, 2);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(loop_run_once(g_loop, 1000), 1);	/* on_fd reads it */
	polls = loop_busy_stats(g_loop).polls;
	ck_assert_int_eq(loop_run_once(g_loop, 5), 0);
	ck_assert_uint_eq(loop_busy_stats(g_loop).polls, polls);
	ck_assert_uint_eq(loop_busy_stats(g_loop).misses, 2);
	busy_teardown(&h, p);
}
END_TEST

/*
 * A turn that received a bulk transfer's worth (more than 16 KiB) is not
 * followed by a poll, nor are the 4 wakeups after it; a small one is.
 */
START_TEST(test_busy_poll_not_after_bulk)
{
	struct loop_busy_stats b;
	struct loop_fd h;
	uint64_t polls;
	int p[2], i;

	busy_setup(&h, p, 1000);
	ck_assert_uint_eq(loop_busy_stats(g_loop).bulk_turns, 0);
	/* small: 16 KiB is still polled after */
	rx_per_event = 16384;
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(loop_run_once(g_loop, 1000), 1);
	polls = loop_busy_stats(g_loop).polls;
	ck_assert_int_eq(loop_run_once(g_loop, 5), 0);
	b = loop_busy_stats(g_loop);
	ck_assert_uint_gt(b.polls, polls);
	ck_assert_uint_eq(b.bulk_turns, 0);
	/* bulk: one byte more; then five wakeups with work, the fifth polled */
	rx_per_event = 16385;
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(loop_run_once(g_loop, 1000), 1);
	ck_assert_uint_eq(loop_busy_stats(g_loop).bulk_turns, 1);
	rx_per_event = 1;
	polls = loop_busy_stats(g_loop).polls;
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(write(p[1], "x", 1), 1);
		ck_assert_int_eq(loop_run_once(g_loop, 1000), 1);
	}
	ck_assert_uint_eq(loop_busy_stats(g_loop).polls, polls);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(loop_run_once(g_loop, 1000), 1);
	ck_assert_uint_gt(loop_busy_stats(g_loop).polls, polls);
	rx_per_event = 0;
	busy_teardown(&h, p);
}
END_TEST

/* No budget, a wait of 0 ms, or a fake clock: never a poll. */
START_TEST(test_busy_poll_off)
{
	struct loop_fd h;
	int p[2];

	busy_setup(&h, p, 0);
	ck_assert_int_eq(loop_run_once(g_loop, 5), 0);
	ck_assert_uint_eq(loop_busy_stats(g_loop).polls, 0);
	busy_teardown(&h, p);

	busy_setup(&h, p, 1000);
	ck_assert_int_eq(loop_run_once(g_loop, 0), 0);
	ck_assert_uint_eq(loop_busy_stats(g_loop).polls, 0);
	busy_teardown(&h, p);

	g_loop = loop_new(true);
	loop_set_busy_poll(g_loop, 1000);
	ck_assert_uint_eq(loop_busy_poll_us(g_loop), 0);
	loop_free(g_loop);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("datapath_loop");
	TCase *tc = tcase_create("loop");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_timers_fire_in_order);
	tcase_add_test(tc, test_rearm_from_callback_terminates);
	tcase_add_test(tc, test_fd_dispatch_and_hooks);
	tcase_add_test(tc, test_real_clock_timer_wait);
	tcase_add_test(tc, test_precise_timers);
	tcase_add_test(tc, test_precise_timer_real_clock);
	tcase_add_test(tc, test_busy_poll_finds_event);
	tcase_add_test(tc, test_busy_poll_miss_and_backoff);
	tcase_add_test(tc, test_busy_poll_not_after_bulk);
	tcase_add_test(tc, test_busy_poll_off);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
