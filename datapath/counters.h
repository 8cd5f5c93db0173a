/* SPDX-License-Identifier: MIT */
/*
 * counters.h - names of every counter and drop reason the datapath keeps
 *
 * Theory of operation: the stack keeps two flat arrays of uint64_t, one for
 * protocol events (CTR_*) and one for drops (DROP_*), indexed by these enums.
 * The names come from the same X-macro list as the enum, so the table the
 * stats output prints can never disagree with the code that counts. Names are
 * snake_case: they are the JSON keys of `datapath stats --json`.
 * Per-link counters (frames, bytes, syscalls) live in struct link_stats.
 */
#ifndef SANDNET_DATAPATH_COUNTERS_H
#define SANDNET_DATAPATH_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#define DP_CTR_LIST(X)		\
	X(ETH_IN)		\
	X(ARP_IN)		\
	X(ARP_REQUEST_IN)	\
	X(ARP_REPLY_IN)		\
	X(ARP_REPLY_OUT)	\
	X(ARP_REQUEST_OUT)	\
	X(ARP_GRATUITOUS_OUT)	\
	X(IPV4_IN)		\
	X(IPV4_OUT)		\
	X(IPV4_FRAG_IN)		\
	X(IPV4_REASM_OK)	\
	X(IPV4_FRAG_OUT)	\
	X(IPV6_IN)		\
	X(IPV6_OUT)		\
	X(IPV6_FRAG_IN)		\
	X(IPV6_REASM_OK)	\
	X(IPV6_FRAG_OUT)	\
	X(ICMP_IN)		\
	X(ICMP_ECHO_IN)		\
	X(ICMP_ECHO_REPLY_OUT)	\
	X(ICMP_ERROR_IN)	\
	X(ICMP_UNREACH_OUT)	\
	X(ICMP_RATE_LIMITED)	\
	X(ICMPV6_IN)		\
	X(ICMPV6_ECHO_IN)	\
	X(ICMPV6_ECHO_REPLY_OUT)\
	X(ICMPV6_ERROR_IN)	\
	X(ICMPV6_UNREACH_OUT)	\
	X(NDP_NS_IN)		\
	X(NDP_NA_IN)		\
	X(NDP_NS_OUT)		\
	X(NDP_NA_OUT)		\
	X(NDP_DAD_OK)		\
	X(NDP_DAD_FAILED)	\
	X(UDP_IN)		\
	X(UDP_OUT)		\
	X(UDP_NO_PORT)		\
	X(TCP_IN)		\
	X(NEIGH_RESOLVED)	\
	X(NEIGH_QUEUED)		\
	X(NEIGH_TABLE_FULL)	\
	X(UDP_TX_GSO_FRAMES)	\
	X(UDP_TX_GSO_SEGMENTS)	\
	X(UDP_TX_SW_SEGMENTS)

#define DP_DROP_LIST(X)		\
	X(TRUNCATED)		\
	X(BAD_CHECKSUM)		\
	X(BAD_LENGTH)		\
	X(BAD_HEADER)		\
	X(BAD_ADDRESS)		\
	X(NOT_FOR_US)		\
	X(UNKNOWN_ETHERTYPE)	\
	X(UNKNOWN_PROTOCOL)	\
	X(ARP_BAD_FORMAT)	\
	X(IPV6_EXT_CHAIN)	\
	X(FRAG_OVERLAP)		\
	X(FRAG_TOO_BIG)		\
	X(FRAG_TIMEOUT)		\
	X(FRAG_NO_MEMORY)	\
	X(NO_ROUTE)		\
	X(NO_NEIGHBOUR)		\
	X(NEIGH_QUEUE_FULL)	\
	X(TX_QUEUE_FULL)	\
	X(TX_ERROR)		\
	X(RX_TRUNCATED)		\
	X(BAD_VNET)		\
	X(NO_MEMORY)		\
	X(TOO_BIG)		\
	X(TCP_NOT_YET)		\
	X(ICMP_IGNORED)		\
	X(NDP_BAD)		\
	X(SERVICE)

#define DP_X_ENUM_CTR(name) CTR_##name,
#define DP_X_ENUM_DROP(name) DROP_##name,
enum dp_ctr { DP_CTR_LIST(DP_X_ENUM_CTR) CTR_MAX };
enum dp_drop { DP_DROP_LIST(DP_X_ENUM_DROP) DROP_MAX };

const char *dp_ctr_name(unsigned int c);
const char *dp_drop_name(unsigned int d);

/* What a number is: one that only grows, or a level that goes both ways. */
enum stat_kind {
	STAT_COUNTER,
	STAT_GAUGE,
	STAT_KIND_MAX
};

/**
 * struct stat_desc - one number a layer keeps, described once
 * @key:	its name in `datapath stats`: the text label and the JSON key
 * @offset:	where its uint64_t is in the layer's struct (STAT_AT())
 * @kind:	counter or gauge
 * @family:	its Prometheus metric; NULL: one more sample of the row
 *		before's family, told apart by @label; STAT_NOT_EXPORTED: in the
 *		stats only (the row says why)
 * @help:	what it counts, one sentence (the metric's HELP)
 * @label, @value: a fixed label of its sample, or NULL
 * @scale:	the exported value is the number times it (nanoseconds to
 *		seconds); 0: the number itself
 */
struct stat_desc {
	const char *key;
	size_t offset;
	enum stat_kind kind;
	const char *family;
	const char *help;
	const char *label, *value;
	double scale;
};

#define STAT_NOT_EXPORTED	""

/* The offset of @field of @type, which must be a uint64_t. */
#define STAT_AT(type, field)								\
	(offsetof(type, field) +							\
	 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((type *)0)->field), uint64_t) ? 1 : -1]))

/**
 * struct stat_table - a layer's numbers
 * @rows:	in the order they are printed
 * @n:		how many
 */
struct stat_table {
	const struct stat_desc *rows;
	unsigned int n;
};

#define STAT_TABLE(rows) { (rows), sizeof(rows) / sizeof((rows)[0]) }

struct out;
uint64_t stat_value(const struct stat_desc *d, const void *v);
void stat_add(const struct stat_table *t, void *sum, const void *part);
void stat_print(const struct stat_table *t, const void *v, struct out *o);
const char *stat_kind_name(enum stat_kind k);

#endif /* SANDNET_DATAPATH_COUNTERS_H */
