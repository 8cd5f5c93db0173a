/* SPDX-License-Identifier: MIT */
/*
 * net.h - the network layer of the datapath: struct stack and the entry points
 * of each protocol file in datapath/net/
 *
 * Receive goes up: link -> eth_input() -> arp_input() | ipv4_input() |
 * ipv6_input() -> icmp/icmpv6/udp input. A packet handed to an input
 * function is borrowed: the caller (the link) reuses it after the call, so a
 * layer that keeps bytes (reassembly, a reply) copies them.
 * Transmit goes down: udp_sendto() / icmp -> ipv4_output() | ipv6_output()
 * -> neigh_output() -> eth_output() -> link_output(). A packet handed to an
 * output function is given: that function sends it, queues it, or frees it
 * and counts the drop, and never fails silently.
 */
#ifndef SANDNET_DATAPATH_NET_H
#define SANDNET_DATAPATH_NET_H

#include <linux/if_ether.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "datapath/addr.h"
#include "datapath/counters.h"
#include "datapath/flow.h"
#include "datapath/link/link.h"
#include "datapath/loop.h"
#include "datapath/pkt.h"
#include "datapath/wire/csum.h"
#include "datapath/wire/proto_hdr.h"
#include "proto/proto.h"



struct route {
	uint8_t family;
	uint8_t dst_len;
	bool has_gateway;
	uint32_t metric;
	union proto_inaddr dst;
	union proto_inaddr gateway;
	struct link *link;
};

#define ROUTE_MAX	(PROTO_MAX_ROUTES * 2)
#define NEIGH_MAX	512
#define NEIGH_PENDING_MAX	16	/* packets waiting for one resolution */

enum neigh_state {
	NEIGH_INCOMPLETE,	/* solicited, no answer yet; packets queue */
	NEIGH_REACHABLE,	/* confirmed recently */
	NEIGH_STALE,		/* old: used, and re-probed on use */
	NEIGH_PERMANENT,	/* from netsetup's configuration */
	NEIGH_STATE_MAX
};

struct neigh {
	bool used;
	uint8_t family;
	enum neigh_state state;
	union proto_inaddr addr;
	uint8_t mac[6];
	struct link *link;
	uint64_t confirmed_ms;
	uint64_t probe_ms;		/* last solicitation sent */
	unsigned int probes;		/* solicitations without an answer */
	struct pkt *pending, *pending_tail;
	unsigned int n_pending;
};

struct udp_sock;
struct ip_reasm;
struct tcp_glue;
struct policy;
struct ledger;
struct flowlog;
struct tcp_stack;

/**
 * enum stack_turn_phase - the end of a loop turn, in order (stack_turn_end())
 * @STACK_TURN_HAND_DOWN: the layers above hand down what they batched during
 *			the turn (the UDP services' runs, the inner side's
 *			pump); @links_idle is false
 * @STACK_TURN_FLUSHED:	every link was flushed and the stack's own TCP engine
 *			ran its turn end: other engines free retired memory
 *			and arm their timers; @links_idle: no link holds a
 *			borrowed frame
 */
enum stack_turn_phase {
	STACK_TURN_HAND_DOWN,
	STACK_TURN_FLUSHED,
	STACK_TURN_PHASES,
};

/* Work a layer above does in one phase of the turn end, in the order registered. */
typedef void (*stack_turn_fn)(void *ctx, bool links_idle);
#define STACK_MAX_TURN_FNS	6

typedef void (*stack_neigh_fn)(void *ctx, const struct link *l, uint8_t family, const union proto_inaddr *addr,
			       const uint8_t *mac, bool confirmed);

/**
 * struct stack_upper_ops - what a layer above registers for what is not the
 * stack's own (stack_set_upper(); the inner side of the datapath does)
 * @udp_input:	a datagram to one of our addresses that no socket of the
 *		stack holds: true if the layer took it (else port unreachable)
 * @icmp_input:	an echo reply, or an ICMP/ICMPv6 error (the stack's TCP saw
 *		the error first); @p at the ICMP header, borrowed
 * @echo_refused: an echo request to us: true if the layer refused it (it is
 *		then not answered)
 * @free:	the stack is going (stack_fini()): free the layer
 */
struct stack_upper_ops {
	bool (*udp_input)(void *ctx, const struct net_addr *src, uint16_t sport, const struct net_addr *dst,
			  uint16_t dport, const uint8_t *data, size_t len);
	void (*icmp_input)(void *ctx, uint8_t family, const struct pkt *p, const struct net_addr *src,
			   const struct net_addr *dst);
	bool (*echo_refused)(void *ctx, uint8_t family, const struct pkt *p, const struct net_addr *src,
			     const struct net_addr *dst);
	void (*free)(void *ctx);
};

/**
 * struct stack_limits - the resource caps (datapath options, docs/security.md)
 * @max_conns:		TCP connections in all states (0 = 65536)
 * @max_half_open:	SYN-RECEIVED connections of all listeners (0 = 1024)
 * @max_timewait:	TIME-WAIT connections (0 = 4096)
 * @tcp_mem:		bytes of TCP send and receive rings in all (0 = 256 MiB)
 * @reasm_mem:		bytes of fragments held for reassembly (0 = 4 MiB)
 * @neigh_max:		neighbour entries, at most NEIGH_MAX (0 = NEIGH_MAX)
 * @udp_flows:		UDP service flows in all (0 = 4096; svc_udp_flow.c)
 * @udp_flows_per_source: UDP publish flows per source address per service
 *			(0 = 256, UINT32_MAX = no per-source cap)
 * @icmp_rate:		ICMP errors a second (0 = STACK_ICMP_RATE_DEFAULT)
 * All zero (a stack_init()ed stack) means the defaults; limits_apply()
 * stores the effective values.
 */
struct stack_limits {
	uint32_t max_conns;
	uint32_t max_half_open;
	uint32_t max_timewait;
	uint64_t tcp_mem;
	uint64_t reasm_mem;
	uint32_t neigh_max;
	uint32_t udp_flows;
	uint32_t udp_flows_per_source;
	uint32_t icmp_rate;
};

#define STACK_ICMP_RATE_DEFAULT	1000	/* ICMP errors a second, as Linux's icmp_msgs_per_sec */

/**
 * struct stack_tcp_settings - how the stack's own TCP connections (the
 * network side's) behave: --tcp-cc, --tcp-ecn, --tcp-pacing
 * @cc:		enum tcp_cc_algo of every link
 * @ecn:	enum tcp_ecn_mode of every link
 * @no_pacing:	send as cwnd allows (BBR paces anyway)
 * @n_links, @link: what one link, by name, has instead
 */
struct stack_tcp_settings {
	uint8_t cc;
	uint8_t ecn;
	bool no_pacing;
	unsigned int n_links;
	struct {
		char name[16];
		int16_t cc;	/* -1: as every link */
		int16_t ecn;
	} link[PROTO_MAX_LINKS];
};

/**
 * struct stack - everything the network layer knows
 * @loop:	the loop (time, timers)
 * @links:	the links netsetup gave us (the outer links: routes, addresses)
 * @inner:	the inner links a layer above added (stack_add_inner_link()),
 *		flushed with the others
 * @routes:	IPv4 and IPv6 routes, scraped plus connected ones
 * @neigh:	ARP and NDP cache in one table
 * @udp:	UDP sockets, hashed by local port
 * @reasm:	IPv4 and IPv6 reassembly state
 * @ctr:	protocol counters (counters.h)
 * @drop:	drops by reason (counters.h)
 */
struct stack {
	struct loop *loop;
	unsigned int n_links;
	struct link *links[PROTO_MAX_LINKS];
	unsigned int n_inner;
	struct link *inner[PROTO_MAX_LINKS];
	const struct stack_upper_ops *upper;	/* stack_set_upper(), or NULL */
	void *upper_ctx;
	struct policy *policy;		/* what goes in and out (policy.c), or NULL */
	unsigned int n_turn_fns;
	struct {
		enum stack_turn_phase phase;
		stack_turn_fn fn;
		void *ctx;
	} turn_fns[STACK_MAX_TURN_FNS];
	unsigned int n_routes;
	struct route routes[ROUTE_MAX];
	struct neigh neigh[NEIGH_MAX];
	unsigned int neigh_hi;		/* slots at and above it are free (neigh.c) */
	size_t neigh_pending_bytes;
	struct flow_table *flows;	/* the face's and the services' flows (flow.c) */
	struct udp_sock **udp_hash;
	unsigned int n_udp;
	uint16_t udp_next_port;
	struct ip_reasm *reasm;
	struct tcp_glue *tcp;		/* TCP engine and its adapter (tcp_glue.c) */
	uint16_t ipv4_id;
	uint32_t ipv6_frag_id;
	double icmp_tokens;
	uint64_t icmp_tokens_ms;
	double icmp_rate, icmp_burst;	/* the bucket (stack_set_icmp_rate()) */
	struct loop_timer housekeeping;	/* ticks while a table has work (stack.c) */
	bool started;
	uint64_t ctr[CTR_MAX];
	uint64_t drop[DROP_MAX];
	struct stack_limits limits;	/* caps; zero = default (config.c) */
	struct stack_tcp_settings tcp_settings;	/* the network side's TCP (tcp_glue.c) */
	bool has_secret;		/* @secret keys the TCP engines (stack_set_secret()) */
	uint8_t secret[32];
	struct ledger *ledger;		/* the supervisor's ledger (datapath/ledger.c), or NULL */
	struct flowlog *flowlog;	/* where the face's conversations end up (datapath/flowlog.c), or NULL */
	/* What neigh_update() learned, for the other stacks on the same links
	 * (shards: an answer reaches one of them); stack_on_neigh_learned() */
	stack_neigh_fn neigh_learned;
	void *neigh_learned_ctx;
	/* One of @steer_n stacks the kernel steers packets among by flowhash
	 * (shards); n 0 or 1: every flow is ours. stack_steer_set() */
	uint32_t steer_seed;
	unsigned int steer_n, steer_index;
};

/*
 * The ECN field (RFC 3168 5: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE) of the IP
 * header a delivered packet kept at @p->l3_off, 0 when it has none there.
 */
static inline uint8_t ip_ecn(const struct pkt *p)
{
	const uint8_t *h;

	if (!p->l3_off || p->l3_off + 2 > p->off || p->off > p->cap)
		return 0;
	h = p->buf + p->l3_off;
	switch (h[0] >> 4) {
	case 4:
		return h[1] & 3;		/* the TOS byte's low bits */
	case 6:
		return (h[1] >> 4) & 3;		/* the traffic class's low bits */
	default:
		return 0;
	}
}

static inline void stack_count(struct stack *st, enum dp_ctr c)
{
	st->ctr[c]++;
}

/* Count a drop by its reason; the caller frees what it owns. */
static inline void stack_drop(struct stack *st, enum dp_drop d)
{
	st->drop[d]++;
}

static inline uint64_t stack_now_ms(const struct stack *st)
{
	return loop_now_ms(st->loop);
}

/* stack.c */
int stack_init(struct stack *st, struct loop *loop);
void stack_fini(struct stack *st);
int stack_add_link(struct stack *st, struct link *l);
int stack_add_inner_link(struct stack *st, struct link *l);
int stack_start(struct stack *st);
int stack_on_turn_end(struct stack *st, enum stack_turn_phase phase, stack_turn_fn fn, void *ctx);
void stack_off_turn_end(struct stack *st, stack_turn_fn fn, void *ctx);
int stack_set_upper(struct stack *st, const struct stack_upper_ops *ops, void *ctx);
int stack_set_secret(struct stack *st, const uint8_t secret[32]);
void stack_on_neigh_learned(struct stack *st, stack_neigh_fn fn, void *ctx);
void stack_steer_set(struct stack *st, uint32_t seed, unsigned int n, unsigned int index);
bool stack_owns_flow(const struct stack *st, int protocol, const struct net_addr *a, uint16_t a_port,
		     const struct net_addr *b, uint16_t b_port);
int stack_owner_of_remote(const struct stack *st, const struct net_addr *remote);
int stack_key_engine(const struct stack *st, struct tcp_stack *engine, const char *label);
unsigned int stack_links_flush(struct stack *st);
struct link *stack_link_by_ifindex(struct stack *st, uint32_t ifindex);
bool net_addr_eq(const struct net_addr *a, const struct net_addr *b);
bool net_prefix_match(uint8_t family, const union proto_inaddr *a, const union proto_inaddr *b,
		      unsigned int len);
void net_prefix_mask(union proto_inaddr *a, unsigned int len, uint8_t family);
int net_addr_parse(const char *s, struct net_addr *out);
const char *net_addr_str(const struct net_addr *a, char *buf, size_t len);
bool stack_icmp_allow(struct stack *st);
void stack_set_icmp_rate(struct stack *st, uint32_t per_s);

/* eth.c */
void eth_input(struct stack *st, struct link *l, struct pkt *p);
void eth_output(struct link *l, const uint8_t *dst_mac, uint16_t ethertype, struct pkt *p);

/* arp.c */
void arp_input(struct stack *st, struct link *l, struct pkt *p);
void arp_solicit(struct stack *st, struct link *l, struct in_addr target, const uint8_t *dst_mac);
void arp_announce(struct stack *st, struct link *l, struct in_addr addr);

/* neigh.c */
struct neigh *neigh_lookup(struct stack *st, uint8_t family, const union proto_inaddr *addr);
void neigh_update(struct stack *st, struct link *l, uint8_t family, const union proto_inaddr *addr,
		  const uint8_t *mac, bool create, bool confirmed);
void neigh_adopt(struct stack *st, struct link *l, uint8_t family, const union proto_inaddr *addr,
		 const uint8_t *mac, bool confirmed);
void neigh_output(struct stack *st, struct link *l, uint8_t family, const union proto_inaddr *nexthop,
		  struct pkt *p);
int neigh_add_permanent(struct stack *st, struct link *l, const struct proto_neigh *n);
bool neigh_timer(struct stack *st);
void stack_housekeeping_kick(struct stack *st);
void neigh_flush(struct stack *st);
unsigned int neigh_limit(const struct stack *st);
unsigned int neigh_count(const struct stack *st);

/* route.c */
int route_add(struct stack *st, struct link *l, const struct proto_route *r);
void route_add_connected(struct stack *st, struct link *l);
const struct route *route_lookup(const struct stack *st, uint8_t family,
				 const union proto_inaddr *dst);

/* ipv4.c */
/* What ipv4_hdr_check() and ipv6_hdr_check() found wrong with a header. */
enum ip_hdr_fault {
	IP_HDR_OK,
	IP_HDR_SHORT,		/* not even the fixed header */
	IP_HDR_BAD_HEADER,	/* the version, or an IPv4 header length under 20 */
	IP_HDR_TRUNCATED,	/* IPv4 options cut off */
	IP_HDR_BAD_LENGTH,	/* the total or payload length and the packet disagree */
	IP_HDR_BAD_CHECKSUM,
	IP_HDR_FAULT_MAX
};

extern const enum dp_drop ip_hdr_fault_drop[IP_HDR_FAULT_MAX];
struct ipv4_hdr;
struct ipv6_hdr;
enum ip_hdr_fault ipv4_hdr_check(const struct pkt *p, bool big_tcp, unsigned int *hlen, unsigned int *tot_len);
bool ipv4_hdr_pull(struct pkt *p, const struct ipv4_hdr *ih, unsigned int hlen, unsigned int tot_len);
void ipv4_hdr_build(struct ipv4_hdr *ih, uint8_t tos, size_t total, uint16_t id, bool df, uint8_t ttl,
		    uint8_t proto, struct in_addr src, struct in_addr dst);
enum ip_hdr_fault ipv6_hdr_check(const struct pkt *p, size_t *plen);
void ipv6_hdr_build(struct ipv6_hdr *h, uint8_t tos, uint16_t plen, uint8_t nh, uint8_t hop_limit,
		    const struct in6_addr *src, const struct in6_addr *dst);
void ipv4_input(struct stack *st, struct link *l, struct pkt *p);
void ipv4_deliver(struct stack *st, struct link *l, struct pkt *p, uint8_t proto,
		  struct in_addr src, struct in_addr dst, bool to_bcast);
int ipv4_output(struct stack *st, struct pkt *p, struct in_addr src, struct in_addr dst,
		uint8_t proto, uint8_t ttl, bool df);
void ipv4_send_l2(struct stack *st, struct link *l, struct in_addr nexthop, struct pkt *p);
bool ipv4_is_ours(const struct stack *st, struct in_addr a);
int ipv4_pick_src(const struct stack *st, struct in_addr dst, struct in_addr *src);

/* frag.c */
int ip_reasm_init(struct stack *st);
void ip_reasm_fini(struct stack *st);
struct pkt *ipv4_reasm_input(struct stack *st, struct pkt *p, const void *iph);
bool ip_reasm_timer(struct stack *st);
unsigned int ip_reasm_queues(const struct stack *st);
size_t ip_reasm_bytes(const struct stack *st);
size_t ip_reasm_limit(const struct stack *st);
int ipv4_fragment_output(struct stack *st, struct link *l, struct in_addr nexthop,
			 struct pkt *p, uint32_t mtu);
int pkt_copy_out(const struct pkt *p, size_t off, void *dst, size_t len);
struct pkt *ipv6_reasm_input(struct stack *st, struct pkt *p, const void *ip6h, uint8_t nh,
			     uint16_t frag_off, uint32_t id);
int ipv6_fragment_output(struct stack *st, struct link *l, const union proto_inaddr *nexthop,
			 const uint8_t *mac, struct pkt *p, uint32_t mtu);

/* ipv6.c */
void ipv6_input(struct stack *st, struct link *l, struct pkt *p);
int ipv6_output(struct stack *st, struct link *hint, struct pkt *p, const struct in6_addr *src,
		const struct in6_addr *dst, uint8_t nh, uint8_t hop_limit);
int ipv6_output_mac(struct stack *st, struct link *l, struct pkt *p, const struct in6_addr *src,
		    const struct in6_addr *dst, uint8_t nh, uint8_t hop_limit, const uint8_t *mac);
struct link_addr6 *ipv6_find_addr(const struct stack *st, const struct in6_addr *a, struct link **lp);
int ipv6_pick_src(const struct stack *st, struct link *hint, const struct in6_addr *dst,
		  struct in6_addr *src);
void ipv6_solicited_node(const struct in6_addr *a, struct in6_addr *out);

/* icmp.c */
void icmp_input(struct stack *st, struct link *l, struct pkt *p, struct in_addr src,
		struct in_addr dst, bool to_bcast);
void icmp_send_error(struct stack *st, const struct pkt *orig, uint8_t type, uint8_t code,
		     uint32_t info);
struct pkt *icmp_reply_new(struct stack *st, const struct pkt *req, uint8_t type);
struct pkt *icmp_error_new(struct stack *st, uint8_t type, uint8_t code, uint32_t info,
			   const void *ip, size_t avail, size_t max, size_t ip_hlen);

/* icmpv6.c (ICMPv6 and NDP) */
void icmpv6_input(struct stack *st, struct link *l, struct pkt *p, const struct in6_addr *src,
		  const struct in6_addr *dst, uint8_t hop_limit);
void icmpv6_send_error(struct stack *st, struct link *l, const struct pkt *orig, uint8_t type,
		       uint8_t code, uint32_t info);
void ndp_solicit(struct stack *st, struct link *l, const struct in6_addr *target, bool unicast,
		 const uint8_t *dst_mac);
void ndp_dad_start(struct stack *st, struct link *l);
bool ndp_dad_timer(struct stack *st);

/* udp.c */
typedef void (*udp_recv_fn)(struct udp_sock *s, const struct net_addr *src, uint16_t sport,
			    const struct net_addr *dst, const uint8_t *data, size_t len);

/**
 * struct udp_sock - a UDP endpoint inside the stack
 * @local:	bound address; family AF_UNSPEC for any address of any family
 * @port:	bound port, host order
 * @fn:		receive callback; data is borrowed for the call
 * @ctx:	owner's pointer
 * @owner:	text for the stats ("publish udp:5353=...")
 */
struct udp_sock {
	struct udp_sock *next;
	struct stack *st;
	struct net_addr local;
	uint16_t port;
	udp_recv_fn fn;
	void *ctx;
	char owner[96];
	uint64_t rx_datagrams, rx_bytes, tx_datagrams, tx_bytes, tx_errors;
};

void udp_input(struct stack *st, struct link *l, struct pkt *p, const struct net_addr *src,
	       const struct net_addr *dst, bool to_bcast);
struct udp_sock *udp_open(struct stack *st, const struct net_addr *local, uint16_t port,
			  udp_recv_fn fn, void *ctx, int *errp);
void udp_close(struct udp_sock *s);
int udp_sendto(struct udp_sock *s, const struct net_addr *src, const struct net_addr *dst,
	       uint16_t dport, const void *data, size_t len);
struct iovec;
/* What a burst sent, also when it stopped early. */
struct udp_sent {
	uint64_t datagrams;
	uint64_t bytes;
};
int udp_output_burst(struct stack *st, const struct net_addr *from, uint16_t sport,
		     const struct net_addr *dst, uint16_t dport, const struct iovec *iov,
		     unsigned int iovcnt, size_t gso_size, struct udp_sent *sent);
int udp_sendto_gso(struct udp_sock *s, const struct net_addr *src, const struct net_addr *dst,
		   uint16_t dport, const struct iovec *iov, unsigned int iovcnt, size_t gso_size);
unsigned int udp_gso_max_segs(const struct link *l, uint8_t family, size_t gso_size);
int udp_table_init(struct stack *st);
void udp_table_fini(struct stack *st);
typedef void (*udp_each_fn)(const struct udp_sock *s, void *arg);
void udp_for_each(const struct stack *st, udp_each_fn fn, void *arg);

#endif /* SANDNET_DATAPATH_NET_H */
