// SPDX-License-Identifier: MIT
/*
 * dpproc.c - datapaths that outlive the command that started them
 *
 * Theory of operation: `netsetup run` stays the parent of its datapath and
 * learns of its death from waitpid(). The CNI plugin and the OCI hook cannot:
 * they exit right after ADD / createRuntime, and the datapath they started
 * (attach.c, detached run) is reparented. What ties it to its namespace
 * is then the state file: "datapath PID STARTTIME" names it, the start time
 * (/proc/PID/stat field 22, clock ticks since boot) making a recycled pid
 * harmless, and "owner" names who attached ("cni:ID:IFNAME", "oci:ID"), so
 * that DEL or poststop finds the file without the namespace, which may be
 * gone by then.
 *
 * A namespace without a path (attached by pid, or serve's bind mount lost
 * in a restart) is still reachable while its datapath lives: the channel
 * sockets belong to it (ns_datapath_netns_fd(): pidfd_getfd + SIOCGSKNS).
 *
 * The datapath netsetup starts is a supervisor (datapath/supervise.c) that
 * starts the datapath proper, and another whenever one dies; the state file
 * records the supervisor. What it knows after the handoff it writes into
 * the status file, STATEFILE.status, whose fd netsetup gives it with DONE
 * (proto minor 3): serving, restarts, the last death, dark (a crash loop)
 * or stopped (an explicit stop). ns_status_read() reads it for CNI CHECK,
 * `netsetup restart`, run and serve: the file comes from an unprivileged
 * process and proto/status.c, its one reader and writer, parses it as
 * untrusted input (known keys, bounded lines).
 *
 * Giving back is giveback.c's.
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
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <linux/sockios.h>

#include "netsetup/orch/orch_int.h"

/* Field 3 (state) and field 22 (starttime) of /proc/PID/stat. */
static int proc_stat(pid_t pid, char *statep, unsigned long long *ticksp)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks;
	size_t n;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* The command name may hold spaces and parentheses: skip to the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EINVAL;
	p += 2;
	*statep = *p;
	for (i = 3; i < 22; i++) {
		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		p++;
	}
	if (sscanf(p, "%llu", &ticks) != 1)
		return -EINVAL;
	*ticksp = ticks;
	return 0;
}

/**
 * ns_proc_start_time() - when a process started, in clock ticks since boot
 * @pid:	process
 * @ticksp:	receives /proc/PID/stat field 22
 *
 * Return: 0, -ENOENT when there is no such process, -EINVAL.
 */
int ns_proc_start_time(pid_t pid, unsigned long long *ticksp)
{
	char state;

	return proc_stat(pid, &state, ticksp);
}

/**
 * ns_datapath_alive() - the datapath recorded in @st still runs
 * @st:		state with datapath_pid and datapath_start
 *
 * Return: true when that very process (same start time) exists and is not a
 * zombie.
 */
bool ns_datapath_alive(const struct ns_state *st)
{
	unsigned long long ticks;
	char state;

	if (st->datapath_pid <= 0 || proc_stat(st->datapath_pid, &state, &ticks) < 0)
		return false;
	return ticks == st->datapath_start && state != 'Z' && state != 'X';
}

/**
 * ns_datapath_stop() - stop the datapath recorded in @st
 * @st:		state
 * @timeout_ms:	how long SIGTERM may take before SIGKILL
 *
 * Reaps it when we are its parent (serve). A datapath that is already gone,
 * or none recorded, is success.
 *
 * Return: 0 or -ETIMEDOUT when even SIGKILL did not end it within a second.
 */
int ns_datapath_stop(const struct ns_state *st, unsigned int timeout_ms)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	unsigned int waited_ms = 0;
	bool killed = false;

	if (!ns_datapath_alive(st)) {
		if (st->datapath_pid > 0)
			waitpid(st->datapath_pid, NULL, WNOHANG);
		return 0;
	}
	kill(st->datapath_pid, SIGTERM);
	for (;;) {
		waitpid(st->datapath_pid, NULL, WNOHANG);
		if (!ns_datapath_alive(st))
			return 0;
		if (waited_ms >= timeout_ms + 1000)
			return -ETIMEDOUT;
		if (waited_ms >= timeout_ms && !killed) {
			kill(st->datapath_pid, SIGKILL);
			killed = true;
		}
		nanosleep(&tick, NULL);
		waited_ms += 10;
	}
}

/**
 * ns_state_find_owner() - the state file whose owner is @owner
 * @owner:	"cni:ID:IFNAME", "oci:ID"
 * @path:	receives the file's path
 * @size:	size of @path
 * @st:		receives its contents; ns_state_free() it
 * @e:		error message
 *
 * Unreadable or malformed files of others are skipped.
 *
 * Return: 0, -ENOENT when no state file has that owner, other -errno.
 */
int ns_state_find_owner(const char *owner, char *path, size_t size, struct ns_state *st,
			struct ns_err *e)
{
	const char *dir = ns_state_dir();
	struct ns_err ignored;
	struct dirent *de;
	size_t len;
	DIR *d;

	memset(st, 0, sizeof(*st));
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT) {
			ns_err_set(e, "%s: nothing attached (no state directory %s)", owner, dir);
			return -ENOENT;
		}
		ns_err_set(e, "state directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	while ((de = readdir(d))) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 6, ".state"))
			continue;
		if (snprintf(path, size, "%s/%s", dir, de->d_name) >= (int)size)
			continue;
		if (ns_state_read(path, st, &ignored) == 0 && !strcmp(st->owner, owner)) {
			closedir(d);
			return 0;
		}
		ns_state_free(st);
	}
	closedir(d);
	ns_err_set(e, "%s: nothing attached (no state file in %s has that owner)", owner, dir);
	return -ENOENT;
}

/**
 * ns_status_path() - the status file next to a state file
 * @state_path:	"DIR/netns-DEV-INO.state"
 * @buf:	receives "DIR/netns-DEV-INO.state.status"
 * @size:	size of @buf
 *
 * Return: 0 or -ENAMETOOLONG.
 */
int ns_status_path(const char *state_path, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s.status", state_path);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/**
 * ns_status_open() - make the status file a datapath's supervisor will
 * keep (empty, 0600, ours), for DONE
 * @state_path:	the state file it goes with
 * @e:		error message
 *
 * Return: an fd open for reading and writing, or -errno.
 */
int ns_status_open(const char *state_path, struct ns_err *e)
{
	char path[PATH_MAX + 8];
	int fd, err;

	if (ns_status_path(state_path, path, sizeof(path))) {
		ns_err_set(e, "status file of %s: path too long", state_path);
		return -ENAMETOOLONG;
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		err = -errno;
		ns_err_set(e, "status file %s: %s", path, strerror(errno));
		return err;
	}
	return fd;
}

/**
 * ns_status_read() - what a datapath's supervisor last wrote
 * @state_path:	the state file the status goes with
 * @s:		filled
 *
 * proto_status_read() (proto/status.c) reads it: again, a few times, while a
 * rewrite is in progress.
 *
 * Return: 0; -ENOENT (no status file: a datapath too old to write one, or
 * none started yet), -EAGAIN (nothing written), -EINVAL (not a status file),
 * -ENAMETOOLONG.
 */
int ns_status_read(const char *state_path, struct proto_status *s)
{
	char path[PATH_MAX + 8];

	if (ns_status_path(state_path, path, sizeof(path)))
		return -ENAMETOOLONG;
	return proto_status_read(path, s);
}

/**
 * ns_datapath_netns_fd() - the namespace a live datapath serves, from its sockets
 * @st:		state naming the datapath and the namespace (dev/ino)
 *
 * A namespace attached by pid, or whose bind mount is gone, has no path any
 * more; the datapath's channel sockets still belong to it. Copy each of its
 * fds (pidfd_getfd(), CAP_SYS_PTRACE), ask each AF_PACKET socket for its
 * namespace (SIOCGSKNS) and keep the one with the recorded identity.
 *
 * Return: an O_CLOEXEC fd of the namespace, or -ESRCH (datapath gone),
 * -ENOENT (no socket of that namespace), other -errno.
 */
int ns_datapath_netns_fd(const struct ns_state *st)
{
	int pidfd, fd, nsfd, dom, n, fdsize = 1024, found = -ENOENT;
	char path[64], line[128];
	socklen_t len;
	struct stat sb;
	FILE *f;

	if (!ns_datapath_alive(st))
		return -ESRCH;
	pidfd = (int)syscall(SYS_pidfd_open, st->datapath_pid, 0);
	if (pidfd < 0)
		return -errno;
	/*
	 * The fd numbers to try: up to the size of its fd table. Not a listing
	 * of /proc/PID/fd: a dumpable datapath owns that directory (mode 0500),
	 * and reading it would take CAP_DAC_READ_SEARCH, which serve drops.
	 */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)st->datapath_pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "FDSize: %d", &n) == 1 && n > 0) {
			fdsize = n;
			break;
		}
	}
	if (f)
		fclose(f);
	for (n = 0; n < fdsize && found < 0; n++) {
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, n, 0);
		if (fd < 0) {
			if (errno == ESRCH || errno == EPERM) {
				found = -errno;
				break;
			}
			continue;
		}
		len = sizeof(dom);
		nsfd = getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) == 0 && dom == AF_PACKET ?
		       ioctl(fd, SIOCGSKNS) : -1;
		close(fd);
		if (nsfd < 0)
			continue;
		if (fstat(nsfd, &sb) == 0 && (uint64_t)sb.st_dev == st->dev && (uint64_t)sb.st_ino == st->ino) {
			fcntl(nsfd, F_SETFD, FD_CLOEXEC);
			found = nsfd;
		} else {
			close(nsfd);
		}
	}
	close(pidfd);
	return found;
}
