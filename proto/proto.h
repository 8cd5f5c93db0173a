/* SPDX-License-Identifier: MIT */
/*
 * proto.h - the netsetup <-> datapath wire protocol
 *
 * One SOCK_SEQPACKET message per record: a fixed struct proto_hdr, then
 * netlink attributes (libnl nla_*), validated with nla_policy tables. File
 * descriptors travel with SCM_RIGHTS on the message that declares them.
 * docs/protocol.md is the normative description; this header is the API.
 *
 * The same API serves both sides: the proto_send_*() functions encode and send
 * one message; proto_recv() receives, validates and decodes one into a
 * struct proto_msg that owns its file descriptors; proto_msg_free() releases
 * it and closes them. A malformed message never reaches the caller: it is
 * answered with ERROR, its fds are closed, and the socket stays usable.
 */
#ifndef SANDNET_PROTO_H
#define SANDNET_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>

/* "SNET" read as a big-endian number; the header is in host byte order. */
#define PROTO_MAGIC		0x534e4554u

/* Major versions this build speaks, lowest to highest, and its minor. */
#define PROTO_VERSION_MIN	1
#define PROTO_VERSION_MAX	1
#define PROTO_VERSION_MINOR	6	/* 1: ATTACH; 2: FACE; 3: DONE STATUS; 4: FACE QUEUES; 5: HELLO SHARDS;
					 * 6: FACE NETSTAT */
#define PROTO_MINOR_FACE	2	/* a peer below it knows no LINK FACE */
#define PROTO_MINOR_STATUS	3	/* a peer below it refuses DONE with an fd */
#define PROTO_MINOR_QUEUES	4	/* a peer below it takes one face fd per link */
#define PROTO_MINOR_NETSTAT	6	/* a peer below it takes no netstat fds */

/* Limits; a message over any of them is refused with ERROR (E2BIG). */
#define PROTO_MSG_MAX_BYTES	65536	/* one message, header included */
#define PROTO_MAX_LINKS		64	/* LINK messages per configuration */
#define PROTO_MAX_ADDRS		64	/* addresses per link */
#define PROTO_MAX_ROUTES	256	/* routes per link */
#define PROTO_MAX_NEIGHS	256	/* permanent neighbours per link */
#define PROTO_MAX_CHANNELS	64	/* channel fds per link, and TUN queues per face */
#define PROTO_FACE_NETSTAT_FDS	3	/* a face's netstat fds: snmp, snmp6, dev */
#define PROTO_MAX_VERSIONS	16	/* versions listed in one HELLO */
#define PROTO_TEXT_MAX		256	/* reason, error message, software: bytes with NUL */
#define PROTO_MTU_MIN		68	/* RFC 791 minimum */
#define PROTO_MTU_MAX		65535

/**
 * struct proto_hdr - fixed header in front of every message
 * @magic:	PROTO_MAGIC
 * @version:	major version the body is encoded in; HELLO always uses 1
 * @minor:	sender's minor version (newer minors only add attributes)
 * @type:	enum proto_msg_type
 * @length:	total bytes of the message, this header included
 * @seq:	sender's sequence number; ACK and ERROR echo the request's
 */
struct proto_hdr {
	uint32_t magic;
	uint8_t version;
	uint8_t minor;
	uint16_t type;
	uint32_t length;
	uint32_t seq;
};

enum proto_msg_type {
	PROTO_MSG_NONE,		/* 0 is never sent */
	PROTO_MSG_HELLO,
	PROTO_MSG_LINK,
	PROTO_MSG_DONE,
	PROTO_MSG_ACK,
	PROTO_MSG_ERROR,
	PROTO_MSG_ATTACH,	/* client -> netsetup serve: attach this netns (fd attached) */
	PROTO_MSG_MAX
};

enum proto_gso_mode {
	PROTO_GSO_OFF,		/* one MTU-sized frame per segment, one syscall each */
	PROTO_GSO_SW,		/* sandnet splits, one sendmmsg for the batch */
	PROTO_GSO_HW,		/* PACKET_VNET_HDR: the kernel segments */
	PROTO_GSO_MODE_MAX
};

/* Attributes of HELLO. */
enum {
	PROTO_HELLO_UNSPEC,
	PROTO_HELLO_VERSIONS,	/* nested: one PROTO_HELLO_VERSION (u8) per major */
	PROTO_HELLO_MINOR,	/* u8 */
	PROTO_HELLO_SOFTWARE,	/* string: "sandnet-netsetup 0.1" */
	PROTO_HELLO_SHARDS,	/* u32, 1..PROTO_MAX_CHANNELS: the shards the responder would run (minor 5) */
	__PROTO_HELLO_MAX
};
#define PROTO_HELLO_ATTR_MAX (__PROTO_HELLO_MAX - 1)
#define PROTO_HELLO_VERSION 1	/* type of each entry inside PROTO_HELLO_VERSIONS */

/* Attributes of LINK. */
enum {
	PROTO_LINK_UNSPEC,
	PROTO_LINK_IFINDEX,		/* u32, mandatory, > 0 */
	PROTO_LINK_IFNAME,		/* string, mandatory, < IFNAMSIZ */
	PROTO_LINK_MAC,			/* 6 bytes, mandatory */
	PROTO_LINK_MTU,			/* u32, mandatory, PROTO_MTU_MIN..PROTO_MTU_MAX */
	PROTO_LINK_FLAGS,		/* u32, IFF_* */
	PROTO_LINK_GSO_MODE,		/* u8, enum proto_gso_mode, mandatory */
	PROTO_LINK_GSO_REASON,		/* string */
	PROTO_LINK_GSO_MAX_SIZE,	/* u32: largest frame the datapath may build */
	PROTO_LINK_GSO_MAX_SEGS,	/* u32 */
	PROTO_LINK_GSO_IPV4_MAX_SIZE,	/* u32: BIG TCP limit for IPv4 */
	PROTO_LINK_CHANNELS,		/* u32, mandatory: fds attached, 1..PROTO_MAX_CHANNELS */
	PROTO_LINK_ADDRS,		/* nested: PROTO_LINK_ADDR entries */
	PROTO_LINK_ROUTES,		/* nested: PROTO_LINK_ROUTE entries */
	PROTO_LINK_NEIGHS,		/* nested: PROTO_LINK_NEIGH entries */
	PROTO_LINK_FACE,		/* nested PROTO_FACE_*: the container face; one more fd (minor 2) */
	PROTO_LINK_STEER_SEED,		/* u32: the steering program's secret, with steered channels (minor 4) */
	__PROTO_LINK_MAX
};
#define PROTO_LINK_ATTR_MAX (__PROTO_LINK_MAX - 1)
#define PROTO_LINK_ADDR  1	/* entry type inside PROTO_LINK_ADDRS */
#define PROTO_LINK_ROUTE 1	/* entry type inside PROTO_LINK_ROUTES */
#define PROTO_LINK_NEIGH 1	/* entry type inside PROTO_LINK_NEIGHS */

/* Attributes of one address entry. */
enum {
	PROTO_ADDR_UNSPEC,
	PROTO_ADDR_FAMILY,	/* u8 AF_INET or AF_INET6, mandatory */
	PROTO_ADDR_ADDRESS,	/* 4 or 16 bytes matching the family, mandatory */
	PROTO_ADDR_PREFIXLEN,	/* u8 <= 32 or 128, mandatory */
	PROTO_ADDR_SCOPE,	/* u8 RT_SCOPE_* */
	PROTO_ADDR_FLAGS,	/* u32 IFA_F_* */
	__PROTO_ADDR_MAX
};
#define PROTO_ADDR_ATTR_MAX (__PROTO_ADDR_MAX - 1)

/* Attributes of one route entry (main table only). */
enum {
	PROTO_ROUTE_UNSPEC,
	PROTO_ROUTE_FAMILY,	/* u8, mandatory */
	PROTO_ROUTE_DST,	/* 4 or 16 bytes; absent for a default route */
	PROTO_ROUTE_DST_LEN,	/* u8 <= 32 or 128, mandatory */
	PROTO_ROUTE_GATEWAY,	/* 4 or 16 bytes; absent for an on-link route */
	PROTO_ROUTE_METRIC,	/* u32 priority */
	__PROTO_ROUTE_MAX
};
#define PROTO_ROUTE_ATTR_MAX (__PROTO_ROUTE_MAX - 1)

/* Attributes of one permanent neighbour entry. */
enum {
	PROTO_NEIGH_UNSPEC,
	PROTO_NEIGH_FAMILY,	/* u8, mandatory */
	PROTO_NEIGH_ADDRESS,	/* 4 or 16 bytes, mandatory */
	PROTO_NEIGH_LLADDR,	/* 6 bytes, mandatory */
	__PROTO_NEIGH_MAX
};
#define PROTO_NEIGH_ATTR_MAX (__PROTO_NEIGH_MAX - 1)

/*
 * Attributes of a link's FACE (minor 2): the TUN device netsetup made in the
 * container's netns, which carries the container's own traffic. Its fd
 * travels after the link's channel fds.
 */
enum {
	PROTO_FACE_UNSPEC,
	PROTO_FACE_IFINDEX,	/* u32, mandatory, > 0: the TUN's index in the container's netns */
	PROTO_FACE_IFNAME,	/* string < IFNAMSIZ, mandatory: its name (TUNGETIFF must agree) */
	PROTO_FACE_MTU,		/* u32, mandatory, PROTO_MTU_MIN..PROTO_MTU_MAX */
	PROTO_FACE_OFFLOADS,	/* u32: the TUN_F_* flags TUNSETOFFLOAD accepted */
	PROTO_FACE_QUEUES,	/* u32, 1..PROTO_MAX_CHANNELS: fds of a multi-queue TUN; absent: 1 (minor 4) */
	PROTO_FACE_NETSTAT,	/* u32, PROTO_FACE_NETSTAT_FDS: the container's /proc/net files follow (minor 6) */
	__PROTO_FACE_MAX
};
#define PROTO_FACE_ATTR_MAX (__PROTO_FACE_MAX - 1)

/*
 * Attributes of DONE (minor 3). STATUS declares one fd: a regular file open
 * for writing, where the datapath keeps its supervisor's status (restarts,
 * deaths, dark) for netsetup to read (docs/protocol.md "DONE").
 */
enum {
	PROTO_DONE_UNSPEC,
	PROTO_DONE_STATUS,	/* u32, 1: the status file's fd is attached */
	__PROTO_DONE_MAX
};
#define PROTO_DONE_ATTR_MAX (__PROTO_DONE_MAX - 1)

/* Attributes of ERROR. */
enum {
	PROTO_ERROR_UNSPEC,
	PROTO_ERROR_ERRNO,	/* u32, positive errno, mandatory */
	PROTO_ERROR_MESSAGE,	/* string, mandatory */
	__PROTO_ERROR_MAX
};
#define PROTO_ERROR_ATTR_MAX (__PROTO_ERROR_MAX - 1)

/* Attributes of ATTACH; exactly one fd travels with it: the network namespace. */
enum {
	PROTO_ATTACH_UNSPEC,
	PROTO_ATTACH_NETNS,	/* u32, mandatory: 1 (the fd attached is an nsfs netns file) */
	PROTO_ATTACH_IFNAME,	/* string < IFNAMSIZ: only this link; absent: every usable one */
	PROTO_ATTACH_GSO_MODE,	/* u8 enum proto_gso_mode; absent: netsetup decides (auto) */
	PROTO_ATTACH_CHANNELS,	/* u32, 1..PROTO_MAX_CHANNELS; absent: 1 */
	PROTO_ATTACH_FACE,	/* u8 0 or 1: the container face (minor 2); absent: 1 */
	PROTO_ATTACH_SHARDS,	/* u32, 1..PROTO_MAX_CHANNELS: shards, one channel each (minor 4); absent: 1 */
	__PROTO_ATTACH_MAX
};
#define PROTO_ATTACH_ATTR_MAX (__PROTO_ATTACH_MAX - 1)

union proto_inaddr {
	struct in_addr v4;
	struct in6_addr v6;
	uint8_t bytes[16];
};

struct proto_addr {
	uint8_t family;			/* AF_INET or AF_INET6 */
	uint8_t prefixlen;
	uint8_t scope;			/* RT_SCOPE_UNIVERSE, RT_SCOPE_LINK, ... */
	uint32_t flags;			/* IFA_F_* */
	union proto_inaddr addr;
};

struct proto_route {
	uint8_t family;
	uint8_t dst_len;		/* 0 for a default route */
	bool has_gateway;
	uint32_t metric;
	union proto_inaddr dst;		/* zero when dst_len is 0 */
	union proto_inaddr gateway;
};

struct proto_neigh {
	uint8_t family;
	union proto_inaddr addr;
	uint8_t lladdr[6];
};

/**
 * struct proto_face - the container face of a link: a TUN device in the
 * container's netns (IFF_TUN | IFF_NO_PI | IFF_VNET_HDR)
 * @ifindex:	its index in the container's netns
 * @ifname:	its name
 * @mtu:	its MTU (the link's)
 * @offloads:	TUN_F_* flags TUNSETOFFLOAD accepted
 * @n_fds:	its queues: 1, or more for an IFF_MULTI_QUEUE TUN (one per shard)
 * @fds:	one fd per queue, -1 when none
 * @n_netstat:	0, or PROTO_FACE_NETSTAT_FDS (minor 6): @netstat_fds hold the
 *		container netns's /proc/net/snmp, snmp6 and dev, open for
 *		reading (its kernel's UDP and device counters: where datagrams
 *		were lost on its side)
 */
struct proto_face {
	uint32_t ifindex;
	char ifname[IFNAMSIZ];
	uint32_t mtu;
	uint32_t offloads;
	unsigned int n_fds;
	int fds[PROTO_MAX_CHANNELS];
	unsigned int n_netstat;
	int netstat_fds[PROTO_FACE_NETSTAT_FDS];
};

/**
 * struct proto_link - one link and the channel sockets that serve it
 * @has_face:	@face is set (minor 2)
 *
 * Owned fds: @channel_fds[0 .. @n_channels - 1] and, with @has_face,
 * @face.fds[0 .. @face.n_fds - 1], closed by proto_msg_free() on the
 * receiving side. A sender keeps
 * ownership of what it passes.
 */
struct proto_link {
	uint32_t ifindex;
	char ifname[IFNAMSIZ];
	uint8_t mac[6];
	uint32_t mtu;
	uint32_t flags;
	enum proto_gso_mode gso_mode;
	char gso_reason[PROTO_TEXT_MAX];
	uint32_t gso_max_size;
	uint32_t gso_max_segs;
	uint32_t gso_ipv4_max_size;
	unsigned int n_channels;
	int channel_fds[PROTO_MAX_CHANNELS];
	unsigned int n_addrs;
	struct proto_addr addrs[PROTO_MAX_ADDRS];
	unsigned int n_routes;
	struct proto_route routes[PROTO_MAX_ROUTES];
	unsigned int n_neighs;
	struct proto_neigh neighs[PROTO_MAX_NEIGHS];
	bool has_face;
	struct proto_face face;
	bool has_steer_seed;
	uint32_t steer_seed;
};

struct proto_hello {
	unsigned int n_versions;
	uint8_t versions[PROTO_MAX_VERSIONS];	/* majors, any order */
	uint8_t minor;
	char software[PROTO_TEXT_MAX];
	unsigned int shards;			/* 0: not said */
};

struct proto_error {
	int err;			/* positive errno */
	char message[PROTO_TEXT_MAX];
};

/**
 * struct proto_done - the end of a configuration
 * @has_status:	@status_fd is set (minor 3)
 * @status_fd:	the status file; owned by the received message (proto_msg_free())
 */
struct proto_done {
	bool has_status;
	int status_fd;
};

/**
 * struct proto_attach - a request to netsetup serve
 * @netns_fd:	the namespace; owned by the received message (proto_msg_free())
 * @ifname:	"" for every usable link
 * @has_gso_mode: @gso_mode was given
 * @channels:	0 when not given (1)
 * @no_face:	FACE 0 was given: no container face
 * @shards:	0 when not given (1)
 */
struct proto_attach {
	int netns_fd;
	char ifname[IFNAMSIZ];
	bool has_gso_mode;
	enum proto_gso_mode gso_mode;
	unsigned int channels;
	bool no_face;
	unsigned int shards;
};

/**
 * struct proto_msg - one decoded message
 * @type:	which member of the union is valid (none for ACK)
 * @version:	major version from the header
 * @minor:	minor version from the header
 * @seq:	sequence number from the header
 */
struct proto_msg {
	enum proto_msg_type type;
	uint8_t version;
	uint8_t minor;
	uint32_t seq;
	union {
		struct proto_hello hello;
		struct proto_link link;
		struct proto_error error;
		struct proto_attach attach;
		struct proto_done done;
	};
};

/**
 * struct proto_why - why a message was refused, in words for the user
 * @err:	positive errno
 * @text:	"LINK: attribute MTU: 40 is out of range 68..65535"
 */
struct proto_why {
	int err;
	char text[PROTO_TEXT_MAX];
};

const char *proto_msg_type_name(unsigned int type);
const char *proto_gso_mode_name(unsigned int mode);
int proto_gso_mode_parse(const char *name);

/* Encoding and decoding without I/O; the fuzz target and the tests use these. */
int proto_encode(const struct proto_msg *msg, void *buf, size_t size);
int proto_decode(const void *buf, size_t len, const int *fds, unsigned int n_fds,
		 struct proto_msg **msgp, struct proto_why *why);

/* Sending; every function returns 0 or a negative errno. */
int proto_send(int sock, const struct proto_msg *msg);
int proto_send_hello(int sock, uint32_t seq, const char *software);
int proto_send_link(int sock, uint32_t seq, const struct proto_link *link);
int proto_send_done(int sock, uint32_t seq);
int proto_send_done_status(int sock, uint32_t seq, int status_fd);
int proto_send_ack(int sock, uint32_t seq);
int proto_send_error(int sock, uint32_t seq, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

int proto_send_attach(int sock, uint32_t seq, const struct proto_attach *attach);
int proto_recv(int sock, struct proto_msg **msgp, struct proto_why *why);
void proto_msg_free(struct proto_msg *msg);
void proto_fds_close(const int *fds, unsigned int n);

int proto_version_choose(const struct proto_hello *peer, struct proto_why *why);
int proto_handshake(int sock, bool initiator, const char *software, unsigned int shards,
		    uint8_t *versionp, struct proto_hello *peerp, struct proto_why *why);
int proto_expect_ack(int sock, uint32_t seq, struct proto_why *why);

#endif /* SANDNET_PROTO_H */
