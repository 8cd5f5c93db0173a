/* SPDX-License-Identifier: MIT */
/*
 * orch.h - netsetup's orchestration: what the front ends call
 *
 * The orchestration joins the kernel area's steps (kernel/kernel.h) to a
 * datapath: attach.c runs them in order and hands the result over
 * (handoff.c), for `netsetup attach` and `run` and for every front end that
 * attaches (CNI, the OCI hook, serve); state.c keeps what was taken in the
 * namespace's state file; giveback.c is the one sequence that gives a
 * namespace back; dpexec.c finds the datapath program, dpproc.c follows a
 * datapath that outlives the command that started it (orch_int.h: what
 * these files share among themselves).
 *
 * A front end (front/front.h) fills a struct ns_opts, from its command
 * line, its JSON or its request, and calls ns_attach(); nothing here
 * includes a front end's header.
 */
#ifndef SANDNET_NETSETUP_ORCH_H
#define SANDNET_NETSETUP_ORCH_H

#include "netsetup/kernel/kernel.h"
#include "proto/status.h"

#define NS_MAX_IFACES		32	/* --iface options */
#define NS_DATAPATH_TIMEOUT_S	30	/* longest wait for one datapath answer */

/* --- attach.c: what a front end asks for ------------------------------- */

enum ns_cmd {
	NS_CMD_NONE,
	NS_CMD_GSO_SHOW,
	NS_CMD_ATTACH,
	NS_CMD_RUN,
	NS_CMD_DETACH,
	NS_CMD_RESTART,
	NS_CMD_HELP,
	NS_CMD_MAX
};

/**
 * struct ns_opts - the parsed command line, or what a front end asks for
 * @child_argv: run: DATAPATH and its ARGS, NULL-terminated (points into argv)
 */
struct ns_opts {
	enum ns_cmd cmd;
	const char *netns_path;
	pid_t pid;
	bool json;
	bool all;			/* restart --all: every attached namespace */
	const char *show_iface;
	const char *datapath;
	const char *datapath_hint;	/* run: how to name another datapath, for messages (dpexec.c) */
	enum ns_gso_request gso;
	uint32_t gso_max_bytes;		/* 0: the link's own limit */
	unsigned int channels;
	unsigned int shards;		/* 0: the datapath's word (HELLO); 1: one; more: steered (steer.c) */
	unsigned int n_ifaces;
	const char *ifaces[NS_MAX_IFACES];
	const char *user;
	bool no_face;			/* --face off: the container stays dark (docs/netsetup.md) */
	char **child_argv;
	/* Set by the CNI plugin, the OCI hook and serve, never by the command line: */
	bool detach_child;		/* run: the datapath outlives us (own session, stdio to a log) */
	const char *owner;		/* recorded in the state file */
	pid_t *child_pidp;		/* receives the datapath's pid when detach_child */
	bool use_sock;			/* attach: @sock is the datapath, already connected */
	int sock;
	pid_t datapath_pid;		/* attach: recorded in the state as the datapath */
	unsigned int max_shards;	/* serve: the most the datapath's HELLO may get (0: 64) */
};

int ns_attach(const struct ns_opts *o, struct ns_err *e);

/* --- state.c ---------------------------------------------------------- */

const char *ns_state_dir(void);
int ns_state_path(uint64_t dev, uint64_t ino, char *buf, size_t size);
int ns_state_read(const char *path, struct ns_state *st, struct ns_err *e);

/* --- giveback.c: the one way a namespace goes back to its kernel ------- */

int ns_give_back(const char *path, struct ns_state *st, const char *netns_path, bool stop,
		 struct ns_err *e);

/* --- dpexec.c: find the datapath program ----------------------------- */

int ns_datapath_find(const char *name, const char *hint, char *path, size_t size, struct ns_err *e);

/* --- dpproc.c: datapaths that outlive the command that started them --- */

bool ns_datapath_alive(const struct ns_state *st);
int ns_datapath_netns_fd(const struct ns_state *st);

int ns_status_read(const char *state_path, struct proto_status *s);
int ns_state_find_owner(const char *owner, char *path, size_t size, struct ns_state *st,
			struct ns_err *e);

#endif /* SANDNET_NETSETUP_ORCH_H */
