/* SPDX-License-Identifier: MIT */
/*
 * kernel_int.h - what the files of netsetup's kernel area share among
 * themselves, and no other area needs (kernel.h is what they do need)
 *
 * probe.c drives scrape.c, ethtool.c and gso.c; face.c, takeover.c and
 * restore.c change the namespace through netconf.c's calls; channel.c joins
 * its fanout group to steer.c's program. The unit tests reach in here too.
 */
#ifndef SANDNET_NETSETUP_KERNEL_INT_H
#define SANDNET_NETSETUP_KERNEL_INT_H

#include "netsetup/kernel/kernel.h"

#define NS_CHANNEL_BUF_BYTES	(16 << 20)	/* SO_SNDBUFFORCE / SO_RCVBUFFORCE (channel.c) */
#define NS_FACE_TXQLEN		2048	/* the TUN's transmit queue, packets (face.c) */
#define NS_FACE_INITCWND	128	/* the TUN's routes' initial window, segments (face.c) */
#define NS_FRAME_MAX_BYTES	65535	/* largest frame the datapath may build (docs/gso.md) */
/* largest IPv4 BIG TCP frame: the kernel's GSO_MAX_SIZE */
#define NS_BIG_FRAME_MAX_BYTES	524280

/* --- ethtool.c -------------------------------------------------------- */

int ns_feature_of_kernel_name(const char *name);
int ns_ethtool_features(int ifindex, const char *ifname, struct ns_features *f, struct ns_err *e);

/* --- scrape.c --------------------------------------------------------- */

int ns_scrape(struct nl_sock *sk, struct ns_net *net, struct ns_err *e);
int ns_scrape_routes(struct nl_sock *sk, int ifindex, struct ns_route **routesp,
		     unsigned int *np, struct ns_err *e);

/* --- gso.c ------------------------------------------------------------ */

int ns_gso_decide(struct ns_link *link, enum ns_gso_request req, uint32_t user_max_bytes);

/* --- steer.c ---------------------------------------------------------- */

int ns_steer_fanout(int sock_fd, int prog_fd, struct ns_err *e);

/* --- face.c ------------------------------------------------------------ */

void ns_face_name(const char *ifname, char *out);
void ns_face_table(int ifindex, char *buf, size_t size);

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

#endif /* SANDNET_NETSETUP_KERNEL_INT_H */
