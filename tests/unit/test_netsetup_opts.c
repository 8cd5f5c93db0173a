// SPDX-License-Identifier: MIT
/*
 * test_netsetup_opts.c - the command line: what is accepted, what is refused
 *
 * ns_opts_parse() is called on argv arrays as main() would get them; every
 * refusal must return an error and a message naming the option.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "netsetup/front/front.h"

#define ARGV(...) ((char *[]){ "netsetup", __VA_ARGS__, NULL })

static int parse(char **argv, struct ns_opts *o, struct ns_err *e)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	memset(e, 0, sizeof(*e));
	return ns_opts_parse(argc, argv, o, e);
}

START_TEST(test_gso_show)
{
	struct ns_opts o;
	struct ns_err e;

	ck_assert_int_eq(parse(ARGV("gso", "show"), &o, &e), 0);
	ck_assert_int_eq(o.cmd, NS_CMD_GSO_SHOW);
	ck_assert_ptr_null(o.netns_path);
	ck_assert(!o.json);
	ck_assert_int_eq(parse(ARGV("gso", "show", "eth0", "--json", "--pid", "42"), &o, &e), 0);
	ck_assert(o.json);
	ck_assert_int_eq(o.pid, 42);
	ck_assert_str_eq(o.show_iface, "eth0");
	ck_assert_int_eq(parse(ARGV("gso", "show", "--netns", "/run/netns/x", "eth0"), &o, &e), 0);
	ck_assert_str_eq(o.netns_path, "/run/netns/x");
	ck_assert_int_ne(parse(ARGV("gso", "show", "eth0", "eth1"), &o, &e), 0);
	ck_assert_ptr_nonnull(strstr(e.text, "unexpected argument 'eth1'"));
	ck_assert_int_ne(parse(ARGV("gso", "show", "--channels", "2"), &o, &e), 0);
	ck_assert_ptr_nonnull(strstr(e.text, "'--channels' does not apply"));
	ck_assert_int_ne(parse(ARGV("gso"), &o, &e), 0);
	ck_assert_int_ne(parse(ARGV("gso", "show", "averyveryverylongname0"), &o, &e), 0);
}
END_TEST

START_TEST(test_attach)
{
	struct ns_opts o;
	struct ns_err e;

	ck_assert_int_eq(parse(ARGV("attach", "--netns", "/run/netns/c", "--datapath", "/run/dp.sock"), &o, &e), 0);
	ck_assert_int_eq(o.cmd, NS_CMD_ATTACH);
	ck_assert_str_eq(o.datapath, "/run/dp.sock");
	ck_assert_int_eq(o.gso, NS_GSO_AUTO);
	ck_assert_uint_eq(o.channels, 1);
	ck_assert_uint_eq(o.gso_max_bytes, 0);
	ck_assert_uint_eq(o.n_ifaces, 0);

	ck_assert_int_eq(parse(ARGV("attach", "--pid", "7", "--datapath", "s", "--gso", "sw", "--gso-max-size",
				    "32000", "--channels", "16", "--iface", "eth0", "--iface", "eth1"), &o, &e), 0);
	ck_assert_int_eq(o.pid, 7);
	ck_assert_int_eq(o.gso, NS_GSO_SW);
	ck_assert_uint_eq(o.gso_max_bytes, 32000);
	ck_assert_uint_eq(o.channels, 16);
	ck_assert_uint_eq(o.n_ifaces, 2);
	ck_assert_str_eq(o.ifaces[1], "eth1");
	ck_assert_int_eq(parse(ARGV("attach", "--pid=7", "--datapath=s"), &o, &e), 0);
	ck_assert(!o.no_face);	/* the container face is on by default */
	ck_assert_int_eq(parse(ARGV("attach", "--pid=7", "--datapath=s", "--face", "off"), &o, &e), 0);
	ck_assert(o.no_face);
	ck_assert_int_eq(parse(ARGV("attach", "--pid=7", "--datapath=s", "--face=off", "--face", "on"), &o, &e), 0);
	ck_assert(!o.no_face);
}
END_TEST

START_TEST(test_run)
{
	struct ns_opts o;
	struct ns_err e;

	char *run1[] = { "netsetup", "run", "--pid", "9", "--user", "sandnet", "--", "/usr/bin/datapath",
			 "--stats", "--gso", "x", NULL };
	char *run2[] = { "netsetup", "run", "--pid", "9", "dp", "--channels", "3", NULL };

	/* child_argv points into argv: the arrays must outlive the checks */
	ck_assert_int_eq(parse(run1, &o, &e), 0);
	ck_assert_int_eq(o.cmd, NS_CMD_RUN);
	ck_assert_str_eq(o.user, "sandnet");
	ck_assert_str_eq(o.child_argv[0], "/usr/bin/datapath");
	ck_assert_str_eq(o.child_argv[1], "--stats");
	ck_assert_str_eq(o.child_argv[2], "--gso");
	ck_assert_str_eq(o.child_argv[3], "x");
	ck_assert_ptr_null(o.child_argv[4]);
	ck_assert_int_eq(o.gso, NS_GSO_AUTO);	/* the datapath's --gso is not ours */
	/* without "--" the first non-option starts the datapath's command line */
	ck_assert_int_eq(parse(run2, &o, &e), 0);
	ck_assert_str_eq(o.child_argv[0], "dp");
	ck_assert_uint_eq(o.channels, 1);
	ck_assert_int_ne(parse(ARGV("run", "--pid", "9", "--"), &o, &e), 0);
	ck_assert_ptr_nonnull(strstr(e.text, "no datapath command"));
	ck_assert_int_ne(parse(ARGV("run", "--pid", "9", "--datapath", "s", "--", "dp"), &o, &e), 0);
}
END_TEST

static const struct {
	char *argv[12];
	const char *says;
} bad[] = {
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--channels", "0" }, "--channels 0: out of range 1..64" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--channels", "65" }, "out of range 1..64" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--channels", "99999999999999999999" }, "not a number" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--channels", "2x" }, "not a number" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--channels", "-1" }, "not a number" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--channels", "" }, "not a number" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--shards", "0" }, "--shards 0: out of range 1..64" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--shards", "65" }, "--shards 65: out of range 1..64" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--shards", "two" }, "--shards 'two': not a number, nor auto" },
	{ { "netsetup", "run", "--netns", "n", "--shards", "2", "--channels", "3", "--", "dp" },
	  "--channels 3 and --shards 2: each shard has one channel per link; leave --channels out" },
	{ { "netsetup", "gso", "show", "--shards", "2" }, "--shards" },
	{ { "netsetup", "attach", "--pid", "0", "--datapath", "s" }, "--pid 0: out of range" },
	{ { "netsetup", "attach", "--pid", "2147483648", "--datapath", "s" }, "out of range" },
	{ { "netsetup", "attach", "--pid", "1", "--pid", "2", "--datapath", "s" }, "once" },
	{ { "netsetup", "attach", "--netns", "", "--datapath", "s" }, "empty path" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--gso", "fast" }, "expected auto, hw, sw or off" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--gso-max-size", "1" }, "out of range" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--gso-max-size", "10000000" }, "out of range" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--iface", "" }, "not an interface name" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--iface", "0123456789abcdef" }, "not an interface name" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--face", "maybe" }, "--face 'maybe': expected on or off" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--face", "" }, "expected on or off" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--face", "OFF" }, "expected on or off" },
	{ { "netsetup", "gso", "show", "--face", "off" }, "option '--face' does not apply" },
	{ { "netsetup", "detach", "--pid", "3", "--face", "off" }, "option '--face' does not apply" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "-x" }, "unknown option" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath", "s", "--nope" }, "unknown option '--nope'" },
	{ { "netsetup", "attach", "--netns", "n", "--datapath" }, "missing the value" },
	{ { "netsetup", "attach", "--netns", "n" }, "--datapath SOCKET" },
	{ { "netsetup", "attach", "--datapath", "s" }, "--netns PATH or --pid PID" },
	{ { "netsetup", "detach" }, "--netns PATH or --pid PID" },
	{ { "netsetup", "detach", "--pid", "3", "--json" }, "'--json' does not apply" },
	{ { "netsetup", "detach", "--pid", "3", "stray" }, "unexpected argument 'stray'" },
	{ { "netsetup", "run", "--pid", "3", "--user", "", "--", "dp" }, "empty user name" },
	{ { "netsetup", "launch" }, "unknown command 'launch'" },
	{ { "netsetup", "gso", "list" }, "expected 'gso show'" },
};

/* --shards auto: one shard per CPU this process may run on, however many the host has */
START_TEST(test_shards_auto)
{
	cpu_set_t set, one;
	struct ns_opts o;
	struct ns_err e;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	ck_assert_int_eq(parse(ARGV("run", "--netns", "n", "--shards", "auto", "--", "dp"), &o, &e), 0);
	ck_assert_uint_eq(o.shards, (unsigned int)(CPU_COUNT(&set) > 64 ? 64 : CPU_COUNT(&set)));
	/* pinned to one CPU: one shard */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	ck_assert_int_eq(parse(ARGV("run", "--netns", "n", "--shards", "auto", "--", "dp"), &o, &e), 0);
	ck_assert_uint_eq(o.shards, 1);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
}
END_TEST

START_TEST(test_bad)
{
	struct ns_opts o;
	struct ns_err e;
	int ret;

	ret = parse((char **)bad[_i].argv, &o, &e);
	ck_assert_msg(ret < 0, "case %d accepted", _i);
	ck_assert_msg(strstr(e.text, bad[_i].says), "case %d: message '%s' lacks '%s'", _i, e.text, bad[_i].says);
}
END_TEST

/*
 * The options every front end shares (ns_opt_set()): one check and one
 * message, under whatever name the front end gives them.
 */
START_TEST(test_shared_opts)
{
	struct ns_err e = { .text = "" };
	struct ns_opts o;

	ns_opts_init(&o);
	ck_assert_uint_eq(o.channels, 1);
	ck_assert_int_eq(o.gso, NS_GSO_AUTO);
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_CHANNELS, "\"channels\"", "64", &e), 0);
	ck_assert_uint_eq(o.channels, 64);
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_CHANNELS, "\"channels\"", "65", &e), -ERANGE);
	ck_assert_str_eq(e.text, "\"channels\" 65: out of range 1..64");
	ck_assert_uint_eq(o.channels, 64);
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_SHARDS, "\"shards\"", NULL, &e), -EINVAL);
	ck_assert_str_eq(e.text, "\"shards\": expected an integer 1..64");
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_SHARDS, "annotation sandnet.shards", "2", &e), 0);
	ck_assert_uint_eq(o.shards, 2);
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_GSO, "--gso", "sw", &e), 0);
	ck_assert_int_eq(o.gso, NS_GSO_SW);
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_GSO, "\"gso\"", "fast", &e), -EINVAL);
	ck_assert_str_eq(e.text, "\"gso\" 'fast': expected auto, hw, sw or off");
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_FACE, "annotation sandnet.face", "off", &e), 0);
	ck_assert(o.no_face);
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_FACE, "--face", "maybe", &e), -EINVAL);
	ck_assert_str_eq(e.text, "--face 'maybe': expected on or off");
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_IFACE, "--iface", "eth0", &e), 0);
	ck_assert_uint_eq(o.n_ifaces, 1);
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_IFACE, "--iface", "", &e), -EINVAL);
	ck_assert_str_eq(e.text, "--iface '': not an interface name");
	ck_assert_int_eq(ns_opt_set(&o, NS_OPT_MAX, "--frob", "1", &e), -EINVAL);
}
END_TEST

START_TEST(test_help)
{
	struct ns_opts o;
	struct ns_err e;

	ck_assert_int_eq(parse(ARGV("help"), &o, &e), 0);
	ck_assert_int_eq(o.cmd, NS_CMD_HELP);
	ck_assert_int_eq(parse((char *[]){ "netsetup", NULL }, &o, &e), 0);
	ck_assert_int_eq(o.cmd, NS_CMD_HELP);
	ck_assert_ptr_nonnull(strstr(ns_usage, "netsetup run"));
}
END_TEST

/* The namespace's TCP sysctls as the datapath's options (tcp_defaults.c). */
START_TEST(test_tcp_defaults)
{
	static const struct {
		const char *cc;
		int ecn;
		const char *want_cc, *want_ecn;
		bool note;
	} cases[] = {
		{ "cubic", 2, "cubic", "accept", false },
		{ "bbr", 1, "bbr", "on", false },
		{ "reno", 0, "reno", "off", false },
		{ "dctcp", 2, "cubic", "accept", true },	/* not in the datapath: said */
		{ "bbr2", 3, "cubic", "on", true },		/* AccECN asks: classic ECN asks */
		{ "bb", 4, "cubic", "on", true },		/* a prefix is not a match */
		{ "bbr", 5, "bbr", "accept", false },		/* AccECN accepts only */
		{ NULL, -1, "cubic", "accept", false },		/* unreadable: the datapath's own */
		{ "", 6, "cubic", "accept", false },		/* unknown tcp_ecn: accept */
		{ "cubic", 99, "cubic", "accept", false },
	};
	struct ns_tcp_defaults d;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&d, 0xa5, sizeof(d));
		ns_tcp_defaults_map(cases[i].cc, cases[i].ecn, &d);
		ck_assert_msg(!strcmp(d.cc, cases[i].want_cc), "case %u: cc %s", i, d.cc);
		ck_assert_msg(!strcmp(d.ecn, cases[i].want_ecn), "case %u: ecn %s", i, d.ecn);
		ck_assert_msg(!!d.note[0] == cases[i].note, "case %u: note '%s'", i, d.note);
		if (cases[i].note)
			ck_assert_ptr_nonnull(strstr(d.note, cases[i].cc));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netsetup_opts");
	TCase *tc = tcase_create("parse");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_gso_show);
	tcase_add_test(tc, test_attach);
	tcase_add_test(tc, test_run);
	tcase_add_test(tc, test_shards_auto);
	tcase_add_loop_test(tc, test_bad, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_shared_opts);
	tcase_add_test(tc, test_help);
	tcase_add_test(tc, test_tcp_defaults);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
