// SPDX-License-Identifier: MIT
/*
 * seccomp.c - the datapath's system call allow-list
 *
 * Theory of operation: after privdrop() the datapath only moves frames
 * between the channel fds, its stack and the service sockets. The filter
 * dp_seccomp_install() loads (libseccomp, native architecture only; a
 * system call of another ABI, e.g. int 0x80 or x32, kills) allows exactly
 * what that loop needs, and kills the whole process (SCMP_ACT_KILL_PROCESS,
 * seen as SIGSYS by its parent) on anything else:
 *
 *   the loop         epoll_wait/epoll_pwait/epoll_ctl, read/write/readv/
 *                    writev, close, fcntl, clock_gettime & co, restart_syscall
 *   TUN batches      io_uring_enter only: the rings (link/uring.c) exist
 *                    before the filter and are restricted to readv/writev
 *                    of the TUN's own fds; io_uring_setup and
 *                    io_uring_register kill
 *   frames           recvmmsg/sendmmsg/recvmsg/sendmsg/recvfrom/sendto,
 *                    getsockopt/setsockopt (PACKET_STATISTICS, SO_ERROR, ...)
 *   services         socket() with domain AF_INET, AF_INET6 or AF_UNIX only
 *                    (a service connects its backend after the drop; never
 *                    AF_PACKET, AF_NETLINK, ...), connect, bind (port 0 of a
 *                    backend flow), listen, accept/accept4, shutdown,
 *                    getsockname/getpeername
 *   memory           brk, mmap and mprotect without PROT_EXEC (no new code
 *                    can be mapped), munmap, mremap, madvise
 *   libc             futex, getrandom, getpid/gettid/get[e]uid/get[e]gid,
 *                    rt_sigprocmask/rt_sigaction/rt_sigreturn, tgkill to this
 *                    process only (abort()), fstat/newfstatat/lseek (stdio),
 *                    exit/exit_group, rseq (a shard's thread: its per-CPU
 *                    area, which the kernel writes into the thread's memory)
 *   shutdown         unlink/unlinkat (a unix listener removes its path; the
 *                    uid we run as limits what it can remove)
 *   ioctl            FIONREAD only; TCGETS (stdio's isatty()) fails with
 *                    ENOTTY instead of killing
 *   open/openat      fail with EACCES instead of killing: nothing needs a
 *                    file after setup, and a library that tries gets an error
 * Everything else kills: execve/execveat, fork/clone/vfork, ptrace,
 * process_vm_*, kill of others, prctl, setuid & co, mount, bpf, io_uring_setup
 * and io_uring_register, keyctl, socket() of any other family, ioctl of anything else...
 *
 * Sanitizer builds (ASan/LSan/UBSan, TSan) need more at run time
 * (LeakSanitizer stops the world with clone + ptrace and reads /proc/self;
 * reports open files; TSan's background thread, made along with the first
 * shard's thread, may start after the filter, and glibc's start of a thread
 * calls set_robust_list: once CI saw that kill a TSan datapath with SIGSYS
 * as it came up): those builds add that list (dp_seccomp_sanitizer[]) and
 * drop the PROT_EXEC check. The production build does not have them.
 *
 * SANDNET_SECCOMP_SELFTEST=1 in the environment makes dp_seccomp_install()
 * try socket(AF_PACKET) right after loading the filter: the process must die
 * with SIGSYS (tests/integration/hardening_seccomp.sh).
 */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "datapath/proc/seccomp.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DP_SECCOMP_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DP_SECCOMP_SANITIZER 1
#endif
#endif

/* Allowed with any arguments. */
static const char *const dp_seccomp_plain[] = {
	"read", "write", "readv", "writev", "close", "fcntl",
	"epoll_wait", "epoll_pwait", "epoll_pwait2", "epoll_ctl",
	"clock_gettime", "clock_getres", "gettimeofday", "time", "nanosleep", "clock_nanosleep",
	"restart_syscall",
	"recvmmsg", "sendmmsg", "recvmsg", "sendmsg", "recvfrom", "sendto",
	"getsockopt", "setsockopt", "getsockname", "getpeername",
	"connect", "bind", "listen", "accept", "accept4", "shutdown",
	"brk", "munmap", "mremap", "madvise",
	"futex", "getrandom",
	"getpid", "gettid", "getuid", "geteuid", "getgid", "getegid",
	"rt_sigprocmask", "rt_sigaction", "rt_sigreturn",
	"fstat", "newfstatat", "lseek",
	"unlink", "unlinkat",
	"exit", "exit_group",
	"rseq",		/* glibc (un)registers a shard's thread with the kernel's restartable sequences */
	/* a TUN's batches (link/uring.c): its rings were made and restricted to readv/writev
	 * of the TUN before this filter; io_uring_setup and io_uring_register stay out */
	"io_uring_enter",
	"sched_yield",	/* between busy polls (loop.c) */
};

#ifdef DP_SECCOMP_SANITIZER
/* What the sanitizer runtimes use (LSan's StopTheWorld, reports). */
static const char *const dp_seccomp_sanitizer[] = {
	"clone", "clone3", "ptrace", "wait4", "waitid", "prctl", "sched_yield",
	"sched_getaffinity", "sigaltstack", "open", "openat", "getdents", "getdents64",
	"readlink", "readlinkat", "stat", "lstat", "statx", "access", "faccessat", "faccessat2",
	"pread64", "pipe", "pipe2", "dup", "dup2", "dup3", "getrlimit", "setrlimit", "prlimit64",
	"uname", "getppid", "kill", "tkill", "tgkill", "rt_sigtimedwait", "rt_sigsuspend",
	"mincore", "msync", "process_vm_readv", "mmap", "mprotect", "ioctl",
	"set_robust_list",
};
#endif

static const int dp_seccomp_families[] = { AF_INET, AF_INET6, AF_UNIX };

/* SCMP_A0() & co leave datum_b to the compiler; clang -Wextra refuses that. */
static struct scmp_arg_cmp dp_arg(unsigned int arg, enum scmp_compare op, scmp_datum_t a,
				  scmp_datum_t b)
{
	struct scmp_arg_cmp c = { .arg = arg, .op = op, .datum_a = a, .datum_b = b };

	return c;
}

static int dp_seccomp_rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned int n,
			   const struct scmp_arg_cmp *args, char *err, size_t err_len)
{
	int nr = seccomp_syscall_resolve_name(name);
	int ret;

	if (nr == __NR_SCMP_ERROR)
		return 0;	/* not a system call of this architecture */
	ret = seccomp_rule_add_array(ctx, action, nr, n, args);
	if (ret < 0)
		snprintf(err, err_len, "seccomp: rule for %s: %s", name, strerror(-ret));
	return ret;
}

static void dp_seccomp_selftest(void)
{
	int fd;

	fprintf(stderr, "datapath: seccomp self-test: socket(AF_PACKET) must kill us now\n");
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	fprintf(stderr, "datapath: seccomp self-test FAILED: socket(AF_PACKET) returned %d (%s)\n", fd,
		fd < 0 ? strerror(errno) : "a socket");
	if (fd >= 0)
		close(fd);
}

/**
 * dp_seccomp_install() - load the datapath's system call allow-list
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Call after privdrop() (PR_SET_NO_NEW_PRIVS is then set; libseccomp sets
 * it anyway) and before the first packet. From then on any system call
 * outside the list in this file's top comment kills the process. The
 * filter is inherited by nothing (the datapath never forks) and cannot be
 * removed.
 *
 * Return: 0, or negative errno with @err filled (the caller must exit).
 */
int dp_seccomp_install(char *err, size_t err_len)
{
	struct scmp_arg_cmp a[1];
	scmp_filter_ctx ctx;
	unsigned int i;
	int ret;

	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (!ctx) {
		snprintf(err, err_len, "seccomp: seccomp_init failed");
		return -ENOMEM;
	}
	for (i = 0; i < sizeof(dp_seccomp_plain) / sizeof(dp_seccomp_plain[0]); i++) {
		ret = dp_seccomp_rule(ctx, SCMP_ACT_ALLOW, dp_seccomp_plain[i], 0, NULL, err, err_len);
		if (ret < 0)
			goto out;
	}
	/* socket(): only the families the services use. */
	for (i = 0; i < sizeof(dp_seccomp_families) / sizeof(dp_seccomp_families[0]); i++) {
		a[0] = dp_arg(0, SCMP_CMP_EQ, (scmp_datum_t)dp_seccomp_families[i], 0);
		ret = dp_seccomp_rule(ctx, SCMP_ACT_ALLOW, "socket", 1, a, err, err_len);
		if (ret < 0)
			goto out;
	}
#ifdef DP_SECCOMP_SANITIZER
	for (i = 0; i < sizeof(dp_seccomp_sanitizer) / sizeof(dp_seccomp_sanitizer[0]); i++) {
		ret = dp_seccomp_rule(ctx, SCMP_ACT_ALLOW, dp_seccomp_sanitizer[i], 0, NULL, err, err_len);
		if (ret < 0)
			goto out;
	}
#else
	/* abort() signals this process; nothing else may be signalled. */
	a[0] = dp_arg(0, SCMP_CMP_EQ, (scmp_datum_t)getpid(), 0);
	ret = dp_seccomp_rule(ctx, SCMP_ACT_ALLOW, "tgkill", 1, a, err, err_len);
	if (ret < 0)
		goto out;
	/* Files: none after setup; a library that tries gets an error, not a kill. */
	ret = dp_seccomp_rule(ctx, SCMP_ACT_ERRNO(EACCES), "open", 0, NULL, err, err_len);
	if (ret >= 0)
		ret = dp_seccomp_rule(ctx, SCMP_ACT_ERRNO(EACCES), "openat", 0, NULL, err, err_len);
	if (ret < 0)
		goto out;
	/* No new executable memory: mmap/mprotect only without PROT_EXEC. */
	a[0] = dp_arg(2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
	ret = dp_seccomp_rule(ctx, SCMP_ACT_ALLOW, "mmap", 1, a, err, err_len);
	if (ret >= 0)
		ret = dp_seccomp_rule(ctx, SCMP_ACT_ALLOW, "mprotect", 1, a, err, err_len);
	if (ret < 0)
		goto out;
	a[0] = dp_arg(1, SCMP_CMP_EQ, FIONREAD, 0);
	ret = dp_seccomp_rule(ctx, SCMP_ACT_ALLOW, "ioctl", 1, a, err, err_len);
	if (ret < 0)
		goto out;
	a[0] = dp_arg(1, SCMP_CMP_EQ, TCGETS, 0);
	ret = dp_seccomp_rule(ctx, SCMP_ACT_ERRNO(ENOTTY), "ioctl", 1, a, err, err_len);
	if (ret < 0)
		goto out;
#endif
	/* Shards' threads exist by now: the filter binds every one of them. */
	ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (ret < 0) {
		snprintf(err, err_len, "seccomp: thread sync: %s", strerror(-ret));
		goto out;
	}
	ret = seccomp_load(ctx);
	if (ret < 0) {
		snprintf(err, err_len, "seccomp: loading the filter: %s", strerror(-ret));
		goto out;
	}
	if (getenv("SANDNET_SECCOMP_SELFTEST"))
		dp_seccomp_selftest();
	ret = 0;
out:
	seccomp_release(ctx);
	return ret;
}
