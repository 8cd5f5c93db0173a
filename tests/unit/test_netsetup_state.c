// SPDX-License-Identifier: MIT
/*
 * test_netsetup_state.c - the state file: round trip, refusals, claiming
 *
 * A state with every kind of record is formatted and parsed back field by
 * field; malformed files are refused naming the line; ns_state_write()
 * refuses a second writer (EEXIST) and leaves no temporary file behind.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <sys/stat.h>

#include "netsetup/orch/orch_int.h"

static char dir[] = "/tmp/test_netsetup_state.XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("SANDNET_STATE_DIR", dir, 1);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/test_netsetup_state.XXXXXX");
}

static void sample(struct ns_state *st)
{
	static struct ns_state_link links[2];
	static struct ns_addr addrs[4];
	static struct ns_route routes[3];

	memset(st, 0, sizeof(*st));
	memset(links, 0, sizeof(links));
	memset(addrs, 0, sizeof(addrs));
	memset(routes, 0, sizeof(routes));
	st->dev = 0x4;
	st->ino = 4026532177ULL;
	links[0] = (struct ns_state_link){ 2, "eth0", 0, 1, 1, true, "sn-eth0", 0 };
	links[1] = (struct ns_state_link){ 3, "eth1", -1, -1, -1, false, "", 0 };
	st->links = links;
	st->n_links = 2;

	addrs[0].ifindex = 2;
	addrs[0].a.family = AF_INET;
	addrs[0].a.prefixlen = 24;
	addrs[0].a.flags = 0x80;
	inet_pton(AF_INET, "10.1.2.3", addrs[0].a.addr.bytes);
	addrs[0].has_broadcast = true;
	inet_pton(AF_INET, "10.1.2.255", addrs[0].broadcast.bytes);
	addrs[0].valid_lft = addrs[0].preferred_lft = 0xffffffff;
	strcpy(addrs[0].label, "eth0:web");
	addrs[1].ifindex = 2;
	addrs[1].a.family = AF_INET6;
	addrs[1].a.prefixlen = 64;
	addrs[1].a.scope = 253;
	inet_pton(AF_INET6, "fe80::1:2", addrs[1].a.addr.bytes);
	addrs[1].valid_lft = 3600;
	addrs[1].preferred_lft = 1800;
	addrs[2].ifindex = 3;
	addrs[2].a.family = AF_INET;
	addrs[2].a.prefixlen = 32;
	inet_pton(AF_INET, "192.0.2.1", addrs[2].a.addr.bytes);
	addrs[2].has_peer = true;
	inet_pton(AF_INET, "192.0.2.2", addrs[2].peer.bytes);
	addrs[3].ifindex = 3;
	addrs[3].a.family = AF_INET6;
	addrs[3].a.prefixlen = 128;
	inet_pton(AF_INET6, "2001:db8::ffff:1", addrs[3].a.addr.bytes);
	st->addrs = addrs;
	st->n_addrs = 4;

	routes[0] = (struct ns_route){ .ifindex = 2, .table = 254, .protocol = 3, .type = 1, .initcwnd = 20 };
	routes[0].r.family = AF_INET;
	routes[0].r.has_gateway = true;
	inet_pton(AF_INET, "10.1.2.1", routes[0].r.gateway.bytes);
	routes[1] = (struct ns_route){ .ifindex = 2, .table = 254, .protocol = 2, .scope = 253, .type = 1 };
	routes[1].r.family = AF_INET;
	routes[1].r.dst_len = 24;
	inet_pton(AF_INET, "10.1.2.0", routes[1].r.dst.bytes);
	routes[1].has_prefsrc = true;
	inet_pton(AF_INET, "10.1.2.3", routes[1].prefsrc.bytes);
	routes[2] = (struct ns_route){ .ifindex = 3, .table = 254, .protocol = 3, .type = 1 };
	routes[2].r.family = AF_INET6;
	routes[2].r.metric = 1024;
	routes[2].r.has_gateway = true;
	inet_pton(AF_INET6, "fe80::1", routes[2].r.gateway.bytes);
	st->routes = routes;
	st->n_routes = 3;
}

static void assert_same(const struct ns_state *a, const struct ns_state *b)
{
	unsigned int i;

	ck_assert_uint_eq(a->dev, b->dev);
	ck_assert_uint_eq(a->ino, b->ino);
	ck_assert_uint_eq(a->n_links, b->n_links);
	ck_assert_uint_eq(a->n_addrs, b->n_addrs);
	ck_assert_uint_eq(a->n_routes, b->n_routes);
	for (i = 0; i < a->n_links; i++)
		ck_assert_msg(!memcmp(&a->links[i], &b->links[i], sizeof(a->links[i])), "link %u differs", i);
	for (i = 0; i < a->n_addrs; i++)
		ck_assert_msg(!memcmp(&a->addrs[i], &b->addrs[i], sizeof(a->addrs[i])), "addr %u differs", i);
	for (i = 0; i < a->n_routes; i++)
		ck_assert_msg(!memcmp(&a->routes[i], &b->routes[i], sizeof(a->routes[i])), "route %u differs", i);
}

START_TEST(test_round_trip_stream)
{
	struct ns_state st, back;
	struct ns_err e = { .text = "" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	sample(&st);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(ns_state_format(f, &st), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "addr 2 4 10.1.2.3 24 0 128 4294967295 4294967295 - 10.1.2.255 eth0:web\n"));
	ck_assert_ptr_nonnull(strstr(buf, "route 3 6 - 0 fe80::1 1024 254 3 0 1 - 0\n"));
	ck_assert_ptr_nonnull(strstr(buf, "route 2 4 - 0 10.1.2.1 0 254 3 0 1 - 20\n"));
	f = fmemopen(buf, len, "r");
	ck_assert_int_eq(ns_state_parse(f, &back, &e), 0);
	fclose(f);
	assert_same(&st, &back);
	ns_state_free(&back);
	free(buf);
}
END_TEST

/* A file written before routes had their initcwnd: 11 fields, read as none. */
START_TEST(test_route_without_initcwnd)
{
	static const char text[] = "sandnet-netsetup-state 1\nnetns 4 5\nroute 2 4 - 0 10.0.0.1 0 254 3 0 1 -\n"
				   "route 2 4 10.0.0.0 8 - 0 254 2 253 1 10.0.0.2 128\n";
	struct ns_err e = { .text = "" };
	struct ns_state st;
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ns_state_parse(f, &st, &e), 0);
	fclose(f);
	ck_assert_uint_eq(st.n_routes, 2);
	ck_assert_uint_eq(st.routes[0].initcwnd, 0);
	ck_assert(st.routes[0].r.has_gateway);
	ck_assert_uint_eq(st.routes[1].initcwnd, 128);
	ck_assert(st.routes[1].has_prefsrc);
	ns_state_free(&st);
}
END_TEST

START_TEST(test_write_read_claim)
{
	struct ns_state st, back;
	struct ns_err e = { .text = "" };
	char path[256];
	struct dirent *d;
	DIR *dh;
	int n = 0;

	sample(&st);
	ck_assert_int_eq(ns_state_path(st.dev, st.ino, path, sizeof(path)), 0);
	ck_assert_ptr_nonnull(strstr(path, "/netns-4-4026532177.state"));
	ck_assert_int_eq(ns_state_read(path, &back, &e), -ENOENT);
	ck_assert_ptr_nonnull(strstr(e.text, "not attached"));
	ns_state_free(&back);
	ck_assert_int_eq(ns_state_write(path, &st, &e), 0);
	ck_assert_int_eq(ns_state_write(path, &st, &e), -EEXIST);
	ck_assert_ptr_nonnull(strstr(e.text, "already attached"));
	ck_assert_int_eq(ns_state_read(path, &back, &e), 0);
	assert_same(&st, &back);
	ns_state_free(&back);
	dh = opendir(dir);
	while ((d = readdir(dh)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dh);
	ck_assert_msg(n == 1, "%d files in the state dir, expected only the state file", n);
}
END_TEST

static const struct {
	const char *text;
	const char *says;
} bad[] = {
	{ "", "empty" },
	{ "hello\n", "not a version 1" },
	{ "sandnet-netsetup-state 2\nnetns 1 2\n", "not a version 1" },
	{ "sandnet-netsetup-state 1\n", "no netns line" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nlink 0 eth0 0 1 1\n", "line 3: malformed" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nlink 2 eth0 0 1\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\naddr 2 5 10.0.0.1 24 0 0 0 0 - - -\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\naddr 2 4 10.0.0.1 33 0 0 0 0 - - -\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\naddr 2 4 fe80::1 24 0 0 0 0 - - -\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\naddr 2 6 fe80::1 64 0 0 0 0 - ff02::1 -\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\naddr 2 4 10.0.0.1 24 0 0 0 0 - - 0123456789abcdefg\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nroute 2 4 - 8 - 0 254 3 0 1 -\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nroute 2 4 10.0.0.0 8 10.0.0.1 0 254 300 0 1 -\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nroute 2 6 ::1 129 - 0 254 3 0 1 -\n", "line 3" },
	/* the initcwnd field, when there, is one number */
	{ "sandnet-netsetup-state 1\nnetns 4 5\nroute 2 4 - 0 10.0.0.1 0 254 3 0 1 - x\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nroute 2 4 - 0 10.0.0.1 0 254 3 0 1 - -1\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nroute 2 4 - 0 10.0.0.1 0 254 3 0 1 - 10 7\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nroute 2 4 - 0 10.0.0.1 0 254 3 0 1 - 4294967296\n", "line 3" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nfrob 1\n", "line 3: malformed: frob 1" },
	/* a face line needs its link first, a sn- name and a sysctl value */
	{ "sandnet-netsetup-state 1\nnetns 4 5\nface 2 sn-eth0 0\n", "line 3: malformed" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nlink 2 eth0 0 1 1\nface 2 eth0 0\n", "line 4" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nlink 2 eth0 0 1 1\nface 2 sn-eth0 7\n", "line 4" },
	{ "sandnet-netsetup-state 1\nnetns 4 5\nlink 2 eth0 0 1 1\nface 2 sn-eth0 0\nface 2 sn-eth0 0\n", "line 5" },
};

START_TEST(test_malformed)
{
	struct ns_err e = { .text = "" };
	struct ns_state st;
	FILE *f;

	f = bad[_i].text[0] ? fmemopen((void *)bad[_i].text, strlen(bad[_i].text), "r") : fopen("/dev/null", "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(ns_state_parse(f, &st, &e), -EINVAL);
	fclose(f);
	ck_assert_msg(strstr(e.text, bad[_i].says), "case %d: '%s' lacks '%s'", _i, e.text, bad[_i].says);
	ns_state_free(&st);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netsetup_state");
	TCase *tc = tcase_create("state");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip_stream);
	tcase_add_test(tc, test_write_read_claim);
	tcase_add_test(tc, test_route_without_initcwnd);
	tcase_add_loop_test(tc, test_malformed, 0, sizeof(bad) / sizeof(bad[0]));
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
