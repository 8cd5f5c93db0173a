// SPDX-License-Identifier: MIT
/*
 * decode.c - the body of each message, decoded: HELLO, LINK (its addresses,
 * routes, neighbours and the face), DONE, ERROR, ATTACH, and the bare ones
 *
 * Theory of operation
 *
 * proto_decode() (codec.c) checked the header and hands the body here by
 * type. Each decoder has its attribute spaces (the policy and names tables
 * below), walks the body with attrs.c's validating walk, requires its
 * mandatory attributes, and then checks what a policy cannot: values in
 * range (an MTU, an ifindex, counts of channels, queues and shards, an errno),
 * address lengths that match their family, prefix lengths within it.
 *
 * The fds that came with a message are checked for what the message
 * declares them to be: a LINK's channels AF_PACKET SOCK_RAW sockets, its face
 * fds queues of the TUN the FACE names, its netstat fds /proc files open for
 * reading; an ATTACH's fd a network namespace; a DONE's status fd a regular
 * file open for writing. Their number must be exactly what is declared. A
 * decoder puts the fds into the message only once nothing is left to fail:
 * on a refusal codec.c closes them all.
 *
 * What it does not do: read the header, allocate, or close an fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <linux/if_tun.h>

#include <netlink/attr.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

/* Policies and attribute names, one table pair per attribute space. */

#define POLICY_U8	{ .type = NLA_U8, .minlen = 1, .maxlen = 1 }
#define POLICY_U32	{ .type = NLA_U32, .minlen = 4, .maxlen = 4 }
#define POLICY_BYTES(min, max) { .type = NLA_UNSPEC, .minlen = (min), .maxlen = (max) }
#define POLICY_STRING(max) { .type = NLA_STRING, .minlen = 1, .maxlen = (max) }
#define POLICY_NESTED	{ .type = NLA_NESTED }

static const struct nla_policy hello_policy[PROTO_HELLO_ATTR_MAX + 1] = {
	[PROTO_HELLO_VERSIONS] = POLICY_NESTED,
	[PROTO_HELLO_MINOR] = POLICY_U8,
	[PROTO_HELLO_SOFTWARE] = POLICY_STRING(PROTO_TEXT_MAX),
	[PROTO_HELLO_SHARDS] = POLICY_U32,
};
static const char *const hello_names[PROTO_HELLO_ATTR_MAX + 1] = {
	[PROTO_HELLO_VERSIONS] = "VERSIONS",
	[PROTO_HELLO_MINOR] = "MINOR",
	[PROTO_HELLO_SOFTWARE] = "SOFTWARE",
	[PROTO_HELLO_SHARDS] = "SHARDS",
};

static const struct nla_policy version_policy[PROTO_HELLO_VERSION + 1] = {
	[PROTO_HELLO_VERSION] = POLICY_U8,
};
static const char *const version_names[PROTO_HELLO_VERSION + 1] = {
	[PROTO_HELLO_VERSION] = "VERSION",
};

static const struct nla_policy link_policy[PROTO_LINK_ATTR_MAX + 1] = {
	[PROTO_LINK_IFINDEX] = POLICY_U32,
	[PROTO_LINK_IFNAME] = POLICY_STRING(IFNAMSIZ),
	[PROTO_LINK_MAC] = POLICY_BYTES(6, 6),
	[PROTO_LINK_MTU] = POLICY_U32,
	[PROTO_LINK_FLAGS] = POLICY_U32,
	[PROTO_LINK_GSO_MODE] = POLICY_U8,
	[PROTO_LINK_GSO_REASON] = POLICY_STRING(PROTO_TEXT_MAX),
	[PROTO_LINK_GSO_MAX_SIZE] = POLICY_U32,
	[PROTO_LINK_GSO_MAX_SEGS] = POLICY_U32,
	[PROTO_LINK_GSO_IPV4_MAX_SIZE] = POLICY_U32,
	[PROTO_LINK_CHANNELS] = POLICY_U32,
	[PROTO_LINK_ADDRS] = POLICY_NESTED,
	[PROTO_LINK_ROUTES] = POLICY_NESTED,
	[PROTO_LINK_NEIGHS] = POLICY_NESTED,
	[PROTO_LINK_FACE] = POLICY_NESTED,
	[PROTO_LINK_STEER_SEED] = POLICY_U32,
};
static const char *const link_names[PROTO_LINK_ATTR_MAX + 1] = {
	[PROTO_LINK_IFINDEX] = "IFINDEX",
	[PROTO_LINK_IFNAME] = "IFNAME",
	[PROTO_LINK_MAC] = "MAC",
	[PROTO_LINK_MTU] = "MTU",
	[PROTO_LINK_FLAGS] = "FLAGS",
	[PROTO_LINK_GSO_MODE] = "GSO_MODE",
	[PROTO_LINK_GSO_REASON] = "GSO_REASON",
	[PROTO_LINK_GSO_MAX_SIZE] = "GSO_MAX_SIZE",
	[PROTO_LINK_GSO_MAX_SEGS] = "GSO_MAX_SEGS",
	[PROTO_LINK_GSO_IPV4_MAX_SIZE] = "GSO_IPV4_MAX_SIZE",
	[PROTO_LINK_CHANNELS] = "CHANNELS",
	[PROTO_LINK_ADDRS] = "ADDRS",
	[PROTO_LINK_ROUTES] = "ROUTES",
	[PROTO_LINK_NEIGHS] = "NEIGHS",
	[PROTO_LINK_FACE] = "FACE",
	[PROTO_LINK_STEER_SEED] = "STEER_SEED",
};

static const struct nla_policy face_policy[PROTO_FACE_ATTR_MAX + 1] = {
	[PROTO_FACE_IFINDEX] = POLICY_U32,
	[PROTO_FACE_IFNAME] = POLICY_STRING(IFNAMSIZ),
	[PROTO_FACE_MTU] = POLICY_U32,
	[PROTO_FACE_OFFLOADS] = POLICY_U32,
	[PROTO_FACE_QUEUES] = POLICY_U32,
	[PROTO_FACE_NETSTAT] = POLICY_U32,
};
static const char *const face_names[PROTO_FACE_ATTR_MAX + 1] = {
	[PROTO_FACE_IFINDEX] = "IFINDEX",
	[PROTO_FACE_IFNAME] = "IFNAME",
	[PROTO_FACE_MTU] = "MTU",
	[PROTO_FACE_OFFLOADS] = "OFFLOADS",
	[PROTO_FACE_QUEUES] = "QUEUES",
	[PROTO_FACE_NETSTAT] = "NETSTAT",
};

static const struct nla_policy addr_policy[PROTO_ADDR_ATTR_MAX + 1] = {
	[PROTO_ADDR_FAMILY] = POLICY_U8,
	[PROTO_ADDR_ADDRESS] = POLICY_BYTES(4, 16),
	[PROTO_ADDR_PREFIXLEN] = POLICY_U8,
	[PROTO_ADDR_SCOPE] = POLICY_U8,
	[PROTO_ADDR_FLAGS] = POLICY_U32,
};
static const char *const addr_names[PROTO_ADDR_ATTR_MAX + 1] = {
	[PROTO_ADDR_FAMILY] = "FAMILY",
	[PROTO_ADDR_ADDRESS] = "ADDRESS",
	[PROTO_ADDR_PREFIXLEN] = "PREFIXLEN",
	[PROTO_ADDR_SCOPE] = "SCOPE",
	[PROTO_ADDR_FLAGS] = "FLAGS",
};

static const struct nla_policy route_policy[PROTO_ROUTE_ATTR_MAX + 1] = {
	[PROTO_ROUTE_FAMILY] = POLICY_U8,
	[PROTO_ROUTE_DST] = POLICY_BYTES(4, 16),
	[PROTO_ROUTE_DST_LEN] = POLICY_U8,
	[PROTO_ROUTE_GATEWAY] = POLICY_BYTES(4, 16),
	[PROTO_ROUTE_METRIC] = POLICY_U32,
};
static const char *const route_names[PROTO_ROUTE_ATTR_MAX + 1] = {
	[PROTO_ROUTE_FAMILY] = "FAMILY",
	[PROTO_ROUTE_DST] = "DST",
	[PROTO_ROUTE_DST_LEN] = "DST_LEN",
	[PROTO_ROUTE_GATEWAY] = "GATEWAY",
	[PROTO_ROUTE_METRIC] = "METRIC",
};

static const struct nla_policy neigh_policy[PROTO_NEIGH_ATTR_MAX + 1] = {
	[PROTO_NEIGH_FAMILY] = POLICY_U8,
	[PROTO_NEIGH_ADDRESS] = POLICY_BYTES(4, 16),
	[PROTO_NEIGH_LLADDR] = POLICY_BYTES(6, 6),
};
static const char *const neigh_names[PROTO_NEIGH_ATTR_MAX + 1] = {
	[PROTO_NEIGH_FAMILY] = "FAMILY",
	[PROTO_NEIGH_ADDRESS] = "ADDRESS",
	[PROTO_NEIGH_LLADDR] = "LLADDR",
};

static const struct nla_policy error_policy[PROTO_ERROR_ATTR_MAX + 1] = {
	[PROTO_ERROR_ERRNO] = POLICY_U32,
	[PROTO_ERROR_MESSAGE] = POLICY_STRING(PROTO_TEXT_MAX),
};
static const char *const error_names[PROTO_ERROR_ATTR_MAX + 1] = {
	[PROTO_ERROR_ERRNO] = "ERRNO",
	[PROTO_ERROR_MESSAGE] = "MESSAGE",
};

static const char *family_name(uint8_t family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

static int family_check(const struct attr_space *sp, uint8_t family, struct proto_why *why)
{
	if (!proto_family_addr_len(family))
		return proto_why_set(why, EAFNOSUPPORT, "%s: family %u is neither AF_INET nor AF_INET6",
			       sp->what, family);
	return 0;
}

/* Copy an address attribute whose length must match @family. */
static int inaddr_get(const struct attr_space *sp, const struct nlattr *nla, const char *name,
		      uint8_t family, union proto_inaddr *out, struct proto_why *why)
{
	unsigned int want = proto_family_addr_len(family);

	if ((unsigned int)nla_len(nla) != want)
		return proto_why_set(why, EINVAL, "%s: attribute %s: %d bytes for an %s address, expected %u",
			       sp->what, name, nla_len(nla), family_name(family), want);
	memset(out, 0, sizeof(*out));
	memcpy(out->bytes, nla_data(nla), want);
	return 0;
}

static int prefixlen_check(const struct attr_space *sp, const char *name, uint8_t family,
			   unsigned int len, struct proto_why *why)
{
	unsigned int max = proto_family_addr_len(family) * 8;

	if (len > max)
		return proto_why_set(why, EINVAL, "%s: attribute %s: %u is over %u for %s", sp->what, name,
			       len, max, family_name(family));
	return 0;
}

static int addr_entry(const struct attr_space *sp, struct nlattr **tb, void *out,
		      struct proto_why *why)
{
	static const int mandatory[] = { PROTO_ADDR_FAMILY, PROTO_ADDR_ADDRESS,
					 PROTO_ADDR_PREFIXLEN };
	struct proto_addr *a = out;
	int err;

	err = proto_attrs_require(sp, tb, mandatory, 3, why);
	if (err)
		return err;
	a->family = nla_get_u8(tb[PROTO_ADDR_FAMILY]);
	err = family_check(sp, a->family, why);
	if (err)
		return err;
	err = inaddr_get(sp, tb[PROTO_ADDR_ADDRESS], "ADDRESS", a->family, &a->addr, why);
	if (err)
		return err;
	a->prefixlen = nla_get_u8(tb[PROTO_ADDR_PREFIXLEN]);
	err = prefixlen_check(sp, "PREFIXLEN", a->family, a->prefixlen, why);
	if (err)
		return err;
	a->scope = tb[PROTO_ADDR_SCOPE] ? nla_get_u8(tb[PROTO_ADDR_SCOPE]) : 0;
	a->flags = tb[PROTO_ADDR_FLAGS] ? nla_get_u32(tb[PROTO_ADDR_FLAGS]) : 0;
	return 0;
}

static int route_entry(const struct attr_space *sp, struct nlattr **tb, void *out,
		       struct proto_why *why)
{
	static const int mandatory[] = { PROTO_ROUTE_FAMILY, PROTO_ROUTE_DST_LEN };
	struct proto_route *r = out;
	int err;

	memset(r, 0, sizeof(*r));
	err = proto_attrs_require(sp, tb, mandatory, 2, why);
	if (err)
		return err;
	r->family = nla_get_u8(tb[PROTO_ROUTE_FAMILY]);
	err = family_check(sp, r->family, why);
	if (err)
		return err;
	r->dst_len = nla_get_u8(tb[PROTO_ROUTE_DST_LEN]);
	err = prefixlen_check(sp, "DST_LEN", r->family, r->dst_len, why);
	if (err)
		return err;
	if (tb[PROTO_ROUTE_DST]) {
		err = inaddr_get(sp, tb[PROTO_ROUTE_DST], "DST", r->family, &r->dst, why);
		if (err)
			return err;
	} else if (r->dst_len) {
		return proto_why_set(why, EINVAL, "%s: DST_LEN %u without DST", sp->what, r->dst_len);
	}
	if (tb[PROTO_ROUTE_GATEWAY]) {
		err = inaddr_get(sp, tb[PROTO_ROUTE_GATEWAY], "GATEWAY", r->family, &r->gateway,
				 why);
		if (err)
			return err;
		r->has_gateway = true;
	}
	r->metric = tb[PROTO_ROUTE_METRIC] ? nla_get_u32(tb[PROTO_ROUTE_METRIC]) : 0;
	return 0;
}

static int neigh_entry(const struct attr_space *sp, struct nlattr **tb, void *out,
		       struct proto_why *why)
{
	static const int mandatory[] = { PROTO_NEIGH_FAMILY, PROTO_NEIGH_ADDRESS,
					 PROTO_NEIGH_LLADDR };
	struct proto_neigh *n = out;
	int err;

	err = proto_attrs_require(sp, tb, mandatory, 3, why);
	if (err)
		return err;
	n->family = nla_get_u8(tb[PROTO_NEIGH_FAMILY]);
	err = family_check(sp, n->family, why);
	if (err)
		return err;
	err = inaddr_get(sp, tb[PROTO_NEIGH_ADDRESS], "ADDRESS", n->family, &n->addr, why);
	if (err)
		return err;
	memcpy(n->lladdr, nla_data(tb[PROTO_NEIGH_LLADDR]), sizeof(n->lladdr));
	return 0;
}

/**
 * proto_hello_decode() - HELLO's body: the versions, minor, software, shards
 * @head, @len:	the body
 * @h:		filled
 * @why:	the reason of a refusal
 *
 * Return: 0, or a negative errno with @why filled
 */
int proto_hello_decode(struct nlattr *head, int len, struct proto_hello *h, struct proto_why *why)
{
	struct attr_space sp = { "HELLO", PROTO_HELLO_ATTR_MAX, hello_policy, hello_names };
	struct attr_space vsp = { "HELLO: VERSIONS", PROTO_HELLO_VERSION, version_policy,
				  version_names };
	struct nlattr *tb[PROTO_HELLO_ATTR_MAX + 1] = { 0 };
	struct nlattr *vtb[PROTO_HELLO_VERSION + 1] = { 0 };
	static const int mandatory[] = { PROTO_HELLO_VERSIONS };
	struct nlattr *v;
	int rem, err;

	err = proto_attrs_parse(&sp, tb, head, len, why);
	if (err)
		return err;
	err = proto_attrs_require(&sp, tb, mandatory, 1, why);
	if (err)
		return err;
	/* The list is a run of u8 attributes: validate them all, then collect. */
	err = proto_attrs_parse(&vsp, vtb, nla_data(tb[PROTO_HELLO_VERSIONS]),
			  nla_len(tb[PROTO_HELLO_VERSIONS]), why);
	if (err)
		return err;
	h->n_versions = 0;
	nla_for_each_nested(v, tb[PROTO_HELLO_VERSIONS], rem) {
		if (nla_type(v) != PROTO_HELLO_VERSION)
			continue;
		if (h->n_versions >= PROTO_MAX_VERSIONS)
			return proto_why_set(why, E2BIG, "HELLO: more than %u entries in VERSIONS",
				       PROTO_MAX_VERSIONS);
		h->versions[h->n_versions] = nla_get_u8(v);
		if (!h->versions[h->n_versions])
			return proto_why_set(why, EINVAL, "HELLO: VERSIONS: version 0 does not exist");
		h->n_versions++;
	}
	if (!h->n_versions)
		return proto_why_set(why, EINVAL, "HELLO: VERSIONS lists no version");
	h->minor = tb[PROTO_HELLO_MINOR] ? nla_get_u8(tb[PROTO_HELLO_MINOR]) : 0;
	if (tb[PROTO_HELLO_SOFTWARE])
		nla_strlcpy(h->software, tb[PROTO_HELLO_SOFTWARE], sizeof(h->software));
	if (tb[PROTO_HELLO_SHARDS]) {
		h->shards = nla_get_u32(tb[PROTO_HELLO_SHARDS]);
		if (h->shards < 1 || h->shards > PROTO_MAX_CHANNELS)
			return proto_why_set(why, E2BIG, "HELLO: attribute SHARDS: %u is out of range 1..%u",
				       h->shards, PROTO_MAX_CHANNELS);
	}
	return 0;
}

/* Each channel must be an AF_PACKET SOCK_RAW socket: anything else is refused. */
static int channel_check(int fd, unsigned int i, struct proto_why *why)
{
	int domain = -1, type = -1;
	socklen_t len = sizeof(domain);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
		return proto_why_set(why, EBADF, "LINK: channel fd %u is not a socket (%s)", i,
			       strerror(errno));
	len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		return proto_why_set(why, EBADF, "LINK: channel fd %u: SO_TYPE: %s", i, strerror(errno));
	if (domain != AF_PACKET || type != SOCK_RAW)
		return proto_why_set(why, EBADF,
			       "LINK: channel fd %u is a socket of family %d type %d, not AF_PACKET SOCK_RAW",
			       i, domain, type);
	return 0;
}

/*
 * Each face fd must be a queue of the TUN the FACE names: TUNGETIFF (no
 * privilege needed on an attached fd) gives its name and flags; more than
 * one queue needs an IFF_MULTI_QUEUE TUN.
 */
static int face_fd_check(int fd, const struct proto_face *f, const char *link, struct proto_why *why)
{
	const unsigned int want = IFF_TUN | IFF_NO_PI | IFF_VNET_HDR;
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	if (ioctl(fd, TUNGETIFF, &ifr) < 0)
		return proto_why_set(why, EBADF, "LINK %s: FACE: the face fd is not a TUN device (%s)", link,
			       strerror(errno));
	ifr.ifr_name[IFNAMSIZ - 1] = '\0';
	if (((unsigned int)ifr.ifr_flags & (IFF_TUN | IFF_TAP | IFF_NO_PI | IFF_VNET_HDR)) != want)
		return proto_why_set(why, EBADF,
			       "LINK %s: FACE: TUN %s has flags 0x%x, need IFF_TUN|IFF_NO_PI|IFF_VNET_HDR",
			       link, ifr.ifr_name, (unsigned int)ifr.ifr_flags & 0xffff);
	if (strcmp(ifr.ifr_name, f->ifname))
		return proto_why_set(why, EBADF, "LINK %s: FACE: the face fd is TUN %s, not %s", link,
			       ifr.ifr_name, f->ifname);
	if (f->n_fds > 1 && !((unsigned int)ifr.ifr_flags & IFF_MULTI_QUEUE))
		return proto_why_set(why, EBADF, "LINK %s: FACE: %u queues of TUN %s, which is not IFF_MULTI_QUEUE",
			       link, f->n_fds, ifr.ifr_name);
	return 0;
}

static int face_decode(struct nlattr *nest, const char *link, struct proto_face *f,
		       struct proto_why *why)
{
	static const int mandatory[] = { PROTO_FACE_IFINDEX, PROTO_FACE_IFNAME, PROTO_FACE_MTU };
	struct attr_space sp = { "FACE", PROTO_FACE_ATTR_MAX, face_policy, face_names };
	struct nlattr *tb[PROTO_FACE_ATTR_MAX + 1] = { 0 };
	int err;

	err = proto_attrs_parse(&sp, tb, nla_data(nest), nla_len(nest), why);
	if (err)
		return err;
	err = proto_attrs_require(&sp, tb, mandatory, sizeof(mandatory) / sizeof(mandatory[0]), why);
	if (err)
		return err;
	f->ifindex = nla_get_u32(tb[PROTO_FACE_IFINDEX]);
	if (!f->ifindex || f->ifindex > INT32_MAX)
		return proto_why_set(why, EINVAL, "LINK %s: FACE: attribute IFINDEX: %u is not a valid index",
			       link, f->ifindex);
	nla_strlcpy(f->ifname, tb[PROTO_FACE_IFNAME], sizeof(f->ifname));
	if (!f->ifname[0])
		return proto_why_set(why, EINVAL, "LINK %s: FACE: attribute IFNAME: empty name", link);
	f->mtu = nla_get_u32(tb[PROTO_FACE_MTU]);
	if (f->mtu < PROTO_MTU_MIN || f->mtu > PROTO_MTU_MAX)
		return proto_why_set(why, ERANGE, "LINK %s: FACE: attribute MTU: %u is out of range %u..%u",
			       link, f->mtu, PROTO_MTU_MIN, PROTO_MTU_MAX);
	f->offloads = tb[PROTO_FACE_OFFLOADS] ? nla_get_u32(tb[PROTO_FACE_OFFLOADS]) : 0;
	f->n_fds = tb[PROTO_FACE_QUEUES] ? nla_get_u32(tb[PROTO_FACE_QUEUES]) : 1;
	if (f->n_fds < 1 || f->n_fds > PROTO_MAX_CHANNELS)
		return proto_why_set(why, E2BIG, "LINK %s: FACE: attribute QUEUES: %u is out of range 1..%u",
			       link, f->n_fds, PROTO_MAX_CHANNELS);
	for (unsigned int i = 0; i < PROTO_MAX_CHANNELS; i++)
		f->fds[i] = -1;
	f->n_netstat = tb[PROTO_FACE_NETSTAT] ? nla_get_u32(tb[PROTO_FACE_NETSTAT]) : 0;
	if (f->n_netstat && f->n_netstat != PROTO_FACE_NETSTAT_FDS)
		return proto_why_set(why, EINVAL, "LINK %s: FACE: attribute NETSTAT: %u fds, not %d", link,
				     f->n_netstat, PROTO_FACE_NETSTAT_FDS);
	for (unsigned int i = 0; i < PROTO_FACE_NETSTAT_FDS; i++)
		f->netstat_fds[i] = -1;
	return 0;
}

/*
 * A netstat fd: a file of the container netns's /proc/net, open for
 * reading (procfs, a regular file); nothing else may pose as one.
 */
static int netstat_fd_check(int fd, const char *link, struct proto_why *why)
{
	struct statfs sfs;
	struct stat sb;
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fstat(fd, &sb) < 0 || fstatfs(fd, &sfs) < 0)
		return proto_why_set(why, EBADF, "LINK %s: FACE: a netstat fd is not open (%s)", link,
				     strerror(errno));
	if (!S_ISREG(sb.st_mode) || sfs.f_type != PROC_SUPER_MAGIC || (flags & O_ACCMODE) == O_WRONLY)
		return proto_why_set(why, EBADF, "LINK %s: FACE: a netstat fd is not a /proc file open for reading",
				     link);
	return 0;
}

/**
 * proto_link_decode() - LINK's body, its lists and face, and its fds checked
 * @head, @len:	the body
 * @fds, @n_fds: what arrived with it: the channels, then the face's queues,
 *		then its netstat files
 * @l:		filled; it holds @fds only on success
 * @why:	the reason of a refusal
 *
 * Return: 0, or a negative errno with @why filled
 */
int proto_link_decode(struct nlattr *head, int len, const int *fds, unsigned int n_fds, struct proto_link *l,
		      struct proto_why *why)
{
	static const int mandatory[] = { PROTO_LINK_IFINDEX, PROTO_LINK_IFNAME, PROTO_LINK_MAC,
					 PROTO_LINK_MTU, PROTO_LINK_GSO_MODE,
					 PROTO_LINK_CHANNELS };
	struct attr_space sp = { "LINK", PROTO_LINK_ATTR_MAX, link_policy, link_names };
	struct attr_space asp = { NULL, PROTO_ADDR_ATTR_MAX, addr_policy, addr_names };
	struct attr_space rsp = { NULL, PROTO_ROUTE_ATTR_MAX, route_policy, route_names };
	struct attr_space nsp = { NULL, PROTO_NEIGH_ATTR_MAX, neigh_policy, neigh_names };
	struct nlattr *tb[PROTO_LINK_ATTR_MAX + 1] = { 0 };
	struct nlattr *etb[PROTO_ROUTE_ATTR_MAX + 1];	/* the largest entry space */
	unsigned int channels, queues, netstat;
	int err;

	_Static_assert(PROTO_ROUTE_ATTR_MAX >= PROTO_ADDR_ATTR_MAX &&
		       PROTO_ROUTE_ATTR_MAX >= PROTO_NEIGH_ATTR_MAX, "etb fits every entry space");

	err = proto_attrs_parse(&sp, tb, head, len, why);
	if (err)
		return err;
	err = proto_attrs_require(&sp, tb, mandatory, sizeof(mandatory) / sizeof(mandatory[0]), why);
	if (err)
		return err;

	l->ifindex = nla_get_u32(tb[PROTO_LINK_IFINDEX]);
	if (!l->ifindex || l->ifindex > INT32_MAX)
		return proto_why_set(why, EINVAL, "LINK: attribute IFINDEX: %u is not a valid index",
			       l->ifindex);
	nla_strlcpy(l->ifname, tb[PROTO_LINK_IFNAME], sizeof(l->ifname));
	if (!l->ifname[0])
		return proto_why_set(why, EINVAL, "LINK: attribute IFNAME: empty name");
	memcpy(l->mac, nla_data(tb[PROTO_LINK_MAC]), sizeof(l->mac));
	l->mtu = nla_get_u32(tb[PROTO_LINK_MTU]);
	if (l->mtu < PROTO_MTU_MIN || l->mtu > PROTO_MTU_MAX)
		return proto_why_set(why, ERANGE, "LINK %s: attribute MTU: %u is out of range %u..%u",
			       l->ifname, l->mtu, PROTO_MTU_MIN, PROTO_MTU_MAX);
	l->flags = tb[PROTO_LINK_FLAGS] ? nla_get_u32(tb[PROTO_LINK_FLAGS]) : 0;
	l->gso_mode = nla_get_u8(tb[PROTO_LINK_GSO_MODE]);
	if (l->gso_mode >= PROTO_GSO_MODE_MAX)
		return proto_why_set(why, EINVAL, "LINK %s: attribute GSO_MODE: %u is not off, sw or hw",
			       l->ifname, l->gso_mode);
	if (tb[PROTO_LINK_GSO_REASON])
		nla_strlcpy(l->gso_reason, tb[PROTO_LINK_GSO_REASON], sizeof(l->gso_reason));
	l->gso_max_size = tb[PROTO_LINK_GSO_MAX_SIZE] ? nla_get_u32(tb[PROTO_LINK_GSO_MAX_SIZE]) : 0;
	l->gso_max_segs = tb[PROTO_LINK_GSO_MAX_SEGS] ? nla_get_u32(tb[PROTO_LINK_GSO_MAX_SEGS]) : 0;
	l->gso_ipv4_max_size = tb[PROTO_LINK_GSO_IPV4_MAX_SIZE] ?
		nla_get_u32(tb[PROTO_LINK_GSO_IPV4_MAX_SIZE]) : 0;
	l->has_steer_seed = tb[PROTO_LINK_STEER_SEED] != NULL;
	l->steer_seed = l->has_steer_seed ? nla_get_u32(tb[PROTO_LINK_STEER_SEED]) : 0;

	channels = nla_get_u32(tb[PROTO_LINK_CHANNELS]);
	if (channels < 1 || channels > PROTO_MAX_CHANNELS)
		return proto_why_set(why, E2BIG, "LINK %s: attribute CHANNELS: %u is out of range 1..%u",
			       l->ifname, channels, PROTO_MAX_CHANNELS);
	if (tb[PROTO_LINK_FACE]) {
		err = face_decode(tb[PROTO_LINK_FACE], l->ifname, &l->face, why);
		if (err)
			return err;
		l->has_face = true;
	}
	queues = l->has_face ? l->face.n_fds : 0;
	netstat = l->has_face ? l->face.n_netstat : 0;
	if (n_fds != channels + queues + netstat) {
		char faces[64] = "";

		if (queues == 1)
			snprintf(faces, sizeof(faces), " and a face fd");
		else if (queues)
			snprintf(faces, sizeof(faces), " and %u face fds", queues);
		if (netstat)
			snprintf(faces + strlen(faces), sizeof(faces) - strlen(faces), " and %u netstat fds",
				 netstat);
		return proto_why_set(why, EBADMSG, "LINK %s: declares %u channel fds%s but %u arrived",
			       l->ifname, channels, faces, n_fds);
	}
	for (unsigned int i = 0; i < channels; i++) {
		err = channel_check(fds[i], i, why);
		if (err)
			return err;
	}
	for (unsigned int i = 0; i < queues; i++) {
		err = face_fd_check(fds[channels + i], &l->face, l->ifname, why);
		if (err)
			return err;
	}
	for (unsigned int i = 0; i < netstat; i++) {
		err = netstat_fd_check(fds[channels + queues + i], l->ifname, why);
		if (err)
			return err;
	}

	if (tb[PROTO_LINK_ADDRS]) {
		err = proto_attrs_list("LINK", "ADDRS", tb[PROTO_LINK_ADDRS], PROTO_LINK_ADDR,
				 PROTO_MAX_ADDRS, &asp, etb, l->addrs, sizeof(l->addrs[0]),
				 &l->n_addrs, addr_entry, why);
		if (err)
			return err;
	}
	if (tb[PROTO_LINK_ROUTES]) {
		err = proto_attrs_list("LINK", "ROUTES", tb[PROTO_LINK_ROUTES], PROTO_LINK_ROUTE,
				 PROTO_MAX_ROUTES, &rsp, etb, l->routes, sizeof(l->routes[0]),
				 &l->n_routes, route_entry, why);
		if (err)
			return err;
	}
	if (tb[PROTO_LINK_NEIGHS]) {
		err = proto_attrs_list("LINK", "NEIGHS", tb[PROTO_LINK_NEIGHS], PROTO_LINK_NEIGH,
				 PROTO_MAX_NEIGHS, &nsp, etb, l->neighs, sizeof(l->neighs[0]),
				 &l->n_neighs, neigh_entry, why);
		if (err)
			return err;
	}

	/* Only now, with nothing left to fail, does the message own the fds. */
	l->n_channels = channels;
	memcpy(l->channel_fds, fds, channels * sizeof(fds[0]));
	memcpy(l->face.fds, fds + channels, queues * sizeof(fds[0]));
	memcpy(l->face.netstat_fds, fds + channels + queues, netstat * sizeof(fds[0]));
	return 0;
}

/*
 * DONE (minor 3): STATUS, when present, declares the one fd that came with
 * it, which must be a regular file open for writing (the status file: a
 * socket or a read-only fd there would only fail later, in the supervisor).
 * Without STATUS no fd may come.
 */
static const struct nla_policy done_policy[PROTO_DONE_ATTR_MAX + 1] = {
	[PROTO_DONE_STATUS] = POLICY_U32,
};
static const char *const done_names[PROTO_DONE_ATTR_MAX + 1] = {
	[PROTO_DONE_STATUS] = "STATUS",
};

/**
 * proto_done_decode() - DONE's body and its status fd, if one is declared
 * @head, @len:	the body
 * @fds, @n_fds: what arrived with it
 * @d:		filled; it holds the status fd only on success
 * @why:	the reason of a refusal
 *
 * Return: 0, or a negative errno with @why filled
 */
int proto_done_decode(struct nlattr *head, int len, const int *fds, unsigned int n_fds, struct proto_done *d,
		      struct proto_why *why)
{
	struct attr_space sp = { "DONE", PROTO_DONE_ATTR_MAX, done_policy, done_names };
	struct nlattr *tb[PROTO_DONE_ATTR_MAX + 1] = { 0 };
	uint32_t declared;
	struct stat sb;
	int err, flags;

	err = proto_attrs_parse(&sp, tb, head, len, why);
	if (err)
		return err;
	declared = tb[PROTO_DONE_STATUS] ? nla_get_u32(tb[PROTO_DONE_STATUS]) : 0;
	if (declared > 1 || n_fds != declared)
		return proto_why_set(why, EBADMSG, "DONE: declares %u status fds but %u arrived (0 or 1)",
				     declared, n_fds);
	if (!declared)
		return 0;
	flags = fcntl(fds[0], F_GETFL);
	if (fstat(fds[0], &sb) < 0 || !S_ISREG(sb.st_mode) || flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
		return proto_why_set(why, EBADF, "DONE: the status fd is not a regular file open for writing");
	d->has_status = true;
	d->status_fd = fds[0];
	return 0;
}

/**
 * proto_bare_decode() - the body of a message without attributes of its own
 * @type:	its type (ACK), for messages
 * @head, @len:	the body
 * @why:	the reason of a refusal
 *
 * The body is still walked, so that garbage or a truncated attribute is
 * refused as in every other message, and a newer minor's attributes are
 * skipped.
 *
 * Return: 0, or a negative errno with @why filled
 */
int proto_bare_decode(unsigned int type, struct nlattr *head, int len, struct proto_why *why)
{
	static const struct nla_policy none_policy[1];
	static const char *const none_names[1];
	struct attr_space sp = { proto_msg_type_name(type), 0, none_policy, none_names };
	struct nlattr *tb[1] = { 0 };

	return proto_attrs_parse(&sp, tb, head, len, why);
}

/**
 * proto_error_decode() - ERROR's body: the errno and the message
 * @head, @len:	the body
 * @e:		filled
 * @why:	the reason of a refusal
 *
 * Return: 0, or a negative errno with @why filled
 */
int proto_error_decode(struct nlattr *head, int len, struct proto_error *e, struct proto_why *why)
{
	static const int mandatory[] = { PROTO_ERROR_ERRNO, PROTO_ERROR_MESSAGE };
	struct attr_space sp = { "ERROR", PROTO_ERROR_ATTR_MAX, error_policy, error_names };
	struct nlattr *tb[PROTO_ERROR_ATTR_MAX + 1] = { 0 };
	uint32_t err_no;
	int err;

	err = proto_attrs_parse(&sp, tb, head, len, why);
	if (err)
		return err;
	err = proto_attrs_require(&sp, tb, mandatory, 2, why);
	if (err)
		return err;
	err_no = nla_get_u32(tb[PROTO_ERROR_ERRNO]);
	if (err_no == 0 || err_no >= 4096)
		return proto_why_set(why, EINVAL, "ERROR: attribute ERRNO: %u is not an errno", err_no);
	e->err = (int)err_no;
	nla_strlcpy(e->message, tb[PROTO_ERROR_MESSAGE], sizeof(e->message));
	return 0;
}

/*
 * ATTACH (netsetup serve's request, docs/protocol.md "ATTACH"): one fd, which
 * must be a network namespace file; the rest is what the client asks for and
 * what the daemon's configuration then allows or refuses.
 */
static const struct nla_policy attach_policy[PROTO_ATTACH_ATTR_MAX + 1] = {
	[PROTO_ATTACH_NETNS] = POLICY_U32,
	[PROTO_ATTACH_IFNAME] = POLICY_STRING(IFNAMSIZ),
	[PROTO_ATTACH_GSO_MODE] = POLICY_U8,
	[PROTO_ATTACH_CHANNELS] = POLICY_U32,
	[PROTO_ATTACH_FACE] = POLICY_U8,
	[PROTO_ATTACH_SHARDS] = POLICY_U32,
};
static const char *const attach_names[PROTO_ATTACH_ATTR_MAX + 1] = {
	[PROTO_ATTACH_NETNS] = "NETNS",
	[PROTO_ATTACH_IFNAME] = "IFNAME",
	[PROTO_ATTACH_GSO_MODE] = "GSO_MODE",
	[PROTO_ATTACH_CHANNELS] = "CHANNELS",
	[PROTO_ATTACH_FACE] = "FACE",
	[PROTO_ATTACH_SHARDS] = "SHARDS",
};

/**
 * proto_attach_decode() - ATTACH's body and its netns fd
 * @head, @len:	the body
 * @fds, @n_fds: what arrived with it: exactly one network namespace
 * @a:		filled; it holds the fd only on success
 * @why:	the reason of a refusal
 *
 * Return: 0, or a negative errno with @why filled
 */
int proto_attach_decode(struct nlattr *head, int len, const int *fds, unsigned int n_fds,
			struct proto_attach *a, struct proto_why *why)
{
	static const int mandatory[] = { PROTO_ATTACH_NETNS };
	struct attr_space sp = { "ATTACH", PROTO_ATTACH_ATTR_MAX, attach_policy, attach_names };
	struct nlattr *tb[PROTO_ATTACH_ATTR_MAX + 1] = { 0 };
	int err, nstype;

	err = proto_attrs_parse(&sp, tb, head, len, why);
	if (err)
		return err;
	err = proto_attrs_require(&sp, tb, mandatory, 1, why);
	if (err)
		return err;
	if (nla_get_u32(tb[PROTO_ATTACH_NETNS]) != 1 || n_fds != 1)
		return proto_why_set(why, EBADMSG, "ATTACH: declares %u netns fds but %u arrived (exactly 1)",
			       nla_get_u32(tb[PROTO_ATTACH_NETNS]), n_fds);
	nstype = ioctl(fds[0], NS_GET_NSTYPE);
	if (nstype != CLONE_NEWNET)
		return proto_why_set(why, EBADF, "ATTACH: the fd is not a network namespace (%s)",
			       nstype < 0 ? strerror(errno) : "another kind of namespace");
	if (tb[PROTO_ATTACH_IFNAME]) {
		nla_strlcpy(a->ifname, tb[PROTO_ATTACH_IFNAME], sizeof(a->ifname));
		if (!a->ifname[0])
			return proto_why_set(why, EINVAL, "ATTACH: attribute IFNAME: empty name");
	}
	if (tb[PROTO_ATTACH_GSO_MODE]) {
		a->has_gso_mode = true;
		a->gso_mode = nla_get_u8(tb[PROTO_ATTACH_GSO_MODE]);
		if (a->gso_mode >= PROTO_GSO_MODE_MAX)
			return proto_why_set(why, EINVAL, "ATTACH: attribute GSO_MODE: %u is not off, sw or hw",
				       a->gso_mode);
	}
	if (tb[PROTO_ATTACH_CHANNELS]) {
		a->channels = nla_get_u32(tb[PROTO_ATTACH_CHANNELS]);
		if (a->channels < 1 || a->channels > PROTO_MAX_CHANNELS)
			return proto_why_set(why, E2BIG, "ATTACH: attribute CHANNELS: %u is out of range 1..%u",
				       a->channels, PROTO_MAX_CHANNELS);
	}
	if (tb[PROTO_ATTACH_FACE]) {
		uint8_t v = nla_get_u8(tb[PROTO_ATTACH_FACE]);

		if (v > 1)
			return proto_why_set(why, EINVAL, "ATTACH: attribute FACE: %u is not 0 (off) or 1 (on)", v);
		a->no_face = !v;
	}
	if (tb[PROTO_ATTACH_SHARDS]) {
		a->shards = nla_get_u32(tb[PROTO_ATTACH_SHARDS]);
		if (a->shards < 1 || a->shards > PROTO_MAX_CHANNELS)
			return proto_why_set(why, E2BIG, "ATTACH: attribute SHARDS: %u is out of range 1..%u",
				       a->shards, PROTO_MAX_CHANNELS);
	}
	a->netns_fd = fds[0];
	return 0;
}
