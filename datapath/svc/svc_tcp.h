/* SPDX-License-Identifier: MIT */
/*
 * svc_tcp.h - TCP publish and forward services (theory of operation in
 * svc_tcp.c; the SPEC grammar is svc_spec.c's)
 */
#ifndef SANDNET_DATAPATH_SVC_TCP_H
#define SANDNET_DATAPATH_SVC_TCP_H

#include "datapath/svc/svc.h"

struct svc_tcp;
struct out;

struct svc_tcp *svc_tcp_new(struct stack *st, const struct svc_spec *spec, int listen_fd, char *err,
			    size_t err_len);
int svc_tcp_start(struct svc_tcp *s);
void svc_tcp_free(struct svc_tcp *s);
void svc_tcp_stats(const struct svc_tcp *const *v, unsigned int n, struct out *o);

#endif /* SANDNET_DATAPATH_SVC_TCP_H */
