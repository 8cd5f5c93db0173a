// SPDX-License-Identifier: MIT
/*
 * giveback.c - giving a namespace back to its kernel: the one sequence
 *
 * Theory of operation: only an explicit stop gives back (docs/security.md,
 * "Fail closed"): SIGTERM or SIGINT to `netsetup run`, `netsetup detach`,
 * CNI DEL, the OCI poststop hook, and serve's watcher when its datapath
 * says it was stopped. A datapath that dies on its own never does: its
 * supervisor starts another on the same fds, and the namespace stays fenced
 * meanwhile. Whoever gives back runs the same steps, in this order:
 *
 *   1. stop the recorded datapath (its supervisor, which stops its own
 *      datapath first): it must not serve while the kernel takes over again
 *      (ns_give_back(); `run` has already waited for its child);
 *   2. in the namespace, when it still exists (by the path recorded or
 *      given, checked against the recorded dev/ino; else through the
 *      datapath's sockets while it lives), ns_restore() (the kernel area's
 *      restore.c): the container face, the addresses, the routes, the
 *      sysctls; a link the runtime already removed is skipped with a note;
 *   3. the state file and its companions go (ns_state_files_remove()): the
 *      datapath's log, status and control socket, serve's bind mount.
 * A failed give-back keeps the state file for a retry. A namespace that is
 * gone has nothing to give back: its files go all the same.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "netsetup/orch/orch_int.h"

/**
 * ns_state_files_remove() - remove a state file and what lives next to it
 * @path:	the state file, "DIR/netns-DEV-INO.state"
 *
 * Its companions (docs/runtime.md): the datapath's log (.log), status
 * (.status) and control socket (.ctl), serve's bind mount of the namespace
 * (.netns, unmounted first).
 */
void ns_state_files_remove(const char *path)
{
	static const char *const suffixes[] = { ".log", ".status", ".ctl" };
	char other[PATH_MAX + 16];
	size_t n = strlen(path);
	unsigned int i;

	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(other, sizeof(other), "%s%s", path, suffixes[i]);
		unlink(other);
	}
	if (n > 6 && !strcmp(path + n - 6, ".state"))
		n -= 6;
	snprintf(other, sizeof(other), "%.*s.netns", (int)n, path);
	if (umount2(other, MNT_DETACH) == 0 || errno == EINVAL)
		unlink(other);
	unlink(path);
}

/**
 * ns_give_back() - stop a state's datapath and give its namespace back
 * @path:	the state file
 * @st:		its contents
 * @netns_path:	where the namespace is, or NULL for the path recorded in @st
 * @stop:	stop the recorded datapath first
 * @e:		error message
 *
 * Return: 0 (also when the namespace is gone: nothing to give back), or
 * -errno with the state file kept for a retry (-EHOSTUNREACH: its bind
 * mount is not in this mount namespace and no datapath holds it).
 */
int ns_give_back(const char *path, struct ns_state *st, const char *netns_path, bool stop,
		 struct ns_err *e)
{
	struct ns_netns ns = { .fd = -1 };
	struct ns_err ignored;
	struct nl_sock *sk = NULL;
	char fdpath[64];
	struct statfs sf;
	bool stale = false;
	int orig = -1, err, nsfd = -1;

	if (!netns_path || !netns_path[0])
		netns_path = st->netns_path[0] ? st->netns_path : NULL;
	if (!netns_path || ns_netns_open(netns_path, 0, false, &ns, &ignored) < 0 ||
	    (uint64_t)ns.dev != st->dev || (uint64_t)ns.ino != st->ino) {
		/* No path (any more): reach it through the datapath, while it lives. */
		stale = netns_path && statfs(netns_path, &sf) == 0 && sf.f_type != NSFS_MAGIC;
		ns_netns_close(&ns);
		nsfd = ns_datapath_netns_fd(st);
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", nsfd);
		netns_path = nsfd >= 0 ? fdpath : NULL;
	} else {
		ns_netns_close(&ns);
	}
	if (stop && ns_datapath_alive(st)) {
		err = ns_datapath_stop(st, 2000);
		if (err) {
			ns_err_set(e, "datapath pid %d does not stop, even with SIGKILL",
				   (int)st->datapath_pid);
			goto out;
		}
		fprintf(stderr, "netsetup: datapath (pid %d) stopped\n", (int)st->datapath_pid);
	}
	if (!netns_path && stale) {
		/*
		 * A file where the namespace was bound, but no namespace: the
		 * bind mount is in another mount namespace (an earlier start of
		 * a service's), and the namespace, which it keeps alive, may
		 * still be there. Not gone: the state stays for a retry.
		 */
		ns_err_set(e, "netns %s: cannot be reached (its bind mount is not in this mount namespace, and no "
			   "datapath holds it)", st->netns_path);
		err = -EHOSTUNREACH;
		goto out;
	}
	if (!netns_path || ns_netns_open(netns_path, 0, false, &ns, &ignored) < 0 ||
	    (uint64_t)ns.dev != st->dev || (uint64_t)ns.ino != st->ino) {
		/* The namespace is gone (or its path now names another): nothing to give back. */
		ns_netns_close(&ns);
		ns_state_files_remove(path);
		err = 0;
		goto out;
	}
	err = ns_netns_enter(&ns, &orig, e);
	if (!err)
		err = ns_nl_open(&sk, e);
	if (!err)
		err = ns_restore(sk, st, e);
	if (orig >= 0)
		ns_netns_leave(orig);
	if (sk)
		nl_socket_free(sk);
	ns_netns_close(&ns);
	if (!err)
		ns_state_files_remove(path);
out:
	if (nsfd >= 0)
		close(nsfd);
	return err;
}
