/* SPDX-License-Identifier: MIT */
/*
 * datapath.h - the process: its one context and the pieces main() wires up
 *
 *   config.c    receive the configuration from netsetup (proto/)
 *   limits.c    the resource caps' options, given to the stack
 *   privdrop.c  drop every privilege for good (libcap-ng)
 *   control.c   the control socket and `datapath stats`
 */
#ifndef SANDNET_DATAPATH_DATAPATH_H
#define SANDNET_DATAPATH_DATAPATH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "datapath/loop.h"
#include "datapath/net/net.h"
#include "datapath/svc/svc.h"
#include "datapath/svc/svc_tcp.h"

#define DP_MAX_SVCS	64
#define DP_SOFTWARE	"sandnet-datapath 0.1"

/**
 * struct dp - everything the datapath process runs
 * @loop:	the event loop
 * @st:		the stack
 * @svcs:	publish and forward services, UDP and TCP (svc.c)
 * @proto_fd:	the socket netsetup configured us through, -1 once closed
 * @control_fd:	listening control socket, -1 without --control
 * @start_ms:	loop time at start (uptime in stats)
 * @name:	--name: who the datapath serves ("cni:ID:IFNAME"), for stats
 */
struct dp {
	struct loop *loop;
	struct stack st;
	unsigned int n_svcs;
	struct svc *svcs[DP_MAX_SVCS];
	int proto_fd;
	struct loop_fd proto_lfd;
	int control_fd;
	struct loop_fd control_lfd;
	char control_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint64_t start_ms;
	const char *name;
};

/* config.c */
int config_accept(const char *path, int *fdp, char *err, size_t err_len);
int config_receive(struct stack *st, int fd, uint32_t *done_seq, char *err, size_t err_len);

/* limits.c */
int limits_parse(struct stack_limits *lim, const char *opt, const char *val, char *err, size_t err_len);
int limits_apply(struct stack *st, const struct stack_limits *lim);

/* privdrop.c */
int privdrop(const char *user, char *err, size_t err_len);

/* control.c */
int control_open(struct dp *dp, const char *path, char *err, size_t err_len);
int control_start(struct dp *dp);
void control_close(struct dp *dp);
void control_print_stats(struct dp *dp, FILE *f, bool json);
void control_print_summary(struct dp *dp, FILE *f, bool json);
int control_client(const char *path, bool json, char *err, size_t err_len);
int control_client_all(const char *dir, bool json, char *err, size_t err_len);

#endif /* SANDNET_DATAPATH_DATAPATH_H */
