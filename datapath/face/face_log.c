// SPDX-License-Identifier: MIT
/*
 * face_log.c - the face's conversations, as the flow log records them
 *
 * Theory of operation: a conversation the face carries (a TCP pair, a UDP
 * flow, an echo flow) gets a record when it begins, if the flow log has a
 * taker then (flowlog_wanted()): its endpoints, the rule that let it
 * through and the name its address was bound to. When it ends, its owner
 * adds what it carried and how it ended, and face_log_end() hands it to
 * the flow log and frees it. A conversation the policy refuses is a record
 * at once (face_log_refused()). With --flow-log-starts, one let through
 * has a record when it begins too (face_log_begin()). Without a taker, none of this costs more
 * than a load and a branch per conversation.
 *
 * Which end is which: src and sport are who began it (the container for
 * egress), dst and dport whom it was for; bytes and packets "out" are what
 * the container sent, "in" what it was given.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "datapath/face/face_int.h"
#include "datapath/flowlog.h"
#include "datapath/policy.h"

/* A record with the conversation's endpoints, rule and name, or NULL (no taker, no memory). */
static struct flowlog_record *face_log_new(struct face *f, uint8_t proto, bool inbound, const struct net_addr *src,
					   uint16_t sport, const struct net_addr *dst, uint16_t dport,
					   const struct policy_rule *by)
{
	struct flowlog_record *r;
	struct dns_name name;

	if (!flowlog_wanted(f->st->flowlog))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->proto = proto;
	r->family = src->family;
	r->inbound = inbound;
	r->verdict = FLOWLOG_ALLOW;
	memcpy(r->src, src->a.bytes, net_addr_len(src->family));
	memcpy(r->dst, dst->a.bytes, net_addr_len(dst->family));
	r->sport = sport;
	r->dport = dport;
	r->duration_us = face_now_us(f);	/* its start, until face_log_end() */
	face_log_rule(r, by);
	if (!inbound && policy_bound_name(f->st->policy, by, dst, &name))
		face_log_name(r, name.text);
	return r;
}

/* Now, on the wall clock. */
static uint64_t face_log_unix_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/**
 * face_log_begin() - a record for a conversation that begins, when the flow
 * log has a taker
 * @f:		the face
 * @proto:	IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP or IPPROTO_ICMPV6
 * @inbound:	the network began it
 * @src, @sport: who began it
 * @dst, @dport: whom it is for
 * @by:		the rule that let it through, or NULL (the default)
 *
 * With --flow-log-starts, the start is a record of its own at once.
 *
 * Return: the record (the caller keeps it until face_log_end()), or NULL:
 * no taker, or no memory (the conversation is simply not recorded).
 */
struct flowlog_record *face_log_begin(struct face *f, uint8_t proto, bool inbound, const struct net_addr *src,
				      uint16_t sport, const struct net_addr *dst, uint16_t dport,
				      const struct policy_rule *by)
{
	struct flowlog_record *r = face_log_new(f, proto, inbound, src, sport, dst, dport, by);
	struct flowlog_record start;

	if (r && f->st->flowlog->starts) {
		start = *r;
		start.start = true;
		start.end_unix_us = face_log_unix_us();
		start.duration_us = 0;
		flowlog_add(f->st->flowlog, &start);
	}
	return r;
}

/**
 * face_log_rule() - the rule that decided, in @r
 * @r:	the record
 * @by:	the rule, or NULL: the default
 */
void face_log_rule(struct flowlog_record *r, const struct policy_rule *by)
{
	if (by)
		snprintf(r->rule, sizeof(r->rule), "%s", by->text);
	else
		r->rule[0] = '\0';
}

/**
 * face_log_name() - the name the conversation was for, in @r
 * @r:		the record
 * @name:	its text
 */
void face_log_name(struct flowlog_record *r, const char *name)
{
	snprintf(r->name, sizeof(r->name), "%s", name);
}

/**
 * face_log_end() - hand a record to the flow log, and free it
 * @f:		the face
 * @r:		the record (face_log_begin()), or NULL: nothing
 * @how:	how the conversation ended
 */
void face_log_end(struct face *f, struct flowlog_record *r, enum flowlog_end how)
{
	uint64_t now = face_now_us(f);

	if (!r)
		return;
	r->end_unix_us = face_log_unix_us();
	r->duration_us = now > r->duration_us ? now - r->duration_us : 0;
	r->end = (uint8_t)how;
	if (how == FLOWLOG_END_POLICY || how == FLOWLOG_END_NAME)
		r->verdict = FLOWLOG_DENY;
	if (f->st->flowlog)
		flowlog_add(f->st->flowlog, r);
	free(r);
}

/**
 * face_log_refused() - a conversation the policy refused: its record at once
 * @f:		the face
 * @proto, @inbound, @src, @sport, @dst, @dport: as face_log_begin()
 * @by:		the rule that refused it, or NULL (the default)
 * @name:	the name it asked for (a DNS query's), or NULL: the name its
 *		address is bound to, if any
 * @bytes:	the payload the container sent (0 for a TCP SYN)
 */
void face_log_refused(struct face *f, uint8_t proto, bool inbound, const struct net_addr *src, uint16_t sport,
		      const struct net_addr *dst, uint16_t dport, const struct policy_rule *by, const char *name,
		      size_t bytes)
{
	struct flowlog_record *r = face_log_new(f, proto, inbound, src, sport, dst, dport, by);

	if (!r)
		return;
	if (name)
		face_log_name(r, name);
	if (!inbound) {
		r->bytes_out = bytes;
		r->packets_out = 1;
	}
	face_log_end(f, r, FLOWLOG_END_POLICY);
}
