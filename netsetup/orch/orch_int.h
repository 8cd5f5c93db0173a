/* SPDX-License-Identifier: MIT */
/*
 * orch_int.h - what the files of netsetup's orchestration share among
 * themselves, and no front end needs (orch.h is what they do need)
 *
 * attach.c writes the state file (state.c), speaks to the datapath
 * (handoff.c), makes its status file and records its start time
 * (dpproc.c); giveback.c stops it (dpproc.c). The unit tests and the fuzz
 * target reach in here too.
 */
#ifndef SANDNET_NETSETUP_ORCH_INT_H
#define SANDNET_NETSETUP_ORCH_INT_H

#include <stdio.h>

#include "netsetup/orch/orch.h"

#define NS_SOFTWARE		"sandnet-netsetup " SANDNET_VERSION
#define NS_STATE_DIR		"/run/sandnet"

/* --- state.c ---------------------------------------------------------- */

int ns_state_write(const char *path, const struct ns_state *st, struct ns_err *e);
int ns_state_format(FILE *f, const struct ns_state *st);
int ns_state_parse(FILE *f, struct ns_state *st, struct ns_err *e);

/* --- giveback.c ------------------------------------------------------- */

void ns_state_files_remove(const char *path);

/* --- handoff.c -------------------------------------------------------- */

int ns_handoff_connect(const char *path, int *sockp, struct ns_err *e);
int ns_handoff_hello(int sock, bool face, uint8_t *minorp, unsigned int *shardsp, struct ns_err *e);
int ns_handoff_links(int sock, const struct ns_net *net, int *const *fds,
		     unsigned int n_channels, const struct ns_face *faces, int status_fd, const uint32_t *steer_seed,
		     struct ns_err *e);
int ns_link_to_proto(const struct ns_net *net, const struct ns_link *link,
		     struct proto_link *pl, struct ns_err *e);

/* --- dpproc.c --------------------------------------------------------- */

int ns_proc_start_time(pid_t pid, unsigned long long *ticksp);
int ns_datapath_stop(const struct ns_state *st, unsigned int timeout_ms);
int ns_status_path(const char *state_path, char *buf, size_t size);
int ns_status_open(const char *state_path, struct ns_err *e);

#endif /* SANDNET_NETSETUP_ORCH_INT_H */
