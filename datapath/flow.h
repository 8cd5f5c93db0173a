/* SPDX-License-Identifier: MIT */
/*
 * flow.h - one stack's table of conversations that hold no TCP connection:
 * the face's UDP flows and echo flows, the services' UDP flows
 *
 * A flow is embedded in its owner's object (struct flow, flow_entry() to
 * get back) and found by a hash of the owner's own key (flow_hash()):
 * the table compares kinds and hashes, the owner compares its fields. The
 * table keeps every kind's flows on an age list, least recently used
 * first, which the owner walks to evict at its cap or age flows out. One
 * table per stack, so one per shard: nothing in it is shared or locked.
 */
#ifndef SANDNET_DATAPATH_FLOW_H
#define SANDNET_DATAPATH_FLOW_H

#include <stddef.h>
#include <stdint.h>

/* Who owns a flow: each kind has its own age list and count. */
enum flow_kind {
	FLOW_FACE_UDP,		/* a UDP flow of the container's (face_udp.c) */
	FLOW_FACE_ECHO,		/* a ping of the container's (face_icmp.c) */
	FLOW_SVC_UDP,		/* a UDP service's flow (svc_udp.c) */
	FLOW_KINDS
};

/**
 * struct flow - a conversation's place in its stack's table
 * @hnext:	next in the hash bucket
 * @older, @newer: neighbours on the age list of its kind
 * @hash:	flow_hash() of the owner's key
 * @last_ms:	when it was added or last flow_touch()ed
 * @kind:	enum flow_kind
 */
struct flow {
	struct flow *hnext;
	struct flow *older, *newer;
	uint64_t hash;
	uint64_t last_ms;
	uint8_t kind;
};

/* The owner a struct flow is embedded in. */
#define flow_entry(f, type, member) ((type *)((char *)(f) - offsetof(type, member)))

struct flow_table;

struct flow_table *flow_table_new(void);
void flow_table_free(struct flow_table *t);
uint64_t flow_hash(const struct flow_table *t, const void *key, size_t len);
void flow_add(struct flow_table *t, struct flow *f, enum flow_kind kind, uint64_t hash, uint64_t now_ms);
void flow_del(struct flow_table *t, struct flow *f);
void flow_touch(struct flow_table *t, struct flow *f, uint64_t now_ms);
struct flow *flow_first(const struct flow_table *t, enum flow_kind kind, uint64_t hash);
struct flow *flow_next(const struct flow *f);
struct flow *flow_oldest(const struct flow_table *t, enum flow_kind kind);
unsigned int flow_count(const struct flow_table *t, enum flow_kind kind);

#endif
