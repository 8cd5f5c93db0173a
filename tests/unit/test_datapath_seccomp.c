// SPDX-License-Identifier: MIT
/*
 * test_datapath_seccomp.c - the datapath's seccomp allow-list (datapath/proc/seccomp.c)
 *
 * Each test forks a child that loads the filter with dp_seccomp_install()
 * and then makes one kind of system call; the parent checks how the child
 * ended: killed by SIGSYS for what the list forbids (socket() of AF_PACKET
 * and AF_NETLINK, execve, ptrace, kill of another process, executable
 * mmap), exit 0 for what the loop needs (epoll, sendmsg/recvmsg on a unix
 * pair, clock, malloc, socket() of AF_INET/AF_INET6/AF_UNIX, abort()'s
 * tgkill to itself). Tests of the production-only checks (PROT_EXEC, open
 * refused with EACCES, ptrace) are skipped in a sanitizer build, whose
 * filter allows what the sanitizer runtime needs.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "datapath/proc/seccomp.h"

#if defined(__SANITIZE_ADDRESS__)
#define T_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_SANITIZER 1
#endif
#endif

/* Run @fn in a child under the filter; return its wait status. */
static int run_filtered(int (*fn)(void))
{
	int status = 0;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char err[256];

		if (dp_seccomp_install(err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			_exit(100);
		}
		_exit(fn());
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static void assert_sigsys(int status)
{
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
		      "expected death by SIGSYS, got %s %d", WIFSIGNALED(status) ? "signal" : "exit",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static void assert_exit0(int status)
{
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "expected exit 0, got %s %d",
		      WIFSIGNALED(status) ? "signal" : "exit",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

static int do_packet(void) { return socket(AF_PACKET, SOCK_RAW, 0) >= 0 ? 0 : 1; }
static int do_netlink(void) { return socket(AF_NETLINK, SOCK_RAW, 0) >= 0 ? 0 : 1; }
static int do_execve(void)
{
	char *argv[] = { "/bin/true", NULL };

	execve("/bin/true", argv, NULL);
	return 1;
}
static int do_ptrace(void) { ptrace(PTRACE_TRACEME, 0, NULL, NULL); return 1; }
static int do_kill_parent(void) { kill(getppid(), 0); return 1; }
static int do_mmap_exec(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? 1 : 0;
}
static int do_open(void)
{
	int fd = open("/dev/null", O_RDONLY);

	return fd < 0 && errno == EACCES ? 0 : 1;
}

/* What the loop does: epoll, a unix pair, the clock, memory, service sockets. */
static int do_loop(void)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct timespec ts;
	char buf[16];
	void *big;
	int fd;

	(void)ev;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 2;
	big = malloc(8 << 20);	/* mmap */
	if (!big)
		return 3;
	memset(big, 1, 8 << 20);
	free(big);
	for (int fam = 0; fam < 3; fam++) {
		fd = socket(fam == 0 ? AF_INET : fam == 1 ? AF_INET6 : AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		if (fd < 0 && errno != EAFNOSUPPORT)
			return 4;
		if (fd >= 0)
			close(fd);
	}
	if (recv(-1, buf, sizeof(buf), MSG_DONTWAIT) >= 0 || errno != EBADF)
		return 5;
	return 0;
}

static int g_sv[2], g_ep;

static int do_epoll_pair(void)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	char buf[8];

	if (epoll_ctl(g_ep, EPOLL_CTL_ADD, g_sv[1], &ev) < 0)
		return 2;
	if (send(g_sv[0], "ping", 4, 0) != 4)
		return 3;
	if (epoll_wait(g_ep, &out, 1, 1000) != 1)
		return 4;
	if (recv(g_sv[1], buf, sizeof(buf), 0) != 4 || memcmp(buf, "ping", 4))
		return 5;
	close(g_sv[0]);
	close(g_sv[1]);
	close(g_ep);
	return 0;
}

static int do_abort(void)
{
	signal(SIGABRT, SIG_DFL);
	abort();
}

START_TEST(test_packet_socket_kills)
{
	assert_sigsys(run_filtered(do_packet));
}
END_TEST

START_TEST(test_netlink_socket_kills)
{
	assert_sigsys(run_filtered(do_netlink));
}
END_TEST

START_TEST(test_execve_kills)
{
	assert_sigsys(run_filtered(do_execve));
}
END_TEST

START_TEST(test_loop_syscalls_allowed)
{
	assert_exit0(run_filtered(do_loop));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM, 0, g_sv), 0);
	g_ep = epoll_create1(0);
	ck_assert_int_ge(g_ep, 0);
	assert_exit0(run_filtered(do_epoll_pair));
	close(g_sv[0]);
	close(g_sv[1]);
	close(g_ep);
}
END_TEST

START_TEST(test_abort_still_aborts)
{
	int status = run_filtered(do_abort);

	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
		      "abort() under the filter: %s %d", WIFSIGNALED(status) ? "signal" : "exit",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}
END_TEST

/* What glibc does as a thread starts; bad arguments: EINVAL when allowed. */
static int do_set_robust_list(void)
{
	return syscall(SYS_set_robust_list, NULL, 0) < 0 && errno == EINVAL ? 0 : 1;
}

/*
 * A thread that starts after the filter: none in production (the shards'
 * threads start before it, shard.c), so set_robust_list kills; a sanitizer
 * build allows it, because TSan's background thread, made along with the
 * first shard's thread, may start after the filter (CI saw that kill a TSan
 * datapath as it came up).
 */
START_TEST(test_thread_start_after_filter)
{
#ifdef T_SANITIZER
	assert_exit0(run_filtered(do_set_robust_list));
#else
	assert_sigsys(run_filtered(do_set_robust_list));
#endif
}
END_TEST

START_TEST(test_production_only_checks)
{
#ifdef T_SANITIZER
	return;	/* the sanitizer build allows these for its runtime */
#endif
	assert_sigsys(run_filtered(do_ptrace));
	assert_sigsys(run_filtered(do_kill_parent));
	assert_sigsys(run_filtered(do_mmap_exec));
	assert_exit0(run_filtered(do_open));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("datapath_seccomp");
	TCase *tc = tcase_create("seccomp");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_packet_socket_kills);
	tcase_add_test(tc, test_netlink_socket_kills);
	tcase_add_test(tc, test_execve_kills);
	tcase_add_test(tc, test_loop_syscalls_allowed);
	tcase_add_test(tc, test_abort_still_aborts);
	tcase_add_test(tc, test_production_only_checks);
	tcase_add_test(tc, test_thread_start_after_filter);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
