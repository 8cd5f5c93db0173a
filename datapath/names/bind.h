/* SPDX-License-Identifier: MIT */
/*
 * bind.h - which names an address was given for: the bindings that DNS
 * answers make, kept for their TTL (theory of operation in bind.c)
 *
 * Below the policy: libc, libsodium and dns.h, nothing of the datapath. One
 * table serves every shard of a datapath; each call takes its lock.
 */
#ifndef SANDNET_DATAPATH_NAMES_BIND_H
#define SANDNET_DATAPATH_NAMES_BIND_H

#include <stdbool.h>
#include <stdint.h>

#include "datapath/names/dns.h"

#define NAME_BINDS_MAX_DEFAULT		4096	/* bindings a datapath keeps */
#define NAME_BINDS_TTL_MIN_DEFAULT	60	/* seconds: an answer's TTL is raised to this */
#define NAME_BINDS_TTL_MAX_DEFAULT	3600	/* and lowered to this */

struct name_binds;

/**
 * struct name_binds_stats - what the table did, for `datapath stats`
 * @bindings:	held now (expired ones not yet swept included)
 * @max:	the cap
 * @added:	new (address, name) pairs
 * @refreshed:	answers that renewed a pair already held
 * @expired:	pairs whose time ran out
 * @evicted:	pairs that made room for a new one while the table was full
 */
struct name_binds_stats {
	uint64_t bindings, max;
	uint64_t added, refreshed, expired, evicted;
};

/**
 * typedef name_binds_match_fn - is one of the names bound to an address the one sought
 * @ctx:	the caller's
 * @name:	a name the address is bound to, unexpired
 *
 * Return: true to stop the lookup with that name.
 */
typedef bool (*name_binds_match_fn)(void *ctx, const struct dns_name *name);

struct name_binds *name_binds_new(unsigned int max, uint32_t ttl_min_s, uint32_t ttl_max_s);
void name_binds_free(struct name_binds *b);
int name_binds_add(struct name_binds *b, int family, const uint8_t *addr, const struct dns_name *name,
		   uint32_t ttl_s, uint64_t now_ms);
bool name_binds_find(struct name_binds *b, int family, const uint8_t *addr, uint64_t now_ms,
		     name_binds_match_fn match, void *ctx, struct dns_name *found);
void name_binds_stats(struct name_binds *b, struct name_binds_stats *s);

#endif /* SANDNET_DATAPATH_NAMES_BIND_H */
