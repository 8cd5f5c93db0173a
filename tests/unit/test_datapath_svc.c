// SPDX-License-Identifier: MIT
/*
 * test_datapath_svc.c - the --publish/--forward SPEC grammar (good specs
 * parse to the right fields, bad ones are refused with the reason) and the
 * text/JSON printer the stats use.
 */
#include <arpa/inet.h>
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/out.h"
#include "datapath/svc/svc.h"

START_TEST(test_publish_good)
{
	struct svc_spec s;
	char err[512];
	const struct sockaddr_in *sin;
	const struct sockaddr_un *sun;

	ck_assert_int_eq(svc_spec_parse("udp:5353=127.0.0.1:53", SVC_PUBLISH, &s, err, sizeof(err)), 0);
	ck_assert_int_eq(s.proto, IPPROTO_UDP);
	ck_assert_int_eq(s.addr.family, AF_UNSPEC);
	ck_assert_uint_eq(s.port, 5353);
	sin = (const struct sockaddr_in *)&s.target.sa;
	ck_assert_int_eq(sin->sin_family, AF_INET);
	ck_assert_uint_eq(ntohs(sin->sin_port), 53);
	ck_assert_uint_eq(ntohl(sin->sin_addr.s_addr), 0x7f000001);

	ck_assert_int_eq(svc_spec_parse("udp:10.0.0.2:80=unix:/run/x.sock", SVC_PUBLISH, &s, err,
					sizeof(err)), 0);
	ck_assert_int_eq(s.addr.family, AF_INET);
	ck_assert_uint_eq(s.port, 80);
	ck_assert(s.target.is_unix);
	sun = (const struct sockaddr_un *)&s.target.sa;
	ck_assert_str_eq(sun->sun_path, "/run/x.sock");

	ck_assert_int_eq(svc_spec_parse("udp:[fd00::2]:53=[::1]:5300", SVC_PUBLISH, &s, err,
					sizeof(err)), 0);
	ck_assert_int_eq(s.addr.family, AF_INET6);
	ck_assert_int_eq(s.target.sa.ss_family, AF_INET6);
	ck_assert_uint_eq(ntohs(((struct sockaddr_in6 *)&s.target.sa)->sin6_port), 5300);
	ck_assert_int_eq(svc_spec_parse("udp:7=localhost:7", SVC_PUBLISH, &s, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_forward_good)
{
	struct svc_spec s;
	char err[512];

	ck_assert_int_eq(svc_spec_parse("udp:127.0.0.1:8000=10.0.0.1:7000", SVC_FORWARD, &s, err,
					sizeof(err)), 0);
	ck_assert_int_eq(s.listen.sa.ss_family, AF_INET);
	ck_assert_int_eq(s.remote.family, AF_INET);
	ck_assert_uint_eq(s.remote_port, 7000);
	ck_assert_int_eq(svc_spec_parse("udp:unix:/tmp/f.sock=[2001:db8::1]:53", SVC_FORWARD, &s,
					err, sizeof(err)), 0);
	ck_assert(s.listen.is_unix);
	ck_assert_int_eq(s.remote.family, AF_INET6);
}
END_TEST

static void expect_bad(const char *spec, enum svc_kind kind, const char *needle)
{
	struct svc_spec s;
	char err[512] = "";

	ck_assert_int_lt(svc_spec_parse(spec, kind, &s, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, needle) != NULL, "'%s': message '%s' lacks '%s'", spec, err, needle);
	ck_assert_msg(strstr(err, spec) != NULL, "message '%s' does not name the SPEC", err);
}

START_TEST(test_bad_specs_say_why)
{
	expect_bad("udp:0=127.0.0.1:53", SVC_PUBLISH, "1..65535");
	expect_bad("udp:65536=127.0.0.1:53", SVC_PUBLISH, "1..65535");
	expect_bad("udp:53", SVC_PUBLISH, "missing '=TARGET'");
	expect_bad("sctp:53=127.0.0.1:53", SVC_PUBLISH, "expected udp");
	expect_bad("tcp:80", SVC_PUBLISH, "missing '=TARGET'");
	expect_bad("udp:53=127.0.0.1", SVC_PUBLISH, "HOST:PORT");
	expect_bad("udp:53=unix:relative", SVC_PUBLISH, "absolute");
	expect_bad("udp:300.1.1.1:53=127.0.0.1:53", SVC_PUBLISH, "not an IPv4 address");
	expect_bad("udp:fd00::1:53=127.0.0.1:53", SVC_PUBLISH, "not an IPv4 address");
	expect_bad("udp:53=fd00::1:53", SVC_PUBLISH, "brackets");
	expect_bad("udp:53=no-such-host.invalid:53", SVC_PUBLISH, "cannot resolve");
	expect_bad("udp:127.0.0.1:8000=example.com:53", SVC_FORWARD, "numeric");
	expect_bad("udp:127.0.0.1:8000=10.0.0.1:x", SVC_FORWARD, "1..65535");
	expect_bad("udp:127.0.0.1:8000=", SVC_FORWARD, "missing '=REMOTE'");
}
END_TEST

START_TEST(test_out_json_and_text)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		bool json = pass == 0;

		f = open_memstream(&buf, &len);
		{
			struct out o;

			out_init(&o, f, json);
			out_u64(&o, "pid", 42);
			out_obj_begin(&o, "links");
			out_obj_begin(&o, "eth0");
			out_str(&o, "mac", "02:00:00:00:00:01");
			out_double(&o, "ratio", 1.5);
			out_obj_end(&o);
			out_obj_end(&o);
			out_arr_begin(&o, "rows");
			out_obj_begin(&o, NULL);
			out_str(&o, "a", "q\"uote");
			out_bool(&o, "b", true);
			out_obj_end(&o);
			out_obj_begin(&o, NULL);
			out_u64(&o, "a", 2);
			out_obj_end(&o);
			out_arr_end(&o);
			out_finish(&o);
		}
		fclose(f);
		if (json)
			ck_assert_str_eq(buf, "{\"pid\":42,\"links\":{\"eth0\":{\"mac\":\"02:00:00:00:00:01\","
					      "\"ratio\":1.50}},\"rows\":[{\"a\":\"q\\\"uote\",\"b\":true},"
					      "{\"a\":2}]}\n");
		else
			ck_assert_str_eq(buf, "pid: 42\nlinks: \n  eth0: \n    mac: 02:00:00:00:00:01\n"
					      "    ratio: 1.50\nrows: \n  a q\"uote b true\n  a 2\n");
		free(buf);
		buf = NULL;
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("datapath_svc");
	TCase *tc = tcase_create("spec");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_publish_good);
	tcase_add_test(tc, test_forward_good);
	tcase_add_test(tc, test_bad_specs_say_why);
	tcase_add_test(tc, test_out_json_and_text);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
