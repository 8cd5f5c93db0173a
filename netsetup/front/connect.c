// SPDX-License-Identifier: MIT
/*
 * connect.c - `netsetup connect`, the client of `netsetup serve` (serve.c)
 *
 * Theory of operation: the client opens the namespace as the caller's own
 * user (opening it is the proof of access), finds the datapath program
 * (dpexec.c) before anything is asked, connects to the daemon's socket,
 * sends ATTACH with the netns fd and what it asks for (link, GSO mode,
 * channels, face), and waits for ACK or ERROR. On ERROR it prints the
 * daemon's reason; on ACK it execs `DATAPATH --fd N ARGS...` on the very
 * same socket, so that the datapath receives its configuration from the
 * daemon exactly as from `netsetup run`. A runtime can do the same.
 * The options it shares with the other front ends are checked by opts.c's
 * ns_opt_set() and ns_shards_check(); --gso takes no "auto" here: left out,
 * the daemon's policy decides whether netsetup may choose.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "netsetup/front/front.h"

/**
 * ns_connect_main() - `netsetup connect`: ask serve to attach, then be the datapath
 * @argc:	arguments from "connect" on
 * @argv:	argv[0] is "connect"
 * @e:		error message
 *
 * Return: does not return on success (execs the datapath); 0 after --help;
 * -errno otherwise (-EPERM or -EINVAL: the daemon refused, @e says why; a
 * malformed command line sets @e->usage).
 */
int ns_connect_main(int argc, char **argv, struct ns_err *e)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "netns", required_argument, NULL, 'n' },
		{ "pid", required_argument, NULL, 'p' },
		{ "iface", required_argument, NULL, 'i' },
		{ "gso", required_argument, NULL, 'g' },
		{ "channels", required_argument, NULL, 'c' },
		{ "face", required_argument, NULL, NS_OPT_GETOPT(NS_OPT_FACE) },
		{ "shards", required_argument, NULL, NS_OPT_GETOPT(NS_OPT_SHARDS) },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct proto_attach req = { .netns_fd = -1 };
	const char *sock_path = NS_SERVE_SOCKET, *netns = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct proto_why why = { 0 };
	struct proto_msg *msg = NULL;
	char nsbuf[64], fdbuf[16], path[PATH_MAX], **dargv;
	int opt, longindex, sock = -1, err, i, n, mode;
	struct ns_opts o;
	long v;
	char *end;

	ns_opts_init(&o);
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+:h", opts, &longindex)) != -1) {
		err = ns_opt_getopt(&o, opts, opt, longindex, optarg, e);
		if (err == 1) {		/* not a shared option (opts.c): ours */
			err = 0;
			switch (opt) {
			case 'h':
				fputs(ns_serve_usage, stdout);
				return 0;
			case 's':
				sock_path = optarg;
				break;
			case 'n':
				netns = optarg;
				break;
			case 'p':
				v = strtol(optarg, &end, 10);
				if (*end || v <= 1 || v > INT_MAX) {
					ns_err_usage(e, "--pid '%s': not a process id", optarg);
					return -EINVAL;
				}
				snprintf(nsbuf, sizeof(nsbuf), "/proc/%ld/ns/net", v);
				netns = nsbuf;
				break;
			case 'i':
				o.n_ifaces = 0;		/* ATTACH names one link: the last --iface */
				err = ns_opt_set(&o, NS_OPT_IFACE, "--iface", optarg, e);
				break;
			case 'g':
				mode = proto_gso_mode_parse(optarg);
				if (mode < 0) {
					ns_err_usage(e, "--gso '%s': expected hw, sw or off (leave it out for auto)", optarg);
					return -EINVAL;
				}
				req.has_gso_mode = true;
				req.gso_mode = mode;
				break;
			case 'c':
				err = ns_opt_set(&o, NS_OPT_CHANNELS, "--channels", optarg, e);
				req.channels = o.channels;	/* none given: absent, which ATTACH reads as one */
				break;
			default:
				return ns_opt_refuse(e, opt, argv[optind - 1], ns_serve_usage);
			}
		}
		if (err) {
			e->usage = true;
			return err;
		}
	}
	if (!netns || optind >= argc) {
		ns_err_usage(e, "%s\n%s", !netns ? "which namespace? give --netns PATH or --pid PID"
					       : "no datapath command after '--'", ns_serve_usage);
		return -EINVAL;
	}
	if (ns_shards_check(&o, "--channels", "--shards", e)) {
		e->usage = true;
		return -EINVAL;
	}
	if (o.n_ifaces)
		strcpy(req.ifname, o.ifaces[0]);
	req.shards = o.shards;
	req.no_face = o.no_face;
	/* Found before serve attaches anything: a missing datapath changes nothing. */
	err = ns_datapath_find(argv[optind], NULL, path, sizeof(path), e);
	if (err)
		return err;
	req.netns_fd = open(netns, O_RDONLY | O_CLOEXEC);
	if (req.netns_fd < 0) {
		err = -errno;
		ns_err_set(e, "netns %s: %s", netns, strerror(errno));
		return err;
	}
	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		ns_err_set(e, "socket %s: path too long", sock_path);
		err = -ENAMETOOLONG;
		goto out;
	}
	strcpy(sa.sun_path, sock_path);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		ns_err_set(e, "netsetup serve at %s: %s", sock_path, strerror(errno));
		goto out;
	}
	err = proto_send_attach(sock, 1, &req);
	if (err) {
		ns_err_set(e, "ATTACH: send: %s", strerror(-err));
		goto out;
	}
	err = proto_recv(sock, &msg, &why);
	if (err <= 0) {
		ns_err_set(e, "netsetup serve: %s", err ? why.text : "closed the connection");
		err = err ? err : -ECONNRESET;
		goto out;
	}
	if (msg->type == PROTO_MSG_ERROR) {
		ns_err_set(e, "%s", msg->error.message);
		err = -msg->error.err;
		goto out;
	}
	if (msg->type != PROTO_MSG_ACK) {
		ns_err_set(e, "netsetup serve answered %s, expected ACK or ERROR",
			   proto_msg_type_name(msg->type));
		err = -EPROTO;
		goto out;
	}
	/* Accepted: the rest of the conversation is the datapath's. */
	n = argc - optind;
	dargv = calloc(n + 3, sizeof(*dargv));
	if (!dargv) {
		err = -ENOMEM;
		ns_err_set(e, "out of memory");
		goto out;
	}
	snprintf(fdbuf, sizeof(fdbuf), "%d", sock);
	dargv[0] = argv[optind];
	dargv[1] = "--fd";
	dargv[2] = fdbuf;
	for (i = 1; i < n; i++)
		dargv[i + 2] = argv[optind + i];
	fcntl(sock, F_SETFD, 0);
	close(req.netns_fd);
	req.netns_fd = -1;
	proto_msg_free(msg);
	msg = NULL;
	fflush(NULL);
	execv(path, dargv);
	err = -errno;
	ns_err_set(e, "cannot execute %s: %s", path, strerror(errno));
	free(dargv);
out:
	proto_msg_free(msg);
	if (sock >= 0)
		close(sock);
	if (req.netns_fd >= 0)
		close(req.netns_fd);
	return err;
}
