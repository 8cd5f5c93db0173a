// SPDX-License-Identifier: MIT
/*
 * test_datapath_ledger.c - the pair book a datapath leaves its successor:
 * shards that share it take every n-th slot, so that its high mark (how far
 * a successor reads) stays as low as the pairs are few, and the successor
 * finds every pair of every shard and clears the book.
 */
#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "datapath/ledger.h"

static struct ledger_pair pair_of(uint16_t port)
{
	struct ledger_pair p = { .family = AF_INET, .container_port = port, .outer_port = port,
				 .remote_port = 80 };

	p.container[0] = 10;
	p.remote[0] = 192;
	return p;
}

static unsigned int seen_ports;		/* a bit per container port 1..31 taken */

static void take_one(void *ctx, const struct ledger_pair *p)
{
	(*(unsigned int *)ctx)++;
	ck_assert_uint_eq(p->used, 1);
	ck_assert_uint_lt(p->container_port, 32);
	seen_ports |= 1u << p->container_port;
}

/* Two shards of a few pairs each use the first slots between them. */
START_TEST(test_ledger_shards_interleave)
{
	struct ledger lg, part[2];
	struct ledger_pair p;
	unsigned int n = 0, i;
	int slot[5];

	ck_assert_int_eq(ledger_create(&lg, 1000), 0);
	ck_assert_uint_eq(ledger_pairs_take(&lg, take_one, &n), 0);
	ledger_share(&lg, 0, 2, &part[0]);
	ledger_share(&lg, 1, 2, &part[1]);
	ck_assert_uint_eq(lg.book->hi, 0);

	for (i = 0; i < 5; i++) {
		p = pair_of((uint16_t)(i + 1));
		slot[i] = ledger_pair_add(&part[i % 2], &p);
	}
	/* shard 0 takes 0, 2, 4; shard 1 takes 1, 3 */
	ck_assert_int_eq(slot[0], 0);
	ck_assert_int_eq(slot[1], 1);
	ck_assert_int_eq(slot[2], 2);
	ck_assert_int_eq(slot[3], 3);
	ck_assert_int_eq(slot[4], 4);
	ck_assert_uint_eq(lg.book->hi, 5);

	/* a freed slot is the next one its shard takes; the mark does not move back */
	ledger_pair_del(&part[1], slot[1]);
	ck_assert_uint_eq(lg.book->pairs[1].used, 0);
	p = pair_of(9);
	ck_assert_int_eq(ledger_pair_add(&part[1], &p), 1);
	ck_assert_uint_eq(lg.book->hi, 5);

	/* the successor: every pair of both shards, then a clear book */
	seen_ports = 0;
	ck_assert_uint_eq(ledger_pairs_take(&part[0], take_one, &n), 5);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(seen_ports, 1u << 1 | 1u << 3 | 1u << 4 | 1u << 5 | 1u << 9);
	ck_assert_uint_eq(lg.book->hi, 0);
	for (i = 0; i < 5; i++)
		ck_assert_uint_eq(lg.book->pairs[i].used, 0);
	ledger_unmap(&part[0]);
	ledger_unmap(&part[1]);
	ledger_unmap(&lg);
}
END_TEST

/* One datapath alone: the mark follows the highest slot ever used. */
START_TEST(test_ledger_alone)
{
	struct ledger lg;
	struct ledger_pair p = pair_of(7);
	unsigned int n = 0;
	int a, b;

	ck_assert_int_eq(ledger_create(&lg, 4), 0);
	a = ledger_pair_add(&lg, &p);
	b = ledger_pair_add(&lg, &p);
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 1);
	ck_assert_uint_eq(lg.book->hi, 2);
	ledger_pair_del(&lg, a);
	ck_assert_uint_eq(ledger_pairs_take(&lg, take_one, &n), 1);
	ck_assert_uint_eq(lg.book->hi, 0);
	ledger_unmap(&lg);
}
END_TEST

/* More shards than slots: a shard without a slot counts what it could not write. */
START_TEST(test_ledger_share_no_slot)
{
	struct ledger lg, part[2];
	struct ledger_pair p = pair_of(1);

	ck_assert_int_eq(ledger_create(&lg, 1), 0);
	ledger_share(&lg, 0, 2, &part[0]);
	ledger_share(&lg, 1, 2, &part[1]);
	ck_assert_int_eq(ledger_pair_add(&part[1], &p), -ENOSPC);
	ck_assert_uint_eq(part[1].full, 1);
	ck_assert_uint_eq(lg.book->hi, 0);
	ledger_unmap(&part[0]);
	ledger_unmap(&part[1]);
	ledger_unmap(&lg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("datapath_ledger");
	TCase *tc = tcase_create("ledger");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_ledger_shards_interleave);
	tcase_add_test(tc, test_ledger_alone);
	tcase_add_test(tc, test_ledger_share_no_slot);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
