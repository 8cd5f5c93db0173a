/* SPDX-License-Identifier: MIT */
/*
 * face_int.h - what the files of datapath/face/ share and nobody else sees
 *
 *   face.c       the object, the inner IP layer (input checks, output to the TUN), stats
 *   face_tcp.c   TCP: connection pairs, the deferred handshakes both ways, the byte pump
 *   face_udp.c   UDP: flows, both directions, UDP GSO
 *   face_icmp.c  ICMP and ICMPv6: echo proxied, errors translated both ways
 *   face_dns.c   the container's DNS, read when the policy has name rules
 *   face_pace.c  departures spaced as the arrivals were (UDP, both directions)
 *   face_netstat.c  the container kernel's own counters of what it dropped
 */
#ifndef SANDNET_DATAPATH_FACE_INT_H
#define SANDNET_DATAPATH_FACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datapath/face/face.h"
#include "datapath/flowlog.h"
#include "datapath/loop.h"
#include "datapath/net/net.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/tcp/tcp.h"

/* Why a packet from the container was dropped (face.drops in `datapath stats`). */
#define FACE_DROP_LIST(X)	\
	X(BAD_HEADER)		\
	X(BAD_LENGTH)		\
	X(BAD_CHECKSUM)		\
	X(BAD_GSO)		\
	X(BAD_SOURCE)		\
	X(BAD_DESTINATION)	\
	X(TO_SELF)		\
	X(MULTICAST)		\
	X(IPV6_EXT_HEADER)	\
	X(UNKNOWN_PROTOCOL)	\
	X(ICMP_IGNORED)		\
	X(NO_FLOW)		\
	X(NO_ROUTE)		\
	X(FLOW_LIMIT)		\
	X(POLICY)		\
	X(BAD_DNS)		\
	X(DNS_UNASKED)		\
	X(DNS_TOO_BIG)		\
	X(OUTER_ERROR)		\
	X(NO_MEMORY)

#define FACE_X_ENUM(name) FACE_DROP_##name,
enum face_drop { FACE_DROP_LIST(FACE_X_ENUM) FACE_DROP_MAX };

/* What happened on the face (face.counters). */
#define FACE_CTR_LIST(X)	\
	X(IN_PACKETS)		\
	X(IN_TCP)		\
	X(IN_UDP)		\
	X(IN_ICMP)		\
	X(OUT_PACKETS)		\
	X(FRAGMENTS_IN)		\
	X(REASSEMBLED)		\
	X(TCP_OUTBOUND)		\
	X(TCP_INBOUND)		\
	X(TCP_CONNECTED)	\
	X(TCP_REFUSED)		\
	X(TCP_UNREACHABLE)	\
	X(TCP_TIMED_OUT)	\
	X(TCP_RESETS)		\
	X(TCP_CLOSED)		\
	X(TCP_ORPHANS)		\
	X(TCP_ORPHANS_BAD)	\
	X(TCP_NAMES_READ)	\
	X(TCP_NAMES_REFUSED)	\
	X(UDP_TO_OUTER)		\
	X(UDP_TO_INNER)		\
	X(UDP_GSO_FROM_INNER)	\
	X(UDP_GSO_TO_INNER)	\
	X(UDP_TRAINED_TO_OUTER)	\
	X(UDP_FLOWS_NEW)	\
	X(UDP_FLOWS_EXPIRED)	\
	X(UDP_FLOWS_EVICTED)	\
	X(ECHO_TO_OUTER)	\
	X(ECHO_TO_INNER)	\
	X(ICMP_TO_INNER)	\
	X(ICMP_TO_OUTER)	\
	X(PROTO_UNREACH_SENT)	\
	X(DNS_QUERIES)		\
	X(DNS_REFUSED)		\
	X(DNS_ANSWERS)		\
	X(DNS_BOUND)

#define FACE_X_ENUM_CTR(name) FACE_CTR_##name,
enum face_ctr { FACE_CTR_LIST(FACE_X_ENUM_CTR) FACE_CTR_MAX };

struct face_pair;
struct face_flow;

/**
 * struct face - the container face of one datapath
 * @st:		the outer stack (the network side)
 * @tcp:	the inner TCP engine, which terminates the container's connections
 * @ls_inner:	its catch-all: every SYN from the container
 * @ls_outer:	the outer engine's catch-all: SYNs to the container's ports no
 *		--publish takes
 * @tuns:	the TUN links, one per outer link with a face (@tuns[i]->outer)
 * @pairs:	connection pairs; @pending: pairs with bytes or a FIN to move
 * @flows:	UDP flows (face_udp.c); ICMP echo flows are in the stack's flow
 *		table (face_icmp.c)
 * @sweep:	ages flows out once a second
 * @ipv4_id:	IPv4 ids of what the face writes to the container
 */
struct face {
	struct stack *st;
	struct tcp_glue *tcp;
	struct tcp_listener *ls_inner, *ls_outer;
	unsigned int n_tuns;
	struct link *tuns[PROTO_MAX_LINKS];
	struct face_pair *pairs, *pending;
	unsigned int n_pairs;
	struct face_flows *flows;
	struct loop_timer sweep;
	uint16_t ipv4_id;
	bool started;
	unsigned int n_netstat;
	int netstat_fds[PROTO_FACE_NETSTAT_FDS];	/* the container's /proc/net: face_netstat.c */
	unsigned int n_reading;		/* pairs holding unfinished first bytes (face_tcp.c) */
	uint64_t drop[FACE_DROP_MAX];
	uint64_t ctr[FACE_CTR_MAX];
};

static inline void face_count(struct face *f, enum face_ctr c)
{
	f->ctr[c]++;
}

static inline void face_drop(struct face *f, enum face_drop d)
{
	f->drop[d]++;
}

static inline uint64_t face_now_us(const struct face *f)
{
	return tcp_glue_now_us(f->st);
}

/* face.c */
/* face.c */
bool face_link_has(const struct link *outer, const struct net_addr *a);
struct link *face_tun_for(const struct face *f, const struct net_addr *container);
bool face_is_container(const struct face *f, const struct net_addr *a);
/* face_ip.c */
void face_ip_rx(void *ctx, struct link *tun, struct pkt *p);
int face_ip_output(struct face *f, struct pkt *p, const struct net_addr *src, const struct net_addr *dst,
		   uint8_t proto);
void face_send_icmp(struct face *f, uint8_t family, const struct net_addr *src, const struct net_addr *dst,
		    uint8_t type, uint8_t code, uint32_t info, const void *quote, size_t quote_len, bool to_inner);
const char *face_drop_name(unsigned int d);

/* face_log.c */
struct policy_rule;
struct flowlog_record *face_log_begin(struct face *f, uint8_t proto, bool inbound, const struct net_addr *src,
				      uint16_t sport, const struct net_addr *dst, uint16_t dport,
				      const struct policy_rule *by);
void face_log_rule(struct flowlog_record *r, const struct policy_rule *by);
void face_log_name(struct flowlog_record *r, const char *name);
void face_log_end(struct face *f, struct flowlog_record *r, enum flowlog_end how);
void face_log_refused(struct face *f, uint8_t proto, bool inbound, const struct net_addr *src, uint16_t sport,
		      const struct net_addr *dst, uint16_t dport, const struct policy_rule *by, const char *name,
		      size_t bytes);

/* face_tcp.c */
int face_tcp_init(struct face *f);
void face_tcp_fini(struct face *f);
void face_tcp_pump(struct face *f);
void face_tcp_sweep(struct face *f, uint64_t now_ms);
void face_tcp_print(struct face *f, struct out *o);

/* face_pace.c */

/**
 * struct face_pace_item - what a pacer holds; embedded in its owner's object
 * @next:	the queue
 * @arrived_us:	when its first datagram arrived (loop time)
 * @held_us:	when the pacer took it
 * @bytes:	its size, for the pacer's bound
 */
struct face_pace_item {
	struct face_pace_item *next;
	uint64_t arrived_us, held_us;
	size_t bytes;
};

typedef void (*face_pace_send_fn)(struct face_pace_item *it, void *ctx);
typedef void (*face_pace_flush_fn)(void *ctx);

/**
 * struct face_pace_stats - what a pacer did
 * @held:	items that had to wait for their time
 * @most_held:	the most items it held at once
 * @overruns:	items sent before their time: held too long, or too much held
 */
struct face_pace_stats {
	uint64_t held, most_held, overruns;
};

/**
 * struct face_pacer - one direction's departures (theory in face_pace.c)
 * @head, @tail:	held items, in arrival order
 * @bytes, @n:		what they hold
 * @last_dep_us:	when the last item left (the departure clock)
 * @last_arr_us:	when it had arrived
 * @started:		an item has been submitted
 * @rate_since_us, @rate_bytes, @rate_bpms, @rate_prev_bpms, @stamp_us:
 *			face_pace_arrival()'s window, what it read, the rate
 *			it stamps by, the last window's own and the last stamp
 *			it gave
 * @send, @flush, @ctx:	what face_pace_init() was given
 */
struct face_pacer {
	struct loop *loop;
	struct face_pace_item *head, *tail;
	size_t bytes;
	unsigned int n;
	uint64_t last_dep_us, last_arr_us;
	bool started;
	uint64_t rate_since_us, rate_bytes, rate_bpms, rate_prev_bpms, stamp_us;
	struct loop_timer timer;
	face_pace_send_fn send;
	face_pace_flush_fn flush;
	void *ctx;
	struct face_pace_stats stats;
};

void face_pace_init(struct face_pacer *pc, struct loop *loop, face_pace_send_fn send, face_pace_flush_fn flush,
		    void *ctx);
void face_pace_submit(struct face_pacer *pc, struct face_pace_item *it);
uint64_t face_pace_arrival(struct face_pacer *pc, uint64_t read_us, uint64_t after_us, size_t bytes);
void face_pace_fini(struct face_pacer *pc, void (*drop)(struct face_pace_item *it));
void face_pace_print(const struct face_pacer *pc, struct out *o, const char *name);

/* face_netstat.c */
void face_netstat_take(struct face *f, struct proto_face *cfg);
void face_netstat_close(struct face *f);

/* face_udp.c */

/**
 * struct face_udp_usage - the UDP flow table as stats show it
 * @flows:	flows open; @inbound of them opened by the network
 * @max:	the total cap; @per_source_max the cap per remote source (0: none)
 * @cap_hits:	flows the total cap pushed out; @per_source_hits those a source's cap did
 * @to_inner, @to_outer: what each direction's pacer did
 */
struct face_udp_usage {
	unsigned int flows, inbound, max, per_source_max;
	uint64_t cap_hits, per_source_hits;
	struct face_pace_stats to_inner, to_outer;
};

int face_udp_init(struct face *f);
void face_udp_usage(const struct face *f, struct face_udp_usage *u);
void face_udp_fini(struct face *f);
void face_udp_from_inner(struct face *f, struct pkt *p, const struct net_addr *src, const struct net_addr *dst);
bool face_udp_flow_known(struct face *f, const struct net_addr *c, uint16_t cport, const struct net_addr *r,
			 uint16_t rport, bool touch);
void face_udp_sweep(struct face *f, uint64_t now_ms);
void face_udp_flush(struct face *f);
void face_udp_print(struct face *f, struct out *o);
void face_udp_to_inner(struct face *f, const struct net_addr *src, uint16_t sport, const struct net_addr *dst,
		       uint16_t dport, const void *data, size_t len);
/* face_dns.c: answers longer than these are not read (UDP: dropped; TCP: the connection is reset) */
#define FACE_DNS_ANSWER_MAX	4096
#define FACE_DNS_TCP_ANSWER_MAX	16384
#define FACE_DNS_TCP_QUERY_MAX	4096	/* a longer query over TCP resets the connection */
int face_dns_query(struct face *f, const struct net_addr *src, uint16_t sport, const struct net_addr *dst,
		   const uint8_t *data, size_t len);
int face_dns_tcp_query(struct face *f, const struct net_addr *dst, const uint8_t *data, size_t len,
		       struct flowlog_record *log);
bool face_dns_answer(struct face *f, const uint8_t *data, size_t len, size_t max);
/* what the outer stack hands up: its struct stack_upper_ops (face.c) */
bool face_udp_from_outer(struct face *f, const struct net_addr *src, uint16_t sport,
			 const struct net_addr *dst, uint16_t dport, const uint8_t *data, size_t len);

/* face_icmp.c */
void face_icmp_fini(struct face *f);
void face_icmp_from_inner(struct face *f, struct pkt *p, uint8_t family, const struct net_addr *src,
			  const struct net_addr *dst);
void face_icmp_sweep(struct face *f, uint64_t now_ms);
void face_icmp_print(struct face *f, struct out *o);
void face_icmp_from_outer(struct face *f, uint8_t family, const struct pkt *p, const struct net_addr *src,
			  const struct net_addr *dst);
bool face_icmp_echo_refused(struct face *f, uint8_t family, const struct pkt *p, const struct net_addr *src,
			    const struct net_addr *dst);
void face_icmp_prohibit(struct face *f, uint8_t family, const struct net_addr *sender,
			const struct net_addr *target, const void *quote, size_t quote_len, bool to_inner);
void face_icmp_prohibit_udp(struct face *f, const struct net_addr *src, uint16_t sport,
			    const struct net_addr *dst, uint16_t dport, size_t len);
void face_icmp_unreach_for(struct face *f, int err, uint8_t family, const struct tcp_endpoint *from,
			   const struct tcp_endpoint *to, uint32_t seq, bool to_inner);

#endif /* SANDNET_DATAPATH_FACE_INT_H */
