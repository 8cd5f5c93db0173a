// SPDX-License-Identifier: MIT
/*
 * test_proto_status.c - the supervisor's states and its status file
 * (proto/status.c)
 *
 * Theory of operation
 *
 * The status file is the one format besides the protocol that crosses from
 * the datapath's supervisor (the writer) to netsetup (the reader), which
 * parses it as untrusted input. These tests check both ends against each
 * other and against the documented text (docs/datapath.md "The status
 * file"): every state's name both ways, a write read back field by field, a
 * rewrite that shortens the file, and bad input: every truncation and every
 * garbled byte of a valid file gives 0, -EAGAIN or -EINVAL, never a crash,
 * and each kind of malformed line its documented answer. The fixture makes
 * a folder of its own under /tmp, removes it, and fails a test that leaks
 * an fd (fd_count() of proto_testlib.h).
 */
#include "tests/unit/proto_testlib.h"
#include "proto/status.h"

static char dir[64];
static char path[128];

static void status_setup(void)
{
	fixture_fds = fd_count();
	snprintf(dir, sizeof(dir), "/tmp/sandnet-status.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/netns.state.status", dir);
}

static void status_teardown(void)
{
	unlink(path);
	ck_assert_int_eq(rmdir(dir), 0);
	ck_assert_msg(fd_count() == fixture_fds, "fd leak: %d fds open after the test, %d before",
		      fd_count(), fixture_fds);
}

/* The status file holding exactly @len bytes of @buf. */
static void file_put(const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* One parse (no retries) of @len bytes of @buf as the status file. */
static int parse_bytes(const char *buf, size_t len, struct proto_status *s)
{
	FILE *f;
	int err;

	file_put(buf, len);
	f = fopen(path, "re");
	ck_assert_ptr_nonnull(f);
	err = proto_status_parse(f, s);
	fclose(f);
	return err;
}

static int parse_text(const char *text, struct proto_status *s)
{
	return parse_bytes(text, strlen(text), s);
}

/* A dark supervisor after three deaths: every line the writer makes. */
static const struct proto_status dark = {
	.state = PROTO_DP_DARK,
	.supervisor = 812,
	.datapath = 0,
	.restarts = 3,
	.deaths = 3,
	.last_death = "1764655000123 814 killed by signal 11 (Segmentation fault)",
	.reason = "crash loop: 5 deaths within 60 s",
};

static const char dark_text[] =
	"sandnet-datapath-status 1\n"
	"state dark\n"
	"supervisor 812\n"
	"datapath 0\n"
	"restarts 3\n"
	"deaths 3\n"
	"last_death 1764655000123 814 killed by signal 11 (Segmentation fault)\n"
	"reason crash loop: 5 deaths within 60 s\n"
	"end\n";

static void status_eq(const struct proto_status *a, const struct proto_status *b)
{
	ck_assert_int_eq(a->state, b->state);
	ck_assert_int_eq(a->supervisor, b->supervisor);
	ck_assert_int_eq(a->datapath, b->datapath);
	ck_assert_uint_eq(a->restarts, b->restarts);
	ck_assert_uint_eq(a->deaths, b->deaths);
	ck_assert_str_eq(a->last_death, b->last_death);
	ck_assert_str_eq(a->reason, b->reason);
}

START_TEST(test_state_names)
{
	static const char *const words[] = { "starting", "serving", "restarting", "dark", "stopped" };

	ck_assert_uint_eq(sizeof(words) / sizeof(words[0]), PROTO_DP_STATE_MAX);
	for (unsigned int i = 0; i < PROTO_DP_STATE_MAX; i++) {
		ck_assert_str_eq(proto_dp_state_name(i), words[i]);
		ck_assert_int_eq(proto_dp_state_parse(words[i]), (int)i);
	}
	ck_assert_str_eq(proto_dp_state_name(PROTO_DP_STATE_MAX), "unknown");
	ck_assert_str_eq(proto_dp_state_name(~0u), "unknown");
	ck_assert_int_eq(proto_dp_state_parse("unknown"), -EINVAL);
	ck_assert_int_eq(proto_dp_state_parse(""), -EINVAL);
	ck_assert_int_eq(proto_dp_state_parse("Serving"), -EINVAL);
	ck_assert_int_eq(proto_dp_state_parse("serving "), -EINVAL);
}
END_TEST

/* The writer's text is the documented one, to the byte. */
START_TEST(test_format_text)
{
	struct proto_status serving = { .state = PROTO_DP_SERVING, .supervisor = 812, .datapath = 815,
					.reason = "not dark: not written" };
	char buf[PROTO_STATUS_MAX_BYTES];
	int len;

	len = proto_status_format(&dark, buf, sizeof(buf));
	ck_assert_int_eq(len, (int)strlen(dark_text));
	ck_assert_int_eq(memcmp(buf, dark_text, (size_t)len), 0);

	len = proto_status_format(&serving, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	buf[len] = '\0';
	ck_assert_str_eq(buf, "sandnet-datapath-status 1\nstate serving\nsupervisor 812\ndatapath 815\n"
			      "restarts 0\ndeaths 0\nend\n");

	/* too small a buffer, at every size, and a state it does not know */
	for (size_t size = 0; size < strlen(dark_text); size++)
		ck_assert_int_eq(proto_status_format(&dark, buf, size), -ENOBUFS);
	serving.state = PROTO_DP_STATE_MAX;
	ck_assert_int_eq(proto_status_format(&serving, buf, sizeof(buf)), -EINVAL);
}
END_TEST

/* Every state, with and without deaths, written and read back. */
START_TEST(test_round_trip)
{
	struct proto_status in, out;
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	for (unsigned int st = 0; st < PROTO_DP_STATE_MAX; st++) {
		for (unsigned int deaths = 0; deaths < 2; deaths++) {
			in = dark;
			in.state = st;
			in.datapath = st == PROTO_DP_SERVING ? 815 : 0;
			in.deaths = deaths;
			ck_assert_int_eq(proto_status_write(fd, &in), 0);
			ck_assert_int_eq(proto_status_read(path, &out), 0);
			/* what the writer leaves out, the reader gives as "" */
			if (!deaths)
				in.last_death[0] = '\0';
			if (st != PROTO_DP_DARK)
				in.reason[0] = '\0';
			status_eq(&out, &in);
		}
	}
	close(fd);
}
END_TEST

/* A rewrite is cut to its length: a shorter status leaves nothing of the longer one. */
START_TEST(test_rewrite_shorter)
{
	struct proto_status serving = { .state = PROTO_DP_SERVING, .supervisor = 812, .datapath = 900,
					.restarts = 4, .deaths = 3 }, out;
	struct stat sb;
	char buf[PROTO_STATUS_MAX_BYTES];
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(proto_status_write(fd, &dark), 0);
	ck_assert_int_eq(proto_status_write(fd, &serving), 0);
	ck_assert_int_eq(fstat(fd, &sb), 0);
	ck_assert_int_eq(sb.st_size, proto_status_format(&serving, buf, sizeof(buf)));
	ck_assert_int_eq(proto_status_read(path, &out), 0);
	status_eq(&out, &serving);
	close(fd);

	/* a write that cannot happen says why */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(proto_status_write(fd, &serving), -EBADF);
	close(fd);
}
END_TEST

/* Each kind of line the reader refuses or skips, and what it answers. */
START_TEST(test_bad_lines)
{
#define HEAD "sandnet-datapath-status 1\n"
	static const struct {
		const char *text;
		int err;
	} cases[] = {
		{ "", -EAGAIN },					/* nothing written yet */
		{ HEAD, -EAGAIN },					/* a rewrite in progress */
		{ HEAD "state serving\n", -EAGAIN },			/* no end yet */
		{ HEAD "supervisor 1\nend\n", -EAGAIN },		/* no state */
		{ "sandnet-datapath-status 2\nstate serving\nend\n", -EINVAL },	/* another format */
		{ "sandnet-datapath-status 1", -EINVAL },		/* the first line cut off */
		{ "garbage\n", -EINVAL },
		{ HEAD "state serving\nend", -EINVAL },			/* the last line cut off */
		{ HEAD "state serv", -EINVAL },
		{ HEAD "stateserving\nend\n", -EINVAL },		/* not KEY VALUE */
		{ HEAD "state \nend\n", -EINVAL },			/* an empty word */
		{ HEAD "state Serving\nend\n", -EINVAL },		/* not a-z */
		{ HEAD "state serving now\nend\n", -EINVAL },
		{ HEAD "state abcdefghijklmnop\nend\n", -EINVAL },	/* 16 letters: longer than any name */
		{ HEAD "state serving\nsupervisor x\nend\n", -EINVAL },
		{ HEAD "state serving\nsupervisor 2147483648\nend\n", -EINVAL },	/* over INT_MAX */
		{ HEAD "state serving\nsupervisor -1\nend\n", -EINVAL },
		{ HEAD "state serving\ndatapath \nend\n", -EINVAL },
		{ HEAD "state serving\nrestarts many\nend\n", -EINVAL },
		{ HEAD "state serving\ndeaths\nend\n", -EINVAL },
		{ HEAD "state serving\n\nend\n", -EINVAL },		/* an empty line */
		{ HEAD "state serving\nnewkey anything at all\nend\n", 0 },	/* a newer supervisor's key */
		{ HEAD "state abcdefghijklmno\nend\n", 0 },		/* a newer supervisor's state */
		{ HEAD "state serving\nend\nanything after end\n", 0 },
	};
	static const char nul[] = HEAD "state serving\nrea\0son x\nend\n";
	struct proto_status s;
	char big[2048];
	int n;

	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(parse_text(cases[i].text, &s) == cases[i].err, "case %u \"%s\": %d, expected %d", i,
			      cases[i].text, parse_text(cases[i].text, &s), cases[i].err);
	ck_assert_int_eq(parse_text(HEAD "state abcdefghijklmno\nend\n", &s), 0);
	ck_assert_int_eq(s.state, PROTO_DP_STATE_MAX);
	ck_assert_int_eq(parse_text(HEAD "state dark\nreason one\nreason two\nend\n", &s), 0);
	ck_assert_str_eq(s.reason, "two");

	/* a NUL in a line, and a line longer than any the writer makes */
	ck_assert_int_eq(parse_bytes(nul, sizeof(nul) - 1, &s), -EINVAL);
	n = snprintf(big, sizeof(big), HEAD "state dark\nreason ");
	memset(big + n, 'x', 800);
	memcpy(big + n + 800, "\nend\n", 5);
	ck_assert_int_eq(parse_bytes(big, (size_t)n + 805, &s), -EINVAL);
#undef HEAD
}
END_TEST

/* Every truncation and every garbled byte of a valid file: an answer, never a crash. */
START_TEST(test_truncated_garbled)
{
	static const char flips[] = { '\0', '\n', ' ', 'x', '9', '\xff' };
	char buf[sizeof(dark_text)];
	const size_t len = sizeof(dark_text) - 1;
	struct proto_status s;
	int err;

	for (size_t cut = 0; cut < len; cut++) {
		err = parse_bytes(dark_text, cut, &s);
		ck_assert_msg(err == -EAGAIN || err == -EINVAL, "cut at %zu: %d", cut, err);
	}
	ck_assert_int_eq(parse_bytes(dark_text, len, &s), 0);
	status_eq(&s, &dark);
	for (size_t at = 0; at < len; at++) {
		for (unsigned int k = 0; k < sizeof(flips); k++) {
			memcpy(buf, dark_text, len);
			buf[at] = flips[k];
			err = parse_bytes(buf, len, &s);
			ck_assert_msg(err == 0 || err == -EAGAIN || err == -EINVAL, "byte %zu = 0x%02x: %d", at,
				      (unsigned char)flips[k], err);
			ck_assert_uint_le(s.state, PROTO_DP_STATE_MAX);
			ck_assert_uint_lt(strlen(s.last_death), sizeof(s.last_death));
			ck_assert_uint_lt(strlen(s.reason), sizeof(s.reason));
		}
	}
}
END_TEST

/* What reading a file that is not there, or not yet whole, answers. */
START_TEST(test_read_missing_and_partial)
{
	struct proto_status s;

	ck_assert_int_eq(proto_status_read(path, &s), -ENOENT);
	file_put("", 0);
	ck_assert_int_eq(proto_status_read(path, &s), -EAGAIN);
	file_put(dark_text, 40);
	ck_assert_int_eq(proto_status_read(path, &s), -EINVAL);	/* cut inside a line */
	file_put(dark_text, strlen("sandnet-datapath-status 1\nstate dark\n"));
	ck_assert_int_eq(proto_status_read(path, &s), -EAGAIN);	/* cut at a line's end */
}
END_TEST

static Suite *proto_status_suite(void)
{
	Suite *s = suite_create("proto_status");
	TCase *tc = tcase_create("status");

	tcase_add_checked_fixture(tc, status_setup, status_teardown);
	tcase_add_test(tc, test_state_names);
	tcase_add_test(tc, test_format_text);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_rewrite_shorter);
	tcase_add_test(tc, test_bad_lines);
	tcase_add_test(tc, test_truncated_garbled);
	tcase_add_test(tc, test_read_missing_and_partial);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(proto_status_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
