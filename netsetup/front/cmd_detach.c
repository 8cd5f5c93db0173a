// SPDX-License-Identifier: MIT
/*
 * cmd_detach.c - `netsetup detach`: give back what attach took
 *
 * Theory of operation: the namespace's state file (state.c) lists what
 * attach removed; giveback.c's one sequence stops the datapath the state
 * records (the supervisor that `run`, a CNI ADD, the OCI hook or serve
 * started or attached: it would otherwise go on answering for addresses the
 * kernel holds again), restores the namespace (idempotent) and removes the
 * state file and its companions only when everything went back, so that a
 * failed detach can be run again. It is how a namespace that stayed dark
 * after its datapath's supervisor died is given back.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "netsetup/front/front.h"

/**
 * ns_attached_open() - the namespace a command line names, and its state:
 * how detach and restart begin
 * @o:		parsed options (--netns or --pid)
 * @keep:	the capabilities the command keeps once the namespace is open
 *		(privs.c)
 * @stage:	the command, for messages
 * @ns:		receives the open namespace; ns_netns_close() it
 * @path:	receives the state file's path
 * @size:	size of @path
 * @st:		receives the state; ns_state_free() it
 * @e:		error message
 *
 * Return: 0, -ENOENT when the namespace is not attached ("netns X is not
 * attached (no state file P)"), other -errno.
 */
int ns_attached_open(const struct ns_opts *o, uint64_t keep, const char *stage, struct ns_netns *ns,
		     char *path, size_t size, struct ns_state *st, struct ns_err *e)
{
	int err;

	memset(st, 0, sizeof(*st));
	/* opening a namespace file needs no capability: the caller checked its own */
	err = ns_netns_open(o->netns_path, o->pid, false, ns, e);
	if (!err)
		err = ns_privs_keep(keep, stage, e);
	if (!err)
		err = ns_state_path(ns->dev, ns->ino, path, size);
	if (!err) {
		err = ns_state_read(path, st, e);
		if (err == -ENOENT)
			ns_err_set(e, "netns %s is not attached (no state file %s)", ns->name, path);
	}
	if (!err && (st->dev != ns->dev || st->ino != ns->ino)) {
		ns_err_set(e, "state file %s names another namespace", path);
		err = -EINVAL;
	}
	return err;
}

/**
 * ns_cmd_detach() - `netsetup detach`
 * @o:		parsed options
 * @e:		error message
 *
 * Return: 0 or -errno (-ENOENT: not attached).
 */
int ns_cmd_detach(const struct ns_opts *o, struct ns_err *e)
{
	struct ns_netns ns = { .fd = -1 };
	struct ns_state st = { 0 };
	char path[PATH_MAX], nspath[64];
	int err;

	err = ns_caps_check(true, e);
	if (!err)
		err = ns_attached_open(o, NS_PRIVS_DETACH, "detach", &ns, path, sizeof(path), &st, e);
	if (err)
		goto out;
	/* the namespace we opened: the recorded path may be gone, or name another */
	snprintf(nspath, sizeof(nspath), "/proc/self/fd/%d", ns.fd);
	err = ns_give_back(path, &st, nspath, true, e);
	if (!err)
		fprintf(stderr, "netsetup: netns %s: addresses and routes given back\n", ns.name);
out:
	ns_state_free(&st);
	ns_netns_close(&ns);
	return err;
}
