// SPDX-License-Identifier: MIT
/*
 * test_datapath_loop.c - the timer wheel with a fake clock, epoll dispatch
 * and turn-end hooks.
 */
#include <check.h>
#include <sys/epoll.h>
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

static void on_fd(struct loop_fd *h, uint32_t events)
{
	char c;

	if (events & EPOLLIN && read(h->fd, &c, 1) == 1)
		fd_events++;
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
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
