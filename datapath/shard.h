/* SPDX-License-Identifier: MIT */
/*
 * shard.h - the datapath's shards: a stack per thread (docs/architecture.md,
 * "Shards")
 */
#ifndef SANDNET_DATAPATH_SHARD_H
#define SANDNET_DATAPATH_SHARD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "datapath/ledger.h"
#include "datapath/loop.h"
#include "datapath/net/net.h"
#include "datapath/policy.h"

#define SHARD_MAX	64

struct shard_msg;
struct shards;

/**
 * struct shard - one stack and the thread that runs it
 * @index:	0 .. n-1; shard 0 is the main thread's, with the process's
 *		loop and stack
 * @set:	the shards it belongs to
 * @loop, @st:	its own (shard 0: the process's)
 * @policy:	a copy of the policy, whose per-rule hits are the shard's
 * @ledger:	its share of the supervisor's ledger
 * @thread:	shards 1..n-1
 * @wake_fd:	eventfd: the inbox has something
 * @inbox:	messages from other shards, under @lock
 * @parked_gen:	the pause this shard last parked for (under the set's lock)
 */
struct shard {
	unsigned int index;
	struct shards *set;
	struct loop *loop;
	struct stack *st;
	struct policy policy;
	struct ledger ledger;
	pthread_t thread;
	bool thread_started;
	int wake_fd;
	struct loop_fd wake_lfd;
	pthread_mutex_t lock;
	struct shard_msg *inbox, *inbox_tail;
	uint64_t parked_gen;
};

/**
 * struct shards - every shard of the process
 * @n:		how many
 * @sh:		the shards; @sh[0] wraps the process's loop and stack
 * @lock, @cond: the start gate (@go; @at_gate threads wait there) and the
 *		pause of shards_pause() (@hold; @parked shards wait)
 * @pause_gen:	shards_pause() calls so far; a shard that parks notes it
 * @park_misses: pauses that a shard did not park for in time
 */
struct shards {
	unsigned int n;
	struct shard *sh[SHARD_MAX];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool go;
	unsigned int at_gate;
	bool hold;
	unsigned int parked;
	uint64_t pause_gen;
	uint64_t park_misses;
	bool steered;		/* netsetup sent the steering secret (shards_steer()) */
};

int shards_init(struct shards *s, struct loop *loop, struct stack *st);
int shards_grow(struct shards *s, unsigned int n, char *err, size_t err_len);
void shards_steer(struct shards *s, uint32_t seed);
int shards_spawn(struct shards *s, char *err, size_t err_len);
void shards_go(struct shards *s);
void shards_stop(struct shards *s);
void shards_free(struct shards *s);
/* How long shards_pause() waits for every shard to park (`datapath stats`). */
#define SHARD_PARK_MS	1000

int shards_pause(struct shards *s);
uint64_t shards_park_misses(struct shards *s);
uint64_t shards_cpu_ns(const struct shards *s, unsigned int i);
void shards_resume(struct shards *s);

#endif /* SANDNET_DATAPATH_SHARD_H */
