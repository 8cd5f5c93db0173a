// SPDX-License-Identifier: MIT
/*
 * test_datapath_udp_caps.c - the UDP flow caps of --publish udp
 * (--max-udp-flows, --max-udp-flows-per-source; svc_udp.c, docs/security.md)
 *
 * A stack on a virtual clock with published UDP ports whose TARGET is a real
 * UDP socket of this process on 127.0.0.1. Datagrams from "peers" are handed
 * to the service's stack socket the way udp_input() does (its receive
 * function), so every flow the service makes is a real host socket: the
 * tests count them in /proc/self/fd as well as in the service's row and in
 * the `limits` object of the stats. Every datagram must reach the backend:
 * a cap recycles a flow, it never drops the datagram.
 */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/proc/limits.h"
#include "datapath/proc/proc.h"
#include "datapath/obs/stats.h"
#include "common/out.h"
#include "datapath/pkt.h"
#include "datapath_testlib.h"

static struct loop *lp;
static struct shards sh;
static struct stack *st;
static int backend = -1;
static uint16_t backend_port;
static int fds0, fds_start;	/* after setup; before it */
static struct svc_udp_table *tbl;

static void setup(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sin);

	fds_start = dpt_count_fds();
	st = dpt_shard_up(&sh, NULL, NULL);
	lp = sh.sh[0]->loop;
	tbl = NULL;	/* the shard's, made with the first service */
	backend = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(backend, 0);
	ck_assert_int_eq(bind(backend, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(backend, (struct sockaddr *)&sin, &sl), 0);
	backend_port = ntohs(sin.sin_port);
	fds0 = dpt_count_fds();
}

static void teardown(void)
{
	close(backend);
	dpt_shard_down(&sh, -1);
	ck_assert_int_eq(dpt_count_fds(), fds_start);	/* every flow's socket closed */
}

static struct svc_udp *publish(uint16_t port)
{
	struct svc_spec spec;
	char text[64], err[256];
	struct svc *s;

	snprintf(text, sizeof(text), "udp:%u=127.0.0.1:%u", port, backend_port);
	ck_assert_int_eq(svc_spec_parse(text, SVC_PUBLISH, &spec, err, sizeof(err)), 0);
	ck_assert_msg(shards_add_service(&sh, &spec, -1, err, sizeof(err)) == 0, "%s", err);
	s = sh.sh[0]->svc[sh.n_svcs - 1];
	tbl = sh.sh[0]->svc_udp;
	ck_assert_int_eq(s->proto, IPPROTO_UDP);
	ck_assert_int_eq(svc_start(s), 0);
	return s->udp;
}

static struct udp_sock *found;
static uint16_t want_port;

static void find_sock(const struct udp_sock *s, void *arg)
{
	(void)arg;
	if (s->port == want_port)
		found = (struct udp_sock *)s;
}

/* A datagram from 10.0.0.@host:@sport to our 10.0.0.2:@port, as udp_input() delivers it. */
static void peer_send(uint16_t port, unsigned int host, uint16_t sport)
{
	struct net_addr src = { .family = AF_INET }, dst = { .family = AF_INET };
	uint8_t data[8] = { 'c', 'a', 'p', (uint8_t)host, (uint8_t)(sport >> 8), (uint8_t)sport };

	src.a.v4.s_addr = htonl(0x0a000000 + host);
	dst.a.v4.s_addr = htonl(0x0a000002);
	found = NULL;
	want_port = port;
	udp_for_each(st, find_sock, NULL);
	ck_assert_ptr_nonnull(found);
	loop_advance_ms(lp, 1);
	found->fn(found, &src, sport, &dst, data, sizeof(data));
	svc_udp_flush(tbl);
}

/* How many datagrams the backend got since the last call. */
static unsigned int backend_drain(void)
{
	uint8_t b[64];
	unsigned int n = 0;

	while (recv(backend, b, sizeof(b), MSG_DONTWAIT) > 0)
		n++;
	return n;
}

/* One counter of @s's row in the services table. */
static uint64_t row(struct svc_udp *s, const char *key)
{
	char *text = NULL, needle[64], *p;
	size_t len = 0;
	unsigned long long v;
	struct out o;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	out_init(&o, f, true);
	out_arr_begin(&o, "services");
	svc_udp_stats((const struct svc_udp *const *)&s, 1, &o);
	out_arr_end(&o);
	out_finish(&o);
	fclose(f);
	snprintf(needle, sizeof(needle), "\"%s\":", key);
	p = strstr(text, needle);
	ck_assert_msg(p != NULL, "no %s in %s", key, text);
	ck_assert_int_eq(sscanf(p + strlen(needle), "%llu", &v), 1);
	free(text);
	return v;
}

static void set_caps(const char *flows, const char *per_source)
{
	struct stack_limits lim = { 0 };
	char err[256];

	if (flows)
		ck_assert_int_eq(limits_parse(&lim, "max-udp-flows", flows, err, sizeof(err)), 0);
	if (per_source)
		ck_assert_int_eq(limits_parse(&lim, "max-udp-flows-per-source", per_source, err,
						    sizeof(err)), 0);
	ck_assert_int_eq(limits_apply(st, &lim), 0);
}

START_TEST(test_per_source_recycles_own_oldest)
{
	struct svc_udp *s;
	struct svc_udp_usage u;
	unsigned int i;

	set_caps("64", "4");
	s = publish(5000);
	/* B: two flows, before and during A's flood */
	peer_send(5000, 20, 4000);
	/* A cycles through 10 source ports: it keeps 4 flows */
	for (i = 0; i < 10; i++) {
		peer_send(5000, 10, (uint16_t)(1000 + i));
		ck_assert_uint_le(row(s, "flows"), 1 + 4);
	}
	peer_send(5000, 20, 4001);
	ck_assert_uint_eq(backend_drain(), 12);	/* every datagram delivered */
	ck_assert_uint_eq(row(s, "flows"), 6);
	ck_assert_uint_eq(row(s, "flows_created"), 12);
	ck_assert_uint_eq(row(s, "source_cap_hits"), 6);
	ck_assert_uint_eq(row(s, "flows_evicted"), 0);
	ck_assert_int_eq(dpt_count_fds(), fds0 + 6);

	/* A's newest 4 (1006..1009) are the ones kept: no new flow for them */
	peer_send(5000, 10, 1009);
	peer_send(5000, 10, 1006);
	ck_assert_uint_eq(row(s, "flows_created"), 12);
	/* 1006 was just used: the next new port of A recycles 1007, not 1006 */
	peer_send(5000, 10, 1100);
	ck_assert_uint_eq(row(s, "source_cap_hits"), 7);
	peer_send(5000, 10, 1006);
	ck_assert_uint_eq(row(s, "flows_created"), 13);
	peer_send(5000, 10, 1007);
	ck_assert_uint_eq(row(s, "flows_created"), 14);	/* 1007 had gone */
	ck_assert_uint_eq(row(s, "source_cap_hits"), 8);

	/* 40 more ports of A never touch B's flows, though B's are older */
	for (i = 0; i < 40; i++)
		peer_send(5000, 10, (uint16_t)(2000 + i));
	peer_send(5000, 20, 4000);
	peer_send(5000, 20, 4001);
	ck_assert_uint_eq(row(s, "flows_created"), 54);
	ck_assert_uint_eq(row(s, "flows"), 6);
	ck_assert_uint_eq(row(s, "source_cap_hits"), 48);
	ck_assert_int_eq(dpt_count_fds(), fds0 + 6);
	ck_assert_uint_eq(backend_drain(), 47);

	svc_udp_usage(tbl, sh.sh[0]->svc, sh.n_svcs, &u);
	ck_assert_uint_eq(u.per_source_max, 4);
	ck_assert_uint_eq(u.per_source_used, 4);
	ck_assert_uint_eq(u.per_source_hits, 48);
	ck_assert_uint_eq(u.flows_max, 64);
	ck_assert_uint_eq(u.flows_used, 6);
	ck_assert_uint_eq(u.flows_hits, 0);
	/* a flow of the same source idles out like any other */
	loop_advance_ms(lp, 181000);
	loop_run_once(lp, 0);
	ck_assert_uint_eq(row(s, "flows"), 0);
	ck_assert_int_eq(dpt_count_fds(), fds0);
}
END_TEST

START_TEST(test_total_cap_lru_across_services)
{
	struct svc_udp *s1, *s2;
	struct svc_udp_usage u;
	unsigned int i;

	set_caps("8", "0");	/* 0: no per-source cap */
	ck_assert_uint_eq(st->limits.udp_flows_per_source, SVC_UDP_NO_CAP);
	s1 = publish(5000);
	s2 = publish(5001);
	/* one source, 12 ports on s1: only the total cap holds it */
	for (i = 0; i < 12; i++) {
		peer_send(5000, 10, (uint16_t)(1000 + i));
		ck_assert_int_le(dpt_count_fds(), fds0 + 8);
	}
	ck_assert_uint_eq(row(s1, "flows"), 8);
	ck_assert_uint_eq(row(s1, "flows_evicted"), 4);
	ck_assert_uint_eq(row(s1, "source_cap_hits"), 0);
	/* s1's port 1004 is used again: the least recently used is now 1005 */
	peer_send(5000, 10, 1004);
	ck_assert_uint_eq(row(s1, "flows_created"), 12);
	/* 3 flows on s2 take the room of s1's 3 least recently used */
	for (i = 0; i < 3; i++)
		peer_send(5001, (unsigned int)(30 + i), 7000);
	ck_assert_uint_eq(row(s2, "flows"), 3);
	ck_assert_uint_eq(row(s1, "flows"), 5);
	ck_assert_uint_eq(row(s1, "flows_evicted"), 7);
	ck_assert_uint_eq(row(s2, "flows_evicted"), 0);
	peer_send(5000, 10, 1004);	/* kept: it was used recently */
	ck_assert_uint_eq(row(s1, "flows_created"), 12);
	peer_send(5000, 10, 1005);	/* gone: a new flow */
	ck_assert_uint_eq(row(s1, "flows_created"), 13);
	ck_assert_int_eq(dpt_count_fds(), fds0 + 8);
	ck_assert_uint_eq(backend_drain(), 12 + 1 + 3 + 2);

	svc_udp_usage(tbl, sh.sh[0]->svc, sh.n_svcs, &u);
	ck_assert_uint_eq(u.flows_max, 8);
	ck_assert_uint_eq(u.flows_used, 8);
	ck_assert_uint_eq(u.flows_hits, 4 + 3 + 1);
	ck_assert_uint_eq(u.per_source_max, 0);
	ck_assert_uint_eq(u.per_source_used, 5);
	ck_assert_uint_eq(u.per_source_hits, 0);
}
END_TEST

/*
 * Datagrams of one flow reach an inet backend in UDP_SEGMENT sends: a run is
 * datagrams the size of the first, a shorter one ends it, a larger one starts
 * the next; the backend's socket still receives each datagram, in order.
 */
START_TEST(test_host_gso_runs)
{
	static const size_t sizes[] = { 100, 100, 100, 100, 100, 100, 50, 100, 100, 100, 300, 7 };
	const size_t n = sizeof(sizes) / sizeof(sizes[0]);
	struct net_addr src = { .family = AF_INET }, dst = { .family = AF_INET };
	uint8_t data[400], got[400];
	struct svc_udp *s;
	size_t i;
	ssize_t r;

	s = publish(5200);
	src.a.v4.s_addr = htonl(0x0a000009);
	dst.a.v4.s_addr = htonl(0x0a000002);
	found = NULL;
	want_port = 5200;
	udp_for_each(st, find_sock, NULL);
	ck_assert_ptr_nonnull(found);
	for (i = 0; i < n; i++) {
		memset(data, (int)i + 1, sizes[i]);
		found->fn(found, &src, 4000, &dst, data, sizes[i]);
	}
	svc_udp_flush(tbl);
	for (i = 0; i < n; i++) {
		r = recv(backend, got, sizeof(got), MSG_DONTWAIT);
		ck_assert_msg(r == (ssize_t)sizes[i], "datagram %zu: %zd bytes, want %zu", i, r, sizes[i]);
		ck_assert_uint_eq(got[0], i + 1);
		ck_assert_uint_eq(got[r - 1], i + 1);
	}
	ck_assert_int_lt(recv(backend, got, sizeof(got), MSG_DONTWAIT), 0);
	/* 100 x 6 + 50 | 100 x 3 | 300 + 7: three sends */
	ck_assert_uint_eq(row(s, "host_gso_sends"), 3);
	ck_assert_uint_eq(row(s, "host_gso_datagrams"), n);
	ck_assert_uint_eq(row(s, "to_target"), n);
	ck_assert_uint_eq(row(s, "errors"), 0);
}
END_TEST

START_TEST(test_stats_and_options)
{
	struct stack_limits lim = { 0 };
	char err[256], *text = NULL;
	size_t len = 0;
	unsigned int i;
	struct dp dp;
	FILE *f;

	/* defaults, ranges */
	ck_assert_int_eq(limits_apply(st, &lim), 0);
	ck_assert_uint_eq(st->limits.udp_flows, 4096);
	ck_assert_uint_eq(st->limits.udp_flows_per_source, 256);
	ck_assert_int_eq(limits_parse(&lim, "max-udp-flows", "0", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "out of range"));
	ck_assert_int_eq(limits_parse(&lim, "max-udp-flows", "2000000", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "max-udp-flows-per-source", "x", err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(limits_parse(&lim, "max-udp-flows-per-source", "-1", err, sizeof(err)),
			 -EINVAL);

	set_caps("100", "2");
	publish(5000);
	for (i = 0; i < 5; i++)
		peer_send(5000, 10, (uint16_t)(1000 + i));
	peer_send(5000, 11, 1000);
	memset(&dp, 0, sizeof(dp));
	dp.shards = &sh;
	dp.loop = lp;
	f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(stats_print(&dp, f, true), 0);
	fclose(f);
	ck_assert_msg(strstr(text, "\"udp_flows\":{\"max\":100,\"used\":3,\"hits\":0}"), "%s", text);
	ck_assert_msg(strstr(text, "\"udp_flows_per_source\":{\"max\":2,\"used\":2,\"hits\":3}"), "%s",
		      text);
	ck_assert_msg(strstr(text, "\"source_cap_hits\":3,\"flows_evicted\":0"), "%s", text);
	free(text);
	backend_drain();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("datapath_udp_caps");
	TCase *tc = tcase_create("caps");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_per_source_recycles_own_oldest);
	tcase_add_test(tc, test_total_cap_lru_across_services);
	tcase_add_test(tc, test_stats_and_options);
	tcase_add_test(tc, test_host_gso_runs);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
