// SPDX-License-Identifier: MIT
/*
 * test_datapath_control.c - the control socket answers the whole process or
 * an error, never a part of it (control.c, shard.c's shards_pause())
 *
 * - A datapath of two shards whose second shard never turns its loop: the
 *   stats and the summary are refused with -ETIMEDOUT once
 *   shards_pause() has waited 1 s, nothing is written, the misses are counted;
 *   once the shard turns, both answer with n_shards 2, and so do 20
 *   summaries asked back to back (each pause must count a shard that the
 *   last one released but that has not yet woken).
 * - The socket, end to end: a print function busy twice is answered on the
 *   third try of control_client(); one that stays busy gives -EAGAIN and
 *   the datapath's words after CONTROL_BUSY_TRIES; another error is not
 *   asked again; an answer that comes after 1.2 s is waited for, and a
 *   datapath silent past CONTROL_CLIENT_WAIT_S is a timeout, not asked
 *   again.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "datapath/obs/obs.h"
#include "datapath/obs/stats.h"
#include "datapath/pkt.h"
#include "datapath/proc/proc.h"
#include "datapath/proc/shard.h"
#include "datapath_testlib.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Print into memory: the return code, the text in @text. */
static int print_to(int (*print)(struct dp *, FILE *, bool), struct dp *dp, char **text)
{
	size_t len;
	FILE *f = open_memstream(text, &len);
	int ret;

	ck_assert_ptr_nonnull(f);
	ret = print(dp, f, true);
	fclose(f);
	return ret;
}

/* A shard's thread: turn its loop until told to stop (at most 10 s). */
struct turner {
	pthread_t th;
	struct loop *loop;
	bool stop;
};

static void *turn(void *arg)
{
	struct turner *t = arg;
	double end = now_s() + 10;

	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE) && now_s() < end)
		loop_run_once(t->loop, 50);
	return NULL;
}

START_TEST(test_shard_that_does_not_park)
{
	int fds = dpt_count_fds();
	struct shard_conf conf = { 0 };
	struct shards sh;
	struct dp dp;
	char err[128], *text;
	struct turner t = { 0 };
	unsigned int i;
	double t0;

	memset(&dp, 0, sizeof(dp));
	ck_assert_int_eq(shards_init(&sh, &conf, err, sizeof(err)), 0);
	ck_assert_int_eq(shards_grow(&sh, 2, err, sizeof(err)), 0);
	dp.loop = sh.sh[0]->loop;
	dp.shards = &sh;
	dp.control_fd = -1;

	/* shard 1's loop never turns: it cannot park, and nothing is said */
	t0 = now_s();
	ck_assert_int_eq(print_to(stats_print, &dp, &text), -ETIMEDOUT);
	ck_assert_msg(now_s() - t0 >= 0.9, "gave up after %.3f s", now_s() - t0);
	ck_assert_str_eq(text, "");
	free(text);
	ck_assert_int_eq(print_to(stats_print_summary, &dp, &text), -ETIMEDOUT);
	ck_assert_str_eq(text, "");
	free(text);
	ck_assert_uint_eq(shards_park_misses(&sh), 2);

	/* it turns: the old PARKs and the new ones are taken, and the answers are whole */
	t.loop = sh.sh[1]->loop;
	ck_assert_int_eq(pthread_create(&t.th, NULL, turn, &t), 0);
	ck_assert_int_eq(print_to(stats_print, &dp, &text), 0);
	ck_assert_msg(strstr(text, "\"n_shards\":2,\"shard_park_misses\":2,"), "%s", text);
	ck_assert_msg(strstr(text, "\"shards\":[{\"shard\":1,"), "%s", text);
	free(text);

	ck_assert_int_eq(print_to(stats_print_summary, &dp, &text), 0);
	ck_assert_msg(strstr(text, "\"shard_rows\":[{\"shard\":0,"), "%s", text);
	ck_assert_msg(strstr(text, "{\"shard\":1,"), "%s", text);
	free(text);

	/*
	 * Asked back to back: each pause releases the shard and the next one
	 * holds it again, often before its thread has woken up. It must count
	 * for the new pause rather than stay held uncounted until it times out.
	 */
	t0 = now_s();
	for (i = 0; i < 20; i++) {
		ck_assert_int_eq(print_to(stats_print_summary, &dp, &text), 0);
		free(text);
	}
	ck_assert_msg(now_s() - t0 < 10, "20 summaries took %.3f s", now_s() - t0);
	ck_assert_uint_eq(shards_park_misses(&sh), 2);
	ck_assert_int_eq(print_to(stats_print_summary, &dp, &text), 0);
	__atomic_store_n(&t.stop, true, __ATOMIC_RELEASE);
	pthread_join(t.th, NULL);
	ck_assert_msg(strstr(text, "\"shard_rows\":[{\"shard\":0,"), "%s", text);
	ck_assert_msg(strstr(text, "{\"shard\":1,"), "%s", text);
	free(text);

	shards_stop(&sh);
	shards_free(&sh);
	ck_assert_int_eq(dpt_count_fds(), fds);
	ck_assert_int_eq(pkt_live(), 0);
	pkt_pool_drain();
}
END_TEST

/* A datapath's side of the socket: @busy answers "busy", then @then. */
struct server {
	int fd;
	unsigned int busy;	/* answers still to refuse */
	int then;		/* afterwards: 0 prints the document, else this error */
	unsigned int asked;
	unsigned int serve;	/* connections to take */
	unsigned int delay_ms;	/* before each answer, as a datapath waits for its shards */
	bool summary;		/* asked for the summary (stats --all), not everything */
};

static int server_print(void *ctx, FILE *f, bool json, bool summary)
{
	struct server *s = ctx;

	ck_assert(json);
	ck_assert(summary == s->summary);
	s->asked++;
	if (s->delay_ms) {
		struct timespec d = { .tv_sec = s->delay_ms / 1000, .tv_nsec = s->delay_ms % 1000 * 1000000L };

		nanosleep(&d, NULL);
	}
	if (s->busy) {
		s->busy--;
		return -ETIMEDOUT;
	}
	if (s->then)
		return s->then;
	fputs("{\"whole\":true}\n", f);
	return 0;
}

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	while (s->serve && poll(&p, 1, 5000) == 1) {
		control_answer(s->fd, server_print, NULL, s);
		s->serve--;
	}
	return NULL;
}

/* control_client() against a server that answers as @s says. */
static int ask(struct server *s, char **text, char *err, size_t err_len)
{
	char path[] = "/tmp/test_datapath_control.XXXXXX", sock[64];
	size_t len;
	pthread_t th;
	FILE *f;
	int ret;

	ck_assert_ptr_nonnull(mkdtemp(path));
	snprintf(sock, sizeof(sock), "%s/dp.ctl", path);
	s->fd = control_bind(sock, err, err_len);
	ck_assert_int_ge(s->fd, 0);
	ck_assert_int_eq(pthread_create(&th, NULL, server_main, s), 0);
	f = open_memstream(text, &len);
	ck_assert_ptr_nonnull(f);
	ret = control_client(sock, true, f, err, err_len);
	fclose(f);
	pthread_join(th, NULL);
	close(s->fd);
	unlink(sock);
	rmdir(path);
	return ret;
}

START_TEST(test_client_asks_a_busy_datapath_again)
{
	struct server s = { .busy = 2, .serve = 3 };
	char err[256], *text;
	int fds = dpt_count_fds();

	ck_assert_int_eq(ask(&s, &text, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.asked, 3);
	ck_assert_str_eq(text, "{\"whole\":true}\n");
	free(text);

	/* busy every time: given up after the last try, in the datapath's words */
	s = (struct server){ .busy = 100, .serve = 5 };
	ck_assert_int_eq(ask(&s, &text, err, sizeof(err)), -EAGAIN);
	ck_assert_uint_eq(s.asked, 5);
	ck_assert_str_eq(text, "");
	ck_assert_msg(strstr(err, "the datapath answered: busy: a shard did not stop within 1000 ms to be read; "
			     "ask again"), "%s", err);
	free(text);

	/* another error is not asked again */
	s = (struct server){ .then = -ENOMEM, .serve = 1 };
	ck_assert_int_eq(ask(&s, &text, err, sizeof(err)), -EPROTO);
	ck_assert_uint_eq(s.asked, 1);
	ck_assert_msg(strstr(err, "the datapath answered: Cannot allocate memory"), "%s", err);
	free(text);
	ck_assert_int_eq(dpt_count_fds(), fds);
}
END_TEST

/*
 * The datapath waits up to 1 s for its shards before it answers: the client
 * waits longer than that, and tells a silent datapath from a busy one.
 */
START_TEST(test_client_waits_for_a_slow_answer)
{
	struct server s = { .busy = 1, .serve = 2, .delay_ms = 1200 };
	char err[256], *text;
	double t0;
	int fds = dpt_count_fds();

	/* busy after 1.2 s, then the document after 1.2 s more */
	ck_assert_int_eq(ask(&s, &text, err, sizeof(err)), 0);
	ck_assert_uint_eq(s.asked, 2);
	ck_assert_str_eq(text, "{\"whole\":true}\n");
	free(text);

	/* silent past the client's wait: a timeout, not asked again */
	s = (struct server){ .serve = 1, .delay_ms = 3500 };
	t0 = now_s();
	ck_assert_int_eq(ask(&s, &text, err, sizeof(err)), -ETIMEDOUT);
	ck_assert_msg(now_s() - t0 < 5, "took %.3f s", now_s() - t0);
	ck_assert_uint_eq(s.asked, 1);
	ck_assert_msg(strstr(err, "no answer within 3 s"), "%s", err);
	free(text);
	ck_assert_int_eq(dpt_count_fds(), fds);
}
END_TEST

/*
 * `datapath stats --all` asks every socket of the folder at once, as the
 * exporter does (control_ask.c): one that answers busy is asked again, one
 * that fails is said once and the others are still shown.
 */
START_TEST(test_all_asks_every_datapath_at_once)
{
	char dir[] = "/tmp/test_datapath_control.XXXXXX", sock[2][64], err[256], *text;
	struct server s[2] = { { .busy = 2, .serve = 3, .summary = true },
			       { .then = -ENOMEM, .serve = 1, .summary = true } };
	int fds = dpt_count_fds(), i;
	pthread_t th[2];
	size_t len;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (i = 0; i < 2; i++) {
		snprintf(sock[i], sizeof(sock[i]), "%s/%c.state.ctl", dir, 'a' + i);
		s[i].fd = control_bind(sock[i], err, sizeof(err));
		ck_assert_int_ge(s[i].fd, 0);
		ck_assert_int_eq(pthread_create(&th[i], NULL, server_main, &s[i]), 0);
	}
	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(control_client_all(dir, true, f, err, sizeof(err)), -EIO);
	fclose(f);
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		close(s[i].fd);
		unlink(sock[i]);
	}
	rmdir(dir);
	ck_assert_uint_eq(s[0].asked, 3);	/* busy twice, then the document */
	ck_assert_uint_eq(s[1].asked, 1);	/* an error is not asked again */
	ck_assert_str_eq(text, "[{\"whole\":true}]\n");
	ck_assert_str_eq(err, "1 of 2 datapaths did not answer (above)");
	free(text);
	ck_assert_int_eq(dpt_count_fds(), fds);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("datapath_control");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_shard_that_does_not_park);
	tcase_add_test(tc, test_client_asks_a_busy_datapath_again);
	tcase_add_test(tc, test_client_waits_for_a_slow_answer);
	tcase_add_test(tc, test_all_asks_every_datapath_at_once);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
