// SPDX-License-Identifier: MIT
/*
 * test_proto_roundtrip.c - every message type through a real socketpair
 *
 * Theory of operation
 *
 * Each test sends with the public proto_send_*() API on one end of a
 * socketpair(AF_UNIX, SOCK_SEQPACKET), receives with proto_recv() on the
 * other, and compares the decoded message field by field with what was sent.
 * LINK carries real AF_PACKET sockets: the received fds must be AF_PACKET
 * SOCK_RAW, the same open files as the sender's, and closed again by
 * proto_msg_free(). The header's byte layout, HELLO's frozen version 1, the
 * limits (accepted exactly at the limit), encoder refusals, forward
 * compatibility (attributes and entries of a newer minor are skipped) and
 * proto_expect_ack() are tested here too. Refusals of malformed input live in
 * test_proto_badinput.c, the version handshake in test_proto_handshake.c.
 */
#include "tests/unit/proto_testlib.h"

static void assert_packet_socket(int fd)
{
	int domain = -1, type = -1;
	socklen_t len = sizeof(domain);

	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len), 0);
	len = sizeof(type);
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len), 0);
	ck_assert_int_eq(domain, AF_PACKET);
	ck_assert_int_eq(type, SOCK_RAW);
}

START_TEST(test_hello_roundtrip)
{
	struct proto_msg *msg, *sent;

	ck_assert_int_eq(proto_send_hello(sk[SENDER], 5, "sandnet-netsetup 0.1"), 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_HELLO);
	ck_assert_uint_eq(msg->seq, 5);
	ck_assert_uint_eq(msg->version, 1);
	ck_assert_uint_eq(msg->minor, PROTO_VERSION_MINOR);
	ck_assert_uint_eq(msg->hello.n_versions, PROTO_VERSION_MAX - PROTO_VERSION_MIN + 1);
	for (unsigned int i = 0; i < msg->hello.n_versions; i++)
		ck_assert_uint_eq(msg->hello.versions[i], PROTO_VERSION_MIN + i);
	ck_assert_uint_eq(msg->hello.minor, PROTO_VERSION_MINOR);
	ck_assert_str_eq(msg->hello.software, "sandnet-netsetup 0.1");
	proto_msg_free(msg);

	/* Any list (a newer peer's), every field, through proto_send(). */
	sent = calloc(1, sizeof(*sent));
	ck_assert_ptr_nonnull(sent);
	sent->type = PROTO_MSG_HELLO;
	sent->seq = 0xfffffff0u;
	sent->hello.n_versions = PROTO_MAX_VERSIONS;
	for (unsigned int i = 0; i < PROTO_MAX_VERSIONS; i++)
		sent->hello.versions[i] = (uint8_t)(250 - 3 * i);
	sent->hello.minor = 7;
	sent->hello.shards = PROTO_MAX_CHANNELS;
	memset(sent->hello.software, 'x', PROTO_TEXT_MAX - 1);
	ck_assert_int_eq(proto_send(sk[SENDER], sent), 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_HELLO);
	ck_assert_uint_eq(msg->seq, sent->seq);
	ck_assert_uint_eq(msg->hello.n_versions, PROTO_MAX_VERSIONS);
	ck_assert_mem_eq(msg->hello.versions, sent->hello.versions, PROTO_MAX_VERSIONS);
	ck_assert_uint_eq(msg->hello.minor, 7);
	ck_assert_uint_eq(msg->hello.shards, PROTO_MAX_CHANNELS);
	ck_assert_str_eq(msg->hello.software, sent->hello.software);
	proto_msg_free(msg);

	/* No software text, no shards: both attributes are optional. */
	ck_assert_int_eq(proto_send_hello(sk[SENDER], 6, NULL), 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_HELLO);
	ck_assert_str_eq(msg->hello.software, "");
	ck_assert_uint_eq(msg->hello.shards, 0);
	proto_msg_free(msg);
	free(sent);
}
END_TEST

START_TEST(test_link_roundtrip)
{
	struct proto_link *link = malloc(sizeof(*link));
	struct proto_msg *msg;
	int before, after_recv;

	ck_assert_ptr_nonnull(link);
	sample_link(link, 2);
	packet_sockets(link->channel_fds, 2);
	ck_assert_int_eq(proto_send_link(sk[SENDER], 42, link), 0);
	/* The sender keeps its fds. */
	ck_assert(fd_is_open(link->channel_fds[0]) && fd_is_open(link->channel_fds[1]));

	before = fd_count();
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_LINK);
	after_recv = fd_count();
	ck_assert_int_eq(after_recv, before + 2);
	ck_assert_uint_eq(msg->seq, 42);
	ck_assert_uint_eq(msg->version, PROTO_VERSION_MAX);
	link_assert_equal(&msg->link, link);
	for (unsigned int i = 0; i < 2; i++) {
		int fd = msg->link.channel_fds[i];

		ck_assert_int_ne(fd, link->channel_fds[i]);
		ck_assert(fd_same_file(fd, link->channel_fds[i]));
		assert_packet_socket(fd);
		ck_assert_msg(fcntl(fd, F_GETFD) & FD_CLOEXEC, "received fd %d is not close-on-exec", fd);
	}
	{
		int got0 = msg->link.channel_fds[0], got1 = msg->link.channel_fds[1];

		proto_msg_free(msg);
		ck_assert_int_eq(fd_count(), before);
		ck_assert(!fd_is_open(got0) && !fd_is_open(got1));
	}
	fds_close_all(link->channel_fds, 2);
	free(link);
}
END_TEST

/* Only the mandatory attributes: everything else decodes as zero or empty. */
START_TEST(test_link_mandatory_only)
{
	static const uint8_t mac[6] = { 0x02, 0x00, 0x5e, 0x10, 0x20, 0x30 };
	uint8_t buf[512];
	struct nl_msg *nl = msg_build_start();
	struct proto_msg *msg;
	size_t len;
	int fd = packet_socket();

	link_mandatory_put(nl, 0, 1);
	len = msg_build_finish(nl, PROTO_MSG_LINK, 0, 9, buf, sizeof(buf));
	raw_send(sk[SENDER], buf, len, &fd, 1);
	close(fd);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_LINK);
	ck_assert_uint_eq(msg->link.ifindex, 3);
	ck_assert_str_eq(msg->link.ifname, "veth0");
	ck_assert_mem_eq(msg->link.mac, mac, 6);
	ck_assert_uint_eq(msg->link.mtu, 1500);
	ck_assert_uint_eq(msg->link.flags, 0);
	ck_assert_int_eq(msg->link.gso_mode, PROTO_GSO_SW);
	ck_assert_str_eq(msg->link.gso_reason, "");
	ck_assert_uint_eq(msg->link.gso_max_size, 0);
	ck_assert_uint_eq(msg->link.gso_max_segs, 0);
	ck_assert_uint_eq(msg->link.gso_ipv4_max_size, 0);
	ck_assert_uint_eq(msg->link.n_channels, 1);
	assert_packet_socket(msg->link.channel_fds[0]);
	ck_assert_uint_eq(msg->link.n_addrs, 0);
	ck_assert_uint_eq(msg->link.n_routes, 0);
	ck_assert_uint_eq(msg->link.n_neighs, 0);
	proto_msg_free(msg);
}
END_TEST

/* Every list full and every limit reached exactly: accepted, within one message. */
START_TEST(test_link_at_limits)
{
	struct proto_link *link = calloc(1, sizeof(*link));
	struct proto_msg *msg;
	uint8_t *buf = malloc(PROTO_MSG_MAX_BYTES);
	int len;

	ck_assert_ptr_nonnull(link);
	ck_assert_ptr_nonnull(buf);
	sample_link(link, PROTO_MAX_CHANNELS);
	link->mtu = PROTO_MTU_MAX;
	link->n_addrs = PROTO_MAX_ADDRS;
	for (unsigned int i = 0; i < PROTO_MAX_ADDRS; i++) {
		link->addrs[i] = (struct proto_addr){ .family = AF_INET6, .prefixlen = 128,
						      .flags = i };
		link->addrs[i].addr.bytes[0] = 0x20;
		link->addrs[i].addr.bytes[15] = (uint8_t)i;
	}
	link->n_routes = PROTO_MAX_ROUTES;
	for (unsigned int i = 0; i < PROTO_MAX_ROUTES; i++) {
		link->routes[i] = (struct proto_route){ .family = AF_INET6, .dst_len = 128,
							.has_gateway = true, .metric = i };
		link->routes[i].dst.bytes[0] = 0x20;
		link->routes[i].dst.bytes[14] = (uint8_t)(i >> 8);
		link->routes[i].dst.bytes[15] = (uint8_t)i;
		link->routes[i].gateway.bytes[0] = 0xfe;
		link->routes[i].gateway.bytes[15] = 1;
	}
	link->n_neighs = PROTO_MAX_NEIGHS;
	for (unsigned int i = 0; i < PROTO_MAX_NEIGHS; i++) {
		link->neighs[i].family = AF_INET6;
		link->neighs[i].addr.bytes[0] = 0xfe;
		link->neighs[i].addr.bytes[15] = (uint8_t)i;
		link->neighs[i].lladdr[5] = (uint8_t)i;
	}
	packet_sockets(link->channel_fds, PROTO_MAX_CHANNELS);

	{
		struct proto_msg *enc = calloc(1, sizeof(*enc));

		ck_assert_ptr_nonnull(enc);
		enc->type = PROTO_MSG_LINK;
		enc->link = *link;
		len = proto_encode(enc, buf, PROTO_MSG_MAX_BYTES);
		ck_assert_int_gt(len, 0);
		ck_assert_int_le(len, PROTO_MSG_MAX_BYTES);
		free(enc);
	}
	ck_assert_int_eq(proto_send_link(sk[SENDER], 1, link), 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_LINK);
	link_assert_equal(&msg->link, link);
	for (unsigned int i = 0; i < PROTO_MAX_CHANNELS; i++)
		ck_assert(fd_same_file(msg->link.channel_fds[i], link->channel_fds[i]));
	proto_msg_free(msg);
	fds_close_all(link->channel_fds, PROTO_MAX_CHANNELS);
	free(link);
	free(buf);
}
END_TEST

START_TEST(test_link_mtu_bounds_accepted)
{
	static const uint32_t mtus[] = { PROTO_MTU_MIN, 1280, PROTO_MTU_MAX };
	struct proto_link *link = malloc(sizeof(*link));

	ck_assert_ptr_nonnull(link);
	for (unsigned int i = 0; i < 3; i++) {
		struct proto_msg *msg;

		sample_link(link, 1);
		link->mtu = mtus[i];
		link->channel_fds[0] = packet_socket();
		ck_assert_int_eq(proto_send_link(sk[SENDER], i, link), 0);
		close(link->channel_fds[0]);
		msg = recv_ok(sk[RECEIVER], PROTO_MSG_LINK);
		ck_assert_uint_eq(msg->link.mtu, mtus[i]);
		proto_msg_free(msg);
	}
	free(link);
}
END_TEST

START_TEST(test_done_ack_roundtrip)
{
	struct proto_msg *msg;

	ck_assert_int_eq(proto_send_done(sk[SENDER], 0xfffffffeu), 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_DONE);
	ck_assert_uint_eq(msg->seq, 0xfffffffeu);
	ck_assert_uint_eq(msg->version, PROTO_VERSION_MAX);
	ck_assert_uint_eq(msg->minor, PROTO_VERSION_MINOR);
	proto_msg_free(msg);

	ck_assert_int_eq(proto_send_ack(sk[RECEIVER], 0xfffffffeu), 0);
	msg = recv_ok(sk[SENDER], PROTO_MSG_ACK);
	ck_assert_uint_eq(msg->seq, 0xfffffffeu);
	proto_msg_free(msg);
}
END_TEST

START_TEST(test_error_roundtrip)
{
	struct proto_msg *msg;
	char longer[2 * PROTO_TEXT_MAX];

	ck_assert_int_eq(proto_send_error(sk[RECEIVER], 11, ENOENT, "link %s: %s", "eth9", "gone"), 0);
	msg = recv_ok(sk[SENDER], PROTO_MSG_ERROR);
	ck_assert_uint_eq(msg->seq, 11);
	ck_assert_int_eq(msg->error.err, ENOENT);
	ck_assert_str_eq(msg->error.message, "link eth9: gone");
	proto_msg_free(msg);

	/* A text over the limit is cut to PROTO_TEXT_MAX - 1 bytes, still a valid message. */
	memset(longer, 'y', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	ck_assert_int_eq(proto_send_error(sk[RECEIVER], 12, EINVAL, "%s", longer), 0);
	msg = recv_ok(sk[SENDER], PROTO_MSG_ERROR);
	ck_assert_uint_eq(strlen(msg->error.message), PROTO_TEXT_MAX - 1);
	proto_msg_free(msg);

	/* Not an errno: sent as EPROTO; no text: strerror() of it. */
	ck_assert_int_eq(proto_send_error(sk[RECEIVER], 13, -5, "%s", ""), 0);
	msg = recv_ok(sk[SENDER], PROTO_MSG_ERROR);
	ck_assert_int_eq(msg->error.err, EPROTO);
	ck_assert_str_eq(msg->error.message, strerror(EPROTO));
	proto_msg_free(msg);
}
END_TEST

/* The header is 16 bytes in host byte order at fixed offsets (docs/protocol.md). */
START_TEST(test_header_layout)
{
	struct proto_msg msg = { .type = PROTO_MSG_DONE, .seq = 0x01020304 };
	uint8_t buf[64], want[16];
	uint32_t u32;
	uint16_t u16;
	int len;

	len = proto_encode(&msg, buf, sizeof(buf));
	ck_assert_int_eq(len, 16);
	u32 = PROTO_MAGIC;
	memcpy(want + 0, &u32, 4);
	want[4] = PROTO_VERSION_MAX;
	want[5] = PROTO_VERSION_MINOR;
	u16 = PROTO_MSG_DONE;
	memcpy(want + 6, &u16, 2);
	u32 = 16;
	memcpy(want + 8, &u32, 4);
	u32 = 0x01020304;
	memcpy(want + 12, &u32, 4);
	ck_assert_mem_eq(buf, want, 16);
	ck_assert_uint_eq(sizeof(struct proto_hdr), 16);
	if (htonl(1) != 1)	/* little-endian: the magic reads "TENS" */
		ck_assert_mem_eq(buf, "TENS", 4);

	/* HELLO is always version 1, whatever the highest version is. */
	msg = (struct proto_msg){ .type = PROTO_MSG_HELLO };
	msg.hello.n_versions = 1;
	msg.hello.versions[0] = 1;
	len = proto_encode(&msg, buf, sizeof(buf));
	ck_assert_int_gt(len, 16);
	ck_assert_uint_eq(buf[4], 1);
	ck_assert_uint_eq(hdr_read(buf).length, (uint32_t)len);
	/* Attributes follow the header, 4-byte aligned: VERSIONS is a nest (NLA_F_NESTED set). */
	{
		struct nlattr *nla = (struct nlattr *)(buf + 16);

		ck_assert_uint_eq(nla->nla_type, PROTO_HELLO_VERSIONS | NLA_F_NESTED);
		ck_assert_uint_eq(nla->nla_len, 4 + 8);
	}
}
END_TEST

/* The examples of docs/protocol.md section 10, byte for byte (little-endian hosts). */
START_TEST(test_doc_examples)
{
	static const uint8_t hello[] = {
		0x54, 0x45, 0x4e, 0x53, 0x01, 0x06, 0x01, 0x00, 0x34, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x0c, 0x00, 0x01, 0x80, 0x05, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00,
		0x05, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x0d, 0x00, 0x03, 0x00, 0x6e, 0x65, 0x74, 0x73, 0x65, 0x74, 0x75, 0x70, 0x00, 0x00, 0x00, 0x00,
	};
	static const uint8_t link[] = {
		0x54, 0x45, 0x4e, 0x53, 0x01, 0x06, 0x02, 0x00, 0x98, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
		0x08, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00,
		0x09, 0x00, 0x02, 0x00, 0x65, 0x74, 0x68, 0x30, 0x00, 0x00, 0x00, 0x00,
		0x0a, 0x00, 0x03, 0x00, 0x02, 0x42, 0xac, 0x11, 0x00, 0x02, 0x00, 0x00,
		0x08, 0x00, 0x04, 0x00, 0xdc, 0x05, 0x00, 0x00,
		0x08, 0x00, 0x05, 0x00, 0x43, 0x10, 0x00, 0x00,
		0x05, 0x00, 0x06, 0x00, 0x01, 0x00, 0x00, 0x00,
		0x08, 0x00, 0x08, 0x00, 0x00, 0x00, 0x01, 0x00,
		0x08, 0x00, 0x09, 0x00, 0xff, 0xff, 0x00, 0x00,
		0x08, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00,
		0x08, 0x00, 0x0b, 0x00, 0x01, 0x00, 0x00, 0x00,
		0x30, 0x00, 0x0c, 0x80,
		0x2c, 0x00, 0x01, 0x80,
		0x05, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00,
		0x08, 0x00, 0x02, 0x00, 0x0a, 0x00, 0x00, 0x02,
		0x05, 0x00, 0x03, 0x00, 0x18, 0x00, 0x00, 0x00,
		0x05, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x08, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	static const uint8_t ack[] = {
		0x54, 0x45, 0x4e, 0x53, 0x01, 0x06, 0x04, 0x00, 0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	};
	static const uint8_t error[] = {
		0x54, 0x45, 0x4e, 0x53, 0x01, 0x06, 0x05, 0x00, 0x24, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
		0x08, 0x00, 0x01, 0x00, 0x22, 0x00, 0x00, 0x00,
		0x0c, 0x00, 0x02, 0x00, 0x62, 0x61, 0x64, 0x20, 0x4d, 0x54, 0x55, 0x00,
	};
	struct proto_msg *msg = calloc(1, sizeof(*msg));
	uint8_t buf[512];

	ck_assert_ptr_nonnull(msg);
	if (htonl(1) == 1) {	/* the examples are little-endian */
		free(msg);
		return;
	}
	msg->type = PROTO_MSG_HELLO;
	msg->hello.n_versions = 1;
	msg->hello.versions[0] = 1;
	snprintf(msg->hello.software, sizeof(msg->hello.software), "netsetup");
	ck_assert_int_eq(proto_encode(msg, buf, sizeof(buf)), sizeof(hello));
	ck_assert_mem_eq(buf, hello, sizeof(hello));

	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_LINK;
	msg->seq = 1;
	msg->link.ifindex = 2;
	snprintf(msg->link.ifname, sizeof(msg->link.ifname), "eth0");
	memcpy(msg->link.mac, "\x02\x42\xac\x11\x00\x02", 6);
	msg->link.mtu = 1500;
	msg->link.flags = 0x1043;
	msg->link.gso_mode = PROTO_GSO_SW;
	msg->link.gso_max_size = 65536;
	msg->link.gso_max_segs = 65535;
	msg->link.gso_ipv4_max_size = 65536;
	msg->link.n_channels = 1;
	msg->link.n_addrs = 1;
	msg->link.addrs[0].family = AF_INET;
	msg->link.addrs[0].prefixlen = 24;
	inet_pton(AF_INET, "10.0.0.2", &msg->link.addrs[0].addr.v4);
	ck_assert_int_eq(proto_encode(msg, buf, sizeof(buf)), sizeof(link));
	ck_assert_mem_eq(buf, link, sizeof(link));

	memset(msg, 0, sizeof(*msg));
	msg->type = PROTO_MSG_ACK;
	msg->seq = 1;
	ck_assert_int_eq(proto_encode(msg, buf, sizeof(buf)), sizeof(ack));
	ck_assert_mem_eq(buf, ack, sizeof(ack));

	msg->type = PROTO_MSG_ERROR;
	msg->error.err = ERANGE;
	snprintf(msg->error.message, sizeof(msg->error.message), "bad MTU");
	ck_assert_int_eq(proto_encode(msg, buf, sizeof(buf)), sizeof(error));
	ck_assert_mem_eq(buf, error, sizeof(error));
	free(msg);
}
END_TEST

/* proto_encode()/proto_decode() without a socket, and what the encoder refuses. */
START_TEST(test_encode_decode_no_io)
{
	struct proto_msg *in = calloc(1, sizeof(*in)), *out;
	struct proto_why why;
	uint8_t *buf = malloc(PROTO_MSG_MAX_BYTES);
	int len, fd;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(buf);
	in->type = PROTO_MSG_ERROR;
	in->seq = 3;
	in->error.err = EEXIST;
	snprintf(in->error.message, sizeof(in->error.message), "address 10.0.0.1 exists");
	len = proto_encode(in, buf, PROTO_MSG_MAX_BYTES);
	ck_assert_int_gt(len, 16);
	ck_assert_int_eq(proto_decode(buf, (size_t)len, NULL, 0, &out, &why), 0);
	ck_assert_int_eq(out->type, PROTO_MSG_ERROR);
	ck_assert_int_eq(out->error.err, EEXIST);
	ck_assert_str_eq(out->error.message, "address 10.0.0.1 exists");
	proto_msg_free(out);

	/* Too small a buffer, and a message type that does not exist. */
	ck_assert_int_eq(proto_encode(in, buf, (size_t)len - 1), -E2BIG);
	in->type = PROTO_MSG_NONE;
	ck_assert_int_eq(proto_encode(in, buf, PROTO_MSG_MAX_BYTES), -EINVAL);
	in->type = PROTO_MSG_MAX;
	ck_assert_int_eq(proto_encode(in, buf, PROTO_MSG_MAX_BYTES), -EINVAL);

	/* The encoder never writes what the decoder would refuse for a limit. */
	memset(in, 0, sizeof(*in));
	in->type = PROTO_MSG_LINK;
	sample_link(&in->link, 1);
	in->link.n_addrs = PROTO_MAX_ADDRS + 1;
	ck_assert_int_eq(proto_encode(in, buf, PROTO_MSG_MAX_BYTES), -E2BIG);
	sample_link(&in->link, PROTO_MAX_CHANNELS + 1);
	ck_assert_int_eq(proto_encode(in, buf, PROTO_MSG_MAX_BYTES), -E2BIG);
	in->type = PROTO_MSG_HELLO;
	in->hello = (struct proto_hello){ .n_versions = PROTO_MAX_VERSIONS + 1 };
	ck_assert_int_eq(proto_encode(in, buf, PROTO_MSG_MAX_BYTES), -E2BIG);

	/* LINK decoded from a buffer takes ownership of the fd it is given. */
	memset(in, 0, sizeof(*in));
	in->type = PROTO_MSG_LINK;
	sample_link(&in->link, 1);
	len = proto_encode(in, buf, PROTO_MSG_MAX_BYTES);
	ck_assert_int_gt(len, 16);
	fd = packet_socket();
	ck_assert_int_eq(proto_decode(buf, (size_t)len, &fd, 1, &out, &why), 0);
	link_assert_equal(&out->link, &in->link);
	ck_assert_int_eq(out->link.channel_fds[0], fd);
	proto_msg_free(out);
	ck_assert(!fd_is_open(fd));
	/* ... and closes it when it refuses. */
	fd = packet_socket();
	ck_assert_int_eq(proto_decode(buf, (size_t)len - 1, &fd, 1, &out, &why), -EBADMSG);
	ck_assert_ptr_null(out);
	ck_assert(!fd_is_open(fd));
	free(in);
	free(buf);
}
END_TEST

/*
 * A newer minor version adds attributes and list entry kinds: an older
 * receiver skips what it does not know and decodes the rest unchanged.
 */
START_TEST(test_unknown_attributes_skipped)
{
	static const uint8_t v4[4] = { 10, 1, 2, 3 };
	uint8_t *buf = malloc(2 * PROTO_MSG_MAX_BYTES);
	struct nl_msg *nl;
	struct nlattr *list, *entry;
	struct proto_msg *msg;
	size_t len;
	int fd;

	ck_assert_ptr_nonnull(buf);
	/* LINK: unknown top-level attribute, unknown attribute in an entry, unknown entry kind. */
	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_LINK_ATTR_MAX + 1, 0xdeadbeef), 0);
	link_mandatory_put(nl, 0, 1);
	ck_assert_int_eq(nla_put_string(nl, 1000, "from minor 9"), 0);
	list = nla_nest_start(nl, PROTO_LINK_ADDRS);
	entry = nla_nest_start(nl, PROTO_LINK_ADDR + 1);	/* a kind of entry from the future */
	ck_assert_int_eq(nla_put_u32(nl, 77, 1), 0);
	nla_nest_end(nl, entry);
	entry = nla_nest_start(nl, PROTO_LINK_ADDR);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ADDR_FAMILY, AF_INET), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_ADDR_ATTR_MAX + 1, 3, "abc"), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_ADDR_ADDRESS, 4, v4), 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ADDR_PREFIXLEN, 8), 0);
	nla_nest_end(nl, entry);
	nla_nest_end(nl, list);
	len = msg_build_finish(nl, PROTO_MSG_LINK, PROTO_VERSION_MINOR + 1, 21, buf,
			       2 * PROTO_MSG_MAX_BYTES);
	fd = packet_socket();
	raw_send(sk[SENDER], buf, len, &fd, 1);
	close(fd);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_LINK);
	ck_assert_uint_eq(msg->minor, PROTO_VERSION_MINOR + 1);
	ck_assert_uint_eq(msg->link.ifindex, 3);
	ck_assert_str_eq(msg->link.ifname, "veth0");
	ck_assert_uint_eq(msg->link.mtu, 1500);
	ck_assert_uint_eq(msg->link.n_addrs, 1);
	ck_assert_uint_eq(msg->link.addrs[0].family, AF_INET);
	ck_assert_mem_eq(msg->link.addrs[0].addr.bytes, v4, 4);
	ck_assert_uint_eq(msg->link.addrs[0].prefixlen, 8);
	proto_msg_free(msg);

	/* HELLO: unknown attribute, and an unknown entry kind in VERSIONS. */
	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u64(nl, PROTO_HELLO_ATTR_MAX + 5, 1), 0);
	list = nla_nest_start(nl, PROTO_HELLO_VERSIONS);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_VERSION, 1), 0);
	ck_assert_int_eq(nla_put_u32(nl, PROTO_HELLO_VERSION + 1, 0xffff), 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_VERSION, 4), 0);
	nla_nest_end(nl, list);
	len = msg_build_finish(nl, PROTO_MSG_HELLO, 3, 22, buf, 2 * PROTO_MSG_MAX_BYTES);
	raw_send(sk[SENDER], buf, len, NULL, 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_HELLO);
	ck_assert_uint_eq(msg->hello.n_versions, 2);
	ck_assert_uint_eq(msg->hello.versions[0], 1);
	ck_assert_uint_eq(msg->hello.versions[1], 4);
	proto_msg_free(msg);

	/* ERROR and DONE with an attribute of a newer minor. */
	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_ERROR_ERRNO, ENODEV), 0);
	ck_assert_int_eq(nla_put_string(nl, PROTO_ERROR_MESSAGE, "no such link"), 0);
	ck_assert_int_eq(nla_put_u32(nl, PROTO_ERROR_ATTR_MAX + 1, 1), 0);
	len = msg_build_finish(nl, PROTO_MSG_ERROR, 1, 23, buf, 2 * PROTO_MSG_MAX_BYTES);
	raw_send(sk[SENDER], buf, len, NULL, 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_ERROR);
	ck_assert_int_eq(msg->error.err, ENODEV);
	ck_assert_str_eq(msg->error.message, "no such link");
	proto_msg_free(msg);

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_DONE_ATTR_MAX + 1, 1), 0);
	len = msg_build_finish(nl, PROTO_MSG_DONE, 1, 24, buf, 2 * PROTO_MSG_MAX_BYTES);
	raw_send(sk[SENDER], buf, len, NULL, 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_DONE);
	ck_assert_uint_eq(msg->seq, 24);
	proto_msg_free(msg);

	/* The last attribute may come without its padding: a 1-byte attribute ends the message. */
	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u8(nl, 9, 1), 0);
	len = msg_build_finish(nl, PROTO_MSG_ACK, 1, 25, buf, 2 * PROTO_MSG_MAX_BYTES) - 3;
	hdr_write(buf, PROTO_MAGIC, 1, 1, PROTO_MSG_ACK, (uint32_t)len, 25);
	ck_assert_uint_eq(len, 16 + 5);
	raw_send(sk[SENDER], buf, len, NULL, 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_ACK);
	ck_assert_uint_eq(msg->seq, 25);
	proto_msg_free(msg);
	assert_nothing_queued(sk[SENDER]);
	free(buf);
}
END_TEST

START_TEST(test_expect_ack)
{
	struct proto_why why = { 0 };
	struct proto_msg *msg;

	ck_assert_int_eq(proto_send_ack(sk[RECEIVER], 8), 0);
	ck_assert_int_eq(proto_expect_ack(sk[SENDER], 8, &why), 0);

	/* An ACK for another message. */
	ck_assert_int_eq(proto_send_ack(sk[RECEIVER], 9), 0);
	ck_assert_int_eq(proto_expect_ack(sk[SENDER], 10, &why), -EPROTO);
	ck_assert_ptr_nonnull(strstr(why.text, "ACK for message 9, expected 10"));

	/* ERROR instead: the peer's errno and words. */
	ck_assert_int_eq(proto_send_error(sk[RECEIVER], 11, ENODEV, "link eth1 is gone"), 0);
	ck_assert_int_eq(proto_expect_ack(sk[SENDER], 11, &why), -ENODEV);
	ck_assert_ptr_nonnull(strstr(why.text, "peer refused: link eth1 is gone"));

	/* Another type: refused, and the peer is told. */
	ck_assert_int_eq(proto_send_done(sk[RECEIVER], 12), 0);
	ck_assert_int_eq(proto_expect_ack(sk[SENDER], 12, &why), -EPROTO);
	ck_assert_ptr_nonnull(strstr(why.text, "expected ACK, got DONE"));
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_ERROR);
	ck_assert_int_eq(msg->error.err, EPROTO);
	ck_assert_str_eq(msg->error.message, why.text);
	ck_assert_uint_eq(msg->seq, 12);
	proto_msg_free(msg);

	/* The peer hangs up. */
	close(sk[RECEIVER]);
	sk[RECEIVER] = socket(AF_UNIX, SOCK_SEQPACKET, 0);	/* keeps teardown's close() balanced */
	ck_assert_int_eq(proto_expect_ack(sk[SENDER], 13, &why), -ECONNRESET);
	ck_assert_ptr_nonnull(strstr(why.text, "peer closed the connection while ACK was expected"));
}
END_TEST

START_TEST(test_eof)
{
	struct proto_why why = { 0 };
	struct proto_msg *msg;

	shutdown(sk[SENDER], SHUT_WR);
	ck_assert_int_eq(proto_recv(sk[RECEIVER], &msg, &why), 0);
	ck_assert_ptr_null(msg);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(proto_msg_type_name(PROTO_MSG_HELLO), "HELLO");
	ck_assert_str_eq(proto_msg_type_name(PROTO_MSG_LINK), "LINK");
	ck_assert_str_eq(proto_msg_type_name(PROTO_MSG_DONE), "DONE");
	ck_assert_str_eq(proto_msg_type_name(PROTO_MSG_ACK), "ACK");
	ck_assert_str_eq(proto_msg_type_name(PROTO_MSG_ERROR), "ERROR");
	ck_assert_str_eq(proto_msg_type_name(PROTO_MSG_MAX), "UNKNOWN");
	ck_assert_str_eq(proto_msg_type_name(0xffff), "UNKNOWN");
	for (int m = 0; m < PROTO_GSO_MODE_MAX; m++)
		ck_assert_int_eq(proto_gso_mode_parse(proto_gso_mode_name(m)), m);
	ck_assert_str_eq(proto_gso_mode_name(PROTO_GSO_HW), "hw");
	ck_assert_str_eq(proto_gso_mode_name(PROTO_GSO_MODE_MAX), "unknown");
	ck_assert_int_eq(proto_gso_mode_parse("HW"), -EINVAL);
	ck_assert_int_eq(proto_gso_mode_parse(""), -EINVAL);
}
END_TEST

static Suite *proto_roundtrip_suite(void)
{
	Suite *s = suite_create("proto_roundtrip");
	TCase *tc = tcase_create("roundtrip");

	tcase_add_checked_fixture(tc, proto_fixture_setup, proto_fixture_teardown);
	tcase_add_test(tc, test_hello_roundtrip);
	tcase_add_test(tc, test_link_roundtrip);
	tcase_add_test(tc, test_link_mandatory_only);
	tcase_add_test(tc, test_link_at_limits);
	tcase_add_test(tc, test_link_mtu_bounds_accepted);
	tcase_add_test(tc, test_done_ack_roundtrip);
	tcase_add_test(tc, test_error_roundtrip);
	tcase_add_test(tc, test_header_layout);
	tcase_add_test(tc, test_doc_examples);
	tcase_add_test(tc, test_encode_decode_no_io);
	tcase_add_test(tc, test_unknown_attributes_skipped);
	tcase_add_test(tc, test_expect_ack);
	tcase_add_test(tc, test_eof);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(proto_roundtrip_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
