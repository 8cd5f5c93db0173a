// SPDX-License-Identifier: MIT
/*
 * test_netsetup_output.c - one printer, two forms
 *
 * JSON escaping (RFC 8259 section 7), nesting and commas, and the promise
 * that text and JSON come from the same calls: the same sequence printed
 * both ways gives valid JSON with every key, and text with every value.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "netsetup/netsetup.h"

static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ns_json_escape(f, s);
	fclose(f);
	return buf;
}

START_TEST(test_escape)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "", "\"\"" },
		{ "eth0", "\"eth0\"" },
		{ "a\"b", "\"a\\\"b\"" },
		{ "back\\slash", "\"back\\\\slash\"" },
		{ "tab\there", "\"tab\\there\"" },
		{ "nl\ncr\r", "\"nl\\ncr\\r\"" },
		{ "\b\f", "\"\\b\\f\"" },
		{ "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
		{ "</script>", "\"</script>\"" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = escaped(cases[i].in);

		ck_assert_msg(!strcmp(got, cases[i].out), "case %u: got %s expected %s", i, got, cases[i].out);
		free(got);
	}
}
END_TEST

static char *render(bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ns_out o;

	ns_out_init(&o, f, json);
	ns_out_open(&o, NULL, true);
	for (int i = 0; i < 2; i++) {
		ns_out_open(&o, NULL, false);
		ns_out_uint(&o, "ifindex", "%llu: ", 2 + i);
		ns_out_str(&o, "ifname", "%s: ", i ? "we\"ird" : "eth0");
		ns_out_open(&o, "features", false);
		ns_out_bool(&o, "tx-checksumming", "    tx-checksumming: %s\n", true);
		ns_out_bool(&o, "generic-receive-offload", "    generic-receive-offload: %s\n", false);
		ns_out_close(&o, false);
		ns_out_text(&o, "text only\n");
		ns_out_str(&o, "reason", NULL, "json only");
		ns_out_close(&o, false);
	}
	ns_out_close(&o, true);
	ns_out_end(&o);
	fclose(f);
	return buf;
}

START_TEST(test_same_calls)
{
	char *json = render(true), *text = render(false);

	ck_assert_str_eq(json,
			 "[{\"ifindex\":2,\"ifname\":\"eth0\",\"features\":{\"tx-checksumming\":true,"
			 "\"generic-receive-offload\":false},\"reason\":\"json only\"},"
			 "{\"ifindex\":3,\"ifname\":\"we\\\"ird\",\"features\":{\"tx-checksumming\":true,"
			 "\"generic-receive-offload\":false},\"reason\":\"json only\"}]\n");
	ck_assert_str_eq(text,
			 "2: eth0:     tx-checksumming: on\n    generic-receive-offload: off\ntext only\n"
			 "3: we\"ird:     tx-checksumming: on\n    generic-receive-offload: off\ntext only\n");
	free(json);
	free(text);
}
END_TEST

START_TEST(test_deep_nesting_is_bounded)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct ns_out o;
	int i;

	ns_out_init(&o, f, true);
	for (i = 0; i < 40; i++)
		ns_out_open(&o, "k", false);
	for (i = 0; i < 40; i++)
		ns_out_close(&o, false);
	ck_assert_int_eq(o.depth, 0);
	fclose(f);
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("netsetup_output");
	TCase *tc = tcase_create("output");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_same_calls);
	tcase_add_test(tc, test_deep_nesting_is_bounded);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
