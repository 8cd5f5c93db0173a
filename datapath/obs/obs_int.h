/* SPDX-License-Identifier: MIT */
/*
 * obs_int.h - what the observability area's own files share: control.c
 * hands a `datapath ss` request to control_tcp.c (obs.h says what the area
 * offers the rest of the datapath)
 */
#ifndef SANDNET_DATAPATH_OBS_INT_H
#define SANDNET_DATAPATH_OBS_INT_H

#include <stdio.h>

struct dp;

/* control_tcp.c: `datapath ss` */
int control_tcp_request(struct dp *dp, const char *req, FILE *f);
void control_tcp_close(struct dp *dp);

#endif /* SANDNET_DATAPATH_OBS_INT_H */
