// SPDX-License-Identifier: MIT
/*
 * test_netsetup_serve.c - `netsetup serve`'s policy and its ATTACH message
 *
 * The configuration file: defaults, every key, lists replacing the default,
 * user names, and refusals that name the file, the line and the reason.
 * ns_serve_authorize(): uid or gid, interface, GSO mode and channel rules,
 * each refusal naming its rule. ATTACH: encoded, decoded with a real netns
 * fd, refused with a fd that is not a network namespace or a wrong fd count
 * (the fds are closed in every case: the teardown counts them).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "netsetup/front/front.h"

static int fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static int fds_at_start;

static void setup(void)
{
	fds_at_start = fds_open();
}

static void teardown(void)
{
	ck_assert_int_eq(fds_open(), fds_at_start);
}

static int parse(const char *text, struct ns_serve_conf *c, struct ns_err *e)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	ck_assert_ptr_nonnull(f);
	err = ns_serve_conf_parse(f, "test.conf", c, e);
	fclose(f);
	return err;
}

START_TEST(conf_defaults)
{
	struct ns_serve_conf c;
	struct ns_err e = { .text = "" };

	ck_assert_int_eq(parse("# nothing\n\n   \n", &c, &e), 0);
	ck_assert_uint_eq(c.n_uids, 1);
	ck_assert_uint_eq(c.uids[0], 0);
	ck_assert_uint_eq(c.n_gids, 0);
	ck_assert_uint_eq(c.n_ifaces, 0);
	ck_assert(c.gso_auto_allowed && c.gso_allowed[PROTO_GSO_HW] && c.gso_allowed[PROTO_GSO_SW] &&
		  c.gso_allowed[PROTO_GSO_OFF]);
	ck_assert_uint_eq(c.max_channels, 4);
	ck_assert_uint_eq(c.max_clients, 64);
	ck_assert(c.keep_dark);	/* fail closed by default */
	ck_assert_uint_eq(c.request_timeout_s, 10);
}
END_TEST

START_TEST(conf_every_key)
{
	struct ns_serve_conf c;
	struct ns_err e = { .text = "" };

	ck_assert_int_eq(parse("allowed_uids = 1000, root 42 # trailing comment\n"
			       "  allowed_gids=7\n"
			       "allowed_interfaces = eth0 eth1\n"
			       "gso = hw\n"
			       "max_channels = 16\n"
			       "max_clients = 3\n"
			       "on_datapath_exit = restore\n"
			       "request_timeout = 2\n", &c, &e), 0);
	ck_assert_uint_eq(c.n_uids, 3);
	ck_assert_uint_eq(c.uids[0], 1000);
	ck_assert_uint_eq(c.uids[1], 0);	/* root, by name */
	ck_assert_uint_eq(c.uids[2], 42);
	ck_assert_uint_eq(c.n_gids, 1);
	ck_assert_uint_eq(c.gids[0], 7);
	ck_assert_uint_eq(c.n_ifaces, 2);
	ck_assert_str_eq(c.ifaces[1], "eth1");
	ck_assert(!c.gso_auto_allowed && c.gso_allowed[PROTO_GSO_HW] && !c.gso_allowed[PROTO_GSO_SW] &&
		  !c.gso_allowed[PROTO_GSO_OFF]);
	ck_assert_uint_eq(c.max_channels, 16);
	ck_assert_uint_eq(c.max_clients, 3);
	ck_assert(!c.keep_dark);	/* the explicit choice to open the container */
	ck_assert_uint_eq(c.request_timeout_s, 2);
}
END_TEST

START_TEST(conf_refusals)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "frob = 1\n", "test.conf line 1: unknown key 'frob'" },
		{ "# ok\nallowed_uids\n", "test.conf line 2: expected key = value" },
		{ "allowed_uids = no-such-user-xyz\n", "line 1: allowed_uids 'no-such-user-xyz': no such user" },
		{ "allowed_gids = no-such-group-xyz\n", "no such group" },
		{ "max_channels = 65\n", "max_channels '65': expected a number 1..64" },
		{ "max_channels = -1\n", "expected a number" },
		{ "max_clients = 0\n", "max_clients '0': expected a number 1..4096" },
		{ "request_timeout = 1x\n", "request_timeout '1x'" },
		{ "on_datapath_exit = explode\n", "expected restore or keep-dark" },
		{ "gso = turbo\n", "gso 'turbo': expected auto, hw, sw or off" },
		{ "allowed_interfaces = averyveryverylongname\n", "not an interface name" },
	};
	struct ns_serve_conf c;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ns_err e = { .text = "" };

		ck_assert_int_eq(parse(cases[i].text, &c, &e), -EINVAL);
		ck_assert_msg(strstr(e.text, cases[i].msg), "'%s': got '%s', expected '%s'", cases[i].text,
			      e.text, cases[i].msg);
	}
}
END_TEST

START_TEST(authorize_rules)
{
	struct ns_serve_conf c;
	struct ns_err e = { .text = "" };
	struct ucred root = { .pid = 10, .uid = 0, .gid = 0 };
	struct ucred nobody = { .pid = 11, .uid = 65534, .gid = 65534 };
	struct ucred member = { .pid = 12, .uid = 1234, .gid = 77 };
	struct proto_attach req = { .netns_fd = -1 };

	ck_assert_int_eq(parse("allowed_uids = 0\nallowed_gids = 77\nmax_channels = 2\n"
			       "allowed_interfaces = eth0\ngso = auto sw\n", &c, &e), 0);
	strcpy(req.ifname, "eth0");
	ck_assert_int_eq(ns_serve_authorize(&c, &root, &req, &e), 0);
	ck_assert_int_eq(ns_serve_authorize(&c, &member, &req, &e), 0);
	ck_assert_int_eq(ns_serve_authorize(&c, &nobody, &req, &e), -EPERM);
	ck_assert_str_eq(e.text, "uid 65534 gid 65534 (pid 11) is not allowed to attach (allowed_uids, allowed_gids)");

	strcpy(req.ifname, "eth1");
	ck_assert_int_eq(ns_serve_authorize(&c, &root, &req, &e), -EINVAL);
	ck_assert_str_eq(e.text, "interface eth1 is not allowed (allowed_interfaces)");
	req.ifname[0] = 0;
	ck_assert_int_eq(ns_serve_authorize(&c, &root, &req, &e), -EINVAL);
	ck_assert(strstr(e.text, "names no interface"));
	strcpy(req.ifname, "eth0");

	req.has_gso_mode = true;
	req.gso_mode = PROTO_GSO_HW;
	ck_assert_int_eq(ns_serve_authorize(&c, &root, &req, &e), -EINVAL);
	ck_assert_str_eq(e.text, "GSO mode hw is not allowed (gso)");
	req.gso_mode = PROTO_GSO_SW;
	ck_assert_int_eq(ns_serve_authorize(&c, &root, &req, &e), 0);

	req.channels = 3;
	ck_assert_int_eq(ns_serve_authorize(&c, &root, &req, &e), -EINVAL);
	ck_assert_str_eq(e.text, "3 channels asked, at most 2 allowed (max_channels)");
	req.channels = 2;
	ck_assert_int_eq(ns_serve_authorize(&c, &root, &req, &e), 0);
	/* each shard reads a channel per link */
	req.channels = 0;
	req.shards = 3;
	ck_assert_int_eq(ns_serve_authorize(&c, &root, &req, &e), -EINVAL);
	ck_assert_str_eq(e.text, "3 shards asked, each a channel per link, at most 2 allowed (max_channels)");
	req.shards = 2;
	ck_assert_int_eq(ns_serve_authorize(&c, &root, &req, &e), 0);
}
END_TEST

static uint8_t buf[PROTO_MSG_MAX_BYTES];

START_TEST(attach_roundtrip)
{
	struct proto_msg m = { .type = PROTO_MSG_ATTACH, .seq = 9 }, *got = NULL;
	struct proto_why why = { 0 };
	int len, fd;

	strcpy(m.attach.ifname, "eth0");
	m.attach.has_gso_mode = true;
	m.attach.gso_mode = PROTO_GSO_SW;
	m.attach.channels = 3;
	m.attach.shards = 5;
	len = proto_encode(&m, buf, sizeof(buf));
	ck_assert_int_gt(len, 16);
	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(proto_decode(buf, len, &fd, 1, &got, &why), 0);
	ck_assert_int_eq(got->type, PROTO_MSG_ATTACH);
	ck_assert_uint_eq(got->seq, 9);
	ck_assert_int_eq(got->attach.netns_fd, fd);
	ck_assert_str_eq(got->attach.ifname, "eth0");
	ck_assert(got->attach.has_gso_mode);
	ck_assert_int_eq(got->attach.gso_mode, PROTO_GSO_SW);
	ck_assert_uint_eq(got->attach.channels, 3);
	ck_assert_uint_eq(got->attach.shards, 5);
	proto_msg_free(got);	/* closes fd: the teardown checks */

	/* Minimal: no optional attribute. */
	memset(&m.attach, 0, sizeof(m.attach));
	len = proto_encode(&m, buf, sizeof(buf));
	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(proto_decode(buf, len, &fd, 1, &got, &why), 0);
	ck_assert(!got->attach.ifname[0] && !got->attach.has_gso_mode && !got->attach.channels &&
		  !got->attach.shards);
	proto_msg_free(got);
}
END_TEST

START_TEST(attach_refused)
{
	struct proto_msg m = { .type = PROTO_MSG_ATTACH, .seq = 1 }, *got = NULL;
	struct proto_why why = { 0 };
	int len, fds[2];

	len = proto_encode(&m, buf, sizeof(buf));
	fds[0] = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(proto_decode(buf, len, fds, 1, &got, &why), -EBADF);
	ck_assert_str_eq(why.text, "ATTACH: the fd is not a network namespace (another kind of namespace)");
	fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(proto_decode(buf, len, fds, 1, &got, &why), -EBADF);
	ck_assert(strstr(why.text, "is not a network namespace"));
	ck_assert_int_eq(proto_decode(buf, len, NULL, 0, &got, &why), -EBADMSG);
	ck_assert_str_eq(why.text, "ATTACH: declares 1 netns fds but 0 arrived (exactly 1)");
	fds[0] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	fds[1] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(proto_decode(buf, len, fds, 2, &got, &why), -EBADMSG);
	ck_assert_ptr_null(got);

	m.attach.channels = PROTO_MAX_CHANNELS + 1;
	len = proto_encode(&m, buf, sizeof(buf));
	fds[0] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(proto_decode(buf, len, fds, 1, &got, &why), -E2BIG);
	ck_assert_str_eq(why.text, "ATTACH: attribute CHANNELS: 65 is out of range 1..64");

	m.attach.channels = 0;
	m.attach.shards = PROTO_MAX_CHANNELS + 1;
	len = proto_encode(&m, buf, sizeof(buf));
	fds[0] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(proto_decode(buf, len, fds, 1, &got, &why), -E2BIG);
	ck_assert_str_eq(why.text, "ATTACH: attribute SHARDS: 65 is out of range 1..64");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netsetup_serve");
	TCase *tc = tcase_create("serve");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, conf_defaults);
	tcase_add_test(tc, conf_every_key);
	tcase_add_test(tc, conf_refusals);
	tcase_add_test(tc, authorize_rules);
	tcase_add_test(tc, attach_roundtrip);
	tcase_add_test(tc, attach_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
