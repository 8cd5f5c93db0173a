// SPDX-License-Identifier: MIT
/*
 * test_datapath_flowlog.c - the flow log (datapath/flowlog.c): a record is
 * one JSON line with every key, strings escaped, null for no name and no
 * rule, IPv4 and IPv6, a start's end null; records reach the file in order; a writer stuck in a
 * write holds nothing up, and a full ring drops exactly what did not fit,
 * counted; a follower gets the same lines and is let go when it hangs up; a
 * ninth follower is refused. Threads: ThreadSanitizer runs this test.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "datapath/flowlog.h"

static struct flowlog_record record(int family, const char *src, const char *dst, uint16_t dport)
{
	struct flowlog_record r;

	memset(&r, 0, sizeof(r));
	r.end_unix_us = 1796000000123456ull;	/* 2026-11-30T00:53:20.123456Z */
	r.duration_us = 2500001;
	r.proto = 6;
	r.family = (uint8_t)family;
	ck_assert_int_eq(inet_pton(family, src, r.src), 1);
	ck_assert_int_eq(inet_pton(family, dst, r.dst), 1);
	r.sport = 40000;
	r.dport = dport;
	r.verdict = FLOWLOG_ALLOW;
	r.end = FLOWLOG_END_CLOSED;
	r.bytes_out = 123456;
	r.packets_out = 7;
	r.bytes_in = 61728;
	r.packets_in = 9;
	return r;
}

/* @r printed, parsed back. */
static json_t *printed(const struct flowlog_record *r, const char *container)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	json_error_t je;
	json_t *o;

	ck_assert_ptr_nonnull(f);
	flowlog_print(f, r, container);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_uint_gt(len, 0);
	ck_assert_int_eq(text[len - 1], '\n');
	ck_assert_ptr_null(memchr(text, '\n', len - 1));	/* one line */
	o = json_loads(text, 0, &je);
	ck_assert_msg(json_is_object(o), "not JSON: %s (%s)", text, je.text);
	free(text);
	return o;
}

START_TEST(test_print)
{
	struct flowlog_record r = record(AF_INET, "10.77.0.2", "10.77.0.11", 8002);
	json_t *o;

	snprintf(r.name, sizeof(r.name), "allowed.test");
	snprintf(r.rule, sizeof(r.rule), "tcp:allowed.test:8002");
	o = printed(&r, "ct \"1\"\\");
	ck_assert_str_eq(json_string_value(json_object_get(o, "container")), "ct \"1\"\\");
	ck_assert_str_eq(json_string_value(json_object_get(o, "time")), "2026-11-30T00:53:20.123456Z");
	ck_assert_str_eq(json_string_value(json_object_get(o, "proto")), "tcp");
	ck_assert_str_eq(json_string_value(json_object_get(o, "direction")), "egress");
	ck_assert_str_eq(json_string_value(json_object_get(o, "src")), "10.77.0.2");
	ck_assert_str_eq(json_string_value(json_object_get(o, "dst")), "10.77.0.11");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "sport")), 40000);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "dport")), 8002);
	ck_assert_str_eq(json_string_value(json_object_get(o, "name")), "allowed.test");
	ck_assert_str_eq(json_string_value(json_object_get(o, "verdict")), "allow");
	ck_assert_str_eq(json_string_value(json_object_get(o, "rule")), "tcp:allowed.test:8002");
	ck_assert_int_eq(json_integer_value(json_object_get(o, "bytes_out")), 123456);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "packets_out")), 7);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "bytes_in")), 61728);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "packets_in")), 9);
	ck_assert_double_eq_tol(json_real_value(json_object_get(o, "duration_s")), 2.500001, 1e-9);
	ck_assert_str_eq(json_string_value(json_object_get(o, "end")), "closed");
	json_decref(o);

	/* no name, the default rule, a refusal from the network, IPv6, a duration under a second */
	r = record(AF_INET6, "2001:db8::7", "fd77::2", 22);
	r.inbound = true;
	r.proto = 17;
	r.verdict = FLOWLOG_DENY;
	r.end = FLOWLOG_END_POLICY;
	r.duration_us = 0;
	o = printed(&r, "");
	ck_assert(json_is_null(json_object_get(o, "name")));
	ck_assert(json_is_null(json_object_get(o, "rule")));
	ck_assert_str_eq(json_string_value(json_object_get(o, "container")), "");
	ck_assert_str_eq(json_string_value(json_object_get(o, "direction")), "ingress");
	ck_assert_str_eq(json_string_value(json_object_get(o, "proto")), "udp");
	ck_assert_str_eq(json_string_value(json_object_get(o, "src")), "2001:db8::7");
	ck_assert_str_eq(json_string_value(json_object_get(o, "verdict")), "deny");
	ck_assert_str_eq(json_string_value(json_object_get(o, "end")), "policy");
	ck_assert_double_eq_tol(json_real_value(json_object_get(o, "duration_s")), 0.0, 1e-9);
	json_decref(o);

	/* a start: no end yet */
	r.start = true;
	o = printed(&r, "c");
	ck_assert_str_eq(json_string_value(json_object_get(o, "event")), "start");
	ck_assert(json_is_null(json_object_get(o, "end")));
	json_decref(o);
	r.start = false;
	o = printed(&r, "c");
	ck_assert_str_eq(json_string_value(json_object_get(o, "event")), "end");
	json_decref(o);

	/* every way to end has its word */
	for (unsigned int e = 0; e < FLOWLOG_END_MAX; e++)
		ck_assert_ptr_nonnull(flowlog_end_names[e]);
}
END_TEST

/* Wait (5 s at most) until the ring holds @n records. */
static void wait_ring(struct flowlog *fl, unsigned int n)
{
	for (int i = 0; i < 500; i++) {
		unsigned int have;

		pthread_mutex_lock(&fl->lock);
		have = fl->n;
		pthread_mutex_unlock(&fl->lock);
		if (have == n)
			return;
		usleep(10000);
	}
	ck_abort_msg("the ring never held %u records", n);
}

/* Wait (5 s at most) until the writer counted @n records written: it counts after its write. */
static void wait_records(struct flowlog *fl, uint64_t n)
{
	struct flowlog_stats st;

	for (int i = 0; i < 500; i++) {
		flowlog_stats(fl, &st);
		if (st.records == n)
			return;
		usleep(10000);
	}
	ck_abort_msg("the writer counted %llu records, not %llu", (unsigned long long)st.records,
		     (unsigned long long)n);
}

/* Read lines from @fd until @n came, 5 s at most; return them (malloc'd). */
static char *read_lines(int fd, unsigned int n)
{
	size_t cap = 1 << 20, have = 0;
	char *buf = malloc(cap + 1);
	unsigned int lines = 0;

	ck_assert_ptr_nonnull(buf);
	while (lines < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t got;

		ck_assert_msg(poll(&p, 1, 5000) == 1, "%u of %u lines came", lines, n);
		got = read(fd, buf + have, cap - have);
		ck_assert_int_gt(got, 0);
		for (ssize_t i = 0; i < got; i++)
			lines += buf[have + (size_t)i] == '\n';
		have += (size_t)got;
	}
	buf[have] = '\0';
	return buf;
}

START_TEST(test_file_in_order)
{
	struct flowlog fl;
	struct flowlog_stats st;
	int p[2];
	char *text, *line, *save = NULL;
	unsigned int i = 0;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(flowlog_init(&fl, p[1], "c1", 0), 0);
	ck_assert(!flowlog_wanted(&fl));	/* no writer yet */
	ck_assert_int_eq(flowlog_start(&fl), 0);
	ck_assert(flowlog_wanted(&fl));
	for (i = 0; i < 100; i++) {
		struct flowlog_record r = record(AF_INET, "10.0.0.2", "10.0.0.3", (uint16_t)(1000 + i));

		flowlog_add(&fl, &r);
	}
	text = read_lines(p[0], 100);
	i = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
		json_t *o = json_loads(line, 0, NULL);

		ck_assert_ptr_nonnull(o);
		ck_assert_int_eq(json_integer_value(json_object_get(o, "dport")), 1000 + i);
		json_decref(o);
	}
	ck_assert_uint_eq(i, 100);
	free(text);
	wait_records(&fl, 100);
	flowlog_stats(&fl, &st);
	ck_assert_uint_eq(st.dropped, 0);
	flowlog_fini(&fl);	/* closes p[1] */
	ck_assert(!flowlog_wanted(&fl));
	close(p[0]);
}
END_TEST

START_TEST(test_stuck_writer_drops)
{
	static char fill[1 << 16];
	struct flowlog_record r = record(AF_INET, "10.0.0.2", "10.0.0.3", 80);
	struct flowlog fl;
	struct flowlog_stats st;
	int p[2], fl_flags;
	char *text;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	/* a full pipe: the writer's first write blocks until we read */
	fl_flags = fcntl(p[1], F_GETFL);
	fcntl(p[1], F_SETFL, fl_flags | O_NONBLOCK);
	while (write(p[1], fill, sizeof(fill)) > 0)
		;
	fcntl(p[1], F_SETFL, fl_flags);
	ck_assert_int_eq(flowlog_init(&fl, p[1], "c1", 4), 0);
	ck_assert_int_eq(flowlog_start(&fl), 0);
	flowlog_add(&fl, &r);	/* taken by the writer, which then blocks */
	wait_ring(&fl, 0);
	for (int i = 0; i < 7; i++)
		flowlog_add(&fl, &r);	/* 4 fit, 3 do not: never waiting */
	wait_ring(&fl, 4);
	flowlog_stats(&fl, &st);
	ck_assert_uint_eq(st.dropped, 3);
	ck_assert_uint_eq(st.records, 0);
	/* the reader comes back: the 1 + 4 are written */
	text = read_lines(p[0], 5);	/* the filler has no newline: 5 lines are ours */
	free(text);
	wait_records(&fl, 5);
	flowlog_stats(&fl, &st);
	ck_assert_uint_eq(st.dropped, 3);
	flowlog_fini(&fl);
	close(p[0]);
}
END_TEST

START_TEST(test_followers)
{
	struct flowlog_record r = record(AF_INET, "10.0.0.2", "10.0.0.3", 443);
	struct flowlog fl;
	struct flowlog_stats st;
	int sv[FLOWLOG_FOLLOWERS_MAX + 1][2], i;
	char *text;

	ck_assert_int_eq(flowlog_init(&fl, -1, "c1", 0), 0);
	ck_assert_int_eq(flowlog_start(&fl), 0);
	ck_assert(!flowlog_wanted(&fl));	/* no file, no follower: no records */
	for (i = 0; i <= FLOWLOG_FOLLOWERS_MAX; i++)
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv[i]), 0);
	for (i = 0; i < FLOWLOG_FOLLOWERS_MAX; i++)
		ck_assert_int_eq(flowlog_follow(&fl, sv[i][0]), 0);
	ck_assert_int_eq(flowlog_follow(&fl, sv[FLOWLOG_FOLLOWERS_MAX][0]), -EBUSY);
	close(sv[FLOWLOG_FOLLOWERS_MAX][0]);	/* refused: still ours */
	close(sv[FLOWLOG_FOLLOWERS_MAX][1]);
	ck_assert(flowlog_wanted(&fl));
	flowlog_add(&fl, &r);
	for (i = 0; i < FLOWLOG_FOLLOWERS_MAX; i++) {
		text = read_lines(sv[i][1], 1);
		ck_assert_ptr_nonnull(strstr(text, "\"dport\":443"));
		free(text);
	}
	/* all but one hang up: let go within the writer's wake-up */
	for (i = 1; i < FLOWLOG_FOLLOWERS_MAX; i++)
		close(sv[i][1]);
	for (i = 0; i < 500; i++) {
		flowlog_stats(&fl, &st);
		if (st.followers == 1)
			break;
		usleep(10000);
	}
	ck_assert_uint_eq(st.followers, 1);
	wait_records(&fl, 1);
	close(sv[0][1]);
	flowlog_fini(&fl);
}
END_TEST

static Suite *flowlog_suite(void)
{
	Suite *s = suite_create("datapath_flowlog");
	TCase *tc = tcase_create("flowlog");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_print);
	tcase_add_test(tc, test_file_in_order);
	tcase_add_test(tc, test_stuck_writer_drops);
	tcase_add_test(tc, test_followers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(flowlog_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
