// SPDX-License-Identifier: MIT
/*
 * cni.c - netsetup as a chained CNI plugin (CNI spec 1.0)
 *
 * Theory of operation: a runtime executes the plugin with no arguments, the
 * CNI_* variables in the environment and the network configuration (JSON) on
 * stdin; the plugin writes one JSON document on stdout and exits 0, or a CNI
 * error object ({"cniVersion", "code", "msg", "details"}) and exits 1.
 * netsetup is in plugin mode when it is called as "sandnet" or "sandnet-cni"
 * (the name the runtime finds in CNI_PATH, from the configuration's "type"),
 * or when CNI_COMMAND is set and there is no argument (ns_cni_mode()).
 *
 * sandnet is chained after the plugin that made the interface (ptp, bridge,
 * ...), so ADD requires prevResult:
 *   ADD    checks everything, then runs the datapath exactly as `netsetup run`
 *          does, but detached (orch/attach.c): it outlives the plugin, its
 *          pid, start time and the owner "cni:CONTAINERID:IFNAME" go into the
 *          namespace's state file. Prints prevResult (cniVersion set to the
 *          configuration's): sandnet adds no interface and no address.
 *   DEL    finds the state file by owner, stops the datapath and gives the
 *          addresses back (giveback.c). Nothing attached is success: DEL must
 *          be idempotent. Prints nothing.
 *   CHECK  (0.4.0 and later) the state file exists, names CNI_NETNS, and its
 *          datapath's supervisor runs and does not say "dark" (a crash
 *          loop: the reason is CHECK's error).
 *   VERSION prints the versions we speak.
 *
 * The plugin's own configuration keys (all optional) are documented in
 * docs/runtime.md: "datapath", "datapathArgs", "publish", "forward", "policy"
 * ("egress-deny=RULE"... in order: docs/face.md), "gso", "channels", "user",
 * "face" (false: no container face, the container stays dark),
 * "tcpCongestionControl", "tcpEcn", "tcpPacing" (the network side's TCP:
 * --tcp-cc, --tcp-ecn, --tcp-pacing of datapath(8)), "stateDir"
 * (instead of $SANDNET_STATE_DIR or /run/sandnet). Every malformed
 * document, wrong type or missing field is a CNI error naming the field,
 * with the spec's well-known codes (1 version, 4 environment, 6 decoding,
 * 7 configuration) and 100 and up for our own failures.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "netsetup/front/front.h"

#define CNI_STDIN_MAX_BYTES	(1 << 20)
#define CNI_MAX_ARGS		64
#define CNI_DEFAULT_VERSION	"1.0.0"

enum {
	CNI_ERR_VERSION = 1,		/* incompatible CNI version */
	CNI_ERR_FIELD = 2,		/* unsupported field in the network configuration */
	CNI_ERR_ENV = 4,		/* invalid necessary environment variables */
	CNI_ERR_IO = 5,			/* I/O failure */
	CNI_ERR_DECODE = 6,		/* failed to decode content */
	CNI_ERR_CONFIG = 7,		/* invalid network configuration */
	CNI_ERR_ATTACH = 100,		/* sandnet: attaching failed */
	CNI_ERR_NOT_ATTACHED = 101,	/* sandnet: CHECK found nothing attached */
	CNI_ERR_DEAD = 102,		/* sandnet: CHECK found the datapath dead */
	CNI_ERR_DETACH = 103,		/* sandnet: giving back failed */
};

static const char *const cni_versions[] = { "0.3.0", "0.3.1", "0.4.0", "1.0.0" };

struct cni {
	FILE *out;
	const char *command;
	const char *container_id;
	const char *netns;
	const char *ifname;
	const char *version;		/* the configuration's cniVersion, once known */
	json_t *conf;
	char owner[NS_OWNER_MAX];
};

static int cni_error(struct cni *c, int code, const char *msg, const char *details)
{
	json_t *o = json_pack("{s:s, s:i, s:s, s:s}", "cniVersion",
			      c->version ? c->version : CNI_DEFAULT_VERSION, "code", code,
			      "msg", msg, "details", details ? details : "");

	if (o) {
		json_dumpf(o, c->out, JSON_INDENT(2));
		fputc('\n', c->out);
		json_decref(o);
	}
	fprintf(stderr, "netsetup (CNI %s): %s%s%s\n", c->command ? c->command : "?", msg,
		details && details[0] ? ": " : "", details ? details : "");
	return 1;
}

/**
 * ns_cni_mode() - is this process a CNI plugin invocation?
 * @argc:	from main()
 * @argv:	from main()
 *
 * Return: true when called as "sandnet" or "sandnet-cni", or with
 * CNI_COMMAND set and no argument.
 */
bool ns_cni_mode(int argc, char **argv)
{
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;

	base = base ? base + 1 : argc > 0 ? argv[0] : "";
	if (!strcmp(base, "sandnet") || !strcmp(base, "sandnet-cni"))
		return true;
	return argc == 1 && getenv("CNI_COMMAND");
}

static bool version_known(const char *v)
{
	unsigned int i;

	for (i = 0; i < sizeof(cni_versions) / sizeof(cni_versions[0]); i++)
		if (!strcmp(v, cni_versions[i]))
			return true;
	return false;
}

static int cni_version_cmd(struct cni *c)
{
	json_t *o = json_pack("{s:s, s:[s,s,s,s]}", "cniVersion", CNI_DEFAULT_VERSION,
			      "supportedVersions", cni_versions[0], cni_versions[1],
			      cni_versions[2], cni_versions[3]);

	if (!o)
		return cni_error(c, CNI_ERR_IO, "out of memory", NULL);
	json_dumpf(o, c->out, JSON_INDENT(2));
	fputc('\n', c->out);
	json_decref(o);
	return 0;
}

/* Container ids: the spec's [a-zA-Z0-9][a-zA-Z0-9_.-]*; they go into the state file. */
static bool container_id_valid(const char *id)
{
	size_t i, n = strlen(id);

	if (n == 0 || n > NS_OWNER_MAX - 4 - IFNAMSIZ - 1)
		return false;
	for (i = 0; i < n; i++) {
		char ch = id[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9');

		if (!alnum && (i == 0 || (ch != '_' && ch != '.' && ch != '-')))
			return false;
	}
	return true;
}

static int cni_env(struct cni *c, bool need_netns)
{
	char why[160];

	c->container_id = getenv("CNI_CONTAINERID");
	c->netns = getenv("CNI_NETNS");
	c->ifname = getenv("CNI_IFNAME");
	if (!c->container_id || !container_id_valid(c->container_id)) {
		snprintf(why, sizeof(why), "CNI_CONTAINERID '%s': %s", c->container_id ? c->container_id : "",
			 c->container_id ? "not [a-zA-Z0-9][a-zA-Z0-9_.-]*" : "not set");
		return cni_error(c, CNI_ERR_ENV, "invalid environment variables", why);
	}
	if (!c->ifname || !c->ifname[0] || strlen(c->ifname) >= IFNAMSIZ || strchr(c->ifname, '/') ||
	    strchr(c->ifname, ' ') || strchr(c->ifname, ':')) {
		snprintf(why, sizeof(why), "CNI_IFNAME '%s': %s", c->ifname ? c->ifname : "",
			 c->ifname ? "not an interface name" : "not set");
		return cni_error(c, CNI_ERR_ENV, "invalid environment variables", why);
	}
	if (need_netns && (!c->netns || c->netns[0] != '/'))
		return cni_error(c, CNI_ERR_ENV, "invalid environment variables",
				 c->netns ? "CNI_NETNS: not an absolute path" : "CNI_NETNS: not set");
	snprintf(c->owner, sizeof(c->owner), "cni:%s:%s", c->container_id, c->ifname);
	return 0;
}

/* A string field, optional: *vp stays as it was when absent. */
static int conf_string(struct cni *c, const char *key, const char **vp)
{
	json_t *v = json_object_get(c->conf, key);
	char why[128];

	if (!v)
		return 0;
	if (!json_is_string(v) || !json_string_value(v)[0]) {
		snprintf(why, sizeof(why), "\"%s\": expected a non-empty string", key);
		return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", why);
	}
	*vp = json_string_value(v);
	return 0;
}

/* An array of strings, optional; each element is pushed as [flag] VALUE. */
static int conf_strings(struct cni *c, const char *key, const char *flag, char **argv,
			unsigned int *argc)
{
	json_t *arr = json_object_get(c->conf, key), *v;
	char why[128];
	size_t i;

	if (!arr)
		return 0;
	if (!json_is_array(arr))
		goto bad;
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v) || !json_string_value(v)[0])
			goto bad;
		if (*argc + 2 >= CNI_MAX_ARGS) {
			snprintf(why, sizeof(why), "\"%s\": more than %d arguments", key, CNI_MAX_ARGS / 2);
			return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", why);
		}
		if (flag)
			argv[(*argc)++] = (char *)flag;
		argv[(*argc)++] = (char *)json_string_value(v);
	}
	return 0;
bad:
	snprintf(why, sizeof(why), "\"%s\": expected an array of non-empty strings", key);
	return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", why);
}

/*
 * "tcpCongestionControl": "bbr", "tcpEcn": "on", "tcpPacing": false into the
 * datapath's --tcp-cc, --tcp-ecn and --tcp-pacing for the network side's
 * connections (docs/tcp.md).
 */
static int conf_tcp(struct cni *c, char **argv, unsigned int *argc)
{
	static const char *const keys[] = { "tcpCongestionControl", "tcpEcn" };
	static const char *const opts[] = { "tcp-cc", "tcp-ecn" };
	static const char *const flags[] = { "--tcp-cc", "--tcp-ecn" };
	json_t *pacing = json_object_get(c->conf, "tcpPacing");
	struct ns_err e = { .text = "" };
	unsigned int i;
	char what[32];
	int err;

	for (i = 0; i < 2; i++) {
		const char *v = NULL;

		if ((err = conf_string(c, keys[i], &v)))
			return err;
		if (!v)
			continue;
		snprintf(what, sizeof(what), "\"%s\"", keys[i]);
		if (ns_tcp_setting_check(what, opts[i], v, &e))
			return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", e.text);
		if (*argc + 2 >= CNI_MAX_ARGS)
			goto full;
		argv[(*argc)++] = (char *)flags[i];
		argv[(*argc)++] = (char *)v;
	}
	if (pacing) {
		if (!json_is_boolean(pacing))
			return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration",
					 "\"tcpPacing\": expected true or false");
		if (*argc + 2 >= CNI_MAX_ARGS)
			goto full;
		argv[(*argc)++] = "--tcp-pacing";
		argv[(*argc)++] = json_is_true(pacing) ? "on" : "off";
	}
	return 0;
full:
	snprintf(what, sizeof(what), "more than %d arguments", CNI_MAX_ARGS);
	return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", what);
}

/* "policy": ["egress-deny=RULE", ...] into datapath flags, in order. */
static int conf_policy(struct cni *c, char **argv, unsigned int *argc)
{
	json_t *arr = json_object_get(c->conf, "policy"), *v;
	const char *flag, *rule;
	char why[256];
	size_t i;

	if (!arr)
		return 0;
	if (!json_is_array(arr)) {
		snprintf(why, sizeof(why), "\"policy\": expected an array of %s", NS_POLICY_ITEM_FORMS);
		return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", why);
	}
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v) || ns_policy_item_parse(json_string_value(v), &flag, &rule) < 0) {
			snprintf(why, sizeof(why), "\"policy\" item %zu%s%.80s%s: expected %s", i,
				 json_is_string(v) ? " '" : "", json_is_string(v) ? json_string_value(v) : "",
				 json_is_string(v) ? "'" : "", NS_POLICY_ITEM_FORMS);
			return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", why);
		}
		if (*argc + 2 >= CNI_MAX_ARGS) {
			snprintf(why, sizeof(why), "\"policy\": more than %d arguments", CNI_MAX_ARGS / 2);
			return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", why);
		}
		argv[(*argc)++] = (char *)flag;
		argv[(*argc)++] = (char *)rule;
	}
	return 0;
}

/*
 * "channels": 2, "shards": 2: integers, each checked as the command line's
 * --channels and --shards are (opts.c's ns_opt_set()), naming the key.
 */
static int conf_count(struct cni *c, const char *key, enum ns_opt opt, struct ns_opts *o)
{
	json_t *v = json_object_get(c->conf, key);
	bool integer = json_is_integer(v) && json_integer_value(v) >= 0;
	struct ns_err e = { .text = "" };
	char what[32], num[32];

	if (!v)
		return 0;
	snprintf(what, sizeof(what), "\"%s\"", key);
	if (integer)
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	if (ns_opt_set(o, opt, what, integer ? num : NULL, &e))
		return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", e.text);
	return 0;
}

/*
 * An ADD's network configuration, read into the options of the attach and
 * the datapath's command line (@argv, its strings the configuration's own),
 * before anything is done: no environment needed, so a configuration's
 * error is reported whatever the environment, and nothing is half done.
 */
static int cni_add_config(struct cni *c, struct ns_opts *o, char **argv)
{
	const char *datapath = "datapath", *gso = NULL, *user = NULL;
	json_t *prev = json_object_get(c->conf, "prevResult"), *face;
	struct ns_err e = { .text = "" };
	unsigned int n = 0;
	int err;

	if (!prev || !json_is_object(prev))
		return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration",
				 prev ? "\"prevResult\": expected an object"
				      : "\"prevResult\" missing: sandnet is a chained plugin, list it after the plugin that makes the interface (ptp, bridge, ...)");
	ns_opts_init(o);
	o->cmd = NS_CMD_RUN;
	if ((err = conf_string(c, "datapath", &datapath)) || (err = conf_string(c, "gso", &gso)) ||
	    (err = conf_string(c, "user", &user)))
		return err;
	argv[n++] = (char *)datapath;
	if ((err = conf_strings(c, "datapathArgs", NULL, argv, &n)) || (err = conf_tcp(c, argv, &n)) ||
	    (err = conf_strings(c, "publish", "--publish", argv, &n)) ||
	    (err = conf_strings(c, "forward", "--forward", argv, &n)) || (err = conf_policy(c, argv, &n)))
		return err;
	if (gso && ns_opt_set(o, NS_OPT_GSO, "\"gso\"", gso, &e))
		return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", e.text);
	face = json_object_get(c->conf, "face");
	if (face) {
		if (!json_is_boolean(face))
			return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration",
					 "\"face\": expected true or false");
		o->no_face = !json_is_true(face);
	}
	if ((err = conf_count(c, "channels", NS_OPT_CHANNELS, o)) ||
	    (err = conf_count(c, "shards", NS_OPT_SHARDS, o)))
		return err;
	if (ns_shards_check(o, "\"channels\"", "\"shards\"", &e))
		return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration", e.text);
	o->user = user;
	o->datapath_hint = "set \"datapath\" in the network configuration";
	o->child_argv = argv;
	return 0;
}

/* ADD, its configuration read (cni_add_config()) and its environment too */
static int cni_add(struct cni *c, struct ns_opts *o)
{
	json_t *prev = json_object_get(c->conf, "prevResult"), *res;
	struct ns_err e = { .text = "" };
	pid_t pid = 0;
	int err;

	o->netns_path = c->netns;
	o->ifaces[0] = c->ifname;
	o->n_ifaces = 1;
	o->detach_child = true;
	o->owner = c->owner;
	o->child_pidp = &pid;
	err = ns_attach(o, &e);
	if (err < 0)
		return cni_error(c, CNI_ERR_ATTACH, "sandnet: attach failed", e.text);

	/* sandnet adds nothing: the result is the previous plugin's, in our version. */
	res = json_deep_copy(prev);
	if (!res || json_object_set_new(res, "cniVersion", json_string(c->version))) {
		json_decref(res);
		return cni_error(c, CNI_ERR_IO, "out of memory", NULL);
	}
	json_dumpf(res, c->out, JSON_INDENT(2));
	fputc('\n', c->out);
	json_decref(res);
	fprintf(stderr, "netsetup (CNI ADD): %s: datapath pid %d serves %s in %s\n", c->owner,
		(int)pid, c->ifname, c->netns);
	return 0;
}

static int cni_del(struct cni *c)
{
	char path[PATH_MAX];
	struct ns_err e = { .text = "" };
	struct ns_state st;
	int err;

	err = ns_state_find_owner(c->owner, path, sizeof(path), &st, &e);
	if (err == -ENOENT)
		return 0;	/* DEL is idempotent: nothing attached is done */
	if (err)
		return cni_error(c, CNI_ERR_DETACH, "sandnet: cannot read the state", e.text);
	err = ns_give_back(path, &st, c->netns, true, &e);
	ns_state_free(&st);
	if (err)
		return cni_error(c, CNI_ERR_DETACH, "sandnet: giving the interface back failed", e.text);
	return 0;
}

static int cni_check(struct cni *c)
{
	struct proto_status status;
	struct ns_netns ns = { .fd = -1 };
	char path[PATH_MAX], why[PATH_MAX + 128];
	struct ns_err e = { .text = "" };
	struct ns_state st;
	int err, rc = 0;

	if (!strncmp(c->version, "0.3.", 4))
		return cni_error(c, CNI_ERR_VERSION, "incompatible CNI version",
				 "CHECK needs cniVersion 0.4.0 or later");
	if (!json_is_object(json_object_get(c->conf, "prevResult")))
		return cni_error(c, CNI_ERR_CONFIG, "invalid network configuration",
				 "\"prevResult\" missing or not an object");
	err = ns_state_find_owner(c->owner, path, sizeof(path), &st, &e);
	if (err)
		return cni_error(c, CNI_ERR_NOT_ATTACHED, "sandnet: not attached", e.text);
	if (ns_netns_open(c->netns, 0, false, &ns, &e) < 0) {
		rc = cni_error(c, CNI_ERR_NOT_ATTACHED, "sandnet: CNI_NETNS cannot be opened", e.text);
	} else if ((uint64_t)ns.dev != st.dev || (uint64_t)ns.ino != st.ino) {
		snprintf(why, sizeof(why), "state file %s names another namespace than %s", path, c->netns);
		rc = cni_error(c, CNI_ERR_NOT_ATTACHED, "sandnet: not attached", why);
	} else if (!ns_datapath_alive(&st)) {
		snprintf(why, sizeof(why), "the datapath's supervisor (pid %d) is not running: the container is "
			 "dark until DEL (its log: %s.log)", (int)st.datapath_pid, path);
		rc = cni_error(c, CNI_ERR_DEAD, "sandnet: the datapath is dead", why);
	} else if (ns_status_read(path, &status) == 0 && status.state == PROTO_DP_DARK) {
		/* a crash loop: the supervisor lives, keeps the fence and starts nothing */
		snprintf(why, sizeof(why), "the container is dark: %.400s (its log: %.3000s.log)", status.reason, path);
		rc = cni_error(c, CNI_ERR_DEAD, "sandnet: the datapath is dead", why);
	}
	ns_netns_close(&ns);
	ns_state_free(&st);
	return rc;
}

static int read_all(FILE *in, char **bufp, size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *grown;
	size_t n;

	if (!buf)
		return -ENOMEM;
	while ((n = fread(buf + len, 1, cap - len, in)) > 0) {
		len += n;
		if (len == cap) {
			if (cap >= CNI_STDIN_MAX_BYTES) {
				free(buf);
				return -E2BIG;
			}
			grown = realloc(buf, cap * 2);
			if (!grown) {
				free(buf);
				return -ENOMEM;
			}
			buf = grown;
			cap *= 2;
		}
	}
	if (ferror(in)) {
		free(buf);
		return -EIO;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

/**
 * ns_cni_main() - run one CNI command
 * @in:		the network configuration (stdin)
 * @out:	the result or the error object (stdout)
 *
 * Return: the exit status: 0 success, 1 failure (a CNI error is on @out).
 */
int ns_cni_main(FILE *in, FILE *out)
{
	struct cni c = { .out = out, .command = getenv("CNI_COMMAND") };
	char why[256], *buf = NULL;
	json_error_t jerr;
	json_t *v;
	size_t len;
	int rc;

	if (!c.command || !c.command[0])
		return cni_error(&c, CNI_ERR_ENV, "invalid environment variables",
				 "CNI_COMMAND: not set (ADD, DEL, CHECK or VERSION)");
	rc = read_all(in, &buf, &len);
	if (rc)
		return cni_error(&c, CNI_ERR_IO, "cannot read the network configuration on stdin",
				 rc == -E2BIG ? "larger than 1 MiB" : strerror(-rc));
	c.conf = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	free(buf);
	if (!c.conf && !strcmp(c.command, "VERSION") && len == 0)
		return cni_version_cmd(&c);
	if (!c.conf) {
		snprintf(why, sizeof(why), "line %d column %d: %s", jerr.line, jerr.column, jerr.text);
		return cni_error(&c, CNI_ERR_DECODE, "failed to decode the network configuration", why);
	}
	rc = 0;
	if (!json_is_object(c.conf)) {
		rc = cni_error(&c, CNI_ERR_DECODE, "failed to decode the network configuration",
			       "not a JSON object");
		goto out;
	}
	v = json_object_get(c.conf, "cniVersion");
	if (!json_is_string(v)) {
		rc = cni_error(&c, CNI_ERR_CONFIG, "invalid network configuration",
			       v ? "\"cniVersion\": expected a string" : "\"cniVersion\" missing");
		goto out;
	}
	if (!version_known(json_string_value(v))) {
		snprintf(why, sizeof(why), "cniVersion \"%.64s\": we speak 0.3.0, 0.3.1, 0.4.0, 1.0.0",
			 json_string_value(v));
		rc = cni_error(&c, CNI_ERR_VERSION, "incompatible CNI version", why);
		goto out;
	}
	c.version = json_string_value(v);
	if (!strcmp(c.command, "VERSION")) {
		rc = cni_version_cmd(&c);
		goto out;
	}
	v = json_object_get(c.conf, "name");
	if (!json_is_string(v) || !json_string_value(v)[0]) {
		rc = cni_error(&c, CNI_ERR_CONFIG, "invalid network configuration",
			       v ? "\"name\": expected a non-empty string" : "\"name\" missing");
		goto out;
	}
	/*
	 * "stateDir": where ADD, CHECK and DEL keep the state. A runtime may
	 * start DEL with another environment than ADD (podman's cleanup is
	 * started by conmon, which passes only a few variables), so
	 * SANDNET_STATE_DIR alone cannot be relied on; the configuration is
	 * the same for all three.
	 */
	v = json_object_get(c.conf, "stateDir");
	if (v) {
		if (!json_is_string(v) || json_string_value(v)[0] != '/' || strlen(json_string_value(v)) > 200) {
			rc = cni_error(&c, CNI_ERR_CONFIG, "invalid network configuration",
				       "\"stateDir\": expected an absolute path of at most 200 characters");
			goto out;
		}
		setenv("SANDNET_STATE_DIR", json_string_value(v), 1);
	}
	if (!strcmp(c.command, "ADD")) {
		char *argv[CNI_MAX_ARGS + 1] = { NULL };
		struct ns_opts o;

		rc = cni_add_config(&c, &o, argv) ?: cni_env(&c, true) ?: cni_add(&c, &o);
	} else if (!strcmp(c.command, "DEL")) {
		rc = cni_env(&c, false) ?: cni_del(&c);
	} else if (!strcmp(c.command, "CHECK")) {
		rc = cni_env(&c, true) ?: cni_check(&c);
	} else {
		snprintf(why, sizeof(why), "CNI_COMMAND '%.32s': expected ADD, DEL, CHECK or VERSION",
			 c.command);
		rc = cni_error(&c, CNI_ERR_ENV, "invalid environment variables", why);
	}
out:
	json_decref(c.conf);
	return rc;
}
