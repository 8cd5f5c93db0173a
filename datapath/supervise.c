// SPDX-License-Identifier: MIT
/*
 * supervise.c - the supervisor: it holds what the container's network needs,
 * and starts a datapath on it whenever the last one died
 *
 * Theory of operation
 *
 * The datapath parses every packet the container and the network send, so
 * it is the process most likely to crash, or to be crashed on purpose. Its
 * death must neither give the container's network back to the container's
 * kernel (that would escape the policy and the isolation: the old
 * behaviour) nor leave the container without a network until someone
 * notices. So the program netsetup starts is this supervisor, and the
 * datapath proper is its child:
 *
 *   netsetup --proto/--> supervisor --proto/ (socketpair)--> datapath (--worker)
 *                          holds: netsetup's LINK messages and their fds
 *                          (channels, TUNs), the status file, the control
 *                          socket, forward listeners, the ledger
 *
 * Start. As root, the supervisor answers netsetup's HELLO, makes the ledger
 * (ledger.c: the TCP secret, restart counters, the pairs to reset), binds
 * the control socket and the forward listeners, drops every privilege
 * (privdrop.c: the datapath's user, no capability, no_new_privs) and starts
 * its first datapath: this program again, --worker, with the inherited fds
 * on its command line and a socketpair for the configuration. It relays
 * netsetup's conversation to it message by message (each LINK's ACK or
 * ERROR is the datapath's own, so that a refused link is refused with the
 * datapath's reason) and keeps every LINK it relayed; DONE's status file
 * stays with the supervisor. netsetup's DONE is answered once the datapath
 * answered it: serving.
 *
 * Death. Whatever ends a datapath that was not asked to stop (a signal, an
 * exit status, a failed start), the supervisor records it (the ledger, the
 * status file, its log) and starts another at once, replaying the kept
 * LINKs with their fds and DONE: the same configuration on the same fds,
 * nothing in the container's netns changes, and the fence (netsetup's
 * nftables drop and disable_ipv6) never moves. The TUN stays too: the
 * supervisor holds its fd, so the container's addresses and routes stay on
 * it, and what the container sends meanwhile waits in the TUN's queue
 * (docs/face.md). The new datapath resets the connections the dead one left
 * (face_tcp.c, from the ledger) and keys its TCP engines with the same
 * secret. A start takes milliseconds (tens under ASan).
 *
 * Crash loop. The max_deaths-th death within death_window_s seconds (5 in
 * 60 by default) starts nothing: the container stays dark, fenced and with
 * no network, and says so in the status file, the log and the control
 * socket, which the supervisor then answers itself. SIGHUP (`netsetup
 * restart`) tries again from a clean slate.
 *
 * Upgrade. SIGHUP stops the datapath (SIGTERM; it resets its connections
 * itself) and starts the program at the path the supervisor was started
 * from: a new binary installed there takes over the same fds. The
 * supervisor itself is not replaced: it parses no packet, only netsetup's
 * messages and its datapaths' answers, and stays small.
 *
 * Stop. SIGTERM or SIGINT is the explicit stop: the datapath is stopped,
 * the status file says "stopped" (serve's watcher gives the namespace back
 * only then), and the supervisor exits 0. Its own death, by any other
 * signal, takes its datapath along (PR_SET_PDEATHSIG) and leaves the
 * container dark, never given back: netsetup decides what goes back, on an
 * explicit stop only.
 *
 * The supervisor needs no capability: holding an fd is enough to hand it to
 * a child, and its datapaths run as the same user. It has no system call
 * filter of its own (it forks and execs), which is why it parses nothing
 * from the container or the network.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "datapath/datapath.h"
#include "datapath/ledger.h"
#include "datapath/obs/obs.h"
#include "datapath/obs/stats.h"
#include "datapath/proc/proc.h"
#include "datapath/proc/shard.h"
#include "common/cpus.h"
#include "common/out.h"
#include "proto/status.h"

#define SUP_ANSWER_TIMEOUT_S	20	/* a datapath's answer to one message */
#define SUP_STOP_TIMEOUT_MS	5000	/* SIGTERM to SIGKILL */
#define SUP_WORKER_ARGS		16	/* what the supervisor adds to a datapath's argv */

/**
 * struct sup - the supervisor
 * @o:		the command line
 * @argc, @argv: the command line as given (each datapath gets it, minus
 *		what o->strip marks)
 * @exe:	the program to start, as this one was started
 * @ns_fd:	netsetup's socket, -1 once it closed it
 * @sig_fd:	SIGCHLD, SIGTERM, SIGINT, SIGHUP
 * @status_fd:	the status file (DONE's), -1 without
 * @control_fd:	the control socket, -1 without --control
 * @flow_log_fd: the flow log file, -1 without --flow-log
 * @listen_fds:	the forward listeners, one per --forward
 * @lg:		the ledger
 * @links:	netsetup's LINKs, as relayed (they own their fds)
 * @worker:	the datapath's pid, 0 when none runs
 * @worker_sock: the supervisor's end of its socketpair
 * @deaths_ms:	when the last max_deaths deaths were (a ring, monotonic ms)
 * @state:	what the status file and the control socket say
 * @reason:	why it is dark
 */
struct sup {
	const struct dp_opts *o;
	int argc;
	char **argv;
	char exe[PATH_MAX];
	int ns_fd;
	int sig_fd;
	int status_fd;
	int control_fd;
	int flow_log_fd;
	unsigned int n_listen;
	int listen_fds[DP_MAX_SVCS];
	struct ledger lg;
	unsigned int n_links;
	struct proto_msg *links[PROTO_MAX_LINKS];
	pid_t worker;
	int worker_sock;
	uint64_t *deaths_ms;
	unsigned int n_deaths;
	enum proto_dp_state state;
	char reason[512];
};

static void sup_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sup_log(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "datapath supervisor[%d]: ", (int)getpid());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Why something failed, in words (cut to fit: the paths may be long). */
static void sup_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void sup_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

static uint64_t sup_clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The status file (proto/status.c), rewritten whole at every change. */
static void sup_status_write(struct sup *s)
{
	const struct ledger_head *h = s->lg.head;
	struct proto_status st = {
		.state = s->state,
		.supervisor = getpid(),
		.datapath = s->worker,
		.restarts = h->restarts,
		.deaths = h->deaths,
	};
	int err;

	if (s->status_fd < 0)
		return;
	if (h->deaths)
		snprintf(st.last_death, sizeof(st.last_death), "%llu %d %.*s",
			 (unsigned long long)h->last_death_unix_ms, (int)h->last_death_pid,
			 (int)sizeof(h->last_death_why), h->last_death_why);
	if (s->state == PROTO_DP_DARK)
		snprintf(st.reason, sizeof(st.reason), "%s", s->reason);
	err = proto_status_write(s->status_fd, &st);
	if (err < 0)
		sup_log("status file: %s", strerror(-err));
}

/* The datapath's command line: ours, minus what we keep, plus its fds. */
static char **sup_worker_argv(struct sup *s, int sock, char bufs[][16])
{
	char **argv = calloc((size_t)s->argc + SUP_WORKER_ARGS + 2 * DP_MAX_SVCS, sizeof(*argv));
	unsigned int n = 0, b = 0, i;
	int k;

	if (!argv)
		return NULL;
	argv[n++] = s->argv[0];
	for (k = 1; k < s->argc; k++)
		if (!s->o->strip[k])
			argv[n++] = s->argv[k];
	argv[n++] = "--worker";
	snprintf(bufs[b], 16, "%d", sock);
	argv[n++] = "--fd";
	argv[n++] = bufs[b++];
	snprintf(bufs[b], 16, "%d", s->lg.fd);
	argv[n++] = "--ledger-fd";
	argv[n++] = bufs[b++];
	if (s->control_fd >= 0) {
		snprintf(bufs[b], 16, "%d", s->control_fd);
		argv[n++] = "--control-fd";
		argv[n++] = bufs[b++];
	}
	if (s->flow_log_fd >= 0) {
		snprintf(bufs[b], 16, "%d", s->flow_log_fd);
		argv[n++] = "--flow-log-fd";
		argv[n++] = bufs[b++];
	}
	for (i = 0; i < s->n_listen; i++) {
		snprintf(bufs[b], 16, "%d", s->listen_fds[i]);
		argv[n++] = "--listener-fd";
		argv[n++] = bufs[b++];
	}
	argv[n] = NULL;
	return argv;
}

/* In the child: the inherited fds stay open across exec, and only they. */
static void sup_child_fds(struct sup *s, int sock)
{
	unsigned int i;

	fcntl(sock, F_SETFD, 0);
	fcntl(s->lg.fd, F_SETFD, 0);
	if (s->control_fd >= 0)
		fcntl(s->control_fd, F_SETFD, 0);
	if (s->flow_log_fd >= 0)
		fcntl(s->flow_log_fd, F_SETFD, 0);
	for (i = 0; i < s->n_listen; i++)
		fcntl(s->listen_fds[i], F_SETFD, 0);
}

/*
 * Fork and exec a datapath on a new socketpair and agree on a version with
 * it. On failure @why says what, and the child (if any) is left for the
 * caller to reap as a death.
 */
static int sup_spawn(struct sup *s, char *why, size_t why_len)
{
	char bufs[SUP_WORKER_ARGS + DP_MAX_SVCS][16];
	struct timeval tv = { .tv_sec = SUP_ANSWER_TIMEOUT_S };
	struct proto_why pw = { 0 };
	int sv[2], ep[2], exec_errno, ret;
	pid_t parent = getpid(), pid;
	uint8_t version;
	sigset_t none;
	char **argv;
	ssize_t got;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		ret = -errno;
		snprintf(why, why_len, "socketpair: %s", strerror(errno));
		return ret;
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		ret = -errno;
		snprintf(why, why_len, "pipe: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return ret;
	}
	argv = sup_worker_argv(s, sv[1], bufs);
	if (!argv) {
		snprintf(why, why_len, "out of memory");
		ret = -ENOMEM;
		goto err_fds;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		snprintf(why, why_len, "fork: %s", strerror(errno));
		free(argv);
		goto err_fds;
	}
	if (pid == 0) {
		/* the datapath never outlives its supervisor: no half-served container */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		sup_child_fds(s, sv[1]);
		execv(s->exe, argv);
		exec_errno = errno;
		if (write(ep[1], &exec_errno, sizeof(exec_errno)) < 0)
			_exit(126);
		_exit(127);
	}
	free(argv);
	close(sv[1]);
	close(ep[1]);
	s->worker = pid;
	s->worker_sock = sv[0];
	do {
		got = read(ep[0], &exec_errno, sizeof(exec_errno));
	} while (got < 0 && errno == EINTR);
	close(ep[0]);
	if (got == sizeof(exec_errno)) {
		sup_why(why, why_len, "cannot execute %s as uid %u: %s%s", s->exe, (unsigned int)geteuid(),
			strerror(exec_errno), exec_errno == EACCES ?
			" (the datapath's user must be able to reach and run it: every folder on its path)" : "");
		return -exec_errno;
	}
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(sv[0], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	ret = proto_handshake(sv[0], true, DP_SOFTWARE " (supervisor)", 0, &version, NULL, &pw);
	if (ret < 0) {
		sup_why(why, why_len, "%s (pid %d) did not answer HELLO: %s", s->exe, (int)pid, pw.text);
		return ret;
	}
	return 0;
err_fds:
	close(sv[0]);
	close(sv[1]);
	close(ep[0]);
	close(ep[1]);
	return ret;
}

/* Send one message to the datapath and wait for its ACK. */
static int sup_ask(struct sup *s, int ret, uint32_t seq, const char *what, char *why, size_t why_len)
{
	struct proto_why pw = { 0 };

	if (ret >= 0)
		ret = proto_expect_ack(s->worker_sock, seq, &pw);
	else
		snprintf(pw.text, sizeof(pw.text), "%s", strerror(-ret));
	if (ret < 0)
		sup_why(why, why_len, "%s (pid %d) refused %s: %s", s->exe, (int)s->worker, what, pw.text);
	return ret;
}

/* Start a datapath and give it the configuration kept from netsetup. */
static int sup_start(struct sup *s, char *why, size_t why_len)
{
	uint32_t seq = 1;
	unsigned int i;
	int ret;

	ret = sup_spawn(s, why, why_len);
	for (i = 0; !ret && i < s->n_links; i++, seq++)
		ret = sup_ask(s, proto_send_link(s->worker_sock, seq, &s->links[i]->link), seq, "its LINK", why,
			      why_len);
	if (!ret)
		ret = sup_ask(s, proto_send_done(s->worker_sock, seq), seq, "DONE", why, why_len);
	return ret;
}

/* Wait up to @timeout_ms for @pid; SIGKILL it then. Returns its wait status. */
static int sup_reap(pid_t pid, unsigned int timeout_ms)
{
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	unsigned int waited = 0;
	int status = 0;
	pid_t got;

	for (;;) {
		got = waitpid(pid, &status, WNOHANG);
		if (got == pid || (got < 0 && errno == ECHILD))
			return status;
		if (waited == timeout_ms)
			kill(pid, SIGKILL);
		if (waited > timeout_ms + 5000)
			return status;	/* not ours to wait for any more */
		nanosleep(&tick, NULL);
		waited += 10;
	}
}

/* The datapath's socketpair goes with it. */
static void sup_worker_gone(struct sup *s)
{
	s->worker = 0;
	if (s->worker_sock >= 0)
		close(s->worker_sock);
	s->worker_sock = -1;
}

/*
 * A datapath ended without being asked: record it. Return true when that
 * makes the crash loop (the container goes dark).
 */
static bool sup_death(struct sup *s, pid_t pid, int status, const char *why)
{
	struct ledger_head *h = s->lg.head;
	uint64_t now = sup_clock_ms(CLOCK_MONOTONIC);
	unsigned int i, recent = 0;

	h->deaths++;
	h->last_death_pid = (int32_t)pid;
	h->last_death_status = status;
	h->last_death_unix_ms = sup_clock_ms(CLOCK_REALTIME);
	if (why)
		snprintf(h->last_death_why, sizeof(h->last_death_why), "%s", why);
	else
		ledger_death_text(status, h->last_death_why, sizeof(h->last_death_why));
	s->deaths_ms[s->n_deaths++ % s->o->max_deaths] = now;
	for (i = 0; i < s->o->max_deaths && i < s->n_deaths; i++)
		recent += now - s->deaths_ms[i] < (uint64_t)s->o->death_window_s * 1000;
	sup_log("the datapath (pid %d) %s", (int)pid, h->last_death_why);
	if (recent < s->o->max_deaths)
		return false;
	sup_why(s->reason, sizeof(s->reason),
		"crash loop: %u deaths within %u s, the last: pid %d %s; no datapath is started any more "
		"(netsetup restart tries again)", recent, s->o->death_window_s, (int)pid, h->last_death_why);
	s->state = PROTO_DP_DARK;
	sup_log("the container stays dark: %s", s->reason);
	sup_status_write(s);
	return true;
}

/* Start datapaths until one serves or the crash loop says no more. */
static void sup_revive(struct sup *s)
{
	char why[PROTO_TEXT_MAX + PATH_MAX];
	pid_t pid;
	int status;

	while (s->state != PROTO_DP_DARK) {
		s->state = PROTO_DP_RESTARTING;
		sup_status_write(s);
		s->lg.head->restarts++;
		if (sup_start(s, why, sizeof(why)) == 0) {
			s->state = PROTO_DP_SERVING;
			sup_log("datapath pid %d serves (restart %u)", (int)s->worker, s->lg.head->restarts);
			sup_status_write(s);
			return;
		}
		/* a start that failed is a death too: its reason is how it ended, and the failure */
		pid = s->worker;
		if (s->worker_sock >= 0)
			shutdown(s->worker_sock, SHUT_RDWR);
		status = pid > 0 ? sup_reap(pid, 1000) : 0;
		sup_worker_gone(s);
		if (pid > 0 && !strstr(why, "cannot execute")) {
			char how[96], both[sizeof(why)];

			sup_why(both, sizeof(both), "%s before it served (%s)", ledger_death_text(status, how, sizeof(how)),
				why);
			memcpy(why, both, sizeof(why));
		}
		sup_death(s, pid, status, why);
	}
}

/* Stop the running datapath on request: SIGTERM, SIGKILL after a while. */
static void sup_worker_stop(struct sup *s)
{
	if (!s->worker)
		return;
	kill(s->worker, SIGTERM);
	sup_reap(s->worker, SUP_STOP_TIMEOUT_MS);
	sup_worker_gone(s);
}

/* The answer of the control socket while no datapath runs. */
static int sup_print(void *ctx, FILE *f, bool json, bool summary)
{
	struct sup *s = ctx;
	struct out o;

	(void)summary;
	out_init(&o, f, json);
	out_str(&o, "name", s->o->name ? s->o->name : "");
	out_u64(&o, "pid", (uint64_t)getpid());
	out_u64(&o, "uid", (uint64_t)geteuid());
	stats_print_supervisor(&o, s->lg.head, s->state,
			       s->state == PROTO_DP_DARK ? s->reason : NULL);
	out_finish(&o);
	return 0;
}

/*
 * netsetup's conversation, relayed to the first datapath message by
 * message; the LINKs are kept for the next ones.
 */
static int sup_intake(struct sup *s)
{
	char why[PROTO_TEXT_MAX + PATH_MAX];
	struct proto_why pw = { 0 };
	struct proto_msg *msg;
	uint32_t seq = 1;
	int ret;

	ret = sup_spawn(s, why, sizeof(why));
	for (;;) {
		msg = NULL;
		if (proto_recv(s->ns_fd, &msg, &pw) <= 0) {
			sup_log("configuration from netsetup: %s", pw.text[0] ? pw.text : "closed before DONE");
			return -ECONNRESET;
		}
		if (ret < 0) {
			/* the datapath did not start: every answer is its reason */
			proto_send_error(s->ns_fd, msg->seq, -ret, "datapath: %s", why);
			sup_log("%s", why);
			proto_msg_free(msg);
			return ret;
		}
		switch (msg->type) {
		case PROTO_MSG_LINK:
			if (s->n_links >= PROTO_MAX_LINKS) {
				proto_send_error(s->ns_fd, msg->seq, E2BIG, "datapath: more than %d LINKs",
						 PROTO_MAX_LINKS);
				ret = -E2BIG;
				break;
			}
			ret = proto_send_link(s->worker_sock, seq, &msg->link);
			if (ret >= 0)
				ret = proto_expect_ack(s->worker_sock, seq, &pw);
			else
				snprintf(pw.text, sizeof(pw.text), "datapath: %s", strerror(-ret));
			seq++;
			if (ret < 0) {
				/* the datapath's own reason, to netsetup's LINK */
				proto_send_error(s->ns_fd, msg->seq, pw.err > 0 ? pw.err : EPROTO, "%s", pw.text);
				break;
			}
			proto_send_ack(s->ns_fd, msg->seq);
			s->links[s->n_links++] = msg;
			continue;
		case PROTO_MSG_DONE:
			if (msg->done.has_status) {
				s->status_fd = msg->done.status_fd;
				msg->done.has_status = false;
			}
			ret = proto_send_done(s->worker_sock, seq);
			if (ret >= 0)
				ret = proto_expect_ack(s->worker_sock, seq, &pw);
			else
				snprintf(pw.text, sizeof(pw.text), "datapath: %s", strerror(-ret));
			if (ret < 0)
				proto_send_error(s->ns_fd, msg->seq, pw.err > 0 ? pw.err : EPROTO, "%s", pw.text);
			else
				ret = proto_send_ack(s->ns_fd, msg->seq);
			break;
		default:
			proto_send_error(s->ns_fd, msg->seq, EPROTO, "datapath: unexpected %s during configuration",
					 proto_msg_type_name(msg->type));
			ret = -EPROTO;
			break;
		}
		proto_msg_free(msg);
		return ret;
	}
}

/* What to do about the signals that arrived. */
struct sup_signals {
	bool stop, restart, child;
};

static void sup_signals_read(struct sup *s, struct sup_signals *sig)
{
	struct signalfd_siginfo si;

	while (read(s->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			sig->stop = true;
		else if (si.ssi_signo == SIGHUP)
			sig->restart = true;
		else if (si.ssi_signo == SIGCHLD)
			sig->child = true;
	}
}

/* Reap every child; the datapath's death is a death unless it was asked to go. */
static void sup_children(struct sup *s, bool stopping)
{
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid != s->worker)
			continue;
		sup_worker_gone(s);
		if (stopping)
			continue;
		if (!sup_death(s, pid, status, NULL))
			sup_revive(s);
	}
}

static int sup_loop(struct sup *s)
{
	struct sup_signals sig = { 0 };
	struct pollfd p[3];
	int ins, ictl;
	nfds_t n;

	while (!sig.stop) {
		n = 0;
		ins = ictl = -1;
		p[n++] = (struct pollfd){ .fd = s->sig_fd, .events = POLLIN };
		if (s->ns_fd >= 0) {
			ins = (int)n;
			p[n++] = (struct pollfd){ .fd = s->ns_fd, .events = POLLIN | POLLRDHUP };
		}
		if (s->control_fd >= 0 && !s->worker) {
			ictl = (int)n;
			p[n++] = (struct pollfd){ .fd = s->control_fd, .events = POLLIN };
		}
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			sup_log("poll: %s", strerror(errno));
			return 1;
		}
		sig = (struct sup_signals){ 0 };
		sup_signals_read(s, &sig);
		if (ins >= 0 && p[ins].revents) {
			char buf[256];

			/* nothing is expected after DONE: EOF means netsetup went */
			if (p[ins].revents & (POLLHUP | POLLRDHUP | POLLERR) ||
			    recv(s->ns_fd, buf, sizeof(buf), MSG_DONTWAIT) == 0) {
				close(s->ns_fd);
				s->ns_fd = -1;
			}
		}
		if (ictl >= 0 && p[ictl].revents)
			control_answer(s->control_fd, sup_print, NULL, s);
		if (sig.child)
			sup_children(s, sig.stop);
		if (sig.restart && !sig.stop) {
			sup_log("SIGHUP: a new datapath from %s takes over%s", s->exe,
				s->state == PROTO_DP_DARK ? " (the crash-loop count starts again)" : "");
			sup_worker_stop(s);
			s->n_deaths = 0;
			s->state = PROTO_DP_RESTARTING;
			sup_revive(s);
		}
	}
	sup_log("stopping on request");
	sup_worker_stop(s);
	s->state = PROTO_DP_STOPPED;
	sup_status_write(s);
	return 0;
}

static void sup_free(struct sup *s)
{
	unsigned int i;

	for (i = 0; i < s->n_links; i++)
		proto_msg_free(s->links[i]);
	for (i = 0; i < s->n_listen; i++)
		close(s->listen_fds[i]);
	for (i = 0; i < s->o->n_specs; i++) {
		const struct svc_spec *sp = &s->o->specs[i];

		if (sp->kind == SVC_FORWARD && sp->listen.is_unix)
			unlink(((const struct sockaddr_un *)&sp->listen.sa)->sun_path);
	}
	if (s->control_fd >= 0) {
		close(s->control_fd);
		/* unprivileged now: removal may fail in a root-owned folder (netsetup removes it) */
		unlink(s->o->control);
	}
	if (s->status_fd >= 0)
		close(s->status_fd);
	if (s->flow_log_fd >= 0)
		close(s->flow_log_fd);
	if (s->worker_sock >= 0)
		close(s->worker_sock);
	if (s->ns_fd >= 0)
		close(s->ns_fd);
	if (s->sig_fd >= 0)
		close(s->sig_fd);
	ledger_unmap(&s->lg);
	free(s->deaths_ms);
}

/**
 * supervise_main() - `datapath` as netsetup starts it: the supervisor
 * @o:		the parsed command line
 * @argc:	as main() got it
 * @argv:	as main() got it; each datapath gets it, minus o->strip
 *
 * Return: the exit status: 0 after an explicit stop; when the first
 * datapath never served (netsetup was told why), its own exit status or 128
 * + its signal, else 1.
 */
int supervise_main(const struct dp_opts *o, int argc, char **argv)
{
	static struct sup s;
	struct proto_why pw = { 0 };
	char err[1024] = "";
	uint8_t version;
	unsigned int i;
	sigset_t mask;
	ssize_t n;
	int ret, rc = 1, shards;

	s.o = o;
	s.argc = argc;
	s.argv = argv;
	s.ns_fd = -1;
	s.sig_fd = -1;
	s.status_fd = -1;
	s.control_fd = -1;
	s.flow_log_fd = -1;
	s.worker_sock = -1;
	s.lg.fd = -1;
	signal(SIGPIPE, SIG_IGN);
	/* the path this program was started from: an upgrade replaces what is there */
	n = readlink("/proc/self/exe", s.exe, sizeof(s.exe) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(s.exe) - 1) {
		snprintf(err, sizeof(err), "/proc/self/exe: %s", n < 0 ? strerror(errno) : "path too long");
		goto out;
	}
	s.exe[n] = '\0';
	s.deaths_ms = calloc(o->max_deaths, sizeof(*s.deaths_ms));
	if (!s.deaths_ms) {
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	s.sig_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (s.sig_fd < 0) {
		snprintf(err, sizeof(err), "signalfd: %s", strerror(errno));
		goto out;
	}

	if (o->listen) {
		ret = config_accept(o->listen, s.sig_fd, &s.ns_fd, err, sizeof(err));
		if (ret == -ECANCELED)
			rc = 0;		/* asked to stop: not a failure */
		if (ret < 0)
			goto out;
	} else {
		s.ns_fd = o->fd;
	}
	/* the shards to ask netsetup for: --shards, or one per CPU we may run on */
	shards = o->shards ? (int)o->shards : cpus_allowed(SHARD_MAX);
	if (shards < 0) {
		sup_log("--shards auto: sched_getaffinity: %s; asking for one shard", strerror(-shards));
		shards = 1;
	}
	ret = proto_handshake(s.ns_fd, false, DP_SOFTWARE, (unsigned int)shards, &version, NULL, &pw);
	if (ret < 0) {
		snprintf(err, sizeof(err), "handshake with netsetup: %s", pw.text);
		goto out;
	}
	/* what a datapath cannot do once it runs unprivileged, done now */
	ret = ledger_create(&s.lg, o->limits.max_conns && o->limits.max_conns < LEDGER_PAIRS_MAX ?
				   o->limits.max_conns : LEDGER_PAIRS_MAX);
	if (ret < 0) {
		snprintf(err, sizeof(err), "the ledger (memfd): %s", strerror(-ret));
		goto out_tell;
	}
	s.lg.head->max_deaths = o->max_deaths;
	s.lg.head->death_window_s = o->death_window_s;
	if (o->control) {
		s.control_fd = control_bind(o->control, err, sizeof(err));
		if (s.control_fd < 0)
			goto out_tell;
	}
	if (o->flow_log) {
		/* appended to, by every datapath started on it; readable by root and the group */
		s.flow_log_fd = open(o->flow_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
		if (s.flow_log_fd < 0) {
			snprintf(err, sizeof(err), "--flow-log %s: %s", o->flow_log, strerror(errno));
			goto out_tell;
		}
	}
	for (i = 0; i < o->n_specs; i++) {
		if (o->specs[i].kind != SVC_FORWARD)
			continue;
		ret = svc_listen_open(&o->specs[i], err, sizeof(err));
		if (ret < 0)
			goto out_tell;
		s.listen_fds[s.n_listen++] = ret;
	}
	ret = privdrop(o->user, err, sizeof(err));
	if (ret < 0)
		goto out_tell;
	prctl(PR_SET_NAME, "sn-supervise");

	s.state = PROTO_DP_STARTING;
	if (sup_intake(&s) < 0) {
		/* the first datapath never served: exit as it did, for netsetup run to report */
		if (s.worker) {
			int status;

			if (s.worker_sock >= 0)
				shutdown(s.worker_sock, SHUT_RDWR);
			status = sup_reap(s.worker, SUP_STOP_TIMEOUT_MS);
			sup_worker_gone(&s);
			if (WIFSIGNALED(status))
				rc = 128 + WTERMSIG(status);
			else if (WIFEXITED(status) && WEXITSTATUS(status))
				rc = WEXITSTATUS(status);
		}
		goto out;
	}
	s.state = PROTO_DP_SERVING;
	sup_status_write(&s);
	rc = sup_loop(&s);
	goto out;
out_tell:
	/* netsetup waits for an answer to its first LINK: tell it why */
	{
		struct proto_msg *msg = NULL;

		if (proto_recv(s.ns_fd, &msg, &pw) > 0) {
			proto_send_error(s.ns_fd, msg->seq, EINVAL, "datapath: %s", err);
			proto_msg_free(msg);
		}
	}
out:
	if (err[0])
		fprintf(stderr, "datapath: %s\n", err);
	sup_free(&s);
	return rc;
}
