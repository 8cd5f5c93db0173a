// SPDX-License-Identifier: MIT
/*
 * test_datapath_face_netstat.c - the container kernel's counters as the
 * face reads them: /proc/net/snmp's Udp lines, snmp6's Udp6 ones, the TUN's
 * drops in /proc/net/dev (face_udp_seq.sh compares what the datapath reports
 * with the container's own files).
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "datapath/face/face.h"

static const char snmp[] =
	"Ip: Forwarding DefaultTTL InReceives\n"
	"Ip: 2 64 100\n"
	"Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
	"Udp: 5000 3 42 4000 40 7 2 0 0\n"
	"UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors\n"
	"UdpLite: 0 0 900 0 900 900 0 0 0\n";
static const char snmp6[] =
	"Ip6InReceives                   \t10\n"
	"Udp6InDatagrams                 \t300\n"
	"Udp6InErrors                    \t5\n"
	"Udp6RcvbufErrors                \t4\n"
	"Udp6SndbufErrors                \t1\n"
	"UdpLite6InErrors                \t800\n";
static const char dev[] =
	"Inter-|   Receive                                                |  Transmit\n"
	" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
	"    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0\n"
	"sn-eth01: 1 1 0 999 0 0 0 0 1 1 0 999 0 0 0 0\n"
	"sn-eth0: 123456 789 0 11 0 0 0 0 654321 987 0 22 0 0 0 0\n"
	"  eth0: 5 5 0 33 0 0 0 0 5 5 0 44 0 0 0 0\n";

START_TEST(test_parse)
{
	struct face_netstat k;

	face_netstat_parse(snmp, snmp6, dev, "sn-eth0", &k);
	ck_assert_uint_eq(k.udp_in_errors, 42 + 5);	/* Udp and Udp6, not UdpLite */
	ck_assert_uint_eq(k.udp_rcvbuf_errors, 40 + 4);
	ck_assert_uint_eq(k.udp_sndbuf_errors, 7 + 1);
	ck_assert_uint_eq(k.tun_rx_dropped, 11);	/* sn-eth0's, not sn-eth01's */
	ck_assert_uint_eq(k.tun_tx_dropped, 22);
}
END_TEST

START_TEST(test_parse_bad_text)
{
	struct face_netstat k;

	/* names without values, a device line cut short, nothing at all */
	face_netstat_parse("Udp: InErrors RcvbufErrors\n", "Udp6InErrors\n", "sn-eth0: 1 2 3\n", "sn-eth0", &k);
	ck_assert_uint_eq(k.udp_in_errors, 0);
	ck_assert_uint_eq(k.udp_rcvbuf_errors, 0);
	ck_assert_uint_eq(k.tun_rx_dropped, 0);
	face_netstat_parse("", "", "", "sn-eth0", &k);
	ck_assert_uint_eq(k.udp_sndbuf_errors + k.tun_tx_dropped, 0);
	/* fewer values than names: the counters past the last value stay 0 */
	face_netstat_parse("Udp: InDatagrams InErrors RcvbufErrors\nUdp: 1 2\n", "", "", "sn-eth0", &k);
	ck_assert_uint_eq(k.udp_in_errors, 2);
	ck_assert_uint_eq(k.udp_rcvbuf_errors, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("datapath_face_netstat");
	TCase *tc = tcase_create("netstat");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_parse_bad_text);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
