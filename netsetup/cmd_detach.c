// SPDX-License-Identifier: MIT
/*
 * cmd_detach.c - `netsetup detach`: give back what attach took
 *
 * Theory of operation: the namespace's state file (state.c) lists what
 * attach removed; enter the namespace, restore it (takeover.c, idempotent),
 * and remove the state file only when everything went back, so that a failed
 * detach can be run again. A datapath the state file records (one that a
 * CNI ADD, the OCI hook or serve started or attached) is stopped first, as
 * DEL does: it would otherwise go on answering for addresses the kernel
 * holds again. A datapath that `run` or the user started is not recorded;
 * it is expected to have been stopped.
 * The datapath's log and serve's bind mount of the namespace (runtime.md)
 * go with the state file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "netsetup/netsetup.h"

/*
 * What the runtime entry points keep next to the state file (runtime.md):
 * a datapath's log and control socket, serve's bind mount of the namespace. Gone with it.
 */
static void keep_remove(const char *state_path)
{
	char other[PATH_MAX + 8];
	size_t n = strlen(state_path) - strlen(".state");

	snprintf(other, sizeof(other), "%s.log", state_path);
	unlink(other);
	snprintf(other, sizeof(other), "%s.ctl", state_path);
	unlink(other);
	snprintf(other, sizeof(other), "%.*s.netns", (int)n, state_path);
	if (umount2(other, MNT_DETACH) == 0 || errno == EINVAL)
		unlink(other);
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
	struct nl_sock *sk = NULL;
	char path[PATH_MAX];
	int orig = -1, err;

	err = ns_caps_check(true, e);
	if (err)
		return err;
	err = ns_netns_open(o->netns_path, o->pid, false, &ns, e);
	if (err)
		return err;
	err = ns_privs_keep(NS_PRIVS_DETACH, "detach", e);
	if (err)
		goto out;
	err = ns_state_path(ns.dev, ns.ino, path, sizeof(path));
	if (!err)
		err = ns_state_read(path, &st, e);
	if (err) {
		if (err == -ENOENT)
			ns_err_set(e, "netns %s is not attached (no state file %s)", ns.name, path);
		goto out;
	}
	if (st.dev != ns.dev || st.ino != ns.ino) {
		ns_err_set(e, "state file %s names another namespace", path);
		err = -EINVAL;
		goto out;
	}
	if (ns_datapath_alive(&st)) {
		err = ns_datapath_stop(&st, 2000);
		if (err) {
			ns_err_set(e, "detach: the datapath (pid %d) did not stop", (int)st.datapath_pid);
			goto out;
		}
		fprintf(stderr, "netsetup: netns %s: datapath (pid %d) stopped\n", ns.name,
			(int)st.datapath_pid);
	}
	err = ns_netns_enter(&ns, &orig, e);
	if (!err)
		err = ns_nl_open(&sk, e);
	if (!err)
		err = ns_restore(sk, &st, e);
	if (!err) {
		unlink(path);
		keep_remove(path);
		fprintf(stderr, "netsetup: netns %s: addresses and routes given back\n", ns.name);
	}
out:
	if (orig >= 0)
		ns_netns_leave(orig);
	if (sk)
		nl_socket_free(sk);
	ns_state_free(&st);
	ns_netns_close(&ns);
	return err;
}
