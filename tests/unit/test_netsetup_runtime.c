// SPDX-License-Identifier: MIT
/*
 * test_netsetup_runtime.c - sandnet-runtime: its reading of runc's command line and
 * configuration, and what it does to a bundle's config.json
 *
 * - the command word found behind global flags with and without values, in
 *   both dash forms and with '='; our --runtime and --policy removed, every
 *   other argument passed on in order; the bundle of create and run;
 * - the configuration file: runtime, policy lists, comments; every refusal
 *   names the file, the line and the reason;
 * - config.json: the hooks appended after the ones there (prestart kept),
 *   the policy after "--", the file's mode kept, SANDNET_STATE_DIR in the
 *   hooks' env; left byte for byte as it was for io.sandnet.enable=false, a
 *   pod's container, no network namespace, the host's, a namespace served
 *   already, hooks there already (a second create); refused with the reason
 *   for a bad io.sandnet.enable, JSON that is not an object or not JSON, a
 *   missing file.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "netsetup/front/front.h"

static char dir[] = "/tmp/test_netsetup_runtime.XXXXXX";
static char config[256];

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(config, sizeof(config), "%s/config.json", dir);
	setenv("SANDNET_STATE_DIR", dir, 1);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/test_netsetup_runtime.XXXXXX");
	unsetenv("SANDNET_STATE_DIR");
}

/* ---- the command line ---- */

static int parse(struct ns_runtime *rt, struct ns_err *e, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	e->text[0] = '\0';
	return ns_runtime_parse(argc, argv, rt, e);
}

/* The real runtime's arguments after argv[0], joined by spaces. */
static const char *passed(const struct ns_runtime *rt)
{
	static char buf[512];
	int i;

	buf[0] = '\0';
	for (i = 1; i < rt->argc; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i > 1 ? " " : "", rt->argv[i]);
	return buf;
}

START_TEST(test_parse)
{
	struct ns_runtime rt;
	struct ns_err e;

	{
		char *a[] = { "sandnet-runtime", "--root", "/run/x", "--log", "/tmp/l.json", "--log-format", "json",
			      "--systemd-cgroup", "create", "--bundle", "/b", "--pid-file", "/p", "id1", NULL };

		ck_assert_int_eq(parse(&rt, &e, a), 0);
		ck_assert_str_eq(rt.cmd, "create");
		ck_assert_str_eq(rt.bundle, "/b");
		ck_assert_str_eq(rt.log, "/tmp/l.json");
		ck_assert_str_eq(rt.log_format, "json");
		ck_assert_ptr_null(rt.runtime);
		ck_assert_str_eq(passed(&rt), "--root /run/x --log /tmp/l.json --log-format json --systemd-cgroup "
					      "create --bundle /b --pid-file /p id1");
		ns_runtime_free(&rt);
	}
	{
		char *a[] = { "sandnet-runtime", "--runtime", "/usr/bin/crun", "--policy", "egress-deny=10.0.0.0/8",
			      "-root=/r", "--policy=ingress-deny=tcp:any:22", "run", "-b", "bb", "--policy", "x", "c", NULL };

		ck_assert_int_eq(parse(&rt, &e, a), 0);
		ck_assert_str_eq(rt.runtime, "/usr/bin/crun");
		ck_assert_str_eq(rt.cmd, "run");
		ck_assert_str_eq(rt.bundle, "bb");
		ck_assert_uint_eq(rt.n_policy, 2);
		ck_assert_str_eq(rt.policy[0], "egress-deny=10.0.0.0/8");
		ck_assert_str_eq(rt.policy[1], "ingress-deny=tcp:any:22");
		/* after the command word nothing is ours: "--policy x" goes to the runtime */
		ck_assert_str_eq(passed(&rt), "-root=/r run -b bb --policy x c");
		ns_runtime_free(&rt);
	}
	{
		char *a[] = { "sandnet-runtime", "--runtime=runc", "create", "--bundle=/x/y", "id", NULL };

		ck_assert_int_eq(parse(&rt, &e, a), 0);
		ck_assert_str_eq(rt.runtime, "runc");
		ck_assert_str_eq(rt.bundle, "/x/y");
		ck_assert_str_eq(passed(&rt), "create --bundle=/x/y id");
		ns_runtime_free(&rt);
	}
	{
		char *a[] = { "sandnet-runtime", "create", "id", NULL };

		ck_assert_int_eq(parse(&rt, &e, a), 0);
		ck_assert_str_eq(rt.bundle, ".");
		ns_runtime_free(&rt);
	}
	{
		char *a[] = { "sandnet-runtime", "--version", NULL };

		ck_assert_int_eq(parse(&rt, &e, a), 0);
		ck_assert_str_eq(rt.cmd, "");
		ck_assert_str_eq(passed(&rt), "--version");
		ns_runtime_free(&rt);
	}
	{
		/* a value flag's value is never the command word */
		char *a[] = { "sandnet-runtime", "-root", "create", "state", "x", NULL };

		ck_assert_int_eq(parse(&rt, &e, a), 0);
		ck_assert_str_eq(rt.cmd, "state");
		ns_runtime_free(&rt);
	}
	{
		char *a[] = { "sandnet-runtime", "state", "x", NULL };

		ck_assert_int_eq(parse(&rt, &e, a), 0);
		ck_assert_str_eq(rt.cmd, "state");
		ck_assert_str_eq(passed(&rt), "state x");
		ns_runtime_free(&rt);
	}
	{
		char *a[] = { "sandnet-runtime", "--runtime", NULL };

		ck_assert_int_eq(parse(&rt, &e, a), -EINVAL);
		ck_assert_str_eq(e.text, "--runtime: missing its value");
		ns_runtime_free(&rt);
	}
	{
		char *a[] = { "sandnet-runtime", "--policy", "egress-block=1.2.3.4", "state", NULL };

		ck_assert_int_eq(parse(&rt, &e, a), -EINVAL);
		ck_assert_str_eq(e.text, "--policy 'egress-block=1.2.3.4': expected " NS_POLICY_ITEM_FORMS);
		ns_runtime_free(&rt);
	}
	ck_assert(ns_runtime_mode("sandnet-runtime"));
	ck_assert(ns_runtime_mode("/usr/local/bin/sandnet-runtime"));
	ck_assert(!ns_runtime_mode("netsetup"));
	ck_assert(!ns_runtime_mode("/x/sandnet-runtime2"));
	ck_assert(!ns_runtime_mode(NULL));
}
END_TEST

/* ---- the configuration file ---- */

static int conf(struct ns_runtime *rt, const char *text, struct ns_err *e)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	ck_assert_ptr_nonnull(f);
	memset(rt, 0, sizeof(*rt));
	e->text[0] = '\0';
	err = ns_runtime_conf(f, "rt.conf", rt, e);
	fclose(f);
	return err;
}

START_TEST(test_conf)
{
	struct ns_runtime rt;
	struct ns_err e;

	ck_assert_int_eq(conf(&rt, "# sandnet-runtime\n\nruntime = /usr/bin/crun   # the real one\n"
				   "policy = egress-deny=10.0.0.0/8, ingress-deny=tcp:any:22\n"
				   "  policy=egress-allow=tcp:169.254.169.254:80\n"
				   "policy = egress-allow=tcp:pypi.org:443, egress-allow=*.github.com\n", &e), 0);
	ck_assert_str_eq(rt.runtime, "/usr/bin/crun");
	ck_assert_uint_eq(rt.n_policy, 5);
	/* name rules pass as any rule does: the datapath parses them */
	ck_assert_str_eq(rt.policy[3], "egress-allow=tcp:pypi.org:443");
	ck_assert_str_eq(rt.policy[4], "egress-allow=*.github.com");
	ck_assert_str_eq(rt.policy[0], "egress-deny=10.0.0.0/8");
	ck_assert_str_eq(rt.policy[1], "ingress-deny=tcp:any:22");
	ck_assert_str_eq(rt.policy[2], "egress-allow=tcp:169.254.169.254:80");
	ns_runtime_free(&rt);

#define CONF_REFUSED(txt_, words_) do {								\
		ck_assert_int_lt(conf(&rt, txt_, &e), 0);					\
		ck_assert_msg(!strcmp(e.text, words_), "'%s': '%s', expected '%s'", txt_, e.text, words_); \
		ns_runtime_free(&rt);								\
	} while (0)
	CONF_REFUSED("runtime = runc\nruntim = crun\n", "rt.conf line 2: unknown key 'runtim' (runtime, policy)");
	CONF_REFUSED("runtime\n", "rt.conf line 1: expected key = value");
	CONF_REFUSED("policy =   # none\n", "rt.conf line 1: policy has no value");
	CONF_REFUSED("\npolicy = egress-deny=10.0.0.0/8 deny=1.2.3.4\n",
		     "rt.conf line 2: policy item 'deny=1.2.3.4': expected " NS_POLICY_ITEM_FORMS);
}
END_TEST

/* ---- config.json ---- */

static void write_config(const char *text)
{
	FILE *f = fopen(config, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(config, 0640), 0);
}

static char *read_config(void)
{
	static char buf[65536];
	FILE *f = fopen(config, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int inject(const struct ns_runtime *rt, char *why, struct ns_err *e)
{
	e->text[0] = '\0';
	return ns_runtime_inject(config, rt, "/opt/sn/sbin/netsetup", why, 256, e);
}

#define NET_NS_OWN	"\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"network\"}]}"

START_TEST(test_inject)
{
	struct ns_runtime rt = { .n_policy = 2, .policy = { "egress-deny=10.0.0.0/8", "ingress-deny=tcp:any:22" } };
	char why[256], *text;
	struct ns_err e;
	json_t *c, *h;
	struct stat sb;

	write_config("{\"ociVersion\": \"1.0.2\", " NET_NS_OWN ", \"hooks\": {\"prestart\": [{\"path\": \"/proc/1/exe\", "
		     "\"args\": [\"libnetwork-setkey\"]}]}, \"annotations\": {\"io.sandnet.enable\": \"true\"}}");
	ck_assert_int_eq(inject(&rt, why, &e), 1);
	ck_assert_int_eq(stat(config, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 07777, 0640);
	c = json_loads(read_config(), 0, NULL);
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(json_string_value(json_object_get(c, "ociVersion")), "1.0.2");
	/* Docker's prestart hook stays, first */
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(json_array_get(
		json_object_get(json_object_get(c, "hooks"), "prestart"), 0), "args"), 0)), "libnetwork-setkey");
	h = json_array_get(json_object_get(json_object_get(c, "hooks"), "createRuntime"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(h, "path")), "/opt/sn/sbin/netsetup");
	text = json_dumps(json_object_get(h, "args"), JSON_COMPACT);
	ck_assert_str_eq(text, "[\"netsetup\",\"oci-hook\",\"create\",\"--none-ok\",\"--\",\"--egress-deny\","
			       "\"10.0.0.0/8\",\"--ingress-deny\",\"tcp:any:22\"]");
	free(text);
	ck_assert_int_eq(json_integer_value(json_object_get(h, "timeout")), 60);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(json_object_get(h, "env"), 0)),
				     "SANDNET_STATE_DIR=/tmp/test_netsetup_runtime."));
	h = json_array_get(json_object_get(json_object_get(c, "hooks"), "poststop"), 0);
	text = json_dumps(json_object_get(h, "args"), JSON_COMPACT);
	ck_assert_str_eq(text, "[\"netsetup\",\"oci-hook\",\"poststop\"]");
	free(text);
	json_decref(c);
	/* a second create of the same bundle adds nothing */
	text = strdup(read_config());
	ck_assert_int_eq(inject(&rt, why, &e), 0);
	ck_assert_str_eq(why, "its hooks run netsetup oci-hook already");
	ck_assert_str_eq(read_config(), text);
	free(text);
	/* no policy: no "--"; no SANDNET_STATE_DIR: no env */
	unsetenv("SANDNET_STATE_DIR");
	rt.n_policy = 0;
	write_config("{" NET_NS_OWN "}");
	ck_assert_int_eq(inject(&rt, why, &e), 1);
	c = json_loads(read_config(), 0, NULL);
	h = json_array_get(json_object_get(json_object_get(c, "hooks"), "createRuntime"), 0);
	text = json_dumps(h, JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(text, "{\"args\":[\"netsetup\",\"oci-hook\",\"create\",\"--none-ok\"],"
			       "\"path\":\"/opt/sn/sbin/netsetup\",\"timeout\":60}");
	free(text);
	json_decref(c);
}
END_TEST

/* @text is left byte for byte, and @words say why. */
static void left_alone(const char *text, const char *words)
{
	struct ns_runtime rt = { 0 };
	char why[256];
	struct ns_err e;

	write_config(text);
	ck_assert_int_eq(inject(&rt, why, &e), 0);
	ck_assert_msg(strstr(why, words), "%s: '%s', expected '%s'", text, why, words);
	ck_assert_str_eq(read_config(), text);
}

START_TEST(test_left_alone)
{
	char state[512], text[1024];
	struct stat sb;
	FILE *f;

	left_alone("{" NET_NS_OWN ", \"annotations\": {\"io.sandnet.enable\": \"false\"}}", "io.sandnet.enable=false");
	left_alone("{" NET_NS_OWN ", \"annotations\": {\"io.sandnet.enable\": \"0\"}}", "io.sandnet.enable=0");
	left_alone("{" NET_NS_OWN ", \"annotations\": {\"io.kubernetes.cri.container-type\": \"container\"}}",
		   "a container of a pod");
	left_alone("{" NET_NS_OWN ", \"annotations\": {\"io.kubernetes.cri-o.ContainerType\": \"container\"}}",
		   "a container of a pod");
	left_alone("{\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"mount\"}]}}",
		   "no network namespace of its own");
	left_alone("{\"process\": {}}", "no network namespace of its own");
	left_alone("{\"linux\": {\"namespaces\": [{\"type\": \"network\", \"path\": \"/proc/self/ns/net\"}]}}",
		   "network namespace /proc/self/ns/net is the host's");
	left_alone("{\"linux\": {\"namespaces\": [{\"type\": \"network\", \"path\": \"/nonexistent/ns\"}]}}",
		   "/nonexistent/ns: No such file or directory (the runtime will say)");
	left_alone("{" NET_NS_OWN ", \"hooks\": {\"createRuntime\": [{\"path\": \"/usr/sbin/netsetup\", "
		   "\"args\": [\"netsetup\", \"oci-hook\", \"create\"]}]}}", "its hooks run netsetup oci-hook already");
	/* a namespace (any file stands for one here) whose state file exists is served already */
	snprintf(text, sizeof(text), "%s/ns-file", dir);
	f = fopen(text, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(stat(text, &sb), 0);
	ck_assert_int_eq(ns_state_path(sb.st_dev, sb.st_ino, state, sizeof(state)), 0);
	f = fopen(state, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(text, sizeof(text), "{\"linux\": {\"namespaces\": [{\"type\": \"network\", \"path\": \"%s/ns-file\"}]}}",
		 dir);
	left_alone(text, "is served already");
	unlink(state);
	{
		struct ns_runtime rt = { 0 };
		char why[256];
		struct ns_err e;

		write_config(text);
		ck_assert_int_eq(inject(&rt, why, &e), 1);
	}
}
END_TEST

START_TEST(test_refused)
{
	struct ns_runtime rt = { 0 };
	char why[256], path[512];
	struct ns_err e;

	write_config("{" NET_NS_OWN ", \"annotations\": {\"io.sandnet.enable\": \"maybe\"}}");
	ck_assert_int_eq(inject(&rt, why, &e), -EINVAL);
	ck_assert_str_eq(e.text, "annotation io.sandnet.enable 'maybe': expected true or false");
	write_config("[1, 2]");
	ck_assert_int_eq(inject(&rt, why, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.text, "config.json: line"));
	ck_assert_ptr_nonnull(strstr(e.text, "not a JSON object"));
	write_config("{\"ociVersion\": ");
	ck_assert_int_eq(inject(&rt, why, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.text, "config.json: line 1 column"));
	unlink(config);
	ck_assert_int_eq(inject(&rt, why, &e), -ENOENT);
	snprintf(path, sizeof(path), "%s: No such file or directory (the bundle is --bundle DIR, or the current folder)",
		 config);
	ck_assert_str_eq(e.text, path);
	/* nothing was left next to it */
	ck_assert_int_eq(system("ls /tmp/test_netsetup_runtime.*/ | grep -q sandnet-"), 256);
}
END_TEST

static Suite *runtime_suite(void)
{
	Suite *s = suite_create("netsetup_runtime");
	TCase *tc = tcase_create("runtime");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_conf);
	tcase_add_test(tc, test_inject);
	tcase_add_test(tc, test_left_alone);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(runtime_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
