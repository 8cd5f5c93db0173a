// SPDX-License-Identifier: MIT
/*
 * test_datapath_names_bind.c - the name bindings (datapath/names/bind.c): an
 * address found by the names it was bound to, for the TTL raised to the floor
 * and lowered to the cap, on the caller's clock; a renewal keeps the later
 * expiry; several names to one address and one name to several addresses; a
 * full table sweeps the expired, then gives up the pair closest to expiring;
 * the counters say each of those. Four threads adding and finding at once
 * (the shards share one table) lose no pair; ThreadSanitizer runs this test.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "datapath/names/bind.h"

static struct dns_name name_of(const char *text)
{
	struct dns_name n;

	ck_assert_int_eq(dns_name_from_text(text, true, &n, NULL), 0);
	return n;
}

static void add(struct name_binds *b, const char *addr, const char *name, uint32_t ttl_s, uint64_t now_ms)
{
	struct dns_name n = name_of(name);
	uint8_t a[16] = { 0 };
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;

	ck_assert_int_eq(inet_pton(family, addr, a), 1);
	ck_assert_int_eq(name_binds_add(b, family, a, &n, ttl_s, now_ms), 0);
}

/* name_binds_match_fn: the pattern in @ctx takes the name */
static bool fits(void *ctx, const struct dns_name *name)
{
	return dns_name_match(ctx, name);
}

/* The first name bound to @addr that @pattern takes, or "" for none. */
static const char *find(struct name_binds *b, const char *addr, const char *pattern, uint64_t now_ms)
{
	static struct dns_name found;
	struct dns_name p = name_of(pattern);
	uint8_t a[16] = { 0 };
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;

	ck_assert_int_eq(inet_pton(family, addr, a), 1);
	if (!name_binds_find(b, family, a, now_ms, fits, &p, &found))
		return "";
	return found.text;
}

START_TEST(test_bind_and_expire)
{
	struct name_binds *b = name_binds_new(16, 60, 3600);
	struct name_binds_stats st;

	ck_assert_ptr_nonnull(b);
	add(b, "192.0.2.1", "pypi.org", 300, 1000);
	add(b, "2001:db8::1", "pypi.org", 300, 1000);
	add(b, "192.0.2.1", "files.pythonhosted.org", 5, 1000);	/* raised to 60 s */
	add(b, "192.0.2.2", "api.github.com", 86400, 1000);	/* lowered to 3600 s */
	ck_assert_str_eq(find(b, "192.0.2.1", "pypi.org", 1000), "pypi.org");
	ck_assert_str_eq(find(b, "2001:db8::1", "pypi.org", 1000), "pypi.org");
	ck_assert_str_eq(find(b, "192.0.2.1", "*.pythonhosted.org", 1000), "files.pythonhosted.org");
	ck_assert_str_eq(find(b, "192.0.2.1", "*.github.com", 1000), "");
	ck_assert_str_eq(find(b, "192.0.2.3", "pypi.org", 1000), "");
	/* an IPv4 address is not the IPv6 one with the same first bytes */
	ck_assert_str_eq(find(b, "c000:201::", "pypi.org", 1000), "");

	/* a renewal keeps the later expiry: a shorter TTL later does not cut it */
	add(b, "192.0.2.1", "pypi.org", 300, 2000);	/* until 302 s */
	add(b, "192.0.2.1", "pypi.org", 60, 3000);	/* until 63 s: kept at 302 */

	/* the floor: alive until 61 s, gone then; the other name of the address stays */
	ck_assert_str_eq(find(b, "192.0.2.1", "*.pythonhosted.org", 60999), "files.pythonhosted.org");
	ck_assert_str_eq(find(b, "192.0.2.1", "*.pythonhosted.org", 61000), "");
	ck_assert_str_eq(find(b, "192.0.2.1", "pypi.org", 61000), "pypi.org");
	ck_assert_str_eq(find(b, "192.0.2.1", "pypi.org", 301999), "pypi.org");
	ck_assert_str_eq(find(b, "192.0.2.1", "pypi.org", 302000), "");
	/* the cap */
	ck_assert_str_eq(find(b, "192.0.2.2", "*.github.com", 3600999), "api.github.com");
	ck_assert_str_eq(find(b, "192.0.2.2", "*.github.com", 3601000), "");
	ck_assert_str_eq(find(b, "2001:db8::1", "pypi.org", 3601000), "");

	name_binds_stats(b, &st);
	ck_assert_uint_eq(st.added, 4);
	ck_assert_uint_eq(st.refreshed, 2);
	ck_assert_uint_eq(st.expired, 4);
	ck_assert_uint_eq(st.evicted, 0);
	ck_assert_uint_eq(st.bindings, 0);
	ck_assert_uint_eq(st.max, 16);
	name_binds_free(b);
}
END_TEST

START_TEST(test_full)
{
	struct name_binds *b = name_binds_new(4, 60, 3600);
	struct name_binds_stats st;
	char addr[32];
	unsigned int i;

	ck_assert_ptr_nonnull(b);
	/* four pairs, the second closest to expiring */
	add(b, "192.0.2.1", "a.test", 600, 0);
	add(b, "192.0.2.2", "b.test", 120, 0);
	add(b, "192.0.2.3", "c.test", 900, 0);
	add(b, "192.0.2.4", "d.test", 700, 0);
	add(b, "192.0.2.5", "e.test", 600, 1000);
	ck_assert_str_eq(find(b, "192.0.2.2", "b.test", 1000), "");
	ck_assert_str_eq(find(b, "192.0.2.1", "a.test", 1000), "a.test");
	ck_assert_str_eq(find(b, "192.0.2.5", "e.test", 1000), "e.test");
	name_binds_stats(b, &st);
	ck_assert_uint_eq(st.evicted, 1);
	ck_assert_uint_eq(st.bindings, 4);

	/* full again, with expired pairs: they go, nothing is evicted */
	add(b, "192.0.2.6", "f.test", 60, 2000000);
	name_binds_stats(b, &st);
	ck_assert_uint_eq(st.evicted, 1);
	ck_assert_uint_eq(st.bindings + st.expired, 5);
	ck_assert_str_eq(find(b, "192.0.2.1", "a.test", 2000000), "");
	ck_assert_str_eq(find(b, "192.0.2.3", "c.test", 2000000), "");
	ck_assert_str_eq(find(b, "192.0.2.4", "d.test", 2000000), "");
	ck_assert_str_eq(find(b, "192.0.2.5", "e.test", 2000000), "");
	ck_assert_str_eq(find(b, "192.0.2.6", "f.test", 2000000), "f.test");
	name_binds_stats(b, &st);
	ck_assert_uint_eq(st.expired, 4);
	ck_assert_uint_eq(st.bindings, 1);

	/* never more than the cap, whatever is added */
	for (i = 0; i < 100; i++) {
		snprintf(addr, sizeof(addr), "198.51.100.%u", i);
		add(b, addr, "many.test", 60 + i, 2000000);
	}
	name_binds_stats(b, &st);
	ck_assert_uint_eq(st.bindings, 4);
	ck_assert_uint_eq(st.added, 106);
	ck_assert_uint_eq(st.evicted, 1 + 97);
	ck_assert_str_eq(find(b, "198.51.100.99", "many.test", 2000000), "many.test");
	ck_assert_str_eq(find(b, "198.51.100.0", "many.test", 2000000), "");
	name_binds_free(b);
}
END_TEST

START_TEST(test_bad_arguments)
{
	struct name_binds_stats st;
	struct name_binds *b;
	struct dns_name n = name_of("a.test");
	uint8_t a[16] = { 0 };

	errno = 0;
	ck_assert_ptr_null(name_binds_new(4, 100, 99));
	ck_assert_int_eq(errno, EINVAL);
	b = name_binds_new(0, 0, 0);	/* 0: the default cap; every TTL 0 s */
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(name_binds_add(b, AF_UNIX, a, &n, 10, 0), -EAFNOSUPPORT);
	ck_assert(!name_binds_find(b, AF_UNIX, a, 0, fits, &n, NULL));
	ck_assert_int_eq(name_binds_add(b, AF_INET, a, &n, 10, 0), 0);
	ck_assert(!name_binds_find(b, AF_INET, a, 0, fits, &n, NULL));	/* lived 0 s */
	name_binds_stats(b, &st);
	ck_assert_uint_eq(st.max, NAME_BINDS_MAX_DEFAULT);
	name_binds_free(b);
	name_binds_free(NULL);
}
END_TEST

/* Shards share one table: each thread binds its own addresses and finds them all. */
#define THREADS		4
#define PER_THREAD	500

static struct name_binds *shared;

static void *worker(void *arg)
{
	unsigned int t = (unsigned int)(uintptr_t)arg, i, missing = 0;
	struct dns_name n = name_of("*.threads.test"), own;
	uint8_t a[4];

	snprintf(own.text, sizeof(own.text), "t%u.threads.test", t);
	own.len = (uint16_t)strlen(own.text);
	for (i = 0; i < PER_THREAD; i++) {
		a[0] = 10;
		a[1] = (uint8_t)t;
		a[2] = (uint8_t)(i >> 8);
		a[3] = (uint8_t)i;
		if (name_binds_add(shared, AF_INET, a, &own, 300, 0))
			missing++;
		if (!name_binds_find(shared, AF_INET, a, 0, fits, &n, NULL))
			missing++;
	}
	return (void *)(uintptr_t)missing;
}

START_TEST(test_threads)
{
	struct name_binds_stats st;
	pthread_t th[THREADS];
	void *missing;
	unsigned int t;

	shared = name_binds_new(THREADS * PER_THREAD, 60, 3600);
	ck_assert_ptr_nonnull(shared);
	for (t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t), 0);
	for (t = 0; t < THREADS; t++) {
		ck_assert_int_eq(pthread_join(th[t], &missing), 0);
		ck_assert_uint_eq((uintptr_t)missing, 0);
	}
	name_binds_stats(shared, &st);
	ck_assert_uint_eq(st.bindings, THREADS * PER_THREAD);
	ck_assert_uint_eq(st.added, THREADS * PER_THREAD);
	ck_assert_uint_eq(st.evicted, 0);
	name_binds_free(shared);
}
END_TEST

static Suite *bind_suite(void)
{
	Suite *s = suite_create("datapath_names_bind");
	TCase *tc = tcase_create("bind");

	tcase_add_test(tc, test_bind_and_expire);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_threads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(bind_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
