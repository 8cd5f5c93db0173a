// SPDX-License-Identifier: MIT
/*
 * limits.c - the resource caps: their options, and giving them to the stack
 *
 * Theory of operation: --max-conns, --max-half-open, --max-timewait,
 * --tcp-mem, --reasm-mem, --max-neigh, --max-udp-flows and
 * --max-udp-flows-per-source (docs/security.md) are parsed by
 * limits_parse() from one table (name, field, range, whether K/M/G may
 * follow), and given to the stack by limits_apply() before the
 * configuration arrives, so permanent neighbours count too. What is not
 * given takes the default of the module that enforces it; the effective
 * values stay in st->limits for `datapath stats`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/datapath.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/tcp/tcp.h"

/* One cap: its option, where it goes, its range, whether K/M/G are allowed. */
struct limit_opt {
	const char *opt;
	size_t off;
	bool wide;		/* uint64_t, else uint32_t */
	uint64_t min, max;
	bool bytes;
	bool zero_off;		/* 0 means no cap: stored as SVC_UDP_NO_CAP */
};

#define CL32(f) offsetof(struct stack_limits, f), false
#define CL64(f) offsetof(struct stack_limits, f), true
static const struct limit_opt limit_opts[] = {
	{ "max-conns", CL32(max_conns), 16, 1u << 22, false, false },
	{ "max-half-open", CL32(max_half_open), 1, 1u << 20, false, false },
	{ "max-timewait", CL32(max_timewait), 1, 1u << 22, false, false },
	{ "tcp-mem", CL64(tcp_mem), 1u << 20, 1ull << 40, true, false },
	{ "reasm-mem", CL64(reasm_mem), 128u << 10, 1ull << 32, true, false },
	{ "max-neigh", CL32(neigh_max), 4, NEIGH_MAX, false, false },
	{ "max-udp-flows", CL32(udp_flows), 1, 1u << 20, false, false },
	{ "max-udp-flows-per-source", CL32(udp_flows_per_source), 0, 1u << 20, false, true },
};

/**
 * limits_parse() - one resource cap option
 * @lim:	where the value goes
 * @opt:	the option's name without "--" (e.g. "tcp-mem")
 * @val:	its argument: a decimal number; byte sizes take K, M or G (1024s)
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0, -ENOENT (not a cap option) or -EINVAL (bad or out of range).
 */
int limits_parse(struct stack_limits *lim, const char *opt, const char *val, char *err,
		       size_t err_len)
{
	const struct limit_opt *cl = NULL;
	unsigned long long v;
	unsigned int i;
	char *end;

	for (i = 0; i < sizeof(limit_opts) / sizeof(limit_opts[0]); i++)
		if (!strcmp(limit_opts[i].opt, opt))
			cl = &limit_opts[i];
	if (!cl) {
		snprintf(err, err_len, "--%s: not a resource cap", opt);
		return -ENOENT;
	}
	errno = 0;
	v = strtoull(val, &end, 10);
	if (end == val || *val == '-' || errno) {
		snprintf(err, err_len, "--%s %s: not a number", opt, val);
		return -EINVAL;
	}
	if (cl->bytes && *end) {
		unsigned int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 :
				     *end == 'G' || *end == 'g' ? 30 : 0;

		if (!shift || end[1] || v > (UINT64_MAX >> shift)) {
			snprintf(err, err_len, "--%s %s: expected BYTES, optionally with K, M or G", opt, val);
			return -EINVAL;
		}
		v <<= shift;
		end++;
	}
	if (*end) {
		snprintf(err, err_len, "--%s %s: not a number", opt, val);
		return -EINVAL;
	}
	if (v < cl->min || v > cl->max) {
		snprintf(err, err_len, "--%s %s: out of range %" PRIu64 "..%" PRIu64, opt, val, cl->min,
			 cl->max);
		return -EINVAL;
	}
	if (cl->zero_off && !v)
		v = SVC_UDP_NO_CAP;
	if (cl->wide)
		*(uint64_t *)((char *)lim + cl->off) = v;
	else
		*(uint32_t *)((char *)lim + cl->off) = (uint32_t)v;
	return 0;
}

/**
 * limits_apply() - give the caps to a started (empty) stack
 * @st:		the stack, before any link or connection
 * @lim:	the caps; zero fields take the defaults
 *
 * Stores the effective values in @st->limits (what `datapath stats` shows).
 *
 * Return: 0 or negative errno from tcp_stack_set_limits().
 */
int limits_apply(struct stack *st, const struct stack_limits *lim)
{
	struct stack_limits e = *lim;

	if (!e.max_conns)
		e.max_conns = TCP_MAX_CONNS_DEFAULT;
	if (!e.max_half_open)
		e.max_half_open = TCP_MAX_HALF_OPEN_DEFAULT;
	if (!e.max_timewait)
		e.max_timewait = TCP_MAX_TIMEWAIT_DEFAULT;
	if (!e.tcp_mem)
		e.tcp_mem = TCP_MAX_BUF_MEM_DEFAULT;
	if (!e.udp_flows)
		e.udp_flows = SVC_UDP_MAX_FLOWS_DEFAULT;
	if (!e.udp_flows_per_source)
		e.udp_flows_per_source = SVC_UDP_FLOWS_PER_SOURCE_DEFAULT;
	st->limits = e;
	/* frag.c and neigh.c read these two through their own defaults */
	e.reasm_mem = ip_reasm_limit(st);
	e.neigh_max = neigh_limit(st);
	st->limits = e;
	if (!st->tcp)
		return 0;
	return tcp_stack_set_limits(tcp_glue_stack(st), e.max_conns, e.max_half_open, e.max_timewait,
				    e.tcp_mem);
}
