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
 *
 * --all restarts every datapath with a state file in the state folder: what
 * a package upgrade runs, so that all move to the new binary.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "netsetup/front/front.h"

#define RESTART_TIMEOUT_MS	(NS_DATAPATH_TIMEOUT_S * 1000)

/*
 * Restart the datapath of the state file @path (@st read from it), @name
 * for the messages: 0 once a new one serves, or -errno with @e set.
 */
static int restart_one(const char *path, const struct ns_state *st, const char *name, struct ns_err *e)
{
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	struct proto_status before, now;
	unsigned int waited;
	int err;

	if (!ns_datapath_alive(st)) {
		ns_err_set(e, "netns %s: its datapath's supervisor (pid %d) is gone: the container is dark; "
			   "`netsetup detach` gives it back", name, (int)st->datapath_pid);
		return -ESRCH;
	}
	err = ns_status_read(path, &before);
	if (err) {
		ns_err_set(e, "netns %s: the datapath (pid %d) keeps no status file (%s): it is too old to "
			   "restart in place", name, (int)st->datapath_pid, strerror(-err));
		return err;
	}
	if (kill(st->datapath_pid, SIGHUP) < 0) {
		err = -errno;
		ns_err_set(e, "netns %s: SIGHUP to the datapath's supervisor (pid %d): %s", name,
			   (int)st->datapath_pid, strerror(errno));
		return err;
	}
	for (waited = 0; waited < RESTART_TIMEOUT_MS; waited += 20) {
		nanosleep(&tick, NULL);
		if (ns_status_read(path, &now) < 0 || now.restarts == before.restarts)
			continue;
		if (now.state == PROTO_DP_SERVING) {
			fprintf(stderr, "netsetup: netns %s: datapath pid %d serves (restart %u)\n", name,
				(int)now.datapath, now.restarts);
			return 0;
		}
		if (now.state == PROTO_DP_DARK) {
			ns_err_set(e, "netns %s: no new datapath serves: %s", name, now.reason);
			return -EIO;
		}
	}
	ns_err_set(e, "netns %s: no new datapath served within %d s (supervisor pid %d)", name,
		   RESTART_TIMEOUT_MS / 1000, (int)st->datapath_pid);
	return -ETIMEDOUT;
}

/*
 * `restart --all`: every namespace with a state file, one after the other,
 * so that at most one container at a time is between two datapaths. One
 * that fails is said on stderr and the others are still restarted.
 */
static int restart_all(struct ns_err *e)
{
	const char *dir = ns_state_dir();
	struct dirent **names;
	struct ns_err one;
	struct ns_state st;
	char path[PATH_MAX];
	int n, i, failed = 0, done = 0, err = 0;

	err = ns_privs_keep(NS_PRIV(CAP_KILL), "restart", e);
	if (err)
		return err;
	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0 && errno == ENOENT)
		n = 0;		/* nothing was ever attached */
	if (n < 0) {
		err = -errno;
		ns_err_set(e, "state directory %s: %s", dir, strerror(errno));
		return err;
	}
	for (i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);

		if (len > 6 && !strcmp(names[i]->d_name + len - 6, ".state") &&
		    snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) < (int)sizeof(path)) {
			one.text[0] = '\0';
			err = ns_state_read(path, &st, &one);
			if (!err) {
				err = restart_one(path, &st, st.netns_path[0] ? st.netns_path : names[i]->d_name,
						  &one);
				ns_state_free(&st);
			}
			if (err) {
				fprintf(stderr, "netsetup: restart: %s\n", one.text);
				failed++;
			} else {
				done++;
			}
		}
		free(names[i]);
	}
	free(names);
	fprintf(stderr, "netsetup: restart --all: %d restarted, %d failed\n", done, failed);
	if (failed) {
		ns_err_set(e, "restart --all: %d of %d did not restart (above)", failed, done + failed);
		return -EIO;
	}
	return 0;
}

/**
 * ns_cmd_restart() - `netsetup restart`
 * @o:		parsed options
 * @e:		error message
 *
 * Return: 0 once a new datapath serves (every one, with --all), or -errno
 * (-ENOENT: not attached; -ESRCH: nobody serves it; -EIO: the new datapath
 * did not come up).
 */
int ns_cmd_restart(const struct ns_opts *o, struct ns_err *e)
{
	struct ns_netns ns = { .fd = -1 };
	struct ns_state st = { 0 };
	char path[PATH_MAX];
	int err;

	if (o->all)
		return restart_all(e);
	err = ns_attached_open(o, NS_PRIV(CAP_KILL), "restart", &ns, path, sizeof(path), &st, e);
	if (!err)
		err = restart_one(path, &st, ns.name, e);
	ns_state_free(&st);
	ns_netns_close(&ns);
	return err;
}
