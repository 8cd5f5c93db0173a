// SPDX-License-Identifier: MIT
/*
 * limits.c - the resource caps: their options, their shares, and giving
 * them to the stack
 *
 * Theory of operation: --max-conns, --max-half-open, --max-timewait,
 * --tcp-mem, --reasm-mem, --max-neigh, --max-udp-flows,
 * --max-udp-flows-per-source and --icmp-ratelimit (docs/security.md) are
 * rows of one table: the long option, the field, the range, whether K/M/G
 * may follow, whether each of N shards gets 1/N of it, and its line of
 * --help. The command line takes its options from the table
 * (limits_options(), limits_usage()), limits_parse() reads one,
 * limits_share() cuts a shard's share, and limits_apply() gives them to a
 * stack before the configuration arrives, so permanent neighbours count
 * too. What is not given takes the default of the module that enforces it;
 * the effective values stay in st->limits for `datapath stats`. A new cap is
 * one row here, its field in struct stack_limits and the code that
 * enforces it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/proc/limits.h"
#include "datapath/svc/svc.h"
#include "datapath/net/tcp_glue.h"
#include "datapath/tcp/tcp.h"

/**
 * struct limit_opt - one cap
 * @opt:	its long option (val 'L': the command line's mark for a cap)
 * @off:	its field in struct stack_limits, a uint64_t when @wide, else
 *		a uint32_t
 * @min, @max:	its range
 * @bytes:	K, M or G may follow the number
 * @zero_off:	0 means no cap: stored as SVC_UDP_NO_CAP
 * @shared:	a total of the process: each of N shards gets 1/N, at least 1
 * @usage:	its --help text after the option and its argument
 */
struct limit_opt {
	struct option opt;
	size_t off;
	bool wide;
	uint64_t min, max;
	bool bytes;
	bool zero_off;
	bool shared;
	const char *usage;
};

#define LIM32(f) .off = offsetof(struct stack_limits, f)
#define LIM64(f) .off = offsetof(struct stack_limits, f), .wide = true

/* A source's flows all reach one shard: --max-udp-flows-per-source stays whole. */
static const struct limit_opt limit_opts[] = {
	{ { "max-conns", required_argument, NULL, 'L' }, LIM32(max_conns), .min = 16, .max = 1u << 22,
	  .shared = true, .usage = "TCP connections, every state (default 65536)" },
	{ { "max-half-open", required_argument, NULL, 'L' }, LIM32(max_half_open), .min = 1, .max = 1u << 20,
	  .shared = true, .usage = "SYN-RECEIVED connections; then SYN cookies (default 1024)" },
	{ { "max-timewait", required_argument, NULL, 'L' }, LIM32(max_timewait), .min = 1, .max = 1u << 22,
	  .shared = true, .usage = "TIME-WAIT connections; then the oldest goes (default 4096)" },
	{ { "tcp-mem", required_argument, NULL, 'L' }, LIM64(tcp_mem), .min = 1u << 20, .max = 1ull << 40,
	  .bytes = true, .shared = true, .usage = "TCP send+receive buffers in all; then no growth (default 256M)" },
	{ { "reasm-mem", required_argument, NULL, 'L' }, LIM64(reasm_mem), .min = 128u << 10, .max = 1ull << 32,
	  .bytes = true, .shared = true, .usage = "IP fragments held for reassembly (default 4M)" },
	{ { "max-neigh", required_argument, NULL, 'L' }, LIM32(neigh_max), .min = 4, .max = NEIGH_MAX,
	  .usage = "neighbour (ARP/NDP) entries, at most 512 (default 512)" },
	{ { "max-udp-flows", required_argument, NULL, 'L' }, LIM32(udp_flows), .min = 1, .max = 1u << 20,
	  .shared = true, .usage = "UDP service flows in all; then the least recently used\n"
				   "                      goes (default 4096)" },
	{ { "max-udp-flows-per-source", required_argument, NULL, 'L' }, LIM32(udp_flows_per_source), .min = 0,
	  .max = 1u << 20, .zero_off = true,
	  .usage = "--publish udp flows per source address; then\n"
		   "                      that source's least recently used goes (default 256, 0 = off)" },
	{ { "icmp-ratelimit", required_argument, NULL, 'L' }, LIM32(icmp_rate), .min = 1, .max = 1000000,
	  .shared = true, .usage = "ICMP errors a second the datapath sends (default 1000)" },
};

#define LIMIT_OPTS	(sizeof(limit_opts) / sizeof(limit_opts[0]))
_Static_assert(LIMIT_OPTS <= LIMITS_OPTIONS_MAX, "the command line's room for the caps");

static uint64_t limit_get(const struct limit_opt *cl, const struct stack_limits *lim)
{
	const char *p = (const char *)lim + cl->off;

	return cl->wide ? *(const uint64_t *)p : *(const uint32_t *)p;
}

static void limit_set(const struct limit_opt *cl, struct stack_limits *lim, uint64_t v)
{
	char *p = (char *)lim + cl->off;

	if (cl->wide)
		*(uint64_t *)p = v;
	else
		*(uint32_t *)p = (uint32_t)v;
}

/**
 * limits_options() - the caps' long options, for getopt_long()
 * @o:		receives them (their val is 'L')
 * @room:	entries @o has
 *
 * Return: how many were written (all of them, or @room).
 */
unsigned int limits_options(struct option *o, unsigned int room)
{
	unsigned int i;

	for (i = 0; i < LIMIT_OPTS && i < room; i++)
		o[i] = limit_opts[i].opt;
	return i;
}

/**
 * limits_usage() - the caps' lines of --help
 * @f:	the stream
 */
void limits_usage(FILE *f)
{
	unsigned int i;

	for (i = 0; i < LIMIT_OPTS; i++) {
		char head[48];

		snprintf(head, sizeof(head), "--%s %s", limit_opts[i].opt.name, limit_opts[i].bytes ? "BYTES" : "N");
		fprintf(f, "  %-19s%s%s\n", head, strlen(head) < 19 ? " " : "  ", limit_opts[i].usage);
	}
}

/**
 * limits_share() - one shard's share of the process's caps
 * @total:	the process's caps, the defaults filled in (limits_apply()'s
 *		st->limits)
 * @n:		shards
 * @share:	receives 1/@n of each cap that is a total, at least 1; the
 *		others as they are
 */
void limits_share(const struct stack_limits *total, unsigned int n, struct stack_limits *share)
{
	unsigned int i;

	*share = *total;
	for (i = 0; i < LIMIT_OPTS && n > 1; i++) {
		uint64_t v = limit_get(&limit_opts[i], total);

		if (limit_opts[i].shared && v)
			limit_set(&limit_opts[i], share, v / n ? v / n : 1);
	}
}

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

	for (i = 0; i < LIMIT_OPTS; i++)
		if (!strcmp(limit_opts[i].opt.name, opt))
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
	limit_set(cl, lim, v);
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
	if (!e.icmp_rate)
		e.icmp_rate = STACK_ICMP_RATE_DEFAULT;
	stack_set_icmp_rate(st, e.icmp_rate);
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

/*
 * What the cgroup is charged for a datapath before its first connection,
 * and for each connection pair held idle (both engines' state and the
 * face's pair), with room: held to 64 MiB, 2730 idle pairs were charged
 * 12 MiB at the peak and 10 000 35 MiB (tests/integration/chaos_memlimit.sh,
 * 7 Dec 2026): about 3.5 MiB and 3.2 KiB. Its receive rings are mapped
 * kernel memory, not charged.
 */
#define LIMITS_MEM_BASE		(16ull << 20)
#define LIMITS_MEM_PAIR		4096u
#define LIMITS_MEM_BUDGET_MIN	(8ull << 20)

/**
 * limits_memory_limit() - the memory limit of the cgroup this process is in
 * @bytes:	receives it
 *
 * cgroup v1 (memory.limit_in_bytes of the memory controller's cgroup) or v2
 * (memory.max of the unified one), as /proc/self/cgroup names them.
 *
 * Return: 0, or -ENOENT when there is none (no memory controller, "max", or
 * a limit larger than the machine could ever mean).
 */
int limits_memory_limit(uint64_t *bytes)
{
	char line[4096], path[4200];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int ret = -ENOENT;

	if (!f)
		return -ENOENT;
	while (ret && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *cg = ctl ? strchr(ctl + 1, ':') : NULL;
		unsigned long long v;
		FILE *m;

		if (!cg)
			continue;
		*cg++ = '\0';
		cg[strcspn(cg, "\n")] = '\0';
		if (!strcmp(ctl + 1, "memory"))
			snprintf(path, sizeof(path), "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", cg);
		else if (!ctl[1] && !strcmp(line, "0"))
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", cg);
		else
			continue;
		m = fopen(path, "re");
		if (!m)
			continue;
		/* "max" (v2) does not scan; v1's "no limit" is a page-rounded LONG_MAX */
		if (fscanf(m, "%llu", &v) == 1 && v < (1ull << 50)) {
			*bytes = v;
			ret = 0;
		}
		fclose(m);
	}
	fclose(f);
	return ret;
}

/**
 * limits_fit_memory() - the caps the command line left to their defaults,
 * made to fit a memory limit
 * @lim:	the caps as given (zero: not given)
 * @mem:	the limit, in bytes (limits_memory_limit())
 *
 * The defaults (65536 connections, 256 MiB of TCP buffers per engine) are
 * for a machine, not for a container's datapath held to 64 MiB by its
 * cgroup: there, connections carrying data could take their buffers past
 * the limit, and the kernel's OOM killer would end the datapath (and the
 * container's network, fenced, with it) before a cap was reached. So, as the
 * kernel sizes tcp_mem from the memory it has, what is left after
 * LIMITS_MEM_BASE is shared out: half to the two TCP engines' buffers
 * (--tcp-mem, a quarter each), half to connections at LIMITS_MEM_PAIR each
 * (--max-conns, and --max-timewait at most half of it). A cap given on the
 * command line is kept as given. Only ever lowers a default.
 *
 * Return: true when a cap was lowered.
 */
bool limits_fit_memory(struct stack_limits *lim, uint64_t mem)
{
	uint64_t budget = mem > LIMITS_MEM_BASE + LIMITS_MEM_BUDGET_MIN ? mem - LIMITS_MEM_BASE :
									  LIMITS_MEM_BUDGET_MIN;
	uint64_t tcp_mem = budget / 4, conns = budget / 2 / LIMITS_MEM_PAIR;
	bool lowered = false;

	if (!lim->tcp_mem && tcp_mem < TCP_MAX_BUF_MEM_DEFAULT) {
		lim->tcp_mem = tcp_mem;
		lowered = true;
	}
	if (!lim->max_conns && conns < TCP_MAX_CONNS_DEFAULT) {
		lim->max_conns = (uint32_t)conns;
		lowered = true;
	}
	if (!lim->max_timewait && lim->max_conns && lim->max_conns / 2 < TCP_MAX_TIMEWAIT_DEFAULT) {
		lim->max_timewait = lim->max_conns / 2;
		lowered = true;
	}
	return lowered;
}
