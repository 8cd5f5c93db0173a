/* SPDX-License-Identifier: MIT */
/*
 * netsetup.h - what the files of netsetup share
 *
 * netsetup is a short pipeline: netns.c opens and enters the target network
 * namespace, scrape.c reads its links/addresses/routes/neighbours into a
 * struct ns_net, ethtool.c adds the offload features, gso.c decides the GSO
 * mode of each link, channel.c opens the AF_PACKET sockets, takeover.c removes
 * the addresses (saving them with state.c first), handoff.c sends everything
 * to the datapath; giveback.c gives it all back, the one way it goes back.
 * netconf.c holds the calls that change the namespace in either direction. cmd_*.c glue the steps into the
 * subcommands; opts.c parses the command line; common/out.c prints text or
 * JSON through one code path, the same printer as the datapath's.
 *
 * Every function returns 0 (or a count) on success or a negative errno, and
 * writes what went wrong, in words, to the struct ns_err it was given, so that
 * main() prints one message a user can act on.
 */
#ifndef SANDNET_NETSETUP_H
#define SANDNET_NETSETUP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <net/if.h>
#include <linux/capability.h>

#include "common/out.h"
#include "proto/proto.h"
#include "proto/status.h"

#define NS_SOFTWARE		"sandnet-netsetup " SANDNET_VERSION
#define NS_STATE_DIR		"/run/sandnet"
#define NS_ERR_MAX		512
#define NS_MAX_IFACES		32	/* --iface options */
#define NS_CHANNEL_BUF_BYTES	(16 << 20)	/* SO_SNDBUFFORCE / SO_RCVBUFFORCE (channel.c) */
#define NS_FACE_TXQLEN		2048	/* the TUN's transmit queue, packets (face.c) */
#define NS_FACE_INITCWND	128	/* the TUN's routes' initial window, segments (face.c) */
#define NS_FRAME_MAX_BYTES	65535	/* largest frame the datapath may build (docs/gso.md) */
/* largest IPv4 BIG TCP frame: the kernel's GSO_MAX_SIZE */
#define NS_BIG_FRAME_MAX_BYTES	524280
#define NS_DATAPATH_TIMEOUT_S	30	/* longest wait for one datapath answer */

/**
 * struct ns_err - the message main() prints when a step fails
 * @text:	"netns /run/netns/x: not a network namespace file"
 * @usage:	the command line was malformed (exit status 2, not 1)
 */
struct ns_err {
	char text[NS_ERR_MAX];
	bool usage;
};

void ns_err_set(struct ns_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ns_err_usage(struct ns_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ns_version_print(FILE *f, const char *prog);

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

int ns_feature_of_kernel_name(const char *name);
int ns_ethtool_features(int ifindex, const char *ifname, struct ns_features *f, struct ns_err *e);

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
int ns_scrape(struct nl_sock *sk, struct ns_net *net, struct ns_err *e);
int ns_scrape_routes(struct nl_sock *sk, int ifindex, struct ns_route **routesp,
		     unsigned int *np, struct ns_err *e);
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
int ns_gso_decide(struct ns_link *link, enum ns_gso_request req, uint32_t user_max_bytes);

/* --- channel.c -------------------------------------------------------- */

int ns_channel_open(const struct ns_link *link, unsigned int n, int steer_fd, int *fds, struct ns_err *e);
void ns_channel_close(int *fds, unsigned int n);

/* --- state.c ---------------------------------------------------------- */

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
 * struct ns_state - what attach took away, enough to give it all back
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

const char *ns_state_dir(void);
int ns_state_path(uint64_t dev, uint64_t ino, char *buf, size_t size);
int ns_state_write(const char *path, const struct ns_state *st, struct ns_err *e);
int ns_state_read(const char *path, struct ns_state *st, struct ns_err *e);
int ns_state_format(FILE *f, const struct ns_state *st);
int ns_state_parse(FILE *f, struct ns_state *st, struct ns_err *e);
void ns_state_free(struct ns_state *st);

/* --- netconf.c: sysctls, addresses, routes, nftables, one call each --- */

struct rtnl_addr;
int ns_sysctl6_read(const char *ifname, const char *key);
int ns_sysctl6_write(const char *ifname, const char *key, int val, struct ns_err *e);
struct rtnl_addr *ns_addr_build(const struct ns_addr *ad);
void ns_addr_name(const struct ns_addr *ad, char *buf, size_t size);
const char *ns_state_ifname(const struct ns_state *st, int ifindex);
int ns_addr_add(struct nl_sock *sk, const struct ns_state *st, const struct ns_addr *ad, struct ns_err *e);
int ns_routes_set(struct nl_sock *sk, const struct ns_state *st, int ifindex, struct ns_err *e);
int ns_addrs_copy(struct nl_sock *sk, const struct ns_state *st, int from, int to, const char *to_name,
		  struct ns_err *e);
int ns_routes_copy(struct nl_sock *sk, const struct ns_state *st, int from, int to, const char *to_name,
		   uint32_t initcwnd, struct ns_err *e);
bool ns_link_gone(const struct ns_state_link *sl);
int ns_nft_run(const char *cmd, const char *ifname, const char *what, struct ns_err *e);

/* --- takeover.c ------------------------------------------------------- */

int ns_takeover_prepare(const struct ns_net *net, const struct ns_netns *ns,
			struct ns_state *st, struct ns_err *e);
int ns_takeover(struct nl_sock *sk, const struct ns_state *st, struct ns_err *e);

/* --- giveback.c: the one way a namespace goes back to its kernel ------- */

int ns_restore(struct nl_sock *sk, const struct ns_state *st, struct ns_err *e);
int ns_give_back(const char *path, struct ns_state *st, const char *netns_path, bool stop,
		 struct ns_err *e);
void ns_state_files_remove(const char *path);

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

void ns_face_name(const char *ifname, char *out);
int ns_face_open(const struct ns_link *l, unsigned int queues, struct ns_face *fc, struct ns_err *e);
void ns_face_close(struct ns_face *fc);
void ns_face_prepare(struct ns_state_link *sl, const struct ns_face *fc);
int ns_face_setup(struct nl_sock *sk, const struct ns_state *st, const struct ns_state_link *sl,
		  const struct ns_face *fc, struct ns_err *e);
void ns_face_table(int ifindex, char *buf, size_t size);

/* --- steer.c ---------------------------------------------------------- */

#define NS_MAX_SHARDS	64

int ns_steer_load(uint32_t seed, unsigned int n_shards, struct ns_err *e);
int ns_steer_tun(int tun_fd, int prog_fd, struct ns_err *e);
int ns_steer_fanout(int sock_fd, int prog_fd, struct ns_err *e);

/* --- handoff.c -------------------------------------------------------- */

int ns_handoff_connect(const char *path, int *sockp, struct ns_err *e);
int ns_handoff_hello(int sock, bool face, uint8_t *minorp, unsigned int *shardsp, struct ns_err *e);
int ns_handoff_links(int sock, const struct ns_net *net, int *const *fds,
		     unsigned int n_channels, const struct ns_face *faces, int status_fd, const uint32_t *steer_seed,
		     struct ns_err *e);
int ns_link_to_proto(const struct ns_net *net, const struct ns_link *link,
		     struct proto_link *pl, struct ns_err *e);

/* --- opts.c ----------------------------------------------------------- */

enum ns_cmd {
	NS_CMD_NONE,
	NS_CMD_GSO_SHOW,
	NS_CMD_ATTACH,
	NS_CMD_RUN,
	NS_CMD_DETACH,
	NS_CMD_RESTART,
	NS_CMD_HELP,
	NS_CMD_MAX
};

/**
 * struct ns_opts - the parsed command line
 * @child_argv: run: DATAPATH and its ARGS, NULL-terminated (points into argv)
 */
struct ns_opts {
	enum ns_cmd cmd;
	const char *netns_path;
	pid_t pid;
	bool json;
	bool all;			/* restart --all: every attached namespace */
	const char *show_iface;
	const char *datapath;
	const char *datapath_hint;	/* run: how to name another datapath, for messages (dpexec.c) */
	enum ns_gso_request gso;
	uint32_t gso_max_bytes;		/* 0: the link's own limit */
	unsigned int channels;
	unsigned int shards;		/* 0: the datapath's word (HELLO); 1: one; more: steered (steer.c) */
	unsigned int n_ifaces;
	const char *ifaces[NS_MAX_IFACES];
	const char *user;
	bool no_face;			/* --face off: the container stays dark (docs/netsetup.md) */
	char **child_argv;
	/* Set by the CNI plugin, the OCI hook and serve, never by the command line: */
	bool detach_child;		/* run: the datapath outlives us (own session, stdio to a log) */
	const char *owner;		/* recorded in the state file */
	pid_t *child_pidp;		/* receives the datapath's pid when detach_child */
	bool use_sock;			/* attach: @sock is the datapath, already connected */
	int sock;
	pid_t datapath_pid;		/* attach: recorded in the state as the datapath */
	unsigned int max_shards;	/* serve: the most the datapath's HELLO may get (0: 64) */
};

int ns_shards_parse(const char *what, const char *arg, unsigned int *out, struct ns_err *e);
int ns_shards_check(const struct ns_opts *o, const char *channels, const char *shards, struct ns_err *e);
int ns_opts_parse(int argc, char **argv, struct ns_opts *o, struct ns_err *e);
int ns_face_parse(const char *s, bool *no_face);
int ns_policy_item_parse(const char *item, const char **flag, const char **rule);
int ns_tcp_setting_check(const char *what, const char *opt, const char *val, struct ns_err *e);
#define NS_POLICY_ITEM_FORMS	"egress-allow=RULE, egress-deny=RULE, ingress-allow=RULE or ingress-deny=RULE"
extern const char ns_usage[];

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

/* --- probe.c --------------------------------------------------------- */

int ns_probe(struct nl_sock *sk, struct ns_net *net, enum ns_gso_request req,
	     uint32_t user_max_bytes, struct ns_err *e);
int ns_select(struct ns_net *net, const char *const *ifaces, unsigned int n_ifaces,
	      const char *nsname, struct ns_err *e);

/* --- cmd_*.c ---------------------------------------------------------- */

int ns_cmd_gso_show(const struct ns_opts *o, FILE *out, struct ns_err *e);
int ns_cmd_attach(const struct ns_opts *o, struct ns_err *e);
int ns_cmd_detach(const struct ns_opts *o, struct ns_err *e);
int ns_attached_open(const struct ns_opts *o, uint64_t keep, const char *stage, struct ns_netns *ns,
		     char *path, size_t size, struct ns_state *st, struct ns_err *e);
int ns_cmd_restart(const struct ns_opts *o, struct ns_err *e);

/* --- conf.c: "key = value" configuration files ------------------------ */

int ns_conf_next(FILE *f, const char *name, char *line, size_t size, unsigned int *lineno, char **key,
		 char **val, struct ns_err *e);

/* --- dpexec.c: find the datapath program ----------------------------- */

int ns_datapath_find(const char *name, const char *hint, char *path, size_t size, struct ns_err *e);

/* --- dpproc.c: datapaths that outlive the command that started them --- */

int ns_proc_start_time(pid_t pid, unsigned long long *ticksp);
bool ns_datapath_alive(const struct ns_state *st);
int ns_datapath_stop(const struct ns_state *st, unsigned int timeout_ms);
int ns_datapath_netns_fd(const struct ns_state *st);

int ns_status_path(const char *state_path, char *buf, size_t size);
int ns_status_open(const char *state_path, struct ns_err *e);
int ns_status_read(const char *state_path, struct proto_status *s);
int ns_state_find_owner(const char *owner, char *path, size_t size, struct ns_state *st,
			struct ns_err *e);

/* --- cni.c, oci.c, serve.c, connect.c: the runtime entry points -------- */

bool ns_cni_mode(int argc, char **argv);
int ns_cni_main(FILE *in, FILE *out);
bool ns_runtime_mode(const char *argv0);
int ns_runtime_main(int argc, char **argv);
int ns_oci_main(int argc, char **argv, FILE *in, struct ns_err *e);
int ns_oci_check(int argc, char **argv, FILE *in, struct ns_err *e);
int ns_serve_main(int argc, char **argv, struct ns_err *e);
int ns_connect_main(int argc, char **argv, struct ns_err *e);
extern const char ns_serve_usage[];

#define NS_RUNTIME_MAX_POLICY	32

/**
 * struct ns_runtime - sandnet-runtime's reading of its command line and configuration (runtime.c)
 * @runtime:	the real runtime named by --runtime, $SANDNET_RUNTIME or the file; NULL: runc, then crun
 * @cmd:	the command word ("create", "state", ...), "" when there is none
 * @bundle:	create and run: the bundle folder ("." when not given)
 * @log:	--log FILE of the caller, where refusals go too; @log_format its --log-format
 * @argv:	the real runtime's arguments, ours removed; argv[0] is set before the exec
 * @policy:	policy items (egress-deny=RULE, ...) every container gets first
 * @conf_text:	the configuration file's values, which @runtime and @policy point into
 */
struct ns_runtime {
	const char *runtime;
	const char *cmd;
	const char *bundle;
	const char *log, *log_format;
	char **argv;
	int argc;
	unsigned int n_policy;
	const char *policy[NS_RUNTIME_MAX_POLICY];
	unsigned int n_conf;
	char *conf_text[NS_RUNTIME_MAX_POLICY + 1];
};

int ns_runtime_parse(int argc, char **argv, struct ns_runtime *rt, struct ns_err *e);
int ns_runtime_conf(FILE *f, const char *name, struct ns_runtime *rt, struct ns_err *e);
int ns_runtime_inject(const char *config, const struct ns_runtime *rt, const char *netsetup, char *why,
		      size_t why_len, struct ns_err *e);
void ns_runtime_free(struct ns_runtime *rt);

#define NS_SERVE_MAX_IDS	64
#define NS_SERVE_SOCKET		"/run/sandnet/netsetup.sock"

/**
 * struct ns_serve_conf - what `netsetup serve` allows (serve_conf.c, docs/runtime.md)
 * @uids:	peers (SO_PEERCRED) with one of these uids may attach
 * @gids:	... or with one of these primary gids
 * @ifaces:	links a request may name; no entry: any
 * @gso_allowed: per enum proto_gso_mode, a request may ask for it
 * @gso_auto_allowed: a request may leave the mode to netsetup
 * @max_channels: largest channel count a request may ask for
 * @max_clients: requests and attachments served at once
 * @keep_dark:	when a datapath dies without being stopped, keep its
 *		namespace dark (the default) instead of giving it back
 *		(on_datapath_exit = restore)
 * @request_timeout_s: how long a client may take to send its request
 */
struct ns_serve_conf {
	unsigned int n_uids;
	uid_t uids[NS_SERVE_MAX_IDS];
	unsigned int n_gids;
	gid_t gids[NS_SERVE_MAX_IDS];
	unsigned int n_ifaces;
	char ifaces[NS_MAX_IFACES][IFNAMSIZ];
	bool gso_allowed[PROTO_GSO_MODE_MAX];
	bool gso_auto_allowed;
	unsigned int max_channels;
	unsigned int max_clients;
	bool keep_dark;
	unsigned int request_timeout_s;
};

struct ucred;
void ns_serve_conf_default(struct ns_serve_conf *c);
int ns_serve_conf_parse(FILE *f, const char *name, struct ns_serve_conf *c, struct ns_err *e);
int ns_serve_authorize(const struct ns_serve_conf *c, const struct ucred *cred,
		       const struct proto_attach *req, struct ns_err *e);

#endif /* SANDNET_NETSETUP_H */
