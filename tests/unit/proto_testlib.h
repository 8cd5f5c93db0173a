/* SPDX-License-Identifier: MIT */
/*
 * proto_testlib.h - shared helpers of the proto/ Check suites
 *
 * Theory of operation
 *
 * Every test gets a fresh socketpair(AF_UNIX, SOCK_SEQPACKET) from a checked
 * fixture: sk[SENDER] plays netsetup, sk[RECEIVER] the datapath. The fixture
 * counts the entries of /proc/self/fd before it opens anything and fails the
 * test in teardown when the count differs afterwards, so every test is also an
 * fd leak test. Both sockets time out after two seconds so that a reply that
 * never comes fails the test instead of hanging it.
 *
 * Malformed messages are crafted here instead of by proto_encode(), which
 * refuses to produce them: msg_build_*() write attributes with libnl's own
 * nla_put() behind a hand-written struct proto_hdr, and raw_send() sends any
 * bytes with any fds. expect_refused() then checks the whole contract of a
 * refusal: proto_recv() returns the errno, why->text names the problem, the
 * sender gets an ERROR with the same errno and text and the request's seq,
 * every fd that came along is closed, and the next message is received fine.
 *
 * Everything is static inline: each test binary includes this once and uses
 * what it needs, and -Werror must not complain about the rest.
 */
#ifndef SANDNET_TESTS_PROTO_TESTLIB_H
#define SANDNET_TESTS_PROTO_TESTLIB_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "proto/proto.h"

enum { SENDER, RECEIVER };

/* The fixture's socketpair and the fd count before it was opened. */
static int sk[2] = { -1, -1 };
static int fixture_fds;

/* Entries of /proc/self/fd, the directory's own fd excluded. */
static inline int fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_msg(d, "opendir /proc/self/fd: %s", strerror(errno));
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;
}

static inline bool fd_is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static inline void proto_fixture_setup(void)
{
	struct timeval tv = { .tv_sec = 2 };

	fixture_fds = fd_count();
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sk), 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(setsockopt(sk[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
		ck_assert_int_eq(setsockopt(sk[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), 0);
	}
}

static inline void proto_fixture_teardown(void)
{
	close(sk[0]);
	close(sk[1]);
	ck_assert_msg(fd_count() == fixture_fds, "fd leak: %d fds open after the test, %d before",
		      fd_count(), fixture_fds);
}

/* A channel socket as netsetup makes them (protocol 0: receives nothing yet). */
static inline int packet_socket(void)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	ck_assert_msg(fd >= 0, "socket(AF_PACKET, SOCK_RAW): %s (tests run as root)",
		      strerror(errno));
	return fd;
}

static inline void packet_sockets(int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		fds[i] = packet_socket();
}

static inline void fds_close_all(const int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		close(fds[i]);
}

/* Same open file on both fds (SCM_RIGHTS passes the file, not the number). */
static inline bool fd_same_file(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Send any bytes with any fds (up to 253, Linux's SCM_MAX_FD) in one message. */
static inline void raw_send(int sock, const void *buf, size_t len, const int *fds, unsigned int n_fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 253)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	ck_assert_uint_le(n_fds, 253);
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
	n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	ck_assert_msg(n == (ssize_t)len, "sendmsg of %zu bytes: %zd (%s)", len, n, strerror(errno));
}

/* Write a header at @buf; every field is the caller's, nothing is fixed up. */
static inline void hdr_write(void *buf, uint32_t magic, uint8_t version, uint8_t minor,
			     uint16_t type, uint32_t length, uint32_t seq)
{
	struct proto_hdr h = {
		.magic = magic, .version = version, .minor = minor,
		.type = type, .length = length, .seq = seq,
	};

	memcpy(buf, &h, sizeof(h));
}

static inline struct proto_hdr hdr_read(const void *buf)
{
	struct proto_hdr h;

	memcpy(&h, buf, sizeof(h));
	return h;
}

/* An empty attribute buffer: nla_put() into it, then msg_build_finish(). */
static inline struct nl_msg *msg_build_start(void)
{
	struct nl_msg *nl = nlmsg_alloc_size(2 * PROTO_MSG_MAX_BYTES);

	ck_assert_ptr_nonnull(nl);
	ck_assert_ptr_nonnull(nlmsg_put(nl, 0, 0, 0, 0, 0));
	return nl;
}

/*
 * Header + the attributes of @nl into @buf (freed @nl); the length field is
 * the real length. Return: the length.
 */
static inline size_t msg_build_finish(struct nl_msg *nl, uint16_t type, uint8_t minor,
				      uint32_t seq, uint8_t *buf, size_t size)
{
	struct nlmsghdr *nlh = nlmsg_hdr(nl);
	size_t len = sizeof(struct proto_hdr) + (size_t)nlmsg_datalen(nlh);

	ck_assert_uint_le(len, size);
	hdr_write(buf, PROTO_MAGIC, 1, minor, type, (uint32_t)len, seq);
	memcpy(buf + sizeof(struct proto_hdr), nlmsg_data(nlh), len - sizeof(struct proto_hdr));
	nlmsg_free(nl);
	return len;
}

/* LINK's mandatory attributes, @omit (a PROTO_LINK_* type, or 0) left out. */
static inline void link_mandatory_put(struct nl_msg *nl, int omit, uint32_t channels)
{
	static const uint8_t mac[6] = { 0x02, 0x00, 0x5e, 0x10, 0x20, 0x30 };

	if (omit != PROTO_LINK_IFINDEX)
		ck_assert_int_eq(nla_put_u32(nl, PROTO_LINK_IFINDEX, 3), 0);
	if (omit != PROTO_LINK_IFNAME)
		ck_assert_int_eq(nla_put_string(nl, PROTO_LINK_IFNAME, "veth0"), 0);
	if (omit != PROTO_LINK_MAC)
		ck_assert_int_eq(nla_put(nl, PROTO_LINK_MAC, 6, mac), 0);
	if (omit != PROTO_LINK_MTU)
		ck_assert_int_eq(nla_put_u32(nl, PROTO_LINK_MTU, 1500), 0);
	if (omit != PROTO_LINK_GSO_MODE)
		ck_assert_int_eq(nla_put_u8(nl, PROTO_LINK_GSO_MODE, PROTO_GSO_SW), 0);
	if (omit != PROTO_LINK_CHANNELS)
		ck_assert_int_eq(nla_put_u32(nl, PROTO_LINK_CHANNELS, channels), 0);
}

/* One address entry inside an open PROTO_LINK_ADDRS nest. */
static inline void addr_entry_put(struct nl_msg *nl, uint8_t family, const void *addr,
				  int addr_len, uint8_t prefixlen)
{
	struct nlattr *e = nla_nest_start(nl, PROTO_LINK_ADDR);

	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ADDR_FAMILY, family), 0);
	ck_assert_int_eq(nla_put(nl, PROTO_ADDR_ADDRESS, addr_len, addr), 0);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_ADDR_PREFIXLEN, prefixlen), 0);
	nla_nest_end(nl, e);
}

/* A link with something in every field, @n_channels fds not filled in. */
static inline void sample_link(struct proto_link *l, unsigned int n_channels)
{
	static const uint8_t mac[6] = { 0x02, 0x42, 0xac, 0x11, 0x00, 0x02 };
	static const uint8_t lladdr4[6] = { 0x02, 0x42, 0xac, 0x11, 0x00, 0x01 };
	static const uint8_t lladdr6[6] = { 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f };

	memset(l, 0, sizeof(*l));
	l->ifindex = 17;
	snprintf(l->ifname, sizeof(l->ifname), "%s", "abcdefghijklmno");	/* IFNAMSIZ - 1 */
	memcpy(l->mac, mac, 6);
	l->mtu = 9000;
	l->flags = IFF_UP | IFF_BROADCAST | IFF_RUNNING | IFF_MULTICAST;
	l->gso_mode = PROTO_GSO_HW;
	snprintf(l->gso_reason, sizeof(l->gso_reason), "%s", "tso and gso on, veth");
	l->gso_max_size = 65536;
	l->gso_max_segs = 65535;
	l->gso_ipv4_max_size = 150000;
	l->n_channels = n_channels;

	l->n_addrs = 3;
	l->addrs[0] = (struct proto_addr){ .family = AF_INET, .prefixlen = 24, .scope = 0,
					   .flags = 0x80 /* IFA_F_PERMANENT */ };
	inet_pton(AF_INET, "10.88.0.2", &l->addrs[0].addr.v4);
	l->addrs[1] = (struct proto_addr){ .family = AF_INET6, .prefixlen = 64, .scope = 0,
					   .flags = 0x280 };
	inet_pton(AF_INET6, "2001:db8:88::2", &l->addrs[1].addr.v6);
	l->addrs[2] = (struct proto_addr){ .family = AF_INET6, .prefixlen = 128, .scope = 253,
					   .flags = 0x80 };
	inet_pton(AF_INET6, "fe80::42:acff:fe11:2", &l->addrs[2].addr.v6);

	l->n_routes = 4;
	l->routes[0] = (struct proto_route){ .family = AF_INET, .dst_len = 0, .has_gateway = true,
					     .metric = 100 };
	inet_pton(AF_INET, "10.88.0.1", &l->routes[0].gateway.v4);
	l->routes[1] = (struct proto_route){ .family = AF_INET, .dst_len = 32, .metric = 0 };
	inet_pton(AF_INET, "192.0.2.77", &l->routes[1].dst.v4);
	l->routes[2] = (struct proto_route){ .family = AF_INET6, .dst_len = 0, .has_gateway = true,
					     .metric = 1024 };
	inet_pton(AF_INET6, "fe80::1", &l->routes[2].gateway.v6);
	l->routes[3] = (struct proto_route){ .family = AF_INET6, .dst_len = 48, .has_gateway = true,
					     .metric = 0xffffffffu };
	inet_pton(AF_INET6, "2001:db8:99::", &l->routes[3].dst.v6);
	inet_pton(AF_INET6, "2001:db8:88::1", &l->routes[3].gateway.v6);

	l->n_neighs = 2;
	l->neighs[0].family = AF_INET;
	inet_pton(AF_INET, "10.88.0.1", &l->neighs[0].addr.v4);
	memcpy(l->neighs[0].lladdr, lladdr4, 6);
	l->neighs[1].family = AF_INET6;
	inet_pton(AF_INET6, "fe80::1", &l->neighs[1].addr.v6);
	memcpy(l->neighs[1].lladdr, lladdr6, 6);
}

/* Compare every field but the fds (their numbers differ across SCM_RIGHTS). */
static inline void link_assert_equal(const struct proto_link *got, const struct proto_link *want)
{
	ck_assert_uint_eq(got->ifindex, want->ifindex);
	ck_assert_str_eq(got->ifname, want->ifname);
	ck_assert_mem_eq(got->mac, want->mac, 6);
	ck_assert_uint_eq(got->mtu, want->mtu);
	ck_assert_uint_eq(got->flags, want->flags);
	ck_assert_int_eq(got->gso_mode, want->gso_mode);
	ck_assert_str_eq(got->gso_reason, want->gso_reason);
	ck_assert_uint_eq(got->gso_max_size, want->gso_max_size);
	ck_assert_uint_eq(got->gso_max_segs, want->gso_max_segs);
	ck_assert_uint_eq(got->gso_ipv4_max_size, want->gso_ipv4_max_size);
	ck_assert_uint_eq(got->n_channels, want->n_channels);

	ck_assert_uint_eq(got->n_addrs, want->n_addrs);
	for (unsigned int i = 0; i < want->n_addrs; i++) {
		const struct proto_addr *g = &got->addrs[i], *w = &want->addrs[i];
		unsigned int alen = w->family == AF_INET ? 4 : 16;

		ck_assert_msg(g->family == w->family, "addr %u: family %u, want %u", i, g->family,
			      w->family);
		ck_assert_uint_eq(g->prefixlen, w->prefixlen);
		ck_assert_uint_eq(g->scope, w->scope);
		ck_assert_uint_eq(g->flags, w->flags);
		ck_assert_mem_eq(g->addr.bytes, w->addr.bytes, alen);
	}
	ck_assert_uint_eq(got->n_routes, want->n_routes);
	for (unsigned int i = 0; i < want->n_routes; i++) {
		const struct proto_route *g = &got->routes[i], *w = &want->routes[i];
		unsigned int alen = w->family == AF_INET ? 4 : 16;

		ck_assert_msg(g->family == w->family, "route %u: family %u, want %u", i, g->family,
			      w->family);
		ck_assert_uint_eq(g->dst_len, w->dst_len);
		ck_assert_int_eq(g->has_gateway, w->has_gateway);
		ck_assert_uint_eq(g->metric, w->metric);
		if (w->dst_len)
			ck_assert_mem_eq(g->dst.bytes, w->dst.bytes, alen);
		else
			ck_assert_mem_eq(g->dst.bytes, (uint8_t[16]){ 0 }, 16);
		if (w->has_gateway)
			ck_assert_mem_eq(g->gateway.bytes, w->gateway.bytes, alen);
	}
	ck_assert_uint_eq(got->n_neighs, want->n_neighs);
	for (unsigned int i = 0; i < want->n_neighs; i++) {
		const struct proto_neigh *g = &got->neighs[i], *w = &want->neighs[i];

		ck_assert_msg(g->family == w->family, "neigh %u: family %u, want %u", i, g->family,
			      w->family);
		ck_assert_mem_eq(g->addr.bytes, w->addr.bytes, w->family == AF_INET ? 4 : 16);
		ck_assert_mem_eq(g->lladdr, w->lladdr, 6);
	}
}

/* Receive one message that must be valid and of @type; the caller frees it. */
static inline struct proto_msg *recv_ok(int sock, enum proto_msg_type type)
{
	struct proto_why why = { 0 };
	struct proto_msg *msg = NULL;
	int ret = proto_recv(sock, &msg, &why);

	ck_assert_msg(ret == 1, "proto_recv: %d (%s), expected a %s", ret, why.text,
		      proto_msg_type_name(type));
	ck_assert_ptr_nonnull(msg);
	ck_assert_msg(msg->type == type, "got %s, expected %s", proto_msg_type_name(msg->type),
		      proto_msg_type_name(type));
	return msg;
}

/* Nothing is waiting on @sock. */
static inline void assert_nothing_queued(int sock)
{
	char c;
	ssize_t n = recv(sock, &c, 1, MSG_DONTWAIT | MSG_PEEK);

	ck_assert_msg(n < 0 && errno == EAGAIN, "a message is waiting (recv %zd: %s)", n,
		      n < 0 ? strerror(errno) : "data");
}

/*
 * The whole contract of one refusal. Sends @len bytes of @buf with @fds (which
 * are closed here right after sending, so that only the receiver's copies
 * remain in flight) from sk[SENDER]; then proto_recv() on sk[RECEIVER] must
 * return -@err with @text in why->text, close every fd that came, reply ERROR
 * (unless @reply is false: a malformed ERROR is never answered), and receive
 * the next message fine. expect_refused() expects the reply;
 * expect_refused_at() says whether one is due.
 */
#define expect_refused(buf, len, fds, n_fds, err, text) \
	expect_refused_at(__LINE__, (buf), (len), (fds), (n_fds), (err), (text), true)

static inline void expect_refused_at(int line, const void *buf, size_t len, const int *fds,
				     unsigned int n_fds, int err, const char *text, bool reply)
{
	struct proto_why why = { 0 };
	struct proto_msg *msg = (struct proto_msg *)1;	/* proto_recv() must clear it */
	uint32_t seq = len >= sizeof(struct proto_hdr) ? hdr_read(buf).seq : 0;
	int before, ret;

	raw_send(sk[SENDER], buf, len, fds, n_fds);
	fds_close_all(fds, n_fds);
	before = fd_count();

	ret = proto_recv(sk[RECEIVER], &msg, &why);
	ck_assert_msg(ret == -err, "line %d: proto_recv returned %d (%s), expected -%d (%s)", line,
		      ret, why.text, err, strerror(err));
	ck_assert_msg(msg == NULL, "line %d: a message came out of a refusal", line);
	ck_assert_msg(why.err == err, "line %d: why.err %d, expected %d", line, why.err, err);
	ck_assert_msg(strstr(why.text, text), "line %d: why.text \"%s\" does not say \"%s\"", line,
		      why.text, text);
	ck_assert_msg(fd_count() == before, "line %d: %d fds open after the refusal, %d before (%u sent)",
		      line, fd_count(), before, n_fds);

	if (reply) {
		msg = recv_ok(sk[SENDER], PROTO_MSG_ERROR);
		ck_assert_msg(msg->error.err == err, "line %d: ERROR carries errno %d, expected %d",
			      line, msg->error.err, err);
		ck_assert_str_eq(msg->error.message, why.text);
		ck_assert_uint_eq(msg->seq, seq);
		proto_msg_free(msg);
	}
	assert_nothing_queued(sk[SENDER]);

	/* The receiver is ready for the next message. */
	ck_assert_int_eq(proto_send_done(sk[SENDER], 0x5a5a0001), 0);
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_DONE);
	ck_assert_uint_eq(msg->seq, 0x5a5a0001);
	proto_msg_free(msg);
	assert_nothing_queued(sk[RECEIVER]);
	ck_assert_int_eq(fd_count(), before);
}

#endif /* SANDNET_TESTS_PROTO_TESTLIB_H */
