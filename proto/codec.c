// SPDX-License-Identifier: MIT
/*
 * codec.c - a netsetup <-> datapath message as a whole: its header, which
 * body decoder or encoder its type takes, and who owns its fds (sending and
 * receiving it is sock.c's, agreeing on a version handshake.c's)
 *
 * Theory of operation
 *
 * A message is a struct proto_hdr followed by netlink attributes (the body).
 * proto_decode() never trusts the buffer: the header is checked (size, magic,
 * version, type, length against what arrived, and whether the type may carry
 * fds at all) before the body goes to its type's decoder (decode.c), which
 * checks every attribute with attrs.c's walk. proto_encode() has the type's
 * encoder (encode.c) build the body in a libnl struct nl_msg and copies it
 * behind the header it fills.
 *
 * File descriptors: proto_decode() takes ownership of every fd it is given.
 * On success the decoded message holds them (a LINK's channels, TUN queues
 * and netstat files, an ATTACH's netns, a DONE's status file) and
 * proto_msg_free() closes them; on any failure, or when the message type
 * carries none, they are closed before it returns. proto_recv() (sock.c)
 * hands it what one recvmsg() brought.
 *
 * The names of message types and GSO modes, and proto_why_set(), are
 * words.c's.
 *
 * What it does not do: it never blocks on its own (the caller owns the socket
 * mode), never exits, and keeps no state between calls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

_Static_assert(sizeof(struct proto_hdr) == 16, "header layout is part of the wire format");

/* Close every fd of @fds that is open (>= 0). */
void proto_fds_close(const int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/**
 * proto_decode() - validate and decode one message
 * @buf:	the bytes that arrived
 * @len:	how many
 * @fds:	descriptors that arrived with it (may be NULL when @n_fds is 0)
 * @n_fds:	how many
 * @msgp:	on success, the decoded message, to be released with proto_msg_free()
 * @why:	on failure, the reason in words
 *
 * Takes ownership of @fds in every case: they end up in the message or closed.
 *
 * Return: 0, or a negative errno with @why filled
 */
int proto_decode(const void *buf, size_t len, const int *fds, unsigned int n_fds,
		 struct proto_msg **msgp, struct proto_why *why)
{
	struct proto_msg *msg = NULL;
	struct proto_hdr hdr;
	struct nlattr *attrs;
	int attrlen, err;

	*msgp = NULL;
	if (len < sizeof(hdr)) {
		err = proto_why_set(why, EBADMSG, "short message: %zu bytes, the header alone is %zu", len,
			      sizeof(hdr));
		goto err;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.magic != PROTO_MAGIC) {
		err = proto_why_set(why, EBADMSG, "bad magic 0x%08x, expected 0x%08x", hdr.magic,
			      PROTO_MAGIC);
		goto err;
	}
	/*
	 * HELLO's layout is frozen as version 1 so that any two builds can
	 * negotiate, even one that no longer speaks version 1 otherwise.
	 */
	if (hdr.type == PROTO_MSG_HELLO && hdr.version != 1) {
		err = proto_why_set(why, EPROTONOSUPPORT,
			      "unsupported protocol version %u for HELLO (HELLO is always version 1)",
			      hdr.version);
		goto err;
	}
	if (hdr.type != PROTO_MSG_HELLO &&
	    (hdr.version < PROTO_VERSION_MIN || hdr.version > PROTO_VERSION_MAX)) {
		err = proto_why_set(why, EPROTONOSUPPORT,
			      "unsupported protocol version %u (this side speaks %u..%u)", hdr.version,
			      PROTO_VERSION_MIN, PROTO_VERSION_MAX);
		goto err;
	}
	if (hdr.length != len) {
		err = proto_why_set(why, EBADMSG, "length field says %u bytes but %zu arrived", hdr.length,
			      len);
		goto err;
	}
	if (len > PROTO_MSG_MAX_BYTES) {
		err = proto_why_set(why, E2BIG, "message of %zu bytes is over the limit of %u", len,
			      PROTO_MSG_MAX_BYTES);
		goto err;
	}
	if (hdr.type == PROTO_MSG_NONE || hdr.type >= PROTO_MSG_MAX) {
		err = proto_why_set(why, EOPNOTSUPP, "unknown message type %u", hdr.type);
		goto err;
	}
	if (hdr.type != PROTO_MSG_LINK && hdr.type != PROTO_MSG_ATTACH && hdr.type != PROTO_MSG_DONE &&
	    n_fds) {
		err = proto_why_set(why, EBADMSG, "%s carries no fds but %u arrived",
			      proto_msg_type_name(hdr.type), n_fds);
		goto err;
	}

	msg = calloc(1, sizeof(*msg));
	if (!msg) {
		err = proto_why_set(why, ENOMEM, "out of memory decoding %s", proto_msg_type_name(hdr.type));
		goto err;
	}
	msg->type = hdr.type;
	msg->version = hdr.version;
	msg->minor = hdr.minor;
	msg->seq = hdr.seq;

	/* nla_* take non-const pointers; nothing below writes through them. */
	attrs = (struct nlattr *)((uint8_t *)buf + sizeof(hdr));
	attrlen = (int)(len - sizeof(hdr));
	switch (hdr.type) {
	case PROTO_MSG_HELLO:
		err = proto_hello_decode(attrs, attrlen, &msg->hello, why);
		break;
	case PROTO_MSG_LINK:
		err = proto_link_decode(attrs, attrlen, fds, n_fds, &msg->link, why);
		break;
	case PROTO_MSG_ERROR:
		err = proto_error_decode(attrs, attrlen, &msg->error, why);
		break;
	case PROTO_MSG_ATTACH:
		err = proto_attach_decode(attrs, attrlen, fds, n_fds, &msg->attach, why);
		break;
	case PROTO_MSG_DONE:
		err = proto_done_decode(attrs, attrlen, fds, n_fds, &msg->done, why);
		break;
	default:
		err = proto_bare_decode(hdr.type, attrs, attrlen, why);
		break;
	}
	if (err)
		goto err;
	*msgp = msg;
	return 0;
err:
	free(msg);
	if (fds)
		proto_fds_close(fds, n_fds);
	return err;
}

/**
 * proto_msg_free() - release a decoded message and close the fds it owns
 * @msg:	the message, or NULL
 */
void proto_msg_free(struct proto_msg *msg)
{
	if (!msg)
		return;
	if (msg->type == PROTO_MSG_LINK) {
		proto_fds_close(msg->link.channel_fds, msg->link.n_channels);
		if (msg->link.has_face) {
			proto_fds_close(msg->link.face.fds, msg->link.face.n_fds);
			proto_fds_close(msg->link.face.netstat_fds, msg->link.face.n_netstat);
		}
	}
	if (msg->type == PROTO_MSG_ATTACH)
		proto_fds_close(&msg->attach.netns_fd, 1);
	if (msg->type == PROTO_MSG_DONE && msg->done.has_status)
		proto_fds_close(&msg->done.status_fd, 1);
	free(msg);
}

/**
 * proto_encode() - encode a message into a buffer
 * @msg:	the message; @msg->version 0 means the highest this build speaks
 *		(HELLO is always encoded as version 1, whose layout never changes)
 * @buf:	where to write
 * @size:	room in @buf
 *
 * Return: the length of the message, or -E2BIG if it does not fit in @size or
 * in PROTO_MSG_MAX_BYTES, -EINVAL for an unknown type, -ENOMEM
 */
int proto_encode(const struct proto_msg *msg, void *buf, size_t size)
{
	struct proto_hdr hdr = {
		.magic = PROTO_MAGIC,
		.version = msg->version ? msg->version : PROTO_VERSION_MAX,
		.minor = PROTO_VERSION_MINOR,
		.type = msg->type,
		.seq = msg->seq,
	};
	struct nl_msg *nl;
	struct nlmsghdr *nlh;
	size_t len;
	int err;

	if (msg->type == PROTO_MSG_NONE || msg->type >= PROTO_MSG_MAX)
		return -EINVAL;
	if (msg->type == PROTO_MSG_HELLO && !msg->version)
		hdr.version = 1;

	nl = nlmsg_alloc_size(PROTO_MSG_MAX_BYTES + NLMSG_HDRLEN);
	if (!nl)
		return -ENOMEM;
	nlh = nlmsg_put(nl, 0, 0, 0, 0, 0);
	if (!nlh) {
		err = -ENOMEM;
		goto out;
	}
	switch (msg->type) {
	case PROTO_MSG_HELLO:
		err = proto_hello_encode(nl, &msg->hello);
		break;
	case PROTO_MSG_LINK:
		err = proto_link_encode(nl, &msg->link);
		break;
	case PROTO_MSG_ERROR:
		err = proto_error_encode(nl, &msg->error);
		break;
	case PROTO_MSG_ATTACH:
		err = proto_attach_encode(nl, &msg->attach);
		break;
	case PROTO_MSG_DONE:
		err = proto_done_encode(nl, &msg->done);
		break;
	default:
		err = 0;
		break;
	}
	if (err)
		goto out;

	len = sizeof(hdr) + (size_t)nlmsg_datalen(nlh);
	if (len > size || len > PROTO_MSG_MAX_BYTES) {
		err = -E2BIG;
		goto out;
	}
	hdr.length = (uint32_t)len;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy((uint8_t *)buf + sizeof(hdr), nlmsg_data(nlh), len - sizeof(hdr));
	err = (int)len;
out:
	nlmsg_free(nl);
	return err;
}
