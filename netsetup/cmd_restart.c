// SPDX-License-Identifier: MIT
/*
 * cmd_restart.c - `netsetup restart`: a new datapath on the same fds
 *
 * Theory of operation: the datapath netsetup started is a supervisor
 * (datapath/supervise.c) that holds the container's fds and starts the
 * datapath proper on them. SIGHUP asks it for a new one, started from the
 * path the supervisor was started from: after an upgrade installed a new
 * binary there, the new binary takes over, and the container loses its open
 * connections (reset, not left hanging) and nothing else. It is also how a
 * container that went dark after a crash loop is tried again.
 *
 * This command finds the supervisor through the namespace's state file,
 * signals it, and waits for its status file to say that a datapath serves
 * again (its restart count grew), or why not. Nothing in the namespace
 * changes. It needs only CAP_KILL (the supervisor runs as another user).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "netsetup/netsetup.h"

#define RESTART_TIMEOUT_MS	(NS_DATAPATH_TIMEOUT_S * 1000)

/**
 * ns_cmd_restart() - `netsetup restart`
 * @o:		parsed options
 * @e:		error message
 *
 * Return: 0 once a new datapath serves, or -errno (-ENOENT: not attached;
 * -ESRCH: nobody serves it; -EIO: the new datapath did not come up).
 */
int ns_cmd_restart(const struct ns_opts *o, struct ns_err *e)
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	struct ns_netns ns = { .fd = -1 };
	struct ns_state st = { 0 };
	struct ns_status before, now;
	char path[PATH_MAX];
	unsigned int waited;
	int err;

	err = ns_attached_open(o, NS_PRIV(CAP_KILL), "restart", &ns, path, sizeof(path), &st, e);
	if (err)
		goto out;
	if (!ns_datapath_alive(&st)) {
		ns_err_set(e, "netns %s: its datapath's supervisor (pid %d) is gone: the container is dark; "
			   "`netsetup detach` gives it back", ns.name, (int)st.datapath_pid);
		err = -ESRCH;
		goto out;
	}
	err = ns_status_read(path, &before);
	if (err) {
		ns_err_set(e, "netns %s: the datapath (pid %d) keeps no status file (%s): it is too old to "
			   "restart in place", ns.name, (int)st.datapath_pid, strerror(-err));
		goto out;
	}
	if (kill(st.datapath_pid, SIGHUP) < 0) {
		err = -errno;
		ns_err_set(e, "netns %s: SIGHUP to the datapath's supervisor (pid %d): %s", ns.name,
			   (int)st.datapath_pid, strerror(errno));
		goto out;
	}
	for (waited = 0; waited < RESTART_TIMEOUT_MS; waited += 20) {
		nanosleep(&tick, NULL);
		if (ns_status_read(path, &now) < 0 || now.restarts == before.restarts)
			continue;
		if (!strcmp(now.state, "serving")) {
			fprintf(stderr, "netsetup: netns %s: datapath pid %d serves (restart %u)\n", ns.name,
				(int)now.datapath, now.restarts);
			goto out;
		}
		if (!strcmp(now.state, "dark")) {
			ns_err_set(e, "netns %s: no new datapath serves: %s", ns.name, now.reason);
			err = -EIO;
			goto out;
		}
	}
	ns_err_set(e, "netns %s: no new datapath served within %d s (supervisor pid %d)", ns.name,
		   RESTART_TIMEOUT_MS / 1000, (int)st.datapath_pid);
	err = -ETIMEDOUT;
out:
	ns_state_free(&st);
	ns_netns_close(&ns);
	return err;
}
