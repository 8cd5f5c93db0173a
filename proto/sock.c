// SPDX-License-Identifier: MIT
/*
 * sock.c - send and receive protocol messages on a SOCK_SEQPACKET socket
 *
 * Theory of operation: one sendmsg() per message, its fds (a LINK's channels
 * and TUN, an ATTACH's netns, a DONE's status file) attached with SCM_RIGHTS; one recvmsg() per
 * message (SOCK_SEQPACKET keeps boundaries), MSG_TRUNC to see the real size
 * of an oversized message, a control buffer large enough for SCM_MAX_FD
 * descriptors so that none is left unclosed, and an ERROR reply for every
 * message it refuses, so that the peer learns why and the socket stays
 * usable for the next message. What arrives goes to proto_decode()
 * (codec.c), which owns the fds from then on. Nothing here blocks on its own
 * (the caller owns the socket mode) or keeps state between calls.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

/* Send one encoded message, with @fds attached when @n_fds is not 0. */
static int send_buf(int sock, const void *buf, size_t len, const int *fds, unsigned int n_fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * PROTO_MAX_LINK_FDS)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (n_fds > PROTO_MAX_LINK_FDS)
		return -E2BIG;
	if (n_fds) {
		struct cmsghdr *cm;

		memset(&control, 0, sizeof(control));
		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EMSGSIZE;	/* cannot happen on SOCK_SEQPACKET, but never pretend */
	return 0;
}

/**
 * proto_send() - encode and send one message, with the LINK's channel fds
 * @sock:	a connected SOCK_SEQPACKET socket
 * @msg:	the message; the caller keeps ownership of any fds in it
 *
 * Return: 0, or a negative errno (-E2BIG when it does not fit)
 */
int proto_send(int sock, const struct proto_msg *msg)
{
	int link_fds[PROTO_MAX_LINK_FDS];
	const int *fds = NULL;
	unsigned int n_fds = 0;
	void *buf;
	int len, err;

	buf = malloc(PROTO_MSG_MAX_BYTES);
	if (!buf)
		return -ENOMEM;
	len = proto_encode(msg, buf, PROTO_MSG_MAX_BYTES);
	if (len < 0) {
		err = len;
		goto out;
	}
	if (msg->type == PROTO_MSG_LINK) {
		if (msg->link.n_channels > PROTO_MAX_CHANNELS) {
			err = -E2BIG;
			goto out;
		}
		if (msg->link.has_face && (msg->link.face.n_fds < 1 || msg->link.face.n_fds > PROTO_MAX_CHANNELS ||
					   msg->link.face.n_netstat > PROTO_FACE_NETSTAT_FDS)) {
			err = -E2BIG;
			goto out;
		}
		memcpy(link_fds, msg->link.channel_fds, msg->link.n_channels * sizeof(int));
		n_fds = msg->link.n_channels;
		if (msg->link.has_face) {
			memcpy(link_fds + n_fds, msg->link.face.fds, msg->link.face.n_fds * sizeof(int));
			n_fds += msg->link.face.n_fds;
			memcpy(link_fds + n_fds, msg->link.face.netstat_fds, msg->link.face.n_netstat * sizeof(int));
			n_fds += msg->link.face.n_netstat;
		}
		fds = link_fds;
	}
	if (msg->type == PROTO_MSG_ATTACH) {
		fds = &msg->attach.netns_fd;
		n_fds = 1;
	}
	if (msg->type == PROTO_MSG_DONE && msg->done.has_status) {
		fds = &msg->done.status_fd;
		n_fds = 1;
	}
	err = send_buf(sock, buf, (size_t)len, fds, n_fds);
out:
	free(buf);
	return err;
}

/* HELLO with @n major @versions: all of ours, or the one the responder chose. */
int proto_send_hello_versions(int sock, uint32_t seq, const uint8_t *versions, unsigned int n,
			      const char *software, unsigned int shards)
{
	struct proto_msg *msg;
	int err;

	msg = calloc(1, sizeof(*msg));
	if (!msg)
		return -ENOMEM;
	msg->type = PROTO_MSG_HELLO;
	msg->seq = seq;
	msg->hello.n_versions = n;
	memcpy(msg->hello.versions, versions, n);
	msg->hello.minor = PROTO_VERSION_MINOR;
	snprintf(msg->hello.software, sizeof(msg->hello.software), "%s", software ? software : "");
	msg->hello.shards = shards;
	err = proto_send(sock, msg);
	free(msg);
	return err;
}

/**
 * proto_send_hello() - state every major version this build speaks
 * @sock:	the socket
 * @seq:	sequence number
 * @software:	free text naming the sender, e.g. "sandnet-netsetup 0.1", or NULL
 *
 * Return: 0 or a negative errno
 */
int proto_send_hello(int sock, uint32_t seq, const char *software)
{
	uint8_t versions[PROTO_VERSION_MAX - PROTO_VERSION_MIN + 1];

	for (unsigned int v = PROTO_VERSION_MIN; v <= PROTO_VERSION_MAX; v++)
		versions[v - PROTO_VERSION_MIN] = (uint8_t)v;
	return proto_send_hello_versions(sock, seq, versions, sizeof(versions), software, 0);
}

/**
 * proto_send_link() - send one LINK with its channel fds attached
 * @sock:	the socket
 * @seq:	sequence number
 * @link:	the link; @link->n_channels fds from @link->channel_fds go along,
 *		and stay open and owned by the caller
 *
 * Return: 0 or a negative errno
 */
int proto_send_link(int sock, uint32_t seq, const struct proto_link *link)
{
	struct proto_msg *msg;
	int err;

	msg = calloc(1, sizeof(*msg));
	if (!msg)
		return -ENOMEM;
	msg->type = PROTO_MSG_LINK;
	msg->seq = seq;
	msg->link = *link;
	err = proto_send(sock, msg);
	free(msg);
	return err;
}

static int send_simple(int sock, enum proto_msg_type type, uint32_t seq)
{
	struct proto_msg msg = { .type = type, .seq = seq };

	return proto_send(sock, &msg);
}

/**
 * proto_send_attach() - send ATTACH with its netns fd (netsetup serve's clients)
 * @sock:	a connected SOCK_SEQPACKET socket
 * @seq:	sequence number
 * @attach:	the request; the caller keeps ownership of @attach->netns_fd
 *
 * Return: 0 or a negative errno
 */
int proto_send_attach(int sock, uint32_t seq, const struct proto_attach *attach)
{
	struct proto_msg msg = { .type = PROTO_MSG_ATTACH, .seq = seq };

	msg.attach = *attach;
	return proto_send(sock, &msg);
}

/**
 * proto_send_done() - end of one configuration
 * @sock:	the socket
 * @seq:	sequence number
 *
 * Return: 0 or a negative errno
 */
int proto_send_done(int sock, uint32_t seq)
{
	return proto_send_done_status(sock, seq, -1);
}

/**
 * proto_send_done_status() - end of one configuration, with the status file (minor 3)
 * @sock:	the socket
 * @seq:	sequence number
 * @status_fd:	a regular file open for writing, where the datapath keeps its
 *		status; -1 for none (a peer below minor 3 takes only that)
 *
 * Return: 0 or a negative errno
 */
int proto_send_done_status(int sock, uint32_t seq, int status_fd)
{
	struct proto_msg msg = { .type = PROTO_MSG_DONE, .seq = seq,
				 .done = { .has_status = status_fd >= 0, .status_fd = status_fd } };

	return proto_send(sock, &msg);
}

/**
 * proto_send_ack() - acknowledge the message numbered @seq
 * @sock:	the socket
 * @seq:	sequence number of the acknowledged message
 *
 * Return: 0 or a negative errno
 */
int proto_send_ack(int sock, uint32_t seq)
{
	return send_simple(sock, PROTO_MSG_ACK, seq);
}

/**
 * proto_send_error() - refuse the message numbered @seq, saying why
 * @sock:	the socket
 * @seq:	sequence number of the refused message
 * @err:	positive errno
 * @fmt:	printf format of the human-readable reason
 *
 * Return: 0 or a negative errno
 */
int proto_send_error(int sock, uint32_t seq, int err, const char *fmt, ...)
{
	struct proto_msg *msg;
	va_list ap;
	int ret;

	msg = calloc(1, sizeof(*msg));
	if (!msg)
		return -ENOMEM;
	msg->type = PROTO_MSG_ERROR;
	msg->seq = seq;
	msg->error.err = err > 0 && err < 4096 ? err : EPROTO;
	va_start(ap, fmt);
	vsnprintf(msg->error.message, sizeof(msg->error.message), fmt, ap);
	va_end(ap);
	if (!msg->error.message[0])
		snprintf(msg->error.message, sizeof(msg->error.message), "%s", strerror(msg->error.err));
	ret = proto_send(sock, msg);
	free(msg);
	return ret;
}

/* Collect SCM_RIGHTS descriptors from every control message. */
static unsigned int fds_collect(struct msghdr *mh, int *fds, unsigned int max)
{
	unsigned int n = 0;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t count;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count && n < max; i++)
			memcpy(&fds[n++], CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
	}
	return n;
}

/**
 * proto_recv() - receive, validate and decode one message
 * @sock:	a connected SOCK_SEQPACKET socket
 * @msgp:	on return 1, the message, to be released with proto_msg_free()
 * @why:	on a negative return, the reason in words
 *
 * A malformed message is answered with ERROR naming the problem (unless it
 * claimed to be an ERROR itself, so that two peers never bounce errors), and
 * every fd that came with it is closed; the socket stays usable.
 *
 * Return: 1 with a message, 0 when the peer closed the connection, or a
 * negative errno: the message was refused, or the socket failed
 */
int proto_recv(int sock, struct proto_msg **msgp, struct proto_why *why)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * PROTO_SCM_MAX_FD)];
		struct cmsghdr align;
	} control;
	int fds[PROTO_SCM_MAX_FD];
	struct proto_hdr hdr = { 0 };
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	unsigned int n_fds;
	uint8_t *buf;
	ssize_t n;
	int err;

	*msgp = NULL;
	buf = malloc(PROTO_MSG_MAX_BYTES);
	if (!buf)
		return proto_why_set(why, ENOMEM, "out of memory for a receive buffer");
	iov.iov_base = buf;
	iov.iov_len = PROTO_MSG_MAX_BYTES;
	mh.msg_control = control.buf;
	mh.msg_controllen = sizeof(control.buf);

	do
		n = recvmsg(sock, &mh, MSG_TRUNC | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		err = proto_why_set(why, errno, "receive: %s", strerror(errno));
		free(buf);
		return err;
	}
	n_fds = fds_collect(&mh, fds, PROTO_SCM_MAX_FD);
	if (n == 0 && !n_fds) {
		free(buf);
		return 0;
	}
	if ((size_t)n >= sizeof(hdr))
		memcpy(&hdr, buf, sizeof(hdr));

	if (mh.msg_flags & MSG_CTRUNC) {
		proto_fds_close(fds, n_fds);
		err = proto_why_set(why, E2BIG, "too many fds with one message (over %u)",
			      PROTO_SCM_MAX_FD);
	} else if (n > PROTO_MSG_MAX_BYTES) {
		proto_fds_close(fds, n_fds);
		err = proto_why_set(why, E2BIG, "message of %zd bytes is over the limit of %u", n,
			      PROTO_MSG_MAX_BYTES);
	} else {
		err = proto_decode(buf, (size_t)n, fds, n_fds, msgp, why);
	}
	free(buf);
	if (!err)
		return 1;

	if (hdr.type != PROTO_MSG_ERROR)
		proto_send_error(sock, hdr.seq, why->err, "%s", why->text);
	return err;
}
