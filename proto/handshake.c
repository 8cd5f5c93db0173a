// SPDX-License-Identifier: MIT
/*
 * handshake.c - agree on a protocol version, wait for an answer
 *
 * Theory of operation: the initiator (netsetup) sends HELLO with every major
 * version it speaks; the responder (the datapath) chooses the highest common
 * one (proto_version_choose()) and answers HELLO naming it, or ERROR. Both
 * learn the peer's minor version from its HELLO, so that a feature of a
 * later minor (the container face: minor 2) is only used when both speak it.
 * The responder's answer also says how many shards it would run (minor 5),
 * which the initiator follows unless its user said otherwise.
 * proto_expect_ack() waits for the ACK of one message and turns an ERROR
 * into the peer's words.
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

/**
 * proto_version_choose() - the highest major version both sides speak
 * @peer:	the peer's HELLO
 * @why:	when there is none, the reason in words
 *
 * Return: the version, or -EPROTONOSUPPORT
 */
int proto_version_choose(const struct proto_hello *peer, struct proto_why *why)
{
	char list[4 * PROTO_MAX_VERSIONS + 1] = "";
	int best = -1;

	for (unsigned int i = 0; i < peer->n_versions; i++) {
		size_t used = strlen(list);

		snprintf(list + used, sizeof(list) - used, "%s%u", i ? "," : "", peer->versions[i]);
		if (peer->versions[i] >= PROTO_VERSION_MIN && peer->versions[i] <= PROTO_VERSION_MAX &&
		    peer->versions[i] > best)
			best = peer->versions[i];
	}
	if (best < 0)
		return proto_why_set(why, EPROTONOSUPPORT,
			       "no common protocol version: peer speaks %s, this side %u..%u", list,
			       PROTO_VERSION_MIN, PROTO_VERSION_MAX);
	return best;
}

/* Receive one message and refuse it unless it is of @type; ERROR becomes the peer's reason. */
static int recv_expect(int sock, enum proto_msg_type type, struct proto_msg **msgp,
		       struct proto_why *why)
{
	struct proto_msg *msg;
	int ret;

	ret = proto_recv(sock, &msg, why);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return proto_why_set(why, ECONNRESET, "peer closed the connection while %s was expected",
			       proto_msg_type_name(type));
	if (msg->type == PROTO_MSG_ERROR && type != PROTO_MSG_ERROR) {
		ret = proto_why_set(why, msg->error.err, "peer refused: %s", msg->error.message);
		proto_msg_free(msg);
		return ret;
	}
	if (msg->type != type) {
		ret = proto_why_set(why, EPROTO, "expected %s, got %s", proto_msg_type_name(type),
			      proto_msg_type_name(msg->type));
		proto_send_error(sock, msg->seq, EPROTO, "%s", why->text);
		proto_msg_free(msg);
		return ret;
	}
	*msgp = msg;
	return 0;
}

/**
 * proto_handshake() - agree on a protocol version
 * @sock:	the socket
 * @initiator:	true for netsetup: it sends HELLO first and takes the answer;
 *		false for the datapath: it answers with the version chosen
 * @software:	free text naming this side, or NULL
 * @shards:	the responder's shard count for its answer (0: none said); the
 *		initiator passes 0
 * @versionp:	the agreed major version
 * @peerp:	a copy of the peer's HELLO (its minor: what it added, proto.h;
 *		the responder's shards), or NULL
 * @why:	on failure, the reason in words (the peer has been told too)
 *
 * Return: 0 or a negative errno
 */
int proto_handshake(int sock, bool initiator, const char *software, unsigned int shards,
		    uint8_t *versionp, struct proto_hello *peerp, struct proto_why *why)
{
	struct proto_msg *msg = NULL;
	uint8_t chosen;
	int ret;

	if (initiator) {
		ret = proto_send_hello(sock, 0, software);
		if (ret)
			return proto_why_set(why, -ret, "send HELLO: %s", strerror(-ret));
	}
	ret = recv_expect(sock, PROTO_MSG_HELLO, &msg, why);
	if (ret)
		return ret;

	if (initiator) {
		/* The answer names exactly the version chosen, which must be one of ours. */
		if (msg->hello.n_versions != 1 || msg->hello.versions[0] < PROTO_VERSION_MIN ||
		    msg->hello.versions[0] > PROTO_VERSION_MAX) {
			ret = proto_why_set(why, EPROTONOSUPPORT,
				      "peer answered HELLO with %u version(s), the first %u; expected exactly one of %u..%u",
				      msg->hello.n_versions, msg->hello.versions[0],
				      PROTO_VERSION_MIN, PROTO_VERSION_MAX);
			proto_send_error(sock, msg->seq, why->err, "%s", why->text);
			goto out;
		}
		chosen = msg->hello.versions[0];
	} else {
		ret = proto_version_choose(&msg->hello, why);
		if (ret < 0) {
			proto_send_error(sock, msg->seq, why->err, "%s", why->text);
			goto out;
		}
		chosen = (uint8_t)ret;
		ret = proto_send_hello_versions(sock, msg->seq, &chosen, 1, software, shards);
		if (ret) {
			proto_why_set(why, -ret, "send HELLO: %s", strerror(-ret));
			goto out;
		}
	}
	*versionp = chosen;
	if (peerp)
		*peerp = msg->hello;
	ret = 0;
out:
	proto_msg_free(msg);
	return ret;
}

/**
 * proto_expect_ack() - wait for the ACK of message @seq
 * @sock:	the socket
 * @seq:	the sequence number sent
 * @why:	on failure, the reason: the peer's ERROR text, or what arrived instead
 *
 * Return: 0, or a negative errno (the peer's own errno when it answered ERROR)
 */
int proto_expect_ack(int sock, uint32_t seq, struct proto_why *why)
{
	struct proto_msg *msg;
	int ret;

	ret = recv_expect(sock, PROTO_MSG_ACK, &msg, why);
	if (ret)
		return ret;
	if (msg->seq != seq)
		ret = proto_why_set(why, EPROTO, "ACK for message %u, expected %u", msg->seq, seq);
	proto_msg_free(msg);
	return ret;
}
