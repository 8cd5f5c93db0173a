// SPDX-License-Identifier: MIT
/*
 * test_proto_badinput.c - every kind of malformed message is refused cleanly
 *
 * Theory of operation
 *
 * Each case crafts a malformed message (a valid one from proto_encode() with
 * bytes patched, or attributes written with libnl's nla_put() behind a
 * hand-written header), sends it raw with the fds of the case attached, and
 * hands it to expect_refused() (proto_testlib.h), which checks the whole
 * contract: proto_recv() returns the errno, why->text names the problem, the
 * sender receives an ERROR with that errno, text and seq, every fd that came
 * along is closed (the /proc/self/fd count), and the next message on the same
 * socket is received fine. The fixture's teardown fails any test that leaks
 * an fd. The errno of each kind of refusal is part of docs/protocol.md.
 *
 * PROTO_MAX_LINKS is not here: proto/ decodes one LINK at a time and the
 * receiver of a configuration counts them (datapath).
 */
#include "tests/unit/proto_testlib.h"

#define SEQ 0x77007700u

/* Big enough for the oversized messages. */
static uint8_t mbuf[2 * PROTO_MSG_MAX_BYTES];

/* Finish @nl as message @type and expect it refused, with @n_fds AF_PACKET sockets attached. */
#define refuse(nl, type, n_fds, err, text) refuse_at(__LINE__, (nl), (type), (n_fds), (err), (text))

static void refuse_at(int line, struct nl_msg *nl, uint16_t type, unsigned int n_fds, int err,
		      const char *text)
{
	int fds[PROTO_MAX_CHANNELS + 1];
	size_t len = msg_build_finish(nl, type, PROTO_VERSION_MINOR, SEQ, mbuf, sizeof(mbuf));

	ck_assert_uint_le(n_fds, PROTO_MAX_CHANNELS + 1);
	packet_sockets(fds, n_fds);
	expect_refused_at(line, mbuf, len, fds, n_fds, err, text, type != PROTO_MSG_ERROR);
}

/* A valid LINK from proto_encode() with @n_channels, into mbuf. */
static size_t link_encoded(unsigned int n_channels)
{
	struct proto_msg *msg = calloc(1, sizeof(*msg));
	int len;

	ck_assert_ptr_nonnull(msg);
	msg->type = PROTO_MSG_LINK;
	msg->seq = SEQ;
	sample_link(&msg->link, n_channels);
	len = proto_encode(msg, mbuf, sizeof(mbuf));
	ck_assert_int_gt(len, 16);
	free(msg);
	return (size_t)len;
}

static size_t done_encoded(void)
{
	struct proto_msg msg = { .type = PROTO_MSG_DONE, .seq = SEQ };
	int len = proto_encode(&msg, mbuf, sizeof(mbuf));

	ck_assert_int_eq(len, 16);
	return (size_t)len;
}

/* The valid message that follows every refusal really is fine, fds included. */
static void link_still_accepted(void)
{
	struct proto_msg *msg;
	size_t len = link_encoded(2);
	int fds[2];

	packet_sockets(fds, 2);
	raw_send(sk[SENDER], mbuf, len, fds, 2);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_LINK);
	ck_assert(fd_same_file(msg->link.channel_fds[0], fds[0]));
	ck_assert(fd_same_file(msg->link.channel_fds[1], fds[1]));
	proto_msg_free(msg);
	fds_close_all(fds, 2);
}

START_TEST(test_short_message)
{
	int fd;

	done_encoded();
	expect_refused(mbuf, 8, NULL, 0, EBADMSG, "short message: 8 bytes, the header alone is 16");
	expect_refused(mbuf, 15, NULL, 0, EBADMSG, "short message: 15 bytes");
	expect_refused(mbuf, 1, NULL, 0, EBADMSG, "short message: 1 bytes");
	/* With fds: they are closed. Zero bytes with an fd is a message, not EOF. */
	fd = packet_socket();
	expect_refused(mbuf, 8, &fd, 1, EBADMSG, "short message: 8 bytes");
	fd = packet_socket();
	expect_refused(mbuf, 0, &fd, 1, EBADMSG, "short message: 0 bytes");
	link_still_accepted();
}
END_TEST

START_TEST(test_bad_magic)
{
	struct proto_hdr h;
	size_t len;
	int fds[2];

	/* A peer with the other byte order. */
	len = done_encoded();
	h = hdr_read(mbuf);
	hdr_write(mbuf, __builtin_bswap32(PROTO_MAGIC), h.version, h.minor, h.type, h.length, h.seq);
	expect_refused(mbuf, len, NULL, 0, EBADMSG, "bad magic 0x54454e53, expected 0x534e4554");

	len = link_encoded(2);
	mbuf[0] ^= 0x01;
	packet_sockets(fds, 2);
	expect_refused(mbuf, len, fds, 2, EBADMSG, "bad magic");
	link_still_accepted();
}
END_TEST

START_TEST(test_unsupported_version)
{
	static const uint8_t versions[] = { 0, PROTO_VERSION_MAX + 1, 255 };
	char text[64];
	size_t len;
	int fds[2];

	for (unsigned int i = 0; i < sizeof(versions); i++) {
		snprintf(text, sizeof(text), "unsupported protocol version %u", versions[i]);
		len = done_encoded();
		mbuf[4] = versions[i];
		expect_refused(mbuf, len, NULL, 0, EPROTONOSUPPORT, text);

		len = link_encoded(2);
		mbuf[4] = versions[i];
		packet_sockets(fds, 2);
		expect_refused(mbuf, len, fds, 2, EPROTONOSUPPORT, text);
	}
	link_still_accepted();
}
END_TEST

START_TEST(test_length_disagrees)
{
	static const int64_t deltas[] = { -1, +1, -4, +4 };
	struct proto_hdr h;
	char text[96];
	size_t len;
	int fds[2];

	for (unsigned int i = 0; i < 4; i++) {
		len = link_encoded(2);
		h = hdr_read(mbuf);
		hdr_write(mbuf, h.magic, h.version, h.minor, h.type, (uint32_t)((int64_t)len + deltas[i]),
			  h.seq);
		snprintf(text, sizeof(text), "length field says %u bytes but %zu arrived",
			 (uint32_t)((int64_t)len + deltas[i]), len);
		packet_sockets(fds, 2);
		expect_refused(mbuf, len, fds, 2, EBADMSG, text);
	}
	/* Absurd values, and a DONE that says it has a body it does not. */
	len = done_encoded();
	h = hdr_read(mbuf);
	hdr_write(mbuf, h.magic, h.version, h.minor, h.type, 0xffffffffu, h.seq);
	expect_refused(mbuf, len, NULL, 0, EBADMSG, "length field says 4294967295 bytes but 16 arrived");
	hdr_write(mbuf, h.magic, h.version, h.minor, h.type, 0, h.seq);
	expect_refused(mbuf, len, NULL, 0, EBADMSG, "length field says 0 bytes");
	/* The message arrived shorter than the sender wrote it (a cut message). */
	len = link_encoded(1);
	packet_sockets(fds, 1);
	expect_refused(mbuf, len - 8, fds, 1, EBADMSG, "but ");
	link_still_accepted();
}
END_TEST

START_TEST(test_truncated_attribute)
{
	/* ADDRS payloads written byte by byte: nla_len, nla_type, data. */
	static const uint8_t entry_cut[] = { 12, 0, PROTO_LINK_ADDR, 0x80, 0, 0, 0, 0 };
	static const uint8_t attr_in_entry_cut[] = { 12, 0, PROTO_LINK_ADDR, 0x80,
						     12, 0, PROTO_ADDR_FAMILY, 0, 2, 0, 0, 0 };
	static const uint8_t nla_len_under_header[] = { 2, 0, PROTO_LINK_ADDR, 0x80 };
	struct nl_msg *nl;
	struct proto_hdr h;
	size_t len;
	int fds[2];

	/* The last top-level attribute cut short, the length field fixed up. */
	len = link_encoded(2) - 3;
	h = hdr_read(mbuf);
	hdr_write(mbuf, h.magic, h.version, h.minor, h.type, (uint32_t)len, h.seq);
	packet_sockets(fds, 2);
	expect_refused(mbuf, len, fds, 2, EBADMSG, "LINK: truncated attribute");

	/* Two stray bytes after the last attribute. */
	len = link_encoded(1);
	mbuf[len] = 0xaa;
	mbuf[len + 1] = 0xbb;
	len += 2;
	h = hdr_read(mbuf);
	hdr_write(mbuf, h.magic, h.version, h.minor, h.type, (uint32_t)len, h.seq);
	packet_sockets(fds, 1);
	expect_refused(mbuf, len, fds, 1, EBADMSG, "LINK: truncated attribute (2 bytes left over)");

	/* An attribute header that claims less than itself. */
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	ck_assert_int_eq(nla_put(nl, PROTO_LINK_ADDRS | NLA_F_NESTED, sizeof(nla_len_under_header),
				 nla_len_under_header), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EBADMSG, "LINK: ADDRS: truncated entry (4 bytes left over)");

	/* An entry longer than its list. */
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	ck_assert_int_eq(nla_put(nl, PROTO_LINK_ADDRS | NLA_F_NESTED, sizeof(entry_cut), entry_cut), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EBADMSG, "LINK: ADDRS: truncated entry (8 bytes left over)");

	/* An attribute longer than its entry. */
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	ck_assert_int_eq(nla_put(nl, PROTO_LINK_ADDRS | NLA_F_NESTED, sizeof(attr_in_entry_cut),
				 attr_in_entry_cut), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EBADMSG, "LINK: ADDRS entry 0: truncated attribute (8 bytes left over)");

	/* Inside HELLO's version list. */
	nl = msg_build_start();
	ck_assert_int_eq(nla_put(nl, PROTO_HELLO_VERSIONS | NLA_F_NESTED, sizeof(entry_cut), entry_cut),
			 0);
	refuse(nl, PROTO_MSG_HELLO, 0, EBADMSG, "HELLO: VERSIONS: truncated attribute");
	link_still_accepted();
}
END_TEST

START_TEST(test_attribute_wrong_size)
{
	static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	struct nl_msg *nl;
	struct nlattr *list;

	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_MTU, 1);
	ck_assert_int_eq(nla_put_u16(nl, PROTO_LINK_MTU, 1500), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: attribute MTU: wrong size 2, expected 4");

	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_MAC, 1);
	ck_assert_int_eq(nla_put(nl, PROTO_LINK_MAC, 5, "\x02\x00\x00\x00\x01"), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: attribute MAC: wrong size 5, expected 6");

	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_GSO_MODE, 2);
	ck_assert_int_eq(nla_put_u32(nl, PROTO_LINK_GSO_MODE, PROTO_GSO_SW), 0);
	refuse(nl, PROTO_MSG_LINK, 2, EINVAL, "LINK: attribute GSO_MODE: wrong size 4, expected 1");

	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_CHANNELS, 1);
	ck_assert_int_eq(nla_put_u64(nl, PROTO_LINK_CHANNELS, 1), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: attribute CHANNELS: wrong size 8, expected 4");

	/* An address of the wrong size for its family, and of no family's size. */
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ADDRS);
	addr_entry_put(nl, AF_INET, v6, 16, 24);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL,
	       "LINK: ADDRS entry 0: attribute ADDRESS: 16 bytes for an IPv4 address, expected 4");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ADDRS);
	addr_entry_put(nl, AF_INET6, v6, 16, 64);
	addr_entry_put(nl, AF_INET6, v6, 3, 64);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL,
	       "LINK: ADDRS entry 1: attribute ADDRESS: wrong size 3, expected 4..16");

	/* A neighbour's link-layer address. */
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_NEIGHS);
	{
		struct nlattr *e = nla_nest_start(nl, PROTO_LINK_NEIGH);

		ck_assert_int_eq(nla_put_u8(nl, PROTO_NEIGH_FAMILY, AF_INET6), 0);
		ck_assert_int_eq(nla_put(nl, PROTO_NEIGH_ADDRESS, 16, v6), 0);
		ck_assert_int_eq(nla_put(nl, PROTO_NEIGH_LLADDR, 8, "\x02\0\0\0\0\x01\0\0"), 0);
		nla_nest_end(nl, e);
	}
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL,
	       "LINK: NEIGHS entry 0: attribute LLADDR: wrong size 8, expected 6");

	/* A route's gateway of the other family. */
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ROUTES);
	{
		struct nlattr *e = nla_nest_start(nl, PROTO_LINK_ROUTE);

		ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_FAMILY, AF_INET), 0);
		ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_DST_LEN, 0), 0);
		ck_assert_int_eq(nla_put(nl, PROTO_ROUTE_GATEWAY, 16, v6), 0);
		nla_nest_end(nl, e);
	}
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL,
	       "LINK: ROUTES entry 0: attribute GATEWAY: 16 bytes for an IPv4 address, expected 4");

	/* HELLO's versions are u8. */
	nl = msg_build_start();
	list = nla_nest_start(nl, PROTO_HELLO_VERSIONS);
	ck_assert_int_eq(nla_put_u32(nl, PROTO_HELLO_VERSION, 1), 0);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_HELLO, 0, EINVAL,
	       "HELLO: VERSIONS: attribute VERSION: wrong size 4, expected 1");

	/* A malformed ERROR is refused but never answered (no ERROR ping-pong). */
	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u64(nl, PROTO_ERROR_ERRNO, EINVAL), 0);
	ck_assert_int_eq(nla_put_string(nl, PROTO_ERROR_MESSAGE, "x"), 0);
	refuse(nl, PROTO_MSG_ERROR, 0, EINVAL, "ERROR: attribute ERRNO: wrong size 8, expected 4");
	link_still_accepted();
}
END_TEST

START_TEST(test_missing_mandatory)
{
	static const struct { int type; const char *name; } link_attrs[] = {
		{ PROTO_LINK_IFINDEX, "IFINDEX" }, { PROTO_LINK_IFNAME, "IFNAME" },
		{ PROTO_LINK_MAC, "MAC" }, { PROTO_LINK_MTU, "MTU" },
		{ PROTO_LINK_GSO_MODE, "GSO_MODE" }, { PROTO_LINK_CHANNELS, "CHANNELS" },
	};
	static const uint8_t v4[4] = { 192, 0, 2, 1 };
	char text[96];
	struct nl_msg *nl;
	struct nlattr *list, *e;

	for (unsigned int i = 0; i < sizeof(link_attrs) / sizeof(link_attrs[0]); i++) {
		nl = msg_build_start();
		link_mandatory_put(nl, link_attrs[i].type, 1);
		snprintf(text, sizeof(text), "LINK: missing mandatory attribute %s", link_attrs[i].name);
		refuse(nl, PROTO_MSG_LINK, 1, EINVAL, text);
	}

	/* Inside entries: an address without a prefix length, a route without DST_LEN,
	 * a neighbour without its link-layer address. */
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ADDRS);
	e = nla_nest_start(nl, PROTO_LINK_ADDR);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ADDR_FAMILY, AF_INET), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_ADDR_ADDRESS, 4, v4), 0);
	nla_nest_end(nl, e);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: ADDRS entry 0: missing mandatory attribute PREFIXLEN");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ROUTES);
	e = nla_nest_start(nl, PROTO_LINK_ROUTE);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_FAMILY, AF_INET), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_ROUTE_GATEWAY, 4, v4), 0);
	nla_nest_end(nl, e);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: ROUTES entry 0: missing mandatory attribute DST_LEN");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_NEIGHS);
	e = nla_nest_start(nl, PROTO_LINK_NEIGH);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_NEIGH_FAMILY, AF_INET), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_NEIGH_ADDRESS, 4, v4), 0);
	nla_nest_end(nl, e);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: NEIGHS entry 0: missing mandatory attribute LLADDR");

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_MINOR, 0), 0);
	refuse(nl, PROTO_MSG_HELLO, 0, EINVAL, "HELLO: missing mandatory attribute VERSIONS");

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_ERROR_ERRNO, EIO), 0);
	refuse(nl, PROTO_MSG_ERROR, 0, EINVAL, "ERROR: missing mandatory attribute MESSAGE");
	link_still_accepted();
}
END_TEST

START_TEST(test_string_without_nul)
{
	struct nl_msg *nl;
	struct nlattr *list;

	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_IFNAME, 1);
	ck_assert_int_eq(nla_put(nl, PROTO_LINK_IFNAME, 4, "eth0"), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: attribute IFNAME: string without NUL");

	/* Exactly IFNAMSIZ bytes, none of them NUL. */
	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_IFNAME, 1);
	ck_assert_int_eq(nla_put(nl, PROTO_LINK_IFNAME, IFNAMSIZ, "abcdefghijklmnop"), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: attribute IFNAME: string without NUL");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	ck_assert_int_eq(nla_put(nl, PROTO_LINK_GSO_REASON, 6, "tso on"), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: attribute GSO_REASON: string without NUL");

	nl = msg_build_start();
	list = nla_nest_start(nl, PROTO_HELLO_VERSIONS);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_VERSION, 1), 0);
	nla_nest_end(nl, list);
	ck_assert_int_eq(nla_put(nl, PROTO_HELLO_SOFTWARE, 7, "sandnet"), 0);
	refuse(nl, PROTO_MSG_HELLO, 0, EINVAL, "HELLO: attribute SOFTWARE: string without NUL");

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_ERROR_ERRNO, EIO), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_ERROR_MESSAGE, 3, "bad"), 0);
	refuse(nl, PROTO_MSG_ERROR, 0, EINVAL, "ERROR: attribute MESSAGE: string without NUL");
	link_still_accepted();
}
END_TEST

START_TEST(test_string_too_long)
{
	char reason[PROTO_TEXT_MAX + 1];
	struct nl_msg *nl;

	/* 16 characters and the NUL: one over IFNAMSIZ. */
	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_IFNAME, 1);
	ck_assert_int_eq(nla_put_string(nl, PROTO_LINK_IFNAME, "abcdefghijklmnop"), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL,
	       "LINK: attribute IFNAME: string of 17 bytes, allowed 1..16 with the NUL");

	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_IFNAME, 2);
	ck_assert_int_eq(nla_put_string(nl, PROTO_LINK_IFNAME, "a-very-long-interface-name"), 0);
	refuse(nl, PROTO_MSG_LINK, 2, EINVAL, "LINK: attribute IFNAME: string of 27 bytes");

	/* Empty: no bytes at all, and only the NUL. */
	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_IFNAME, 1);
	ck_assert_int_eq(nla_put(nl, PROTO_LINK_IFNAME, 0, NULL), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: attribute IFNAME: string of 0 bytes");

	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_IFNAME, 1);
	ck_assert_int_eq(nla_put_string(nl, PROTO_LINK_IFNAME, ""), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: attribute IFNAME: empty name");

	/* Texts are limited to PROTO_TEXT_MAX bytes with the NUL. */
	memset(reason, 'r', PROTO_TEXT_MAX);
	reason[PROTO_TEXT_MAX] = '\0';
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	ck_assert_int_eq(nla_put_string(nl, PROTO_LINK_GSO_REASON, reason), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL,
	       "LINK: attribute GSO_REASON: string of 257 bytes, allowed 1..256 with the NUL");
	link_still_accepted();
}
END_TEST

START_TEST(test_mtu_out_of_range)
{
	static const uint32_t mtus[] = { PROTO_MTU_MIN - 1, PROTO_MTU_MAX + 1, 0, 0xffffffffu };
	char text[96];

	for (unsigned int i = 0; i < 4; i++) {
		struct nl_msg *nl = msg_build_start();

		link_mandatory_put(nl, PROTO_LINK_MTU, 1);
		ck_assert_int_eq(nla_put_u32(nl, PROTO_LINK_MTU, mtus[i]), 0);
		snprintf(text, sizeof(text), "LINK veth0: attribute MTU: %u is out of range 68..65535",
			 mtus[i]);
		refuse(nl, PROTO_MSG_LINK, 1, ERANGE, text);
	}
	link_still_accepted();
}
END_TEST

START_TEST(test_prefixlen_too_long)
{
	static const uint8_t v4[4] = { 10, 0, 0, 1 }, v6[16] = { 0xfd };
	struct nl_msg *nl;
	struct nlattr *list, *e;

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ADDRS);
	addr_entry_put(nl, AF_INET, v4, 4, 32);		/* the limit itself is fine */
	addr_entry_put(nl, AF_INET, v4, 4, 33);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL,
	       "LINK: ADDRS entry 1: attribute PREFIXLEN: 33 is over 32 for IPv4");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ADDRS);
	addr_entry_put(nl, AF_INET6, v6, 16, 128);
	addr_entry_put(nl, AF_INET6, v6, 16, 129);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL,
	       "LINK: ADDRS entry 1: attribute PREFIXLEN: 129 is over 128 for IPv6");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ROUTES);
	e = nla_nest_start(nl, PROTO_LINK_ROUTE);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_FAMILY, AF_INET), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_ROUTE_DST, 4, v4), 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_DST_LEN, 33), 0);
	nla_nest_end(nl, e);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL,
	       "LINK: ROUTES entry 0: attribute DST_LEN: 33 is over 32 for IPv4");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ROUTES);
	e = nla_nest_start(nl, PROTO_LINK_ROUTE);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_FAMILY, AF_INET6), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_ROUTE_DST, 16, v6), 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_DST_LEN, 255), 0);
	nla_nest_end(nl, e);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL,
	       "LINK: ROUTES entry 0: attribute DST_LEN: 255 is over 128 for IPv6");
	link_still_accepted();
}
END_TEST

START_TEST(test_more_fds_than_declared)
{
	static int many[253];
	struct nl_msg *nl;
	size_t len;
	int fd;

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	refuse(nl, PROTO_MSG_LINK, 2, EBADMSG, "LINK veth0: declares 1 channel fds but 2 arrived");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 2);
	refuse(nl, PROTO_MSG_LINK, PROTO_MAX_CHANNELS, EBADMSG,
	       "LINK veth0: declares 2 channel fds but 64 arrived");

	/* As many as Linux passes in one message (SCM_MAX_FD): all of them closed. */
	len = link_encoded(1);
	fd = packet_socket();
	for (unsigned int i = 0; i < 253; i++) {
		many[i] = dup(fd);
		ck_assert_int_ge(many[i], 0);
	}
	close(fd);
	expect_refused(mbuf, len, many, 253, EBADMSG, "declares 1 channel fds but 253 arrived");

	/* Messages that carry no fds at all. */
	len = done_encoded();
	fd = packet_socket();
	expect_refused(mbuf, len, &fd, 1, EBADMSG, "DONE: declares 0 status fds but 1 arrived");
	{
		struct proto_msg ack = { .type = PROTO_MSG_ACK, .seq = SEQ };
		int fds[3];

		len = (size_t)proto_encode(&ack, mbuf, sizeof(mbuf));
		packet_sockets(fds, 3);
		expect_refused(mbuf, len, fds, 3, EBADMSG, "ACK carries no fds but 3 arrived");
	}
	nl = msg_build_start();
	{
		struct nlattr *list = nla_nest_start(nl, PROTO_HELLO_VERSIONS);

		ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_VERSION, 1), 0);
		nla_nest_end(nl, list);
	}
	refuse(nl, PROTO_MSG_HELLO, 1, EBADMSG, "HELLO carries no fds but 1 arrived");
	link_still_accepted();
}
END_TEST

START_TEST(test_fewer_fds_than_declared)
{
	struct nl_msg *nl;
	size_t len;
	int fds[PROTO_MAX_CHANNELS];

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 2);
	refuse(nl, PROTO_MSG_LINK, 1, EBADMSG, "LINK veth0: declares 2 channel fds but 1 arrived");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, PROTO_MAX_CHANNELS);
	refuse(nl, PROTO_MSG_LINK, PROTO_MAX_CHANNELS - 1, EBADMSG,
	       "declares 64 channel fds but 63 arrived");

	len = link_encoded(1);
	expect_refused(mbuf, len, NULL, 0, EBADMSG, "declares 1 channel fds but 0 arrived");
	len = link_encoded(3);
	packet_sockets(fds, 2);
	expect_refused(mbuf, len, fds, 2, EBADMSG, "declares 3 channel fds but 2 arrived");
	link_still_accepted();
}
END_TEST

START_TEST(test_fds_not_packet_sockets)
{
	int fds[3], p[2];
	size_t len;

	/* A pipe, both ends. */
	len = link_encoded(1);
	ck_assert_int_eq(pipe(p), 0);
	expect_refused(mbuf, len, &p[0], 1, EBADF, "LINK: channel fd 0 is not a socket");
	expect_refused(mbuf, len, &p[1], 1, EBADF, "LINK: channel fd 0 is not a socket");

	/* A regular file. */
	fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fds[0], 0);
	expect_refused(mbuf, len, fds, 1, EBADF, "LINK: channel fd 0 is not a socket");

	/* Unix sockets: stream and the very kind proto runs on. */
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, p), 0);
	close(p[1]);
	expect_refused(mbuf, len, &p[0], 1, EBADF,
		       "LINK: channel fd 0 is a socket of family 1 type 1, not AF_PACKET SOCK_RAW");
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, p), 0);
	close(p[1]);
	expect_refused(mbuf, len, &p[0], 1, EBADF, "is a socket of family 1 type 5");

	/* AF_INET and AF_INET6. */
	fds[0] = socket(AF_INET, SOCK_DGRAM, 0);
	ck_assert_int_ge(fds[0], 0);
	expect_refused(mbuf, len, fds, 1, EBADF, "LINK: channel fd 0 is a socket of family 2 type 2");
	fds[0] = socket(AF_INET6, SOCK_STREAM, 0);
	ck_assert_int_ge(fds[0], 0);
	expect_refused(mbuf, len, fds, 1, EBADF, "is a socket of family 10 type 1");
	fds[0] = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	ck_assert_int_ge(fds[0], 0);
	expect_refused(mbuf, len, fds, 1, EBADF, "is a socket of family 2 type 3");

	/* AF_PACKET but cooked (SOCK_DGRAM): not a channel either. */
	fds[0] = socket(AF_PACKET, SOCK_DGRAM, 0);
	ck_assert_int_ge(fds[0], 0);
	expect_refused(mbuf, len, fds, 1, EBADF, "is a socket of family 17 type 2");

	/* Two good channels and a bad third: all three closed. */
	len = link_encoded(3);
	packet_sockets(fds, 2);
	ck_assert_int_eq(pipe(p), 0);
	close(p[1]);
	fds[2] = p[0];
	expect_refused(mbuf, len, fds, 3, EBADF, "LINK: channel fd 2 is not a socket");
	link_still_accepted();
}
END_TEST

/* A LINK with @n entries in list @list_type, each written by @put. */
static struct nl_msg *link_with_entries(int list_type, int entry_type, unsigned int n,
					void (*put)(struct nl_msg *nl, unsigned int i))
{
	struct nl_msg *nl = msg_build_start();
	struct nlattr *list;

	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, list_type);
	ck_assert_ptr_nonnull(list);
	for (unsigned int i = 0; i < n; i++) {
		struct nlattr *e = nla_nest_start(nl, entry_type);

		ck_assert_ptr_nonnull(e);
		put(nl, i);
		nla_nest_end(nl, e);
	}
	nla_nest_end(nl, list);
	return nl;
}

static void put_addr(struct nl_msg *nl, unsigned int i)
{
	uint8_t a[4] = { 10, 0, (uint8_t)(i >> 8), (uint8_t)i };

	ck_assert_int_eq(nla_put_u8(nl, PROTO_ADDR_FAMILY, AF_INET), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_ADDR_ADDRESS, 4, a), 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ADDR_PREFIXLEN, 32), 0);
}

static void put_route(struct nl_msg *nl, unsigned int i)
{
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_FAMILY, AF_INET), 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_DST_LEN, 0), 0);
	ck_assert_int_eq(nla_put_u32(nl, PROTO_ROUTE_METRIC, i), 0);
}

static void put_neigh(struct nl_msg *nl, unsigned int i)
{
	uint8_t a[4] = { 10, 0, (uint8_t)(i >> 8), (uint8_t)i };
	uint8_t ll[6] = { 2, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i };

	ck_assert_int_eq(nla_put_u8(nl, PROTO_NEIGH_FAMILY, AF_INET), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_NEIGH_ADDRESS, 4, a), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_NEIGH_LLADDR, 6, ll), 0);
}

/* A message of @total bytes (a multiple of 4) of unknown attributes, into mbuf. */
static size_t oversized(uint16_t type, size_t total)
{
	size_t off = sizeof(struct proto_hdr);

	ck_assert_uint_le(total, sizeof(mbuf));
	memset(mbuf, 0, total);
	hdr_write(mbuf, PROTO_MAGIC, 1, 0, type, (uint32_t)total, SEQ);
	while (off < total) {
		size_t chunk = total - off > 32768 ? 32768 : total - off;
		struct nlattr nla = { .nla_len = (uint16_t)chunk, .nla_type = 999 };

		memcpy(mbuf + off, &nla, sizeof(nla));
		off += chunk;
	}
	return total;
}

START_TEST(test_over_limits)
{
	struct nl_msg *nl;
	struct nlattr *list;
	struct proto_msg *msg;
	size_t len;
	int fds[PROTO_MAX_CHANNELS + 1];

	/* One entry at each limit is fine (test_link_at_limits); one more is refused. */
	nl = link_with_entries(PROTO_LINK_ADDRS, PROTO_LINK_ADDR, PROTO_MAX_ADDRS + 1, put_addr);
	refuse(nl, PROTO_MSG_LINK, 1, E2BIG, "LINK: more than 64 entries in ADDRS");
	nl = link_with_entries(PROTO_LINK_ROUTES, PROTO_LINK_ROUTE, PROTO_MAX_ROUTES + 1, put_route);
	refuse(nl, PROTO_MSG_LINK, 1, E2BIG, "LINK: more than 256 entries in ROUTES");
	nl = link_with_entries(PROTO_LINK_NEIGHS, PROTO_LINK_NEIGH, PROTO_MAX_NEIGHS + 1, put_neigh);
	refuse(nl, PROTO_MSG_LINK, 1, E2BIG, "LINK: more than 256 entries in NEIGHS");

	/* Channels: 65 declared with 65 fds, and 0 declared. */
	nl = msg_build_start();
	link_mandatory_put(nl, 0, PROTO_MAX_CHANNELS + 1);
	refuse(nl, PROTO_MSG_LINK, PROTO_MAX_CHANNELS + 1, E2BIG,
	       "LINK veth0: attribute CHANNELS: 65 is out of range 1..64");
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 0);
	refuse(nl, PROTO_MSG_LINK, 0, E2BIG, "LINK veth0: attribute CHANNELS: 0 is out of range 1..64");

	/* Versions in one HELLO. */
	nl = msg_build_start();
	list = nla_nest_start(nl, PROTO_HELLO_VERSIONS);
	for (unsigned int i = 1; i <= PROTO_MAX_VERSIONS + 1; i++)
		ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_VERSION, (uint8_t)i), 0);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_HELLO, 0, E2BIG, "HELLO: more than 16 entries in VERSIONS");

	/* Message size: exactly the limit is fine, beyond it refused, fds closed. */
	len = oversized(PROTO_MSG_DONE, PROTO_MSG_MAX_BYTES);
	raw_send(sk[SENDER], mbuf, len, NULL, 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_DONE);
	proto_msg_free(msg);
	len = oversized(PROTO_MSG_DONE, PROTO_MSG_MAX_BYTES + 4);
	expect_refused(mbuf, len, NULL, 0, E2BIG, "message of 65540 bytes is over the limit of 65536");
	len = oversized(PROTO_MSG_LINK, 100000);
	packet_sockets(fds, 2);
	expect_refused(mbuf, len, fds, 2, E2BIG, "message of 100000 bytes is over the limit of 65536");
	link_still_accepted();
}
END_TEST

START_TEST(test_unknown_message_type)
{
	static const uint16_t types[] = { PROTO_MSG_MAX, PROTO_MSG_MAX + 1, 0xffff, PROTO_MSG_NONE };
	char text[64];
	struct proto_hdr h;
	size_t len;
	int fd;

	for (unsigned int i = 0; i < 4; i++) {
		snprintf(text, sizeof(text), "unknown message type %u", types[i]);
		len = done_encoded();
		h = hdr_read(mbuf);
		hdr_write(mbuf, h.magic, h.version, h.minor, types[i], h.length, h.seq);
		expect_refused(mbuf, len, NULL, 0, EOPNOTSUPP, text);

		/* With a body and an fd, as a future LINK-like type would come. */
		len = link_encoded(1);
		h = hdr_read(mbuf);
		hdr_write(mbuf, h.magic, h.version, h.minor, types[i], h.length, h.seq);
		fd = packet_socket();
		expect_refused(mbuf, len, &fd, 1, EOPNOTSUPP, text);
	}
	link_still_accepted();
}
END_TEST

/* DONE and ACK have no attributes of their own, but their body must still be well formed. */
START_TEST(test_bare_body_malformed)
{
	struct nl_msg *nl;
	size_t len;
	int fd;

	len = done_encoded();
	memcpy(mbuf + len, "\x07\x00\x01", 3);
	len += 3;
	hdr_write(mbuf, PROTO_MAGIC, 1, 0, PROTO_MSG_DONE, (uint32_t)len, SEQ);
	expect_refused(mbuf, len, NULL, 0, EBADMSG, "DONE: truncated attribute (3 bytes left over)");

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, 0, 1), 0);
	refuse(nl, PROTO_MSG_ACK, 0, EBADMSG, "ACK: attribute of type 0");

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, 5, 1), 0);
	len = msg_build_finish(nl, PROTO_MSG_DONE, 0, SEQ, mbuf, sizeof(mbuf));
	memcpy(mbuf + 16, &(uint16_t){ 12 }, 2);	/* nla_len says 12 bytes, 8 are there */
	fd = packet_socket();
	expect_refused(mbuf, len, &fd, 1, EBADMSG, "DONE: truncated attribute (8 bytes left over)");
	expect_refused(mbuf, len, NULL, 0, EBADMSG, "DONE: truncated attribute (8 bytes left over)");
	link_still_accepted();
}
END_TEST

/* Values that have the right size but mean nothing. */
START_TEST(test_bad_values)
{
	static const uint8_t v4[4] = { 10, 0, 0, 1 };
	struct nl_msg *nl;
	struct nlattr *list, *e;

	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_IFINDEX, 1);
	ck_assert_int_eq(nla_put_u32(nl, PROTO_LINK_IFINDEX, 0), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: attribute IFINDEX: 0 is not a valid index");
	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_IFINDEX, 1);
	ck_assert_int_eq(nla_put_u32(nl, PROTO_LINK_IFINDEX, 0x80000000u), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "IFINDEX: 2147483648 is not a valid index");

	nl = msg_build_start();
	link_mandatory_put(nl, PROTO_LINK_GSO_MODE, 1);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_LINK_GSO_MODE, PROTO_GSO_MODE_MAX), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK veth0: attribute GSO_MODE: 3 is not off, sw or hw");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ADDRS);
	addr_entry_put(nl, AF_UNIX, v4, 4, 8);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EAFNOSUPPORT,
	       "LINK: ADDRS entry 0: family 1 is neither AF_INET nor AF_INET6");

	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ROUTES);
	e = nla_nest_start(nl, PROTO_LINK_ROUTE);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_FAMILY, AF_INET), 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ROUTE_DST_LEN, 24), 0);
	nla_nest_end(nl, e);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EINVAL, "LINK: ROUTES entry 0: DST_LEN 24 without DST");

	/* Type 0 is reserved at every level. */
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	ck_assert_int_eq(nla_put_u32(nl, 0, 1), 0);
	refuse(nl, PROTO_MSG_LINK, 1, EBADMSG, "LINK: attribute of type 0");
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_ADDRS);
	e = nla_nest_start(nl, PROTO_LINK_ADDR);
	ck_assert_int_eq(nla_put_u8(nl, 0, 1), 0);
	nla_nest_end(nl, e);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EBADMSG, "LINK: ADDRS entry 0: attribute of type 0");
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	list = nla_nest_start(nl, PROTO_LINK_NEIGHS);
	e = nla_nest_start(nl, 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_NEIGH_FAMILY, AF_INET), 0);
	nla_nest_end(nl, e);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_LINK, 1, EBADMSG, "LINK: NEIGHS: entry of type 0");

	/* HELLO: version 0 and an empty list. */
	nl = msg_build_start();
	list = nla_nest_start(nl, PROTO_HELLO_VERSIONS);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_VERSION, 1), 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_VERSION, 0), 0);
	nla_nest_end(nl, list);
	refuse(nl, PROTO_MSG_HELLO, 0, EINVAL, "HELLO: VERSIONS: version 0 does not exist");
	nl = msg_build_start();
	ck_assert_int_eq(nla_put(nl, PROTO_HELLO_VERSIONS | NLA_F_NESTED, 0, NULL), 0);
	refuse(nl, PROTO_MSG_HELLO, 0, EINVAL, "HELLO: VERSIONS lists no version");
	/* HELLO: SHARDS (minor 5) 0 or over 64, and a word of the wrong size. */
	for (unsigned int i = 0; i < 2; i++) {
		nl = msg_build_start();
		list = nla_nest_start(nl, PROTO_HELLO_VERSIONS);
		ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_VERSION, 1), 0);
		nla_nest_end(nl, list);
		ck_assert_int_eq(nla_put_u32(nl, PROTO_HELLO_SHARDS, i ? PROTO_MAX_CHANNELS + 1 : 0), 0);
		refuse(nl, PROTO_MSG_HELLO, 0, E2BIG, i ? "HELLO: attribute SHARDS: 65 is out of range 1..64" :
			    "HELLO: attribute SHARDS: 0 is out of range 1..64");
	}
	nl = msg_build_start();
	list = nla_nest_start(nl, PROTO_HELLO_VERSIONS);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_VERSION, 1), 0);
	nla_nest_end(nl, list);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_SHARDS, 2), 0);
	refuse(nl, PROTO_MSG_HELLO, 0, EINVAL, "HELLO: attribute SHARDS: wrong size 1, expected 4");

	/* ERROR with errno 0 or beyond 4095: refused, not answered. */
	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_ERROR_ERRNO, 0), 0);
	ck_assert_int_eq(nla_put_string(nl, PROTO_ERROR_MESSAGE, "fine"), 0);
	refuse(nl, PROTO_MSG_ERROR, 0, EINVAL, "ERROR: attribute ERRNO: 0 is not an errno");
	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_ERROR_ERRNO, 4096), 0);
	ck_assert_int_eq(nla_put_string(nl, PROTO_ERROR_MESSAGE, "fine"), 0);
	refuse(nl, PROTO_MSG_ERROR, 0, EINVAL, "ERROR: attribute ERRNO: 4096 is not an errno");
	link_still_accepted();
}
END_TEST


/*
 * DONE's STATUS (minor 3): exactly the one fd it declares, a regular file
 * open for writing; any other count or kind is refused and every fd closed.
 */
START_TEST(test_done_status)
{
	char path[] = "/tmp/sn-proto-statusXXXXXX";
	struct proto_msg *msg;
	struct nl_msg *nl;
	struct stat a, b;
	size_t len;
	int file, ro;

	file = mkstemp(path);
	ck_assert_int_ge(file, 0);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(ro, 0);
	unlink(path);

	/* the one that is right: the receiver gets the same file, open for writing */
	ck_assert_int_eq(proto_send_done_status(sk[SENDER], SEQ, file), 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_DONE);
	ck_assert(msg->done.has_status);
	ck_assert_int_ne(msg->done.status_fd, file);
	ck_assert_int_eq(fstat(msg->done.status_fd, &a), 0);
	ck_assert_int_eq(fstat(file, &b), 0);
	ck_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	ck_assert_int_ne(fcntl(msg->done.status_fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	proto_msg_free(msg);

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_DONE_STATUS, 1), 0);
	refuse(nl, PROTO_MSG_DONE, 0, EBADMSG, "DONE: declares 1 status fds but 0 arrived (0 or 1)");

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_DONE_STATUS, 1), 0);
	refuse(nl, PROTO_MSG_DONE, 1, EBADF, "DONE: the status fd is not a regular file open for writing");

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_DONE_STATUS, 2), 0);
	refuse(nl, PROTO_MSG_DONE, 2, EBADMSG, "DONE: declares 2 status fds but 2 arrived (0 or 1)");

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u8(nl, PROTO_DONE_STATUS, 1), 0);
	refuse(nl, PROTO_MSG_DONE, 0, EINVAL, "DONE: attribute STATUS");

	/* a read-only file: the supervisor could not write its status there */
	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_DONE_STATUS, 1), 0);
	len = msg_build_finish(nl, PROTO_MSG_DONE, PROTO_VERSION_MINOR, SEQ, mbuf, sizeof(mbuf));
	expect_refused(mbuf, len, &ro, 1, EBADF, "DONE: the status fd is not a regular file open for writing");
	close(file);
}
END_TEST

static Suite *proto_badinput_suite(void)
{
	Suite *s = suite_create("proto_badinput");
	TCase *tc = tcase_create("badinput");

	tcase_add_checked_fixture(tc, proto_fixture_setup, proto_fixture_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_short_message);
	tcase_add_test(tc, test_bad_magic);
	tcase_add_test(tc, test_unsupported_version);
	tcase_add_test(tc, test_length_disagrees);
	tcase_add_test(tc, test_truncated_attribute);
	tcase_add_test(tc, test_attribute_wrong_size);
	tcase_add_test(tc, test_missing_mandatory);
	tcase_add_test(tc, test_string_without_nul);
	tcase_add_test(tc, test_string_too_long);
	tcase_add_test(tc, test_mtu_out_of_range);
	tcase_add_test(tc, test_prefixlen_too_long);
	tcase_add_test(tc, test_more_fds_than_declared);
	tcase_add_test(tc, test_fewer_fds_than_declared);
	tcase_add_test(tc, test_fds_not_packet_sockets);
	tcase_add_test(tc, test_over_limits);
	tcase_add_test(tc, test_unknown_message_type);
	tcase_add_test(tc, test_bare_body_malformed);
	tcase_add_test(tc, test_done_status);
	tcase_add_test(tc, test_bad_values);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(proto_badinput_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
