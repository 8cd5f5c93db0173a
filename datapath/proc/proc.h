/* SPDX-License-Identifier: MIT */
/*
 * proc.h - the datapath's process area: the worker's context, and what
 * main() and the supervisor call to build it
 *
 * The process area is what a datapath process is made of, apart from the
 * layers that move packets (link/, net/, tcp/, svc/, face/):
 *
 *   config.c        receive the configuration from netsetup (proto/)
 *   shard.c         a stack per thread, when netsetup steered the links
 *                   (shard.h)
 *   limits.c        the resource caps' options, given to the stack (limits.h)
 *   tcp_settings.c  --tcp-cc, --tcp-ecn, --tcp-pacing, per link
 *   privdrop.c      drop every privilege for good (libcap-ng)
 *   seccomp.c       the system call filter (seccomp.h)
 *
 * It builds on the layers below and on the shared bases at the datapath's
 * top (loop.c, ledger.c, policy.c, ...) and knows nothing of the control
 * socket, the counters' rendering or the exporter: the observability area
 * (obs/) reads the process through struct dp and the shards, and the
 * program's entry points (main.c, supervise.c) stand above both.
 */
#ifndef SANDNET_DATAPATH_PROC_H
#define SANDNET_DATAPATH_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datapath/loop.h"

#define DP_SOFTWARE	"sandnet-datapath " SANDNET_VERSION

struct shards;
struct stack_tcp_settings;

/**
 * struct dp - everything the datapath process runs
 * @loop:	the main thread's event loop (shard 0's)
 * @shards:	the stacks, each with its services (shard.c)
 * @proto_fd:	the socket netsetup configured us through, -1 once closed
 * @control_fd:	listening control socket, -1 without --control
 * @start_ms:	loop time at start (uptime in stats)
 * @name:	--name: who the datapath serves ("cni:ID:IFNAME"), for stats
 */
struct flowlog;

struct dp {
	struct loop *loop;
	struct shards *shards;
	int proto_fd;
	struct loop_fd proto_lfd;
	int control_fd;
	struct loop_fd control_lfd;
	uint64_t start_ms;
	const char *name;
	struct flowlog *flowlog;	/* datapath/flowlog.c: `datapath flows --follow` */
	bool tracing;		/* `datapath ss --trace` (obs/control_tcp.c) */
	uint64_t trace_read_ms;
	struct loop_timer trace_timer;
};

/* config.c */
int config_accept(const char *path, int stop_fd, int *fdp, char *err, size_t err_len);
int config_receive(struct shards *sh, int fd, uint32_t *done_seq, char *err, size_t err_len);

/* tcp_settings.c */
int tcp_settings_parse(struct stack_tcp_settings *t, const char *opt, const char *val, char *err, size_t err_len);

/* privdrop.c */
int privdrop(const char *user, char *err, size_t err_len);

#endif /* SANDNET_DATAPATH_PROC_H */
