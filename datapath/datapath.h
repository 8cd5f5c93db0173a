/* SPDX-License-Identifier: MIT */
/*
 * datapath.h - the program: its command line, for the supervisor and its
 * datapaths alike
 *
 *   main.c       options; `datapath` as a supervisor, a worker (the datapath
 *                proper) or a client (stats, ss, metrics)
 *   supervise.c  the supervisor: holds the fds, starts datapaths on them
 *
 * The two entry points stand above the datapath's areas and wire them: the
 * process (proc/proc.h: struct dp, the configuration, the shards, the caps,
 * the privileges, the system call filter) and its observability (obs/obs.h:
 * the control socket, stats, ss, the exporter), which reads the process.
 * Neither area includes this header.
 */
#ifndef SANDNET_DATAPATH_DATAPATH_H
#define SANDNET_DATAPATH_DATAPATH_H

#include <stdbool.h>

#include "datapath/net/net.h"
#include "datapath/policy.h"
#include "datapath/proc/shard.h"
#include "datapath/svc/svc.h"

#define DP_MAX_SVCS	SHARD_MAX_SVCS
/* glibc's heap (main.c): free memory kept at a heap's top before it goes
 * back, and the size from which an allocation gets its own mmap(). */
#define DP_HEAP_KEEP		(4u << 20)
#define DP_HEAP_MMAP_FROM	(1u << 20)

/* The crash-loop limit: that many deaths within that many seconds, and dark. */
#define DP_MAX_DEATHS_DEFAULT		5
#define DP_DEATH_WINDOW_S_DEFAULT	60
#define DP_BUSY_POLL_US_DEFAULT	50	/* --busy-poll: TCP_RR 1.5x on this guest (docs/benchmarks.md) */
#define DP_BUSY_POLL_US_MAX	1000
#define DP_NICE_DEFAULT		10	/* --nice: UDP at 1 Gbit/s lost 2-4 % against 18-34 % (docs/benchmarks.md) */
#define DP_NICE_MAX		19

/**
 * struct dp_opts - the command line, for the supervisor and its datapaths
 * @fd, @listen:	where netsetup's configuration comes from
 * @user:		--user
 * @control:		--control (the supervisor binds it)
 * @name:		--name
 * @flow_log:		--flow-log (the supervisor opens it)
 * @flow_log_starts:	--flow-log-starts
 * @specs, @n_specs:	--publish and --forward
 * @limits:		the resource caps
 * @policy:		the container face's policy
 * @max_deaths, @death_window_s: the crash-loop limit (supervisor)
 * @busy_poll_us:	--busy-poll (loop.c, loop_set_busy_poll())
 * @nice:		--nice: the datapath's nice value (0: left as started)
 * @shards:		--shards: what the supervisor asks netsetup for in HELLO
 *			(netsetup's own --shards wins); 0 (auto, the default):
 *			one per CPU it may run on
 * @worker:		started by a supervisor (--worker: internal)
 * @ledger_fd, @control_fd: a worker's inherited ledger and control socket
 * @flow_log_fd:	a worker's inherited flow log file, or -1
 * @listen_fds, @n_listen_fds: a worker's inherited forward listeners, one per
 *			--forward, in order
 * @strip:		per argv index: an option the supervisor does not pass
 *			on to its datapaths (--fd, --listen, --control,
 *			--flow-log)
 */
struct dp_opts {
	int fd;
	const char *listen;
	const char *user;
	const char *control;
	const char *name;
	const char *flow_log;
	bool flow_log_starts;
	unsigned int n_specs;
	struct svc_spec specs[DP_MAX_SVCS];
	struct stack_limits limits;
	struct stack_tcp_settings tcp_settings;
	struct policy policy;
	unsigned int max_deaths;
	unsigned int death_window_s;
	unsigned int busy_poll_us;
	unsigned int nice;
	unsigned int shards;
	bool worker;
	int ledger_fd;
	int control_fd;
	int flow_log_fd;
	unsigned int n_listen_fds;
	int listen_fds[DP_MAX_SVCS];
	bool *strip;
};

/* supervise.c */
int supervise_main(const struct dp_opts *o, int argc, char **argv);

#endif /* SANDNET_DATAPATH_DATAPATH_H */
