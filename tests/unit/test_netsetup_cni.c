// SPDX-License-Identifier: MIT
/*
 * test_netsetup_cni.c - the CNI plugin's JSON side and the detached datapath's bookkeeping
 *
 * ns_cni_main() is driven with in-memory stdin/stdout and the CNI_* variables:
 * VERSION, and every refusal (malformed JSON, missing or mistyped fields,
 * unknown versions and commands, bad environment) must print exactly one CNI
 * error object with the spec's code and exit 1; DEL with nothing attached
 * is success and prints nothing. Plugin mode detection by argv[0] and
 * CNI_COMMAND. The state file's new records (datapath, owner, netnspath)
 * round-trip; ns_state_find_owner() finds by owner; ns_datapath_alive()
 * tells a live process from a dead one and from a recycled pid.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include <sys/wait.h>

#include "netsetup/front/front.h"
#include "netsetup/orch/orch_int.h"

static char dir[] = "/tmp/test_netsetup_cni.XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("SANDNET_STATE_DIR", dir, 1);
	setenv("CNI_CONTAINERID", "ctr-1", 1);
	setenv("CNI_IFNAME", "eth0", 1);
	setenv("CNI_NETNS", "/run/netns/test-none", 1);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/test_netsetup_cni.XXXXXX");
}

/* Run one CNI command; returns its exit status, *outp the parsed stdout (or NULL). */
static int cni(const char *command, const char *config, json_t **outp, char **rawp)
{
	char *out = NULL;
	size_t out_len = 0;
	FILE *in, *o;
	int rc;

	setenv("CNI_COMMAND", command, 1);
	in = fmemopen((void *)config, strlen(config) ? strlen(config) : 1, "r");
	o = open_memstream(&out, &out_len);
	ck_assert(in && o);
	if (!strlen(config))
		fgetc(in);	/* an empty stdin: fmemopen needs one byte */
	rc = ns_cni_main(in, o);
	fclose(in);
	fclose(o);
	*outp = out_len ? json_loads(out, 0, NULL) : NULL;
	if (rawp)
		*rawp = out;
	else
		free(out);
	return rc;
}

static void expect_error(const char *command, const char *config, int code, const char *words)
{
	json_t *o;
	char *raw;
	int rc = cni(command, config, &o, &raw);

	ck_assert_msg(rc == 1, "%s %s: exit %d", command, config, rc);
	ck_assert_msg(o != NULL, "%s %s: stdout is not JSON: %s", command, config, raw);
	ck_assert_int_eq(json_object_size(o), 4);
	ck_assert_msg(json_integer_value(json_object_get(o, "code")) == code, "%s %s: code %lld, expected %d: %s",
		      command, config, json_integer_value(json_object_get(o, "code")), code, raw);
	ck_assert(json_is_string(json_object_get(o, "cniVersion")));
	ck_assert(json_is_string(json_object_get(o, "msg")));
	ck_assert_msg(strstr(raw, words), "%s %s: '%s' not in %s", command, config, words, raw);
	json_decref(o);
	free(raw);
}

START_TEST(version)
{
	json_t *o, *v;
	int rc;

	rc = cni("VERSION", "{\"cniVersion\": \"1.0.0\"}", &o, NULL);
	ck_assert_int_eq(rc, 0);
	v = json_object_get(o, "supportedVersions");
	ck_assert_int_eq(json_array_size(v), 4);
	ck_assert_str_eq(json_string_value(json_array_get(v, 3)), "1.0.0");
	json_decref(o);
	rc = cni("VERSION", "", &o, NULL);	/* some runtimes send nothing */
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(json_string_value(json_object_get(o, "cniVersion")), "1.0.0");
	json_decref(o);
}
END_TEST

START_TEST(refusals)
{
	expect_error("ADD", "{\"cniVersion\": ", 6, "failed to decode");
	expect_error("ADD", "null", 6, "");
	expect_error("ADD", "[]", 6, "not a JSON object");
	expect_error("ADD", "{\"name\": \"n\"}", 7, "\\\"cniVersion\\\" missing");
	expect_error("ADD", "{\"cniVersion\": 1, \"name\": \"n\"}", 7, "expected a string");
	expect_error("ADD", "{\"cniVersion\": \"0.2.0\", \"name\": \"n\"}", 1, "0.2.0");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\"}", 7, "\\\"name\\\" missing");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"\"}", 7, "non-empty");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\"}", 7, "chained plugin");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": []}", 7,
		     "expected an object");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"gso\": \"x\"}", 7,
		     "\\\"gso\\\"");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"channels\": 0}", 7,
		     "\\\"channels\\\"");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"channels\": 65}", 7,
		     "\\\"channels\\\" 65: out of range 1..64");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"channels\": -1}", 7,
		     "\\\"channels\\\": expected an integer 1..64");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"shards\": 65}", 7,
		     "\\\"shards\\\" 65: out of range 1..64");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"shards\": \"2\"}", 7,
		     "\\\"shards\\\": expected an integer 1..64");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"shards\": 2, \"channels\": 4}", 7,
		     "each shard has one channel per link");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"face\": \"off\"}", 7,
		     "\\\"face\\\": expected true or false");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"face\": 0}", 7,
		     "\\\"face\\\": expected true or false");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"datapathArgs\": [1]}",
		     7, "\\\"datapathArgs\\\"");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"datapath\": 5}", 7,
		     "\\\"datapath\\\"");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"tcpCongestionControl\": \"vegas\"}",
		     7, "\\\"tcpCongestionControl\\\" 'vegas': expected cubic, reno or bbr");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"tcpCongestionControl\": \"=bbr\"}",
		     7, "\\\"tcpCongestionControl\\\" '=bbr'");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"tcpCongestionControl\": 1}",
		     7, "\\\"tcpCongestionControl\\\": expected a non-empty string");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"tcpEcn\": \"eth0=yes\"}",
		     7, "\\\"tcpEcn\\\" 'eth0=yes': expected off, accept or on");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"tcpPacing\": \"on\"}",
		     7, "\\\"tcpPacing\\\": expected true or false");
	expect_error("CHECK", "{\"cniVersion\": \"0.3.1\", \"name\": \"n\", \"prevResult\": {}}", 1,
		     "CHECK needs cniVersion 0.4.0");
	expect_error("CHECK", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}}", 101,
		     "not attached");
	expect_error("GC", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\"}", 4, "CNI_COMMAND 'GC'");
	setenv("CNI_IFNAME", "a/b", 1);
	expect_error("DEL", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\"}", 4, "CNI_IFNAME 'a/b'");
	setenv("CNI_IFNAME", "eth0", 1);
	setenv("CNI_CONTAINERID", "-bad", 1);
	expect_error("DEL", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\"}", 4, "CNI_CONTAINERID '-bad'");
	unsetenv("CNI_CONTAINERID");
	expect_error("DEL", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\"}", 4, "CNI_CONTAINERID '': not set");
	/* ADD reads its whole configuration before its environment: its error first */
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}, \"policy\": [\"egress-block=1.2.3.4\"]}",
		     7, "\\\"policy\\\" item 0 'egress-block=1.2.3.4'");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}}", 4,
		     "CNI_CONTAINERID '': not set");
	setenv("CNI_CONTAINERID", "ctr-1", 1);
	unsetenv("CNI_NETNS");
	expect_error("ADD", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\", \"prevResult\": {}}", 4, "CNI_NETNS: not set");
}
END_TEST

START_TEST(del_nothing_attached)
{
	json_t *o;
	char *raw;

	unsetenv("CNI_NETNS");	/* DEL may come without it */
	ck_assert_int_eq(cni("DEL", "{\"cniVersion\": \"1.0.0\", \"name\": \"n\"}", &o, &raw), 0);
	ck_assert_ptr_null(o);
	free(raw);
}
END_TEST

START_TEST(mode_detection)
{
	char *cni_argv[] = { "/opt/cni/bin/sandnet", NULL };
	char *plain[] = { "netsetup", NULL };
	char *sub[] = { "netsetup", "detach", NULL };

	unsetenv("CNI_COMMAND");
	ck_assert(ns_cni_mode(1, cni_argv));
	ck_assert(!ns_cni_mode(1, plain));
	setenv("CNI_COMMAND", "ADD", 1);
	ck_assert(ns_cni_mode(1, plain));
	ck_assert(!ns_cni_mode(2, sub));	/* a subcommand is never a plugin call */
}
END_TEST

START_TEST(state_records)
{
	struct ns_state st = { .dev = 4, .ino = 77 }, back, found;
	struct ns_err e = { .text = "" };
	char path[256], fpath[256];

	st.datapath_pid = 1234;
	st.datapath_start = 987654321ULL;
	strcpy(st.owner, "cni:ctr-1:eth0");
	strcpy(st.netns_path, "/run/netns/x");
	ck_assert_int_eq(ns_state_path(st.dev, st.ino, path, sizeof(path)), 0);
	ck_assert_int_eq(ns_state_write(path, &st, &e), 0);
	ck_assert_int_eq(ns_state_read(path, &back, &e), 0);
	ck_assert_int_eq(back.datapath_pid, 1234);
	ck_assert(back.datapath_start == 987654321ULL);
	ck_assert_str_eq(back.owner, "cni:ctr-1:eth0");
	ck_assert_str_eq(back.netns_path, "/run/netns/x");
	ns_state_free(&back);

	ck_assert_int_eq(ns_state_find_owner("cni:ctr-1:eth0", fpath, sizeof(fpath), &found, &e), 0);
	ck_assert_str_eq(fpath, path);
	ck_assert_int_eq(found.ino, 77);
	ns_state_free(&found);
	ck_assert_int_eq(ns_state_find_owner("cni:ctr-2:eth0", fpath, sizeof(fpath), &found, &e), -ENOENT);
	ck_assert(strstr(e.text, "nothing attached"));

	/* Malformed new records are refused like the others. */
	{
		static const char *const bad[] = {
			"sandnet-netsetup-state 1\nnetns 4 77\ndatapath 0 5\n",
			"sandnet-netsetup-state 1\nnetns 4 77\ndatapath x\n",
			"sandnet-netsetup-state 1\nnetns 4 77\nowner \n",
			"sandnet-netsetup-state 1\nnetns 4 77\nowner a b\n",
		};
		unsigned int i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			FILE *f = fmemopen((void *)bad[i], strlen(bad[i]), "r");

			ck_assert_int_eq(ns_state_parse(f, &back, &e), -EINVAL);
			ck_assert(strstr(e.text, "line 3: malformed"));
			ns_state_free(&back);
			fclose(f);
		}
	}
}
END_TEST

START_TEST(datapath_alive)
{
	struct ns_state st = { 0 };
	sigset_t set, old;
	pid_t child;

	st.datapath_pid = getpid();
	ck_assert_int_eq(ns_proc_start_time(getpid(), &st.datapath_start), 0);
	ck_assert(ns_datapath_alive(&st));
	st.datapath_start++;	/* the same pid, another process: a recycled pid */
	ck_assert(!ns_datapath_alive(&st));

	/* Check's own SIGTERM handler must not run in the child: it kills the group. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		signal(SIGTERM, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		pause();
		_exit(0);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	st.datapath_pid = child;
	ck_assert_int_eq(ns_proc_start_time(child, &st.datapath_start), 0);
	ck_assert(ns_datapath_alive(&st));
	ck_assert_int_eq(ns_datapath_stop(&st, 1000), 0);	/* SIGTERM, then reaps it */
	ck_assert(!ns_datapath_alive(&st));
	ck_assert_int_eq(kill(child, 0), -1);
	ck_assert_int_eq(ns_proc_start_time(child, &st.datapath_start), -ENOENT);
	st.datapath_pid = 0;
	ck_assert(!ns_datapath_alive(&st));
	ck_assert_int_eq(ns_datapath_stop(&st, 10), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netsetup_cni");
	TCase *tc = tcase_create("cni");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, version);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, del_nothing_attached);
	tcase_add_test(tc, mode_detection);
	tcase_add_test(tc, state_records);
	tcase_add_test(tc, datapath_alive);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
