// SPDX-License-Identifier: MIT
/*
 * test_proto_face.c - LINK's FACE (minor 2) and ATTACH's FACE: what comes
 * through and what is refused
 *
 * Theory of operation
 *
 * A LINK with a face carries one more fd after its channels: the TUN
 * netsetup made in the container's netns. The decoder checks it with
 * TUNGETIFF (a TUN, IFF_TUN | IFF_NO_PI | IFF_VNET_HDR, the name FACE
 * gives), so these tests need real TUN devices. Each test runs in its own
 * forked child (Check's default), and the fixture moves that child into a
 * network namespace of its own first: the TUNs the tests make never touch
 * the machine's namespace, and they vanish with their last fd.
 *
 * Every refusal goes through expect_refused() (proto_testlib.h): errno,
 * text, the ERROR reply, every fd that came along closed, the socket fine
 * afterwards; the fixture fails a test that leaks an fd.
 */
#include <sched.h>
#include <sys/ioctl.h>
#include <linux/if_tun.h>

#include "tests/unit/proto_testlib.h"

#define SEQ 0x66006600u
#define TUN_NAME "sn-veth0"

static uint8_t mbuf[2 * PROTO_MSG_MAX_BYTES];

static void face_fixture_setup(void)
{
	ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): %s (tests run as root)",
		      strerror(errno));
	proto_fixture_setup();
}

/* A TUN named @name with @flags (IFF_TUN | IFF_NO_PI | IFF_VNET_HDR as netsetup makes it). */
static int tun_open(const char *name, short flags)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);

	ck_assert_msg(fd >= 0, "open /dev/net/tun: %s", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = flags;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ck_assert_msg(ioctl(fd, TUNSETIFF, &ifr) == 0, "TUNSETIFF %s: %s", name, strerror(errno));
	return fd;
}

static int face_tun(void)
{
	return tun_open(TUN_NAME, IFF_TUN | IFF_NO_PI | IFF_VNET_HDR);
}

/* sample_link() with a face named TUN_NAME, fds not filled in. */
static void face_link(struct proto_link *l, unsigned int n_channels)
{
	sample_link(l, n_channels);
	l->has_face = true;
	l->face = (struct proto_face){ .ifindex = 9, .mtu = 1500, .n_fds = 1,
				       .offloads = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 };
	snprintf(l->face.ifname, sizeof(l->face.ifname), "%s", TUN_NAME);
}

/* A valid LINK with a face and @n_channels, encoded into mbuf. */
static size_t face_link_encoded(unsigned int n_channels)
{
	struct proto_msg *msg = calloc(1, sizeof(*msg));
	int len;

	ck_assert_ptr_nonnull(msg);
	msg->type = PROTO_MSG_LINK;
	msg->seq = SEQ;
	face_link(&msg->link, n_channels);
	len = proto_encode(msg, mbuf, sizeof(mbuf));
	ck_assert_int_gt(len, 16);
	free(msg);
	return (size_t)len;
}

/* LINK with a face, attributes written by hand: @omit (a PROTO_FACE_*, or 0) left out. */
static size_t face_link_built(int omit, uint32_t ifindex, const char *ifname, uint32_t mtu)
{
	struct nl_msg *nl = msg_build_start();
	struct nlattr *face;

	link_mandatory_put(nl, 0, 1);
	face = nla_nest_start(nl, PROTO_LINK_FACE);
	ck_assert_ptr_nonnull(face);
	if (omit != PROTO_FACE_IFINDEX)
		ck_assert_int_eq(nla_put_u32(nl, PROTO_FACE_IFINDEX, ifindex), 0);
	if (omit != PROTO_FACE_IFNAME)
		ck_assert_int_eq(nla_put_string(nl, PROTO_FACE_IFNAME, ifname), 0);
	if (omit != PROTO_FACE_MTU)
		ck_assert_int_eq(nla_put_u32(nl, PROTO_FACE_MTU, mtu), 0);
	nla_nest_end(nl, face);
	return msg_build_finish(nl, PROTO_MSG_LINK, PROTO_VERSION_MINOR, SEQ, mbuf, sizeof(mbuf));
}

/* The face and its fd come through: same TUN, close-on-exec, closed by proto_msg_free(). */
START_TEST(test_face_roundtrip)
{
	struct proto_link *link = malloc(sizeof(*link));
	struct proto_msg *msg;
	struct ifreq ifr;
	int before, got;

	ck_assert_ptr_nonnull(link);
	face_link(link, 2);
	packet_sockets(link->channel_fds, 2);
	link->face.fds[0] = face_tun();
	ck_assert_int_eq(proto_send_link(sk[SENDER], 7, link), 0);
	ck_assert(fd_is_open(link->face.fds[0]));	/* the sender keeps its fds */

	before = fd_count();
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_LINK);
	ck_assert_int_eq(fd_count(), before + 3);
	link_assert_equal(&msg->link, link);
	ck_assert(msg->link.has_face);
	ck_assert_uint_eq(msg->link.face.ifindex, 9);
	ck_assert_str_eq(msg->link.face.ifname, TUN_NAME);
	ck_assert_uint_eq(msg->link.face.mtu, 1500);
	ck_assert_uint_eq(msg->link.face.offloads, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6);
	ck_assert_uint_eq(msg->link.face.n_fds, 1);
	got = msg->link.face.fds[0];
	ck_assert_int_ne(got, link->face.fds[0]);
	ck_assert(fd_same_file(got, link->face.fds[0]));
	ck_assert_msg(fcntl(got, F_GETFD) & FD_CLOEXEC, "the face fd is not close-on-exec");
	memset(&ifr, 0, sizeof(ifr));
	ck_assert_int_eq(ioctl(got, TUNGETIFF, &ifr), 0);
	ck_assert_str_eq(ifr.ifr_name, TUN_NAME);
	/* the channels are still the first fds */
	ck_assert(fd_same_file(msg->link.channel_fds[0], link->channel_fds[0]));
	ck_assert(fd_same_file(msg->link.channel_fds[1], link->channel_fds[1]));

	proto_msg_free(msg);
	ck_assert_int_eq(fd_count(), before);
	ck_assert(!fd_is_open(got));
	fds_close_all(link->channel_fds, 2);
	close(link->face.fds[0]);
	free(link);
}
END_TEST

/* Shards (minor 4): a multi-queue TUN's queues travel as QUEUES face fds. */
START_TEST(test_face_queues)
{
	struct proto_link *link = malloc(sizeof(*link));
	struct proto_msg *msg;
	struct ifreq ifr;
	int before, fds[5];
	unsigned int i;
	size_t len;

	ck_assert_ptr_nonnull(link);
	face_link(link, 2);
	snprintf(link->face.ifname, sizeof(link->face.ifname), "sn-mq");
	packet_sockets(link->channel_fds, 2);
	link->face.n_fds = 2;
	for (i = 0; i < 2; i++)
		link->face.fds[i] = tun_open("sn-mq", IFF_TUN | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE);
	ck_assert_int_eq(proto_send_link(sk[SENDER], 7, link), 0);
	before = fd_count();
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_LINK);
	ck_assert_int_eq(fd_count(), before + 4);
	ck_assert_uint_eq(msg->link.face.n_fds, 2);
	for (i = 0; i < 2; i++) {
		ck_assert(fd_same_file(msg->link.face.fds[i], link->face.fds[i]));
		memset(&ifr, 0, sizeof(ifr));
		ck_assert_int_eq(ioctl(msg->link.face.fds[i], TUNGETIFF, &ifr), 0);
		ck_assert_str_eq(ifr.ifr_name, "sn-mq");
	}
	proto_msg_free(msg);
	ck_assert_int_eq(fd_count(), before);

	/* two queues declared, one arrived; two queues of a TUN that has one */
	msg = calloc(1, sizeof(*msg));
	ck_assert_ptr_nonnull(msg);
	msg->type = PROTO_MSG_LINK;
	msg->seq = SEQ;
	msg->link = *link;
	len = (size_t)proto_encode(msg, mbuf, sizeof(mbuf));
	packet_sockets(fds, 2);
	fds[2] = tun_open("sn-mq", IFF_TUN | IFF_NO_PI | IFF_VNET_HDR | IFF_MULTI_QUEUE);
	expect_refused(mbuf, len, fds, 3, EBADMSG, "declares 2 channel fds and 2 face fds but 3 arrived");
	snprintf(msg->link.face.ifname, sizeof(msg->link.face.ifname), "sn-single");
	len = (size_t)proto_encode(msg, mbuf, sizeof(mbuf));
	packet_sockets(fds, 2);
	fds[2] = tun_open("sn-single", IFF_TUN | IFF_NO_PI | IFF_VNET_HDR);
	fds[3] = dup(fds[2]);
	expect_refused(mbuf, len, fds, 4, EBADF, "FACE: 2 queues of TUN sn-single, which is not IFF_MULTI_QUEUE");
	msg->link.face.n_fds = PROTO_MAX_CHANNELS + 1;
	ck_assert_int_eq(proto_encode(msg, mbuf, sizeof(mbuf)), -E2BIG);
	/* QUEUES out of range, written by hand: refused before the fds are counted */
	for (i = 0; i < 2; i++) {
		uint32_t q = i ? PROTO_MAX_CHANNELS + 1 : 0;
		struct nl_msg *nl = msg_build_start();
		struct nlattr *face;
		char want[96];

		link_mandatory_put(nl, 0, 1);
		face = nla_nest_start(nl, PROTO_LINK_FACE);
		ck_assert_ptr_nonnull(face);
		ck_assert_int_eq(nla_put_u32(nl, PROTO_FACE_IFINDEX, 9), 0);
		ck_assert_int_eq(nla_put_string(nl, PROTO_FACE_IFNAME, "sn-mq"), 0);
		ck_assert_int_eq(nla_put_u32(nl, PROTO_FACE_MTU, 1500), 0);
		ck_assert_int_eq(nla_put_u32(nl, PROTO_FACE_QUEUES, q), 0);
		nla_nest_end(nl, face);
		len = msg_build_finish(nl, PROTO_MSG_LINK, PROTO_VERSION_MINOR, SEQ, mbuf, sizeof(mbuf));
		fds[0] = packet_socket();
		snprintf(want, sizeof(want), "FACE: attribute QUEUES: %u is out of range 1..%d", q, PROTO_MAX_CHANNELS);
		expect_refused(mbuf, len, fds, 1, E2BIG, want);
	}
	free(msg);
	fds_close_all(link->channel_fds, 2);
	fds_close_all(link->face.fds, 2);
	free(link);
}
END_TEST

/* Without FACE a LINK decodes as before: no face, and no extra fd accepted. */
START_TEST(test_no_face)
{
	struct proto_link *link = malloc(sizeof(*link));
	struct proto_msg *msg;
	struct nl_msg *nl;
	int fds[2];
	size_t len;

	ck_assert_ptr_nonnull(link);
	sample_link(link, 1);
	packet_sockets(link->channel_fds, 1);
	ck_assert_int_eq(proto_send_link(sk[SENDER], 8, link), 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_LINK);
	ck_assert(!msg->link.has_face);
	proto_msg_free(msg);
	close(link->channel_fds[0]);
	free(link);

	/* a TUN after the channel of a LINK without FACE is one fd too many */
	nl = msg_build_start();
	link_mandatory_put(nl, 0, 1);
	len = msg_build_finish(nl, PROTO_MSG_LINK, PROTO_VERSION_MINOR, SEQ, mbuf, sizeof(mbuf));
	fds[0] = packet_socket();
	fds[1] = face_tun();
	expect_refused(mbuf, len, fds, 2, EBADMSG, "LINK veth0: declares 1 channel fds but 2 arrived");
}
END_TEST

/* FACE declared: exactly channels + 1 fds. */
START_TEST(test_face_fd_count)
{
	int fds[3];
	size_t len = face_link_encoded(2);

	packet_sockets(fds, 2);
	expect_refused(mbuf, len, fds, 2, EBADMSG, "declares 2 channel fds and a face fd but 2 arrived");
	packet_sockets(fds, 2);
	fds[2] = face_tun();
	len = face_link_encoded(1);
	expect_refused(mbuf, len, fds, 3, EBADMSG, "declares 1 channel fds and a face fd but 3 arrived");
}
END_TEST

/* The face fd must be a TUN of the right kind and name; the channels are checked first. */
/*
 * NETSTAT (minor 6): the container netns's /proc/net/snmp, snmp6 and dev
 * come after the face's queues, are checked to be /proc files open for
 * reading, and are closed by proto_msg_free() with the rest.
 */
START_TEST(test_face_netstat)
{
	static const char *const files[PROTO_FACE_NETSTAT_FDS] = {
		"/proc/self/net/snmp", "/proc/self/net/snmp6", "/proc/self/net/dev",
	};
	struct proto_link *link = malloc(sizeof(*link));
	struct proto_msg *msg, *enc = calloc(1, sizeof(*enc));
	int before, fds[5], tmp;
	unsigned int i;
	size_t len;
	char path[] = "/tmp/sandnet-netstat-XXXXXX";

	ck_assert_ptr_nonnull(link);
	ck_assert_ptr_nonnull(enc);
	face_link(link, 1);
	packet_sockets(link->channel_fds, 1);
	link->face.fds[0] = face_tun();
	link->face.n_netstat = PROTO_FACE_NETSTAT_FDS;
	for (i = 0; i < PROTO_FACE_NETSTAT_FDS; i++) {
		link->face.netstat_fds[i] = open(files[i], O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(link->face.netstat_fds[i], 0);
	}
	ck_assert_int_eq(proto_send_link(sk[SENDER], 7, link), 0);
	before = fd_count();
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_LINK);
	ck_assert_int_eq(fd_count(), before + 2 + PROTO_FACE_NETSTAT_FDS);
	ck_assert_uint_eq(msg->link.face.n_netstat, PROTO_FACE_NETSTAT_FDS);
	for (i = 0; i < PROTO_FACE_NETSTAT_FDS; i++)
		ck_assert(fd_same_file(msg->link.face.netstat_fds[i], link->face.netstat_fds[i]));
	ck_assert(fd_same_file(msg->link.face.fds[0], link->face.fds[0]));
	proto_msg_free(msg);
	ck_assert_int_eq(fd_count(), before);

	/* the same LINK, encoded; then fds that are not what NETSTAT says */
	enc->type = PROTO_MSG_LINK;
	enc->seq = SEQ;
	face_link(&enc->link, 1);
	enc->link.face.n_netstat = PROTO_FACE_NETSTAT_FDS;
	len = (size_t)proto_encode(enc, mbuf, sizeof(mbuf));
	ck_assert_int_gt((int)len, 16);
	fds[0] = packet_socket();
	fds[1] = dup(link->face.fds[0]);	/* the TUN's name is busy while it is open */
	fds[2] = open(files[0], O_RDONLY | O_CLOEXEC);
	fds[3] = open(files[1], O_RDONLY | O_CLOEXEC);
	expect_refused(mbuf, len, fds, 4, EBADMSG, "declares 1 channel fds and a face fd and 3 netstat fds but 4");
	tmp = mkstemp(path);
	ck_assert_int_ge(tmp, 0);
	unlink(path);
	fds[0] = packet_socket();
	fds[1] = dup(link->face.fds[0]);
	fds[2] = open(files[0], O_RDONLY | O_CLOEXEC);
	fds[3] = tmp;	/* a regular file, but not the kernel's counters */
	fds[4] = open(files[2], O_RDONLY | O_CLOEXEC);
	expect_refused(mbuf, len, fds, 5, EBADF, "FACE: a netstat fd is not a /proc file open for reading");

	/* NETSTAT must say 3: the encoder refuses another count, and so does the decoder */
	enc->link.face.n_netstat = 2;
	ck_assert_int_eq(proto_encode(enc, mbuf, sizeof(mbuf)), -E2BIG);
	{
		struct nl_msg *nl = msg_build_start();
		struct nlattr *face;

		link_mandatory_put(nl, 0, 1);
		face = nla_nest_start(nl, PROTO_LINK_FACE);
		ck_assert_ptr_nonnull(face);
		ck_assert_int_eq(nla_put_u32(nl, PROTO_FACE_IFINDEX, 9), 0);
		ck_assert_int_eq(nla_put_string(nl, PROTO_FACE_IFNAME, TUN_NAME), 0);
		ck_assert_int_eq(nla_put_u32(nl, PROTO_FACE_MTU, 1500), 0);
		ck_assert_int_eq(nla_put_u32(nl, PROTO_FACE_NETSTAT, 2), 0);
		nla_nest_end(nl, face);
		len = msg_build_finish(nl, PROTO_MSG_LINK, PROTO_VERSION_MINOR, SEQ, mbuf, sizeof(mbuf));
		fds[0] = packet_socket();
		fds[1] = dup(link->face.fds[0]);
		fds[2] = open(files[0], O_RDONLY | O_CLOEXEC);
		fds[3] = open(files[1], O_RDONLY | O_CLOEXEC);
		expect_refused(mbuf, len, fds, 4, EINVAL, "FACE: attribute NETSTAT: 2 fds, not 3");
	}

	fds_close_all(link->channel_fds, 1);
	close(link->face.fds[0]);
	proto_fds_close(link->face.netstat_fds, PROTO_FACE_NETSTAT_FDS);
	free(link);
	free(enc);
}
END_TEST

START_TEST(test_face_fd_checked)
{
	int fds[2], p[2];
	size_t len = face_link_encoded(1);

	fds[0] = packet_socket();
	ck_assert_int_eq(pipe(p), 0);
	fds[1] = p[0];
	close(p[1]);
	expect_refused(mbuf, len, fds, 2, EBADF, "LINK abcdefghijklmno: FACE: the face fd is not a TUN device");

	fds[0] = packet_socket();
	fds[1] = packet_socket();
	expect_refused(mbuf, len, fds, 2, EBADF, "FACE: the face fd is not a TUN device");

	/* /dev/net/tun opened but no device attached yet */
	fds[0] = packet_socket();
	fds[1] = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fds[1], 0);
	expect_refused(mbuf, len, fds, 2, EBADF, "FACE: the face fd is not a TUN device");

	fds[0] = packet_socket();
	/* the flags are checked before the name; each device has its own name
	 * because a closed TUN's name stays busy until the kernel unregisters it */
	fds[1] = tun_open("sn-novnet", IFF_TUN | IFF_NO_PI);
	expect_refused(mbuf, len, fds, 2, EBADF, "FACE: TUN sn-novnet has flags");
	fds[0] = packet_socket();
	fds[1] = tun_open("sn-tap", IFF_TAP | IFF_NO_PI | IFF_VNET_HDR);
	expect_refused(mbuf, len, fds, 2, EBADF, "need IFF_TUN|IFF_NO_PI|IFF_VNET_HDR");

	fds[0] = packet_socket();
	fds[1] = tun_open("sn-other", IFF_TUN | IFF_NO_PI | IFF_VNET_HDR);
	expect_refused(mbuf, len, fds, 2, EBADF, "FACE: the face fd is TUN sn-other, not sn-veth0");

	/* a TUN where a channel belongs */
	fds[0] = tun_open("sn-chan", IFF_TUN | IFF_NO_PI | IFF_VNET_HDR);
	fds[1] = face_tun();
	expect_refused(mbuf, len, fds, 2, EBADF, "channel fd 0 is not a socket");
}
END_TEST

/* docs/protocol.md section 10: the FACE nest, last in its LINK, byte for byte. */
START_TEST(test_face_doc_example)
{
	static const uint8_t want[] = {
		0x28, 0x00, 0x0f, 0x80,
		0x08, 0x00, 0x01, 0x00, 0x04, 0x00, 0x00, 0x00,
		0x0c, 0x00, 0x02, 0x00, 's', 'n', '-', 'e', 't', 'h', '0', 0x00,
		0x08, 0x00, 0x03, 0x00, 0xdc, 0x05, 0x00, 0x00,
		0x08, 0x00, 0x04, 0x00, 0x67, 0x00, 0x00, 0x00,
	};
	struct proto_msg *msg = calloc(1, sizeof(*msg));
	int len;

	ck_assert_ptr_nonnull(msg);
	msg->type = PROTO_MSG_LINK;
	msg->seq = 1;
	sample_link(&msg->link, 1);
	msg->link.has_face = true;
	msg->link.face = (struct proto_face){ .ifindex = 4, .mtu = 1500, .n_fds = 1,
					      /* 0x20, 0x40: TUN_F_USO4, TUN_F_USO6, missing from Debian 12's headers */
					      .offloads = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | 0x20 | 0x40 };
	snprintf(msg->link.face.ifname, sizeof(msg->link.face.ifname), "sn-eth0");
	len = proto_encode(msg, mbuf, sizeof(mbuf));
	ck_assert_int_gt(len, (int)sizeof(want));
	ck_assert_mem_eq(mbuf + len - sizeof(want), want, sizeof(want));
	free(msg);
}
END_TEST

/* FACE's own attributes. */
START_TEST(test_face_attributes)
{
	static const struct {
		int omit;
		uint32_t ifindex;
		const char *ifname;
		uint32_t mtu;
		int err;
		const char *text;
	} cases[] = {
		{ PROTO_FACE_IFINDEX, 9, TUN_NAME, 1500, EINVAL, "missing mandatory attribute IFINDEX" },
		{ PROTO_FACE_IFNAME, 9, TUN_NAME, 1500, EINVAL, "missing mandatory attribute IFNAME" },
		{ PROTO_FACE_MTU, 9, TUN_NAME, 1500, EINVAL, "missing mandatory attribute MTU" },
		{ 0, 0, TUN_NAME, 1500, EINVAL, "LINK veth0: FACE: attribute IFINDEX: 0 is not a valid index" },
		{ 0, 0x80000000u, TUN_NAME, 1500, EINVAL, "IFINDEX: 2147483648 is not a valid index" },
		{ 0, 9, "", 1500, EINVAL, "LINK veth0: FACE: attribute IFNAME: empty name" },
		{ 0, 9, TUN_NAME, 67, ERANGE, "LINK veth0: FACE: attribute MTU: 67 is out of range 68..65535" },
		{ 0, 9, TUN_NAME, 65536, ERANGE, "MTU: 65536 is out of range" },
	};

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = face_link_built(cases[i].omit, cases[i].ifindex, cases[i].ifname, cases[i].mtu);
		/* FACE is decoded before any fd is looked at */
		int fds[2] = { packet_socket(), packet_socket() };

		expect_refused(mbuf, len, fds, 2, cases[i].err, cases[i].text);
	}
}
END_TEST

/* ATTACH's FACE: absent or 1 is on, 0 is off, anything else is refused. */
START_TEST(test_attach_face)
{
	static const struct {
		int value;	/* -1: absent */
		bool no_face;
	} ok[] = { { -1, false }, { 1, false }, { 0, true } };
	struct nl_msg *nl;
	size_t len;
	int fd;

	for (unsigned int i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct proto_msg *msg;

		nl = msg_build_start();
		ck_assert_int_eq(nla_put_u32(nl, PROTO_ATTACH_NETNS, 1), 0);
		if (ok[i].value >= 0)
			ck_assert_int_eq(nla_put_u8(nl, PROTO_ATTACH_FACE, (uint8_t)ok[i].value), 0);
		len = msg_build_finish(nl, PROTO_MSG_ATTACH, PROTO_VERSION_MINOR, SEQ, mbuf, sizeof(mbuf));
		fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		raw_send(sk[SENDER], mbuf, len, &fd, 1);
		close(fd);
		msg = recv_ok(sk[RECEIVER], PROTO_MSG_ATTACH);
		ck_assert_msg(msg->attach.no_face == ok[i].no_face, "FACE %d: no_face %d", ok[i].value,
			      msg->attach.no_face);
		proto_msg_free(msg);
	}

	nl = msg_build_start();
	ck_assert_int_eq(nla_put_u32(nl, PROTO_ATTACH_NETNS, 1), 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ATTACH_FACE, 2), 0);
	len = msg_build_finish(nl, PROTO_MSG_ATTACH, PROTO_VERSION_MINOR, SEQ, mbuf, sizeof(mbuf));
	fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	expect_refused(mbuf, len, &fd, 1, EINVAL, "ATTACH: attribute FACE: 2 is not 0 (off) or 1 (on)");
}
END_TEST

static Suite *proto_face_suite(void)
{
	Suite *s = suite_create("proto_face");
	TCase *tc = tcase_create("face");

	tcase_add_checked_fixture(tc, face_fixture_setup, proto_fixture_teardown);
	tcase_add_test(tc, test_face_roundtrip);
	tcase_add_test(tc, test_no_face);
	tcase_add_test(tc, test_face_queues);
	tcase_add_test(tc, test_face_fd_count);
	tcase_add_test(tc, test_face_fd_checked);
	tcase_add_test(tc, test_face_netstat);
	tcase_add_test(tc, test_face_doc_example);
	tcase_add_test(tc, test_face_attributes);
	tcase_add_test(tc, test_attach_face);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(proto_face_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
