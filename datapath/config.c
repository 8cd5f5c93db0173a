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
 * The resource caps (--max-conns, --max-half-open, --max-timewait,
 * --tcp-mem, --reasm-mem, --max-neigh, --max-udp-flows,
 * --max-udp-flows-per-source; docs/security.md) are parsed by
 * config_limit_parse() and given to the stack by config_limits_apply()
 * before the configuration arrives, so permanent neighbours count too.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "datapath/datapath.h"
#include "datapath/face/face.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/tcp/tcp.h"

/**
 * config_accept() - wait for netsetup on a listening socket at @path
 * @path:	filesystem path for the socket (must not exist)
 * @fdp:	the accepted connection
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0 or negative errno.
 */
int config_accept(const char *path, int *fdp, char *err, size_t err_len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int lfd, fd, ret;

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
		snprintf(err, err_len, "--listen %s: %s", path, strerror(errno));
		close(lfd);
		return ret;
	}
	do {
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	ret = fd < 0 ? -errno : 0;
	if (fd < 0)
		snprintf(err, err_len, "--listen %s: accept: %s", path, strerror(errno));
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
	l = link_packet_new(st, pl, err, err_len);
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

/**
 * config_receive() - handshake, then LINKs until DONE
 * @st:		stack that receives the links
 * @fd:		connected SOCK_SEQPACKET socket to netsetup
 * @done_seq:	sequence number of DONE, to ACK once ready
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0 after DONE, or negative errno (ERROR was sent when it helps).
 */
int config_receive(struct stack *st, int fd, uint32_t *done_seq, char *err, size_t err_len)
{
	struct proto_why why = { 0 };
	struct proto_msg *msg = NULL;
	uint8_t version;
	int ret;

	ret = proto_handshake(fd, false, DP_SOFTWARE, &version, NULL, &why);
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
			ret = config_link(st, &msg->link, err, err_len);
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

/* One cap: its option, where it goes, its range, whether K/M/G are allowed. */
struct config_limit {
	const char *opt;
	size_t off;
	bool wide;		/* uint64_t, else uint32_t */
	uint64_t min, max;
	bool bytes;
	bool zero_off;		/* 0 means no cap: stored as SVC_UDP_NO_CAP */
};

#define CL32(f) offsetof(struct stack_limits, f), false
#define CL64(f) offsetof(struct stack_limits, f), true
static const struct config_limit config_limits[] = {
	{ "max-conns", CL32(max_conns), 16, 1u << 22, false, false },
	{ "max-half-open", CL32(max_half_open), 1, 1u << 20, false, false },
	{ "max-timewait", CL32(max_timewait), 1, 1u << 22, false, false },
	{ "tcp-mem", CL64(tcp_mem), 1u << 20, 1ull << 40, true, false },
	{ "reasm-mem", CL64(reasm_mem), 128u << 10, 1ull << 32, true, false },
	{ "max-neigh", CL32(neigh_max), 4, NEIGH_MAX, false, false },
	{ "max-udp-flows", CL32(udp_flows), 1, 1u << 20, false, false },
	{ "max-udp-flows-per-source", CL32(udp_flows_per_source), 0, 1u << 20, false, true },
};

/**
 * config_limit_parse() - one resource cap option
 * @lim:	where the value goes
 * @opt:	the option's name without "--" (e.g. "tcp-mem")
 * @val:	its argument: a decimal number; byte sizes take K, M or G (1024s)
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0, -ENOENT (not a cap option) or -EINVAL (bad or out of range).
 */
int config_limit_parse(struct stack_limits *lim, const char *opt, const char *val, char *err,
		       size_t err_len)
{
	const struct config_limit *cl = NULL;
	unsigned long long v;
	unsigned int i;
	char *end;

	for (i = 0; i < sizeof(config_limits) / sizeof(config_limits[0]); i++)
		if (!strcmp(config_limits[i].opt, opt))
			cl = &config_limits[i];
	if (!cl) {
		snprintf(err, err_len, "--%s: not a resource cap", opt);
		return -ENOENT;
	}
	errno = 0;
	v = strtoull(val, &end, 10);
	if (end == val || *val == '-' || errno) {
		snprintf(err, err_len, "--%s %s: not a number", opt, val);
		return -EINVAL;
	}
	if (cl->bytes && *end) {
		unsigned int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 :
				     *end == 'G' || *end == 'g' ? 30 : 0;

		if (!shift || end[1] || v > (UINT64_MAX >> shift)) {
			snprintf(err, err_len, "--%s %s: expected BYTES, optionally with K, M or G", opt, val);
			return -EINVAL;
		}
		v <<= shift;
		end++;
	}
	if (*end) {
		snprintf(err, err_len, "--%s %s: not a number", opt, val);
		return -EINVAL;
	}
	if (v < cl->min || v > cl->max) {
		snprintf(err, err_len, "--%s %s: out of range %" PRIu64 "..%" PRIu64, opt, val, cl->min,
			 cl->max);
		return -EINVAL;
	}
	if (cl->zero_off && !v)
		v = SVC_UDP_NO_CAP;
	if (cl->wide)
		*(uint64_t *)((char *)lim + cl->off) = v;
	else
		*(uint32_t *)((char *)lim + cl->off) = (uint32_t)v;
	return 0;
}

/**
 * config_limits_apply() - give the caps to a started (empty) stack
 * @st:		the stack, before any link or connection
 * @lim:	the caps; zero fields take the defaults
 *
 * Stores the effective values in @st->limits (what `datapath stats` shows).
 *
 * Return: 0 or negative errno from tcp_stack_set_limits().
 */
int config_limits_apply(struct stack *st, const struct stack_limits *lim)
{
	struct stack_limits e = *lim;

	if (!e.max_conns)
		e.max_conns = TCP_MAX_CONNS_DEFAULT;
	if (!e.max_half_open)
		e.max_half_open = TCP_MAX_HALF_OPEN_DEFAULT;
	if (!e.max_timewait)
		e.max_timewait = TCP_MAX_TIMEWAIT_DEFAULT;
	if (!e.tcp_mem)
		e.tcp_mem = TCP_MAX_BUF_MEM_DEFAULT;
	if (!e.udp_flows)
		e.udp_flows = SVC_UDP_MAX_FLOWS_DEFAULT;
	if (!e.udp_flows_per_source)
		e.udp_flows_per_source = SVC_UDP_FLOWS_PER_SOURCE_DEFAULT;
	st->limits = e;
	/* frag.c and neigh.c read these two through their own defaults */
	e.reasm_mem = ip_reasm_limit(st);
	e.neigh_max = neigh_limit(st);
	st->limits = e;
	if (!st->tcp)
		return 0;
	return tcp_stack_set_limits(tcp_glue_stack(st), e.max_conns, e.max_half_open, e.max_timewait,
				    e.tcp_mem);
}
