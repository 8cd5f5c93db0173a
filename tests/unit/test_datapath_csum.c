// SPDX-License-Identifier: MIT
/*
 * test_datapath_csum.c - the Internet checksum against known-good values and
 * against a plain 16-bit reference loop, at every length and alignment.
 */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/net/net.h"
#include "tests/unit/datapath_testlib.h"

/* csum_partial() against the reference over @len bytes at @b, alone and
 * after a chained 20-byte even piece (a header); 0 when they agree. */
static int check_both(const uint8_t *b, size_t len)
{
	static const uint8_t hdr[20] = { 0x45, 0, 0x05, 0xdc, 0x12, 0x34, 0x40, 0, 0x40, 6,
					 0, 0, 10, 66, 0, 2, 10, 66, 0, 1 };
	uint16_t ref = dpt_ref_sum(b, len, 0);
	uint32_t h;
	uint8_t *cat;
	int bad = 0;

	if (csum_fold(csum_partial(b, len, 0)) != ref)
		bad = 1;
	cat = malloc(sizeof(hdr) + len);
	ck_assert_ptr_nonnull(cat);
	memcpy(cat, hdr, sizeof(hdr));
	if (len)
		memcpy(cat + sizeof(hdr), b, len);
	ref = dpt_ref_sum(cat, sizeof(hdr) + len, 0);
	h = csum_partial(hdr, sizeof(hdr), 0);
	if (csum_fold(csum_partial(b, len, h)) != ref)
		bad = 1;
	free(cat);
	return bad;
}

/* Lengths 0..70000 at random, every alignment 0..7 and odd lengths, random
 * and all-0xff data, every length up to 1100 (the unrolled loop's edges at
 * 32 bytes and the 1..7-byte tails), and 2.6 MiB of each (carries). */
START_TEST(test_fast_exhaustive)
{
	size_t cap = 2600 * 1024 + 16, len, align, i;
	uint8_t *buf = malloc(cap), *ones = malloc(cap);
	unsigned int k;

	ck_assert_ptr_nonnull(buf);
	ck_assert_ptr_nonnull(ones);
	srand(7);
	for (i = 0; i < cap; i++)
		buf[i] = (uint8_t)rand();
	memset(ones, 0xff, cap);
	for (align = 0; align < 8; align++)
		for (len = 0; len <= 1100; len++) {
			ck_assert_msg(!check_both(buf + align, len), "random len %zu align %zu", len, align);
			ck_assert_msg(!check_both(ones + align, len), "0xff len %zu align %zu", len, align);
		}
	for (k = 0; k < 400; k++) {
		len = (size_t)rand() % 70001;
		align = (size_t)rand() % 8;
		if (k % 4 == 0)
			len |= 1;	/* odd */
		ck_assert_msg(!check_both(buf + align, len), "random len %zu align %zu", len, align);
		ck_assert_msg(!check_both(ones + align, len), "0xff len %zu align %zu", len, align);
	}
	for (align = 0; align < 2; align++) {
		ck_assert(!check_both(buf + align, 2600 * 1024 + align));
		ck_assert(!check_both(ones + align, 2600 * 1024 + align));
	}
	/* a zero sum stays distinguishable from all ones */
	memset(buf, 0, 4096);
	ck_assert(!check_both(buf, 4096));
	free(buf);
	free(ones);
}
END_TEST

START_TEST(test_rfc1071_example)
{
	/* RFC 1071 section 3: the sum of these bytes is ddf2 */
	static const uint8_t b[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };

	ck_assert_uint_eq(csum_fold(csum_partial(b, sizeof(b), 0)), (uint16_t)~0xddf2);
}
END_TEST

START_TEST(test_known_ipv4_header)
{
	/* A real IPv4 header (192.168.0.1 -> 192.168.0.199, UDP) whose checksum
	 * field holds b861: summing it with the field must give 0. */
	static const uint8_t h[] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
				     0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	uint8_t z[sizeof(h)];

	ck_assert_uint_eq(csum_fold(csum_partial(h, sizeof(h), 0)), 0);
	memcpy(z, h, sizeof(h));
	z[10] = z[11] = 0;
	ck_assert_uint_eq(csum_fold(csum_partial(z, sizeof(z), 0)), 0xb861);
}
END_TEST

START_TEST(test_known_udp_datagram)
{
	/* A UDP datagram 10.0.0.1:40000 -> 10.0.0.2:5000, payload "hello\n";
	 * its checksum is 0xf82a (computed independently with Python). */
	static const uint8_t u[] = { 0x9c, 0x40, 0x13, 0x88, 0x00, 0x0e, 0x00, 0x00,
				     'h', 'e', 'l', 'l', 'o', '\n' };
	struct in_addr s, d;
	uint32_t sum;
	uint16_t ref;

	inet_pton(AF_INET, "10.0.0.1", &s);
	inet_pton(AF_INET, "10.0.0.2", &d);
	sum = csum_pseudo4(s, d, IPPROTO_UDP, sizeof(u));
	/* the reference over an explicit pseudo-header */
	{
		uint8_t ph[12 + sizeof(u)];

		memcpy(ph, &s, 4);
		memcpy(ph + 4, &d, 4);
		ph[8] = 0;
		ph[9] = IPPROTO_UDP;
		ph[10] = 0;
		ph[11] = sizeof(u);
		memcpy(ph + 12, u, sizeof(u));
		ref = dpt_ref_sum(ph, sizeof(ph), 0);
	}
	ck_assert_uint_eq(csum_fold(csum_partial(u, sizeof(u), sum)), ref);
	ck_assert_uint_eq(ref, 0xf82a);
}
END_TEST

START_TEST(test_against_reference)
{
	static uint8_t buf[4096 + 16];
	size_t len, align;
	unsigned int i;

	srand(42);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	for (align = 0; align < 8; align++)
		for (len = 0; len < 300; len++)
			ck_assert_uint_eq(csum_fold(csum_partial(buf + align, len, 0)),
					  dpt_ref_sum(buf + align, len, 0));
	ck_assert_uint_eq(csum_fold(csum_partial(buf + 3, 4096, 0)), dpt_ref_sum(buf + 3, 4096, 0));
	/* all ones: the carries must wrap correctly */
	memset(buf, 0xff, sizeof(buf));
	ck_assert_uint_eq(csum_fold(csum_partial(buf, 4096, 0)), dpt_ref_sum(buf, 4096, 0));
}
END_TEST

START_TEST(test_chaining_even_pieces)
{
	uint8_t b[64];
	unsigned int i;
	uint32_t sum;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 7 + 3);
	sum = csum_partial(b, 20, 0);
	sum = csum_partial(b + 20, 44, sum);
	ck_assert_uint_eq(csum_fold(sum), dpt_ref_sum(b, sizeof(b), 0));
}
END_TEST

START_TEST(test_pseudo6)
{
	struct in6_addr s, d;
	uint8_t ph[40];
	uint32_t sum;

	inet_pton(AF_INET6, "fd00::1", &s);
	inet_pton(AF_INET6, "fe80::1234:5678:9abc:def0", &d);
	memcpy(ph, &s, 16);
	memcpy(ph + 16, &d, 16);
	memset(ph + 32, 0, 8);
	ph[34] = 0x01;		/* length 0x1ff */
	ph[35] = 0xff;
	ph[39] = IPPROTO_ICMPV6;
	sum = csum_pseudo6(&s, &d, IPPROTO_ICMPV6, 0x1ff);
	ck_assert_uint_eq(csum_fold(sum), dpt_ref_sum(ph, sizeof(ph), 0));
}
END_TEST

static Suite *csum_suite(void)
{
	Suite *s = suite_create("datapath_csum");
	TCase *tc = tcase_create("csum");

	tcase_add_test(tc, test_rfc1071_example);
	tcase_add_test(tc, test_known_ipv4_header);
	tcase_add_test(tc, test_known_udp_datagram);
	tcase_add_test(tc, test_against_reference);
	tcase_add_test(tc, test_chaining_even_pieces);
	tcase_add_test(tc, test_pseudo6);
	tcase_add_test(tc, test_fast_exhaustive);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(csum_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
