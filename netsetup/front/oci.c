// SPDX-License-Identifier: MIT
/*
 * oci.c - `netsetup oci-hook`: attach a container from an OCI runtime hook
 *
 * Theory of operation: an OCI runtime (crun, runc) runs each hook of the
 * bundle's config.json with the container's state JSON on stdin
 * ({"ociVersion", "id", "status", "pid", "bundle", "annotations"}):
 *
 *   create    (a createRuntime hook: the namespaces exist, the container
 *             process waits) attaches the container's network namespace to
 *             a datapath it starts detached, exactly as the CNI plugin does
 *             (orch/attach.c; owner "oci:ID" in the state file). The
 *             namespace is the path config.json's linux.namespaces gives for
 *             "network" when there is one (it outlives the container, so that
 *             poststop can give back), else /proc/PID/ns/net.
 *   poststop  finds the state file by owner, stops the datapath and gives
 *             the addresses back when the namespace still exists
 *             (dpproc.c); nothing attached is success.
 * The stage is the first argument, or else taken from "status" ("creating"
 * or "created": create; "stopped": poststop).
 *
 * Publish and forward rules come from --publish/--forward, then from the
 * annotations "sandnet.publish" and "sandnet.forward" (comma-separated
 * datapath SPECs), of the state or else of config.json; policy rules from
 * the datapath arguments after "--", then from the annotation
 * "sandnet.policy" ("egress-deny=RULE,ingress-deny=RULE", in order: the first
 * match wins, docs/face.md); the container face
 * is on unless --face off or the annotation "sandnet.face" says "off". The
 * annotations "sandnet.tcp-cc" and "sandnet.tcp-ecn" (comma-separated
 * VALUE or LINK=VALUE) and "sandnet.tcp-pacing" (on or off) become the
 * datapath's --tcp-cc, --tcp-ecn and --tcp-pacing. A hook that fails
 * exits non-zero with one message on stderr; the runtime then fails the
 * container's creation. With --none-ok (sandnet-runtime adds it, runtime.c)
 * a namespace with no link but loopback (Docker's --network none) is left
 * alone and the hook succeeds: there is no network to serve or to guard.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "netsetup/front/front.h"

#define OCI_MAX_ARGS	96
#define OCI_STATE_MAX_BYTES (1 << 20)
#define OCI_LIST_ANNOTATIONS 5

static const char oci_usage[] =
	"usage: netsetup oci-hook [create|poststop] [--datapath PATH] [--gso auto|hw|sw|off]\n"
	"                         [--channels N] [--shards N|auto] [--iface NAME]... [--user USER] [--face on|off]\n"
	"                         [--none-ok]\n"
	"                         [--publish SPEC]... [--forward SPEC]... [-- DATAPATH_ARGS...]\n"
	"  reads the OCI state JSON on stdin\n";

struct oci {
	const char *stage;
	const char *datapath;
	bool none_ok;			/* --none-ok: only loopback is not a failure */
	char *argv[OCI_MAX_ARGS + 1];
	unsigned int argc;
	struct ns_opts o;
	json_t *state;
	json_t *config;
	char *annot_copy[OCI_LIST_ANNOTATIONS];	/* strtok'd copies of the list annotations */
};

static int push(struct oci *h, const char *flag, const char *val, struct ns_err *e)
{
	if (h->argc + 2 >= OCI_MAX_ARGS) {
		ns_err_set(e, "more than %d datapath arguments", OCI_MAX_ARGS);
		return -E2BIG;
	}
	if (flag)
		h->argv[h->argc++] = (char *)flag;
	h->argv[h->argc++] = (char *)val;
	return 0;
}

static int oci_args(struct oci *h, int argc, char **argv, struct ns_err *e)
{
	static const struct option opts[] = {
		{ "datapath", required_argument, NULL, 'd' },
		{ "gso", required_argument, NULL, NS_OPT_GETOPT(NS_OPT_GSO) },
		{ "channels", required_argument, NULL, NS_OPT_GETOPT(NS_OPT_CHANNELS) },
		{ "shards", required_argument, NULL, NS_OPT_GETOPT(NS_OPT_SHARDS) },
		{ "iface", required_argument, NULL, NS_OPT_GETOPT(NS_OPT_IFACE) },
		{ "user", required_argument, NULL, 'u' },
		{ "face", required_argument, NULL, NS_OPT_GETOPT(NS_OPT_FACE) },
		{ "publish", required_argument, NULL, 'p' },
		{ "forward", required_argument, NULL, 'f' },
		{ "none-ok", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int opt, longindex, err;

	h->datapath = "datapath";
	h->argv[h->argc++] = NULL;	/* the datapath, set once known */
	if (argc > 1 && (!strcmp(argv[1], "create") || !strcmp(argv[1], "poststop"))) {
		/* getopt sees the stage as the program name. */
		h->stage = argv[1];
		argc--;
		argv++;
	}
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:h", opts, &longindex)) != -1) {
		err = ns_opt_getopt(&h->o, opts, opt, longindex, optarg, e);
		if (err < 0) {
			e->usage = true;
			return -EINVAL;
		}
		if (!err)
			continue;	/* a shared option (opts.c) */
		switch (opt) {
		case 'd':
			h->datapath = optarg;
			break;
		case 'u':
			h->o.user = optarg;
			break;
		case 'N':
			h->none_ok = true;
			break;
		case 'p':
		case 'f':
			err = push(h, opt == 'p' ? "--publish" : "--forward", optarg, e);
			if (err)
				return err;
			break;
		case 'h':
			fputs(oci_usage, stdout);
			return 1;
		default:
			return ns_opt_refuse(e, opt, argv[optind - 1], oci_usage);
		}
	}
	/* getopt_long() stops at "--" and steps over it: what follows is the datapath's */
	if (optind < argc && strcmp(argv[optind - 1], "--")) {
		ns_err_usage(e, "unexpected argument '%s' (datapath arguments go after '--')\n%s",
			   argv[optind], oci_usage);
		return -EINVAL;
	}
	for (; optind < argc; optind++) {
		err = push(h, NULL, argv[optind], e);
		if (err)
			return err;
	}
	h->argv[0] = (char *)h->datapath;
	return 0;
}

static int oci_read_state(struct oci *h, FILE *in, struct ns_err *e)
{
	json_error_t jerr;
	json_t *v;

	h->state = json_loadf(in, JSON_REJECT_DUPLICATES, &jerr);
	if (!h->state) {
		ns_err_set(e, "OCI state on stdin: line %d column %d: %s", jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(h->state)) {
		ns_err_set(e, "OCI state on stdin: not a JSON object");
		return -EINVAL;
	}
	v = json_object_get(h->state, "id");
	if (!json_is_string(v) || !json_string_value(v)[0] ||
	    strlen(json_string_value(v)) > NS_OWNER_MAX - 8 || strpbrk(json_string_value(v), " \n\t/")) {
		ns_err_set(e, "OCI state: \"id\" %s", v ? "is not a usable container id" : "missing");
		return -EINVAL;
	}
	if (!h->stage) {
		const char *s = json_string_value(json_object_get(h->state, "status"));

		if (!s) {
			ns_err_set(e, "OCI state: \"status\" missing and no stage (create|poststop) given");
			return -EINVAL;
		}
		if (!strcmp(s, "creating") || !strcmp(s, "created"))
			h->stage = "create";
		else if (!strcmp(s, "stopped"))
			h->stage = "poststop";
		else {
			ns_err_set(e, "OCI state: status \"%s\": give the stage (create|poststop)", s);
			return -EINVAL;
		}
	}
	return 0;
}

/* config.json of the bundle; optional: a hook may be fed a state alone. */
static void oci_read_config(struct oci *h)
{
	const char *bundle = json_string_value(json_object_get(h->state, "bundle"));
	char path[PATH_MAX];

	if (!bundle || snprintf(path, sizeof(path), "%s/config.json", bundle) >= (int)sizeof(path))
		return;
	h->config = json_load_file(path, 0, NULL);
}

static const char *oci_netns_path(struct oci *h)
{
	json_t *nss = json_object_get(json_object_get(h->config, "linux"), "namespaces"), *n;
	size_t i;

	json_array_foreach(nss, i, n) {
		const char *type = json_string_value(json_object_get(n, "type"));
		const char *path = json_string_value(json_object_get(n, "path"));

		if (type && !strcmp(type, "network") && path && path[0] == '/')
			return path;
	}
	return NULL;
}

static const char *annotation(struct oci *h, const char *key)
{
	const char *v = json_string_value(json_object_get(json_object_get(h->state, "annotations"), key));

	return v ? v : json_string_value(json_object_get(json_object_get(h->config, "annotations"), key));
}

static int oci_annotations(struct oci *h, struct ns_err *e)
{
	/* comma-separated lists, each item one datapath option's value (policy: the option's too) */
	static const char *const keys[OCI_LIST_ANNOTATIONS] = { "sandnet.publish", "sandnet.forward",
								"sandnet.policy", "sandnet.tcp-cc",
								"sandnet.tcp-ecn" };
	static const char *const flags[OCI_LIST_ANNOTATIONS] = { "--publish", "--forward", NULL, "--tcp-cc",
								 "--tcp-ecn" };
	const char *flag, *rule, *pacing;
	char *tok, *save, what[48];
	int k, err;

	const char *face = annotation(h, "sandnet.face"), *shards;

	if (face && ns_opt_set(&h->o, NS_OPT_FACE, "annotation sandnet.face", face, e))
		return -EINVAL;
	/* the annotation, where there is one, says more about this container than the hook's flag */
	shards = annotation(h, "sandnet.shards");
	if (shards && ns_opt_set(&h->o, NS_OPT_SHARDS, "annotation sandnet.shards", shards, e))
		return -EINVAL;
	if (ns_shards_check(&h->o, "--channels", shards ? "annotation sandnet.shards" : "--shards", e))
		return -EINVAL;
	for (k = 0; k < OCI_LIST_ANNOTATIONS; k++) {
		const char *v = annotation(h, keys[k]);

		if (!v)
			continue;
		h->annot_copy[k] = strdup(v);
		if (!h->annot_copy[k]) {
			ns_err_set(e, "out of memory");
			return -ENOMEM;
		}
		snprintf(what, sizeof(what), "annotation %s", keys[k]);
		for (tok = strtok_r(h->annot_copy[k], ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
			flag = flags[k];
			rule = tok;
			if (!flag && ns_policy_item_parse(tok, &flag, &rule) < 0) {
				ns_err_set(e, "%s: '%s': expected %s", what, tok, NS_POLICY_ITEM_FORMS);
				return -EINVAL;
			}
			/* "--tcp-cc" -> "tcp-cc" */
			if (k >= 3 && ns_tcp_setting_check(what, flag + 2, tok, e))
				return -EINVAL;
			err = push(h, flag, rule, e);
			if (err)
				return err;
		}
	}
	pacing = annotation(h, "sandnet.tcp-pacing");
	if (pacing) {
		if (ns_tcp_setting_check("annotation sandnet.tcp-pacing", "tcp-pacing", pacing, e))
			return -EINVAL;
		err = push(h, "--tcp-pacing", pacing, e);
		if (err)
			return err;
	}
	return 0;
}

static void oci_free(struct oci *h)
{
	unsigned int k;

	for (k = 0; k < OCI_LIST_ANNOTATIONS; k++)
		free(h->annot_copy[k]);
	json_decref(h->config);
	json_decref(h->state);
}

static int oci_create(struct oci *h, const char *owner, struct ns_err *e)
{
	json_t *pid = json_object_get(h->state, "pid");
	const char *nspath;
	pid_t dp = 0;
	int err;

	oci_read_config(h);
	nspath = oci_netns_path(h);
	if (!nspath && (!json_is_integer(pid) || json_integer_value(pid) <= 1 ||
			json_integer_value(pid) > INT_MAX)) {
		ns_err_set(e, "OCI state: \"pid\" %s, and config.json names no network namespace path",
			   pid ? "is not a container process id" : "missing");
		return -EINVAL;
	}
	err = oci_annotations(h, e);
	if (err)
		return err;
	h->o.cmd = NS_CMD_RUN;
	h->o.netns_path = nspath;
	h->o.pid = nspath ? 0 : (pid_t)json_integer_value(pid);
	h->o.child_argv = h->argv;
	h->o.datapath_hint = "give the hook --datapath PATH";
	h->o.detach_child = true;
	h->o.owner = owner;
	h->o.child_pidp = &dp;
	err = ns_attach(&h->o, e);
	if (err == -ENONET && h->none_ok) {
		fprintf(stderr, "netsetup oci-hook: %s: %s: nothing to serve, the container runs without sandnet\n",
			owner, e->text);
		e->text[0] = '\0';
		return 0;
	}
	if (err < 0)
		return err;
	fprintf(stderr, "netsetup oci-hook: %s: datapath pid %d serves %s\n", owner, (int)dp,
		nspath ? nspath : "the container's netns");
	return 0;
}

static int oci_poststop(const char *owner, struct ns_err *e)
{
	char path[PATH_MAX];
	struct ns_state st;
	int err;

	err = ns_state_find_owner(owner, path, sizeof(path), &st, e);
	if (err == -ENOENT)
		return 0;	/* nothing attached: nothing to do */
	if (err)
		return err;
	err = ns_give_back(path, &st, NULL, true, e);
	ns_state_free(&st);
	if (!err)
		fprintf(stderr, "netsetup oci-hook: %s: detached\n", owner);
	return err;
}

/**
 * ns_oci_main() - `netsetup oci-hook`
 * @argc:	arguments from "oci-hook" on
 * @argv:	argv[0] is "oci-hook"
 * @in:		the OCI state JSON
 * @e:		error message
 *
 * Return: 0 or -errno (-EINVAL: a malformed command line or state).
 */
int ns_oci_main(int argc, char **argv, FILE *in, struct ns_err *e)
{
	char owner[NS_OWNER_MAX];
	struct oci h;
	int err;

	memset(&h, 0, sizeof(h));
	ns_opts_init(&h.o);
	err = oci_args(&h, argc, argv, e);
	if (err)
		return err > 0 ? 0 : err;
	err = oci_read_state(&h, in, e);
	if (err)
		goto out;
	snprintf(owner, sizeof(owner), "oci:%s", json_string_value(json_object_get(h.state, "id")));
	if (!strcmp(h.stage, "create"))
		err = oci_create(&h, owner, e);
	else
		err = oci_poststop(owner, e);
out:
	oci_free(&h);
	return err;
}

/**
 * ns_oci_check() - read the hook's arguments and state as ns_oci_main() does,
 *		    and attach nothing
 * @argc:	argument count, as for ns_oci_main()
 * @argv:	arguments ("oci-hook" first)
 * @in:		the OCI state JSON
 * @e:		the reason on failure
 *
 * The parsing half of the hook, for tests and the fuzz target
 * (tests/fuzz/fuzz_netsetup_parsers.c): arguments, the state document and
 * the sandnet.* annotations of the state (config.json is not read, no
 * namespace is opened, no datapath is started).
 *
 * Return: 0 when the hook would go on to attach or give back, 1 after
 * --help, or negative errno with @e set.
 */
int ns_oci_check(int argc, char **argv, FILE *in, struct ns_err *e)
{
	struct oci h;
	int err;

	memset(&h, 0, sizeof(h));
	ns_opts_init(&h.o);
	err = oci_args(&h, argc, argv, e);
	if (err)
		goto out;
	err = oci_read_state(&h, in, e);
	if (err)
		goto out;
	if (!strcmp(h.stage, "create"))
		err = oci_annotations(&h, e);
out:
	oci_free(&h);
	return err;
}
