// SPDX-License-Identifier: MIT
/*
 * test_netsetup_oci.c - `netsetup oci-hook`: its command line and the OCI state it reads
 *
 * Everything that must be refused before anything is started: malformed
 * state JSON (with line and column), a missing or unusable id, no pid and no
 * netns path, a status that names no stage, unknown options, datapath
 * arguments outside "--". poststop with nothing attached succeeds and
 * changes nothing; --help prints the usage and succeeds.
 */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "netsetup/front/front.h"

static char dir[] = "/tmp/test_netsetup_oci.XXXXXX";

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
	strcpy(dir, "/tmp/test_netsetup_oci.XXXXXX");
}

static int hook(const char *state, struct ns_err *e, ...)
{
	char *argv[16] = { "oci-hook" };
	int argc = 1, err;
	va_list ap;
	FILE *in;

	va_start(ap, e);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	in = fmemopen((void *)state, strlen(state), "r");
	ck_assert_ptr_nonnull(in);
	e->text[0] = 0;
	err = ns_oci_main(argc, argv, in, e);
	fclose(in);
	return err;
}

#define REFUSED(words, state, ...) do {							\
		struct ns_err e_;							\
		int err_ = hook(state, &e_, __VA_ARGS__);				\
		ck_assert_msg(err_ == -EINVAL, "%s: returned %d (%s)", state, err_, e_.text); \
		ck_assert_msg(strstr(e_.text, words), "%s: '%s' not in '%s'", state, words, e_.text); \
	} while (0)

START_TEST(refusals)
{
	REFUSED("OCI state on stdin: line 1 column", "{\"id\": ", "create", NULL);
	REFUSED("not a JSON object", "[1]", "create", NULL);
	REFUSED("\"id\" missing", "{\"pid\": 42}", "create", NULL);
	REFUSED("not a usable container id", "{\"id\": \"a b\", \"pid\": 42}", "create", NULL);
	REFUSED("not a usable container id", "{\"id\": 5, \"pid\": 42}", "create", NULL);
	REFUSED("\"pid\" missing, and config.json names no network namespace path",
		"{\"id\": \"c1\", \"bundle\": \"/nonexistent\"}", "create", NULL);
	REFUSED("\"pid\" is not a container process id", "{\"id\": \"c1\", \"pid\": 1}", "create", NULL);
	REFUSED("\"pid\" is not a container process id", "{\"id\": \"c1\", \"pid\": \"7\"}", "create", NULL);
	REFUSED("\"status\" missing and no stage", "{\"id\": \"c1\", \"pid\": 42}", NULL);
	REFUSED("status \"paused\": give the stage", "{\"id\": \"c1\", \"status\": \"paused\"}", NULL);
	REFUSED("unknown option '--frob'", "{}", "--frob", NULL);
	REFUSED("missing the value of option '--datapath'", "{}", "create", "--datapath", NULL);
	REFUSED("--gso 'fast'", "{}", "--gso", "fast", NULL);
	REFUSED("--channels 0: out of range 1..64", "{}", "--channels", "0", NULL);
	REFUSED("--channels 'two': not a number", "{}", "--channels", "two", NULL);
	REFUSED("--shards 0: out of range 1..64", "{}", "--shards", "0", NULL);
	REFUSED("annotation sandnet.shards 'many': not a number",
		"{\"id\": \"c1\", \"pid\": 42, \"status\": \"creating\", \"annotations\": {\"sandnet.shards\": \"many\"}}",
		"create", NULL);
	REFUSED("annotation sandnet.shards 65: out of range 1..64",
		"{\"id\": \"c1\", \"pid\": 42, \"status\": \"creating\", \"annotations\": {\"sandnet.shards\": \"65\"}}",
		"create", NULL);
	REFUSED("--channels 3 and annotation sandnet.shards 2: each shard has one channel per link",
		"{\"id\": \"c1\", \"pid\": 42, \"status\": \"creating\", \"annotations\": {\"sandnet.shards\": \"2\"}}",
		"create", "--channels", "3", NULL);
	REFUSED("--face 'maybe': expected on or off", "{}", "--face", "maybe", NULL);
	REFUSED("annotation sandnet.face 'maybe': expected on or off",
		"{\"id\": \"c1\", \"pid\": 42, \"status\": \"creating\", \"annotations\": {\"sandnet.face\": \"maybe\"}}",
		"create", NULL);
	REFUSED("annotation sandnet.tcp-cc 'vegas': expected cubic, reno or bbr",
		"{\"id\": \"c1\", \"pid\": 42, \"status\": \"creating\", \"annotations\": {\"sandnet.tcp-cc\": \"bbr,vegas\"}}",
		"create", NULL);
	REFUSED("annotation sandnet.tcp-ecn 'eth0=': expected off, accept or on",
		"{\"id\": \"c1\", \"pid\": 42, \"status\": \"creating\", \"annotations\": {\"sandnet.tcp-ecn\": \"eth0=\"}}",
		"create", NULL);
	REFUSED("annotation sandnet.tcp-pacing 'eth0=off': expected on or off",
		"{\"id\": \"c1\", \"pid\": 42, \"status\": \"creating\", \"annotations\": {\"sandnet.tcp-pacing\": \"eth0=off\"}}",
		"create", NULL);
	REFUSED("unexpected argument 'extra'", "{}", "create", "extra", NULL);
}
END_TEST

START_TEST(poststop_nothing_attached)
{
	struct ns_err e;

	ck_assert_int_eq(hook("{\"id\": \"c1\", \"status\": \"stopped\"}", &e, NULL), 0);
	ck_assert_int_eq(hook("{\"id\": \"c1\"}", &e, "poststop", NULL), 0);
	/* Nothing was created either. */
	ck_assert_int_eq(rmdir(dir), 0);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
}
END_TEST

START_TEST(datapath_args)
{
	static const char state[] = "{\"id\": \"c1\", \"pid\": 42, \"status\": \"creating\"}";
	char *argv[] = { "oci-hook", "create", "--none-ok", "--", "--egress-deny", "10.0.0.0/8", NULL };
	struct ns_err e = { .text = "" };
	FILE *in = fmemopen((void *)state, strlen(state), "r");

	/* what sandnet-runtime's create hook looks like: datapath arguments after "--" */
	ck_assert_ptr_nonnull(in);
	ck_assert_msg(ns_oci_check(6, argv, in, &e) == 0, "%s", e.text);
	fclose(in);
}
END_TEST

START_TEST(help)
{
	struct ns_err e;

	ck_assert_int_eq(hook("", &e, "--help", NULL), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netsetup_oci");
	TCase *tc = tcase_create("oci");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, poststop_nothing_attached);
	tcase_add_test(tc, datapath_args);
	tcase_add_test(tc, help);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
