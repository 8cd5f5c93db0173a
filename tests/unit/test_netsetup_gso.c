// SPDX-License-Identifier: MIT
/*
 * test_netsetup_gso.c - the GSO decision as a table, and feature name mapping
 *
 * Each row is a link (features, gso_max_size, MTU) and a request, and the
 * mode, refusal, frame limit and a word of the reason it must produce.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "netsetup/kernel/kernel_int.h"

struct row {
	const char *what;
	bool known, tcp_tso, tso_group, gso;
	uint32_t gso_max_size, mtu;
	enum ns_gso_request req;
	uint32_t user_max;
	int ret;
	enum proto_gso_mode mode;
	uint32_t frame_max;
	const char *reason_has;
};

static const struct row rows[] = {
	{ "auto, tso+gso on", true, true, true, true, 65536, 1500, NS_GSO_AUTO, 0, 0, PROTO_GSO_HW, 65535,
	  "tcp-segmentation-offload is on" },
	{ "auto, gso only", true, false, false, true, 65536, 1500, NS_GSO_AUTO, 0, 0, PROTO_GSO_HW, 65535,
	  "generic-segmentation-offload is on" },
	{ "auto, tso only", true, true, true, false, 65536, 1500, NS_GSO_AUTO, 0, 0, PROTO_GSO_HW, 65535,
	  "tcp-segmentation-offload" },
	{ "auto, both off", true, false, false, false, 65536, 1500, NS_GSO_AUTO, 0, 0, PROTO_GSO_SW, 65535,
	  "are off" },
	{ "auto, accecn only", true, false, true, false, 65536, 1500, NS_GSO_AUTO, 0, 0, PROTO_GSO_SW, 65535,
	  "tx-tcp-segmentation, tx-tcp6-segmentation" },
	{ "auto, tiny gso_max_size", true, true, true, true, 1000, 1500, NS_GSO_AUTO, 0, 0, PROTO_GSO_SW, 1514,
	  "gso_max_size 1000" },
	{ "auto, gso_max_size = MTU + 14", true, true, true, true, 1514, 1500, NS_GSO_AUTO, 0, 0, PROTO_GSO_SW,
	  1514, "leaves no room" },
	{ "auto, gso_max_size 32768", true, true, true, true, 32768, 1500, NS_GSO_AUTO, 0, 0, PROTO_GSO_HW, 32767,
	  "32768" },
	{ "auto, features unknown", false, false, false, false, 65536, 1500, NS_GSO_AUTO, 0, 0, PROTO_GSO_SW,
	  65535, "could not be read" },
	{ "auto, user limit", true, true, true, true, 65536, 1500, NS_GSO_AUTO, 16000, 0, PROTO_GSO_HW, 16000,
	  "auto" },
	{ "auto, user limit above the link", true, true, true, true, 32768, 1500, NS_GSO_AUTO, 60000, 0,
	  PROTO_GSO_HW, 32767, "auto" },
	{ "auto, big tso_max (BIG TCP) still 64K", true, true, true, true, 185000, 1500, NS_GSO_AUTO, 0, 0,
	  PROTO_GSO_HW, 65535, "185000" },
	{ "hw honoured", true, true, true, true, 65536, 1500, NS_GSO_HW, 0, 0, PROTO_GSO_HW, 65535, "requested" },
	{ "hw refused, no offload", true, false, false, false, 65536, 1500, NS_GSO_HW, 0, -EOPNOTSUPP,
	  PROTO_GSO_HW, 0, "ethtool -K eth0 tso on gso on" },
	{ "hw refused, tiny gso_max_size", true, true, true, true, 1000, 1500, NS_GSO_HW, 0, -EOPNOTSUPP,
	  PROTO_GSO_HW, 0, "ip link set eth0 gso_max_size" },
	{ "hw refused, unknown features", false, false, false, false, 65536, 1500, NS_GSO_HW, 0, -EOPNOTSUPP,
	  PROTO_GSO_HW, 0, "could not be read" },
	{ "sw on a hw link", true, true, true, true, 65536, 1500, NS_GSO_SW, 0, 0, PROTO_GSO_SW, 65535,
	  "requested" },
	{ "sw without offload", true, false, false, false, 65536, 1500, NS_GSO_SW, 0, 0, PROTO_GSO_SW, 65535,
	  "requested" },
	{ "off: one MTU frame", true, true, true, true, 65536, 1500, NS_GSO_OFF, 0, 0, PROTO_GSO_OFF, 1514,
	  "requested" },
	{ "off, jumbo MTU", true, true, true, true, 65536, 9000, NS_GSO_OFF, 0, 0, PROTO_GSO_OFF, 9014,
	  "requested" },
};

START_TEST(test_decision_table)
{
	const struct row *r = &rows[_i];
	struct ns_link l;
	int ret;

	memset(&l, 0, sizeof(l));
	snprintf(l.ifname, sizeof(l.ifname), "eth0");
	l.feat.known = r->known;
	l.feat.tcp_tso = r->tcp_tso;
	l.feat.on[NS_FEAT_TSO] = r->tso_group;
	l.feat.on[NS_FEAT_GSO] = r->gso;
	l.gso_max_size = r->gso_max_size;
	l.mtu = r->mtu;
	ret = ns_gso_decide(&l, r->req, r->user_max);
	ck_assert_msg(ret == r->ret, "%s: returned %d, expected %d", r->what, ret, r->ret);
	ck_assert_msg(l.mode == r->mode, "%s: mode %s, expected %s", r->what,
		      proto_gso_mode_name(l.mode), proto_gso_mode_name(r->mode));
	ck_assert_msg(l.mode_refused == (r->ret != 0), "%s: mode_refused %d", r->what, l.mode_refused);
	ck_assert_msg(l.frame_max_bytes == r->frame_max, "%s: frame limit %u, expected %u", r->what,
		      l.frame_max_bytes, r->frame_max);
	ck_assert_msg(strstr(l.reason, r->reason_has), "%s: reason '%s' lacks '%s'", r->what, l.reason,
		      r->reason_has);
}
END_TEST

/*
 * IPv4 BIG TCP: the IPv4 frame limit goes over 64 KiB only in hw mode and only
 * when both gso_max_size and gso_ipv4_max_size were raised; below
 * gso_ipv4_max_size, at most 524280 and the user's limit.
 */
START_TEST(test_ipv4_big_tcp_limit)
{
	static const struct {
		const char *what;
		uint32_t gso_max_size, gso_ipv4_max_size, user_max;
		enum ns_gso_request req;
		uint32_t frame_max, frame_max_ipv4;
	} cases[] = {
		{ "both raised, hw", 185000, 185000, 0, NS_GSO_HW, 65535, 184999 },
		{ "both raised, auto", 185000, 185000, 0, NS_GSO_AUTO, 65535, 184999 },
		{ "only gso_max_size raised", 185000, 65536, 0, NS_GSO_HW, 65535, 65535 },
		{ "only gso_ipv4_max_size raised", 65536, 185000, 0, NS_GSO_HW, 65535, 65535 },
		{ "beyond the kernel's GSO_MAX_SIZE", 524288, 524288, 0, NS_GSO_HW, 65535, 524280 },
		{ "user limit under 64 KiB", 185000, 185000, 16000, NS_GSO_HW, 16000, 16000 },
		{ "user limit over 64 KiB", 185000, 185000, 100000, NS_GSO_HW, 65535, 100000 },
		{ "sw mode", 185000, 185000, 0, NS_GSO_SW, 65535, 65535 },
		{ "off mode", 185000, 185000, 0, NS_GSO_OFF, 1514, 1514 },
		{ "defaults", 65536, 65536, 0, NS_GSO_HW, 65535, 65535 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ns_link l;

		memset(&l, 0, sizeof(l));
		snprintf(l.ifname, sizeof(l.ifname), "eth0");
		l.feat.known = l.feat.tcp_tso = true;
		l.feat.on[NS_FEAT_TSO] = l.feat.on[NS_FEAT_GSO] = true;
		l.mtu = 1500;
		l.gso_max_size = cases[i].gso_max_size;
		l.gso_ipv4_max_size = cases[i].gso_ipv4_max_size;
		ck_assert_int_eq(ns_gso_decide(&l, cases[i].req, cases[i].user_max), 0);
		ck_assert_msg(l.frame_max_bytes == cases[i].frame_max, "%s: frame limit %u, expected %u",
			      cases[i].what, l.frame_max_bytes, cases[i].frame_max);
		ck_assert_msg(l.frame_max_ipv4_bytes == cases[i].frame_max_ipv4,
			      "%s: IPv4 frame limit %u, expected %u", cases[i].what, l.frame_max_ipv4_bytes,
			      cases[i].frame_max_ipv4);
	}
}
END_TEST

START_TEST(test_request_names)
{
	ck_assert_int_eq(ns_gso_request_parse("auto"), NS_GSO_AUTO);
	ck_assert_int_eq(ns_gso_request_parse("hw"), NS_GSO_HW);
	ck_assert_int_eq(ns_gso_request_parse("sw"), NS_GSO_SW);
	ck_assert_int_eq(ns_gso_request_parse("off"), NS_GSO_OFF);
	ck_assert_int_eq(ns_gso_request_parse("HW"), -EINVAL);
	ck_assert_int_eq(ns_gso_request_parse(""), -EINVAL);
}
END_TEST

START_TEST(test_feature_names)
{
	static const struct {
		const char *kernel;
		int group;
	} map[] = {
		{ "tx-checksum-ipv4", NS_FEAT_TX_CSUM },
		{ "tx-checksum-ip-generic", NS_FEAT_TX_CSUM },
		{ "tx-checksum-sctp", NS_FEAT_TX_CSUM },
		{ "tx-scatter-gather", NS_FEAT_SG },
		{ "tx-scatter-gather-fraglist", NS_FEAT_SG },
		{ "tx-tcp-segmentation", NS_FEAT_TSO },
		{ "tx-tcp6-segmentation", NS_FEAT_TSO },
		{ "tx-tcp-ecn-segmentation", NS_FEAT_TSO },
		{ "tx-tcp-mangleid-segmentation", NS_FEAT_TSO },
		{ "tx-tcp-accecn-segmentation", NS_FEAT_TSO },
		{ "tx-generic-segmentation", NS_FEAT_GSO },
		{ "rx-gro", NS_FEAT_GRO },
		{ "tx-udp-segmentation", NS_FEAT_TX_UDP_SEG },
		{ "rx-gro-hw", -ENOENT },
		{ "rx-lro", -ENOENT },
		{ "tx-udp_tnl-segmentation", -ENOENT },
		{ "tx-tcp", -ENOENT },
		{ "", -ENOENT },
	};
	unsigned int i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		ck_assert_msg(ns_feature_of_kernel_name(map[i].kernel) == map[i].group, "%s -> %d, expected %d",
			      map[i].kernel, ns_feature_of_kernel_name(map[i].kernel), map[i].group);
	ck_assert_str_eq(ns_feature_names[NS_FEAT_TSO], "tcp-segmentation-offload");
	ck_assert_str_eq(ns_feature_names[NS_FEAT_TX_UDP_SEG], "tx-udp-segmentation");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netsetup_gso");
	TCase *tc = tcase_create("decision");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, test_decision_table, 0, sizeof(rows) / sizeof(rows[0]));
	tcase_add_test(tc, test_ipv4_big_tcp_limit);
	tcase_add_test(tc, test_request_names);
	tcase_add_test(tc, test_feature_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
