/* SPDX-License-Identifier: MIT */
/*
 * obs.h - the datapath's observability area: the control socket, both its
 * ends, as the process's entry points call them
 *
 * The observability area is what shows a running datapath to an operator:
 *
 *   control.c         the control socket, the datapath's side (this header)
 *   control_tcp.c     the answers of `datapath ss` (obs_int.h)
 *   control_client.c  the asking end: `datapath stats`, `stats --all`, `ss`
 *   control_flows.c   the asking end of `datapath flows --follow`: the
 *                     flow log (datapath/flowlog.c), live
 *   control_ask.c     every control socket of a folder, asked at once
 *                     (control_ask.h)
 *   control_proto.h   the control socket's words, for both its ends
 *   stats.c           every counter and the summary, rendered from the
 *                     layers' tables (stats.h)
 *   metrics.c metrics_expo.c metrics_scrape.c   `datapath metrics`, the
 *                     Prometheus exporter (metrics.h, metrics_expo.h,
 *                     metrics_scrape.h)
 *
 * It reads the process (struct dp, the shards: proc/proc.h, proc/shard.h)
 * and the layers' counter tables, and changes none of them but to park the
 * shards while it reads. Nothing of the process area or the layers below
 * includes a header of this folder; the program's entry points (main.c,
 * supervise.c) do. obs_int.h holds what only this area's files share.
 */
#ifndef SANDNET_DATAPATH_OBS_H
#define SANDNET_DATAPATH_OBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct dp;

/* control.c */
/* Prints the answer, or returns negative errno having written nothing. */
typedef int (*control_print_fn)(void *ctx, FILE *f, bool json, bool summary);
/* Any other request (its line without the newline): -ENOENT for an unknown one. */
/* A request more than the stats: its answer into @f; or CONTROL_FD_TAKEN: it keeps @fd, answered. */
typedef int (*control_request_fn)(void *ctx, const char *req, FILE *f, int fd);
#define CONTROL_FD_TAKEN	1
int control_bind(const char *path, char *err, size_t err_len);
void control_answer(int listen_fd, control_print_fn print, control_request_fn more, void *ctx);
int control_adopt(struct dp *dp, int fd);
int control_start(struct dp *dp);
void control_close(struct dp *dp);

/* control_client.c */
int control_request(const char *path, const char *req, char **out, size_t *out_len, char *err, size_t err_len);
int control_client(const char *path, bool json, FILE *out, char *err, size_t err_len);
int control_client_all(const char *dir, bool json, FILE *out, char *err, size_t err_len);
/* control_flows.c */
int control_flows_client(const char *path, bool json, unsigned int seconds, FILE *out, char *err, size_t err_len);
int control_ss_client(const char *path, bool json, const char *filter, const char *trace, unsigned int seconds,
		      char *err, size_t err_len);

#endif /* SANDNET_DATAPATH_OBS_H */
