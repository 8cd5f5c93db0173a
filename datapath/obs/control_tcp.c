// SPDX-License-Identifier: MIT
/*
 * control_tcp.c - `datapath ss`: the TCP connections of every shard and
 * engine, and traces of their senders, over the control socket
 *
 * Theory of operation
 *
 * Requests (one line each, control_proto.h):
 *   conns [json]          every connection of both engines of every shard
 *                         (the network side's, "network", and the
 *                         container face's, "container"), `ss -ti` style;
 *                         read while the other shards are parked
 *   trace start [FILTER]  follow the connections FILTER matches (ADDR,
 *                         ADDR:PORT, [V6ADDR]:PORT, :PORT, or nothing for
 *                         all) in every engine: each ACK they process, and
 *                         each of their timer events, becomes a sample
 *                         queued per engine (net/tcp_trace_queue.c)
 *   trace read            the queued samples, one JSON object a line,
 *                         then {"trace":"end","samples":N,"dropped":N}
 *   trace stop            stop following
 * Starting and stopping park the shards (the engines' filters change); a
 * read does not: each queue has one writer (its shard) and one reader
 * (this thread). A trace nobody reads for CONTROL_TRACE_IDLE_MS stops by itself,
 * so a client that died cannot leave the engines sampling for ever.
 *
 * The client is control_client.c's control_ss_client().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/out.h"
#include "datapath/obs/control_proto.h"
#include "datapath/obs/obs_int.h"
#include "datapath/proc/proc.h"
#include "datapath/face/face.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/proc/shard.h"

#define TRACE_QUEUE_SAMPLES	65536u	/* per engine, between two reads */

static unsigned int control_tcp_n_shards(const struct dp *dp)
{
	return dp->shards->n;
}

static struct stack *control_tcp_stack(const struct dp *dp, unsigned int i)
{
	return &dp->shards->sh[i]->st;
}

/* The engines of shard @i: the network side's and the face's (or NULL). */
static struct tcp_glue *control_tcp_glue(const struct dp *dp, unsigned int i, bool container)
{
	struct stack *st = control_tcp_stack(dp, i);

	return container ? face_tcp_glue(face_of(st)) : st->tcp;
}

static const char *const control_tcp_engine_names[] = { "network", "container" };

/* `datapath ss`: every connection, the shards parked. */
static int control_tcp_conns(struct dp *dp, FILE *f, bool json)
{
	struct shards *sh = dp->shards;
	int ret = shards_pause(sh);
	struct out o;
	unsigned int i, e;

	if (ret < 0)
		return ret;
	out_init_formatted(&o, f, json);
	out_arr_begin(&o, NULL);
	for (i = 0; i < control_tcp_n_shards(dp); i++)
		for (e = 0; e < 2; e++) {
			struct tcp_glue *g = control_tcp_glue(dp, i, e);

			if (g)
				tcp_glue_print_ss(g, &o, i, control_tcp_engine_names[e]);
		}
	out_arr_end(&o);
	out_finish(&o);
	shards_resume(sh);
	return 0;
}

/*
 * FILTER: nothing (everything), ADDR, ADDR:PORT, [V6ADDR]:PORT, V6ADDR or
 * :PORT. Return: 0, -EINVAL.
 */
static int control_tcp_filter(const char *s, struct tcp_trace_filter *f)
{
	char addr[INET6_ADDRSTRLEN + 2];
	const char *port = NULL, *colon;
	size_t alen;

	memset(f, 0, sizeof(*f));
	f->any_addr = true;
	while (*s == ' ')
		s++;
	if (!*s)
		return 0;
	if (*s == '[') {
		const char *end = strchr(s, ']');

		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		alen = (size_t)(end - s - 1);
		if (alen >= sizeof(addr))
			return -EINVAL;
		memcpy(addr, s + 1, alen);
		addr[alen] = '\0';
		if (end[1] == ':')
			port = end + 2;
	} else {
		colon = strchr(s, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL;	/* an IPv6 address without a port */
		alen = colon ? (size_t)(colon - s) : strlen(s);
		if (alen >= sizeof(addr))
			return -EINVAL;
		memcpy(addr, s, alen);
		addr[alen] = '\0';
		if (colon)
			port = colon + 1;
	}
	if (*addr) {
		f->any_addr = false;
		if (inet_pton(AF_INET, addr, &f->addr.a.v4) == 1)
			f->addr.family = AF_INET;
		else if (inet_pton(AF_INET6, addr, &f->addr.a.v6) == 1)
			f->addr.family = AF_INET6;
		else
			return -EINVAL;
	}
	if (port) {
		char *end;
		unsigned long v = strtoul(port, &end, 10);

		if (end == port || *end || !v || v > 65535)
			return -EINVAL;
		f->port = (uint16_t)v;
	}
	return 0;
}

static void control_tcp_trace_stop_all(struct dp *dp)
{
	unsigned int i, e;

	for (i = 0; i < control_tcp_n_shards(dp); i++)
		for (e = 0; e < 2; e++) {
			struct tcp_glue *g = control_tcp_glue(dp, i, e);

			if (g)
				tcp_glue_trace_stop(g);
		}
	dp->tracing = false;
	loop_timer_cancel(dp->loop, &dp->trace_timer);
}

/* Stop a trace nobody reads (the client died). */
static void control_tcp_trace_idle(struct loop_timer *t)
{
	struct dp *dp = t->ctx;
	struct shards *sh = dp->shards;

	if (!dp->tracing)
		return;
	if (loop_now_ms(dp->loop) - dp->trace_read_ms < CONTROL_TRACE_IDLE_MS) {
		loop_timer_arm(dp->loop, &dp->trace_timer, 1000);
		return;
	}
	if (shards_pause(sh) < 0) {
		loop_timer_arm(dp->loop, &dp->trace_timer, 1000);	/* a shard is busy: next time */
		return;
	}
	control_tcp_trace_stop_all(dp);
	fprintf(stderr, "datapath: a trace nobody read for %u s stopped\n", CONTROL_TRACE_IDLE_MS / 1000);
	shards_resume(sh);
}

static int control_tcp_trace_start(struct dp *dp, const char *arg, FILE *f)
{
	struct shards *sh = dp->shards;
	struct tcp_trace_filter flt;
	unsigned int i, e;
	int ret;

	if (control_tcp_filter(arg, &flt) < 0) {
		fprintf(f, CONTROL_ERROR " trace filter '%s': expected ADDR, ADDR:PORT, [ADDR]:PORT or :PORT\n", arg);
		return 0;
	}
	ret = shards_pause(sh);
	if (ret < 0)
		return ret;
	for (i = 0; i < control_tcp_n_shards(dp) && !ret; i++)
		for (e = 0; e < 2 && !ret; e++) {
			struct tcp_glue *g = control_tcp_glue(dp, i, e);

			if (g)
				ret = tcp_glue_trace_start(g, &flt, TRACE_QUEUE_SAMPLES);
		}
	if (ret < 0) {
		control_tcp_trace_stop_all(dp);
	} else {
		dp->tracing = true;
		dp->trace_read_ms = loop_now_ms(dp->loop);
		loop_timer_init(&dp->trace_timer, control_tcp_trace_idle, dp);
		loop_timer_arm(dp->loop, &dp->trace_timer, 1000);
	}
	shards_resume(sh);
	if (ret < 0)
		return ret;
	fprintf(f, "ok\n");
	return 0;
}

struct control_tcp_read {
	FILE *f;
	unsigned int shard;
	const char *engine;
};

static void control_tcp_sample(void *arg, const struct tcp_trace_sample *s)
{
	const struct control_tcp_read *r = arg;

	tcp_glue_trace_print(r->f, s, r->shard, r->engine);
}

static int control_tcp_trace_read(struct dp *dp, FILE *f)
{
	uint64_t dropped = 0, d;
	long n = 0, got;
	unsigned int i, e;

	if (!dp->tracing) {
		fprintf(f, CONTROL_ERROR " no trace is running (trace start first)\n");
		return 0;
	}
	dp->trace_read_ms = loop_now_ms(dp->loop);
	for (i = 0; i < control_tcp_n_shards(dp); i++)
		for (e = 0; e < 2; e++) {
			struct tcp_glue *g = control_tcp_glue(dp, i, e);
			struct control_tcp_read r = { f, i, control_tcp_engine_names[e] };

			if (!g)
				continue;
			got = tcp_glue_trace_drain(g, control_tcp_sample, &r, &d);
			if (got > 0)
				n += got;
			if (got >= 0)
				dropped += d;
		}
	fprintf(f, "{\"trace\":\"end\",\"samples\":%ld,\"dropped\":%llu}\n", n, (unsigned long long)dropped);
	return 0;
}

static int control_tcp_trace_stop(struct dp *dp, FILE *f)
{
	struct shards *sh = dp->shards;
	int ret = shards_pause(sh);

	if (ret < 0)
		return ret;
	control_tcp_trace_stop_all(dp);
	shards_resume(sh);
	fprintf(f, "ok\n");
	return 0;
}

/**
 * control_tcp_request() - answer the requests of `datapath ss`
 * @dp:		the datapath
 * @req:	the request line, without its newline
 * @f:		the answer
 *
 * Return: 0 (answered, an error line included), -ENOENT when @req is none
 * of them, another negative errno with nothing written (a shard busy).
 */
int control_tcp_request(struct dp *dp, const char *req, FILE *f)
{
	if (!strcmp(req, CONTROL_REQ_CONNS))
		return control_tcp_conns(dp, f, false);
	if (!strcmp(req, CONTROL_REQ_CONNS_JSON))
		return control_tcp_conns(dp, f, true);
	if (!strncmp(req, CONTROL_REQ_TRACE_START, strlen(CONTROL_REQ_TRACE_START)) &&
	    (!req[strlen(CONTROL_REQ_TRACE_START)] || req[strlen(CONTROL_REQ_TRACE_START)] == ' '))
		return control_tcp_trace_start(dp, req + strlen(CONTROL_REQ_TRACE_START), f);
	if (!strcmp(req, CONTROL_REQ_TRACE_READ))
		return control_tcp_trace_read(dp, f);
	if (!strcmp(req, CONTROL_REQ_TRACE_STOP))
		return control_tcp_trace_stop(dp, f);
	return -ENOENT;
}

/**
 * control_tcp_close() - the datapath stops: no trace survives it
 * @dp:		the datapath (its shards stopped)
 */
void control_tcp_close(struct dp *dp)
{
	if (dp->tracing)
		control_tcp_trace_stop_all(dp);
}
