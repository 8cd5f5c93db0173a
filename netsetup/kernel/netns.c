// SPDX-License-Identifier: MIT
/*
 * netns.c - open, identify and enter the target network namespace
 *
 * Theory of operation: the user names the namespace by path (--netns, e.g.
 * /run/netns/x or /proc/PID/ns/net) or by process (--pid). We open the nsfs
 * file, check with NS_GET_NSTYPE that it really is a network namespace, and
 * keep its (st_dev, st_ino) pair: that pair is the namespace's identity and
 * the key of the state file. The host's own namespace (the one of pid 1) and
 * netsetup's own are refused: taking their addresses away would cut the host
 * off.
 *
 * Entering is setns(2) on the calling thread; netsetup is single-threaded,
 * so this is the whole process. Netlink and AF_PACKET sockets opened while
 * inside stay bound to the target namespace after we return to the original
 * one, which is what every later step relies on. Sysctl files under
 * /proc/sys/net are resolved against the namespace of the opener at open time.
 *
 * Capabilities: setns needs CAP_SYS_ADMIN (and the changes need CAP_NET_ADMIN
 * and CAP_NET_RAW); ns_caps_check() names a missing one before anything is
 * touched, so the user does not have to decode an EPERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/nsfs.h>
#include <cap-ng.h>

#include "netsetup/kernel/kernel.h"

static int netns_identity(const char *path, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/**
 * ns_netns_open() - open and check the namespace the user named
 * @path:	--netns PATH, or NULL
 * @pid:	--pid PID when @path is NULL
 * @allow_host: do not refuse the host's or our own namespace (read-only use)
 * @ns:		filled on success; close with ns_netns_close()
 * @e:		error message
 *
 * Return: 0, or -ENOENT (no such file or process), -ENOTTY (not a network
 * namespace file), -EPERM (the host's or our own namespace), other -errno.
 */
int ns_netns_open(const char *path, pid_t pid, bool allow_host, struct ns_netns *ns,
		  struct ns_err *e)
{
	char pidpath[64];
	struct stat st;
	dev_t dev = 0;
	ino_t ino = 0;
	int fd, type, err;

	ns->fd = -1;
	if (path) {
		snprintf(ns->name, sizeof(ns->name), "%s", path);
	} else {
		if (pid <= 0) {
			ns_err_set(e, "pid %d: not a process id", (int)pid);
			return -EINVAL;
		}
		snprintf(pidpath, sizeof(pidpath), "/proc/%d/ns/net", (int)pid);
		snprintf(ns->name, sizeof(ns->name), "pid %d", (int)pid);
		path = pidpath;
		/* pid 1 is init: its namespace is the host's, even where we may not open it. */
		if (pid == 1 && !allow_host) {
			ns_err_set(e, "netns of pid 1: is the host's network namespace (the one of pid 1); refusing to take it over");
			return -EPERM;
		}
	}

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOENT && pidpath == path)
			ns_err_set(e, "netns of %s: no such process", ns->name);
		else if (err == -ENOENT)
			ns_err_set(e, "netns %s: no such file", ns->name);
		else
			ns_err_set(e, "netns %s: cannot open: %s", ns->name, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		ns_err_set(e, "netns %s: fstat: %s", ns->name, strerror(errno));
		goto err;
	}
	type = ioctl(fd, NS_GET_NSTYPE);
	if (type != CLONE_NEWNET) {
		err = -ENOTTY;
		ns_err_set(e, "netns %s: not a network namespace file%s", ns->name,
			   type < 0 ? "" : " (a namespace of another kind)");
		goto err;
	}
	if (!allow_host && !netns_identity("/proc/1/ns/net", &dev, &ino) && dev == st.st_dev && ino == st.st_ino) {
		err = -EPERM;
		ns_err_set(e, "netns %s: is the host's network namespace (the one of pid 1); refusing to take it over",
			   ns->name);
		goto err;
	}
	if (!allow_host && !netns_identity("/proc/self/ns/net", &dev, &ino) && dev == st.st_dev && ino == st.st_ino) {
		err = -EPERM;
		ns_err_set(e, "netns %s: is netsetup's own network namespace; refusing to take it over",
			   ns->name);
		goto err;
	}
	ns->fd = fd;
	ns->dev = st.st_dev;
	ns->ino = st.st_ino;
	return 0;
err:
	close(fd);
	return err;
}

/**
 * ns_netns_close() - close what ns_netns_open() opened
 * @ns:		the namespace; safe to call twice
 */
void ns_netns_close(struct ns_netns *ns)
{
	if (ns->fd >= 0)
		close(ns->fd);
	ns->fd = -1;
}

/**
 * ns_netns_enter() - move the calling thread into @ns
 * @ns:		opened namespace
 * @orig_fdp:	receives an fd of the original namespace for ns_netns_leave()
 * @e:		error message
 *
 * Return: 0 or -errno (-EPERM without CAP_SYS_ADMIN).
 */
int ns_netns_enter(const struct ns_netns *ns, int *orig_fdp, struct ns_err *e)
{
	int orig, err;

	orig = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (orig < 0) {
		err = -errno;
		ns_err_set(e, "cannot open our own netns: %s", strerror(errno));
		return err;
	}
	if (setns(ns->fd, CLONE_NEWNET) < 0) {
		err = -errno;
		if (err == -EPERM)
			ns_err_set(e, "netns %s: setns: permission denied: netsetup needs CAP_SYS_ADMIN",
				   ns->name);
		else
			ns_err_set(e, "netns %s: setns: %s", ns->name, strerror(errno));
		close(orig);
		return err;
	}
	*orig_fdp = orig;
	return 0;
}

/**
 * ns_netns_leave() - return to the namespace ns_netns_enter() left
 * @orig_fd:	from ns_netns_enter(); closed here
 *
 * Return: 0 or -errno. Failing to return is not recoverable for the caller's
 * later steps (they would run in the wrong namespace), so callers stop.
 */
int ns_netns_leave(int orig_fd)
{
	int err = 0;

	if (orig_fd < 0)
		return 0;
	if (setns(orig_fd, CLONE_NEWNET) < 0)
		err = -errno;
	close(orig_fd);
	return err;
}

/**
 * ns_caps_check() - refuse early, naming the missing capability
 * @need_net_admin: also require CAP_NET_ADMIN and CAP_NET_RAW (attach, run, detach)
 * @e:		error message
 *
 * Return: 0 or -EPERM.
 */
int ns_caps_check(bool need_net_admin, struct ns_err *e)
{
	static const struct {
		unsigned int cap;
		const char *name;
		const char *why;
	} caps[] = {
		{ CAP_SYS_ADMIN, "CAP_SYS_ADMIN", "to enter the container's network namespace (setns)" },
		{ CAP_NET_ADMIN, "CAP_NET_ADMIN", "to change addresses and routes" },
		{ CAP_NET_RAW, "CAP_NET_RAW", "to open AF_PACKET sockets" },
	};
	unsigned int i, n = need_net_admin ? 3 : 1;

	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_get_caps_process() < 0) {
		ns_err_set(e, "cannot read our capabilities");
		return -EPERM;
	}
	for (i = 0; i < n; i++) {
		if (capng_have_capability(CAPNG_EFFECTIVE, caps[i].cap))
			continue;
		ns_err_set(e, "permission denied: netsetup needs %s %s", caps[i].name, caps[i].why);
		return -EPERM;
	}
	return 0;
}

/**
 * ns_netns_keep() - keep a namespace reachable by a path next to its state
 * file, a bind mount as `ip netns` makes them: STATE.netns
 * @from:	a path of the namespace now ("/proc/self/fd/N")
 * @state_path:	"DIR/netns-DEV-INO.state"
 * @keep:	receives "DIR/netns-DEV-INO.netns"
 * @size:	size of @keep
 * @e:		why not
 *
 * Whoever gives the namespace back later (DEL, poststop, detach, a
 * restarted serve) finds it there even when nothing else names it any more:
 * attached by pid, its datapath's supervisor dead. Giving back removes it
 * (ns_state_files_remove()). Needs CAP_SYS_ADMIN.
 *
 * Return: 0 or -errno.
 */
int ns_netns_keep(const char *from, const char *state_path, char *keep, size_t size, struct ns_err *e)
{
	size_t n = strlen(state_path);
	int fd, err;

	if (n > 6 && !strcmp(state_path + n - 6, ".state"))
		n -= 6;
	if (snprintf(keep, size, "%.*s.netns", (int)n, state_path) >= (int)size) {
		ns_err_set(e, "%s: path too long for the netns's bind mount", state_path);
		return -ENAMETOOLONG;
	}
	fd = open(keep, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
	if (fd < 0) {
		err = -errno;
		ns_err_set(e, "cannot make %s for the netns's bind mount: %s", keep, strerror(errno));
		return err;
	}
	close(fd);
	if (mount(from, keep, NULL, MS_BIND, NULL) < 0) {
		err = -errno;
		ns_err_set(e, "cannot bind-mount the netns on %s: %s", keep, strerror(errno));
		unlink(keep);
		return err;
	}
	return 0;
}

/**
 * ns_netns_keep_remove() - undo ns_netns_keep()
 * @keep:	the bind mount's path
 */
void ns_netns_keep_remove(const char *keep)
{
	umount2(keep, MNT_DETACH);
	unlink(keep);
}
