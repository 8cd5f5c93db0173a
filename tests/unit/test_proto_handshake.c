// SPDX-License-Identifier: MIT
/*
 * test_proto_handshake.c - HELLO negotiation and the whole conversation
 *
 * Theory of operation
 *
 * SOCK_SEQPACKET queues messages, so one process can play both sides: the
 * peer's messages are queued first, then proto_handshake() runs and the test
 * reads what it answered. The version lists of "other builds" are sent with
 * proto_send() (any list) or crafted with libnl. Two tests fork a real peer
 * process instead, to run the conversation as netsetup and the datapath do:
 * HELLO, LINK + fds / ACK, DONE / ACK; the child reports through its exit
 * status (Check assertions belong to the test process only).
 */
#include <sys/wait.h>

#include "tests/unit/proto_testlib.h"

/* Send a HELLO listing @n versions, as a build speaking them would. */
static void hello_send_versions(int sock, uint32_t seq, const uint8_t *versions, unsigned int n,
				const char *software)
{
	struct proto_msg *msg = calloc(1, sizeof(*msg));

	ck_assert_ptr_nonnull(msg);
	msg->type = PROTO_MSG_HELLO;
	msg->seq = seq;
	msg->hello.n_versions = n;
	memcpy(msg->hello.versions, versions, n);
	snprintf(msg->hello.software, sizeof(msg->hello.software), "%s", software);
	ck_assert_int_eq(proto_send(sock, msg), 0);
	free(msg);
}

static void wait_child(pid_t pid, int want_status)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "peer process died of signal %d", WTERMSIG(status));
	ck_assert_msg(WEXITSTATUS(status) == want_status, "peer process exited %d, expected %d",
		      WEXITSTATUS(status), want_status);
}

START_TEST(test_version_choose)
{
	struct proto_hello h = { .n_versions = 3, .versions = { 9, PROTO_VERSION_MAX, 4 } };
	struct proto_why why = { 0 };

	ck_assert_int_eq(proto_version_choose(&h, &why), PROTO_VERSION_MAX);
	h = (struct proto_hello){ .n_versions = 2, .versions = { PROTO_VERSION_MIN, PROTO_VERSION_MAX } };
	ck_assert_int_eq(proto_version_choose(&h, &why), PROTO_VERSION_MAX);
	h = (struct proto_hello){ .n_versions = 3, .versions = { PROTO_VERSION_MAX + 1, 200, 255 } };
	ck_assert_int_eq(proto_version_choose(&h, &why), -EPROTONOSUPPORT);
	ck_assert_int_eq(why.err, EPROTONOSUPPORT);
	ck_assert_ptr_nonnull(strstr(why.text, "no common protocol version: peer speaks 2,200,255, this side 1..1"));
}
END_TEST

/* The datapath's side: the highest common version is chosen and named in the answer. */
START_TEST(test_responder_chooses_common)
{
	static const uint8_t theirs[] = { 3, PROTO_VERSION_MAX, 9, 2 };
	struct proto_why why = { 0 };
	struct proto_msg *msg;
	uint8_t version = 0;

	hello_send_versions(sk[SENDER], 31, theirs, sizeof(theirs), "sandnet-netsetup 9.0");
	ck_assert_int_eq(proto_handshake(sk[RECEIVER], false, "sandnet-datapath 0.1", 0, &version, NULL, &why), 0);
	ck_assert_uint_eq(version, PROTO_VERSION_MAX);

	msg = recv_ok(sk[SENDER], PROTO_MSG_HELLO);
	ck_assert_uint_eq(msg->seq, 31);
	ck_assert_uint_eq(msg->version, 1);	/* HELLO is always encoded as version 1 */
	ck_assert_uint_eq(msg->hello.n_versions, 1);
	ck_assert_uint_eq(msg->hello.versions[0], PROTO_VERSION_MAX);
	ck_assert_str_eq(msg->hello.software, "sandnet-datapath 0.1");
	proto_msg_free(msg);
	assert_nothing_queued(sk[SENDER]);
}
END_TEST

/* netsetup's side: it lists every version it speaks and takes the one named. */
START_TEST(test_initiator_takes_answer)
{
	static const uint8_t chosen[] = { PROTO_VERSION_MAX };
	struct proto_why why = { 0 };
	struct proto_msg *msg;
	uint8_t version = 0;

	hello_send_versions(sk[RECEIVER], 0, chosen, 1, "sandnet-datapath 0.1");
	ck_assert_int_eq(proto_handshake(sk[SENDER], true, "sandnet-netsetup 0.1", 0, &version, NULL, &why), 0);
	ck_assert_uint_eq(version, PROTO_VERSION_MAX);

	msg = recv_ok(sk[RECEIVER], PROTO_MSG_HELLO);
	ck_assert_uint_eq(msg->hello.n_versions, PROTO_VERSION_MAX - PROTO_VERSION_MIN + 1);
	ck_assert_uint_eq(msg->hello.versions[0], PROTO_VERSION_MIN);
	ck_assert_str_eq(msg->hello.software, "sandnet-netsetup 0.1");
	proto_msg_free(msg);
	assert_nothing_queued(sk[RECEIVER]);
}
END_TEST

/* A newer peer's HELLO: more versions, a higher minor, attributes we do not know. */
START_TEST(test_responder_newer_peer)
{
	uint8_t buf[256];
	struct nl_msg *nl = msg_build_start();
	struct nlattr *list;
	struct proto_why why = { 0 };
	struct proto_msg *msg;
	uint8_t version = 0;
	size_t len;

	list = nla_nest_start(nl, PROTO_HELLO_VERSIONS);
	for (uint8_t v = 1; v <= 5; v++)
		ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_VERSION, v), 0);
	nla_nest_end(nl, list);
	ck_assert_int_eq(nla_put_u8(nl, PROTO_HELLO_MINOR, 4), 0);
	ck_assert_int_eq(nla_put_string(nl, PROTO_HELLO_SOFTWARE, "sandnet-netsetup 5.4"), 0);
	ck_assert_int_eq(nla_put_string(nl, PROTO_HELLO_ATTR_MAX + 1, "a feature from 5.4"), 0);
	len = msg_build_finish(nl, PROTO_MSG_HELLO, 4, 7, buf, sizeof(buf));
	raw_send(sk[SENDER], buf, len, NULL, 0);

	ck_assert_int_eq(proto_handshake(sk[RECEIVER], false, NULL, 0, &version, NULL, &why), 0);
	ck_assert_uint_eq(version, PROTO_VERSION_MAX);
	msg = recv_ok(sk[SENDER], PROTO_MSG_HELLO);
	ck_assert_uint_eq(msg->hello.versions[0], PROTO_VERSION_MAX);
	proto_msg_free(msg);
}
END_TEST

/* No common version, seen from the datapath: ERROR with the same clear words on both sides. */
START_TEST(test_responder_no_common_version)
{
	static const uint8_t theirs[] = { PROTO_VERSION_MAX + 1, PROTO_VERSION_MAX + 2 };
	struct proto_why why = { 0 };
	struct proto_msg *msg;
	uint8_t version = 0;

	hello_send_versions(sk[SENDER], 44, theirs, 2, "sandnet-netsetup 2.0");
	ck_assert_int_eq(proto_handshake(sk[RECEIVER], false, NULL, 0, &version, NULL, &why), -EPROTONOSUPPORT);
	ck_assert_int_eq(why.err, EPROTONOSUPPORT);
	ck_assert_msg(strstr(why.text, "no common protocol version: peer speaks 2,3, this side 1..1"),
		      "why.text: %s", why.text);
	ck_assert_uint_eq(version, 0);

	msg = recv_ok(sk[SENDER], PROTO_MSG_ERROR);
	ck_assert_uint_eq(msg->seq, 44);
	ck_assert_int_eq(msg->error.err, EPROTONOSUPPORT);
	ck_assert_str_eq(msg->error.message, why.text);
	proto_msg_free(msg);
	assert_nothing_queued(sk[SENDER]);
}
END_TEST

/* No common version, seen from netsetup: the datapath's ERROR becomes its reason. */
START_TEST(test_initiator_refused)
{
	struct proto_why why = { 0 };
	struct proto_msg *msg;
	uint8_t version = 0;

	ck_assert_int_eq(proto_send_error(sk[RECEIVER], 0, EPROTONOSUPPORT,
					  "no common protocol version: peer speaks 1, this side 2..3"), 0);
	ck_assert_int_eq(proto_handshake(sk[SENDER], true, NULL, 0, &version, NULL, &why), -EPROTONOSUPPORT);
	ck_assert_int_eq(why.err, EPROTONOSUPPORT);
	ck_assert_str_eq(why.text, "peer refused: no common protocol version: peer speaks 1, this side 2..3");
	/* Its HELLO went out; nothing else. */
	msg = recv_ok(sk[RECEIVER], PROTO_MSG_HELLO);
	proto_msg_free(msg);
	assert_nothing_queued(sk[RECEIVER]);
}
END_TEST

/* The answer names a version netsetup never offered, or more than one. */
START_TEST(test_initiator_bad_answer)
{
	static const uint8_t bad[][2] = { { PROTO_VERSION_MAX + 1, 0 }, { PROTO_VERSION_MAX, 7 } };
	static const unsigned int n[] = { 1, 2 };
	static const char *const text[] = {
		"peer answered HELLO with 1 version(s), the first 2; expected exactly one of 1..1",
		"peer answered HELLO with 2 version(s), the first 1; expected exactly one of 1..1",
	};

	for (unsigned int i = 0; i < 2; i++) {
		struct proto_why why = { 0 };
		struct proto_msg *msg;
		uint8_t version = 0;

		hello_send_versions(sk[RECEIVER], 50 + i, bad[i], n[i], "odd datapath");
		ck_assert_int_eq(proto_handshake(sk[SENDER], true, NULL, 0, &version, NULL, &why),
				 -EPROTONOSUPPORT);
		ck_assert_str_eq(why.text, text[i]);
		msg = recv_ok(sk[RECEIVER], PROTO_MSG_HELLO);
		proto_msg_free(msg);
		msg = recv_ok(sk[RECEIVER], PROTO_MSG_ERROR);
		ck_assert_int_eq(msg->error.err, EPROTONOSUPPORT);
		ck_assert_str_eq(msg->error.message, text[i]);
		ck_assert_uint_eq(msg->seq, 50 + i);
		proto_msg_free(msg);
		assert_nothing_queued(sk[RECEIVER]);
	}
}
END_TEST

/* Anything but HELLO first, a HELLO not encoded as version 1, a closed peer. */
START_TEST(test_handshake_wrong_first_message)
{
	struct proto_why why = { 0 };
	struct proto_msg *msg;
	uint8_t version = 0, buf[64];
	int len;

	ck_assert_int_eq(proto_send_done(sk[SENDER], 3), 0);
	ck_assert_int_eq(proto_handshake(sk[RECEIVER], false, NULL, 0, &version, NULL, &why), -EPROTO);
	ck_assert_str_eq(why.text, "expected HELLO, got DONE");
	msg = recv_ok(sk[SENDER], PROTO_MSG_ERROR);
	ck_assert_int_eq(msg->error.err, EPROTO);
	ck_assert_str_eq(msg->error.message, "expected HELLO, got DONE");
	proto_msg_free(msg);

	{
		struct proto_msg hello = { .type = PROTO_MSG_HELLO, .version = 2, .seq = 4 };

		hello.hello.n_versions = 1;
		hello.hello.versions[0] = 2;
		len = proto_encode(&hello, buf, sizeof(buf));
		ck_assert_int_gt(len, 16);
		ck_assert_uint_eq(buf[4], 2);
		raw_send(sk[SENDER], buf, (size_t)len, NULL, 0);
	}
	ck_assert_int_eq(proto_handshake(sk[RECEIVER], false, NULL, 0, &version, NULL, &why), -EPROTONOSUPPORT);
	ck_assert_ptr_nonnull(strstr(why.text, "unsupported protocol version 2"));
	msg = recv_ok(sk[SENDER], PROTO_MSG_ERROR);
	ck_assert_int_eq(msg->error.err, EPROTONOSUPPORT);
	proto_msg_free(msg);

	close(sk[SENDER]);
	sk[SENDER] = socket(AF_UNIX, SOCK_SEQPACKET, 0);	/* keeps teardown's close() balanced */
	ck_assert_int_eq(proto_handshake(sk[RECEIVER], false, NULL, 0, &version, NULL, &why), -ECONNRESET);
	ck_assert_str_eq(why.text, "peer closed the connection while HELLO was expected");
}
END_TEST

/* Child side of test_conversation: a minimal datapath. Exit 0 when all was as expected. */
static int datapath_child(int sock)
{
	struct proto_why why;
	struct proto_msg *msg;
	uint8_t version;
	int ret, links = 0;

	if (proto_handshake(sock, false, "test-datapath", 0, &version, NULL, &why) || version != PROTO_VERSION_MAX)
		return 10;
	for (;;) {
		ret = proto_recv(sock, &msg, &why);
		if (ret != 1)
			return 11;
		if (msg->type == PROTO_MSG_LINK) {
			int domain = 0;
			socklen_t len = sizeof(domain);

			if (msg->link.n_channels != 2 || strcmp(msg->link.ifname, "abcdefghijklmno") ||
			    msg->link.n_routes != 4 ||
			    getsockopt(msg->link.channel_fds[1], SOL_SOCKET, SO_DOMAIN, &domain, &len) ||
			    domain != AF_PACKET)
				return 12;
			links++;
			ret = proto_send_ack(sock, msg->seq);
		} else if (msg->type == PROTO_MSG_DONE) {
			ret = links == 2 ? proto_send_ack(sock, msg->seq) :
				proto_send_error(sock, msg->seq, EINVAL, "%d links", links);
			proto_msg_free(msg);
			return ret ? 13 : 0;
		} else {
			ret = proto_send_error(sock, msg->seq, EPROTO, "unexpected %s",
					       proto_msg_type_name(msg->type));
		}
		proto_msg_free(msg);
		if (ret)
			return 14;
	}
}

START_TEST(test_conversation)
{
	struct proto_link *link = malloc(sizeof(*link));
	struct proto_why why = { 0 };
	uint8_t version = 0;
	pid_t pid;

	ck_assert_ptr_nonnull(link);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sk[SENDER]);
		_exit(datapath_child(sk[RECEIVER]));
	}
	sample_link(link, 2);
	packet_sockets(link->channel_fds, 2);
	ck_assert_int_eq(proto_handshake(sk[SENDER], true, "test-netsetup", 0, &version, NULL, &why), 0);
	ck_assert_uint_eq(version, PROTO_VERSION_MAX);
	for (uint32_t seq = 1; seq <= 2; seq++) {
		ck_assert_int_eq(proto_send_link(sk[SENDER], seq, link), 0);
		ck_assert_msg(proto_expect_ack(sk[SENDER], seq, &why) == 0, "LINK %u: %s", seq, why.text);
	}
	ck_assert_int_eq(proto_send_done(sk[SENDER], 3), 0);
	ck_assert_msg(proto_expect_ack(sk[SENDER], 3, &why) == 0, "DONE: %s", why.text);
	wait_child(pid, 0);
	fds_close_all(link->channel_fds, 2);
	free(link);
}
END_TEST

/*
 * Both sides run proto_handshake() in their own process; each learns the
 * other's minor, and the initiator the shards the responder would run.
 */
START_TEST(test_handshake_two_processes)
{
	struct proto_why why = { 0 };
	struct proto_hello peer = { .minor = 0xff };
	uint8_t version = 0;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct proto_hello p = { .minor = 0xff, .shards = 99 };
		struct proto_why w;
		uint8_t v = 0;

		close(sk[SENDER]);
		_exit(proto_handshake(sk[RECEIVER], false, "child", 7, &v, &p, &w) == 0 &&
		      v == PROTO_VERSION_MAX && p.minor == PROTO_VERSION_MINOR && p.shards == 0 &&
		      !strcmp(p.software, "parent") ? 0 : 1);
	}
	ck_assert_int_eq(proto_handshake(sk[SENDER], true, "parent", 0, &version, &peer, &why), 0);
	ck_assert_uint_eq(version, PROTO_VERSION_MAX);
	ck_assert_uint_eq(peer.minor, PROTO_VERSION_MINOR);
	ck_assert_uint_eq(peer.shards, 7);
	ck_assert_str_eq(peer.software, "child");
	wait_child(pid, 0);
}
END_TEST

static Suite *proto_handshake_suite(void)
{
	Suite *s = suite_create("proto_handshake");
	TCase *tc = tcase_create("handshake");

	tcase_add_checked_fixture(tc, proto_fixture_setup, proto_fixture_teardown);
	tcase_add_test(tc, test_version_choose);
	tcase_add_test(tc, test_responder_chooses_common);
	tcase_add_test(tc, test_initiator_takes_answer);
	tcase_add_test(tc, test_responder_newer_peer);
	tcase_add_test(tc, test_responder_no_common_version);
	tcase_add_test(tc, test_initiator_refused);
	tcase_add_test(tc, test_initiator_bad_answer);
	tcase_add_test(tc, test_handshake_wrong_first_message);
	tcase_add_test(tc, test_conversation);
	tcase_add_test(tc, test_handshake_two_processes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(proto_handshake_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
