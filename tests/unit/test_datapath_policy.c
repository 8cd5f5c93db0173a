// SPDX-License-Identifier: MIT
/*
 * test_datapath_policy.c - the policy's rules (policy.c): every form of a
 * rule parses to what docs/face.md says, every malformed one is refused with
 * the flag, the rule and the reason; the first match decides, the metadata
 * defaults come after the user's rules, no match allows, and every decision
 * is counted on its rule. The stats output is the same in text and JSON.
 * Name rules: their forms and refusals, egress denied by default once one is
 * given, a name rule matching only addresses bound to a name it names, and
 * the verdicts on DNS queries.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/out.h"
#include "datapath/names/bind.h"
#include "datapath/names/dns.h"
#include "datapath/policy.h"

static struct policy pol;
static char err[256];

static void setup(void)
{
	memset(&pol, 0, sizeof(pol));
	err[0] = 0;
}

static void teardown(void)
{
	policy_release(&pol);
}

static struct net_addr addr(const char *s)
{
	struct net_addr a;

	ck_assert_int_eq(net_addr_parse(s, &a), 0);
	return a;
}

/* The action of the rule that decides, "allow" when none does. */
static const char *decide(enum policy_dir dir, const char *remote, uint8_t proto, uint16_t port)
{
	struct net_addr a = addr(remote);
	const struct policy_rule *r = policy_match(&pol, dir, &a, proto, port);

	return !r ? "allow" : r->action == POLICY_DENY ? "deny" : "allow-rule";
}

START_TEST(test_forms)
{
	const struct policy_rule *r;

	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "169.254.0.0/16", err, sizeof(err)), 0);
	r = &pol.rules[POLICY_EGRESS][0];
	ck_assert_int_eq(r->family, AF_INET);
	ck_assert_int_eq(r->prefix_len, 16);
	ck_assert_int_eq(r->proto, 0);
	ck_assert(!r->has_ports);
	ck_assert_str_eq(r->text, "169.254.0.0/16");

	/* the network is masked: 10.1.2.3/8 is 10.0.0.0/8 */
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "tcp:10.1.2.3/8:80-443", err, sizeof(err)), 0);
	r = &pol.rules[POLICY_EGRESS][1];
	ck_assert_int_eq(r->proto, IPPROTO_TCP);
	ck_assert_int_eq(r->addr.bytes[0], 10);
	ck_assert_int_eq(r->addr.bytes[1], 0);
	ck_assert_int_eq(r->port_lo, 80);
	ck_assert_int_eq(r->port_hi, 443);

	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "udp:[fd00::/8]:53", err, sizeof(err)), 0);
	r = &pol.rules[POLICY_EGRESS][2];
	ck_assert_int_eq(r->family, AF_INET6);
	ck_assert_int_eq(r->prefix_len, 8);
	ck_assert_int_eq(r->port_lo, 53);
	ck_assert_int_eq(r->port_hi, 53);

	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "fd00:ec2::254", err, sizeof(err)), 0);
	ck_assert_int_eq(pol.rules[POLICY_EGRESS][3].prefix_len, 128);
	ck_assert_int_eq(policy_add(&pol, POLICY_INGRESS, POLICY_DENY, "tcp:any:22", err, sizeof(err)), 0);
	ck_assert_int_eq(pol.rules[POLICY_INGRESS][0].family, 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_INGRESS, POLICY_DENY, "icmp:any", err, sizeof(err)), 0);
	ck_assert_int_eq(pol.rules[POLICY_INGRESS][1].proto, IPPROTO_ICMP);
	ck_assert_int_eq(pol.n[POLICY_EGRESS], 4);
	ck_assert_int_eq(pol.n[POLICY_INGRESS], 2);
}
END_TEST

START_TEST(test_malformed)
{
	static const struct { const char *rule, *words; } bad[] = {
		{ "", "no network" },
		{ "tcp:", "no network" },
		{ "frob", "'frob' is not an IPv4 or IPv6 address" },
		{ "sctp:10.0.0.0/8", "'sctp' is not an IPv4" },
		{ "10.0.0.0/33", "prefix length '33' is not in 0..32" },
		{ "fd00::/129", "prefix length '129' is not in 0..128" },
		{ "10.0.0.0/-1", "prefix length '-1'" },
		{ "10.0.0.0/", "prefix length ''" },
		{ "tcp:10.0.0.1:0", "ports '0'" },
		{ "tcp:10.0.0.1:65536", "ports '65536'" },
		{ "tcp:10.0.0.1:9-3", "the range ends before it starts" },
		{ "tcp:10.0.0.1:", "ports ''" },
		{ "tcp:10.0.0.1:80-", "ports '80-'" },
		{ "tcp:10.0.0.1:+80", "ports '+80'" },
		{ "icmp:any:22", "icmp has no ports" },
		{ "[10.0.0.1]:80", "brackets are for IPv6" },
		{ "[fd00::1", "expected [IPV6[/LEN]]" },
		{ "[fd00::1]x", "expected [IPV6[/LEN]]" },
		{ "fd00::1:80-90", "is not an IPv4 or IPv6 address" },
	};
	char why[128];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(policy_add(&pol, POLICY_INGRESS, POLICY_DENY, bad[i].rule, err, sizeof(err)) < 0,
			      "'%s' accepted", bad[i].rule);
		snprintf(why, sizeof(why), "--ingress-deny '%s': ", bad[i].rule);
		ck_assert_msg(!strncmp(err, why, strlen(why)), "'%s': %s", bad[i].rule, err);
		ck_assert_msg(strstr(err, bad[i].words), "'%s': %s", bad[i].rule, err);
	}
	ck_assert_int_eq(pol.n[POLICY_INGRESS], 0);
	/* too long, and too many */
	memset(why, 'a', sizeof(why) - 1);
	why[sizeof(why) - 1] = 0;
	ck_assert_int_lt(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, why, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "longer than"));
	for (i = 0; i < POLICY_MAX_RULES - 2; i++)
		ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "10.0.0.1", err, sizeof(err)), 0);
	ck_assert_int_lt(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "10.0.0.1", err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "--egress-allow '10.0.0.1': more than 62 egress rules"));
	ck_assert_int_eq(policy_finish(&pol, err, sizeof(err)), 0);
	ck_assert_int_eq(pol.n[POLICY_EGRESS], POLICY_MAX_RULES);
}
END_TEST

START_TEST(test_defaults)
{
	ck_assert_int_eq(policy_finish(&pol, err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finish(&pol, err, sizeof(err)), 0);	/* once only */
	ck_assert_int_eq(pol.n[POLICY_EGRESS], 2);
	ck_assert_int_eq(pol.n[POLICY_INGRESS], 0);
	ck_assert_str_eq(decide(POLICY_EGRESS, "169.254.169.254", IPPROTO_TCP, 80), "deny");
	ck_assert_str_eq(decide(POLICY_EGRESS, "169.254.169.254", IPPROTO_UDP, 53), "deny");
	ck_assert_str_eq(decide(POLICY_EGRESS, "fd00:ec2::254", IPPROTO_TCP, 80), "deny");
	ck_assert_str_eq(decide(POLICY_EGRESS, "169.254.169.253", IPPROTO_TCP, 80), "allow");
	ck_assert_str_eq(decide(POLICY_EGRESS, "10.0.0.1", IPPROTO_TCP, 80), "allow");
	/* ingress from the metadata address is no concern of the default */
	ck_assert_str_eq(decide(POLICY_INGRESS, "169.254.169.254", IPPROTO_TCP, 80), "allow");
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][0].hits, 2);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][1].hits, 1);
	ck_assert_uint_eq(pol.allowed[POLICY_EGRESS], 2);
	ck_assert_uint_eq(pol.allowed[POLICY_INGRESS], 1);
	ck_assert_uint_eq(policy_refusals(&pol, POLICY_EGRESS), 3);
	ck_assert(pol.rules[POLICY_EGRESS][0].builtin);
	/* no policy at all: everything goes */
	ck_assert(!policy_refuses(NULL, POLICY_EGRESS, &(struct net_addr){ .family = AF_INET }, IPPROTO_TCP, 1));
}
END_TEST

START_TEST(test_first_match)
{
	/* a user's allow goes before the metadata default */
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "tcp:169.254.169.254:80", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "10.1.0.0/16", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "10.0.0.0/8", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "udp:any:53", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, ":::1000-2000", err, sizeof(err)) < 0, 1);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "[::/0]:1000-2000", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "icmp:192.0.2.0/24", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finish(&pol, err, sizeof(err)), 0);

	ck_assert_str_eq(decide(POLICY_EGRESS, "169.254.169.254", IPPROTO_TCP, 80), "allow-rule");
	ck_assert_str_eq(decide(POLICY_EGRESS, "169.254.169.254", IPPROTO_TCP, 81), "deny");	/* the default */
	ck_assert_str_eq(decide(POLICY_EGRESS, "10.1.2.3", IPPROTO_UDP, 53), "allow-rule");
	ck_assert_str_eq(decide(POLICY_EGRESS, "10.2.0.1", IPPROTO_TCP, 443), "deny");
	ck_assert_str_eq(decide(POLICY_EGRESS, "11.0.0.1", IPPROTO_TCP, 443), "allow");
	ck_assert_str_eq(decide(POLICY_EGRESS, "11.0.0.1", IPPROTO_UDP, 53), "deny");
	ck_assert_str_eq(decide(POLICY_EGRESS, "fd00::1", IPPROTO_UDP, 53), "deny");
	ck_assert_str_eq(decide(POLICY_EGRESS, "fd00::1", IPPROTO_TCP, 1500), "deny");
	ck_assert_str_eq(decide(POLICY_EGRESS, "fd00::1", IPPROTO_TCP, 2001), "allow");
	/* a rule with ports never matches ICMP; icmp: matches ICMPv6 too */
	ck_assert_str_eq(decide(POLICY_EGRESS, "fd00::1", IPPROTO_ICMPV6, 0), "allow");
	ck_assert_str_eq(decide(POLICY_EGRESS, "192.0.2.7", IPPROTO_ICMP, 0), "deny");
	ck_assert_str_eq(decide(POLICY_EGRESS, "192.0.2.7", IPPROTO_TCP, 80), "allow");
	/* an IPv4 rule never matches IPv6, nor the other way round */
	ck_assert_str_eq(decide(POLICY_EGRESS, "::ffff:10.2.0.1", IPPROTO_TCP, 80), "allow");

	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][0].hits, 1);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][1].hits, 1);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][2].hits, 1);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][3].hits, 2);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][4].hits, 1);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][5].hits, 1);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][6].hits, 1);	/* 169.254.169.254 default */
	ck_assert_uint_eq(policy_refusals(&pol, POLICY_EGRESS), 6);
	ck_assert_uint_eq(pol.allowed[POLICY_EGRESS], 5);
}
END_TEST

START_TEST(test_name_forms)
{
	static const struct { const char *rule, *words; } bad[] = {
		{ "frob", "'frob' is not an IPv4 or IPv6 address, a DNS name" },	/* one word: no dot */
		{ "10.0.0.300", "'10.0.0.300' is not an IPv4 or IPv6 address, a DNS name" },
		{ "tcp:pypi.org..:443", "'pypi.org..' is not an IPv4 or IPv6 address, a DNS name" },
		{ "a..pypi.org", "not a DNS name: empty label" },
		{ "org.", "'org.' is not an IPv4 or IPv6 address, a DNS name" },
		{ "bad_na!me.org", "a character other than" },
		{ "a.*.org", "'*' other than as the whole first label" },
		{ "icmp:pypi.org:1", "icmp has no ports" },
		{ "pypi.org/8", "'pypi.org' is not an IPv4 or IPv6 address" },
	};
	const struct policy_rule *r;
	char want[128];
	unsigned int i;

	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "tcp:PyPI.org:443", err, sizeof(err)), 0);
	r = &pol.rules[POLICY_EGRESS][0];
	ck_assert(r->is_name);
	ck_assert_str_eq(r->name.text, "pypi.org");
	ck_assert_int_eq(r->proto, IPPROTO_TCP);
	ck_assert_int_eq(r->port_lo, 443);
	ck_assert_int_eq(r->port_hi, 443);
	ck_assert_int_eq(r->family, 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "*.github.com", err, sizeof(err)), 0);
	r = &pol.rules[POLICY_EGRESS][1];
	ck_assert(r->is_name);
	ck_assert_str_eq(r->name.text, "*.github.com");
	ck_assert(!r->has_ports);
	ck_assert_int_eq(r->proto, 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "pypi.org.", err, sizeof(err)), 0);
	ck_assert_str_eq(pol.rules[POLICY_EGRESS][2].name.text, "pypi.org");
	pol.n[POLICY_EGRESS]--;
	/* an address stays an address */
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "10.0.0.3", err, sizeof(err)), 0);
	ck_assert(!pol.rules[POLICY_EGRESS][2].is_name);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, bad[i].rule, err, sizeof(err)) == -EINVAL,
			      "'%s' accepted", bad[i].rule);
		snprintf(want, sizeof(want), "--egress-allow '%s': ", bad[i].rule);
		ck_assert_msg(!strncmp(err, want, strlen(want)), "'%s': %s", bad[i].rule, err);
		ck_assert_msg(strstr(err, bad[i].words), "'%s': %s", bad[i].rule, err);
	}
	/* ingress has no names */
	ck_assert_int_eq(policy_add(&pol, POLICY_INGRESS, POLICY_ALLOW, "pypi.org", err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--ingress-allow 'pypi.org': 'pypi.org' is not an IPv4 or IPv6 address "
			      "(or \"any\"; names are egress only)");
	ck_assert_int_eq(pol.n[POLICY_EGRESS], 3);
	ck_assert_int_eq(pol.n[POLICY_INGRESS], 0);
}
END_TEST

static void bind_addr(const char *a, const char *name, uint32_t ttl_s)
{
	struct net_addr na = addr(a);
	struct dns_name n;

	ck_assert_int_eq(dns_name_from_text(name, false, &n, NULL), 0);
	ck_assert_int_eq(policy_name_bind(&pol, na.family, na.a.bytes, &n, ttl_s), 0);
}

START_TEST(test_name_rules)
{
	/* no name rule: no bindings, allow by default */
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "10.9.0.0/16", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finish(&pol, err, sizeof(err)), 0);
	ck_assert(!policy_has_names(&pol));
	ck_assert(!policy_refuses(&pol, POLICY_EGRESS, &(struct net_addr){ .family = AF_INET }, IPPROTO_TCP, 1));
	policy_release(&pol);

	memset(&pol, 0, sizeof(pol));
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "tcp:pypi.org:443", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "*.evil.github.com", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "*.github.com", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "udp:10.1.0.0/16:53", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finish(&pol, err, sizeof(err)), 0);
	ck_assert(policy_has_names(&pol));
	ck_assert(pol.default_deny[POLICY_EGRESS]);
	ck_assert(!pol.default_deny[POLICY_INGRESS]);

	/* nothing bound yet: refused by default; the address rule still allows */
	ck_assert_str_eq(decide(POLICY_EGRESS, "192.0.2.10", IPPROTO_TCP, 443), "allow");	/* no rule */
	ck_assert(policy_refuses(&pol, POLICY_EGRESS, &(struct net_addr){ .family = AF_INET }, IPPROTO_TCP, 443));
	ck_assert_uint_eq(pol.refused[POLICY_EGRESS], 2);
	ck_assert_uint_eq(pol.allowed[POLICY_EGRESS], 0);
	ck_assert_str_eq(decide(POLICY_EGRESS, "10.1.2.3", IPPROTO_UDP, 53), "allow-rule");
	/* ingress keeps its allow by default */
	ck_assert_str_eq(decide(POLICY_INGRESS, "192.0.2.10", IPPROTO_TCP, 80), "allow");
	ck_assert_uint_eq(pol.allowed[POLICY_INGRESS], 1);

	bind_addr("192.0.2.10", "pypi.org", 300);
	bind_addr("2001:db8::10", "pypi.org", 300);
	bind_addr("192.0.2.20", "api.github.com", 300);
	bind_addr("192.0.2.30", "x.evil.github.com", 300);
	bind_addr("192.0.2.40", "github.com", 300);	/* the pattern wants a label in front */
	/* the rule's protocol and port still count */
	ck_assert_str_eq(decide(POLICY_EGRESS, "192.0.2.10", IPPROTO_TCP, 443), "allow-rule");
	ck_assert_str_eq(decide(POLICY_EGRESS, "2001:db8::10", IPPROTO_TCP, 443), "allow-rule");
	ck_assert(policy_refuses(&pol, POLICY_EGRESS, &(struct net_addr){ .family = AF_INET,
				 .a.bytes = { 192, 0, 2, 10 } }, IPPROTO_TCP, 80));
	ck_assert(policy_refuses(&pol, POLICY_EGRESS, &(struct net_addr){ .family = AF_INET,
				 .a.bytes = { 192, 0, 2, 10 } }, IPPROTO_UDP, 443));
	ck_assert_str_eq(decide(POLICY_EGRESS, "192.0.2.20", IPPROTO_UDP, 9), "allow-rule");
	ck_assert_str_eq(decide(POLICY_EGRESS, "192.0.2.30", IPPROTO_TCP, 443), "deny");	/* first match */
	ck_assert(policy_refuses(&pol, POLICY_EGRESS, &(struct net_addr){ .family = AF_INET,
				 .a.bytes = { 192, 0, 2, 40 } }, IPPROTO_TCP, 443));
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][0].hits, 2);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][1].hits, 1);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][2].hits, 1);
	ck_assert_uint_eq(policy_refusals(&pol, POLICY_EGRESS), 1 + 2 + 2 + 1);

	/* a shard's copy shares the bindings and counts on its own */
	{
		struct policy copy = pol;

		policy_clear_hits(&copy);
		ck_assert_uint_eq(copy.refused[POLICY_EGRESS], 0);
		bind_addr("192.0.2.50", "www.github.com", 300);
		ck_assert_ptr_nonnull(policy_match(&copy, POLICY_EGRESS, &(struct net_addr){ .family = AF_INET,
						   .a.bytes = { 192, 0, 2, 50 } }, IPPROTO_TCP, 22));
		ck_assert_uint_eq(copy.rules[POLICY_EGRESS][2].hits, 1);
		policy_add_hits(&pol, &copy);
		ck_assert_uint_eq(pol.rules[POLICY_EGRESS][2].hits, 2);
	}
}
END_TEST

static enum policy_dns_verdict query(const char *resolver, const char *name)
{
	struct net_addr r = addr(resolver);
	struct dns_name n;

	ck_assert_int_eq(dns_name_from_text(name, false, &n, NULL), 0);
	return policy_dns_query(&pol, &r, IPPROTO_UDP, &n);
}

START_TEST(test_name_queries)
{
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "udp:10.66.0.0/16:53", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "secret.pypi.org", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "tcp:*.pypi.org:443", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "tcp:pypi.org:443", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finish(&pol, err, sizeof(err)), 0);

	/* the protocol and port of the rule do not matter to the query */
	ck_assert_int_eq(query("10.0.0.53", "pypi.org"), POLICY_DNS_ASK);
	ck_assert_int_eq(query("10.0.0.53", "files.pypi.org"), POLICY_DNS_ASK);
	ck_assert_int_eq(query("fd00::53", "a.b.pypi.org"), POLICY_DNS_ASK);
	/* the default refusal of egress does not take the resolver: the name decided */
	ck_assert_uint_eq(pol.refused[POLICY_EGRESS], 0);
	ck_assert_int_eq(query("10.0.0.53", "secret.pypi.org"), POLICY_DNS_REFUSE_NAME);
	ck_assert_int_eq(query("10.0.0.53", "example.com"), POLICY_DNS_REFUSE_NAME);
	ck_assert_int_eq(query("10.0.0.53", "pypi.org.attacker.example"), POLICY_DNS_REFUSE_NAME);
	ck_assert_int_eq(query("10.0.0.53", "xpypi.org"), POLICY_DNS_REFUSE_NAME);
	/* an address rule denies the resolver itself */
	ck_assert_int_eq(query("10.66.0.1", "pypi.org"), POLICY_DNS_REFUSE_RESOLVER);
	ck_assert_int_eq(query("10.66.0.1", "example.com"), POLICY_DNS_REFUSE_NAME);

	/* a connection to a resolver (DNS over TCP): the address rules alone, no default refusal */
	ck_assert(policy_resolver_refuses(&pol, &(struct net_addr){ .family = AF_INET, .a.bytes = { 10, 66, 0, 1 } },
					  IPPROTO_UDP));
	ck_assert(!policy_resolver_refuses(&pol, &(struct net_addr){ .family = AF_INET, .a.bytes = { 10, 66, 0, 1 } },
					   IPPROTO_TCP));	/* the deny is udp: only */
	ck_assert(!policy_resolver_refuses(&pol, &(struct net_addr){ .family = AF_INET, .a.bytes = { 10, 0, 0, 53 } },
					   IPPROTO_TCP));
	ck_assert_uint_eq(pol.refused[POLICY_EGRESS], 0);

	ck_assert_uint_eq(pol.names_refused, 4);	/* the secret's refusal is its rule's */
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][0].hits, 2);	/* the resolver's, UDP and here */
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][1].hits, 1);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][2].hits, 2);
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][3].hits, 1);
	ck_assert_ptr_eq(policy_name_allowed(&pol, &(struct dns_name){ .text = "pypi.org", .len = 8 }),
			 &pol.rules[POLICY_EGRESS][3]);
	ck_assert_ptr_null(policy_name_allowed(&pol, &(struct dns_name){ .text = "secret.pypi.org", .len = 15 }));
}
END_TEST

START_TEST(test_names_options)
{
	static const char *const bad[][2] = {
		{ "name-ttl", "9-3" }, { "name-ttl", "0-5" }, { "name-ttl", "5" }, { "name-ttl", "1-604801" },
		{ "name-ttl", "-5" }, { "name-ttl", "a-b" }, { "name-bindings", "15" }, { "name-bindings", "1048577" },
		{ "name-bindings", "x" },
	};
	struct name_binds_stats st;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(policy_names_option(&pol, bad[i][0], bad[i][1], err, sizeof(err)) == -EINVAL, "%s %s",
			      bad[i][0], bad[i][1]);
		ck_assert_msg(!strncmp(err, "--", 2) && strstr(err, bad[i][0]) && strstr(err, bad[i][1]), "%s", err);
	}
	ck_assert_int_eq(policy_names_option(&pol, "name-ttl", "5-5", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_names_option(&pol, "name-bindings", "16", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "pypi.org", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finish(&pol, err, sizeof(err)), 0);
	ck_assert_uint_eq(pol.ttl_min_s, 5);
	ck_assert_uint_eq(pol.ttl_max_s, 5);
	name_binds_stats(pol.binds, &st);
	ck_assert_uint_eq(st.max, 16);
}
END_TEST

/* policy_name_refuses() for a name given as text */
static bool seen_refused(const char *name, uint16_t port)
{
	struct dns_name n;

	ck_assert_int_eq(dns_name_from_text(name, false, &n, NULL), 0);
	return policy_name_refuses(&pol, &n, IPPROTO_TCP, port, NULL);
}

/* The name a connection's first bytes gave, judged as its destination. */
START_TEST(test_name_seen)
{
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_DENY, "tcp:bad.github.com:443", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "tcp:*.github.com:443", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "pypi.org", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_add(&pol, POLICY_EGRESS, POLICY_ALLOW, "10.0.0.0/8", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finish(&pol, err, sizeof(err)), 0);
	ck_assert(!seen_refused("api.github.com", 443));
	ck_assert(seen_refused("api.github.com", 80));		/* the rule's port */
	ck_assert(seen_refused("bad.github.com", 443));		/* a deny first */
	ck_assert(seen_refused("github.com", 443));		/* the pattern wants a label in front */
	ck_assert(!seen_refused("pypi.org", 8080));		/* any port */
	ck_assert(seen_refused("evil.example", 443));		/* no rule names it: address rules do not count */
	/* not counted: the connection was, when it opened */
	ck_assert_uint_eq(pol.rules[POLICY_EGRESS][0].hits + pol.rules[POLICY_EGRESS][1].hits, 0);
	ck_assert_uint_eq(pol.refused[POLICY_EGRESS], 0);
}
END_TEST

/* Text and JSON from the same calls: the JSON parses and holds what the text says. */
START_TEST(test_print)
{
	char *text = NULL, *json = NULL;
	size_t tlen, jlen;
	struct out o;
	FILE *f;

	ck_assert_int_eq(policy_add(&pol, POLICY_INGRESS, POLICY_DENY, "tcp:any:22", err, sizeof(err)), 0);
	ck_assert_int_eq(policy_finish(&pol, err, sizeof(err)), 0);
	ck_assert_str_eq(decide(POLICY_INGRESS, "10.0.0.9", IPPROTO_TCP, 22), "deny");
	f = open_memstream(&text, &tlen);
	out_init(&o, f, false);
	policy_print(&pol, &o);
	out_finish(&o);
	fclose(f);
	f = open_memstream(&json, &jlen);
	out_init(&o, f, true);
	policy_print(&pol, &o);
	out_finish(&o);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "tcp:any:22"));
	ck_assert_ptr_nonnull(strstr(text, "169.254.169.254"));
	ck_assert_ptr_nonnull(strstr(json, "\"rule\":\"tcp:any:22\""));
	ck_assert_ptr_nonnull(strstr(json, "\"hits\":1"));
	ck_assert_ptr_nonnull(strstr(json, "\"default\":true"));
	ck_assert_ptr_nonnull(strstr(json, "\"refused\":1"));
	free(text);
	free(json);
}
END_TEST

static Suite *policy_suite(void)
{
	Suite *s = suite_create("datapath_policy");
	TCase *tc = tcase_create("policy");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_forms);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_first_match);
	tcase_add_test(tc, test_print);
	tcase_add_test(tc, test_name_forms);
	tcase_add_test(tc, test_name_rules);
	tcase_add_test(tc, test_name_queries);
	tcase_add_test(tc, test_name_seen);
	tcase_add_test(tc, test_names_options);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(policy_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
