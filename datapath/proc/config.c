// SPDX-License-Identifier: MIT
/*
 * config.c - receive the configuration netsetup sends (docs/protocol.md)
 *
 * Theory of operation: we are the responder. proto_handshake() answers
 * netsetup's HELLO with the version we choose. Each LINK becomes a struct
 * link in the stack with its addresses, routes and permanent neighbours (and,
 * with a FACE, the container face's TUN link, face.c), and
 * is answered with ACK, or ERROR with the reason when we cannot serve it (its
 * fds are then closed by proto_msg_free()). DONE ends the intake; its ACK is
 * sent by main() once the stack is started and privileges are dropped, so
 * that netsetup's "ready" means ready. A malformed message was already
 * answered by proto_recv(); any error here ends the intake: a half
 * configured datapath serves nobody.
 *
 * With --listen (for `netsetup attach`), config_accept() binds a unix
 * SOCK_SEQPACKET socket, accepts exactly one connection, and closes the
 * listener and removes its path.
 *
 * The resource caps are limits.c's.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/if_packet.h>

#include "datapath/proc/proc.h"
#include "datapath/face/face.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/proc/shard.h"
#include "datapath/tcp/tcp.h"

/* One signal off @stop_fd (a signalfd): SIGTERM or SIGINT, a stop? */
static bool config_stop_asked(int stop_fd)
{
	struct signalfd_siginfo si;

	return read(stop_fd, &si, sizeof(si)) == sizeof(si) &&
	       (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT);
}

/**
 * config_accept() - wait for netsetup on a listening socket at @path
 * @path:	filesystem path for the socket (must not exist)
 * @stop_fd:	a signalfd: SIGTERM or SIGINT on it stops the wait; -1 for none
 * @fdp:	the accepted connection
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0, -ECANCELED when stopped first, or negative errno.
 */
int config_accept(const char *path, int stop_fd, int *fdp, char *err, size_t err_len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct pollfd p[2];
	int lfd, fd = -1, ret;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, err_len, "--listen %s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		ret = -errno;
		snprintf(err, err_len, "--listen %s: socket: %s", path, strerror(errno));
		return ret;
	}
	if (bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(lfd, 1) < 0) {
		ret = -errno;
		snprintf(err, err_len, "--listen %s: %s%s", path, strerror(errno),
			 ret == -EADDRINUSE ? " (another datapath waits there, or one left it: remove it)" : "");
		close(lfd);
		return ret;
	}
	/* netsetup, or a stop (SIGTERM, SIGINT: @stop_fd) while we wait for it */
	p[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = stop_fd, .events = POLLIN };
	for (;;) {
		if (poll(p, stop_fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			snprintf(err, err_len, "--listen %s: poll: %s", path, strerror(errno));
			break;
		}
		if ((p[1].revents & POLLIN) && config_stop_asked(stop_fd)) {
			ret = -ECANCELED;
			snprintf(err, err_len, "--listen %s: stopped before netsetup connected", path);
			break;
		}
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0 || (errno != EINTR && errno != EAGAIN)) {
			ret = fd < 0 ? -errno : 0;
			if (fd < 0)
				snprintf(err, err_len, "--listen %s: accept: %s", path, strerror(errno));
			break;
		}
	}
	close(lfd);
	unlink(path);
	*fdp = fd;
	return ret;
}

static int config_link(struct stack *st, struct proto_link *pl, char *err, size_t err_len)
{
	struct link *l;
	unsigned int i;
	int ret;

	if (stack_link_by_ifindex(st, pl->ifindex)) {
		snprintf(err, err_len, "link %s: ifindex %u sent twice", pl->ifname, pl->ifindex);
		return -EEXIST;
	}
	l = link_packet_new(st->loop, pl, err, err_len);
	if (!l)
		return -EINVAL;
	ret = stack_add_link(st, l);
	if (ret < 0) {
		snprintf(err, err_len, "link %s: too many links", pl->ifname);
		link_free(l);
		return ret;
	}
	if (pl->has_face) {
		/* the container face (face.c): the TUN fd moves to its link */
		ret = face_add(st, l, &pl->face, err, err_len);
		if (ret < 0)
			return ret;
	}
	for (i = 0; i < pl->n_routes; i++) {
		ret = route_add(st, l, &pl->routes[i]);
		if (ret < 0 && ret != -EEXIST) {
			snprintf(err, err_len, "link %s: route %u: %s", pl->ifname, i, strerror(-ret));
			return ret;
		}
	}
	for (i = 0; i < pl->n_neighs; i++) {
		ret = neigh_add_permanent(st, l, &pl->neighs[i]);
		if (ret < 0) {
			snprintf(err, err_len, "link %s: neighbour %u: %s", pl->ifname, i,
				 strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/*
 * How many shards a LINK is for: its channels when netsetup steered them
 * (the kernel says the group is PACKET_FANOUT_EBPF), else 1. A face then
 * brings as many TUN queues.
 */
static int config_link_shards(const struct proto_link *pl, char *err, size_t err_len)
{
	int val = 0;
	socklen_t len = sizeof(val);
	unsigned int n = 1;

	if (pl->n_channels > 1 &&
	    getsockopt(pl->channel_fds[0], SOL_PACKET, PACKET_FANOUT, &val, &len) == 0 &&
	    ((unsigned int)val >> 16 & 0xff) == PACKET_FANOUT_EBPF)
		n = pl->n_channels;
	if (pl->has_face && pl->face.n_fds != n) {
		snprintf(err, err_len, "link %s: %u TUN queues for %u shard%s", pl->ifname, pl->face.n_fds, n,
			 n == 1 ? " (its channels are not steered)" : "s");
		return -EINVAL;
	}
	if (n > SHARD_MAX) {
		snprintf(err, err_len, "link %s: %u shards, at most %d", pl->ifname, n, SHARD_MAX);
		return -E2BIG;
	}
	return (int)n;
}

/*
 * A steered LINK: shard i gets channel i and TUN queue i, and the addresses,
 * routes and neighbours all get. The fds move out of @pl as they are given.
 */
static int config_link_sharded(struct shards *sh, struct proto_link *pl, char *err, size_t err_len)
{
	struct proto_link *part = malloc(sizeof(*part));
	unsigned int i;
	int ret = 0;

	if (!part) {
		snprintf(err, err_len, "link %s: out of memory", pl->ifname);
		return -ENOMEM;
	}
	for (i = 0; i < sh->n && ret >= 0; i++) {
		*part = *pl;
		part->n_channels = 1;
		part->channel_fds[0] = pl->channel_fds[i];
		pl->channel_fds[i] = -1;
		if (pl->has_face) {
			part->face.n_fds = 1;
			part->face.fds[0] = pl->face.fds[i];
			pl->face.fds[i] = -1;
			/* the container's counters: shard 0's face reads them */
			part->face.n_netstat = i ? 0 : pl->face.n_netstat;
			pl->face.n_netstat = 0;
		}
		ret = config_link(&sh->sh[i]->st, part, err, err_len);
		/* what config_link() did not take is closed here */
		proto_fds_close(part->channel_fds, part->n_channels);
		if (part->has_face) {
			proto_fds_close(part->face.fds, part->face.n_fds);
			proto_fds_close(part->face.netstat_fds, part->face.n_netstat);
		}
	}
	free(part);
	return ret;
}

/**
 * config_receive() - handshake, then LINKs until DONE
 * @sh:		the shards: the first LINK says how many (shards_grow()),
 *		each gets its part of every link
 * @fd:		connected SOCK_SEQPACKET socket to netsetup
 * @done_seq:	sequence number of DONE, to ACK once ready
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0 after DONE, or negative errno (ERROR was sent when it helps).
 */
int config_receive(struct shards *sh, int fd, uint32_t *done_seq, char *err, size_t err_len)
{
	struct stack *st = &sh->sh[0]->st;
	bool first = true;
	int n;
	struct proto_why why = { 0 };
	struct proto_msg *msg = NULL;
	uint8_t version;
	int ret;

	ret = proto_handshake(fd, false, DP_SOFTWARE, 0, &version, NULL, &why);
	if (ret < 0) {
		snprintf(err, err_len, "handshake with netsetup: %s", why.text);
		return ret;
	}
	for (;;) {
		ret = proto_recv(fd, &msg, &why);
		if (ret == 0) {
			snprintf(err, err_len, "netsetup closed the connection before DONE");
			return -ECONNRESET;
		}
		if (ret < 0) {
			snprintf(err, err_len, "configuration from netsetup: %s", why.text);
			return ret;
		}
		switch (msg->type) {
		case PROTO_MSG_LINK:
			ret = n = config_link_shards(&msg->link, err, err_len);
			if (ret >= 0 && first && n > 1) {
				ret = shards_grow(sh, (unsigned int)n, err, err_len);
				if (ret >= 0 && msg->link.has_steer_seed)
					shards_steer(sh, msg->link.steer_seed);
			}
			else if (ret >= 0 && (unsigned int)n != sh->n) {
				snprintf(err, err_len, "link %s: steered to %d shard%s, the first link to %u",
					 msg->link.ifname, n, n == 1 ? "" : "s", sh->n);
				ret = -EINVAL;
			}
			first = false;
			if (ret >= 0)
				ret = sh->n > 1 ? config_link_sharded(sh, &msg->link, err, err_len)
						: config_link(st, &msg->link, err, err_len);
			if (ret < 0)
				proto_send_error(fd, msg->seq, -ret, "datapath: %s", err);
			else
				ret = proto_send_ack(fd, msg->seq);
			break;
		case PROTO_MSG_DONE:
			if (!st->n_links) {
				snprintf(err, err_len, "netsetup sent DONE without any LINK");
				ret = -EINVAL;
				proto_send_error(fd, msg->seq, EINVAL, "datapath: %s", err);
				break;
			}
			*done_seq = msg->seq;
			proto_msg_free(msg);
			return 0;
		default:
			snprintf(err, err_len, "unexpected %s during configuration",
				 proto_msg_type_name(msg->type));
			ret = -EPROTO;
			proto_send_error(fd, msg->seq, EPROTO, "datapath: %s", err);
			break;
		}
		proto_msg_free(msg);
		msg = NULL;
		if (ret < 0)
			return ret;
	}
}
