// SPDX-License-Identifier: MIT
/*
 * test_datapath_uring.c - batches of readv/writev through a restricted
 * io_uring (datapath/link/uring.c)
 *
 * A unix SOCK_SEQPACKET pair stands in for a TUN queue: like the device, one
 * read takes one message and one write gives one. Checked: a batch of reads
 * returns the queued messages in order and -EAGAIN for the rest without
 * waiting; a batch of writes arrives whole and in order, and goes on past a
 * frame the file refuses; bad arguments are refused before anything is
 * queued (the ring still works afterwards); link_uring_refuse() makes
 * link_uring_new() fail with the reason; under the datapath's system call
 * filter a ring made before it still works, while io_uring_setup() kills.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "datapath/link/uring.h"
#include "datapath/proc/seccomp.h"

static int sv[2] = { -1, -1 };

static void pair_up(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv), 0);
}

static void pair_down(void)
{
	close(sv[0]);
	close(sv[1]);
	sv[0] = sv[1] = -1;
}

static struct link_uring *ring_on(int fd)
{
	char err[256] = "";
	struct link_uring *u = link_uring_new(&fd, 1, err, sizeof(err));

	ck_assert_msg(u != NULL, "%s", err);
	return u;
}

/* Batched reads: what was queued, in order, then -EAGAIN without waiting. */
static void read_batch_check(struct link_uring *u)
{
	char hdr[8][4], body[8][64];
	struct iovec iov[8][2];
	ssize_t res[8];
	unsigned int i;

	for (i = 0; i < 5; i++) {
		char m[32];
		int n = snprintf(m, sizeof(m), "HDR!message %u", i);

		ck_assert_int_eq(send(sv[1], m, (size_t)n, 0), n);
	}
	for (i = 0; i < 8; i++) {
		iov[i][0] = (struct iovec){ hdr[i], sizeof(hdr[i]) };
		iov[i][1] = (struct iovec){ body[i], sizeof(body[i]) };
	}
	ck_assert_int_eq(link_uring_readv(u, 0, iov, 8, res), 0);
	for (i = 0; i < 5; i++) {
		char want[32];

		snprintf(want, sizeof(want), "message %u", i);
		ck_assert_int_eq(res[i], 4 + (ssize_t)strlen(want));
		ck_assert(memcmp(hdr[i], "HDR!", 4) == 0);
		ck_assert(memcmp(body[i], want, strlen(want)) == 0);
	}
	for (; i < 8; i++)
		ck_assert_int_eq(res[i], -EAGAIN);
}

START_TEST(test_readv_batch_in_order)
{
	struct link_uring *u;

	pair_up();
	u = ring_on(sv[0]);
	read_batch_check(u);
	read_batch_check(u);	/* the ring is drained after each batch */
	link_uring_free(u);
	pair_down();
}
END_TEST

START_TEST(test_writev_batch_in_order)
{
	struct iovec iov[3][3];
	unsigned int iovcnt[3] = { 1, 2, 3 };
	ssize_t res[3];
	char a[] = "one", b1[] = "tw", b2[] = "o", c1[] = "th", c2[] = "re", c3[] = "e";
	char got[32];
	struct link_uring *u;

	pair_up();
	u = ring_on(sv[0]);
	iov[0][0] = (struct iovec){ a, 3 };
	iov[1][0] = (struct iovec){ b1, 2 };
	iov[1][1] = (struct iovec){ b2, 1 };
	iov[2][0] = (struct iovec){ c1, 2 };
	iov[2][1] = (struct iovec){ c2, 2 };
	iov[2][2] = (struct iovec){ c3, 1 };
	ck_assert_int_eq(link_uring_writev(u, 0, iov, iovcnt, 3, res), 0);
	ck_assert_int_eq(res[0], 3);
	ck_assert_int_eq(res[1], 3);
	ck_assert_int_eq(res[2], 5);
	ck_assert_int_eq(recv(sv[1], got, sizeof(got), 0), 3);
	ck_assert(memcmp(got, "one", 3) == 0);
	ck_assert_int_eq(recv(sv[1], got, sizeof(got), 0), 3);
	ck_assert(memcmp(got, "two", 3) == 0);
	ck_assert_int_eq(recv(sv[1], got, sizeof(got), 0), 5);
	ck_assert(memcmp(got, "three", 5) == 0);
	ck_assert_int_eq(recv(sv[1], got, sizeof(got), MSG_DONTWAIT), -1);
	link_uring_free(u);
	pair_down();
}
END_TEST

/* A frame the file refuses does not stop the ones after it. */
START_TEST(test_writev_goes_on_past_a_refused_frame)
{
	static char big[256 * 1024];
	char small[] = "after";
	struct iovec iov[2][3];
	unsigned int iovcnt[2] = { 1, 1 };
	ssize_t res[2];
	int sndbuf = 4096;
	char got[32];
	struct link_uring *u;

	pair_up();
	ck_assert_int_eq(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
	u = ring_on(sv[0]);
	iov[0][0] = (struct iovec){ big, sizeof(big) };
	iov[1][0] = (struct iovec){ small, 5 };
	ck_assert_int_eq(link_uring_writev(u, 0, iov, iovcnt, 2, res), 0);
	ck_assert_int_eq(res[0], -EMSGSIZE);
	ck_assert_int_eq(res[1], 5);
	ck_assert_int_eq(recv(sv[1], got, sizeof(got), 0), 5);
	ck_assert(memcmp(got, "after", 5) == 0);
	link_uring_free(u);
	pair_down();
}
END_TEST

START_TEST(test_bad_arguments)
{
	struct iovec iov[LINK_URING_DEPTH + 1][3];
	struct iovec riov[LINK_URING_DEPTH + 1][2];
	unsigned int iovcnt[2] = { 1, 4 };
	ssize_t res[LINK_URING_DEPTH + 1];
	char x = 'x', err[256] = "";
	struct link_uring *u;

	memset(iov, 0, sizeof(iov));
	memset(riov, 0, sizeof(riov));
	pair_up();
	ck_assert_ptr_null(link_uring_new(sv, 0, err, sizeof(err)));
	ck_assert_msg(strstr(err, "no file") != NULL, "%s", err);
	u = ring_on(sv[0]);
	ck_assert_int_eq(link_uring_readv(u, 1, riov, 1, res), -EINVAL);	/* no file 1 */
	ck_assert_int_eq(link_uring_readv(u, 0, riov, 0, res), -EINVAL);
	ck_assert_int_eq(link_uring_readv(u, 0, riov, LINK_URING_DEPTH + 1, res), -EINVAL);
	iov[0][0] = (struct iovec){ &x, 1 };
	ck_assert_int_eq(link_uring_writev(u, 0, iov, iovcnt, 2, res), -EINVAL);	/* 4 iovecs */
	/* nothing of the refused batches was queued: the next one is whole */
	iovcnt[1] = 1;
	iov[1][0] = (struct iovec){ &x, 1 };
	ck_assert_int_eq(link_uring_writev(u, 0, iov, iovcnt, 2, res), 0);
	ck_assert_int_eq(res[0], 1);
	ck_assert_int_eq(res[1], 1);
	ck_assert_int_eq(recv(sv[1], err, sizeof(err), 0), 1);
	ck_assert_int_eq(recv(sv[1], err, sizeof(err), 0), 1);
	ck_assert_int_eq(recv(sv[1], err, sizeof(err), MSG_DONTWAIT), -1);
	link_uring_free(u);
	link_uring_free(NULL);
	pair_down();
}
END_TEST

START_TEST(test_refuse)
{
	char err[256] = "";
	int fd = 0;

	link_uring_refuse("--no-io-uring");
	ck_assert_ptr_null(link_uring_new(&fd, 1, err, sizeof(err)));
	ck_assert_str_eq(err, "io_uring: --no-io-uring");
}
END_TEST

/* Under the filter: the ring made before it works; a new one kills. */
START_TEST(test_under_the_filter)
{
	int status = 0, pfd[2];
	char mark = 0;
	pid_t pid;

	pair_up();
	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char err[256];
		struct link_uring *u = ring_on(sv[0]);
		char hdr[4], body[16];
		struct iovec iov[1][2] = { { { hdr, 4 }, { body, sizeof(body) } } };
		ssize_t res[1];

		if (dp_seccomp_install(err, sizeof(err)) < 0)
			_exit(100);
		if (send(sv[1], "HDR!x", 5, 0) != 5)
			_exit(101);
		if (link_uring_readv(u, 0, iov, 1, res) < 0 || res[0] != 5)
			_exit(102);
		if (write(pfd[1], "R", 1) != 1)	/* the batch went through */
			_exit(104);
		syscall(SYS_io_uring_setup, 4, calloc(1, 128));
		_exit(103);	/* not reached: io_uring_setup is not on the list */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	close(pfd[1]);
	ck_assert_msg(read(pfd[0], &mark, 1) == 1 && mark == 'R',
		      "the batch did not go through under the filter (status 0x%x)", status);
	close(pfd[0]);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS,
		      "the child did not die of SIGSYS at io_uring_setup (status 0x%x)", status);
	pair_down();
}
END_TEST

static Suite *uring_suite(void)
{
	Suite *s = suite_create("uring");
	TCase *tc = tcase_create("batches");

	tcase_add_test(tc, test_readv_batch_in_order);
	tcase_add_test(tc, test_writev_batch_in_order);
	tcase_add_test(tc, test_writev_goes_on_past_a_refused_frame);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_under_the_filter);
	tcase_add_test(tc, test_refuse);	/* last: it refuses rings for good */
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(uring_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
