// SPDX-License-Identifier: MIT
/*
 * main.c - the datapath process: options, start-up order, the loop
 *
 * Start-up order, each step failing with a message that names the thing and
 * the reason (and, once netsetup is connected, an ERROR to it):
 *   1. parse options; every --publish/--forward SPEC and resource cap is
 *      checked first; the caps go to the stack as soon as it exists
 *   2. receive the configuration (--fd N from `netsetup run`, or --listen)
 *   3. bind what needs privileges: the control socket, forward listeners
 *   4. drop every privilege (privdrop.c): no packet is touched before
 *   5. start the stack (gratuitous ARP, DAD), services, control socket
 *   6. ACK netsetup's DONE: from now on the container is served
 *   7. run the loop until SIGTERM/SIGINT, then release everything
 *
 * `datapath stats --control SOCKET [--json]` is the client side of the
 * control socket (control.c); `datapath stats --all` asks every datapath
 * whose socket is in /run/sandnet for its summary (one per container);
 * `datapath metrics --listen ADDRESS:PORT` serves those summaries to
 * Prometheus (metrics.c).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "datapath/datapath.h"
#include "datapath/face/face.h"
#include "datapath/metrics.h"
#include "datapath/policy.h"
#include "datapath/seccomp.h"

static const char usage[] =
	"usage: datapath [--listen SOCKET | --fd N] [--user USER] [--control SOCKET]\n"
	"                [--publish SPEC]... [--forward SPEC]... [POLICY]... [CAPS]\n"
	"       datapath stats (--control SOCKET | --all [--dir DIR]) [--json]\n"
	"       datapath metrics --listen ADDRESS:PORT [--dir DIR]   (Prometheus exporter)\n"
	"\n"
	"  --fd N            read the configuration from fd N (netsetup run passes it)\n"
	"  --listen SOCKET   accept one netsetup connection on SOCKET (netsetup attach)\n"
	"  --user USER       run as USER after start-up (default: nobody)\n"
	"  --control SOCKET  serve statistics on this unix socket\n"
	"  --name NAME       who this datapath serves, for stats (netsetup gives cni:ID:IFNAME)\n"
	"  --publish udp:[ADDR:]PORT=TARGET   datagrams to the container's PORT go to\n"
	"                    TARGET (HOST:PORT or unix:/path); replies come back\n"
	"  --forward udp:LISTEN=REMOTE        datagrams to LISTEN (HOST:PORT or\n"
	"                    unix:/path) go to REMOTE (ADDR:PORT) through the stack\n"
	"  --publish tcp:[ADDR:]PORT=TARGET   connections to the container's PORT are\n"
	"                    joined to new connections to TARGET (HOST:PORT or unix:/path)\n"
	"  --forward tcp:LISTEN=REMOTE        connections to LISTEN (HOST:PORT or\n"
	"                    unix:/path) are joined to connections to REMOTE (ADDR:PORT)\n"
	"policy for the container face, first match wins, then deny of the cloud\n"
	"metadata addresses, then allow (docs/face.md; RULE: [tcp:|udp:|icmp:]NETWORK[:PORTS],\n"
	"NETWORK an address, a CIDR or any, IPv6 in [] before :PORTS):\n"
	"  --egress-allow RULE, --egress-deny RULE    what the container may reach\n"
	"  --ingress-allow RULE, --ingress-deny RULE  who may reach the container\n"
	"resource caps (docs/security.md; BYTES may end in K, M or G):\n"
	"  --max-conns N       TCP connections, every state (default 65536)\n"
	"  --max-half-open N   SYN-RECEIVED connections; then SYN cookies (default 1024)\n"
	"  --max-timewait N    TIME-WAIT connections; then the oldest goes (default 4096)\n"
	"  --tcp-mem BYTES     TCP send+receive buffers in all; then no growth (default 256M)\n"
	"  --reasm-mem BYTES   IP fragments held for reassembly (default 4M)\n"
	"  --max-neigh N       neighbour (ARP/NDP) entries, at most 512 (default 512)\n"
	"  --max-udp-flows N   UDP service flows in all; then the least recently used\n"
	"                      goes (default 4096)\n"
	"  --max-udp-flows-per-source N  --publish udp flows per source address; then\n"
	"                      that source's least recently used goes (default 256, 0 = off)\n"
	"See datapath(8).\n";

struct dp_opts {
	int fd;
	const char *listen;
	const char *user;
	const char *control;
	const char *name;
	unsigned int n_specs;
	struct svc_spec specs[DP_MAX_SVCS];
	struct stack_limits limits;
	struct policy policy;
};

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
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
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
		n = control_client_all(dir, json, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "datapath stats: %s\n", err);
			return 1;
		}
		if (!n && !json)
			printf("no datapath has a control socket in %s\n", dir);
		return 0;
	}
	if (control_client(control, json, err, sizeof(err)) < 0) {
		fprintf(stderr, "datapath stats: %s\n", err);
		return 1;
	}
	return 0;
}

static int dp_parse(int argc, char **argv, struct dp_opts *o)
{
	static const struct option lopts[] = {
		{ "fd", required_argument, NULL, 'f' },
		{ "listen", required_argument, NULL, 'l' },
		{ "user", required_argument, NULL, 'u' },
		{ "control", required_argument, NULL, 'c' },
		{ "name", required_argument, NULL, 'n' },
		{ "publish", required_argument, NULL, 'p' },
		{ "forward", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "max-conns", required_argument, NULL, 'L' },
		{ "max-half-open", required_argument, NULL, 'L' },
		{ "max-timewait", required_argument, NULL, 'L' },
		{ "tcp-mem", required_argument, NULL, 'L' },
		{ "reasm-mem", required_argument, NULL, 'L' },
		{ "max-neigh", required_argument, NULL, 'L' },
		{ "max-udp-flows", required_argument, NULL, 'L' },
		{ "max-udp-flows-per-source", required_argument, NULL, 'L' },
		{ "egress-allow", required_argument, NULL, 'P' },
		{ "egress-deny", required_argument, NULL, 'P' },
		{ "ingress-allow", required_argument, NULL, 'P' },
		{ "ingress-deny", required_argument, NULL, 'P' },
		{ 0 }
	};
	char err[1024];
	char *end;
	int c, li = 0;

	o->fd = -1;
	while ((c = getopt_long(argc, argv, "h", lopts, &li)) != -1) {
		switch (c) {
		case 'L':
			if (limits_parse(&o->limits, lopts[li].name, optarg, err, sizeof(err)) < 0) {
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
			errno = 0;
			o->fd = (int)strtol(optarg, &end, 10);
			if (*end || errno || o->fd < 0) {
				fprintf(stderr, "datapath: --fd %s: not a file descriptor number\n", optarg);
				return 2;
			}
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
			fputs(usage, stdout);
			exit(0);
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "datapath: unexpected argument '%s'\n%s", argv[optind], usage);
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

/* The end of a turn, before the stack flushes its links (stack_turn_end()). */
static void dp_turn_end(void *ctx)
{
	(void)ctx;
	svc_udp_flush();
}

int main(int argc, char **argv)
{
	static struct dp_opts opts;
	static struct dp dp;
	struct loop_fd sig_lfd;
	uint32_t done_seq = 0;
	bool configured = false;
	char err[1024] = "";
	sigset_t mask;
	int sfd = -1, ret, rc = 1;
	unsigned int i;

	if (argc > 1 && !strcmp(argv[1], "stats"))
		return dp_stats_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "metrics"))
		return metrics_main(argc - 1, argv + 1);
	ret = dp_parse(argc, argv, &opts);
	if (ret)
		return ret;
	signal(SIGPIPE, SIG_IGN);
	dp.proto_fd = -1;
	dp.control_fd = -1;
	dp.loop = loop_new(false);
	if (!dp.loop) {
		fprintf(stderr, "datapath: epoll: %s\n", strerror(errno));
		return 1;
	}
	ret = stack_init(&dp.st, dp.loop);
	if (ret < 0) {
		snprintf(err, sizeof(err), "stack: %s", strerror(-ret));
		goto out;
	}
	ret = stack_on_turn_end(&dp.st, dp_turn_end, &dp);
	if (ret < 0) {
		snprintf(err, sizeof(err), "stack: %s", strerror(-ret));
		goto out;
	}
	dp.st.policy = &opts.policy;
	dp.name = opts.name;
	ret = limits_apply(&dp.st, &opts.limits);
	if (ret < 0) {
		snprintf(err, sizeof(err), "resource caps: %s", strerror(-ret));
		goto out;
	}

	if (opts.listen) {
		ret = config_accept(opts.listen, &dp.proto_fd, err, sizeof(err));
		if (ret < 0)
			goto out;
	} else {
		dp.proto_fd = opts.fd;
	}
	ret = config_receive(&dp.st, dp.proto_fd, &done_seq, err, sizeof(err));
	if (ret < 0)
		goto out;
	configured = true;

	if (opts.control) {
		ret = control_open(&dp, opts.control, err, sizeof(err));
		if (ret < 0)
			goto out;
	}
	for (i = 0; i < opts.n_specs; i++) {
		dp.svcs[dp.n_svcs] = svc_new(&dp.st, &opts.specs[i], err, sizeof(err));
		if (!dp.svcs[dp.n_svcs])
			goto out;
		dp.n_svcs++;
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

	ret = privdrop(opts.user, err, sizeof(err));
	if (ret < 0)
		goto out;
	/* the system call allow-list (seccomp.c), before the first packet */
	ret = dp_seccomp_install(err, sizeof(err));
	if (ret < 0)
		goto out;

	dp.start_ms = loop_now_ms(dp.loop);
	ret = stack_start(&dp.st);
	if (ret >= 0)
		ret = face_start(dp.st.face);
	for (i = 0; ret >= 0 && i < dp.n_svcs; i++)
		ret = svc_start(dp.svcs[i]);
	if (ret >= 0)
		ret = control_start(&dp);
	if (ret >= 0)
		ret = loop_fd_add(dp.loop, &sig_lfd, sfd, EPOLLIN, dp_signal, &dp);
	if (ret < 0) {
		snprintf(err, sizeof(err), "start: %s", strerror(-ret));
		goto out;
	}
	ret = proto_send_ack(dp.proto_fd, done_seq);
	if (ret < 0) {
		snprintf(err, sizeof(err), "ACK of DONE to netsetup: %s", strerror(-ret));
		configured = false;
		goto out;
	}
	loop_fd_add(dp.loop, &dp.proto_lfd, dp.proto_fd, EPOLLIN | EPOLLRDHUP, dp_proto_event, &dp);
	fprintf(stderr, "datapath: serving %u link(s), %u service(s) as uid %u\n", dp.st.n_links,
		dp.n_svcs, (unsigned int)geteuid());
	stack_links_flush(&dp.st, false);
	ret = loop_run(dp.loop);
	if (ret < 0) {
		snprintf(err, sizeof(err), "event loop: %s", strerror(-ret));
		configured = false;
		goto out;
	}
	rc = 0;
out:
	if (rc) {
		fprintf(stderr, "datapath: %s\n", err);
		if (configured && dp.proto_fd >= 0)
			proto_send_error(dp.proto_fd, done_seq, EINVAL, "datapath: %s", err);
	}
	for (i = 0; i < dp.n_svcs; i++)
		svc_free(dp.svcs[i]);
	control_close(&dp);
	stack_fini(&dp.st);
	if (sfd >= 0)
		close(sfd);
	if (dp.proto_fd >= 0)
		close(dp.proto_fd);
	loop_free(dp.loop);
	pkt_pool_drain();
	if (!rc)
		fprintf(stderr, "datapath: stopped\n");
	return rc;
}
