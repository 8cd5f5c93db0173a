// SPDX-License-Identifier: MIT
/*
 * fuzz_policy.c - libFuzzer target for the policy's rules (datapath/policy.c)
 *
 * Theory of operation
 *
 * A rule reaches the datapath from a CNI configuration or an OCI annotation,
 * written by whoever starts the container. The first byte picks the
 * direction and the action, the text up to the first NUL is the rule, and
 * what follows (up to 16 address bytes, a family bit, a protocol and a port)
 * is a conversation to match against it. policy_add() must refuse with
 * -EINVAL and a reason naming the flag, or accept a rule whose prefix fits
 * its family, whose network has no bit set past the prefix, whose port range
 * is ordered, and whose text is the input. Matching must agree with the rule
 * as parsed: a family, a prefix, a protocol and a range, nothing else; and
 * policy_finish() then adds the two defaults. A name rule (egress only)
 * holds a name that parses back to itself, matches nothing before an
 * address is bound to a name it takes, and after (the conversation's
 * address bound to the name, or to "x." and a pattern's suffix) matches
 * when its protocol and ports do, and gives the name back for the address
 * (policy_bound_name()); it turns egress to deny by default. Bytes after
 * the conversation's 20 are a name, as a DNS query, a TLS server_name or an
 * HTTP Host brings it: the query's verdict (policy_dns_query(),
 * policy_dns_rule(), policy_name_allowed()) and a connection's
 * (policy_name_refuses()) must follow the rule's name or pattern, action,
 * protocol and ports as a reading of the rule's text alone has them. With
 * bit 2 of the first byte, the text is instead --name-ttl's value (bit 3:
 * --name-bindings'), refused with -EINVAL and the option's name or kept in
 * its range.
 *
 * Seeds: tests/fuzz/corpus/policy/.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_policy: %s\n", what);
	abort();
}

static bool fz_masked(const struct policy_rule *r)
{
	unsigned int bytes = r->family == AF_INET ? 4 : 16, i, bit;

	for (i = r->prefix_len; i < bytes * 8; i++) {
		bit = r->addr.bytes[i / 8] >> (7 - i % 8) & 1;
		if (bit)
			return false;
	}
	return true;
}

/* Does pattern @p ("name" or "*.suffix") take @n? Read from the rule's text alone. */
static bool fz_takes(const struct dns_name *p, const struct dns_name *n)
{
	size_t ls, ln = strlen(n->text);

	if (p->text[0] != '*')
		return !strcmp(p->text, n->text);
	ls = strlen(p->text + 1);	/* ".suffix" */
	return ln > ls && !strcmp(n->text + ln - ls, p->text + 1);
}

/*
 * A name from the input (as a query, a server_name or a Host would bring
 * it) judged by the name decisions of a policy whose one name rule is @r:
 * each must agree with the rule as fz_takes() reads it.
 */
static void fz_names(struct policy *pol, const struct policy_rule *r, const char *bytes, size_t len,
		     const struct net_addr *resolver, uint8_t proto, uint16_t port)
{
	const struct policy_rule *by;
	struct dns_name n;
	bool takes, fits, refused;
	char *text = strndup(bytes, len);

	if (!text)
		fz_fail("strndup");
	if (dns_name_from_text(text, false, &n, NULL)) {
		free(text);
		return;
	}
	free(text);
	takes = fz_takes(&r->name, &n);
	fits = !(r->proto && r->proto != proto) && !(r->has_ports && (port < r->port_lo || port > r->port_hi));
	if (policy_dns_rule(pol, &n) != (takes ? r : NULL))
		fz_fail("the rule that decides a query is not the one that takes its name");
	if ((policy_name_allowed(pol, &n) == r) != (takes && r->action == POLICY_ALLOW) ||
	    (policy_name_allowed(pol, &n) && policy_name_allowed(pol, &n) != r))
		fz_fail("a name allowed other than by the allow rule that takes it");
	refused = policy_name_refuses(pol, &n, proto, port, &by);
	if (refused != !(takes && fits && r->action == POLICY_ALLOW) || by != (takes && fits ? r : NULL))
		fz_fail("a connection's name judged other than by the rule's name, protocol and ports");
	if ((policy_dns_query(pol, resolver, IPPROTO_UDP, &n) == POLICY_DNS_REFUSE_NAME) !=
	    !(takes && r->action == POLICY_ALLOW))
		fz_fail("a query refused for its name, or asked, against the rule");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct policy pol;
	const struct policy_rule *r, *m;
	enum policy_dir dir;
	struct net_addr a;
	const uint8_t *nul, *q;
	char err[512], *text;
	size_t rest;
	uint8_t proto;
	uint16_t port;
	int ret;

	if (size < 1)
		return 0;
	memset(&pol, 0, sizeof(pol));
	dir = data[0] & 1 ? POLICY_INGRESS : POLICY_EGRESS;
	nul = memchr(data + 1, 0, size - 1);
	text = strndup((const char *)data + 1, nul ? (size_t)(nul - data - 1) : size - 1);
	if (!text)
		fz_fail("strndup");
	err[0] = 0;
	if (data[0] & 4) {	/* the text as --name-ttl's or --name-bindings' value */
		const char *opt = data[0] & 8 ? "name-bindings" : "name-ttl";

		ret = policy_names_option(&pol, opt, text, err, sizeof(err));
		if (ret && (ret != -EINVAL || strncmp(err, "--", 2) || !strstr(err, opt)))
			fz_fail("an option refused without -EINVAL and a reason naming it");
		if (!ret && (data[0] & 8 ? pol.binds_max < 16 || pol.binds_max > 1u << 20 :
			     !pol.ttl_min_s || pol.ttl_min_s > pol.ttl_max_s || pol.ttl_max_s > 604800))
			fz_fail("an option accepted out of its range");
		free(text);
		return 0;
	}
	ret = policy_add(&pol, dir, data[0] & 2 ? POLICY_DENY : POLICY_ALLOW, text, err, sizeof(err));
	if (ret) {
		const char *flag = dir == POLICY_INGRESS ? "--ingress-" : "--egress-";

		if (ret != -EINVAL || strncmp(err, flag, strlen(flag)))
			fz_fail("refusal without -EINVAL and a reason naming the flag");
		free(text);
		return 0;
	}
	if (pol.n[dir] != 1)
		fz_fail("accepted, but not one rule");
	r = &pol.rules[dir][0];
	if (strcmp(r->text, text))
		fz_fail("the rule's text is not the input");
	if (r->family && r->family != AF_INET && r->family != AF_INET6)
		fz_fail("a family that is neither");
	if (r->family && (r->prefix_len > (r->family == AF_INET ? 32 : 128) || !fz_masked(r)))
		fz_fail("a prefix past the family, or bits set past it");
	if (!r->family && r->prefix_len)
		fz_fail("\"any\" with a prefix");
	if (r->port_lo > r->port_hi || (r->has_ports && (!r->port_lo || r->proto == IPPROTO_ICMP)))
		fz_fail("a port range out of order, from 0, or on icmp");

	/* a conversation: 16 address bytes, a family bit, a protocol, a port */
	q = nul ? nul + 1 : data + size;
	rest = (size_t)(data + size - q);
	memset(&a, 0, sizeof(a));
	memcpy(a.a.bytes, q, rest < 16 ? rest : 16);
	a.family = rest > 16 && q[16] & 1 ? AF_INET6 : AF_INET;
	proto = rest > 17 ? q[17] : IPPROTO_TCP;
	port = rest > 19 ? (uint16_t)(q[18] << 8 | q[19]) : 80;
	m = policy_match(&pol, dir, &a, proto, port);
	if (m && m != r)
		fz_fail("matched something that is not the rule");
	if (m && ((r->family && (r->family != a.family ||
				 !net_prefix_match(r->family, &r->addr, &a.a, r->prefix_len))) ||
		  (r->has_ports && (port < r->port_lo || port > r->port_hi))))
		fz_fail("matched outside the rule's network or ports");
	if (!m && !r->family && !r->proto && !r->has_ports && !r->is_name)
		fz_fail("\"any\" did not match");
	if (r->is_name && (m || dir != POLICY_EGRESS))
		fz_fail("a name rule matched with nothing bound, or on ingress");
	if (r->hits + pol.allowed[dir] != 1)
		fz_fail("the decision was not counted once");
	if (policy_finish(&pol, err, sizeof(err)) || pol.n[POLICY_EGRESS] != (dir == POLICY_EGRESS) + 2u)
		fz_fail("the defaults were not added");
	if (r->is_name) {
		struct dns_name bound, again;
		bool fits = !r->proto || r->proto == proto ||
			    (r->proto == IPPROTO_ICMP && proto == IPPROTO_ICMPV6);

		if (!pol.default_deny[POLICY_EGRESS] || !policy_has_names(&pol))
			fz_fail("a name rule without deny by default and bindings");
		if (dns_name_from_text(r->name.text, true, &again, NULL) || strcmp(again.text, r->name.text))
			fz_fail("a name rule's name does not parse back to itself");
		snprintf(bound.text, sizeof(bound.text), "%s%s", r->name.text[0] == '*' ? "x" : "",
			 r->name.text + (r->name.text[0] == '*'));
		bound.len = (uint16_t)strlen(bound.text);
		if (policy_name_bind(&pol, a.family, a.a.bytes, &bound, 60))
			fz_fail("a binding refused");
		if (r->has_ports && (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6 || port < r->port_lo ||
				     port > r->port_hi))
			fits = false;
		if ((policy_match(&pol, dir, &a, proto, port) == r) != fits)
			fz_fail("a name rule's match disagrees with its protocol and ports, its address bound");
		if (!policy_bound_name(&pol, r, &a, &again) || strcmp(again.text, bound.text))
			fz_fail("the bound address does not give back the name it was bound to");
		if (rest > 20)
			fz_names(&pol, r, (const char *)q + 20, rest - 20, &a, proto, port);
	}
	policy_release(&pol);
	free(text);
	return 0;
}
