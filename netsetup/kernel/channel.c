// SPDX-License-Identifier: MIT
/*
 * channel.c - the AF_PACKET sockets that carry a link's frames
 *
 * Theory of operation: a channel is one AF_PACKET/SOCK_RAW socket bound to
 * one link; the datapath reads and writes Ethernet frames on it. It must be
 * created while the caller is inside the target namespace: a packet socket
 * serves the namespace it was created in. Per socket, in this order:
 *   1. socket(AF_PACKET, SOCK_RAW, 0): protocol 0 receives nothing yet, and
 *      avoids the slow path of binding a socket that is already hooked in;
 *   2. PACKET_VNET_HDR in every mode: every frame then starts with a
 *      virtio_net_hdr, both ways. hw mode sends GSO frames with it; sw and
 *      off send a zero header, but receive needs it in every mode: a kernel
 *      peer's UDP_SEGMENT send crosses a veth as one frame, and only the
 *      header's gso_size says where its datagrams end (the datapath asks
 *      the socket, PACKET_VNET_HDR, what it has);
 *   3. SO_SNDBUFFORCE / SO_RCVBUFFORCE of NS_CHANNEL_BUF_BYTES (CAP_NET_ADMIN
 *      lifts rmem_max): 16 MiB, some 7000 full-size frames, what a burst
 *      at 1 Gbit/s brings while the datapath waits for a CPU;
 *   4. bind to ETH_P_ALL on the link's ifindex;
 *   5. one channel: PACKET_IGNORE_OUTGOING, so the socket does not see the
 *      kernel's or its siblings' transmissions; N > 1: join a
 *      PACKET_FANOUT_HASH group (a flow stays on one socket) with
 *      PACKET_FANOUT_FLAG_IGNORE_OUTGOING (the socket option is ignored inside
 *      a group). The first socket asks the kernel for a unique group id
 *      (PACKET_FANOUT_FLAG_UNIQUEID), the others join that id. With shards
 *      (steer.c) the group is PACKET_FANOUT_EBPF instead: the steering
 *      program, set on the first member before the others join, picks the
 *      socket of a frame's shard, and PACKET_FANOUT_FLAG_DEFRAG reassembles
 *      IP fragments first, so that a fragment reaches its datagram's shard.
 * PACKET_QDISC_BYPASS is left to the datapath: it can set it on the fd it
 * receives, and it decides how it wants backpressure reported.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "netsetup/kernel/kernel_int.h"

#ifndef PACKET_FANOUT_FLAG_IGNORE_OUTGOING
#define PACKET_FANOUT_FLAG_IGNORE_OUTGOING 0x4000
#endif
#ifndef PACKET_FANOUT_FLAG_UNIQUEID
#define PACKET_FANOUT_FLAG_UNIQUEID 0x2000
#endif

static int setopt_int(int fd, int level, int name, int val)
{
	return setsockopt(fd, level, name, &val, sizeof(val)) < 0 ? -errno : 0;
}

static int channel_one(const struct ns_link *l, unsigned int n, int steer_fd, int *group_id,
		       struct ns_err *e)
{
	unsigned int mode = steer_fd >= 0 ? PACKET_FANOUT_EBPF | PACKET_FANOUT_FLAG_DEFRAG : PACKET_FANOUT_HASH;
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = l->ifindex,
	};
	const char *step;
	int fd, err;

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		ns_err_set(e, "link %s: AF_PACKET socket: %s%s", l->ifname, strerror(errno),
			   errno == EPERM ? " (netsetup needs CAP_NET_RAW)" : "");
		return err;
	}
	step = "PACKET_VNET_HDR";
	if ((err = setopt_int(fd, SOL_PACKET, PACKET_VNET_HDR, 1)))
		goto err;
	step = "SO_SNDBUFFORCE";
	if ((err = setopt_int(fd, SOL_SOCKET, SO_SNDBUFFORCE, NS_CHANNEL_BUF_BYTES)))
		goto err;
	step = "SO_RCVBUFFORCE";
	if ((err = setopt_int(fd, SOL_SOCKET, SO_RCVBUFFORCE, NS_CHANNEL_BUF_BYTES)))
		goto err;
	step = "bind";
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		err = -errno;
		goto err;
	}
	if (n == 1) {
		step = "PACKET_IGNORE_OUTGOING";
		if ((err = setopt_int(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)))
			goto err;
		return fd;
	}
	step = "PACKET_FANOUT";
	if (*group_id < 0) {
		/* the type and flags above the id: bit 31 is DEFRAG's, hence unsigned */
		int arg = (int)((mode | PACKET_FANOUT_FLAG_IGNORE_OUTGOING | PACKET_FANOUT_FLAG_UNIQUEID) << 16);
		socklen_t len = sizeof(arg);

		if ((err = setopt_int(fd, SOL_PACKET, PACKET_FANOUT, arg)))
			goto err;
		if (getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &arg, &len) < 0) {
			err = -errno;
			goto err;
		}
		*group_id = arg & 0xffff;
		step = "PACKET_FANOUT_DATA (the steering program)";
		if (steer_fd >= 0 && setsockopt(fd, SOL_PACKET, PACKET_FANOUT_DATA, &steer_fd,
						sizeof(steer_fd)) < 0) {
			err = -errno;
			goto err;
		}
	} else {
		err = setopt_int(fd, SOL_PACKET, PACKET_FANOUT,
				 (int)((unsigned int)*group_id | (mode | PACKET_FANOUT_FLAG_IGNORE_OUTGOING) << 16));
		if (err)
			goto err;
	}
	return fd;
err:
	ns_err_set(e, "link %s: channel socket: %s: %s", l->ifname, step, strerror(-err));
	close(fd);
	return err;
}

/**
 * ns_channel_open() - open @n channel sockets for @l
 * @l:		link, with its GSO mode decided
 * @n:		1..PROTO_MAX_CHANNELS
 * @steer_fd:	the steering program (ns_steer_load()) for one channel per
 *		shard, or -1 for a PACKET_FANOUT_HASH group
 * @fds:	receives @n fds (O_CLOEXEC)
 * @e:		error message
 *
 * Must run inside the link's namespace. On failure nothing stays open.
 *
 * Return: 0 or -errno.
 */
int ns_channel_open(const struct ns_link *l, unsigned int n, int steer_fd, int *fds, struct ns_err *e)
{
	int group_id = -1;
	unsigned int i;
	int fd;

	if (n < 1 || n > PROTO_MAX_CHANNELS) {
		ns_err_set(e, "link %s: %u channels is out of range 1..%d", l->ifname, n,
			   PROTO_MAX_CHANNELS);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		fd = channel_one(l, n, steer_fd, &group_id, e);
		if (fd < 0) {
			ns_channel_close(fds, i);
			return fd;
		}
		fds[i] = fd;
	}
	return 0;
}

/**
 * ns_channel_close() - close channel fds
 * @fds:	array; entries set to -1
 * @n:		how many
 */
void ns_channel_close(int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}
