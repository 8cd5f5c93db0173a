/* SPDX-License-Identifier: MIT */
/*
 * flowlog.h - one record per conversation of the container, when it ends,
 * written by a thread of its own (theory of operation in flowlog.c)
 *
 * Below the face: libc, pthreads and counters.h. The face fills a record;
 * what becomes of it is this file's.
 */
#ifndef SANDNET_DATAPATH_FLOWLOG_H
#define SANDNET_DATAPATH_FLOWLOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "datapath/counters.h"

#define FLOWLOG_RING_DEFAULT	4096	/* records waiting for the writer, at most */
#define FLOWLOG_FOLLOWERS_MAX	8	/* `datapath flows --follow` at once */
#define FLOWLOG_NAME_MAX	253	/* a DNS name's text */
#define FLOWLOG_RULE_MAX	96	/* a policy rule's text (POLICY_TEXT_MAX) */

enum flowlog_verdict {
	FLOWLOG_ALLOW,
	FLOWLOG_DENY,
};

/* How a conversation ended: the "end" of its record (docs/face.md, "Flow log"). */
enum flowlog_end {
	FLOWLOG_END_CLOSED,	/* TCP: both sides closed (FIN both ways) */
	FLOWLOG_END_RESET,	/* TCP: either side reset it */
	FLOWLOG_END_REFUSED,	/* the remote end (or the container) refused it, or never answered */
	FLOWLOG_END_POLICY,	/* the policy refused it: nothing left */
	FLOWLOG_END_NAME,	/* TCP: its first bytes named a host no rule allows there, or never finished */
	FLOWLOG_END_IDLE,	/* UDP, ICMP: nothing for the idle time */
	FLOWLOG_END_EVICTED,	/* UDP, ICMP: a cap made room for a newer one */
	FLOWLOG_END_LIMIT,	/* no room for it (--max-conns and the like) */
	FLOWLOG_END_STOP,	/* the datapath stopped */
	FLOWLOG_END_MAX
};

/**
 * struct flowlog_record - one conversation, as its record says it
 * @end_unix_us:	when it ended (CLOCK_REALTIME)
 * @duration_us:	from its first packet to its end
 * @proto:		IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP or IPPROTO_ICMPV6
 * @family:		AF_INET or AF_INET6
 * @inbound:		the network began it (else the container)
 * @start:		a record of its start (--flow-log-starts): no counts, no end yet
 * @verdict, @end:	what the policy said, how it ended
 * @src, @sport:	who began it
 * @dst, @dport:	whom it was for (ICMP: the echo identifier is @sport)
 * @name:		the name it was for: the host its first bytes named, or
 *			the name its address was bound to ("": none)
 * @rule:		the rule that decided ("": none matched, the default)
 * @bytes_out, @packets_out: what the container sent (TCP: payload bytes and
 *			segments; UDP and ICMP: payload bytes and datagrams)
 * @bytes_in, @packets_in: what the container was given
 */
struct flowlog_record {
	uint64_t end_unix_us;
	uint64_t duration_us;
	uint8_t proto, family;
	bool inbound;
	bool start;
	uint8_t verdict, end;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	char name[FLOWLOG_NAME_MAX + 1];
	char rule[FLOWLOG_RULE_MAX];
	uint64_t bytes_out, packets_out;
	uint64_t bytes_in, packets_in;
};

/**
 * struct flowlog_stats - what the flow log did (flowlog_stats_table)
 * @records:	records written (to the file, or to a follower when there is
 *		no file)
 * @dropped:	records lost: the ring was full, or the file refused them
 * @followers:	live views attached now
 * @follower_dropped: records a follower too slow to read them missed
 */
struct flowlog_stats {
	uint64_t records;
	uint64_t dropped;
	uint64_t followers;
	uint64_t follower_dropped;
};

/**
 * struct flowlog - the ring the shards fill and the thread that empties it
 * @lock:	guards everything below but @on
 * @running:	the writer runs (it made its first system calls)
 * @starts:	a conversation that begins gets a record then too
 *		(--flow-log-starts)
 * @on:		a file or a follower takes records (read without @lock: a
 *		conversation with no taker costs one load)
 */
struct flowlog {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool started, running, stopping;
	bool starts;
	bool on;
	int fd;
	char *container;
	struct flowlog_record *ring, *batch;
	unsigned int cap, head, n;
	int followers[FLOWLOG_FOLLOWERS_MAX];
	unsigned int n_followers;
	struct flowlog_stats stats;
};

extern const struct stat_table flowlog_stats_table;
extern const char *const flowlog_end_names[FLOWLOG_END_MAX];

int flowlog_init(struct flowlog *fl, int fd, const char *container, unsigned int cap);
int flowlog_start(struct flowlog *fl);
void flowlog_fini(struct flowlog *fl);
bool flowlog_wanted(const struct flowlog *fl);
void flowlog_add(struct flowlog *fl, const struct flowlog_record *r);
int flowlog_follow(struct flowlog *fl, int fd);
void flowlog_stats(struct flowlog *fl, struct flowlog_stats *s);
void flowlog_print(FILE *f, const struct flowlog_record *r, const char *container);

#endif /* SANDNET_DATAPATH_FLOWLOG_H */
