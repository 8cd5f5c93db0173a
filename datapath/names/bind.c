// SPDX-License-Identifier: MIT
/*
 * bind.c - which names an address was given for
 *
 * Theory of operation
 *
 * A name rule ("--egress-allow tcp:pypi.org:443") speaks of a name; a new
 * connection speaks of an address. The datapath joins the two by what it
 * saw: when a DNS answer to the container's query for an allowed name gives
 * addresses, each (address, name) pair is bound here, and a connection to
 * the address is then judged as one to the name. A pair lives for the
 * answer's TTL (the least TTL on its CNAME chain), raised to a floor and
 * lowered to a cap: a program that keeps an answer a little longer than
 * its TTL says (many do) still connects, and an answer with a TTL of days
 * does not pin a binding for days.
 *
 * One address may be bound to several names (a CDN serves many), and one
 * name to several addresses; a pair is kept once, renewed by each answer
 * that gives it again. The table holds at most @max pairs, a datapath's
 * worth for every shard and container it serves: when it is full, expired
 * pairs are swept and, if none was, the pair closest to expiring gives
 * way (counted as evicted). A connection to an address whose binding was
 * evicted is refused as one to an address never bound; the program's next
 * lookup binds it again.
 *
 * The buckets are chosen by a keyed SipHash (libsodium's crypto_shorthash,
 * a random key per table) of the address: the names a container asks for,
 * and so the addresses bound, are in the hands of whoever runs the zones it
 * may resolve, and a keyless hash would let them pile every pair into one
 * chain. Every call takes the table's mutex: shards share it, and it is
 * taken once per new conversation and once per DNS answer, never per packet.
 * Expired pairs are unlinked when a lookup or an add walks past them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <sys/socket.h>

#include "datapath/names/bind.h"

/**
 * struct name_bind - one address bound to one name
 * @next:	the next pair in the bucket
 * @expires_ms:	when it stops binding (the caller's clock)
 * @family:	AF_INET or AF_INET6
 * @addr:	4 or 16 bytes, network order; the rest zero
 * @name:	the name the answer was for
 */
struct name_bind {
	struct name_bind *next;
	uint64_t expires_ms;
	uint8_t family;
	uint8_t addr[16];
	struct dns_name name;
};

/**
 * struct name_binds - the table
 * @lock:	every field below
 * @key:	the bucket hash's key
 * @buckets:	@n_buckets chains, a power of two
 * @max:	pairs held at most
 * @ttl_min_s:	the floor of a pair's life
 * @ttl_max_s:	its cap
 * @st:		the counters (@st.bindings: pairs held)
 */
struct name_binds {
	pthread_mutex_t lock;
	unsigned char key[crypto_shorthash_KEYBYTES];
	struct name_bind **buckets;
	unsigned int n_buckets;
	unsigned int max;
	uint32_t ttl_min_s, ttl_max_s;
	struct name_binds_stats st;
};

static size_t name_bind_addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static struct name_bind **name_binds_bucket(struct name_binds *b, int family, const uint8_t *addr)
{
	uint8_t in[17];
	uint64_t h;

	in[0] = (uint8_t)family;
	memcpy(in + 1, addr, name_bind_addr_len(family));
	crypto_shorthash((unsigned char *)&h, in, 1 + name_bind_addr_len(family), b->key);
	return &b->buckets[h & (b->n_buckets - 1)];
}

static bool name_bind_is(const struct name_bind *e, int family, const uint8_t *addr)
{
	return e->family == family && !memcmp(e->addr, addr, name_bind_addr_len(family));
}

/* Unlinks *@ep and frees it; *@ep is then the next pair. */
static void name_binds_unlink(struct name_binds *b, struct name_bind **ep)
{
	struct name_bind *e = *ep;

	*ep = e->next;
	free(e);
	b->st.bindings--;
}

/* Every expired pair of the table goes. Return: how many. */
static unsigned int name_binds_sweep(struct name_binds *b, uint64_t now_ms)
{
	unsigned int i, n = 0;

	for (i = 0; i < b->n_buckets; i++) {
		struct name_bind **ep = &b->buckets[i];

		while (*ep) {
			if ((*ep)->expires_ms <= now_ms) {
				name_binds_unlink(b, ep);
				b->st.expired++;
				n++;
			} else {
				ep = &(*ep)->next;
			}
		}
	}
	return n;
}

/* The table is full and nothing expired: the pair closest to expiring goes. */
static void name_binds_evict(struct name_binds *b)
{
	struct name_bind **victim = NULL;
	unsigned int i;

	for (i = 0; i < b->n_buckets; i++) {
		struct name_bind **ep;

		for (ep = &b->buckets[i]; *ep; ep = &(*ep)->next)
			if (!victim || (*ep)->expires_ms < (*victim)->expires_ms)
				victim = ep;
	}
	if (victim) {
		name_binds_unlink(b, victim);
		b->st.evicted++;
	}
}

/**
 * name_binds_new() - an empty table
 * @max:	pairs held at most (0: NAME_BINDS_MAX_DEFAULT)
 * @ttl_min_s:	a pair lives at least this long
 * @ttl_max_s:	and at most this long (at least @ttl_min_s)
 *
 * Return: the table, or NULL (errno: ENOMEM, or EINVAL for a cap below the
 * floor).
 */
struct name_binds *name_binds_new(unsigned int max, uint32_t ttl_min_s, uint32_t ttl_max_s)
{
	struct name_binds *b;

	if (ttl_max_s < ttl_min_s || max > (1u << 24)) {
		errno = EINVAL;
		return NULL;
	}
	if (sodium_init() < 0) {
		errno = ENOMEM;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->max = max ? max : NAME_BINDS_MAX_DEFAULT;
	for (b->n_buckets = 16; b->n_buckets < b->max; b->n_buckets <<= 1)
		;
	b->buckets = calloc(b->n_buckets, sizeof(*b->buckets));
	if (!b->buckets || pthread_mutex_init(&b->lock, NULL)) {
		free(b->buckets);
		free(b);
		errno = ENOMEM;
		return NULL;
	}
	randombytes_buf(b->key, sizeof(b->key));
	b->ttl_min_s = ttl_min_s;
	b->ttl_max_s = ttl_max_s;
	b->st.max = b->max;
	return b;
}

/**
 * name_binds_free() - the table and every pair
 * @b:	the table, or NULL
 */
void name_binds_free(struct name_binds *b)
{
	unsigned int i;

	if (!b)
		return;
	for (i = 0; i < b->n_buckets; i++)
		while (b->buckets[i])
			name_binds_unlink(b, &b->buckets[i]);
	pthread_mutex_destroy(&b->lock);
	free(b->buckets);
	free(b);
}

/**
 * name_binds_add() - bind an address to a name, or renew the binding
 * @b:		the table
 * @family:	AF_INET or AF_INET6
 * @addr:	4 or 16 bytes, network order
 * @name:	the name the answer was for
 * @ttl_s:	the answer's TTL for it (clamped to the table's floor and cap)
 * @now_ms:	the caller's clock, milliseconds
 *
 * A renewal keeps the later of the two expiries.
 *
 * Return: 0, -EAFNOSUPPORT for another family, -ENOMEM.
 */
int name_binds_add(struct name_binds *b, int family, const uint8_t *addr, const struct dns_name *name,
		   uint32_t ttl_s, uint64_t now_ms)
{
	struct name_bind **head, **ep, *e;
	uint64_t expires_ms;

	if (family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (ttl_s < b->ttl_min_s)
		ttl_s = b->ttl_min_s;
	if (ttl_s > b->ttl_max_s)
		ttl_s = b->ttl_max_s;
	expires_ms = now_ms + (uint64_t)ttl_s * 1000;

	pthread_mutex_lock(&b->lock);
	head = name_binds_bucket(b, family, addr);
	for (ep = head; *ep;) {
		e = *ep;
		if (e->expires_ms <= now_ms) {
			name_binds_unlink(b, ep);
			b->st.expired++;
			continue;
		}
		if (name_bind_is(e, family, addr) && e->name.len == name->len &&
		    !memcmp(e->name.text, name->text, name->len)) {
			if (expires_ms > e->expires_ms)
				e->expires_ms = expires_ms;
			b->st.refreshed++;
			pthread_mutex_unlock(&b->lock);
			return 0;
		}
		ep = &e->next;
	}
	if (b->st.bindings >= b->max && !name_binds_sweep(b, now_ms))
		name_binds_evict(b);
	e = calloc(1, sizeof(*e));
	if (!e) {
		pthread_mutex_unlock(&b->lock);
		return -ENOMEM;
	}
	e->family = (uint8_t)family;
	memcpy(e->addr, addr, name_bind_addr_len(family));
	e->name = *name;
	e->expires_ms = expires_ms;
	e->next = *head;
	*head = e;
	b->st.bindings++;
	b->st.added++;
	pthread_mutex_unlock(&b->lock);
	return 0;
}

/**
 * name_binds_find() - the first unexpired name bound to an address that @match takes
 * @b:		the table
 * @family:	AF_INET or AF_INET6
 * @addr:	4 or 16 bytes, network order
 * @now_ms:	the caller's clock
 * @match:	asked of each name bound to @addr, under the table's lock (it
 *		must not call back into the table)
 * @ctx:	for @match
 * @found:	receives the name @match took, or NULL
 *
 * Return: true when @match took one.
 */
bool name_binds_find(struct name_binds *b, int family, const uint8_t *addr, uint64_t now_ms,
		     name_binds_match_fn match, void *ctx, struct dns_name *found)
{
	struct name_bind **ep, *e;
	bool hit = false;

	if (family != AF_INET && family != AF_INET6)
		return false;
	pthread_mutex_lock(&b->lock);
	for (ep = name_binds_bucket(b, family, addr); *ep;) {
		e = *ep;
		if (e->expires_ms <= now_ms) {
			name_binds_unlink(b, ep);
			b->st.expired++;
			continue;
		}
		if (name_bind_is(e, family, addr) && match(ctx, &e->name)) {
			if (found)
				*found = e->name;
			hit = true;
			break;
		}
		ep = &e->next;
	}
	pthread_mutex_unlock(&b->lock);
	return hit;
}

/**
 * name_binds_stats() - the table's counters
 * @b:	the table
 * @s:	receives them
 */
void name_binds_stats(struct name_binds *b, struct name_binds_stats *s)
{
	pthread_mutex_lock(&b->lock);
	*s = b->st;
	pthread_mutex_unlock(&b->lock);
}
