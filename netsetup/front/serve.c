// SPDX-License-Identifier: MIT
/*
 * serve.c - `netsetup serve`, the daemon (its client, `netsetup connect`, is
 * connect.c)
 *
 * Theory of operation: the daemon listens on a unix SOCK_SEQPACKET socket,
 * handed over by systemd (socket activation, sd_listen_fds()) or bound by
 * itself (--socket PATH, default /run/sandnet/netsetup.sock), and reports
 * readiness with sd_notify("READY=1") once it has recovered its state.
 *
 * A client is the datapath's side of a connection (connect.c): it sends
 * ATTACH with a netns fd it opened, and on ACK the datapath gets its
 * configuration on the very same socket, exactly as from `netsetup run`
 * (HELLO, LINK..., DONE).
 *
 * One process per connection: the main loop accepts, forks a worker and
 * goes back to accepting, so a client that sends nothing, or garbage, or
 * dies in the middle, holds only its own worker (which gives up after
 * request_timeout); at most max_clients workers live at once, the next
 * connection gets ERROR (EAGAIN). A worker:
 *   1. reads the peer's credentials (SO_PEERCRED, filled by the kernel) and
 *      one message; anything but a valid ATTACH is answered with ERROR;
 *   2. authorizes it (serve_conf.c); refused: ERROR (EPERM or EINVAL) naming
 *      the rule;
 *   3. ACK, then keeps the namespace reachable by a bind mount next to the
 *      state file (STATE.netns), so that a restarted daemon can still give
 *      it back, and attaches exactly as `netsetup attach` does (orch/attach.c)
 *      over the client's socket, recording the peer's pid (the datapath,
 *      after exec) and the owner "serve:PID" in the state file;
 *   4. watches the connection: EOF means the datapath is gone (its
 *      supervisor never closes it while alive). When its status file says
 *      "stopped" (an explicit stop), the addresses go back to the kernel
 *      (giveback.c); any other end leaves the namespace dark (fail
 *      closed: docs/security.md), unless on_datapath_exit = restore.
 * Privileges (privs.c): once listening, the daemon keeps NS_PRIVS_SERVE
 * (what a worker's attach and a give-back need, CAP_SYS_PTRACE to find a
 * namespace through a datapath's sockets, CAP_KILL to stop a datapath),
 * an empty bounding set and no_new_privs; a worker that has attached, and a
 * watcher, drop CAP_NET_RAW as well (NS_PRIVS_SERVE_WATCH).
 * SIGTERM ends the daemon and its workers without giving anything back: the
 * datapaths keep serving; a worker whose datapath went just before (an
 * explicit stop of both, one after the other) still gives it back first,
 * and no give-back is cut short by the signal. A daemon that starts finds
 * every "serve:" state file (recover): a live datapath gets a watcher (a
 * worker that polls a pidfd instead of the socket), a dead one is given
 * back if it was stopped, else kept dark; nothing is taken a second time,
 * nothing is forgotten.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <dirent.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>

#include "netsetup/front/front.h"

#define SERVE_MAX_CHILDREN	4096

const char ns_serve_usage[] =
	"usage: netsetup serve [--socket PATH] [--config FILE]\n"
	"       netsetup connect [--socket PATH] (--netns PATH | --pid PID) [--iface NAME]\n"
	"                        [--gso hw|sw|off] [--channels N] [--shards N|auto] [--face on|off]\n"
	"                        -- DATAPATH [ARGS...]\n";

struct serve {
	struct ns_serve_conf conf;
	const char *socket_path;
	bool bound;			/* we bound socket_path (not socket activation) */
	int listen_fd;
	int sig_fd;
	unsigned int n_children;
	pid_t children[SERVE_MAX_CHILDREN];
};

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "netsetup serve[%d]: ", (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * The datapath is gone (its supervisor, the process the client exec'd).
 * Only an explicit stop gives back: the supervisor says "stopped" in its
 * status file after SIGTERM or SIGINT (systemctl stop, netsetup detach). Any
 * other end, a SIGKILL or a crash of the supervisor, leaves the namespace
 * dark for `netsetup detach`, unless on_datapath_exit = restore asks to give
 * it back anyway. @path is the state file; the namespace is found through
 * the bind mount recorded in it.
 */
static void datapath_gone(const struct serve *s, const char *path)
{
	struct ns_err e = { .text = "" };
	struct proto_status status;
	struct ns_state st;
	bool stopped;

	if (ns_state_read(path, &st, &e) < 0) {
		logmsg("%s", e.text);
		return;
	}
	stopped = ns_status_read(path, &status) == 0 && status.state == PROTO_DP_STOPPED;
	if (!stopped && s->conf.keep_dark) {
		logmsg("datapath pid %d is gone without being stopped; netns kept dark (state %s; netsetup detach "
		       "gives back)", (int)st.datapath_pid, path);
		ns_state_free(&st);
		return;
	}
	if (ns_give_back(path, &st, NULL, true, &e) < 0)
		logmsg("datapath pid %d is gone; giving back failed: %s (state kept in %s)",
		       (int)st.datapath_pid, e.text, path);
	else
		logmsg("datapath pid %d %s; addresses and routes given back to the kernel (%s)",
		       (int)st.datapath_pid, stopped ? "was stopped" : "is gone (on_datapath_exit = restore)",
		       st.owner);
	ns_state_free(&st);
}

/*
 * Is the datapath gone, as @p says after a poll: the pidfd readable, or the
 * socket hung up or at EOF (anything else on it is drained: nothing is
 * expected after DONE)?
 */
static bool watch_gone(struct pollfd *p, bool is_socket)
{
	char buf[256];

	if (!is_socket)
		return p->revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL);
	if (p->revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL))
		return true;
	return (p->revents & POLLIN) && recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT) == 0;
}

/*
 * Worker step 4 (and a recovered datapath's watcher): wait until @fd, the
 * datapath's socket or its pidfd, says it is gone, or until serve is
 * stopped (SIGTERM or SIGINT from it, or from systemd to the whole unit).
 * Stopped, the datapath is looked at once more: when it went just before
 * (`systemctl stop datapath@X netsetup` stops them one after the other), it
 * is still given back. The signals stay blocked after: giving back is never
 * cut short.
 *
 * Return: true when the datapath is gone, false when serve stops first.
 */
static bool watch_until_gone(int fd, bool is_socket)
{
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN | POLLRDHUP }, { .events = POLLIN } };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	p[1].fd = signalfd(-1, &set, SFD_CLOEXEC);
	for (;;) {
		if (poll(p, p[1].fd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (watch_gone(&p[0], is_socket))
			break;
		if (p[1].revents & POLLIN) {
			close(p[1].fd);
			p[0].revents = 0;
			return poll(p, 1, 0) > 0 && watch_gone(&p[0], is_socket);
		}
	}
	if (p[1].fd >= 0)
		close(p[1].fd);
	return true;
}

static enum ns_gso_request gso_request_of(const struct proto_attach *req)
{
	if (!req->has_gso_mode)
		return NS_GSO_AUTO;
	switch (req->gso_mode) {
	case PROTO_GSO_HW:
		return NS_GSO_HW;
	case PROTO_GSO_SW:
		return NS_GSO_SW;
	default:
		return NS_GSO_OFF;
	}
}

static int worker(struct serve *s, int conn)
{
	struct timeval tv = { .tv_sec = s->conf.request_timeout_s };
	char fdpath[64], state_path[PATH_MAX], keep[PATH_MAX], owner[NS_OWNER_MAX];
	struct ns_err e = { .text = "" };
	struct proto_why why = { 0 };
	struct proto_msg *msg = NULL;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct ns_opts o;
	struct stat nst;
	bool kept = false;
	int ret, err, fd;

	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		logmsg("SO_PEERCRED: %s", strerror(errno));
		return 1;
	}
	setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ret = proto_recv(conn, &msg, &why);
	if (ret <= 0) {
		/* proto_recv() already answered a malformed message with ERROR. */
		logmsg("pid %d uid %u: %s", (int)cred.pid, (unsigned int)cred.uid,
		       ret == 0 ? "closed without a request" :
		       why.err == EAGAIN ? "sent no request in time" : why.text);
		if (ret < 0 && why.err == EAGAIN)
			proto_send_error(conn, 0, ETIMEDOUT, "no request within %u s (request_timeout)",
					 s->conf.request_timeout_s);
		return 1;
	}
	if (msg->type != PROTO_MSG_ATTACH) {
		proto_send_error(conn, msg->seq, EBADMSG, "expected ATTACH, got %s",
				 proto_msg_type_name(msg->type));
		logmsg("pid %d uid %u: refused: sent %s, not ATTACH", (int)cred.pid,
		       (unsigned int)cred.uid, proto_msg_type_name(msg->type));
		proto_msg_free(msg);
		return 1;
	}
	err = ns_serve_authorize(&s->conf, &cred, &msg->attach, &e);
	if (err) {
		proto_send_error(conn, msg->seq, -err, "netsetup serve: refused: %s", e.text);
		logmsg("pid %d: refused: %s", (int)cred.pid, e.text);
		proto_msg_free(msg);
		return 1;
	}
	fd = msg->attach.netns_fd;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	if (fstat(fd, &nst) < 0 || ns_state_path(nst.st_dev, nst.st_ino, state_path, sizeof(state_path))) {
		proto_send_error(conn, msg->seq, EINVAL, "netsetup serve: the netns fd cannot be examined");
		proto_msg_free(msg);
		return 1;
	}
	if (access(state_path, F_OK) == 0) {
		proto_send_error(conn, msg->seq, EEXIST, "netsetup serve: that netns is already attached (%s)",
				 state_path);
		logmsg("pid %d: refused: netns already attached (%s)", (int)cred.pid, state_path);
		proto_msg_free(msg);
		return 1;
	}
	proto_send_ack(conn, msg->seq);

	/* Keep the namespace reachable after a daemon restart: a bind mount, like ip netns. */
	mkdir(ns_state_dir(), 0700);
	kept = ns_netns_keep(fdpath, state_path, keep, sizeof(keep), &e) == 0;
	if (!kept)
		logmsg("%s; a restarted daemon will not be able to give it back", e.text);
	ns_opts_init(&o);
	o.cmd = NS_CMD_ATTACH;
	o.netns_path = kept ? keep : fdpath;
	o.gso = gso_request_of(&msg->attach);
	o.channels = msg->attach.channels ? msg->attach.channels : 1;
	o.shards = msg->attach.shards;	/* 0: the datapath's word, within max_channels */
	o.max_shards = s->conf.max_channels;
	o.no_face = msg->attach.no_face;
	if (msg->attach.ifname[0]) {
		o.ifaces[0] = msg->attach.ifname;
		o.n_ifaces = 1;
	}
	o.use_sock = true;
	o.sock = conn;
	o.datapath_pid = cred.pid;
	snprintf(owner, sizeof(owner), "serve:%d", (int)cred.pid);
	o.owner = owner;
	err = ns_shards_check(&o, "CHANNELS", "SHARDS", &e);
	if (!err)
		err = ns_attach(&o, &e);
	proto_msg_free(msg);
	if (err < 0) {
		proto_send_error(conn, 0, -err, "netsetup serve: %s", e.text);
		logmsg("pid %d: attach failed: %s", (int)cred.pid, e.text);
		if (kept)
			ns_netns_keep_remove(keep);
		return 1;
	}
	logmsg("pid %d uid %u: attached (state %s)", (int)cred.pid, (unsigned int)cred.uid, state_path);
	if (ns_privs_keep(NS_PRIVS_SERVE_WATCH, "serve: watching a datapath", &e) < 0)
		logmsg("pid %d: %s", (int)cred.pid, e.text);
	if (watch_until_gone(conn, true))
		datapath_gone(s, state_path);
	return 0;
}

static bool netns_matches(int fd, const struct ns_state *st)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 && (uint64_t)sb.st_dev == st->dev && (uint64_t)sb.st_ino == st->ino;
}

/*
 * The bind mount of a previous daemon can be gone (systemd gives each start
 * of a ProtectSystem= service its own mount namespace). While the datapath
 * lives, its channel sockets still reach the namespace (dpproc.c): bind-mount
 * it again from there.
 */
static void netns_keep_regain(const struct ns_state *st)
{
	char fdpath[64];
	int fd, nsfd;

	fd = open(st->netns_path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && netns_matches(fd, st)) {
		close(fd);
		return;
	}
	if (fd >= 0)
		close(fd);
	nsfd = ns_datapath_netns_fd(st);
	if (nsfd < 0) {
		logmsg("netns of %s: bind mount %s lost and not found through the datapath: %s",
		       st->owner, st->netns_path, strerror(-nsfd));
		return;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", nsfd);
	fd = open(st->netns_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0400);
	if (fd >= 0)
		close(fd);
	if (mount(fdpath, st->netns_path, NULL, MS_BIND, NULL) == 0)
		logmsg("netns of %s found again through the datapath's sockets", st->owner);
	else
		logmsg("netns of %s: bind mount on %s: %s", st->owner, st->netns_path, strerror(errno));
	close(nsfd);
}

/* A recovered datapath: no socket to watch, a pidfd instead. */
static int watcher(struct serve *s, const char *path, const struct ns_state *st)
{
	struct ns_err e = { .text = "" };
	int pidfd;

	if (ns_privs_keep(NS_PRIVS_SERVE_WATCH, "serve: watching a datapath", &e) < 0)
		logmsg("%s", e.text);
	pidfd = (int)syscall(SYS_pidfd_open, st->datapath_pid, 0);
	if (pidfd >= 0 && st->netns_path[0])
		netns_keep_regain(st);
	if (pidfd >= 0 && ns_datapath_alive(st) && !watch_until_gone(pidfd, false))
		return 0;	/* serve stops, the datapath serves on */
	datapath_gone(s, path);
	return 0;
}

static void child_add(struct serve *s, pid_t pid)
{
	if (s->n_children < SERVE_MAX_CHILDREN)
		s->children[s->n_children++] = pid;
}

static void children_reap(struct serve *s)
{
	unsigned int i;
	pid_t pid;

	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
		for (i = 0; i < s->n_children; i++) {
			if (s->children[i] == pid) {
				s->children[i] = s->children[--s->n_children];
				break;
			}
		}
	}
}

/* Fork a worker or watcher; the child never returns. */
static pid_t spawn(struct serve *s, int conn, const char *path, const struct ns_state *st)
{
	sigset_t set;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid != 0)
		return pid;
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	close(s->sig_fd);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
	_exit(conn >= 0 ? worker(s, conn) : watcher(s, path, st));
}

/* Find the state files of a previous daemon (owner "serve:PID"). */
static void recover(struct serve *s)
{
	const char *dir = ns_state_dir();
	struct ns_err e = { .text = "" };
	char path[PATH_MAX];
	struct ns_state st;
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t n;
	pid_t pid;

	if (!d)
		return;
	while ((de = readdir(d))) {
		n = strlen(de->d_name);
		if (n < 6 || strcmp(de->d_name + n - 6, ".state") ||
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (ns_state_read(path, &st, &e) < 0) {
			logmsg("recover: %s", e.text);
			continue;
		}
		if (!strncmp(st.owner, "serve:", 6)) {
			if (ns_datapath_alive(&st)) {
				pid = spawn(s, -1, path, &st);
				if (pid > 0)
					child_add(s, pid);
				logmsg("recovered %s: datapath pid %d still serves; watching it", path,
				       (int)st.datapath_pid);
			} else {
				logmsg("recovered %s: datapath pid %d is gone", path, (int)st.datapath_pid);
				datapath_gone(s, path);
			}
		}
		ns_state_free(&st);
	}
	closedir(d);
}

static int listen_open(struct serve *s, struct ns_err *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int n, fd, err;

	n = sd_listen_fds(1);
	if (n < 0) {
		ns_err_set(e, "sd_listen_fds: %s", strerror(-n));
		return n;
	}
	if (n > 1) {
		ns_err_set(e, "systemd passed %d sockets, expected one (netsetup.socket)", n);
		return -EINVAL;
	}
	if (n == 1) {
		if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_SEQPACKET, 1, NULL, 0) <= 0) {
			ns_err_set(e, "the socket systemd passed is not a listening unix SOCK_SEQPACKET socket");
			return -EINVAL;
		}
		s->listen_fd = SD_LISTEN_FDS_START;
		fcntl(s->listen_fd, F_SETFD, FD_CLOEXEC);
		s->socket_path = "(systemd socket)";
		return 0;
	}
	if (strlen(s->socket_path) >= sizeof(sa.sun_path)) {
		ns_err_set(e, "socket %s: path too long", s->socket_path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, s->socket_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		ns_err_set(e, "socket: %s", strerror(errno));
		return err;
	}
	unlink(s->socket_path);		/* a stale socket of a previous run */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		err = -errno;
		ns_err_set(e, "socket %s: %s%s", s->socket_path, strerror(errno),
			   err == -ENOENT ? " (its folder does not exist: create it, or give --socket a path "
					    "in one that does)" : "");
		close(fd);
		return err;
	}
	/* Anyone may connect: SO_PEERCRED and the configuration decide. */
	chmod(s->socket_path, 0666);
	s->listen_fd = fd;
	s->bound = true;
	return 0;
}

static int serve_args(struct serve *s, int argc, char **argv, struct ns_err *e)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	FILE *f;
	int opt, err;

	s->socket_path = NS_SERVE_SOCKET;
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			s->socket_path = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'h':
			fputs(ns_serve_usage, stdout);
			return 1;
		default:
			return ns_opt_refuse(e, opt, argv[optind - 1], ns_serve_usage);
		}
	}
	if (optind < argc) {
		ns_err_usage(e, "unexpected argument '%s'\n%s", argv[optind], ns_serve_usage);
		return -EINVAL;
	}
	ns_serve_conf_default(&s->conf);
	if (!config)
		return 0;
	f = fopen(config, "re");
	if (!f) {
		err = -errno;
		ns_err_set(e, "config %s: %s%s", config, strerror(errno),
			   err == -ENOENT ? " (the package and `make install` put one there: "
					    "netsetup.conf in docs/runtime.md; or leave --config out: root alone may attach)" : "");
		return err;
	}
	err = ns_serve_conf_parse(f, config, &s->conf, e);
	fclose(f);
	return err;
}

static int serve_run(int argc, char **argv, struct ns_err *e)
{
	static struct serve s;
	struct signalfd_siginfo si;
	struct pollfd p[2];
	sigset_t set;
	bool stop = false;
	unsigned int i;
	int err, conn;
	pid_t pid;

	s.listen_fd = -1;
	s.sig_fd = -1;
	err = serve_args(&s, argc, argv, e);
	if (err)
		return err > 0 ? 0 : err;
	err = ns_caps_check(true, e);
	if (err)
		return err;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	s.sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s.sig_fd < 0) {
		err = -errno;
		ns_err_set(e, "signalfd: %s", strerror(errno));
		return err;
	}
	err = listen_open(&s, e);
	if (err)
		goto out;
	/* the state folder now, not at the first request: a daemon that cannot keep state is not started */
	if (mkdir(ns_state_dir(), 0700) < 0 && errno != EEXIST) {
		err = -errno;
		ns_err_set(e, "state folder %s: %s (its parent must exist; systemd-tmpfiles --create makes "
			   "/run/sandnet from sandnet's tmpfiles.d file)", ns_state_dir(), strerror(-err));
		goto out;
	}
	/* Listening: what the workers and watchers need is all we keep (privs.c). */
	err = ns_privs_keep(NS_PRIVS_SERVE, "serve", e);
	if (err)
		goto out;
	recover(&s);
	logmsg("serving on %s (state in %s, when a datapath dies without being stopped: %s)", s.socket_path,
	       ns_state_dir(), s.conf.keep_dark ? "keep it dark" : "give back (on_datapath_exit = restore)");
	sd_notifyf(0, "READY=1\nSTATUS=serving on %s", s.socket_path);

	p[0] = (struct pollfd){ .fd = s.listen_fd, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = s.sig_fd, .events = POLLIN };
	while (!stop) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			ns_err_set(e, "poll: %s", strerror(errno));
			break;
		}
		while (read(s.sig_fd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
				stop = true;
		}
		children_reap(&s);
		if (stop || !(p[0].revents & POLLIN))
			continue;
		conn = accept4(s.listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			continue;
		if (s.n_children >= s.conf.max_clients) {
			proto_send_error(conn, 0, EAGAIN, "netsetup serve: busy: %u clients already (max_clients)",
					 s.conf.max_clients);
			close(conn);
			continue;
		}
		pid = spawn(&s, conn, NULL, NULL);
		if (pid > 0)
			child_add(&s, pid);
		else
			proto_send_error(conn, 0, EAGAIN, "netsetup serve: fork: %s", strerror(errno));
		close(conn);
	}
	sd_notify(0, "STOPPING=1");
	logmsg("stopping %u worker%s; the datapaths keep serving, their state stays in %s",
	       s.n_children, s.n_children == 1 ? "" : "s", ns_state_dir());
	for (i = 0; i < s.n_children; i++)
		kill(s.children[i], SIGTERM);
	for (i = 0; i < s.n_children; i++)
		waitpid(s.children[i], NULL, 0);
out:
	if (s.bound)
		unlink(s.socket_path);
	if (s.listen_fd >= 0)
		close(s.listen_fd);
	close(s.sig_fd);
	return err;
}

/**
 * ns_serve_main() - `netsetup serve`
 * @argc:	arguments from "serve" on
 * @argv:	argv[0] is "serve"
 * @e:		error message
 *
 * Under systemd, why it could not start is also the unit's status text
 * (`systemctl status netsetup`), beside the journal's line.
 *
 * Return: 0 after SIGTERM/SIGINT, or -errno when it cannot start.
 */
int ns_serve_main(int argc, char **argv, struct ns_err *e)
{
	int err = serve_run(argc, argv, e);

	if (err < 0 && e->text[0])
		sd_notifyf(0, "STATUS=cannot serve: %s", e->text);
	return err;
}
