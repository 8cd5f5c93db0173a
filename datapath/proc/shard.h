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
#include "datapath/svc/svc.h"

#define SHARD_MAX	64
#define SHARD_MAX_SVCS	64	/* --publish and --forward, together */

_Static_assert(SVC_MAX_INSTANCES >= SHARD_MAX, "a service instance per shard");

struct shard_msg;
struct shards;

/**
 * struct shard_conf - what every shard is made from, the same for each
 * @virtual_clock:	the loops' clock moves only when told (tests)
 * @busy_poll_us:	how long a loop polls before it sleeps
 * @policy:		the container face's policy, or NULL: each shard keeps
 *			a copy whose per-rule hits are its own
 * @ledger:		the supervisor's ledger, or NULL: each shard writes its
 *			slice (ledger_share())
 * @flowlog:		the flow log every shard's face writes to, or NULL
 * @secret:		the TCP engines' secret (32 bytes), or NULL
 * @limits:		the resource caps of the whole process: each shard
 *			gets its share (shard_share_out())
 * @tcp_settings:	the network side's TCP
 */
struct shard_conf {
	bool virtual_clock;
	unsigned int busy_poll_us;
	const struct policy *policy;
	struct ledger *ledger;
	struct flowlog *flowlog;
	const uint8_t *secret;
	struct stack_limits limits;
	struct stack_tcp_settings tcp_settings;
};

/**
 * struct shard - one stack, what runs on it, and the thread that runs it
 * @index:	0 .. n-1; shard 0 runs on the main thread, whose loop also
 *		holds the signals and the control socket
 * @set:	the shards it belongs to
 * @loop, @st:	its own
 * @policy:	its copy of the policy, whose per-rule hits are the shard's
 * @ledger:	its slice of the supervisor's ledger
 * @svc_udp:	what its UDP services share, made with the first service
 * @svc:	its instance of each service (shards_add_service()), NULL
 *		where the service runs on another shard
 * @thread:	shards 1..n-1
 * @wake_fd:	eventfd: the inbox has something
 * @inbox:	messages from other shards, under @lock
 * @parked_gen:	the pause this shard last parked for (under the set's lock)
 */
struct shard {
	unsigned int index;
	struct shards *set;
	struct loop *loop;
	struct stack st;
	struct policy policy;
	struct ledger ledger;
	struct svc_udp_table *svc_udp;
	struct svc *svc[SHARD_MAX_SVCS];
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
 * @conf:	what each is made from
 * @n:		how many
 * @n_svcs:	services given (--publish, --forward), each on the shards
 *		that run it
 * @sh:		the shards
 * @lock, @cond: the start gate (@go; @at_gate threads wait there) and the
 *		pause of shards_pause() (@hold; @parked shards wait)
 * @pause_gen:	shards_pause() calls so far; a shard that parks notes it
 * @park_misses: pauses that a shard did not park for in time
 */
struct shards {
	struct shard_conf conf;
	unsigned int n;
	unsigned int n_svcs;
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

int shards_init(struct shards *s, const struct shard_conf *conf, char *err, size_t err_len);
int shards_grow(struct shards *s, unsigned int n, char *err, size_t err_len);
int shards_add_service(struct shards *s, const struct svc_spec *spec, int listen_fd, char *err, size_t err_len);
int shards_start(struct shards *s);
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
