// SPDX-License-Identifier: MIT
/*
 * runtime.c - sandnet-runtime: runc (or crun) with sandnet's hooks added
 *
 * Theory of operation: Docker (daemon.json "runtimes"), containerd (the runc
 * shim's BinaryName, and through CRI a Kubernetes RuntimeClass) and CRI-O (a
 * runtime handler) each run an OCI runtime binary of the operator's choice
 * with runc's command line. netsetup is that binary when it is called
 * sandnet-runtime (`make install` links PREFIX/bin/sandnet-runtime to
 * ../sbin/netsetup, as it links the CNI plugin). It does one thing and
 * execs the real runtime:
 *
 *   create, run   read the bundle's config.json (--bundle DIR, -b DIR, else
 *                 the current folder) and, unless a rule below leaves it
 *                 alone, append to it a createRuntime hook `netsetup oci-hook
 *                 create --none-ok [-- POLICY]` and a poststop hook `netsetup
 *                 oci-hook poststop` (oci.c does the work, as under podman's
 *                 hooks.d), written back atomically (a temporary file, then
 *                 rename); then exec the real runtime with the arguments
 *                 unchanged;
 *   --sandnet-version alone: print sandnet's version (its own flag: runc's
 *                 --version stays runc's);
 *   anything else (start, state, kill, delete, exec, ps, events, update,
 *                 features, --version, --help, none): exec the real runtime
 *                 with the arguments unchanged.
 * execv() replaces this process, so the real runtime's exit status, stdout
 * and stderr are the caller's, byte for byte; nothing is printed on the way
 * (under containerd a create's stdout and stderr are the container's own).
 *
 * The hooks name this very binary (/proc/self/exe: the netsetup installed
 * with it, never another version found in PATH), which finds the datapath
 * next to itself (dpexec.c). config.json is left as it is when:
 *   - the annotation io.sandnet.enable is false (0, no, off);
 *   - it is a container of a Kubernetes pod, not the pod's sandbox
 *     (io.kubernetes.cri.container-type or io.kubernetes.cri-o.ContainerType
 *     "container"): it joins the sandbox's namespace, which the sandbox's
 *     hooks serve and give back;
 *   - it has no network namespace of its own (no "network" entry in
 *     linux.namespaces: the runtime's), or names the host's (pid 1's) or the
 *     runtime's own (Docker's --network host names its daemon's);
 *   - the namespace it joins by path is served already (a state file for
 *     it: Docker's --network container:ID, a pod's namespace);
 *   - its hooks hold a `netsetup oci-hook` already (podman's hooks.d).
 * A namespace of its own with no link but loopback (Docker's --network
 * none) is the hook's to judge, since Docker adds the links from a prestart
 * hook that runs before createRuntime: --none-ok makes the hook leave such
 * a namespace alone and succeed (oci.c).
 *
 * The real runtime: --runtime PATH (a flag of ours among the global flags,
 * removed before the exec), else $SANDNET_RUNTIME, else "runtime = PATH" in
 * the configuration file ($SANDNET_RUNTIME_CONFIG, else
 * /etc/sandnet/runtime.conf), else runc, then crun; a bare name is looked
 * for next to netsetup and sandnet-runtime, then in PATH (dpexec.c). One
 * that is this binary itself is refused. The configuration file may also
 * hold "policy = ITEM, ITEM" (and the command line --policy ITEM): rules
 * every container gets before its own sandnet.policy annotation, so that
 * the operator's come first (first match wins).
 *
 * Every refusal says what was wrong on stderr and, when the caller gave
 * --log FILE, in that file in its --log-format (json: one line as runc
 * writes them), where containerd's shim reads a runtime's last error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>

#include "common/out.h"
#include "netsetup/front/front.h"

#define RT_NAME			"sandnet-runtime"
#define RT_CONFIG		SANDNET_SYSCONFDIR "/sandnet/runtime.conf"
#define RT_CONFIG_MAX_BYTES	(16 << 20)	/* a bundle's config.json */
#define RT_CONF_LINE_MAX	1024
#define RT_HOOK_CREATE_TIMEOUT	60		/* seconds: attach waits up to NS_DATAPATH_TIMEOUT_S for the datapath */
#define RT_HOOK_POSTSTOP_TIMEOUT 30
#define RT_HINT			"name it with --runtime PATH, SANDNET_RUNTIME=PATH or runtime = PATH in " RT_CONFIG

/* Global flags of runc and crun that take a value: the command word comes after. */
static const char *const rt_value_flags[] = {
	"root", "log", "log-format", "log-level", "criu", "rootless", "cgroup-manager",
};

/**
 * ns_runtime_mode() - netsetup was called as sandnet-runtime
 * @argv0:	the program name it was given
 * Return: true when its last path component is "sandnet-runtime".
 */
bool ns_runtime_mode(const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	return argv0 && !strcmp(base ? base + 1 : argv0, RT_NAME);
}

/* "--root=x" -> "root", @val "x"; "-b" -> "b". NULL when @arg is no flag. */
static const char *rt_flag(const char *arg, char *name, size_t size, const char **val)
{
	const char *eq;

	*val = NULL;
	if (arg[0] != '-' || !arg[1] || !strcmp(arg, "--"))
		return NULL;
	arg += arg[1] == '-' ? 2 : 1;
	eq = strchr(arg, '=');
	snprintf(name, size, "%.*s", (int)(eq ? (size_t)(eq - arg) : strlen(arg)), arg);
	if (eq)
		*val = eq + 1;
	return name;
}

static bool rt_takes_value(const char *name)
{
	unsigned int i;

	for (i = 0; i < sizeof(rt_value_flags) / sizeof(rt_value_flags[0]); i++)
		if (!strcmp(name, rt_value_flags[i]))
			return true;
	return false;
}

static int rt_add_policy(struct ns_runtime *rt, const char *item, const char *where, struct ns_err *e)
{
	const char *flag, *rule;

	if (ns_policy_item_parse(item, &flag, &rule) < 0) {
		ns_err_set(e, "%s '%s': expected %s", where, item, NS_POLICY_ITEM_FORMS);
		return -EINVAL;
	}
	if (rt->n_policy >= NS_RUNTIME_MAX_POLICY) {
		ns_err_set(e, "%s: more than %d policy items", where, NS_RUNTIME_MAX_POLICY);
		return -E2BIG;
	}
	rt->policy[rt->n_policy++] = item;
	return 0;
}

/**
 * ns_runtime_parse() - find our flags, the command and the bundle in the real runtime's command line
 * @argc:	argument count
 * @argv:	sandnet-runtime's arguments (argv[0] its name); kept, not copied
 * @rt:		filled: @rt->argv is what the real runtime gets (argv[0] left
 *		NULL for the caller), @rt->cmd the command word ("" when none),
 *		@rt->bundle the bundle of create and run; --log and --log-format
 * @e:		what was wrong
 *
 * --runtime PATH and --policy ITEM (also --runtime=PATH) are ours when they
 * come before the command word, and are removed; every other argument goes
 * to the real runtime unchanged and in order.
 *
 * Return: 0, or -EINVAL (a flag of ours without its value, a malformed
 * policy item) or -ENOMEM.
 */
int ns_runtime_parse(int argc, char **argv, struct ns_runtime *rt, struct ns_err *e)
{
	char name[32];
	const char *val;
	int i, err;
	bool in_cmd = false;

	memset(rt, 0, sizeof(*rt));
	rt->cmd = "";
	rt->argv = calloc((size_t)argc + 1, sizeof(*rt->argv));
	if (!rt->argv) {
		ns_err_set(e, "out of memory");
		return -ENOMEM;
	}
	rt->argc = 1;
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (in_cmd) {
			/* create and run: --bundle DIR, -b DIR, --bundle=DIR */
			if (rt_flag(arg, name, sizeof(name), &val) && (!strcmp(name, "bundle") || !strcmp(name, "b"))) {
				if (!val && i + 1 < argc)
					val = argv[i + 1];
				if (val)
					rt->bundle = val;
			}
			rt->argv[rt->argc++] = argv[i];
			continue;
		}
		if (!rt_flag(arg, name, sizeof(name), &val)) {
			rt->cmd = arg;
			in_cmd = true;
			rt->argv[rt->argc++] = argv[i];
			continue;
		}
		if (!strcmp(name, "runtime") || !strcmp(name, "policy")) {
			if (!val && i + 1 >= argc) {
				ns_err_set(e, "--%s: missing its value", name);
				return -EINVAL;
			}
			if (!val)
				val = argv[++i];
			if (!strcmp(name, "runtime"))
				rt->runtime = val;
			else if ((err = rt_add_policy(rt, val, "--policy", e)) < 0)
				return err;
			continue;
		}
		rt->argv[rt->argc++] = argv[i];
		if (!val && rt_takes_value(name) && i + 1 < argc)
			val = rt->argv[rt->argc++] = argv[++i];
		if (val && !strcmp(name, "log"))
			rt->log = val;
		else if (val && !strcmp(name, "log-format"))
			rt->log_format = val;
	}
	if (!rt->bundle)
		rt->bundle = ".";
	return 0;
}

/**
 * ns_runtime_conf() - read the configuration file: "runtime = PATH", "policy = ITEM, ..."
 * @f:		the file
 * @name:	its name, for messages
 * @rt:		a runtime not yet set and policy items are added; the strings
 *		live in @rt->conf_text (free with ns_runtime_free())
 * @e:		"FILE line N: ..." on failure
 *
 * One setting a line (conf.c), a policy list is separated by commas or
 * spaces. An unknown key or a malformed item refuses the file.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int ns_runtime_conf(FILE *f, const char *name, struct ns_runtime *rt, struct ns_err *e)
{
	char line[RT_CONF_LINE_MAX], where[PATH_MAX + 32];
	unsigned int n = 0;
	char *key, *val, *tok, *save, *copy;
	int r, err;

	while ((r = ns_conf_next(f, name, line, sizeof(line), &n, &key, &val, e)) > 0) {
		if (strcmp(key, "runtime") && strcmp(key, "policy")) {
			ns_err_set(e, "%s line %u: unknown key '%s' (runtime, policy)", name, n, key);
			return -EINVAL;
		}
		if (!*val) {
			ns_err_set(e, "%s line %u: %s has no value", name, n, key);
			return -EINVAL;
		}
		if (rt->n_conf >= NS_RUNTIME_MAX_POLICY + 1) {
			ns_err_set(e, "%s line %u: too many settings", name, n);
			return -E2BIG;
		}
		copy = strdup(val);
		if (!copy) {
			ns_err_set(e, "out of memory");
			return -ENOMEM;
		}
		rt->conf_text[rt->n_conf++] = copy;
		if (!strcmp(key, "runtime")) {
			if (!rt->runtime)
				rt->runtime = copy;
			continue;
		}
		snprintf(where, sizeof(where), "%s line %u: policy item", name, n);
		for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
			err = rt_add_policy(rt, tok, where, e);
			if (err)
				return err;
		}
	}
	return r;
}

/**
 * ns_runtime_free() - release what ns_runtime_parse() and ns_runtime_conf() hold
 * @rt:	the runtime
 */
void ns_runtime_free(struct ns_runtime *rt)
{
	unsigned int i;

	for (i = 0; i < rt->n_conf; i++)
		free(rt->conf_text[i]);
	free(rt->argv);
	memset(rt, 0, sizeof(*rt));
}

static bool rt_is_true(const char *v)
{
	return !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "on");
}

static bool rt_is_false(const char *v)
{
	return !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off");
}

/* The same namespace file as @path? */
static bool rt_same_ns(const struct stat *sb, const char *path)
{
	struct stat o;

	return stat(path, &o) == 0 && o.st_dev == sb->st_dev && o.st_ino == sb->st_ino;
}

/* A hook of @hooks[@stage] is `netsetup oci-hook ...`. */
static bool rt_has_hook(json_t *hooks, const char *stage)
{
	json_t *h;
	size_t i;

	json_array_foreach(json_object_get(hooks, stage), i, h) {
		const char *a1 = json_string_value(json_array_get(json_object_get(h, "args"), 1));

		if (a1 && !strcmp(a1, "oci-hook"))
			return true;
	}
	return false;
}

/*
 * Whether @c is left alone: 1 with the reason in @why, 0 to add the hooks,
 * -EINVAL for an annotation that says neither.
 */
static int rt_leave_alone(json_t *c, char *why, size_t len, struct ns_err *e)
{
	json_t *ann = json_object_get(c, "annotations"), *n;
	const char *v, *type, *path = NULL;
	bool has_net = false;
	struct stat sb;
	char state[PATH_MAX];
	size_t i;

	v = json_string_value(json_object_get(ann, "io.sandnet.enable"));
	if (v && rt_is_false(v)) {
		snprintf(why, len, "io.sandnet.enable=%s", v);
		return 1;
	}
	if (v && !rt_is_true(v)) {
		ns_err_set(e, "annotation io.sandnet.enable '%s': expected true or false", v);
		return -EINVAL;
	}
	v = json_string_value(json_object_get(ann, "io.kubernetes.cri.container-type"));
	if (!v)
		v = json_string_value(json_object_get(ann, "io.kubernetes.cri-o.ContainerType"));
	if (v && !strcmp(v, "container")) {
		snprintf(why, len, "a container of a pod: the pod's sandbox holds its network");
		return 1;
	}
	json_array_foreach(json_object_get(json_object_get(c, "linux"), "namespaces"), i, n) {
		type = json_string_value(json_object_get(n, "type"));
		if (type && !strcmp(type, "network")) {
			has_net = true;
			path = json_string_value(json_object_get(n, "path"));
		}
	}
	if (!has_net) {
		snprintf(why, len, "no network namespace of its own");
		return 1;
	}
	if (path && path[0]) {
		if (stat(path, &sb) < 0) {
			snprintf(why, len, "network namespace %s: %s (the runtime will say)", path, strerror(errno));
			return 1;
		}
		if (rt_same_ns(&sb, "/proc/1/ns/net") || rt_same_ns(&sb, "/proc/self/ns/net")) {
			snprintf(why, len, "network namespace %s is the host's", path);
			return 1;
		}
		if (ns_state_path(sb.st_dev, sb.st_ino, state, sizeof(state)) == 0 && access(state, F_OK) == 0) {
			snprintf(why, len, "network namespace %s is served already (%s)", path, state);
			return 1;
		}
	}
	if (rt_has_hook(json_object_get(c, "hooks"), "createRuntime") ||
	    rt_has_hook(json_object_get(c, "hooks"), "prestart")) {
		snprintf(why, len, "its hooks run netsetup oci-hook already");
		return 1;
	}
	return 0;
}

/* One hook object: path, args, env when SANDNET_STATE_DIR is set, timeout. */
static json_t *rt_hook(const char *netsetup, const char *const *args, unsigned int n, int timeout)
{
	const char *dir = getenv("SANDNET_STATE_DIR");
	json_t *h = json_object(), *a = json_array();
	unsigned int i;

	if (!h || !a) {
		json_decref(h);
		json_decref(a);
		return NULL;
	}
	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(args[i]));
	json_object_set_new(h, "path", json_string(netsetup));
	json_object_set_new(h, "args", a);
	if (dir && dir[0]) {
		/* a runtime may run hooks with an empty environment (crun does) */
		const char *path = getenv("PATH") ? getenv("PATH") : "/usr/sbin:/usr/bin:/sbin:/bin";
		char *kv = NULL, *pv = NULL;
		json_t *env = json_array();

		/* asprintf() leaves the pointer undefined when it fails */
		if (asprintf(&kv, "SANDNET_STATE_DIR=%s", dir) < 0)
			kv = NULL;
		if (asprintf(&pv, "PATH=%s", path) < 0)
			pv = NULL;
		if (kv && pv && env) {
			json_array_append_new(env, json_string(kv));
			json_array_append_new(env, json_string(pv));
		}
		json_object_set_new(h, "env", env);
		free(kv);
		free(pv);
	}
	json_object_set_new(h, "timeout", json_integer(timeout));
	return h;
}

/* Append @h to hooks.@stage of @c. */
static int rt_append(json_t *c, const char *stage, json_t *h)
{
	json_t *hooks = json_object_get(c, "hooks"), *list;

	if (!h)
		return -ENOMEM;
	if (!json_is_object(hooks)) {
		hooks = json_object();
		if (!hooks || json_object_set_new(c, "hooks", hooks) < 0) {
			json_decref(h);
			return -ENOMEM;
		}
	}
	list = json_object_get(hooks, stage);
	if (!json_is_array(list)) {
		list = json_array();
		if (!list || json_object_set_new(hooks, stage, list) < 0) {
			json_decref(h);
			return -ENOMEM;
		}
	}
	return json_array_append_new(list, h) < 0 ? -ENOMEM : 0;
}

/* Write @c over @path: a temporary file in the same folder, then rename. */
static int rt_write(json_t *c, const char *path, mode_t mode, struct ns_err *e)
{
	char tmp[PATH_MAX];
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.sandnet-XXXXXX", path) >= (int)sizeof(tmp)) {
		ns_err_set(e, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		ns_err_set(e, "%s: cannot write next to it: %s", path, strerror(errno));
		return err;
	}
	if (fchmod(fd, mode & 07777) < 0 || json_dumpfd(c, fd, JSON_COMPACT) < 0 || fsync(fd) < 0)
		err = errno ? -errno : -EIO;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		unlink(tmp);
		ns_err_set(e, "%s: cannot write it: %s", path, strerror(-err));
	}
	return err;
}

/**
 * ns_runtime_inject() - add sandnet's hooks to a bundle's config.json
 * @config:	the file
 * @rt:		its policy items go to the create hook
 * @netsetup:	the hooks' program (absolute)
 * @why:	why the file was left alone, when the result is 0
 * @why_len:	size of @why
 * @e:		what was wrong, on failure
 *
 * Return: 1 when the hooks were added, 0 when the file is left as it is
 * (@why says why), or negative errno: the file cannot be read, is not a
 * JSON object, says io.sandnet.enable neither true nor false, or cannot be
 * written back.
 */
int ns_runtime_inject(const char *config, const struct ns_runtime *rt, const char *netsetup, char *why,
		      size_t why_len, struct ns_err *e)
{
	const char *args[4 + 2 * NS_RUNTIME_MAX_POLICY + 1] = { "netsetup", "oci-hook", "create", "--none-ok" };
	const char *post[] = { "netsetup", "oci-hook", "poststop" };
	unsigned int n = 4, i;
	json_error_t jerr;
	struct stat sb;
	json_t *c;
	int err;

	why[0] = '\0';
	if (stat(config, &sb) < 0) {
		err = -errno;
		ns_err_set(e, "%s: %s (the bundle is --bundle DIR, or the current folder)", config, strerror(errno));
		return err;
	}
	if (!S_ISREG(sb.st_mode) || sb.st_size > RT_CONFIG_MAX_BYTES) {
		ns_err_set(e, "%s: not a regular file of at most %d bytes", config, RT_CONFIG_MAX_BYTES);
		return -EINVAL;
	}
	c = json_load_file(config, 0, &jerr);
	if (!c || !json_is_object(c)) {
		ns_err_set(e, "%s: line %d column %d: %s", config, jerr.line, jerr.column,
			   c ? "not a JSON object" : jerr.text);
		json_decref(c);
		return -EINVAL;
	}
	err = rt_leave_alone(c, why, why_len, e);
	if (err) {
		json_decref(c);
		return err < 0 ? err : 0;
	}
	if (rt->n_policy)
		args[n++] = "--";
	for (i = 0; i < rt->n_policy; i++)
		ns_policy_item_parse(rt->policy[i], &args[n + 2 * i], &args[n + 2 * i + 1]);
	n += 2 * rt->n_policy;
	err = rt_append(c, "createRuntime", rt_hook(netsetup, args, n, RT_HOOK_CREATE_TIMEOUT));
	if (!err)
		err = rt_append(c, "poststop", rt_hook(netsetup, post, 3, RT_HOOK_POSTSTOP_TIMEOUT));
	if (err)
		ns_err_set(e, "%s: out of memory", config);
	else
		err = rt_write(c, config, sb.st_mode, e);
	json_decref(c);
	return err < 0 ? err : 1;
}

/* A refusal: on stderr, and in --log in its format, where a shim looks for a runtime's last error. */
static void rt_error(const struct ns_runtime *rt, const char *msg)
{
	char full[NS_ERR_MAX + 32], stamp[40];
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	snprintf(full, sizeof(full), RT_NAME ": %s", msg);
	fprintf(stderr, "%s\n", full);
	if (!rt->log || !rt->log[0] || !(f = fopen(rt->log, "ae")))
		return;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* runc's two formats (logrus): one JSON object a line, or key=value text */
	if (rt->log_format && !strcmp(rt->log_format, "json")) {
		fputs("{\"level\":\"error\",\"msg\":", f);
		out_json_str(f, full);
		fprintf(f, ",\"time\":\"%s\"}\n", stamp);
	} else {
		fprintf(f, "time=\"%s\" level=error msg=", stamp);
		out_json_str(f, full);
		fputc('\n', f);
	}
	fclose(f);
}

/**
 * ns_runtime_main() - sandnet-runtime: add the hooks on create and run, then become the real runtime
 * @argc:	argument count
 * @argv:	the runtime's command line
 *
 * Return: only on failure (the real runtime replaces the process
 * otherwise): 1, with the reason on stderr and in --log.
 */
int ns_runtime_main(int argc, char **argv)
{
	const char *conf_path = getenv("SANDNET_RUNTIME_CONFIG"), *name;
	char real[PATH_MAX], self[PATH_MAX], a[PATH_MAX], b[PATH_MAX], why[PATH_MAX + 64];
	char config[PATH_MAX];
	struct ns_runtime rt;
	struct ns_err e = { .text = "" };
	ssize_t n;
	FILE *f;
	int err;

	/* its own, not runc's: runc --version is runc's, as ever */
	if (argc == 2 && !strcmp(argv[1], "--sandnet-version")) {
		ns_version_print(stdout, "sandnet-runtime");
		return 0;
	}
	err = ns_runtime_parse(argc, argv, &rt, &e);
	if (err)
		goto fail;
	if (!conf_path || !conf_path[0])
		conf_path = RT_CONFIG;
	f = fopen(conf_path, "re");
	if (f) {
		err = ns_runtime_conf(f, conf_path, &rt, &e);
		fclose(f);
		if (err)
			goto fail;
	} else if (errno != ENOENT || getenv("SANDNET_RUNTIME_CONFIG")) {
		err = -errno;
		ns_err_set(&e, "%s: %s", conf_path, strerror(errno));
		goto fail;
	}
	if (!rt.runtime && getenv("SANDNET_RUNTIME") && getenv("SANDNET_RUNTIME")[0])
		rt.runtime = getenv("SANDNET_RUNTIME");

	/* The real runtime, never ourselves. */
	name = rt.runtime ? rt.runtime : "runc";
	err = ns_datapath_find(name, RT_HINT, real, sizeof(real), &e);
	if (err == -ENOENT && !rt.runtime)
		err = ns_datapath_find("crun", RT_HINT, real, sizeof(real), &e);
	if (err) {
		if (err == -ENOENT && !rt.runtime)
			ns_err_set(&e, "no OCI runtime: neither runc nor crun is next to netsetup or in PATH; %s",
				   RT_HINT);
		goto fail;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		err = -EIO;
		ns_err_set(&e, "/proc/self/exe: %s", n < 0 ? strerror(errno) : "empty");
		goto fail;
	}
	self[n] = '\0';
	if (realpath(real, a) && realpath(self, b) && !strcmp(a, b)) {
		err = -ELOOP;
		ns_err_set(&e, "the OCI runtime %s is sandnet-runtime itself; %s", real, RT_HINT);
		goto fail;
	}

	if (!strcmp(rt.cmd, "create") || !strcmp(rt.cmd, "run")) {
		if (snprintf(config, sizeof(config), "%s/config.json", rt.bundle) >= (int)sizeof(config)) {
			err = -ENAMETOOLONG;
			ns_err_set(&e, "--bundle %s: path too long", rt.bundle);
			goto fail;
		}
		err = ns_runtime_inject(config, &rt, self, why, sizeof(why), &e);
		if (err < 0)
			goto fail;
	}
	rt.argv[0] = real;
	execv(real, rt.argv);
	err = -errno;
	ns_err_set(&e, "cannot execute %s: %s; %s", real, strerror(errno), RT_HINT);
fail:
	rt_error(&rt, e.text[0] ? e.text : "failed");
	ns_runtime_free(&rt);
	return 1;
}
