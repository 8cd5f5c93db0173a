// SPDX-License-Identifier: MIT
/*
 * opts.c - the command line
 *
 * Theory of operation: `netsetup SUBCOMMAND [OPTIONS]`, parsed with
 * getopt_long into a struct ns_opts and checked completely before anything
 * runs: exactly one of --netns/--pid where a namespace is needed, numbers in
 * range, options that belong to the subcommand. ns_opts_parse() never prints
 * and never exits: the message goes into the struct ns_err and main() decides.
 * `run` stops at the first non-option (or after "--"): what follows is the
 * datapath's command line, passed on untouched.
 *
 * The options every front end shares (enum ns_opt: --gso, --channels,
 * --shards, --iface, --face) are checked here, once, whoever gives them:
 * the command line, connect.c and oci.c (their own flags, and the hook's
 * annotations), cni.c (the network configuration's keys). ns_opt_set()
 * takes one value under the caller's name for it ("--channels",
 * "\"channels\"", "annotation sandnet.shards"), so that the message names what
 * the user wrote, and the ranges come from one place: PROTO_MAX_CHANNELS,
 * NS_MAX_SHARDS, NS_MAX_IFACES. ns_opts_init() gives every front end the
 * same defaults, and ns_shards_check() the same rule for shards and
 * channels together.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/cpus.h"
#include "netsetup/front/front.h"

#define GSO_MAX_BYTES_MIN	PROTO_MTU_MIN
#define GSO_MAX_BYTES_MAX	524288

const char ns_usage[] =
	"usage: netsetup gso show [--netns PATH | --pid PID] [--json] [IFACE]\n"
	"       netsetup attach (--netns PATH | --pid PID) --datapath SOCKET [--gso auto|hw|sw|off]\n"
	"                       [--gso-max-size N] [--channels N] [--shards N|auto] [--iface NAME]...\n"
	"                       [--face on|off]\n"
	"       netsetup run (--netns PATH | --pid PID) [--gso auto|hw|sw|off] [--gso-max-size N]\n"
	"                    [--channels N] [--shards N|auto] [--iface NAME]... [--face on|off] [--user USER]\n"
	"                    -- DATAPATH [ARGS...]\n"
	"       netsetup detach (--netns PATH | --pid PID)\n"
	"       netsetup restart (--netns PATH | --pid PID | --all)\n"
	"       netsetup oci-hook [create|poststop] [--datapath PATH] [options] [-- DATAPATH_ARGS...]\n"
	"       netsetup serve [--socket PATH] [--config FILE]\n"
	"       netsetup connect [--socket PATH] (--netns PATH | --pid PID) [--iface NAME]\n"
	"                        [--gso hw|sw|off] [--channels N] [--shards N|auto] [--face on|off]\n"
	"                        -- DATAPATH [ARGS...]\n"
	"       netsetup help | --help | --version\n"
	"  Each command takes --help. As a CNI plugin: call it 'sandnet' (or set CNI_COMMAND,\n"
	"  no arguments); as an OCI runtime: 'sandnet-runtime'. See netsetup(8).\n";

/**
 * ns_version_print() - one line: the program, the package's version and the
 * protocol's (major.minor, docs/protocol.md)
 * @f:		where
 * @prog:	"netsetup", "sandnet-runtime"
 */
void ns_version_print(FILE *f, const char *prog)
{
	fprintf(f, "%s %s (protocol %d.%d)\n", prog, SANDNET_VERSION, PROTO_VERSION_MAX, PROTO_VERSION_MINOR);
}

enum {
	OPT_NETNS = 256,
	OPT_PID,
	OPT_JSON,
	OPT_DATAPATH,
	OPT_GSO,
	OPT_GSO_MAX_SIZE,
	OPT_CHANNELS,
	OPT_IFACE,
	OPT_USER,
	OPT_FACE,
	OPT_SHARDS,
	OPT_ALL,
	OPT_HELP,
};

static const struct option long_opts[] = {
	{ "netns", required_argument, NULL, OPT_NETNS },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "datapath", required_argument, NULL, OPT_DATAPATH },
	{ "gso", required_argument, NULL, OPT_GSO },
	{ "gso-max-size", required_argument, NULL, OPT_GSO_MAX_SIZE },
	{ "channels", required_argument, NULL, OPT_CHANNELS },
	{ "iface", required_argument, NULL, OPT_IFACE },
	{ "user", required_argument, NULL, OPT_USER },
	{ "face", required_argument, NULL, OPT_FACE },
	{ "shards", required_argument, NULL, OPT_SHARDS },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Which options each subcommand takes, as bits of (1 << (opt - OPT_NETNS)). */
#define B(o) (1u << ((o) - OPT_NETNS))
static const unsigned int allowed[NS_CMD_MAX] = {
	[NS_CMD_GSO_SHOW] = B(OPT_NETNS) | B(OPT_PID) | B(OPT_JSON),
	[NS_CMD_ATTACH] = B(OPT_NETNS) | B(OPT_PID) | B(OPT_DATAPATH) | B(OPT_GSO) |
			  B(OPT_GSO_MAX_SIZE) | B(OPT_CHANNELS) | B(OPT_IFACE) | B(OPT_FACE) |
			  B(OPT_SHARDS),
	[NS_CMD_RUN] = B(OPT_NETNS) | B(OPT_PID) | B(OPT_GSO) | B(OPT_GSO_MAX_SIZE) |
		       B(OPT_CHANNELS) | B(OPT_IFACE) | B(OPT_USER) | B(OPT_FACE) | B(OPT_SHARDS),
	[NS_CMD_DETACH] = B(OPT_NETNS) | B(OPT_PID),
	[NS_CMD_RESTART] = B(OPT_NETNS) | B(OPT_PID) | B(OPT_ALL),
};

static const char *const cmd_names[NS_CMD_MAX] = {
	[NS_CMD_NONE] = "",
	[NS_CMD_GSO_SHOW] = "gso show",
	[NS_CMD_ATTACH] = "attach",
	[NS_CMD_RUN] = "run",
	[NS_CMD_DETACH] = "detach",
	[NS_CMD_RESTART] = "restart",
	[NS_CMD_HELP] = "help",
};
_Static_assert(sizeof(cmd_names) / sizeof(cmd_names[0]) == NS_CMD_MAX, "a name per command");

/**
 * ns_tcp_setting_check() - an early check of a front end's TCP setting
 * @what:	where the value came from, for the message ("\"tcpEcn\"")
 * @opt:	"tcp-cc", "tcp-ecn" or "tcp-pacing": the datapath's option
 * @val:	VALUE, or LINK=VALUE for one link (not for tcp-pacing)
 * @e:		receives what was wrong
 *
 * The datapath parses these options itself (datapath(8)) and is the
 * authority; the CNI plugin and the OCI hook check a value before they
 * start it, so that a typo in a network configuration or an annotation is
 * an error naming the key rather than a datapath that exits at start.
 *
 * Return: 0, or -EINVAL when @val is none of the words @opt takes.
 */
int ns_tcp_setting_check(const char *what, const char *opt, const char *val, struct ns_err *e)
{
	static const char *const cc[] = { "cubic", "reno", "bbr", NULL };
	static const char *const ecn[] = { "off", "accept", "on", NULL };
	static const char *const pacing[] = { "on", "off", NULL };
	const char *const *words = !strcmp(opt, "tcp-cc") ? cc : !strcmp(opt, "tcp-ecn") ? ecn : pacing;
	const char *eq = strchr(val, '='), *v = val;
	unsigned int i;

	if (eq && words != pacing && eq != val)
		v = eq + 1;
	for (i = 0; words[i] && (!eq || words != pacing); i++)
		if (!strcmp(v, words[i]))
			return 0;
	ns_err_set(e, "%s '%s': expected %s", what, val,
		   words == cc ? "cubic, reno or bbr (or LINK=one of them)"
		   : words == ecn ? "off, accept or on (or LINK=one of them)" : "on or off");
	return -EINVAL;
}

/**
 * ns_policy_item_parse() - "egress-deny=RULE" into the datapath's flag and rule
 * @item:	one policy item of the CNI configuration or the OCI annotation
 * @flag:	receives "--egress-allow", "--egress-deny", "--ingress-allow"
 *		or "--ingress-deny"
 * @rule:	receives the RULE, which points into @item (the datapath
 *		checks it: docs/face.md, "Policy")
 *
 * Return: 0, or -EINVAL for an unknown kind or an empty rule.
 */
int ns_policy_item_parse(const char *item, const char **flag, const char **rule)
{
	static const char *const flags[] = { "--egress-allow", "--egress-deny", "--ingress-allow",
					     "--ingress-deny" };
	unsigned int i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		size_t len = strlen(flags[i] + 2);

		if (!strncmp(item, flags[i] + 2, len) && item[len] == '=' && item[len + 1]) {
			*flag = flags[i];
			*rule = item + len + 1;
			return 0;
		}
	}
	return -EINVAL;
}

/* Strict unsigned decimal: no sign, no junk, no overflow. */
static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *v)
{
	char *end;

	if (!s[0] || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	return *v < min || *v > max ? -ERANGE : 0;
}

static int number_opt(const char *name, const char *arg, unsigned long min, unsigned long max,
		      unsigned long *v, struct ns_err *e)
{
	int err = parse_uint(arg, min, max, v);

	if (err == -EINVAL)
		ns_err_set(e, "%s '%s': not a number", name, arg);
	else if (err)
		ns_err_set(e, "%s %s: out of range %lu..%lu", name, arg, min, max);
	return err;
}

static int cmd_parse(int argc, char **argv, struct ns_opts *o, int *argi, struct ns_err *e)
{
	const char *c = argc > 1 ? argv[1] : NULL;

	*argi = 2;
	if (!c || !strcmp(c, "help") || !strcmp(c, "--help") || !strcmp(c, "-h")) {
		o->cmd = NS_CMD_HELP;
		return 0;
	}
	if (!strcmp(c, "gso")) {
		if (argc < 3 || strcmp(argv[2], "show")) {
			ns_err_set(e, "gso: expected 'gso show', got '%s'", argc < 3 ? "gso" : argv[2]);
			return -EINVAL;
		}
		o->cmd = NS_CMD_GSO_SHOW;
		*argi = 3;
	} else if (!strcmp(c, "attach")) {
		o->cmd = NS_CMD_ATTACH;
	} else if (!strcmp(c, "run")) {
		o->cmd = NS_CMD_RUN;
	} else if (!strcmp(c, "detach")) {
		o->cmd = NS_CMD_DETACH;
	} else if (!strcmp(c, "restart")) {
		o->cmd = NS_CMD_RESTART;
	} else {
		ns_err_set(e, "unknown command '%s'", c);
		return -EINVAL;
	}
	return 0;
}

/*
 * A shard count: 1..NS_MAX_SHARDS, or "auto": one shard per CPU this
 * process may run on (sched_getaffinity(), which the datapath it starts
 * inherits), at most NS_MAX_SHARDS.
 */
static int shards_parse(const char *what, const char *arg, unsigned int *out, struct ns_err *e)
{
	unsigned long v;
	int err;

	if (!strcmp(arg, "auto")) {
		int n = cpus_allowed(NS_MAX_SHARDS);

		if (n < 0) {
			ns_err_set(e, "%s auto: sched_getaffinity: %s", what, strerror(-n));
			return n;
		}
		*out = (unsigned int)n;
		return 0;
	}
	err = number_opt(what, arg, 1, NS_MAX_SHARDS, &v, e);
	if (err == -EINVAL)
		ns_err_set(e, "%s '%s': not a number, nor auto", what, arg);

	if (!err)
		*out = (unsigned int)v;
	return err;
}

/**
 * ns_opts_init() - the defaults every front end starts from
 * @o:		emptied, then one channel per link and --gso auto
 */
void ns_opts_init(struct ns_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->gso = NS_GSO_AUTO;
	o->channels = 1;
}

/* What each shared option takes, in words; a count's range is 1..max */
static const struct {
	const char *form;
	unsigned int max;
} opt_takes[NS_OPT_MAX] = {
	[NS_OPT_GSO] = { "auto, hw, sw or off", 0 },
	[NS_OPT_CHANNELS] = { "an integer", PROTO_MAX_CHANNELS },
	[NS_OPT_SHARDS] = { "an integer", NS_MAX_SHARDS },
	[NS_OPT_IFACE] = { "an interface name", 0 },
	[NS_OPT_FACE] = { "on or off", 0 },
};
_Static_assert(sizeof(opt_takes) / sizeof(opt_takes[0]) == NS_OPT_MAX, "what each shared option takes");

/**
 * ns_opt_set() - check one value of an option every front end shares, and set it
 * @o:		receives it (an --iface is added to the links, up to NS_MAX_IFACES)
 * @opt:	which option
 * @what:	what the user calls it, for the message: "--channels",
 *		"\"channels\"" (CNI), "annotation sandnet.shards" (OCI)
 * @arg:	the value as given; NULL when it was not of the option's type at
 *		all (a front end with typed values, CNI), which the message then
 *		says what the option takes
 * @e:		what is wrong, naming @what and @arg
 *
 * Return: 0, or -EINVAL / -ERANGE with @o unchanged.
 */
int ns_opt_set(struct ns_opts *o, enum ns_opt opt, const char *what, const char *arg, struct ns_err *e)
{
	unsigned long v;
	int err, gso;

	if ((unsigned int)opt >= NS_OPT_MAX) {
		ns_err_set(e, "%s: not an option every front end shares", what);
		return -EINVAL;
	}
	if (!arg) {
		if (opt_takes[opt].max)
			ns_err_set(e, "%s: expected %s 1..%u", what, opt_takes[opt].form, opt_takes[opt].max);
		else
			ns_err_set(e, "%s: expected %s", what, opt_takes[opt].form);
		return -EINVAL;
	}
	switch (opt) {
	case NS_OPT_GSO:
		gso = ns_gso_request_parse(arg);
		if (gso < 0) {
			ns_err_set(e, "%s '%s': expected %s", what, arg, opt_takes[opt].form);
			return -EINVAL;
		}
		o->gso = gso;
		return 0;
	case NS_OPT_CHANNELS:
		err = number_opt(what, arg, 1, opt_takes[opt].max, &v, e);
		if (!err)
			o->channels = v;
		return err;
	case NS_OPT_SHARDS:
		return shards_parse(what, arg, &o->shards, e);
	case NS_OPT_IFACE:
		if (!arg[0] || strlen(arg) >= IFNAMSIZ) {
			ns_err_set(e, "%s '%s': not an interface name", what, arg);
		} else if (o->n_ifaces >= NS_MAX_IFACES) {
			ns_err_set(e, "%s: more than %d", what, NS_MAX_IFACES);
		} else {
			o->ifaces[o->n_ifaces++] = arg;
			return 0;
		}
		return -EINVAL;
	case NS_OPT_FACE:
		if (strcmp(arg, "on") && strcmp(arg, "off")) {
			ns_err_set(e, "%s '%s': expected %s", what, arg, opt_takes[opt].form);
			return -EINVAL;
		}
		o->no_face = !strcmp(arg, "off");
		return 0;
	default:
		return -EINVAL;
	}
}

/**
 * ns_shards_check() - shards and channels together
 * @o:		parsed options
 * @channels, @shards: how the user calls the two, for the message
 * @e:		what is wrong
 *
 * A shard reads one channel per link, so more than one shard means that
 * many channels: a different --channels is refused rather than ignored.
 *
 * Return: 0 or -EINVAL.
 */
int ns_shards_check(const struct ns_opts *o, const char *channels, const char *shards, struct ns_err *e)
{
	if (o->shards > 1 && o->channels != 1 && o->channels != o->shards) {
		ns_err_set(e, "%s %u and %s %u: each shard has one channel per link; leave %s out",
			   channels, o->channels, shards, o->shards, channels);
		return -EINVAL;
	}
	return 0;
}

/**
 * ns_opt_getopt() - ns_opt_set() for what getopt_long() returned
 * @o:		receives the value
 * @opts:	the front end's table, whose shared options have NS_OPT_GETOPT() as val
 * @val:	what getopt_long() returned
 * @index:	the option's index in @opts (getopt_long()'s longindex)
 * @arg:	optarg
 * @e:		what is wrong, naming the option as the user wrote it ("--channels")
 *
 * Return: 0 when taken, 1 when @val is none of the shared options (the
 * front end's own), or negative errno as ns_opt_set().
 */
int ns_opt_getopt(struct ns_opts *o, const struct option *opts, int val, int index, const char *arg,
		  struct ns_err *e)
{
	char flag[32];

	if (val < NS_OPT_GETOPT(0) || val >= NS_OPT_GETOPT(NS_OPT_MAX))
		return 1;
	snprintf(flag, sizeof(flag), "--%s", opts[index].name);
	return ns_opt_set(o, (enum ns_opt)(val - NS_OPT_GETOPT(0)), flag, arg, e);
}

/**
 * ns_opt_refuse() - the message for what getopt_long() did not take
 * @e:		receives it, as a malformed command line
 * @val:	what getopt_long() returned: ':' for a missing value, else an unknown option
 * @arg:	the option as given (argv[optind - 1])
 * @usage:	the front end's usage, which follows the message
 *
 * Return: -EINVAL.
 */
int ns_opt_refuse(struct ns_err *e, int val, const char *arg, const char *usage)
{
	ns_err_usage(e, "%s option '%s'\n%s", val == ':' ? "missing the value of" : "unknown", arg, usage);
	return -EINVAL;
}

/* The command line's option that every front end shares, as enum ns_opt */
static enum ns_opt shared_opt(int opt)
{
	switch (opt) {
	case OPT_GSO:
		return NS_OPT_GSO;
	case OPT_CHANNELS:
		return NS_OPT_CHANNELS;
	case OPT_SHARDS:
		return NS_OPT_SHARDS;
	case OPT_IFACE:
		return NS_OPT_IFACE;
	case OPT_FACE:
		return NS_OPT_FACE;
	default:
		return NS_OPT_MAX;
	}
}

/**
 * ns_opts_parse() - parse and check the whole command line
 * @argc:	from main()
 * @argv:	from main(); run's child_argv points into it
 * @o:		filled
 * @e:		what is wrong, for the user
 *
 * Return: 0 or -EINVAL / -ERANGE.
 */
int ns_opts_parse(int argc, char **argv, struct ns_opts *o, struct ns_err *e)
{
	unsigned long v;
	char flag[32];
	int argi, opt, err;

	ns_opts_init(o);
	err = cmd_parse(argc, argv, o, &argi, e);
	if (err || o->cmd == NS_CMD_HELP)
		return err;

	/* getopt_long sees argv[argi - 1] as the program name. */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc - argi + 1, argv + argi - 1,
				  o->cmd == NS_CMD_RUN ? "+:h" : ":h", long_opts, NULL)) != -1) {
		if (opt == '?' || opt == ':') {
			const char *bad = argv[argi - 1 + optind - 1];

			ns_err_set(e, "%s: %s option '%s'", cmd_names[o->cmd],
				   opt == ':' ? "missing the value of" : "unknown", bad);
			return -EINVAL;
		}
		if (opt == OPT_HELP || opt == 'h') {
			/* `netsetup attach --help`: the usage, whatever else is there */
			o->cmd = NS_CMD_HELP;
			return 0;
		}
		if (!(allowed[o->cmd] & B(opt))) {
			ns_err_set(e, "%s: option '--%s' does not apply", cmd_names[o->cmd],
				   long_opts[opt - OPT_NETNS].name);
			return -EINVAL;
		}
		switch (opt) {
		case OPT_NETNS:
			if (o->netns_path || o->pid) {
				ns_err_set(e, "%s: give one of --netns or --pid, once", cmd_names[o->cmd]);
				return -EINVAL;
			}
			if (!optarg[0]) {
				ns_err_set(e, "--netns: empty path");
				return -EINVAL;
			}
			o->netns_path = optarg;
			break;
		case OPT_PID:
			if (o->netns_path || o->pid) {
				ns_err_set(e, "%s: give one of --netns or --pid, once", cmd_names[o->cmd]);
				return -EINVAL;
			}
			if ((err = number_opt("--pid", optarg, 1, INT_MAX, &v, e)))
				return err;
			o->pid = (pid_t)v;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_ALL:
			o->all = true;
			break;
		case OPT_DATAPATH:
			o->datapath = optarg;
			break;
		case OPT_GSO:
		case OPT_CHANNELS:
		case OPT_SHARDS:
		case OPT_IFACE:
		case OPT_FACE:
			snprintf(flag, sizeof(flag), "--%s", long_opts[opt - OPT_NETNS].name);
			if ((err = ns_opt_set(o, shared_opt(opt), flag, optarg, e)))
				return err;
			break;
		case OPT_GSO_MAX_SIZE:
			if ((err = number_opt("--gso-max-size", optarg, GSO_MAX_BYTES_MIN,
					      GSO_MAX_BYTES_MAX, &v, e)))
				return err;
			o->gso_max_bytes = v;
			break;
		case OPT_USER:
			if (!optarg[0]) {
				ns_err_set(e, "--user: empty user name");
				return -EINVAL;
			}
			o->user = optarg;
			break;
		}
	}
	argi += optind - 1;	/* first argument getopt did not take */

	if (o->all && (o->netns_path || o->pid)) {
		ns_err_set(e, "%s: --all, or one namespace (--netns or --pid), not both", cmd_names[o->cmd]);
		return -EINVAL;
	}
	if (o->cmd != NS_CMD_GSO_SHOW && !o->netns_path && !o->pid && !o->all) {
		ns_err_set(e, "%s: which namespace? give --netns PATH or --pid PID", cmd_names[o->cmd]);
		return -EINVAL;
	}
	switch (o->cmd) {
	case NS_CMD_GSO_SHOW:
		if (argi < argc) {
			if (strlen(argv[argi]) >= IFNAMSIZ) {
				ns_err_set(e, "gso show: '%s' is not an interface name", argv[argi]);
				return -EINVAL;
			}
			o->show_iface = argv[argi++];
		}
		break;
	case NS_CMD_ATTACH:
		if (!o->datapath) {
			ns_err_set(e, "attach: where is the datapath? give --datapath SOCKET");
			return -EINVAL;
		}
		break;
	case NS_CMD_RUN:
		if (argi >= argc) {
			ns_err_set(e, "run: no datapath command after '--'");
			return -EINVAL;
		}
		o->child_argv = argv + argi;
		argi = argc;
		break;
	default:
		break;
	}
	if (argi < argc) {
		ns_err_set(e, "%s: unexpected argument '%s'", cmd_names[o->cmd], argv[argi]);
		return -EINVAL;
	}
	return ns_shards_check(o, "--channels", "--shards", e);
}
