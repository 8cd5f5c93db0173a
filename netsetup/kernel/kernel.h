/* SPDX-License-Identifier: MIT */
/*
 * kernel.h - netsetup's kernel area: what the orchestration and the front
 * ends call
 *
 * The kernel area is every file of netsetup that speaks to the kernel and
 * to nothing else of netsetup's: netns.c opens and enters the target network
 * namespace, privs.c drops the capabilities a stage no longer needs,
 * probe.c reads it (scrape.c: links, addresses, routes, neighbours into a
 * struct ns_net; ethtool.c the offload features; gso.c decides the GSO mode
 * of each link) and selects the links to hand over, channel.c opens the
 * AF_PACKET sockets, steer.c loads the steering program, face.c makes the
 * container face's TUN, takeover.c records in a struct ns_state what it
 * will take and takes the addresses, restore.c gives all of it back,
 * tcp_defaults.c reads the namespace's TCP sysctls. netconf.c holds the
 * calls that change the namespace in either direction (kernel_int.h: what
 * the files of this area share among themselves).
 *
 * It knows nothing of datapaths, state files or front ends: when to take
 * and when to give back is the orchestration's (orch/orch.h), which includes
 * this header; nothing here includes one of theirs.
 */
#ifndef SANDNET_NETSETUP_KERNEL_H
#define SANDNET_NETSETUP_KERNEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <net/if.h>
#include <linux/capability.h>

#include "netsetup/err.h"
#include "proto/proto.h"

/* --- netns.c --------------------------------------------------------- */

/**
 * struct ns_netns - an opened network namespace
 * @fd:		O_RDONLY fd of the nsfs file
 * @dev:	st_dev of the nsfs inode (with @ino, the namespace's identity)
 * @ino:	st_ino of the nsfs inode
 * @name:	what the user gave, for messages: "/run/netns/x" or "pid 1234"
 */
struct ns_netns {
	int fd;
	dev_t dev;
	ino_t ino;
	char name[128];
};

int ns_netns_open(const char *path, pid_t pid, bool allow_host, struct ns_netns *ns,
		  struct ns_err *e);
void ns_netns_close(struct ns_netns *ns);
int ns_netns_enter(const struct ns_netns *ns, int *orig_fdp, struct ns_err *e);
int ns_netns_leave(int orig_fd);
int ns_caps_check(bool need_net_admin, struct ns_err *e);
int ns_netns_keep(const char *from, const char *state_path, char *keep, size_t size, struct ns_err *e);
void ns_netns_keep_remove(const char *keep);

/* --- privs.c: the capabilities each stage keeps (docs/security.md) ------ */

#define NS_PRIV(cap)		(1ULL << (cap))
/* attach, run (detached too) after the namespace is open (and the datapath forked) */
#define NS_PRIVS_ATTACH		(NS_PRIV(CAP_SYS_ADMIN) | NS_PRIV(CAP_NET_ADMIN) | NS_PRIV(CAP_NET_RAW) | \
				 NS_PRIV(CAP_KILL))
/* run after the handoff, inside the namespace: signals to the datapath, giving back */
#define NS_PRIVS_RUN_WAIT	(NS_PRIV(CAP_NET_ADMIN) | NS_PRIV(CAP_KILL))
/* detach after the namespace is open: enter it, give back, unmount serve's bind mount */
#define NS_PRIVS_DETACH		(NS_PRIV(CAP_SYS_ADMIN) | NS_PRIV(CAP_NET_ADMIN) | NS_PRIV(CAP_KILL))
/* gso show after the namespace is open: enter it and return */
#define NS_PRIVS_GSO_SHOW	NS_PRIV(CAP_SYS_ADMIN)
/* serve once listening: its workers attach, bind-mount, find namespaces through a datapath's fds, stop datapaths */
#define NS_PRIVS_SERVE		(NS_PRIVS_ATTACH | NS_PRIV(CAP_SYS_PTRACE))
/* a serve worker once attached: waits, then gives back (no new AF_PACKET socket) */
#define NS_PRIVS_SERVE_WATCH	(NS_PRIVS_SERVE & ~NS_PRIV(CAP_NET_RAW))

int ns_privs_keep(uint64_t keep, const char *stage, struct ns_err *e);

/* --- ethtool.c -------------------------------------------------------- */

/* The offload features netsetup reports, by ethtool's (legacy) names. */
enum ns_feature {
	NS_FEAT_TX_CSUM,	/* tx-checksumming */
	NS_FEAT_SG,		/* scatter-gather */
	NS_FEAT_TSO,		/* tcp-segmentation-offload */
	NS_FEAT_GSO,		/* generic-segmentation-offload */
	NS_FEAT_GRO,		/* generic-receive-offload */
	NS_FEAT_TX_UDP_SEG,	/* tx-udp-segmentation */
	NS_FEAT_MAX
};

extern const char *const ns_feature_names[NS_FEAT_MAX];

/**
 * struct ns_features - offload state of one link
 * @known:	the features were read (netlink or ioctl)
 * @on:		per enum ns_feature; a group counts as on when any member is
 * @tcp_tso:	tx-tcp-segmentation or tx-tcp6-segmentation itself is on; the
 *		group can be on for tx-tcp-accecn-segmentation alone, which
 *		plain TCP does not use, so the GSO decision looks at this
 * @source:	"netlink" or "ioctl"
 */
struct ns_features {
	bool known;
	bool on[NS_FEAT_MAX];
	bool tcp_tso;
	const char *source;
};

/* --- scrape.c --------------------------------------------------------- */

/**
 * struct ns_addr - one address as the kernel had it
 * @ifindex:	link it sits on
 * @a:		what the datapath needs
 * @has_peer:	IFA_ADDRESS differs from IFA_LOCAL (point-to-point)
 * @peer:	that peer address, with the same prefix length
 * @has_broadcast: IPv4 IFA_BROADCAST was set (`ip addr add ... brd +`)
 * @broadcast:	that broadcast address
 * @valid_lft:	seconds, 0xffffffff = forever
 * @preferred_lft: seconds, 0xffffffff = forever
 * @label:	IPv4 label, "" when none
 */
struct ns_addr {
	int ifindex;
	struct proto_addr a;
	bool has_peer;
	union proto_inaddr peer;
	bool has_broadcast;
	union proto_inaddr broadcast;
	uint32_t valid_lft;
	uint32_t preferred_lft;
	char label[IFNAMSIZ];
};

/**
 * struct ns_route - one main-table route with one nexthop
 * @ifindex:	nexthop's link
 * @r:		what the datapath needs
 * @table:	RT_TABLE_MAIN
 * @protocol:	RTPROT_*
 * @scope:	RT_SCOPE_*
 * @type:	RTN_*
 * @has_prefsrc: @prefsrc is set
 */
struct ns_route {
	int ifindex;
	struct proto_route r;
	uint32_t table;
	uint8_t protocol;
	uint8_t scope;
	uint8_t type;
	bool has_prefsrc;
	union proto_inaddr prefsrc;
	uint32_t initcwnd;	/* RTAX_INITCWND, 0 = none */
};

struct ns_neigh {
	int ifindex;
	struct proto_neigh n;
};

/**
 * struct ns_link - one link and what netsetup decided about it
 * @skip:	why attach leaves it alone ("loopback", "down"); "" if usable
 * @mode:	GSO mode attach uses (or would use)
 * @mode_refused: the requested mode cannot be honoured; @reason says why
 * @reason:	why @mode, in words
 * @frame_max_bytes: largest frame the datapath may build on it
 * @frame_max_ipv4_bytes: the same for IPv4 TCP frames: over 64 KiB (BIG TCP)
 *		in hw mode when the link's gso_max_size and gso_ipv4_max_size allow
 */
struct ns_link {
	int ifindex;
	char ifname[IFNAMSIZ];
	uint8_t mac[6];
	bool has_mac;
	uint32_t mtu;
	uint32_t flags;
	uint8_t operstate;
	bool loopback;
	uint32_t gso_max_size;
	uint32_t gso_ipv4_max_size;
	uint32_t gso_max_segs;
	uint32_t tso_max_size;
	uint32_t gro_max_size;
	struct ns_features feat;
	char skip[64];
	bool selected;
	enum proto_gso_mode mode;
	bool mode_refused;
	char reason[PROTO_TEXT_MAX];
	uint32_t frame_max_bytes;
	uint32_t frame_max_ipv4_bytes;
};

/**
 * struct ns_net - everything scraped from one netns
 */
struct ns_net {
	unsigned int n_links;
	struct ns_link *links;
	unsigned int n_addrs;
	struct ns_addr *addrs;
	unsigned int n_routes;
	struct ns_route *routes;
	unsigned int n_neighs;
	struct ns_neigh *neighs;
	unsigned int n_routes_skipped;	/* multipath or other tables' kinds we cannot serve */
};

struct nl_sock;
int ns_nl_open(struct nl_sock **skp, struct ns_err *e);
void ns_net_free(struct ns_net *net);
struct ns_link *ns_net_link(struct ns_net *net, const char *ifname);
const char *ns_operstate_name(uint8_t operstate);

/* --- gso.c ------------------------------------------------------------ */

enum ns_gso_request {
	NS_GSO_AUTO,
	NS_GSO_HW,
	NS_GSO_SW,
	NS_GSO_OFF,
	NS_GSO_REQUEST_MAX
};

extern const char *const ns_gso_request_names[NS_GSO_REQUEST_MAX];

int ns_gso_request_parse(const char *s);

/* --- probe.c --------------------------------------------------------- */

int ns_probe(struct nl_sock *sk, struct ns_net *net, enum ns_gso_request req,
	     uint32_t user_max_bytes, struct ns_err *e);
int ns_select(struct ns_net *net, const char *const *ifaces, unsigned int n_ifaces,
	      const char *nsname, struct ns_err *e);

/* --- channel.c -------------------------------------------------------- */

int ns_channel_open(const struct ns_link *link, unsigned int n, int steer_fd, int *fds, struct ns_err *e);
void ns_channel_close(int *fds, unsigned int n);

/* --- steer.c ---------------------------------------------------------- */

#define NS_MAX_SHARDS	64

int ns_steer_load(uint32_t seed, unsigned int n_shards, struct ns_err *e);
int ns_steer_tun(int tun_fd, int prog_fd, struct ns_err *e);

/* --- takeover.c: what attach takes away, enough to give it all back ---- */

/**
 * struct ns_state_link - per-link settings attach changed
 * @addr_gen_mode: /proc/sys/net/ipv6/conf/IF/addr_gen_mode before, -1 absent
 * @accept_ra:	likewise
 * @autoconf:	likewise
 * @face:	the link has a container face (face.c): its TUN @face_tun, the
 *		nftables table netdev sandnet_IFINDEX, and disable_ipv6 set
 * @disable_ipv6: its value before, -1 absent
 */
struct ns_state_link {
	int ifindex;
	char ifname[IFNAMSIZ];
	int addr_gen_mode;
	int accept_ra;
	int autoconf;
	bool face;
	char face_tun[IFNAMSIZ];
	int disable_ipv6;
};

#define NS_OWNER_MAX		192	/* "cni:CONTAINERID:IFNAME", "oci:ID", "serve:..." */

/**
 * struct ns_state - what attach took away, enough to give it all back (the
 * orchestration keeps it in the namespace's state file, orch/state.c, with
 * what it records beside: @datapath_pid, @datapath_start, @owner and
 * @netns_path, which nothing in this area reads)
 * @datapath_pid: a datapath that outlives the command that started it (CNI,
 *		OCI hook, serve); 0 when none is recorded
 * @datapath_start: its start time (/proc/PID/stat field 22), so that a
 *		recycled pid is never mistaken for it
 * @owner:	who attached, to find the state again without the namespace
 *		("cni:ID:IFNAME", "oci:ID"); "" when not recorded
 * @netns_path:	a persistent path of the namespace ("" when attached by pid)
 */
struct ns_state {
	uint64_t dev;
	uint64_t ino;
	pid_t datapath_pid;
	unsigned long long datapath_start;
	char owner[NS_OWNER_MAX];
	char netns_path[256];
	unsigned int n_links;
	struct ns_state_link *links;
	unsigned int n_addrs;
	struct ns_addr *addrs;
	unsigned int n_routes;
	struct ns_route *routes;
};

int ns_takeover_prepare(const struct ns_net *net, const struct ns_netns *ns,
			struct ns_state *st, struct ns_err *e);
int ns_takeover(struct nl_sock *sk, const struct ns_state *st, struct ns_err *e);
void ns_state_free(struct ns_state *st);

/* --- restore.c: everything a takeover and the face changed, undone ----- */

int ns_restore(struct nl_sock *sk, const struct ns_state *st, struct ns_err *e);

/* --- face.c: the container face ---------------------------------------- */

#define NS_FACE_PREFIX		"sn-"

/**
 * struct ns_face - one link's container face while attach runs
 * @fd:		the TUN (IFF_TUN | IFF_NO_PI | IFF_VNET_HDR), -1 when none
 * @name:	"sn-" + the link's name
 * @ifindex:	its index in the namespace
 * @mtu:	the link's MTU, which it gets
 * @offloads:	the TUN_F_* flags TUNSETOFFLOAD accepted
 */
struct ns_face {
	unsigned int n_fds;		/* queues open; 0: none */
	int fds[PROTO_MAX_CHANNELS];	/* one per queue (shard) */
	unsigned int n_netstat;		/* 0, or PROTO_FACE_NETSTAT_FDS: */
	int netstat_fds[PROTO_FACE_NETSTAT_FDS];	/* the netns's /proc/net snmp, snmp6, dev */
	char name[IFNAMSIZ];
	int ifindex;
	uint32_t mtu;
	uint32_t offloads;
};

int ns_face_open(const struct ns_link *l, unsigned int queues, struct ns_face *fc, struct ns_err *e);
void ns_face_close(struct ns_face *fc);
void ns_face_prepare(struct ns_state_link *sl, const struct ns_face *fc);
int ns_face_setup(struct nl_sock *sk, const struct ns_state *st, const struct ns_state_link *sl,
		  const struct ns_face *fc, struct ns_err *e);

/* --- tcp_defaults.c: the namespace's TCP sysctls as datapath options --- */

/**
 * struct ns_tcp_defaults - --tcp-cc and --tcp-ecn values for the datapath
 * @cc:		"cubic", "reno" or "bbr"
 * @ecn:	"off", "accept" or "on"
 * @note:	non-empty when the namespace's choice had to change, in words
 */
struct ns_tcp_defaults {
	const char *cc;
	const char *ecn;
	char note[160];
};

void ns_tcp_defaults_map(const char *cc, int ecn, struct ns_tcp_defaults *d);
void ns_tcp_defaults_read(struct ns_tcp_defaults *d);

#endif /* SANDNET_NETSETUP_KERNEL_H */
