// SPDX-License-Identifier: MIT
/*
 * codec.c - encode and decode netsetup <-> datapath messages (sending and
 * receiving them is sock.c's, agreeing on a version handshake.c's)
 *
 * Theory of operation
 *
 * A message is a struct proto_hdr followed by netlink attributes. Encoding
 * builds the attributes in a libnl struct nl_msg (nla_put*, nla_nest_*) and
 * copies them behind the header. Decoding never trusts the buffer: the header
 * is checked (size, magic, version, type, length against what arrived), then
 * every attribute is walked once with nla_ok()/nla_next() so that a truncated
 * attribute or trailing garbage is caught (nla_parse() would skip it with a
 * debug message), each known attribute is checked against its nla_policy
 * entry on its own so that the error names it, and only then nla_parse()
 * fills the table. Attribute types above what this build knows are skipped:
 * that is how a newer minor version adds fields. Lists (addresses, routes,
 * neighbours, versions) are nests of repeated entries.
 *
 * File descriptors: proto_decode() takes ownership of every fd it is given.
 * On success the LINK message holds them; on any failure, or when the message
 * type carries none, they are closed before it returns. proto_recv()
 * (sock.c) hands it what one recvmsg() brought.
 *
 * What it does not do: it never blocks on its own (the caller owns the socket
 * mode), never exits, and keeps no state between calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
#include <netlink/msg.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

_Static_assert(sizeof(struct proto_hdr) == 16, "header layout is part of the wire format");

static const char *const proto_msg_type_names[] = {
	[PROTO_MSG_NONE] = "NONE",
	[PROTO_MSG_HELLO] = "HELLO",
	[PROTO_MSG_LINK] = "LINK",
	[PROTO_MSG_DONE] = "DONE",
	[PROTO_MSG_ACK] = "ACK",
	[PROTO_MSG_ERROR] = "ERROR",
	[PROTO_MSG_ATTACH] = "ATTACH",
};
_Static_assert(sizeof(proto_msg_type_names) / sizeof(proto_msg_type_names[0]) == PROTO_MSG_MAX,
	       "a name for every message type");

static const char *const proto_gso_mode_names[] = {
	[PROTO_GSO_OFF] = "off",
	[PROTO_GSO_SW] = "sw",
	[PROTO_GSO_HW] = "hw",
};
_Static_assert(sizeof(proto_gso_mode_names) / sizeof(proto_gso_mode_names[0]) == PROTO_GSO_MODE_MAX,
	       "a name for every GSO mode");

/**
 * proto_msg_type_name() - name of a message type, for messages to users
 * @type:	enum proto_msg_type, or anything that arrived on the wire
 *
 * Return: "HELLO", "LINK", ... or "UNKNOWN"
 */
const char *proto_msg_type_name(unsigned int type)
{
	return type < PROTO_MSG_MAX ? proto_msg_type_names[type] : "UNKNOWN";
}

/**
 * proto_gso_mode_name() - name of a GSO mode as users write it
 * @mode:	enum proto_gso_mode
 *
 * Return: "off", "sw", "hw" or "unknown"
 */
const char *proto_gso_mode_name(unsigned int mode)
{
	return mode < PROTO_GSO_MODE_MAX ? proto_gso_mode_names[mode] : "unknown";
}

/**
 * proto_gso_mode_parse() - parse "off", "sw" or "hw"
 * @name:	the word
 *
 * Return: enum proto_gso_mode, or -EINVAL
 */
int proto_gso_mode_parse(const char *name)
{
	for (unsigned int i = 0; i < PROTO_GSO_MODE_MAX; i++)
		if (!strcmp(name, proto_gso_mode_names[i]))
			return (int)i;
	return -EINVAL;
}

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

/**
 * struct attr_space - one attribute namespace: its policy and names
 * @what:	prefix for messages, e.g. "LINK" or "LINK: ROUTES entry 3"
 */
struct attr_space {
	const char *what;
	int maxtype;
	const struct nla_policy *policy;
	const char *const *names;
};

/* Record why a message is refused; returns -err for the caller's return. */
int proto_why_set(struct proto_why *why, int err, const char *fmt, ...)
{
	va_list ap;

	why->err = err;
	va_start(ap, fmt);
	vsnprintf(why->text, sizeof(why->text), fmt, ap);
	va_end(ap);
	return -err;
}

/* Close every fd of @fds that is open (>= 0). */
void proto_fds_close(const int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * Walk a run of attributes, refuse truncation and policy violations naming the
 * attribute, then fill @tb with nla_parse(). Unknown types are skipped.
 */
static int attrs_parse(const struct attr_space *sp, struct nlattr **tb, struct nlattr *head,
		       int len, struct proto_why *why)
{
	struct nlattr *nla;
	int rem, err;

	nla_for_each_attr(nla, head, len, rem) {
		int type = nla_type(nla);
		const struct nla_policy *pt;

		if (type == 0)
			return proto_why_set(why, EBADMSG, "%s: attribute of type 0", sp->what);
		if (type > sp->maxtype)
			continue;	/* a newer minor version's attribute */

		pt = &sp->policy[type];
		if (nla_len(nla) < pt->minlen || (pt->maxlen && nla_len(nla) > pt->maxlen)) {
			if (pt->type == NLA_STRING)
				return proto_why_set(why, EINVAL,
					       "%s: attribute %s: string of %d bytes, allowed 1..%d with the NUL",
					       sp->what, sp->names[type], nla_len(nla), pt->maxlen);
			if (pt->minlen == pt->maxlen)
				return proto_why_set(why, EINVAL,
					       "%s: attribute %s: wrong size %d, expected %d",
					       sp->what, sp->names[type], nla_len(nla), pt->minlen);
			return proto_why_set(why, EINVAL, "%s: attribute %s: wrong size %d, expected %d..%d",
				       sp->what, sp->names[type], nla_len(nla), pt->minlen,
				       pt->maxlen);
		}
		/* The size is checked above, so this finds what size cannot: a string without NUL. */
		if (nla_validate(nla, nla->nla_len, sp->maxtype, sp->policy) < 0) {
			if (pt->type == NLA_STRING)
				return proto_why_set(why, EINVAL, "%s: attribute %s: string without NUL",
					       sp->what, sp->names[type]);
			return proto_why_set(why, EINVAL, "%s: attribute %s: malformed", sp->what,
				       sp->names[type]);
		}
	}
	/* nla_next() steps by the aligned length: an unpadded last attribute leaves rem in (-4, 0]. */
	if (rem > 0)
		return proto_why_set(why, EBADMSG, "%s: truncated attribute (%d bytes left over)", sp->what,
			       rem);

	err = nla_parse(tb, sp->maxtype, head, len, sp->policy);
	if (err < 0)
		return proto_why_set(why, EBADMSG, "%s: attributes do not parse", sp->what);
	return 0;
}

static int attr_require(const struct attr_space *sp, struct nlattr **tb, const int *types,
			unsigned int n, struct proto_why *why)
{
	for (unsigned int i = 0; i < n; i++)
		if (!tb[types[i]])
			return proto_why_set(why, EINVAL, "%s: missing mandatory attribute %s", sp->what,
				       sp->names[types[i]]);
	return 0;
}

static unsigned int family_addr_len(uint8_t family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

static const char *family_name(uint8_t family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

static int family_check(const struct attr_space *sp, uint8_t family, struct proto_why *why)
{
	if (!family_addr_len(family))
		return proto_why_set(why, EAFNOSUPPORT, "%s: family %u is neither AF_INET nor AF_INET6",
			       sp->what, family);
	return 0;
}

/* Copy an address attribute whose length must match @family. */
static int inaddr_get(const struct attr_space *sp, const struct nlattr *nla, const char *name,
		      uint8_t family, union proto_inaddr *out, struct proto_why *why)
{
	unsigned int want = family_addr_len(family);

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
	unsigned int max = family_addr_len(family) * 8;

	if (len > max)
		return proto_why_set(why, EINVAL, "%s: attribute %s: %u is over %u for %s", sp->what, name,
			       len, max, family_name(family));
	return 0;
}

/*
 * Iterate the entries of a list nest; @each decodes one entry. @count is
 * incremented per entry and bounded by @max.
 */
typedef int (*entry_fn)(const struct attr_space *sp, struct nlattr **tb, void *out,
			struct proto_why *why);

static int list_parse(const char *what, const char *list, struct nlattr *nest, int entry_type,
		      unsigned int max, struct attr_space *entry_sp, struct nlattr **tb,
		      void *array, size_t elem_size, unsigned int *count, entry_fn each,
		      struct proto_why *why)
{
	char where[96];
	struct nlattr *entry;
	int rem, err;

	*count = 0;
	nla_for_each_nested(entry, nest, rem) {
		if (nla_type(entry) == 0)
			return proto_why_set(why, EBADMSG, "%s: %s: entry of type 0", what, list);
		if (nla_type(entry) != entry_type)
			continue;	/* newer minors may add other entry kinds */
		if (*count >= max)
			return proto_why_set(why, E2BIG, "%s: more than %u entries in %s", what, max,
				       list);
		snprintf(where, sizeof(where), "%s: %s entry %u", what, list, *count);
		entry_sp->what = where;
		memset(tb, 0, sizeof(*tb) * (entry_sp->maxtype + 1));
		err = attrs_parse(entry_sp, tb, nla_data(entry), nla_len(entry), why);
		if (err)
			return err;
		err = each(entry_sp, tb, (char *)array + elem_size * *count, why);
		if (err)
			return err;
		(*count)++;
	}
	if (rem > 0)
		return proto_why_set(why, EBADMSG, "%s: %s: truncated entry (%d bytes left over)", what,
			       list, rem);
	return 0;
}

static int addr_entry(const struct attr_space *sp, struct nlattr **tb, void *out,
		      struct proto_why *why)
{
	static const int mandatory[] = { PROTO_ADDR_FAMILY, PROTO_ADDR_ADDRESS,
					 PROTO_ADDR_PREFIXLEN };
	struct proto_addr *a = out;
	int err;

	err = attr_require(sp, tb, mandatory, 3, why);
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
	err = attr_require(sp, tb, mandatory, 2, why);
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

	err = attr_require(sp, tb, mandatory, 3, why);
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

static int hello_decode(struct nlattr *head, int len, struct proto_hello *h,
			struct proto_why *why)
{
	struct attr_space sp = { "HELLO", PROTO_HELLO_ATTR_MAX, hello_policy, hello_names };
	struct attr_space vsp = { "HELLO: VERSIONS", PROTO_HELLO_VERSION, version_policy,
				  version_names };
	struct nlattr *tb[PROTO_HELLO_ATTR_MAX + 1] = { 0 };
	struct nlattr *vtb[PROTO_HELLO_VERSION + 1] = { 0 };
	static const int mandatory[] = { PROTO_HELLO_VERSIONS };
	struct nlattr *v;
	int rem, err;

	err = attrs_parse(&sp, tb, head, len, why);
	if (err)
		return err;
	err = attr_require(&sp, tb, mandatory, 1, why);
	if (err)
		return err;
	/* The list is a run of u8 attributes: validate them all, then collect. */
	err = attrs_parse(&vsp, vtb, nla_data(tb[PROTO_HELLO_VERSIONS]),
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

	err = attrs_parse(&sp, tb, nla_data(nest), nla_len(nest), why);
	if (err)
		return err;
	err = attr_require(&sp, tb, mandatory, sizeof(mandatory) / sizeof(mandatory[0]), why);
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

static int link_decode(struct nlattr *head, int len, const int *fds, unsigned int n_fds,
		       struct proto_link *l, struct proto_why *why)
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

	err = attrs_parse(&sp, tb, head, len, why);
	if (err)
		return err;
	err = attr_require(&sp, tb, mandatory, sizeof(mandatory) / sizeof(mandatory[0]), why);
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
		err = list_parse("LINK", "ADDRS", tb[PROTO_LINK_ADDRS], PROTO_LINK_ADDR,
				 PROTO_MAX_ADDRS, &asp, etb, l->addrs, sizeof(l->addrs[0]),
				 &l->n_addrs, addr_entry, why);
		if (err)
			return err;
	}
	if (tb[PROTO_LINK_ROUTES]) {
		err = list_parse("LINK", "ROUTES", tb[PROTO_LINK_ROUTES], PROTO_LINK_ROUTE,
				 PROTO_MAX_ROUTES, &rsp, etb, l->routes, sizeof(l->routes[0]),
				 &l->n_routes, route_entry, why);
		if (err)
			return err;
	}
	if (tb[PROTO_LINK_NEIGHS]) {
		err = list_parse("LINK", "NEIGHS", tb[PROTO_LINK_NEIGHS], PROTO_LINK_NEIGH,
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

static int done_decode(struct nlattr *head, int len, const int *fds, unsigned int n_fds,
		       struct proto_done *d, struct proto_why *why)
{
	struct attr_space sp = { "DONE", PROTO_DONE_ATTR_MAX, done_policy, done_names };
	struct nlattr *tb[PROTO_DONE_ATTR_MAX + 1] = { 0 };
	uint32_t declared;
	struct stat sb;
	int err, flags;

	err = attrs_parse(&sp, tb, head, len, why);
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

/*
 * ACK has no attributes of its own: the body is still walked, so
 * that garbage or a truncated attribute is refused as in every other message,
 * and a newer minor's attributes are skipped.
 */
static int bare_decode(unsigned int type, struct nlattr *head, int len, struct proto_why *why)
{
	static const struct nla_policy none_policy[1];
	static const char *const none_names[1];
	struct attr_space sp = { proto_msg_type_name(type), 0, none_policy, none_names };
	struct nlattr *tb[1] = { 0 };

	return attrs_parse(&sp, tb, head, len, why);
}

static int error_decode(struct nlattr *head, int len, struct proto_error *e,
			struct proto_why *why)
{
	static const int mandatory[] = { PROTO_ERROR_ERRNO, PROTO_ERROR_MESSAGE };
	struct attr_space sp = { "ERROR", PROTO_ERROR_ATTR_MAX, error_policy, error_names };
	struct nlattr *tb[PROTO_ERROR_ATTR_MAX + 1] = { 0 };
	uint32_t err_no;
	int err;

	err = attrs_parse(&sp, tb, head, len, why);
	if (err)
		return err;
	err = attr_require(&sp, tb, mandatory, 2, why);
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

static int attach_decode(struct nlattr *head, int len, const int *fds, unsigned int n_fds,
			 struct proto_attach *a, struct proto_why *why)
{
	static const int mandatory[] = { PROTO_ATTACH_NETNS };
	struct attr_space sp = { "ATTACH", PROTO_ATTACH_ATTR_MAX, attach_policy, attach_names };
	struct nlattr *tb[PROTO_ATTACH_ATTR_MAX + 1] = { 0 };
	int err, nstype;

	err = attrs_parse(&sp, tb, head, len, why);
	if (err)
		return err;
	err = attr_require(&sp, tb, mandatory, 1, why);
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

static int attach_encode(struct nl_msg *nl, const struct proto_attach *a)
{
	if (nla_put_u32(nl, PROTO_ATTACH_NETNS, 1) ||
	    (a->ifname[0] && nla_put_string(nl, PROTO_ATTACH_IFNAME, a->ifname)) ||
	    (a->has_gso_mode && nla_put_u8(nl, PROTO_ATTACH_GSO_MODE, a->gso_mode)) ||
	    (a->channels && nla_put_u32(nl, PROTO_ATTACH_CHANNELS, a->channels)) ||
	    (a->no_face && nla_put_u8(nl, PROTO_ATTACH_FACE, 0)) ||
	    (a->shards && nla_put_u32(nl, PROTO_ATTACH_SHARDS, a->shards)))
		return -E2BIG;
	return 0;
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
		err = hello_decode(attrs, attrlen, &msg->hello, why);
		break;
	case PROTO_MSG_LINK:
		err = link_decode(attrs, attrlen, fds, n_fds, &msg->link, why);
		break;
	case PROTO_MSG_ERROR:
		err = error_decode(attrs, attrlen, &msg->error, why);
		break;
	case PROTO_MSG_ATTACH:
		err = attach_decode(attrs, attrlen, fds, n_fds, &msg->attach, why);
		break;
	case PROTO_MSG_DONE:
		err = done_decode(attrs, attrlen, fds, n_fds, &msg->done, why);
		break;
	default:
		err = bare_decode(hdr.type, attrs, attrlen, why);
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

/* Encoding: attributes go into a libnl message, then behind our header. */

static int put_inaddr(struct nl_msg *nl, int type, uint8_t family, const union proto_inaddr *a)
{
	return nla_put(nl, type, family_addr_len(family), a->bytes);
}

static int link_encode(struct nl_msg *nl, const struct proto_link *l)
{
	struct nlattr *list, *entry;

	if (l->n_addrs > PROTO_MAX_ADDRS || l->n_routes > PROTO_MAX_ROUTES ||
	    l->n_neighs > PROTO_MAX_NEIGHS || l->n_channels > PROTO_MAX_CHANNELS ||
	    (l->has_face && (l->face.n_fds < 1 || l->face.n_fds > PROTO_MAX_CHANNELS ||
			     (l->face.n_netstat && l->face.n_netstat != PROTO_FACE_NETSTAT_FDS))))
		return -E2BIG;

	if (nla_put_u32(nl, PROTO_LINK_IFINDEX, l->ifindex) ||
	    nla_put_string(nl, PROTO_LINK_IFNAME, l->ifname) ||
	    nla_put(nl, PROTO_LINK_MAC, sizeof(l->mac), l->mac) ||
	    nla_put_u32(nl, PROTO_LINK_MTU, l->mtu) ||
	    nla_put_u32(nl, PROTO_LINK_FLAGS, l->flags) ||
	    nla_put_u8(nl, PROTO_LINK_GSO_MODE, l->gso_mode) ||
	    (l->gso_reason[0] && nla_put_string(nl, PROTO_LINK_GSO_REASON, l->gso_reason)) ||
	    nla_put_u32(nl, PROTO_LINK_GSO_MAX_SIZE, l->gso_max_size) ||
	    nla_put_u32(nl, PROTO_LINK_GSO_MAX_SEGS, l->gso_max_segs) ||
	    nla_put_u32(nl, PROTO_LINK_GSO_IPV4_MAX_SIZE, l->gso_ipv4_max_size) ||
	    nla_put_u32(nl, PROTO_LINK_CHANNELS, l->n_channels) ||
	    (l->has_steer_seed && nla_put_u32(nl, PROTO_LINK_STEER_SEED, l->steer_seed)))
		return -E2BIG;

	if (!(list = nla_nest_start(nl, PROTO_LINK_ADDRS)))
		return -E2BIG;
	for (unsigned int i = 0; i < l->n_addrs; i++) {
		const struct proto_addr *a = &l->addrs[i];

		if (!(entry = nla_nest_start(nl, PROTO_LINK_ADDR)) ||
		    nla_put_u8(nl, PROTO_ADDR_FAMILY, a->family) ||
		    put_inaddr(nl, PROTO_ADDR_ADDRESS, a->family, &a->addr) ||
		    nla_put_u8(nl, PROTO_ADDR_PREFIXLEN, a->prefixlen) ||
		    nla_put_u8(nl, PROTO_ADDR_SCOPE, a->scope) ||
		    nla_put_u32(nl, PROTO_ADDR_FLAGS, a->flags))
			return -E2BIG;
		nla_nest_end(nl, entry);
	}
	nla_nest_end(nl, list);

	if (!(list = nla_nest_start(nl, PROTO_LINK_ROUTES)))
		return -E2BIG;
	for (unsigned int i = 0; i < l->n_routes; i++) {
		const struct proto_route *r = &l->routes[i];

		if (!(entry = nla_nest_start(nl, PROTO_LINK_ROUTE)) ||
		    nla_put_u8(nl, PROTO_ROUTE_FAMILY, r->family) ||
		    (r->dst_len && put_inaddr(nl, PROTO_ROUTE_DST, r->family, &r->dst)) ||
		    nla_put_u8(nl, PROTO_ROUTE_DST_LEN, r->dst_len) ||
		    (r->has_gateway && put_inaddr(nl, PROTO_ROUTE_GATEWAY, r->family, &r->gateway)) ||
		    nla_put_u32(nl, PROTO_ROUTE_METRIC, r->metric))
			return -E2BIG;
		nla_nest_end(nl, entry);
	}
	nla_nest_end(nl, list);

	if (!(list = nla_nest_start(nl, PROTO_LINK_NEIGHS)))
		return -E2BIG;
	for (unsigned int i = 0; i < l->n_neighs; i++) {
		const struct proto_neigh *n = &l->neighs[i];

		if (!(entry = nla_nest_start(nl, PROTO_LINK_NEIGH)) ||
		    nla_put_u8(nl, PROTO_NEIGH_FAMILY, n->family) ||
		    put_inaddr(nl, PROTO_NEIGH_ADDRESS, n->family, &n->addr) ||
		    nla_put(nl, PROTO_NEIGH_LLADDR, sizeof(n->lladdr), n->lladdr))
			return -E2BIG;
		nla_nest_end(nl, entry);
	}
	nla_nest_end(nl, list);

	if (l->has_face) {
		if (!(list = nla_nest_start(nl, PROTO_LINK_FACE)) ||
		    nla_put_u32(nl, PROTO_FACE_IFINDEX, l->face.ifindex) ||
		    nla_put_string(nl, PROTO_FACE_IFNAME, l->face.ifname) ||
		    nla_put_u32(nl, PROTO_FACE_MTU, l->face.mtu) ||
		    nla_put_u32(nl, PROTO_FACE_OFFLOADS, l->face.offloads) ||
		    (l->face.n_fds > 1 && nla_put_u32(nl, PROTO_FACE_QUEUES, l->face.n_fds)) ||
		    (l->face.n_netstat && nla_put_u32(nl, PROTO_FACE_NETSTAT, l->face.n_netstat)))
			return -E2BIG;
		nla_nest_end(nl, list);
	}
	return 0;
}

static int hello_encode(struct nl_msg *nl, const struct proto_hello *h)
{
	struct nlattr *list;

	if (h->n_versions > PROTO_MAX_VERSIONS)
		return -E2BIG;
	if (!(list = nla_nest_start(nl, PROTO_HELLO_VERSIONS)))
		return -E2BIG;
	for (unsigned int i = 0; i < h->n_versions; i++)
		if (nla_put_u8(nl, PROTO_HELLO_VERSION, h->versions[i]))
			return -E2BIG;
	nla_nest_end(nl, list);
	if (nla_put_u8(nl, PROTO_HELLO_MINOR, h->minor))
		return -E2BIG;
	if (h->software[0] && nla_put_string(nl, PROTO_HELLO_SOFTWARE, h->software))
		return -E2BIG;
	if (h->shards && nla_put_u32(nl, PROTO_HELLO_SHARDS, h->shards))
		return -E2BIG;
	return 0;
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
		err = hello_encode(nl, &msg->hello);
		break;
	case PROTO_MSG_LINK:
		err = link_encode(nl, &msg->link);
		break;
	case PROTO_MSG_ERROR:
		err = nla_put_u32(nl, PROTO_ERROR_ERRNO, (uint32_t)msg->error.err) ||
		      nla_put_string(nl, PROTO_ERROR_MESSAGE, msg->error.message) ? -E2BIG : 0;
		break;
	case PROTO_MSG_ATTACH:
		err = attach_encode(nl, &msg->attach);
		break;
	case PROTO_MSG_DONE:
		err = msg->done.has_status && nla_put_u32(nl, PROTO_DONE_STATUS, 1) ? -E2BIG : 0;
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
