// SPDX-License-Identifier: MIT
/*
 * attach.c - hand a namespace over to a datapath: `netsetup attach` and
 * `netsetup run`, and every front end that attaches (the CNI plugin and the
 * OCI hook run detached, serve attaches over its client's socket)
 *
 * Theory of operation: both hand a namespace over to a datapath; attach
 * connects to one that listens on a unix socket and exits once it has
 * acknowledged DONE, run starts the datapath itself on a socketpair, stays
 * as its parent, forwards SIGTERM/SIGINT/SIGHUP/SIGQUIT to it, and gives the
 * addresses back when it exits, for whatever reason (SIGKILL included: we
 * learn it from waitpid, not from the datapath).
 *
 * The steps, ordered so that everything that can fail without changing the
 * namespace fails first:
 *   1. capabilities, open the namespace (host refused), not yet attached;
 *      run: start the datapath (in our own namespace);
 *   2. enter the namespace; probe, select links, decide GSO modes;
 *   3. reach the datapath and agree on a version (HELLO), which also says
 *      how many shards it would run; check the protocol limits, open the
 *      channel sockets and make the container face's TUNs (face.c; down, no
 *      address: nothing changed yet);
 *   4. capture what will be taken and write the state file (this also
 *      claims the namespace: a concurrent attach fails here);
 *   5. take the addresses; with the face, keep the kernel off the link
 *      (nftables, disable_ipv6) and give the TUN the addresses and routes;
 *   6. send LINK..., DONE; on any failure give everything back and remove
 *      the state file, so that nothing is ever left half-applied;
 *   7. attach (and a detached run): return to our own namespace; run
 *      stays in it while it waits, and gives back from there.
 * Privileges (privs.c) shrink twice: once the namespace is open and the
 * datapath forked (NS_PRIVS_ATTACH), and in run once the datapath serves
 * (NS_PRIVS_RUN_WAIT: CAP_NET_ADMIN to give back, CAP_KILL to forward
 * signals to a datapath that runs as another user).
 * The namespace stays attached after attach exits: `netsetup detach` reads
 * the state file and gives everything back.
 *
 * Signals in run: they are blocked from before the fork until the datapath
 * is serving (a SIGTERM during setup waits, then is forwarded); the child
 * unblocks them before exec. Afterwards sigwaitinfo() is the whole event
 * loop: no handlers, no races with waitpid(). In attach they are blocked for
 * the whole command, so that an interrupt takes effect only once the
 * namespace is either fully attached or fully given back.
 *
 * Detached run (o->detach_child, set by the CNI plugin, the OCI hook and
 * serve, never from the command line): the datapath is started exactly as
 * run starts it, but in its own session with stdin/stdout on /dev/null and
 * stderr appended to STATEFILE.log (a runtime reading our stdout to EOF must
 * not wait for the datapath), with its control socket at STATEFILE.ctl and
 * its owner as --name (`datapath stats --all` shows every container); its
 * pid and start time go into the state file, and we return once it serves,
 * leaving it running: giveback.c stops it (dpproc.c) and gives the addresses
 * back later.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "netsetup/orch/orch_int.h"

struct attach {
	const struct ns_opts *o;
	char log_path[PATH_MAX + 8];	/* detached run: the datapath's stderr */
	char ctl_path[PATH_MAX + 8];	/* detached run: its control socket (`datapath stats --all`) */
	struct ns_netns ns;
	struct nl_sock *sk;
	struct ns_net net;
	int **fds;			/* per link of net; NULL when not selected */
	struct ns_face *faces;		/* per link of net; n_fds 0 when none */
	unsigned int shards;		/* asked (attach_shards()); 1 if steering did not load */
	unsigned int channels;		/* per link: o->channels, or one per shard */
	uint32_t steer_seed;		/* the steering program's secret, with shards > 1 */
	struct ns_state st;
	char state_path[PATH_MAX];
	bool state_written;
	bool taken;
	int orig_netns;			/* >= 0 while inside the target namespace */
	int sock;
	uint8_t minor;			/* the datapath's protocol minor (HELLO) */
	int status_fd;			/* the status file, for DONE; -1 once sent or none */
	struct ns_tcp_defaults tcp;	/* run: the namespace's TCP sysctls, the datapath's first options */
	pid_t child;
	sigset_t old_mask;
	bool mask_set;
};

static void fwd_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
}

/* run: the namespace's own TCP sysctls (read inside it), for child_start(). */
static int tcp_defaults(struct attach *a, struct ns_err *e)
{
	int orig, err;

	err = ns_netns_enter(&a->ns, &orig, e);
	if (err)
		return err;
	ns_tcp_defaults_read(&a->tcp);
	if (ns_netns_leave(orig) < 0) {
		ns_err_set(e, "cannot return to our own netns after reading its TCP settings");
		return -EIO;
	}
	if (a->tcp.note[0])
		fprintf(stderr, "netsetup: netns %s: %s\n", a->ns.name, a->tcp.note);
	return 0;
}

/*
 * Fork and exec `DATAPATH --fd N [--user USER] [--control PATH --name NAME]
 * --tcp-cc CC --tcp-ecn ECN ARGS...` on a socketpair: the namespace's TCP
 * settings (tcp_defaults.c) before ARGS, so that the user's win.
 */
static int child_start(struct attach *a, struct ns_err *e)
{
	const struct ns_opts *o = a->o;
	char fdbuf[16], path[PATH_MAX];
	char **argv;
	unsigned int n = 0, i;
	int sv[2], status_pipe[2], exec_errno, err;
	sigset_t set;
	ssize_t got;

	err = ns_datapath_find(o->child_argv[0], o->datapath_hint, path, sizeof(path), e);
	if (err)
		return err;
	for (i = 0; o->child_argv[i]; i++)
		;
	argv = calloc(i + 14, sizeof(*argv));
	if (!argv) {
		ns_err_set(e, "run: out of memory");
		return -ENOMEM;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		err = -errno;
		ns_err_set(e, "run: socketpair: %s", strerror(errno));
		free(argv);
		return err;
	}
	/* The child writes execv()'s errno here; a successful exec closes it empty. */
	if (pipe2(status_pipe, O_CLOEXEC) < 0) {
		err = -errno;
		ns_err_set(e, "run: pipe: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		free(argv);
		return err;
	}
	snprintf(fdbuf, sizeof(fdbuf), "%d", sv[1]);
	argv[n++] = o->child_argv[0];
	argv[n++] = "--fd";
	argv[n++] = fdbuf;
	if (o->user) {
		argv[n++] = "--user";
		argv[n++] = (char *)o->user;
	}
	if (o->detach_child) {
		/*
		 * First, so that a --control among the user's arguments wins.
		 * A state folder too deep for a unix socket's path only costs
		 * `datapath stats --all` this datapath.
		 */
		if (strlen(a->ctl_path) < sizeof(((struct sockaddr_un *)0)->sun_path)) {
			argv[n++] = "--control";
			argv[n++] = a->ctl_path;
		} else {
			fprintf(stderr, "netsetup: %s: too long for a unix socket: no control socket\n", a->ctl_path);
		}
		if (o->owner) {
			argv[n++] = "--name";
			argv[n++] = (char *)o->owner;
		}
	}
	argv[n++] = "--tcp-cc";
	argv[n++] = (char *)a->tcp.cc;
	argv[n++] = "--tcp-ecn";
	argv[n++] = (char *)a->tcp.ecn;
	for (i = 1; o->child_argv[i]; i++)
		argv[n++] = o->child_argv[i];
	argv[n] = NULL;

	/*
	 * A shell starts background jobs with SIGINT and SIGQUIT ignored; an
	 * ignored signal is never pending, so it could neither be waited for
	 * nor reach the datapath. Back to the defaults, then blocked.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	fwd_signals(&set);
	sigprocmask(SIG_BLOCK, &set, &a->old_mask);
	a->mask_set = true;
	fflush(NULL);
	a->child = fork();
	if (a->child < 0) {
		err = -errno;
		ns_err_set(e, "run: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		close(status_pipe[0]);
		close(status_pipe[1]);
		free(argv);
		return err;
	}
	if (a->child == 0) {
		sigprocmask(SIG_SETMASK, &a->old_mask, NULL);
		if (o->detach_child) {
			int null = open("/dev/null", O_RDWR | O_CLOEXEC);
			int log = open(a->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

			setsid();
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
				dup2(log >= 0 ? log : null, 2);
			}
		}
		fcntl(sv[1], F_SETFD, 0);
		execv(path, argv);
		exec_errno = errno;
		if (write(status_pipe[1], &exec_errno, sizeof(exec_errno)) < 0)
			_exit(126);
		_exit(127);
	}
	close(sv[1]);
	close(status_pipe[1]);
	free(argv);
	do {
		got = read(status_pipe[0], &exec_errno, sizeof(exec_errno));
	} while (got < 0 && errno == EINTR);
	close(status_pipe[0]);
	if (got == sizeof(exec_errno)) {
		ns_err_set(e, "cannot execute %s: %s%s%s", path, strerror(exec_errno),
			   o->datapath_hint ? "; " : "", o->datapath_hint ? o->datapath_hint : "");
		close(sv[0]);
		waitpid(a->child, NULL, 0);
		a->child = 0;
		return -exec_errno;
	}
	a->sock = sv[0];
	return 0;
}

/*
 * The last line a detached datapath wrote to its log (its reason: "datapath:
 * --egress-deny 'x': ..."), which nobody else would see; "" when none.
 */
static void child_last_words(const struct attach *a, char *buf, size_t size)
{
	char line[256];
	FILE *f;

	buf[0] = 0;
	if (!a->o->detach_child || !(f = fopen(a->log_path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0])
			snprintf(buf, size, ": %.200s", line);
	}
	fclose(f);
}

static void child_status_note(struct attach *a, struct ns_err *e)
{
	struct pollfd pfd = { .fd = a->sock, .events = POLLRDHUP };
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	size_t used = strlen(e->text);
	unsigned int waited;
	char words[256];
	bool hung_up;
	pid_t got;
	int status;

	if (a->child <= 0)
		return;
	/*
	 * A datapath that closed its socket is on its way out (an ASan build
	 * takes a while): a second at most for its status and words. One that
	 * still listens is stopped by the caller.
	 */
	hung_up = a->sock >= 0 && poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR));
	got = waitpid(a->child, &status, WNOHANG);
	for (waited = 0; hung_up && got == 0 && waited < 100; waited++) {
		nanosleep(&tick, NULL);
		got = waitpid(a->child, &status, WNOHANG);
	}
	if (got != a->child)
		return;
	a->child = 0;
	child_last_words(a, words, sizeof(words));
	if (WIFEXITED(status))
		snprintf(e->text + used, sizeof(e->text) - used, " (the datapath exited with status %d%s)",
			 WEXITSTATUS(status), words);
	else if (WIFSIGNALED(status))
		snprintf(e->text + used, sizeof(e->text) - used, " (the datapath was killed by signal %d%s)",
			 WTERMSIG(status), words);
}

static void child_stop(struct attach *a)
{
	if (a->child <= 0)
		return;
	kill(a->child, SIGTERM);
	waitpid(a->child, NULL, 0);
	a->child = 0;
}

/* The container face of the link with @ifindex, or NULL. */
static const struct ns_face *attach_face_of(const struct attach *a, int ifindex)
{
	unsigned int i;

	for (i = 0; i < a->net.n_links; i++)
		if (a->net.links[i].ifindex == ifindex && a->faces[i].n_fds)
			return &a->faces[i];
	return NULL;
}

/*
 * How many shards: what the user told netsetup (--shards, CNI "shards", the
 * annotation), else what the datapath said in HELLO (its --shards, by default
 * one per CPU it may run on), else one. --channels N alone keeps one shard
 * that reads N channels, as it always did. serve gives the datapath, which is
 * not trusted, no more than its max_channels.
 */
static unsigned int attach_shards(const struct ns_opts *o, unsigned int dp_shards)
{
	unsigned int most = o->max_shards ? o->max_shards : NS_MAX_SHARDS;

	if (o->shards)
		return o->shards;
	if (o->channels > 1 || !dp_shards)
		return 1;
	return dp_shards > most ? most : dp_shards;
}

/*
 * More than one shard: the steering program, or, where it cannot load (no
 * BPF, a locked-down kernel), one shard and a line that says why; the
 * container is served either way. SANDNET_NO_STEERING=1 takes the second
 * path on purpose (tests, and a way out should steering ever misbehave).
 */
static void attach_steering(struct attach *a, int *steer_fd)
{
	const struct ns_opts *o = a->o;
	struct ns_err why = { .text = "" };
	const char *off = getenv("SANDNET_NO_STEERING");
	uint32_t seed = 0;

	*steer_fd = -1;
	a->channels = a->shards > 1 ? a->shards : o->channels;
	if (a->shards == 1)
		return;
	if (off && !strcmp(off, "1")) {
		ns_err_set(&why, "steering off (SANDNET_NO_STEERING=1)");
	} else if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) {
		ns_err_set(&why, "steering secret: getrandom: %s", strerror(errno));
	} else {
		*steer_fd = ns_steer_load(seed, a->shards, &why);
		a->steer_seed = seed;
		if (*steer_fd >= 0)
			return;
	}
	fprintf(stderr, "netsetup: netns %s: %s; serving with one shard instead of %u\n", a->ns.name,
		why.text, a->shards);
	a->shards = 1;
	a->channels = 1;
}

/* Steps 3 to 6, inside the namespace. */
static int attach_inside(struct attach *a, struct ns_err *e)
{
	const struct ns_opts *o = a->o;
	struct proto_link *pl;
	bool kept = false;
	unsigned int i, dp_shards;
	int err, steer_fd;

	err = ns_nl_open(&a->sk, e);
	if (err)
		return err;
	err = ns_probe(a->sk, &a->net, o->gso, o->gso_max_bytes, e);
	if (err)
		return err;
	err = ns_select(&a->net, o->ifaces, o->n_ifaces, a->ns.name, e);
	if (err < 0)
		return err;
	err = 0;

	/*
	 * HELLO before the channels: the datapath says how many shards it
	 * would run. A unix socket path resolves the same from inside the
	 * namespace.
	 */
	if (o->cmd == NS_CMD_ATTACH && o->use_sock) {
		/* serve: the datapath connected to us; the caller keeps its fd. */
		a->sock = fcntl(o->sock, F_DUPFD_CLOEXEC, 3);
		if (a->sock < 0) {
			err = -errno;
			ns_err_set(e, "attach: dup: %s", strerror(errno));
			return err;
		}
	} else if (o->cmd == NS_CMD_ATTACH) {
		err = ns_handoff_connect(o->datapath, &a->sock, e);
		if (err)
			return err;
	}
	err = ns_handoff_hello(a->sock, !o->no_face, &a->minor, &dp_shards, e);
	if (err)
		return err;
	a->shards = attach_shards(o, dp_shards);
	if (a->shards > 1 && !o->no_face && a->minor < PROTO_MINOR_QUEUES) {
		ns_err_set(e, "HELLO: the datapath speaks protocol minor %u, %u shards need %u "
			   "(a datapath of this release, or --shards 1)", a->minor, a->shards, PROTO_MINOR_QUEUES);
		return -EPROTONOSUPPORT;
	}

	pl = malloc(sizeof(*pl));
	a->fds = calloc(a->net.n_links, sizeof(*a->fds));
	a->faces = calloc(a->net.n_links + 1, sizeof(*a->faces));
	if (!pl || !a->fds || !a->faces) {
		free(pl);
		ns_err_set(e, "attach: out of memory");
		return -ENOMEM;
	}
	attach_steering(a, &steer_fd);
	for (i = 0; i < a->net.n_links && !err; i++) {
		struct ns_link *l = &a->net.links[i];

		if (!l->selected)
			continue;
		err = ns_link_to_proto(&a->net, l, pl, e);
		if (err)
			break;
		a->fds[i] = malloc(a->channels * sizeof(int));
		if (!a->fds[i]) {
			ns_err_set(e, "attach: out of memory");
			err = -ENOMEM;
			break;
		}
		err = ns_channel_open(l, a->channels, steer_fd, a->fds[i], e);
		if (err) {
			free(a->fds[i]);
			a->fds[i] = NULL;
			break;
		}
		/* the container face's TUN: made now, down and empty, so that a
		 * missing /dev/net/tun or a taken name fails before any change */
		if (!o->no_face)
			err = ns_face_open(l, a->shards, &a->faces[i], e);
		if (!err && a->faces[i].n_fds && steer_fd >= 0)
			err = ns_steer_tun(a->faces[i].fds[0], steer_fd, e);
	}
	free(pl);
	if (steer_fd >= 0)
		close(steer_fd);	/* the TUNs and the fanout groups hold the program */
	if (err)
		return err;

	err = ns_takeover_prepare(&a->net, &a->ns, &a->st, e);
	if (err)
		return err;
	for (i = 0; i < a->st.n_links; i++) {
		const struct ns_face *fc = attach_face_of(a, a->st.links[i].ifindex);

		if (fc)
			ns_face_prepare(&a->st.links[i], fc);
	}
	if (o->datapath_pid > 0 && !o->detach_child) {
		a->st.datapath_pid = o->datapath_pid;
		if (ns_proc_start_time(o->datapath_pid, &a->st.datapath_start) < 0) {
			ns_err_set(e, "attach: the datapath (pid %d) is gone", (int)o->datapath_pid);
			return -ESRCH;
		}
	}
	if (o->cmd == NS_CMD_RUN) {
		/* its supervisor: what detach and restart find (run waits for it too) */
		a->st.datapath_pid = a->child;
		if (ns_proc_start_time(a->child, &a->st.datapath_start) < 0) {
			ns_err_set(e, "run: the datapath (pid %d) is gone before the handoff", (int)a->child);
			return -ESRCH;
		}
	}
	if (o->owner)
		snprintf(a->st.owner, sizeof(a->st.owner), "%s", o->owner);
	if (o->netns_path && o->netns_path[0] == '/' && strncmp(o->netns_path, "/proc/", 6) &&
	    !strchr(o->netns_path, ' ') &&
	    strlen(o->netns_path) < sizeof(a->st.netns_path)) {
		snprintf(a->st.netns_path, sizeof(a->st.netns_path), "%s", o->netns_path);
	} else if (o->detach_child) {
		/*
		 * Attached by pid (the OCI hook without a namespace path): the
		 * namespace must stay reachable for poststop even when the
		 * container's process and the datapath's supervisor are gone.
		 */
		char from[64];

		snprintf(from, sizeof(from), "/proc/self/fd/%d", a->ns.fd);
		err = ns_netns_keep(from, a->state_path, a->st.netns_path, sizeof(a->st.netns_path), e);
		if (err)
			return err;
		kept = true;
	}
	err = ns_state_write(a->state_path, &a->st, e);
	if (err) {
		if (kept)
			ns_netns_keep_remove(a->st.netns_path);
		return err;
	}
	a->state_written = true;
	/* where the datapath's supervisor says how it goes (DONE, minor 3) */
	if (a->minor >= PROTO_MINOR_STATUS) {
		a->status_fd = ns_status_open(a->state_path, e);
		if (a->status_fd < 0)
			return a->status_fd;
	}
	/* From here on, any failure gives back (ns_restore() copes with a partial takeover). */
	a->taken = true;
	err = ns_takeover(a->sk, &a->st, e);
	for (i = 0; !err && i < a->st.n_links; i++) {
		const struct ns_face *fc = attach_face_of(a, a->st.links[i].ifindex);

		if (fc)
			err = ns_face_setup(a->sk, &a->st, &a->st.links[i], fc, e);
	}
	if (err)
		return err;
	/* a datapath below minor 6 would count the netstat fds as too many */
	for (i = 0; a->faces && a->minor < PROTO_MINOR_NETSTAT && i < a->net.n_links; i++)
		while (a->faces[i].n_netstat)
			close(a->faces[i].netstat_fds[--a->faces[i].n_netstat]);
	err = ns_handoff_links(a->sock, &a->net, (int *const *)a->fds, a->channels, a->faces, a->status_fd,
			       a->shards > 1 ? &a->steer_seed : NULL, e);
	if (a->status_fd >= 0)
		close(a->status_fd);
	a->status_fd = -1;
	return err;
}

static void attach_release(struct attach *a)
{
	unsigned int i;

	if (a->faces) {
		/* the datapath holds its own fd: the TUN lives as long as it does */
		for (i = 0; i < a->net.n_links; i++)
			ns_face_close(&a->faces[i]);
		free(a->faces);
		a->faces = NULL;
	}

	if (a->fds) {
		for (i = 0; i < a->net.n_links; i++) {
			if (!a->fds[i])
				continue;
			ns_channel_close(a->fds[i], a->channels);
			free(a->fds[i]);
		}
		free(a->fds);
		a->fds = NULL;
	}
}

static void report(const struct attach *a)
{
	unsigned int i;

	for (i = 0; i < a->net.n_links; i++) {
		const struct ns_link *l = &a->net.links[i];

		if (l->selected)
			fprintf(stderr, "netsetup: netns %s: link %s handed to the datapath: GSO %s (%s), %u channel%s, %s%s%s\n",
				a->ns.name, l->ifname, proto_gso_mode_name(l->mode), l->reason,
				a->channels, a->channels == 1 ? "" : "s",
				a->faces && a->faces[i].n_fds ? "container face " : "no container face",
				a->faces && a->faces[i].n_fds ? a->faces[i].name : "",
				a->shards > 1 ? ", steered to shards" : "");
	}
}

/*
 * run, after the handoff: wait for the datapath's supervisor, forwarding
 * signals (SIGHUP: a new datapath takes over). Sets *@stopped when the end
 * was an explicit stop: SIGTERM or SIGINT we forwarded, or a supervisor
 * that says "stopped" (someone else stopped it on purpose). Anything else
 * is a death, and the namespace stays dark.
 */
static int run_wait(struct attach *a, bool *stopped)
{
	struct proto_status status;
	siginfo_t info;
	sigset_t set;
	int sig, wstatus = 0;

	*stopped = false;
	fwd_signals(&set);
	for (;;) {
		sig = sigwaitinfo(&set, &info);
		if (sig < 0) {
			if (errno == EINTR)
				continue;
			/* Cannot wait for signals: wait for the child alone. */
			waitpid(a->child, &wstatus, 0);
			break;
		}
		if (sig == SIGCHLD) {
			if (waitpid(a->child, &wstatus, WNOHANG) == a->child)
				break;
			continue;
		}
		if (sig == SIGTERM || sig == SIGINT)
			*stopped = true;
		kill(a->child, sig);
	}
	a->child = 0;
	if (ns_status_read(a->state_path, &status) == 0 && status.state == PROTO_DP_STOPPED)
		*stopped = true;
	if (WIFEXITED(wstatus)) {
		fprintf(stderr, "netsetup: the datapath's supervisor exited with status %d\n", WEXITSTATUS(wstatus));
		return WEXITSTATUS(wstatus);
	}
	fprintf(stderr, "netsetup: the datapath's supervisor was killed by signal %d\n", WTERMSIG(wstatus));
	return 128 + WTERMSIG(wstatus);
}

/**
 * ns_attach() - `netsetup attach` and `netsetup run`, for every front end
 * @o:		parsed options, or what a front end asks for (o->cmd says which)
 * @e:		error message
 *
 * Return: attach: 0; run: the exit code to use (the datapath's status, or
 * 128 + signal); both: -errno on failure, with nothing left changed.
 */
int ns_attach(const struct ns_opts *o, struct ns_err *e)
{
	struct attach a = { .o = o, .ns = { .fd = -1 }, .orig_netns = -1, .sock = -1, .status_fd = -1 };
	struct ns_err re = { .text = "" };
	bool stopped;
	int err, code = 0;

	err = ns_caps_check(true, e);
	if (err)
		return err;
	err = ns_netns_open(o->netns_path, o->pid, false, &a.ns, e);
	if (err)
		return err;
	err = ns_state_path(a.ns.dev, a.ns.ino, a.state_path, sizeof(a.state_path));
	if (err) {
		ns_err_set(e, "state file: path too long");
		goto out;
	}
	if (access(a.state_path, F_OK) == 0) {
		ns_err_set(e, "netns %s is already attached (state file %s); run netsetup detach first",
			   a.ns.name, a.state_path);
		err = -EEXIST;
		goto out;
	}
	snprintf(a.log_path, sizeof(a.log_path), "%s.log", a.state_path);
	snprintf(a.ctl_path, sizeof(a.ctl_path), "%s.ctl", a.state_path);
	if (o->detach_child && mkdir(ns_state_dir(), 0700) < 0 && errno != EEXIST) {
		err = -errno;
		ns_err_set(e, "state directory %s: %s", ns_state_dir(), strerror(errno));
		goto out;
	}
	if (o->cmd == NS_CMD_RUN) {
		err = tcp_defaults(&a, e);
		if (err)
			goto out;
		err = child_start(&a, e);
		if (err)
			goto out;
	} else {
		/*
		 * attach: a SIGTERM or ^C must not stop us between taking the
		 * addresses and handing them over; it waits until we are done
		 * (fully attached or fully given back), then takes effect.
		 */
		sigset_t set;

		fwd_signals(&set);
		sigdelset(&set, SIGCHLD);
		sigprocmask(SIG_BLOCK, &set, &a.old_mask);
		a.mask_set = true;
	}
	if (!o->use_sock) {
		/*
		 * The namespace is open and the datapath (run) forked with our
		 * full sets: from here on setns, netlink changes, AF_PACKET, and
		 * signals to our datapath (it runs as another user) are all.
		 * serve's worker keeps what serve gave it (serve.c drops).
		 */
		err = ns_privs_keep(a.child > 0 ? NS_PRIVS_ATTACH : NS_PRIVS_ATTACH & ~NS_PRIV(CAP_KILL),
				    o->cmd == NS_CMD_RUN ? "run" : "attach", e);
		if (err)
			goto out;
	}
	err = ns_netns_enter(&a.ns, &a.orig_netns, e);
	if (err)
		goto out;
	err = attach_inside(&a, e);
	if (err) {
		child_status_note(&a, e);
		goto out;
	}
	report(&a);
	attach_release(&a);
	if (o->cmd == NS_CMD_ATTACH || o->detach_child) {
		if (ns_netns_leave(a.orig_netns) < 0) {
			/* Nothing sensible is possible in the wrong namespace. */
			a.orig_netns = -1;
			ns_err_set(e, "cannot return to our own netns after the handoff");
			err = -EIO;
			goto out;
		}
		a.orig_netns = -1;
		/* Attached for good; a detached datapath keeps running on its own. */
		if (o->detach_child && o->child_pidp)
			*o->child_pidp = a.child;
		if (o->detach_child)
			a.child = 0;
		a.taken = false;
		a.state_written = false;
		goto out;
	}

	/*
	 * run waits inside the namespace (nothing of ours serves there), so
	 * that giving back needs no setns: CAP_SYS_ADMIN and CAP_NET_RAW go.
	 */
	close(a.orig_netns);
	a.orig_netns = -1;
	err = ns_privs_keep(NS_PRIVS_RUN_WAIT, "run: waiting for the datapath", e);
	if (err)
		goto out;
	code = run_wait(&a, &stopped);
	if (!stopped) {
		/* fail closed: a death never gives the container's network back */
		fprintf(stderr, "netsetup: netns %s stays dark: its datapath's supervisor died without being "
			"stopped; `netsetup detach` gives it back (state %s)\n", a.ns.name, a.state_path);
		a.taken = false;
		a.state_written = false;
		goto out;
	}
	err = ns_restore(a.sk, &a.st, e);
	a.taken = false;
	if (err) {
		a.state_written = false;	/* keep it, for detach to retry */
		goto out;
	}
	fprintf(stderr, "netsetup: netns %s: addresses and routes given back\n", a.ns.name);
out:
	/* The datapath goes first: it must not serve while the kernel takes over again. */
	if (a.sock >= 0)
		close(a.sock);
	a.sock = -1;
	child_stop(&a);
	if (a.taken) {
		if (ns_restore(a.sk, &a.st, &re) < 0) {
			size_t used = strlen(e->text);

			snprintf(e->text + used, sizeof(e->text) - used,
				 "; giving back failed too: %s (state kept in %s)", re.text, a.state_path);
			a.state_written = false;
		}
	}
	if (a.state_written) {
		ns_state_files_remove(a.state_path);
	} else if (err && o->detach_child) {
		unlink(a.log_path);
		unlink(a.ctl_path);
	}
	if (a.status_fd >= 0)
		close(a.status_fd);
	attach_release(&a);
	if (a.mask_set)
		sigprocmask(SIG_SETMASK, &a.old_mask, NULL);
	if (a.orig_netns >= 0)
		ns_netns_leave(a.orig_netns);
	if (a.sk)
		nl_socket_free(a.sk);
	ns_state_free(&a.st);
	ns_net_free(&a.net);
	ns_netns_close(&a.ns);
	return err ? err : code;
}
