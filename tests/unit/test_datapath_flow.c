// SPDX-License-Identifier: MIT
/*
 * test_datapath_flow.c - a stack's flow table: filing and finding by hash,
 * flows that share a hash, kinds kept apart, the age lists, removal, and
 * the random key.
 */
#include <check.h>
#include <string.h>

#include "datapath/flow.h"

/* An owner with a key of its own, as svc_udp.c's flows are. */
struct owner {
	unsigned int id;
	struct flow flow;
};

static uint64_t owner_hash(const struct flow_table *t, unsigned int id)
{
	return flow_hash(t, &id, sizeof(id));
}

static struct owner *owner_find(const struct flow_table *t, enum flow_kind kind, unsigned int id)
{
	struct flow *f;

	for (f = flow_first(t, kind, owner_hash(t, id)); f; f = flow_next(f))
		if (flow_entry(f, struct owner, flow)->id == id)
			return flow_entry(f, struct owner, flow);
	return NULL;
}

/* Every flow is found by its own key, and a key never filed is not. */
START_TEST(test_flow_find)
{
	struct flow_table *t = flow_table_new();
	static struct owner o[10000];
	unsigned int i;

	ck_assert_ptr_nonnull(t);
	for (i = 0; i < 10000; i++) {
		o[i].id = i * 7;
		flow_add(t, &o[i].flow, FLOW_SVC_UDP, owner_hash(t, o[i].id), i);
	}
	ck_assert_uint_eq(flow_count(t, FLOW_SVC_UDP), 10000);
	for (i = 0; i < 10000; i++)
		ck_assert_ptr_eq(owner_find(t, FLOW_SVC_UDP, i * 7), &o[i]);
	ck_assert_ptr_null(owner_find(t, FLOW_SVC_UDP, 1));
	ck_assert_ptr_null(owner_find(t, FLOW_SVC_UDP, 70001));
	for (i = 0; i < 10000; i++)
		flow_del(t, &o[i].flow);
	ck_assert_uint_eq(flow_count(t, FLOW_SVC_UDP), 0);
	ck_assert_ptr_null(flow_oldest(t, FLOW_SVC_UDP));
	ck_assert_ptr_null(owner_find(t, FLOW_SVC_UDP, 7));
	flow_table_free(t);
}
END_TEST

/* Flows filed under one hash are all walked; the owner picks by its key. */
START_TEST(test_flow_same_hash)
{
	struct flow_table *t = flow_table_new();
	struct owner a = { .id = 1 }, b = { .id = 2 }, c = { .id = 3 };
	struct flow *f;
	unsigned int seen = 0;

	ck_assert_ptr_nonnull(t);
	flow_add(t, &a.flow, FLOW_SVC_UDP, 42, 0);
	flow_add(t, &b.flow, FLOW_SVC_UDP, 42, 0);
	flow_add(t, &c.flow, FLOW_SVC_UDP, 42 + 4096, 0);	/* same bucket, another hash */
	for (f = flow_first(t, FLOW_SVC_UDP, 42); f; f = flow_next(f))
		seen |= 1u << flow_entry(f, struct owner, flow)->id;
	ck_assert_uint_eq(seen, (1u << 1) | (1u << 2));
	flow_del(t, &b.flow);
	ck_assert_ptr_eq(flow_first(t, FLOW_SVC_UDP, 42), &a.flow);
	ck_assert_ptr_null(flow_next(&a.flow));
	ck_assert_ptr_eq(flow_first(t, FLOW_SVC_UDP, 42 + 4096), &c.flow);
	flow_del(t, &a.flow);
	flow_del(t, &c.flow);
	ck_assert_ptr_null(flow_first(t, FLOW_SVC_UDP, 42));
	flow_table_free(t);
}
END_TEST

/* Kinds share the buckets, never a lookup, a count or an age list. */
START_TEST(test_flow_kinds)
{
	struct flow_table *t = flow_table_new();
	struct owner echo = { .id = 7 }, svc = { .id = 7 };

	ck_assert_ptr_nonnull(t);
	flow_add(t, &echo.flow, FLOW_FACE_ECHO, owner_hash(t, 7), 1);
	flow_add(t, &svc.flow, FLOW_SVC_UDP, owner_hash(t, 7), 2);
	ck_assert_ptr_eq(owner_find(t, FLOW_FACE_ECHO, 7), &echo);
	ck_assert_ptr_eq(owner_find(t, FLOW_SVC_UDP, 7), &svc);
	ck_assert_ptr_null(flow_next(&echo.flow));
	ck_assert_ptr_null(flow_next(&svc.flow));
	ck_assert_uint_eq(flow_count(t, FLOW_FACE_ECHO), 1);
	ck_assert_uint_eq(flow_count(t, FLOW_SVC_UDP), 1);
	ck_assert_ptr_eq(flow_oldest(t, FLOW_FACE_ECHO), &echo.flow);
	ck_assert_ptr_eq(flow_oldest(t, FLOW_SVC_UDP), &svc.flow);
	flow_del(t, &echo.flow);
	ck_assert_ptr_null(owner_find(t, FLOW_FACE_ECHO, 7));
	ck_assert_ptr_eq(owner_find(t, FLOW_SVC_UDP, 7), &svc);
	ck_assert_ptr_null(flow_oldest(t, FLOW_FACE_ECHO));
	flow_del(t, &svc.flow);
	flow_table_free(t);
}
END_TEST

/* The age list: oldest first, a touch makes a flow the newest. */
START_TEST(test_flow_age)
{
	struct flow_table *t = flow_table_new();
	struct owner o[4];
	unsigned int i;

	ck_assert_ptr_nonnull(t);
	for (i = 0; i < 4; i++) {
		o[i].id = i;
		flow_add(t, &o[i].flow, FLOW_SVC_UDP, owner_hash(t, i), 100 + i);
	}
	ck_assert_ptr_eq(flow_oldest(t, FLOW_SVC_UDP), &o[0].flow);
	flow_touch(t, &o[0].flow, 200);
	ck_assert_uint_eq(o[0].flow.last_ms, 200);
	ck_assert_ptr_eq(flow_oldest(t, FLOW_SVC_UDP), &o[1].flow);
	flow_touch(t, &o[0].flow, 201);	/* the newest already */
	ck_assert_uint_eq(o[0].flow.last_ms, 201);
	flow_del(t, &o[1].flow);
	ck_assert_ptr_eq(flow_oldest(t, FLOW_SVC_UDP), &o[2].flow);
	flow_touch(t, &o[2].flow, 202);
	flow_touch(t, &o[3].flow, 203);
	/* now 0, 2, 3 from the oldest */
	ck_assert_ptr_eq(flow_oldest(t, FLOW_SVC_UDP), &o[0].flow);
	ck_assert_ptr_eq(o[0].flow.newer, &o[2].flow);
	ck_assert_ptr_eq(o[2].flow.newer, &o[3].flow);
	ck_assert_ptr_null(o[3].flow.newer);
	ck_assert_uint_eq(flow_count(t, FLOW_SVC_UDP), 3);
	flow_del(t, &o[3].flow);
	flow_del(t, &o[0].flow);
	ck_assert_ptr_eq(flow_oldest(t, FLOW_SVC_UDP), &o[2].flow);
	flow_del(t, &o[2].flow);
	ck_assert_ptr_null(flow_oldest(t, FLOW_SVC_UDP));
	flow_table_free(t);
}
END_TEST

/* Each table hashes with its own random key: nobody outside can aim at a bucket. */
START_TEST(test_flow_keyed)
{
	struct flow_table *a = flow_table_new(), *b = flow_table_new();
	const char key[] = "10.0.0.1:53";

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(flow_hash(a, key, sizeof(key)), flow_hash(a, key, sizeof(key)));
	ck_assert_uint_ne(flow_hash(a, key, sizeof(key)), flow_hash(b, key, sizeof(key)));
	flow_table_free(a);
	flow_table_free(b);
	flow_table_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("datapath_flow");
	TCase *tc = tcase_create("flow");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_flow_find);
	tcase_add_test(tc, test_flow_same_hash);
	tcase_add_test(tc, test_flow_kinds);
	tcase_add_test(tc, test_flow_age);
	tcase_add_test(tc, test_flow_keyed);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
