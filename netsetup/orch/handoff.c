// SPDX-License-Identifier: MIT
/*
 * handoff.c - give the configuration and the channel fds to the datapath
 *
 * Theory of operation: netsetup is the initiator of the conversation of
 * proto/: HELLO (both sides agree on a major version), then one LINK per link
 * with its channel fds attached (SCM_RIGHTS), each answered by ACK with the
 * same sequence number, then DONE, answered by ACK once the datapath is ready
 * to serve. Any ERROR, a wrong version, a close or a silence longer than
 * NS_DATAPATH_TIMEOUT_S stops the handoff; the caller then gives the
 * addresses back. The socket is either one we connect to (attach: a
 * listening SOCK_SEQPACKET unix socket) or our end of a socketpair (run).
 *
 * Sequence numbers: HELLO is 0 (proto_handshake()), LINKs 1..N, DONE N+1.
 * The datapath owns the fds it received; we keep and close our copies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include "netsetup/orch/orch_int.h"

static void timeouts_set(int sock)
{
	struct timeval tv = { .tv_sec = NS_DATAPATH_TIMEOUT_S };

	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/**
 * ns_handoff_connect() - connect to a datapath listening on a unix socket
 * @path:	the --datapath SOCKET
 * @sockp:	receives the connected socket
 * @e:		error message
 *
 * Return: 0 or -errno.
 */
int ns_handoff_connect(const char *path, int *sockp, struct ns_err *e)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int sock, err;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		ns_err_set(e, "datapath socket %s: path longer than %zu bytes", path,
			   sizeof(sun.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (stat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		ns_err_set(e, "datapath socket %s: not a socket", path);
		return -ENOTSOCK;
	}
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		err = -errno;
		ns_err_set(e, "datapath socket: %s", strerror(errno));
		return err;
	}
	if (connect(sock, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		err = -errno;
		if (err == -ENOENT)
			ns_err_set(e, "datapath socket %s: no such file (is the datapath running?)", path);
		else if (err == -ECONNREFUSED)
			ns_err_set(e, "datapath socket %s: nobody is listening (connection refused)", path);
		else if (err == -EPROTOTYPE)
			ns_err_set(e, "datapath socket %s: not a SOCK_SEQPACKET socket", path);
		else
			ns_err_set(e, "datapath socket %s: connect: %s", path, strerror(errno));
		close(sock);
		return err;
	}
	timeouts_set(sock);
	*sockp = sock;
	return 0;
}

static int why_to_err(const struct proto_why *why, const char *step, struct ns_err *e)
{
	int err = why->err > 0 ? why->err : EPROTO;

	if (err == EAGAIN || err == EWOULDBLOCK)
		ns_err_set(e, "datapath: %s: no answer within %d s", step, NS_DATAPATH_TIMEOUT_S);
	else
		ns_err_set(e, "datapath: %s: %s", step, why->text[0] ? why->text : strerror(err));
	return -err;
}

/**
 * ns_handoff_hello() - agree on a protocol version with the datapath
 * @sock:	connected socket
 * @face:	a container face will be sent: the datapath must know LINK FACE
 * @minorp:	receives the datapath's minor version (DONE's status file
 *		needs PROTO_MINOR_STATUS)
 * @shardsp:	receives the shards the datapath would run (HELLO SHARDS,
 *		minor 5), 0 when it did not say
 * @e:		error message
 *
 * A datapath of an older minor would skip the FACE attribute and then
 * refuse the LINK for its extra fd, a reason that names the wrong thing:
 * it is refused here, before anything changed.
 *
 * Return: 0 or -errno (-EPROTONOSUPPORT for a version we do not speak, or
 * a datapath too old for the face).
 */
int ns_handoff_hello(int sock, bool face, uint8_t *minorp, unsigned int *shardsp, struct ns_err *e)
{
	struct proto_why why = { 0 };
	struct proto_hello peer = { 0 };
	uint8_t version, minor;

	timeouts_set(sock);
	if (proto_handshake(sock, true, NS_SOFTWARE, 0, &version, &peer, &why))
		return why_to_err(&why, "HELLO", e);
	minor = peer.minor;
	if (face && minor < PROTO_MINOR_FACE) {
		ns_err_set(e, "HELLO: the datapath speaks protocol %u.%u, the container face needs %u.%u "
			   "(a datapath of this release, or --face off)", version, minor, version,
			   PROTO_MINOR_FACE);
		return -EPROTONOSUPPORT;
	}
	*minorp = minor;
	*shardsp = peer.shards;
	return 0;
}

/**
 * ns_link_to_proto() - the LINK message for one link
 * @net:	scraped namespace
 * @l:		the link (mode decided)
 * @pl:		filled, without channel fds
 * @e:		error message
 *
 * Return: 0 or -E2BIG when the link has more than the protocol carries.
 */
int ns_link_to_proto(const struct ns_net *net, const struct ns_link *l,
		     struct proto_link *pl, struct ns_err *e)
{
	unsigned int i;

	memset(pl, 0, sizeof(*pl));
	pl->ifindex = l->ifindex;
	snprintf(pl->ifname, sizeof(pl->ifname), "%s", l->ifname);
	memcpy(pl->mac, l->mac, 6);
	pl->mtu = l->mtu;
	pl->flags = l->flags;
	pl->gso_mode = l->mode;
	snprintf(pl->gso_reason, sizeof(pl->gso_reason), "%s", l->reason);
	pl->gso_max_size = l->frame_max_bytes;
	pl->gso_max_segs = l->gso_max_segs;
	pl->gso_ipv4_max_size = l->frame_max_ipv4_bytes;
	for (i = 0; i < net->n_addrs; i++) {
		if (net->addrs[i].ifindex != l->ifindex)
			continue;
		if (pl->n_addrs >= PROTO_MAX_ADDRS)
			goto too_many;
		pl->addrs[pl->n_addrs++] = net->addrs[i].a;
	}
	for (i = 0; i < net->n_routes; i++) {
		if (net->routes[i].ifindex != l->ifindex)
			continue;
		if (pl->n_routes >= PROTO_MAX_ROUTES)
			goto too_many;
		pl->routes[pl->n_routes++] = net->routes[i].r;
	}
	for (i = 0; i < net->n_neighs; i++) {
		if (net->neighs[i].ifindex != l->ifindex)
			continue;
		if (pl->n_neighs >= PROTO_MAX_NEIGHS)
			goto too_many;
		pl->neighs[pl->n_neighs++] = net->neighs[i].n;
	}
	return 0;
too_many:
	ns_err_set(e, "link %s: more addresses, routes or neighbours than the protocol carries (%d, %d, %d)",
		   l->ifname, PROTO_MAX_ADDRS, PROTO_MAX_ROUTES, PROTO_MAX_NEIGHS);
	return -E2BIG;
}

/**
 * ns_handoff_links() - send one LINK per selected link, then DONE
 * @sock:	socket after ns_handoff_hello()
 * @net:	scraped namespace; links with ->selected are sent, in order
 * @fds:	per link of @net (same index), @n_channels channel fds
 * @n_channels:	channels per link
 * @faces:	per link of @net, its container face (fd -1: none), or NULL
 * @status_fd:	the status file for the datapath's supervisor, sent with DONE;
 *		-1: none (a datapath below PROTO_MINOR_STATUS)
 * @steer_seed:	the steering program's secret when the channels are steered,
 *		for the ports the datapath picks itself; NULL: not steered
 * @e:		error message
 *
 * Return: 0 once the datapath acknowledged DONE, or -errno.
 */
int ns_handoff_links(int sock, const struct ns_net *net, int *const *fds,
		     unsigned int n_channels, const struct ns_face *faces, int status_fd, const uint32_t *steer_seed,
		     struct ns_err *e)
{
	struct proto_why why = { 0 };
	struct proto_link *pl;
	char step[64];
	uint32_t seq = 1;
	unsigned int i;
	int err;

	pl = malloc(sizeof(*pl));
	if (!pl) {
		ns_err_set(e, "handoff: out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < net->n_links; i++) {
		const struct ns_link *l = &net->links[i];

		if (!l->selected)
			continue;
		err = ns_link_to_proto(net, l, pl, e);
		if (err)
			goto out;
		pl->n_channels = n_channels;
		memcpy(pl->channel_fds, fds[i], n_channels * sizeof(int));
		pl->has_steer_seed = steer_seed != NULL;
		pl->steer_seed = steer_seed ? *steer_seed : 0;
		if (faces && faces[i].n_fds) {
			pl->has_face = true;
			pl->face.ifindex = (uint32_t)faces[i].ifindex;
			snprintf(pl->face.ifname, sizeof(pl->face.ifname), "%s", faces[i].name);
			pl->face.mtu = faces[i].mtu;
			pl->face.offloads = faces[i].offloads;
			pl->face.n_fds = faces[i].n_fds;
			memcpy(pl->face.fds, faces[i].fds, faces[i].n_fds * sizeof(int));
			pl->face.n_netstat = faces[i].n_netstat;
			memcpy(pl->face.netstat_fds, faces[i].netstat_fds, faces[i].n_netstat * sizeof(int));
		}
		snprintf(step, sizeof(step), "LINK %s", l->ifname);
		err = proto_send_link(sock, seq, pl);
		if (err) {
			ns_err_set(e, "datapath: sending %s: %s", step, strerror(-err));
			goto out;
		}
		if (proto_expect_ack(sock, seq, &why)) {
			err = why_to_err(&why, step, e);
			goto out;
		}
		seq++;
	}
	err = proto_send_done_status(sock, seq, status_fd);
	if (err) {
		ns_err_set(e, "datapath: sending DONE: %s", strerror(-err));
		goto out;
	}
	if (proto_expect_ack(sock, seq, &why))
		err = why_to_err(&why, "DONE", e);
out:
	free(pl);
	return err;
}
