// SPDX-License-Identifier: MIT
/*
 * main.c - the datapath process: options, start-up order, the loop
 *
 * `datapath` as netsetup starts it is a supervisor (supervise.c): it takes
 * the configuration and the fds, binds what needs privileges, drops them,
 * and starts the datapath proper, this same program with --worker, on a
 * socketpair; it starts another on the same fds whenever one dies
 * (docs/security.md, "Fail closed"). Every option is checked before
 * anything starts, in both roles.
 *
 * A worker's start-up order, each step failing with a message that names
 * the thing and the reason (and an ERROR to its supervisor):
 *   1. parse options; every --publish/--forward SPEC and resource cap is
 *      checked first; the caps go to the stack as soon as it exists; the
 *      supervisor's ledger gives the TCP engines their secret
 *   2. receive the configuration from the supervisor (--fd N), which
 *      relays netsetup's or replays it
 *   3. take over what the supervisor bound: the control socket, forward
 *      listeners (--control-fd, --listener-fd)
 *   4. drop every privilege (privdrop.c; a worker has none left but its
 *      capability sets) and load the system call filter: no packet is
 *      touched before
 *   5. start the stack (gratuitous ARP, DAD), services, control socket;
 *      reset the connections a dead predecessor left (face_tcp.c)
 *   6. ACK DONE: from now on the container is served
 *   7. run the loop until SIGTERM/SIGINT, then reset every connection of
 *      the face and release everything
 *
 * `datapath stats --control SOCKET [--json]` is the client side of the
 * control socket (control.c); `datapath stats --all` asks every datapath
 * whose socket is in /run/sandnet for its summary (one per container);
 * `datapath metrics --listen ADDRESS:PORT` serves those summaries to
 * Prometheus (metrics.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "datapath/datapath.h"
#include "datapath/face/face.h"
#include "datapath/ledger.h"
#include "datapath/link/uring.h"
#include "datapath/obs/metrics.h"
#include "datapath/obs/obs.h"
#include "datapath/policy.h"
#include "datapath/proc/limits.h"
#include "datapath/proc/proc.h"
#include "datapath/flowlog.h"
#include "datapath/proc/seccomp.h"
#include "datapath/proc/shard.h"

static const char usage[] =
	"usage: datapath [--listen SOCKET | --fd N] [--user USER] [--control SOCKET]\n"
	"                [--publish SPEC]... [--forward SPEC]... [POLICY]... [CAPS] [TCP]\n"
	"       datapath stats (--control SOCKET | --all [--dir DIR]) [--json]\n"
	"       datapath metrics --listen ADDRESS:PORT [--dir DIR]   (Prometheus exporter)\n"
	"       datapath ss --control SOCKET [--json] [--trace FILE [--seconds N]] [FILTER]\n"
	"                    (TCP connections `ss -ti` style; with --trace, a sample per ACK\n"
	"                    of those FILTER matches, ADDR[:PORT] or :PORT, as JSON lines)\n"
	"       datapath flows --control SOCKET --follow [--json] [--seconds N]\n"
	"                    (each conversation of the container as it ends, conntrack -E style)\n"
	"       datapath --version | --help     (each command takes --help too)\n"
	"\n"
	"  --fd N            read the configuration from fd N (netsetup run passes it)\n"
	"  --listen SOCKET   accept one netsetup connection on SOCKET (netsetup attach)\n"
	"  --user USER       run as USER after start-up (default: nobody)\n"
	"  --control SOCKET  serve statistics on this unix socket\n"
	"  --name NAME       who this datapath serves, for stats (netsetup gives cni:ID:IFNAME)\n"
	"  --flow-log PATH   append a JSON line per conversation of the container, when\n"
	"                    it ends, to PATH (opened before the privilege drop)\n"
	"  --flow-log-starts a record when a conversation begins too\n"
	"  --max-deaths N    datapaths that may die within --death-window before the\n"
	"                    container stays dark (1..1000, default 5)\n"
	"  --death-window S  seconds (1..86400, default 60)\n"
	"  --no-io-uring     read and write the container face's TUN one packet per\n"
	"                    system call (default: in batches through an io_uring)\n"
	"  --no-rx-ring      read the links' packet sockets with recvmmsg() only\n"
	"                    (default: through a receive ring shared with the kernel)\n"
	"  --busy-poll USEC  after a turn with work, poll up to USEC before sleeping\n"
	"                    (0..1000, default 50; 0: never)\n"
	"  --nice N          run at this nice value, below the container's programs\n"
	"                    (0..19, default 10; 0: as started)\n"
	"  --shards N|auto   run N stacks, each a thread with its share of the\n"
	"                    conversations, when netsetup is not told otherwise\n"
	"                    (1..64; default auto: one per CPU it may run on)\n"
	"  --publish udp:[ADDR:]PORT=TARGET   datagrams to the container's PORT go to\n"
	"                    TARGET (HOST:PORT or unix:/path); replies come back\n"
	"  --forward udp:LISTEN=REMOTE        datagrams to LISTEN (HOST:PORT or\n"
	"                    unix:/path) go to REMOTE (ADDR:PORT) through the stack\n"
	"  --publish tcp:[ADDR:]PORT=TARGET   connections to the container's PORT are\n"
	"                    joined to new connections to TARGET (HOST:PORT or unix:/path)\n"
	"  --forward tcp:LISTEN=REMOTE        connections to LISTEN (HOST:PORT or\n"
	"                    unix:/path) are joined to connections to REMOTE (ADDR:PORT)\n"
	"policy for the container face, first match wins, then deny of the cloud\n"
	"metadata addresses, then allow (deny for egress once a name rule is given: the\n"
	"container's DNS is then read; docs/face.md; RULE: [tcp:|udp:|icmp:]NETWORK[:PORTS],\n"
	"NETWORK an address, a CIDR, any, or for egress a DNS name or *.SUFFIX, IPv6 in []\n"
	"before :PORTS):\n"
	"  --egress-allow RULE, --egress-deny RULE    what the container may reach\n"
	"  --ingress-allow RULE, --ingress-deny RULE  who may reach the container\n"
	"  --name-ttl MIN-MAX  a DNS answer binds its addresses to an allowed name for its\n"
	"                    TTL, at least MIN and at most MAX seconds (default 60-3600)\n"
	"  --name-bindings N   bindings kept at most (default 4096)\n"
	"resource caps (docs/security.md; BYTES may end in K, M or G):\n";

/* After the caps (limits_usage()). */
static const char dp_usage_tail[] =
	"TCP toward the network (docs/tcp.md; each for every link, or [LINK=] for one):\n"
	"  --tcp-cc [LINK=]cubic|reno|bbr   congestion control (default cubic)\n"
	"  --tcp-ecn [LINK=]off|accept|on   ECN: never, when the peer asks (default), always ask\n"
	"  --tcp-pacing on|off              spread each window over the round trip (default on)\n"
	"See datapath(8).\n";

static void dp_usage(FILE *f)
{
	fputs(usage, f);
	limits_usage(f);
	fputs(dp_usage_tail, f);
}


static int dp_stats_main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "control", required_argument, NULL, 'c' },
		{ "all", no_argument, NULL, 'a' },
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *control = NULL, *dir = NULL;
	bool json = false, all = false;
	char err[512];
	int c, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:jh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			control = optarg;
			break;
		case 'a':
			all = true;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			dp_usage(stdout);
			return 0;
		default:
			dp_usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !control == !all || (dir && !all)) {
		fprintf(stderr, "datapath stats: give either --control SOCKET or --all [--dir DIR]\n");
		return 2;
	}
	if (all) {
		/* where netsetup keeps its state, as netsetup finds it */
		if (!dir)
			dir = getenv("SANDNET_STATE_DIR") && *getenv("SANDNET_STATE_DIR") ?
			      getenv("SANDNET_STATE_DIR") : "/run/sandnet";
		n = control_client_all(dir, json, stdout, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "datapath stats: %s\n", err);
			return 1;
		}
		if (!n && !json)
			printf("no datapath has a control socket in %s\n", dir);
		return 0;
	}
	if (control_client(control, json, stdout, err, sizeof(err)) < 0) {
		fprintf(stderr, "datapath stats: %s\n", err);
		return 1;
	}
	return 0;
}

static int dp_number(const char *val, unsigned int min, unsigned int max, unsigned int *out);

static int dp_flows_main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "control", required_argument, NULL, 'c' },
		{ "follow", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "seconds", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *control = NULL;
	unsigned int seconds = 0;
	bool json = false, follow = false;
	char err[512];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:fjh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			control = optarg;
			break;
		case 'f':
			follow = true;
			break;
		case 'j':
			json = true;
			break;
		case 's':
			if (dp_number(optarg, 0, 86400, &seconds) < 0) {
				fprintf(stderr, "datapath flows: --seconds %s: not a number of seconds 0..86400\n", optarg);
				return 2;
			}
			break;
		case 'h':
			dp_usage(stdout);
			return 0;
		default:
			dp_usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !control || !follow) {
		fprintf(stderr, "datapath flows: give --control SOCKET and --follow (the conversations open now: "
			"datapath ss and datapath stats)\n");
		return 2;
	}
	if (control_flows_client(control, json, seconds, stdout, err, sizeof(err)) < 0) {
		fprintf(stderr, "datapath flows: %s\n", err);
		return 1;
	}
	return 0;
}

static int dp_ss_main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "control", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "trace", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *control = NULL, *trace = NULL, *filter = NULL;
	unsigned long seconds = 0;
	bool json = false, have_seconds = false;
	char err[512], *end;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "c:jh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			control = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 't':
			trace = optarg;
			break;
		case 's':
			errno = 0;
			seconds = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || seconds > 86400) {
				fprintf(stderr, "datapath ss: --seconds %s: not a number of seconds 0..86400\n", optarg);
				return 2;
			}
			have_seconds = true;
			break;
		case 'h':
			dp_usage(stdout);
			return 0;
		default:
			dp_usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		filter = argv[optind++];
	if (optind != argc || !control) {
		fprintf(stderr, "datapath ss: give --control SOCKET and at most one FILTER\n");
		return 2;
	}
	if (!trace && (have_seconds || filter)) {
		fprintf(stderr, "datapath ss: %s only goes with --trace FILE\n", have_seconds ? "--seconds" : "a FILTER");
		return 2;
	}
	if (trace && json) {
		fprintf(stderr, "datapath ss: --json lists; a trace is JSON lines already\n");
		return 2;
	}
	if (control_ss_client(control, json, filter, trace, (unsigned int)seconds, err, sizeof(err)) < 0) {
		fprintf(stderr, "datapath ss: %s\n", err);
		return 1;
	}
	return 0;
}

/* N in @min..@max, decimal, nothing else: 0 or -EINVAL. */
static int dp_number(const char *val, unsigned int min, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(val, &end, 10);
	if (!*val || *end || errno || v < min || v > max || val[0] == '-')
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

/* A count option: N in @min..@max. */
static int dp_parse_count(const char *opt, const char *val, unsigned int min, unsigned int max, unsigned int *out)
{
	if (dp_number(val, min, max, out) < 0) {
		fprintf(stderr, "datapath: --%s '%s': not a number in %u..%u\n", opt, val, min, max);
		return -EINVAL;
	}
	return 0;
}

/* --shards: 1..SHARD_MAX, or auto (0: the supervisor counts the CPUs, cpus.h). */
static int dp_parse_shards(const char *val, unsigned int *out)
{
	if (!strcmp(val, "auto")) {
		*out = 0;
		return 0;
	}
	if (dp_number(val, 1, SHARD_MAX, out) < 0) {
		fprintf(stderr, "datapath: --shards '%s': not a number in 1..%d, nor auto\n", val, SHARD_MAX);
		return -EINVAL;
	}
	return 0;
}

/* --OPT PATH whose folder does not exist: said, and true. */
static bool dp_folder_missing(const char *opt, const char *path)
{
	char dir[PATH_MAX];
	const char *slash;
	struct stat sb;

	if (!path || !(slash = strrchr(path, '/')) || slash == path ||
	    (size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
		return false;
	fprintf(stderr, "datapath: --%s %s: the folder %s %s (create it, or give a path in one that does)\n",
		opt, path, dir, stat(dir, &sb) == 0 ? "is not a folder" : "does not exist");
	return true;
}

/* An inherited fd number (--fd, --ledger-fd, ...): one that is open. */
static int dp_parse_fd(const char *opt, const char *val, int *out)
{
	unsigned int v;

	if (dp_parse_count(opt, val, 0, 1 << 20, &v) < 0)
		return -EINVAL;
	if (fcntl((int)v, F_GETFD) < 0) {
		fprintf(stderr, "datapath: --%s %u: not an open file descriptor\n", opt, v);
		return -EBADF;
	}
	*out = (int)v;
	return 0;
}

static int dp_parse(int argc, char **argv, struct dp_opts *o)
{
	static const struct option fixed[] = {
		{ "fd", required_argument, NULL, 'f' },
		{ "listen", required_argument, NULL, 'l' },
		{ "user", required_argument, NULL, 'u' },
		{ "control", required_argument, NULL, 'c' },
		{ "name", required_argument, NULL, 'n' },
		{ "flow-log", required_argument, NULL, 'O' },
		{ "flow-log-starts", no_argument, NULL, 'A' },
		{ "publish", required_argument, NULL, 'p' },
		{ "forward", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "tcp-cc", required_argument, NULL, 'T' },
		{ "tcp-ecn", required_argument, NULL, 'T' },
		{ "tcp-pacing", required_argument, NULL, 'T' },
		{ "egress-allow", required_argument, NULL, 'P' },
		{ "egress-deny", required_argument, NULL, 'P' },
		{ "ingress-allow", required_argument, NULL, 'P' },
		{ "ingress-deny", required_argument, NULL, 'P' },
		{ "name-ttl", required_argument, NULL, 'M' },
		{ "name-bindings", required_argument, NULL, 'M' },
		{ "max-deaths", required_argument, NULL, 'D' },
		{ "death-window", required_argument, NULL, 'W' },
		{ "no-io-uring", no_argument, NULL, 'U' },
		{ "no-rx-ring", no_argument, NULL, 'X' },
		{ "busy-poll", required_argument, NULL, 'B' },
		{ "nice", required_argument, NULL, 'N' },
		{ "shards", required_argument, NULL, 'S' },
		/* internal: how a supervisor starts its datapaths (supervise.c) */
		{ "worker", no_argument, NULL, 'w' },
		{ "ledger-fd", required_argument, NULL, 'G' },
		{ "control-fd", required_argument, NULL, 'C' },
		{ "flow-log-fd", required_argument, NULL, 'Q' },
		{ "listener-fd", required_argument, NULL, 'R' },
	};
	/* ours, then the resource caps' (limits.c), then the end */
	struct option lopts[sizeof(fixed) / sizeof(fixed[0]) + LIMITS_OPTIONS_MAX + 1] = { { 0 } };
	char err[1024];
	unsigned int forwards = 0, i;
	int c, li = 0, prev;

	o->fd = -1;
	o->ledger_fd = -1;
	o->control_fd = -1;
	o->flow_log_fd = -1;
	o->max_deaths = DP_MAX_DEATHS_DEFAULT;
	o->death_window_s = DP_DEATH_WINDOW_S_DEFAULT;
	o->busy_poll_us = DP_BUSY_POLL_US_DEFAULT;
	o->nice = DP_NICE_DEFAULT;
	o->strip = calloc((size_t)argc + 1, sizeof(*o->strip));
	if (!o->strip) {
		fprintf(stderr, "datapath: out of memory\n");
		return 1;
	}
	memcpy(lopts, fixed, sizeof(fixed));
	limits_options(lopts + sizeof(fixed) / sizeof(fixed[0]), LIMITS_OPTIONS_MAX);
	opterr = 0;	/* said below, as "datapath: ...", not under the program's path */
	for (prev = optind = 1; (c = getopt_long(argc, argv, ":h", lopts, &li)) != -1; prev = optind) {
		/* what the supervisor keeps to itself: the argv entries this option took */
		if (c == 'f' || c == 'l' || c == 'c' || c == 'O')
			for (i = (unsigned int)prev; i < (unsigned int)optind; i++)
				o->strip[i] = true;
		switch (c) {
		case 'L':
			if (limits_parse(&o->limits, lopts[li].name, optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "datapath: %s\n", err);
				return 2;
			}
			break;
		case 'T':
			if (tcp_settings_parse(&o->tcp_settings, lopts[li].name, optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "datapath: %s\n", err);
				return 2;
			}
			break;
		case 'M':
			if (policy_names_option(&o->policy, lopts[li].name, optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "datapath: %s\n", err);
				return 2;
			}
			break;
		case 'P':
			if (policy_add(&o->policy, lopts[li].name[0] == 'e' ? POLICY_EGRESS : POLICY_INGRESS,
				       strstr(lopts[li].name, "deny") ? POLICY_DENY : POLICY_ALLOW, optarg, err,
				       sizeof(err)) < 0) {
				fprintf(stderr, "datapath: %s\n", err);
				return 2;
			}
			break;
		case 'f':
			if (dp_parse_fd("fd", optarg, &o->fd) < 0)
				return 2;
			break;
		case 'D':
			if (dp_parse_count("max-deaths", optarg, 1, 1000, &o->max_deaths) < 0)
				return 2;
			break;
		case 'W':
			if (dp_parse_count("death-window", optarg, 1, 86400, &o->death_window_s) < 0)
				return 2;
			break;
		case 'w':
			o->worker = true;
			break;
		case 'U':
			link_uring_refuse("--no-io-uring");
			break;
		case 'X':
			link_packet_no_ring();
			break;
		case 'B':
			if (dp_parse_count("busy-poll", optarg, 0, DP_BUSY_POLL_US_MAX, &o->busy_poll_us) < 0)
				return 2;
			break;
		case 'N':
			if (dp_parse_count("nice", optarg, 0, DP_NICE_MAX, &o->nice) < 0)
				return 2;
			break;
		case 'S':
			if (dp_parse_shards(optarg, &o->shards) < 0)
				return 2;
			break;
		case 'G':
			if (dp_parse_fd("ledger-fd", optarg, &o->ledger_fd) < 0)
				return 2;
			break;
		case 'C':
			if (dp_parse_fd("control-fd", optarg, &o->control_fd) < 0)
				return 2;
			break;
		case 'Q':
			if (dp_parse_fd("flow-log-fd", optarg, &o->flow_log_fd) < 0)
				return 2;
			break;
		case 'A':
			o->flow_log_starts = true;
			break;
		case 'O':
			if (!optarg[0]) {
				fprintf(stderr, "datapath: --flow-log '': give the path of a file\n");
				return 2;
			}
			o->flow_log = optarg;
			break;
		case 'R':
			if (o->n_listen_fds >= DP_MAX_SVCS) {
				fprintf(stderr, "datapath: more than %d --listener-fd\n", DP_MAX_SVCS);
				return 2;
			}
			if (dp_parse_fd("listener-fd", optarg, &o->listen_fds[o->n_listen_fds]) < 0)
				return 2;
			o->n_listen_fds++;
			break;
		case 'l':
			o->listen = optarg;
			break;
		case 'u':
			o->user = optarg;
			break;
		case 'c':
			o->control = optarg;
			break;
		case 'n':
			o->name = optarg;
			break;
		case 'p':
		case 'F':
			if (o->n_specs >= DP_MAX_SVCS) {
				fprintf(stderr, "datapath: more than %d services\n", DP_MAX_SVCS);
				return 2;
			}
			if (svc_spec_parse(optarg, c == 'p' ? SVC_PUBLISH : SVC_FORWARD,
					   &o->specs[o->n_specs], err, sizeof(err)) < 0) {
				fprintf(stderr, "datapath: %s\n", err);
				return 2;
			}
			o->n_specs++;
			break;
		case 'h':
			dp_usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "datapath: %s option '%s'\n", c == ':' ? "missing the value of" : "unknown",
				argv[optind - 1]);
			dp_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "datapath: unexpected argument '%s'\n", argv[optind]);
		dp_usage(stderr);
		return 2;
	}
	if (policy_finish(&o->policy, err, sizeof(err)) < 0) {
		fprintf(stderr, "datapath: %s\n", err);
		return 2;
	}
	if ((o->fd >= 0) == (o->listen != NULL)) {
		fprintf(stderr, "datapath: exactly one of --fd N and --listen SOCKET is needed\n");
		return 2;
	}
	for (i = 0; i < o->n_specs; i++)
		forwards += o->specs[i].kind == SVC_FORWARD;
	if (!o->worker && (o->ledger_fd >= 0 || o->control_fd >= 0 || o->flow_log_fd >= 0 || o->n_listen_fds)) {
		fprintf(stderr, "datapath: --ledger-fd, --control-fd, --flow-log-fd and --listener-fd are for a datapath "
			"its supervisor starts (--worker)\n");
		return 2;
	}
	if (o->worker && (o->listen || o->control || o->flow_log || o->ledger_fd < 0 || o->n_listen_fds != forwards)) {
		fprintf(stderr, "datapath: --worker: its supervisor gives --fd, --ledger-fd, --control-fd "
			"instead of --control and one --listener-fd per --forward (%u for %u)\n",
			o->n_listen_fds, forwards);
		return 2;
	}
	/* before netsetup hands anything over: a folder that is not there fails now, not half-way */
	if (dp_folder_missing("control", o->control) || dp_folder_missing("listen", o->listen) ||
	    dp_folder_missing("flow-log", o->flow_log))
		return 2;
	return 0;
}

static void dp_signal(struct loop_fd *h, uint32_t events)
{
	struct dp *dp = h->ctx;
	struct signalfd_siginfo si;

	(void)events;
	if (read(h->fd, &si, sizeof(si)) == sizeof(si))
		loop_stop(dp->loop);
}

static void dp_proto_event(struct loop_fd *h, uint32_t events)
{
	struct dp *dp = h->ctx;
	char buf[256];

	if (events & EPOLLIN && recv(h->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		return;	/* nothing is expected after DONE; ignore */
	/* netsetup went away: keep serving, the configuration stays valid */
	fprintf(stderr, "datapath: netsetup closed its socket; still serving\n");
	loop_fd_del(dp->loop, h);
	close(dp->proto_fd);
	dp->proto_fd = -1;
}

/*
 * The datapath proper, as its supervisor starts it (--worker): the
 * configuration arrives on --fd from the supervisor, what needs privileges
 * was bound by it and is inherited.
 */
static int dp_worker(struct dp_opts *o)
{
	static struct dp dp;
	static struct ledger lg;
	static struct shards shards;
	static struct flowlog flowlog;
	struct shard_conf conf = { 0 };
	struct loop_fd sig_lfd;
	uint32_t done_seq = 0;
	bool configured = false;
	char err[1024] = "";
	sigset_t mask;
	int sfd = -1, ret, rc = 1;
	uint64_t mem_limit;
	unsigned int fwd = 0;
	unsigned int i, orphans;

	signal(SIGPIPE, SIG_IGN);
	/*
	 * Keep freed memory at the heap's top: with glibc's default (trim above
	 * 128 KiB), a 64 KiB UDP train freed there went back to the kernel (brk,
	 * and a TLB shootdown on every CPU) and the next one faulted its pages
	 * in again: 40 % of the datapath's time on inbound UDP at full rate
	 * (perf, docs/benchmarks.md). tcp_pool.c's slow pass still calls
	 * malloc_trim(), which gives back what stayed free. Fixed thresholds
	 * also keep glibc from moving the mmap() threshold by itself.
	 */
	mallopt(M_TRIM_THRESHOLD, DP_HEAP_KEEP);
	mallopt(M_MMAP_THRESHOLD, DP_HEAP_MMAP_FROM);
	/*
	 * Below the container's programs: the datapath works for them, and a
	 * receiver that waits behind it for a CPU overflows its socket (UDP at
	 * 1 Gbit/s lost 18-34 % at nice 0 and 2-4 % at 10 on 2 CPUs, while TCP
	 * moved by 0-5 %: docs/benchmarks.md). Set before the shards start,
	 * which inherit it.
	 */
	if (o->nice && setpriority(PRIO_PROCESS, 0, (int)o->nice) < 0) {
		snprintf(err, sizeof(err), "--nice %u: setpriority: %s", o->nice, strerror(errno));
		goto out_early;
	}
	dp.proto_fd = o->fd;
	dp.control_fd = -1;
	ret = ledger_map(o->ledger_fd, &lg, err, sizeof(err));
	if (ret < 0)
		goto out_early;
	/* held to a cgroup's memory limit: the caps left to their defaults fit it (limits.c) */
	if (limits_memory_limit(&mem_limit) == 0 && limits_fit_memory(&o->limits, mem_limit))
		fprintf(stderr, "datapath: a memory limit of %llu MiB: --max-conns %u, --max-timewait %u and "
			"--tcp-mem %lluM unless given\n", (unsigned long long)(mem_limit >> 20), o->limits.max_conns,
			o->limits.max_timewait, (unsigned long long)(o->limits.tcp_mem >> 20));
	conf.busy_poll_us = o->busy_poll_us;
	conf.policy = &o->policy;
	conf.ledger = &lg;
	/* a file, or a live view over the control socket: someone may take records */
	if (o->flow_log_fd >= 0 || o->control_fd >= 0) {
		ret = flowlog_init(&flowlog, o->flow_log_fd, o->name, 0);
		o->flow_log_fd = -1;	/* the flow log's now */
		if (ret < 0) {
			snprintf(err, sizeof(err), "the flow log: %s", strerror(-ret));
			goto out_early;
		}
		flowlog.starts = o->flow_log_starts;
		conf.flowlog = &flowlog;
		dp.flowlog = &flowlog;
	}
	conf.secret = lg.head->secret;
	conf.limits = o->limits;
	conf.tcp_settings = o->tcp_settings;
	ret = shards_init(&shards, &conf, err, sizeof(err));
	if (ret < 0)
		goto out_early;
	dp.loop = shards.sh[0]->loop;
	dp.name = o->name;
	dp.shards = &shards;
	ret = config_receive(&shards, dp.proto_fd, &done_seq, err, sizeof(err));
	if (ret < 0)
		goto out;
	configured = true;
	if (shards.n > 1 && o->n_specs && !shards.steered) {
		/* a forward's ports must land on its own shard: flowhash needs the secret */
		snprintf(err, sizeof(err), "--publish and --forward on %u shards need the steering secret, and "
			 "netsetup sent none: a netsetup of this release, or --shards 1", shards.n);
		ret = -EINVAL;
		goto out;
	}

	if (o->control_fd >= 0) {
		ret = control_adopt(&dp, o->control_fd);
		o->control_fd = -1;
		if (ret < 0) {
			snprintf(err, sizeof(err), "--control-fd: not a listening unix socket");
			goto out;
		}
	}
	for (i = 0; i < o->n_specs; i++) {
		int lfd = -1;

		if (o->specs[i].kind == SVC_FORWARD && fwd < o->n_listen_fds)
			lfd = o->listen_fds[fwd++];
		ret = shards_add_service(&shards, &o->specs[i], lfd, err, sizeof(err));
		if (ret < 0)
			goto out;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		snprintf(err, sizeof(err), "signalfd: %s", strerror(errno));
		goto out;
	}

	ret = privdrop(o->user, err, sizeof(err));
	if (ret < 0)
		goto out;
	/* the shards' threads wait at their gate; the filter binds them too */
	ret = shards_spawn(&shards, err, sizeof(err));
	if (ret < 0)
		goto out;
	/* its writer too: no thread can be made once the filter is on */
	if (dp.flowlog) {
		ret = flowlog_start(dp.flowlog);
		if (ret < 0) {
			snprintf(err, sizeof(err), "the flow log's writer: %s", strerror(-ret));
			goto out;
		}
	}
	/* the system call allow-list (seccomp.c), before the first packet; no
	 * io_uring may be made after it (link/uring.c) */
	link_uring_refuse("asked for after the system call filter");
	ret = dp_seccomp_install(err, sizeof(err));
	if (ret < 0)
		goto out;

	dp.start_ms = loop_now_ms(dp.loop);
	ret = shards_start(&shards);
	if (ret >= 0)
		ret = control_start(&dp);
	if (ret >= 0)
		ret = loop_fd_add(dp.loop, &sig_lfd, sfd, EPOLLIN, dp_signal, &dp);
	if (ret < 0) {
		snprintf(err, sizeof(err), "start: %s", strerror(-ret));
		goto out;
	}
	orphans = face_tcp_reset_orphans(face_of(&shards.sh[0]->st));
	ret = proto_send_ack(dp.proto_fd, done_seq);
	if (ret < 0) {
		snprintf(err, sizeof(err), "ACK of DONE to the supervisor: %s", strerror(-ret));
		configured = false;
		goto out;
	}
	loop_fd_add(dp.loop, &dp.proto_lfd, dp.proto_fd, EPOLLIN | EPOLLRDHUP, dp_proto_event, &dp);
	{
		/* one write: netsetup and the supervisor log to the same file */
		char in[32] = "", reset[80] = "";

		if (shards.n > 1)
			snprintf(in, sizeof(in), " in %u shards", shards.n);
		if (orphans)
			snprintf(reset, sizeof(reset), "; resetting %u connection(s) the last datapath left",
				 orphans);
		fprintf(stderr, "datapath: serving %u link(s), %u service(s) as uid %u%s%s\n",
			shards.sh[0]->st.n_links, shards.n_svcs, (unsigned int)geteuid(), in, reset);
	}
	for (i = 0; i < shards.n; i++)
		stack_links_flush(&shards.sh[i]->st);
	shards_go(&shards);
	ret = loop_run(dp.loop);
	if (ret < 0) {
		snprintf(err, sizeof(err), "event loop: %s", strerror(-ret));
		configured = false;
		goto out;
	}
	/* asked to stop: the container and the remote ends hear a RST now */
	shards_stop(&shards);
	face_tcp_stop(face_of(&shards.sh[0]->st));
	stack_links_flush(&shards.sh[0]->st);
	rc = 0;
out:
	if (rc) {
		fprintf(stderr, "datapath: %s\n", err);
		if (configured && dp.proto_fd >= 0)
			proto_send_error(dp.proto_fd, done_seq, EINVAL, "datapath: %s", err);
		err[0] = '\0';	/* said */
	}
	shards_stop(&shards);
	control_close(&dp);
	if (sfd >= 0)
		close(sfd);
	shards_free(&shards);	/* the last records (flows that ended with the stop) go first */
	flowlog_fini(&flowlog);
	dp.flowlog = NULL;
	dp.shards = NULL;
	pkt_pool_drain();
out_early:
	if (rc && err[0])
		fprintf(stderr, "datapath: %s\n", err);
	for (i = fwd; i < o->n_listen_fds; i++)
		close(o->listen_fds[i]);
	if (o->control_fd >= 0)
		close(o->control_fd);
	if (o->flow_log_fd >= 0)
		close(o->flow_log_fd);
	flowlog_fini(&flowlog);
	if (dp.proto_fd >= 0)
		close(dp.proto_fd);
	ledger_unmap(&lg);
	if (!rc)
		fprintf(stderr, "datapath: stopped\n");
	return rc;
}

int main(int argc, char **argv)
{
	static struct dp_opts opts;
	int ret;

	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("datapath %s (protocol %d.%d)\n", SANDNET_VERSION, PROTO_VERSION_MAX, PROTO_VERSION_MINOR);
		return 0;
	}
	/* a subcommand's argv[0] is the name getopt_long() puts before its complaints */
	if (argc > 1 && !strcmp(argv[1], "stats"))
		return dp_stats_main(argc - 1, (argv[1] = "datapath stats", argv + 1));
	if (argc > 1 && !strcmp(argv[1], "metrics"))
		return metrics_main(argc - 1, (argv[1] = "datapath metrics", argv + 1));
	if (argc > 1 && !strcmp(argv[1], "ss"))
		return dp_ss_main(argc - 1, (argv[1] = "datapath ss", argv + 1));
	if (argc > 1 && !strcmp(argv[1], "flows"))
		return dp_flows_main(argc - 1, (argv[1] = "datapath flows", argv + 1));
	ret = dp_parse(argc, argv, &opts);
	if (!ret)
		ret = opts.worker ? dp_worker(&opts) : supervise_main(&opts, argc, argv);
	policy_release(&opts.policy);
	free(opts.strip);
	return ret;
}
