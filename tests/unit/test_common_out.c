// SPDX-License-Identifier: MIT
/*
 * test_common_out.c - one printer for both programs, two forms each
 *
 * JSON escaping (RFC 8259 section 7), nesting and commas, and the promise
 * that text and JSON come from the same calls: the same sequence printed
 * both ways gives valid JSON with every key, and text with every value;
 * for a formatted printer (netsetup's) the text is the callers' formats,
 * for a laid-out one (the datapath's stats) headings, indented members and
 * one line per row.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/out.h"

static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	out_json_str(f, s);
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
	struct out o;

	out_init_formatted(&o, f, json);
	out_arr_begin(&o, NULL);
	for (int i = 0; i < 2; i++) {
		out_obj_begin(&o, NULL);
		out_u64f(&o, "ifindex", "%llu: ", 2 + i);
		out_strf(&o, "ifname", "%s: ", i ? "we\"ird" : "eth0");
		out_obj_begin(&o, "features");
		out_boolf(&o, "tx-checksumming", "    tx-checksumming: %s\n", true);
		out_boolf(&o, "generic-receive-offload", "    generic-receive-offload: %s\n", false);
		out_obj_end(&o);
		out_text(&o, "text only\n");
		out_strf(&o, "reason", NULL, "json only");
		out_obj_end(&o);
	}
	out_arr_end(&o);
	out_finish(&o);
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

/* The datapath's kind: the text laid out from the keys. */
static char *render_laid_out(bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct out o;

	out_init(&o, f, json);
	out_u64(&o, "pid", 42);
	out_obj_begin(&o, "links");
	out_obj_begin(&o, "eth0");
	out_str(&o, "gso_mode", "hw");
	out_bool(&o, "up", true);
	out_obj_end(&o);
	out_obj_end(&o);
	out_arr_begin(&o, "neighbours");
	for (int i = 0; i < 2; i++) {
		out_obj_begin(&o, NULL);
		out_str(&o, "address", i ? "10.0.0.2" : "nl\n");
		out_double(&o, "ratio", 1.5);
		out_obj_end(&o);
	}
	out_arr_end(&o);
	out_finish(&o);
	fclose(f);
	return buf;
}

START_TEST(test_laid_out)
{
	char *json = render_laid_out(true), *text = render_laid_out(false);

	ck_assert_str_eq(json,
			 "{\"pid\":42,\"links\":{\"eth0\":{\"gso_mode\":\"hw\",\"up\":true}},"
			 "\"neighbours\":[{\"address\":\"nl\\n\",\"ratio\":1.50},"
			 "{\"address\":\"10.0.0.2\",\"ratio\":1.50}]}\n");
	ck_assert_str_eq(text,
			 "pid: 42\nlinks: \n  eth0: \n    gso_mode: hw\n    up: true\nneighbours: \n"
			 "  address nl\n ratio 1.50\n  address 10.0.0.2 ratio 1.50\n");
	free(json);
	free(text);
}
END_TEST

START_TEST(test_deep_nesting_is_bounded)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct out o;
	int i;

	out_init_formatted(&o, f, true);
	for (i = 0; i < 40; i++)
		out_obj_begin(&o, "k");
	for (i = 0; i < 40; i++)
		out_obj_end(&o);
	ck_assert_int_eq(o.depth, 0);
	fclose(f);
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("common_out");
	TCase *tc = tcase_create("output");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_same_calls);
	tcase_add_test(tc, test_laid_out);
	tcase_add_test(tc, test_deep_nesting_is_bounded);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
