// SPDX-License-Identifier: MIT
/*
 * flow.c - one stack's table of conversations by kind and hash
 *
 * Theory of operation
 *
 * The face and the services each keep conversations that a datagram must
 * find at once (a UDP flow by its 4-tuple, an echo by its identifier, a
 * service's flow by its client), bounded by a cap that evicts the least
 * recently used and aged out when idle. Those are one structure, kept
 * here once: a hash table of FLOW_BUCKETS chains and, per kind, a list from
 * the oldest to the newest use. The owner embeds a struct flow in its own
 * object, hashes its own key with flow_hash() (libsodium's keyed SipHash,
 * as the TCP engine's: a sender cannot pick tuples that collide, since the
 * key is random per table) and compares its own fields while it walks the
 * flows of that kind and hash (flow_first(), flow_next()). The table never
 * frees a flow: the owner unlinks it (flow_del()) and frees what it is
 * part of.
 *
 * A stack has one table (stack_init()), and a shard one stack: a flow is
 * only ever touched by the thread of its shard.
 */
#include <sodium.h>
#include <stdlib.h>

#include "datapath/flow.h"

#define FLOW_BUCKETS	4096	/* a power of two */

struct flow_table {
	unsigned char key[crypto_shorthash_KEYBYTES];
	struct flow *bucket[FLOW_BUCKETS];
	struct {
		struct flow *oldest, *newest;
		unsigned int n;
	} age[FLOW_KINDS];
};

/**
 * flow_table_new() - an empty table with a random hash key
 * Return: the table, or NULL when out of memory.
 */
struct flow_table *flow_table_new(void)
{
	struct flow_table *t;

	if (sodium_init() < 0)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	randombytes_buf(t->key, sizeof(t->key));
	return t;
}

/**
 * flow_table_free() - free the table, after its owners removed their flows
 * @t:	table, or NULL
 */
void flow_table_free(struct flow_table *t)
{
	free(t);
}

/**
 * flow_hash() - the hash an owner files and finds a flow under
 * @t:		table
 * @key:	the owner's key: the same bytes for the same conversation
 *		(zero its padding)
 * @len:	its length
 */
uint64_t flow_hash(const struct flow_table *t, const void *key, size_t len)
{
	uint64_t h;

	crypto_shorthash((unsigned char *)&h, key, len, t->key);
	return h;
}

static struct flow **flow_chain(const struct flow_table *t, uint64_t hash)
{
	return (struct flow **)&t->bucket[hash & (FLOW_BUCKETS - 1)];
}

static void flow_age_unlink(struct flow_table *t, struct flow *f)
{
	if (f->older)
		f->older->newer = f->newer;
	else
		t->age[f->kind].oldest = f->newer;
	if (f->newer)
		f->newer->older = f->older;
	else
		t->age[f->kind].newest = f->older;
	f->older = f->newer = NULL;
}

static void flow_age_append(struct flow_table *t, struct flow *f)
{
	f->older = t->age[f->kind].newest;
	f->newer = NULL;
	if (f->older)
		f->older->newer = f;
	else
		t->age[f->kind].oldest = f;
	t->age[f->kind].newest = f;
}

/**
 * flow_add() - file a new flow, the newest of its kind
 * @t:		table
 * @f:		the flow, not in any table
 * @kind:	its owner
 * @hash:	flow_hash() of its key
 * @now_ms:	the time
 */
void flow_add(struct flow_table *t, struct flow *f, enum flow_kind kind, uint64_t hash, uint64_t now_ms)
{
	struct flow **chain = flow_chain(t, hash);

	f->kind = (uint8_t)kind;
	f->hash = hash;
	f->last_ms = now_ms;
	f->hnext = *chain;
	*chain = f;
	flow_age_append(t, f);
	t->age[kind].n++;
}

/**
 * flow_del() - take a flow out of the table (the owner frees it)
 * @t:	table
 * @f:	a flow flow_add() filed in @t
 */
void flow_del(struct flow_table *t, struct flow *f)
{
	struct flow **pp;

	for (pp = flow_chain(t, f->hash); *pp; pp = &(*pp)->hnext) {
		if (*pp == f) {
			*pp = f->hnext;
			break;
		}
	}
	f->hnext = NULL;
	flow_age_unlink(t, f);
	t->age[f->kind].n--;
}

/**
 * flow_touch() - the flow was used now: the newest of its kind
 * @t:		table
 * @f:		flow
 * @now_ms:	the time
 */
void flow_touch(struct flow_table *t, struct flow *f, uint64_t now_ms)
{
	f->last_ms = now_ms;
	if (t->age[f->kind].newest == f)
		return;
	flow_age_unlink(t, f);
	flow_age_append(t, f);
}

/* From @f on, the first flow of @kind and @hash. */
static struct flow *flow_match(struct flow *f, uint8_t kind, uint64_t hash)
{
	while (f && (f->kind != kind || f->hash != hash))
		f = f->hnext;
	return f;
}

/**
 * flow_first() - the first flow of @kind filed under @hash
 * @t:		table
 * @kind:	the owner
 * @hash:	flow_hash() of the key looked for
 *
 * Return: a flow whose key the owner compares with its own, or NULL; the
 * next candidate is flow_next()'s.
 */
struct flow *flow_first(const struct flow_table *t, enum flow_kind kind, uint64_t hash)
{
	return flow_match(*flow_chain(t, hash), (uint8_t)kind, hash);
}

/** flow_next() - the next flow of the same kind and hash as @f, or NULL */
struct flow *flow_next(const struct flow *f)
{
	return flow_match(f->hnext, f->kind, f->hash);
}

/** flow_oldest() - the least recently used flow of @kind, or NULL */
struct flow *flow_oldest(const struct flow_table *t, enum flow_kind kind)
{
	return t->age[kind].oldest;
}

/** flow_count() - how many flows of @kind the table holds */
unsigned int flow_count(const struct flow_table *t, enum flow_kind kind)
{
	return t->age[kind].n;
}
