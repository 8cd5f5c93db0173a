/* SPDX-License-Identifier: MIT */
/*
 * status.h - the supervisor's state and its status file, for both programs
 *
 * The datapath's supervisor (datapath/supervise.c) writes the status file;
 * netsetup (netsetup/orch/dpproc.c) reads it. The states' names are also what
 * `datapath stats` says as supervisor.state and what the metrics label
 * sandnet_datapath_status with. docs/datapath.md "The status file" is the
 * format; status.c is its one writer and one reader.
 */
#ifndef SANDNET_PROTO_STATUS_H
#define SANDNET_PROTO_STATUS_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* What the supervisor is doing; the names are part of the file and the stats. */
enum proto_dp_state {
	PROTO_DP_STARTING,	/* the first datapath not serving yet */
	PROTO_DP_SERVING,	/* a datapath serves */
	PROTO_DP_RESTARTING,	/* between a death (or SIGHUP) and the next datapath serving */
	PROTO_DP_DARK,		/* a crash loop: no datapath, the container fenced and without network */
	PROTO_DP_STOPPED,	/* an explicit stop: the namespace may be given back */
	PROTO_DP_STATE_MAX	/* as read: a state this build does not know (a newer supervisor's) */
};

/* The largest status file proto_status_format() makes: every field at its longest fits. */
#define PROTO_STATUS_MAX_BYTES	1024

/**
 * struct proto_status - what the status file says
 * @state:	enum proto_dp_state; PROTO_DP_STATE_MAX when read from a newer
 *		supervisor whose word this build does not know
 * @supervisor:	its pid
 * @datapath:	the serving datapath's pid, 0 when none
 * @restarts:	datapaths started after the first
 * @deaths:	datapaths that ended without being asked to
 * @last_death:	"UNIXMS PID CAUSE" of the last, "" when none (written only
 *		when @deaths is not 0)
 * @reason:	why it is dark, "" otherwise (written only when dark)
 */
struct proto_status {
	enum proto_dp_state state;
	pid_t supervisor;
	pid_t datapath;
	unsigned int restarts;
	unsigned int deaths;
	char last_death[256];
	char reason[512];
};

const char *proto_dp_state_name(unsigned int state);
int proto_dp_state_parse(const char *name);

int proto_status_format(const struct proto_status *s, char *buf, size_t size);
int proto_status_write(int fd, const struct proto_status *s);

int proto_status_parse(FILE *f, struct proto_status *s);
int proto_status_read(const char *path, struct proto_status *s);

#endif /* SANDNET_PROTO_STATUS_H */
