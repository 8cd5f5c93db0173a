/* SPDX-License-Identifier: MIT */
/*
 * datapath_testlib.h - shared fixture of the datapath unit tests that drive
 * a whole stack through a real link
 *
 * Theory of operation
 *
 * dpt_stack_up() builds a stack on a loop with a virtual clock and gives it
 * one link, "eth0", whose only channel is one end of a unix SOCK_DGRAM
 * socketpair: what a test writes to the other end (the peer's fd) is read by
 * the link's recvmmsg path as frames from the wire, and what the stack sends
 * comes out of the link's sendmmsg path there (with the virtio_net_hdr in
 * front in hw mode). The caller adds routes and neighbours and calls
 * stack_start() itself, since some tests look at what starting sends.
 * dpt_stack_down() takes it apart and fails the test when a packet buffer is
 * still allocated.
 *
 * The checksums the tests compare with are computed by a reference that
 * shares no code with datapath/wire/csum.c: a plain loop over 16-bit words.
 *
 * Everything is static inline: each test binary includes this once and uses
 * what it needs, and -Werror must not complain about the rest.
 */
#ifndef SANDNET_TESTS_DATAPATH_TESTLIB_H
#define SANDNET_TESTS_DATAPATH_TESTLIB_H

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "datapath/loop.h"
#include "datapath/link/link.h"
#include "datapath/net/net.h"
#include "datapath/pkt.h"
#include "datapath/proc/shard.h"

static const uint8_t dpt_our_mac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const uint8_t dpt_peer_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };

/**
 * struct dpt_link_opts - the link dpt_stack_up() makes
 * @mode:	GSO mode
 * @addr4, @prefixlen4: our IPv4 address ("10.0.0.2"), or NULL for none
 * @addr6:	our IPv6 address (/64), or NULL for none
 * @nodad:	the IPv6 address is usable at once (IFA_F_NODAD)
 * @gso_max_size, @gso_max_segs: as netsetup would send them (0: not said)
 * @sockbuf:	SO_SNDBUF/SO_RCVBUF of the socketpair, 0 for the default
 */
struct dpt_link_opts {
	enum proto_gso_mode mode;
	const char *addr4;
	uint8_t prefixlen4;
	const char *addr6;
	bool nodad;
	uint32_t gso_max_size, gso_max_segs;
	int sockbuf;
};

/*
 * The link of @o on @st, added but not started. *@peer_fd is the wire's
 * other end.
 */
static inline struct link *dpt_link_add(struct stack *st, const struct dpt_link_opts *o, int *peer_fd)
{
	struct proto_link *cfg = calloc(1, sizeof(*cfg));
	struct link *lk;
	char err[256];
	int sv[2];

	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv), 0);
	if (o->sockbuf) {
		setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &o->sockbuf, sizeof(o->sockbuf));
		setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &o->sockbuf, sizeof(o->sockbuf));
	}
	*peer_fd = sv[1];
	cfg->ifindex = 2;
	strcpy(cfg->ifname, "eth0");
	memcpy(cfg->mac, dpt_our_mac, 6);
	cfg->mtu = 1500;
	cfg->gso_mode = o->mode;
	cfg->gso_max_size = o->gso_max_size;
	cfg->gso_max_segs = o->gso_max_segs;
	cfg->n_channels = 1;
	cfg->channel_fds[0] = sv[0];
	if (o->addr4) {
		struct proto_addr *a = &cfg->addrs[cfg->n_addrs++];

		a->family = AF_INET;
		ck_assert_int_eq(inet_pton(AF_INET, o->addr4, &a->addr.v4), 1);
		a->prefixlen = o->prefixlen4 ? o->prefixlen4 : 24;
	}
	if (o->addr6) {
		struct proto_addr *a = &cfg->addrs[cfg->n_addrs++];

		a->family = AF_INET6;
		ck_assert_int_eq(inet_pton(AF_INET6, o->addr6, &a->addr.v6), 1);
		a->prefixlen = 64;
		a->flags = o->nodad ? 0x02 : 0;	/* IFA_F_NODAD */
	}
	lk = link_packet_new(st->loop, cfg, err, sizeof(err));
	ck_assert_msg(lk != NULL, "%s", err);
	ck_assert_int_eq(cfg->n_channels, 0);
	ck_assert_int_eq(stack_add_link(st, lk), 0);
	free(cfg);
	return lk;
}

/*
 * A loop (virtual clock, at 1000 s), a stack on it and the link of @o, added
 * to the stack but not started. *@peer_fd is the wire's other end.
 */
static inline struct link *dpt_stack_up(struct loop **lp, struct stack *st, const struct dpt_link_opts *o,
					int *peer_fd)
{
	*lp = loop_new(true);
	ck_assert_ptr_nonnull(*lp);
	loop_advance_ms(*lp, 1000000);
	ck_assert_int_eq(stack_init(st, *lp), 0);
	return dpt_link_add(st, o, peer_fd);
}

/*
 * One shard made as the datapath makes its shards (shards_init(), a virtual
 * clock at 1000 s): its loop and stack; with @o, the link of @o on it, added
 * but not started (*@peer_fd the wire's other end).
 */
static inline struct stack *dpt_shard_up(struct shards *sh, const struct dpt_link_opts *o, int *peer_fd)
{
	struct shard_conf conf = { .virtual_clock = true };
	char err[256];

	ck_assert_msg(shards_init(sh, &conf, err, sizeof(err)) == 0, "%s", err);
	loop_advance_ms(sh->sh[0]->loop, 1000000);
	if (o)
		dpt_link_add(&sh->sh[0]->st, o, peer_fd);
	return &sh->sh[0]->st;
}

/* Undo dpt_shard_up(); no packet buffer may be left. */
static inline void dpt_shard_down(struct shards *sh, int peer_fd)
{
	shards_free(sh);
	if (peer_fd >= 0)
		close(peer_fd);
	ck_assert_int_eq(pkt_live(), 0);
	pkt_pool_drain();
}

/* Undo dpt_stack_up(); no packet buffer may be left. */
static inline void dpt_stack_down(struct loop *lp, struct stack *st, int peer_fd)
{
	stack_fini(st);
	loop_free(lp);
	close(peer_fd);
	ck_assert_int_eq(pkt_live(), 0);
	pkt_pool_drain();
}

/* The fds this process holds (not counting the one that lists them). */
static inline int dpt_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

/* Read and forget whatever the stack sent so far. */
static inline void dpt_drain(int peer_fd)
{
	static uint8_t b[LINK_RX_BYTES];

	while (recv(peer_fd, b, sizeof(b), MSG_DONTWAIT) >= 0)
		;
}

/* @addr (IPv4 or IPv6 text) is at dpt_peer_mac on @lk, for good. */
static inline void dpt_neigh_add(struct stack *st, struct link *lk, const char *addr)
{
	struct proto_neigh n = { .family = strchr(addr, ':') ? AF_INET6 : AF_INET };

	ck_assert_int_eq(inet_pton(n.family, addr, &n.addr), 1);
	memcpy(n.lladdr, dpt_peer_mac, 6);
	ck_assert_int_eq(neigh_add_permanent(st, lk, &n), 0);
}

/*
 * RFC 1071 as written: the one's-complement sum of @b's 16-bit big-endian
 * words added to @sum32, folded and inverted (a 64-bit accumulator, so that
 * megabytes of 0xff cannot overflow it).
 */
static inline uint16_t dpt_ref_sum(const uint8_t *b, size_t len, uint32_t sum32)
{
	uint64_t sum = sum32;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The pseudo-header accumulator (not folded) of @family with a @len-byte L4. */
static inline uint32_t dpt_ref_pseudo(int family, const void *s, const void *d, uint8_t proto, uint32_t len)
{
	uint8_t ph[32];
	size_t alen = family == AF_INET ? 4 : 16;
	uint32_t sum = 0;
	size_t i;

	memcpy(ph, s, alen);
	memcpy(ph + alen, d, alen);
	for (i = 0; i < 2 * alen; i += 2)
		sum += (uint32_t)(ph[i] << 8 | ph[i + 1]);
	return sum + proto + (len >> 16) + (len & 0xffff);
}

#endif /* SANDNET_TESTS_DATAPATH_TESTLIB_H */
