// SPDX-License-Identifier: MIT
/*
 * policy.c - what the container's programs may reach, and who may reach them
 *
 * Theory of operation: two ordered rule lists, egress and ingress, from
 * --egress-allow, --egress-deny, --ingress-allow and --ingress-deny in the
 * order given on the command line (netsetup turns the CNI configuration's
 * and the OCI annotations' rules into those flags, docs/face.md). After
 * them, policy_finish() appends the defaults: egress to the cloud metadata
 * services (169.254.169.254 and fd00:ec2::254) is denied, a rule of the
 * user's given before may still allow it. The first rule that matches
 * decides; no match allows, as a plain container's network does.
 *
 * A rule is  [PROTO:]NETWORK[:PORTS]  with PROTO tcp, udp or icmp (ICMPv6
 * included), NETWORK an address, a CIDR, or "any" (both families, every
 * address), IPv6 in brackets when PORTS follow, PORTS one port or LO-HI:
 *     169.254.169.254   tcp:10.0.0.0/8:80-443   udp:[fd00::/8]:53   icmp:any
 * The NETWORK is the remote end: the destination of egress, the source of
 * ingress. The PORTS are the destination's: the remote port of egress, the
 * container's port of ingress. A rule with PORTS and no PROTO is tcp and
 * udp; it never matches ICMP.
 *
 * The face asks once per new conversation (a TCP SYN, the first datagram of
 * a UDP flow, an echo request), so allowed traffic pays nothing more; replies
 * within an allowed conversation are never asked about. A refusal is
 * answered by the face with ICMP administratively prohibited (face.c).
 * Every decision is counted on the rule that made it (@hits), and what no
 * rule matched in @allowed (or @refused, below).
 *
 * Names. An egress rule's NETWORK may be a DNS name instead, or a pattern
 * "*.SUFFIX" (one label or more in front of SUFFIX, not SUFFIX itself):
 *     tcp:pypi.org:443   *.github.com   udp:time.example.org:123
 * A text that parses as an address is an address; one whose last label is
 * all digits is a mistyped address, never a name (no top-level domain is
 * numeric). A name rule matches a conversation to an address that a DNS
 * answer gave for a name it names (names/bind.c keeps those bindings; the
 * face's DNS interception, face_dns.c, makes them). The moment one name rule
 * is given, egress that no rule matches is refused: a list of names is a
 * list of what may be reached, and an address not on it must not be. A user
 * who wants names and the old allow-by-default ends the rules with
 * "--egress-allow any". The name rules also decide the DNS queries: a
 * query is sent on only for a name an allow rule names (its protocol and
 * ports aside: they speak of the connections); every other query is
 * answered REFUSED by the datapath, so a name no rule allows never reaches
 * any name server, and DNS carries nothing out but the allowed names.
 * Ingress has no names: a connection's source has no name the datapath has
 * seen.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>

#include "datapath/policy.h"
#include "datapath/names/bind.h"
#include "common/out.h"

const char *const policy_dir_names[POLICY_DIR_MAX] = {
	[POLICY_EGRESS] = "egress",
	[POLICY_INGRESS] = "ingress",
};

static const char *const policy_flag[POLICY_DIR_MAX][2] = {
	[POLICY_EGRESS] = { "--egress-allow", "--egress-deny" },
	[POLICY_INGRESS] = { "--ingress-allow", "--ingress-deny" },
};

/* 0 when @s is a whole number in 0..@max; *@v receives it. */
static int policy_number(const char *s, size_t len, unsigned long max, unsigned long *v)
{
	char buf[16], *end;

	if (!len || len >= sizeof(buf) || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = 0;
	*v = strtoul(buf, &end, 10);
	return *end || *v > max ? -EINVAL : 0;
}

/*
 * A name, or "*.SUFFIX", into @r, with or without the root's trailing dot.
 * A name has a dot: a single word ("all",
 * "frob") is a mistake, not a rule that turns egress to deny by default
 * (and a resolver asks a search domain's name for it anyway). A text whose
 * last label is all digits ("10.0.0.300") was meant as an address: no
 * top-level domain is numeric.
 */
static int policy_name(const char *s, bool names, struct policy_rule *r, char *why, size_t why_len)
{
	const char *last, *name_why = NULL;
	char bare[POLICY_TEXT_MAX];

	snprintf(bare, sizeof(bare), "%s", s);	/* "pypi.org." is "pypi.org" */
	if (bare[0] && bare[strlen(bare) - 1] == '.')
		bare[strlen(bare) - 1] = 0;
	last = strrchr(bare, '.');
	if (!names) {
		snprintf(why, why_len, "'%s' is not an IPv4 or IPv6 address (or \"any\"; names are egress only)", s);
		return -EINVAL;
	}
	if (!last || !last[1] || strspn(last + 1, "0123456789") == strlen(last + 1) || strchr(s, ':')) {
		snprintf(why, why_len, "'%s' is not an IPv4 or IPv6 address, a DNS name or \"any\"", s);
		return -EINVAL;
	}
	if (dns_name_from_text(s, true, &r->name, &name_why) < 0) {
		snprintf(why, why_len, "'%s' is not an address, and not a DNS name: %s", s, name_why);
		return -EINVAL;
	}
	r->is_name = true;
	r->family = 0;
	r->prefix_len = 0;
	return 0;
}

/* NETWORK: "any", ADDR, ADDR/LEN, or a name (egress: @names), into @r. */
static int policy_network(const char *s, bool names, struct policy_rule *r, char *why, size_t why_len)
{
	char buf[64], *slash;
	struct net_addr a;
	unsigned long len;

	if (!strcmp(s, "any")) {
		r->family = 0;
		r->prefix_len = 0;
		return 0;
	}
	if (!strchr(s, '/') && net_addr_parse(s, &a) < 0)
		return policy_name(s, names, r, why, why_len);
	if (strlen(s) >= sizeof(buf)) {
		snprintf(why, why_len, "'%s' is not an address", s);
		return -EINVAL;
	}
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	if (net_addr_parse(buf, &a) < 0) {
		snprintf(why, why_len, "'%s' is not an IPv4 or IPv6 address (or \"any\")", buf);
		return -EINVAL;
	}
	len = a.family == AF_INET ? 32 : 128;
	if (slash && policy_number(slash + 1, strlen(slash + 1), a.family == AF_INET ? 32 : 128, &len) < 0) {
		snprintf(why, why_len, "prefix length '%s' is not in 0..%d", slash + 1, a.family == AF_INET ? 32 : 128);
		return -EINVAL;
	}
	r->family = a.family;
	r->prefix_len = (uint8_t)len;
	r->addr = a.a;
	net_prefix_mask(&r->addr, r->prefix_len, a.family);
	return 0;
}

/* PORTS: "N" or "LO-HI", into @r. */
static int policy_ports(const char *s, struct policy_rule *r, char *why, size_t why_len)
{
	const char *dash = strchr(s, '-');
	unsigned long lo, hi;

	if (policy_number(s, dash ? (size_t)(dash - s) : strlen(s), 65535, &lo) < 0 ||
	    (dash && policy_number(dash + 1, strlen(dash + 1), 65535, &hi) < 0) || lo == 0) {
		snprintf(why, why_len, "ports '%s': expected PORT or LO-HI in 1..65535", s);
		return -EINVAL;
	}
	if (!dash)
		hi = lo;
	if (hi < lo) {
		snprintf(why, why_len, "ports '%s': the range ends before it starts", s);
		return -EINVAL;
	}
	r->port_lo = (uint16_t)lo;
	r->port_hi = (uint16_t)hi;
	r->has_ports = true;
	return 0;
}

static int policy_parse(const char *text, bool names, struct policy_rule *r, char *why, size_t why_len)
{
	static const struct { const char *name; uint8_t proto; } protos[] = {
		{ "tcp:", IPPROTO_TCP }, { "udp:", IPPROTO_UDP }, { "icmp:", IPPROTO_ICMP },
	};
	char net[POLICY_TEXT_MAX];
	const char *s = text, *ports = NULL, *colon;
	unsigned int i;
	int ret;

	if (strlen(text) >= POLICY_TEXT_MAX) {
		snprintf(why, why_len, "longer than %d characters", POLICY_TEXT_MAX - 1);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		if (!strncmp(s, protos[i].name, strlen(protos[i].name))) {
			r->proto = protos[i].proto;
			s += strlen(protos[i].name);
			break;
		}
	}
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || (close[1] && close[1] != ':')) {
			snprintf(why, why_len, "'%s': expected [IPV6[/LEN]] or [IPV6[/LEN]]:PORTS", s);
			return -EINVAL;
		}
		snprintf(net, sizeof(net), "%.*s", (int)(close - s - 1), s + 1);
		if (close[1])
			ports = close + 2;
		if (!strchr(net, ':')) {
			snprintf(why, why_len, "'%s': brackets are for IPv6 addresses", net);
			return -EINVAL;
		}
	} else {
		colon = strchr(s, ':');
		/* one colon: NETWORK:PORTS (IPv4 or "any"); more: a bare IPv6 network */
		if (colon && !strchr(colon + 1, ':')) {
			snprintf(net, sizeof(net), "%.*s", (int)(colon - s), s);
			ports = colon + 1;
		} else {
			snprintf(net, sizeof(net), "%s", s);
		}
	}
	if (!net[0]) {
		snprintf(why, why_len, "no network (an address, a CIDR or \"any\")");
		return -EINVAL;
	}
	ret = policy_network(net, names, r, why, why_len);
	if (ret)
		return ret;
	r->port_lo = 0;
	r->port_hi = 65535;
	if (ports) {
		if (r->proto == IPPROTO_ICMP) {
			snprintf(why, why_len, "icmp has no ports");
			return -EINVAL;
		}
		ret = policy_ports(ports, r, why, why_len);
		if (ret)
			return ret;
	}
	snprintf(r->text, sizeof(r->text), "%s", text);
	return 0;
}

/**
 * policy_add() - parse one rule and append it to a direction's list
 * @pol:	the policy
 * @dir:	egress or ingress
 * @action:	allow or deny
 * @text:	the rule ("tcp:10.0.0.0/8:443")
 * @err:	"--egress-deny 'tcp:10.0.0.0/33': prefix length '33' is not in 0..32"
 * @err_len:	size of @err
 *
 * Return: 0, -EINVAL for a malformed rule, -ENOSPC past POLICY_MAX_RULES.
 */
int policy_add(struct policy *pol, enum policy_dir dir, enum policy_action action, const char *text,
	       char *err, size_t err_len)
{
	const char *flag = policy_flag[dir][action == POLICY_DENY];
	struct policy_rule r = { .action = action };
	char why[256];

	if (pol->n[dir] >= POLICY_MAX_RULES - 2) {
		snprintf(err, err_len, "%s '%s': more than %d %s rules", flag, text, POLICY_MAX_RULES - 2,
			 policy_dir_names[dir]);
		return -ENOSPC;
	}
	if (policy_parse(text, dir == POLICY_EGRESS, &r, why, sizeof(why)) < 0) {
		snprintf(err, err_len, "%s '%s': %s", flag, text, why);
		return -EINVAL;
	}
	pol->rules[dir][pol->n[dir]++] = r;
	return 0;
}

/**
 * policy_names_option() - --name-ttl MIN-MAX or --name-bindings N
 * @pol:	the policy
 * @opt:	"name-ttl" or "name-bindings"
 * @val:	seconds "MIN-MAX" (1..604800, MIN <= MAX), or a count (16..1048576)
 * @err:	"--name-ttl '9-3': ..." on failure
 * @err_len:	size of @err
 *
 * Return: 0 or -EINVAL.
 */
int policy_names_option(struct policy *pol, const char *opt, const char *val, char *err, size_t err_len)
{
	const char *dash = strchr(val, '-');
	unsigned long lo, hi;

	if (!strcmp(opt, "name-bindings")) {
		if (policy_number(val, strlen(val), 1u << 20, &lo) < 0 || lo < 16) {
			snprintf(err, err_len, "--name-bindings '%s': expected a count in 16..1048576", val);
			return -EINVAL;
		}
		pol->binds_max = (unsigned int)lo;
		return 0;
	}
	if (!dash || policy_number(val, (size_t)(dash - val), 604800, &lo) < 0 ||
	    policy_number(dash + 1, strlen(dash + 1), 604800, &hi) < 0 || !lo || hi < lo) {
		snprintf(err, err_len, "--name-ttl '%s': expected MIN-MAX seconds, 1 <= MIN <= MAX <= 604800", val);
		return -EINVAL;
	}
	pol->ttl_min_s = (uint32_t)lo;
	pol->ttl_max_s = (uint32_t)hi;
	return 0;
}

/**
 * policy_finish() - append the defaults, after every rule given
 * @pol:	the policy
 * @err:	reason on failure
 * @err_len:	size of @err
 *
 * Return: 0 or negative errno.
 */
int policy_finish(struct policy *pol, char *err, size_t err_len)
{
	static const char *const metadata[] = { "169.254.169.254", "fd00:ec2::254" };
	struct policy_rule r;
	unsigned int i;
	char why[256];

	if (pol->finished)
		return 0;
	for (i = 0; i < sizeof(metadata) / sizeof(metadata[0]); i++) {
		memset(&r, 0, sizeof(r));
		r.action = POLICY_DENY;
		r.builtin = true;
		if (policy_parse(metadata[i], false, &r, why, sizeof(why)) < 0) {
			snprintf(err, err_len, "default rule %s: %s", metadata[i], why);
			return -EINVAL;
		}
		pol->rules[POLICY_EGRESS][pol->n[POLICY_EGRESS]++] = r;
	}
	for (i = 0; i < pol->n[POLICY_EGRESS]; i++)
		if (pol->rules[POLICY_EGRESS][i].is_name)
			pol->default_deny[POLICY_EGRESS] = true;
	if (pol->default_deny[POLICY_EGRESS] && !pol->binds) {
		if (!pol->ttl_max_s) {
			pol->ttl_min_s = NAME_BINDS_TTL_MIN_DEFAULT;
			pol->ttl_max_s = NAME_BINDS_TTL_MAX_DEFAULT;
		}
		pol->binds = name_binds_new(pol->binds_max ? pol->binds_max : NAME_BINDS_MAX_DEFAULT, pol->ttl_min_s,
					    pol->ttl_max_s);
		if (!pol->binds) {
			snprintf(err, err_len, "the name bindings: %s", strerror(errno));
			return -ENOMEM;
		}
	}
	pol->finished = true;
	return 0;
}

/**
 * policy_release() - what policy_finish() allocated, of the original (not a
 * shard's copy, which shares it)
 * @pol:	the policy
 */
void policy_release(struct policy *pol)
{
	name_binds_free(pol->binds);
	pol->binds = NULL;
}

/**
 * policy_has_names() - name rules are given: the face reads the container's DNS
 * @pol:	the policy, or NULL
 *
 * Return: true when it has the name bindings.
 */
bool policy_has_names(const struct policy *pol)
{
	return pol && pol->binds;
}

static uint64_t policy_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/**
 * policy_name_bind() - an address a DNS answer gave for an allowed name
 * @pol:	the policy (with names: policy_has_names())
 * @family:	AF_INET or AF_INET6
 * @addr:	4 or 16 bytes, network order
 * @name:	the name asked
 * @ttl_s:	the answer's TTL for it
 *
 * Bound on the policy's clock, the one policy_match() reads: the shards'
 * loops each have their own.
 *
 * Return: 0 or negative errno (name_binds_add()).
 */
int policy_name_bind(struct policy *pol, int family, const uint8_t *addr, const struct dns_name *name,
		     uint32_t ttl_s)
{
	if (!pol->binds)
		return -ENOENT;
	return name_binds_add(pol->binds, family, addr, name, ttl_s, policy_now_ms());
}

/* name_binds_match_fn: a bound name is one the rule names */
static bool policy_name_fits(void *ctx, const struct dns_name *name)
{
	return dns_name_match(ctx, name);
}

/* name_binds_match_fn: any name bound to the address */
static bool policy_any_name(void *ctx, const struct dns_name *name)
{
	(void)ctx;
	(void)name;
	return true;
}

/**
 * policy_bound_name() - the name a conversation's address was bound to
 * @pol:	the policy, or NULL
 * @by:		the rule that decided: a name rule's own name (one it takes) is
 *		sought; NULL or an address rule: any name bound to @remote
 * @remote:	the remote end
 * @out:	receives the name
 *
 * For the flow log: the name a connection was let through for.
 *
 * Return: true when one was found.
 */
bool policy_bound_name(const struct policy *pol, const struct policy_rule *by, const struct net_addr *remote,
		       struct dns_name *out)
{
	if (!pol || !pol->binds)
		return false;
	if (by && by->is_name)
		return name_binds_find(pol->binds, remote->family, remote->a.bytes, policy_now_ms(), policy_name_fits,
				       (void *)&by->name, out);
	return name_binds_find(pol->binds, remote->family, remote->a.bytes, policy_now_ms(), policy_any_name, NULL,
			       out);
}

static bool policy_rule_matches(const struct policy *pol, const struct policy_rule *r,
				const struct net_addr *remote, uint8_t proto, uint16_t port)
{
	bool icmp = proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6;

	if (r->family && (r->family != remote->family ||
			  !net_prefix_match(r->family, &r->addr, &remote->a, r->prefix_len)))
		return false;
	if (r->proto && (icmp ? r->proto != IPPROTO_ICMP : r->proto != proto))
		return false;
	if (r->has_ports && (icmp || port < r->port_lo || port > r->port_hi))
		return false;
	/* last, as the only one that takes a lock */
	if (r->is_name)
		return pol->binds && name_binds_find(pol->binds, remote->family, remote->a.bytes, policy_now_ms(),
						     policy_name_fits, (void *)&r->name, NULL);
	return true;
}

/**
 * policy_match() - the rule that decides a new conversation
 * @pol:	the policy, or NULL (no policy: nothing matches)
 * @dir:	egress or ingress
 * @remote:	the remote end (egress: the destination; ingress: the source)
 * @proto:	IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP or IPPROTO_ICMPV6
 * @port:	the destination port (0 for ICMP)
 *
 * Counts the decision: on the rule, or in @pol->allowed or @pol->refused.
 *
 * Return: the first rule that matches, or NULL (the direction's default
 * decides: policy_refuses()).
 */
const struct policy_rule *policy_match(struct policy *pol, enum policy_dir dir, const struct net_addr *remote,
				       uint8_t proto, uint16_t port)
{
	unsigned int i;

	if (!pol)
		return NULL;
	for (i = 0; i < pol->n[dir]; i++) {
		struct policy_rule *r = &pol->rules[dir][i];

		if (policy_rule_matches(pol, r, remote, proto, port)) {
			r->hits++;
			return r;
		}
	}
	if (pol->default_deny[dir])
		pol->refused[dir]++;
	else
		pol->allowed[dir]++;
	return NULL;
}

/**
 * policy_decide() - policy_match(), and the direction's default when no rule
 * matches (parameters as policy_match())
 * @by:		receives the rule that decided, or NULL (the default); may be NULL
 *
 * Return: true when the conversation must be refused.
 */
bool policy_decide(struct policy *pol, enum policy_dir dir, const struct net_addr *remote, uint8_t proto,
		   uint16_t port, const struct policy_rule **by)
{
	const struct policy_rule *r = policy_match(pol, dir, remote, proto, port);

	if (by)
		*by = r;
	return r ? r->action == POLICY_DENY : pol && pol->default_deny[dir];
}

/**
 * policy_refuses() - policy_decide(), without the rule
 * (parameters as policy_match())
 *
 * Return: true when the conversation must be refused.
 */
bool policy_refuses(struct policy *pol, enum policy_dir dir, const struct net_addr *remote, uint8_t proto,
		    uint16_t port)
{
	return policy_decide(pol, dir, remote, proto, port, NULL);
}

/**
 * policy_name_refuses() - the name a connection's first bytes gave (a TLS
 * server_name, an HTTP host), judged as if it were the connection's
 * destination
 * @pol:	the policy
 * @name:	the name
 * @proto:	IPPROTO_TCP
 * @port:	the destination port
 * @by:		receives the rule that decided, or NULL (none: refused); may be
 *		NULL
 *
 * The first egress name rule that takes @name, on @proto and @port,
 * decides; none refuses: the connection was let through for a name, and
 * this is not one the rules allow there. Not counted on the rules (the
 * connection was, when it opened).
 *
 * Return: true when the connection must be cut.
 */
bool policy_name_refuses(const struct policy *pol, const struct dns_name *name, uint8_t proto, uint16_t port,
			 const struct policy_rule **by)
{
	unsigned int i;

	if (by)
		*by = NULL;

	for (i = 0; pol && i < pol->n[POLICY_EGRESS]; i++) {
		const struct policy_rule *r = &pol->rules[POLICY_EGRESS][i];

		if (!r->is_name || !dns_name_match(&r->name, name))
			continue;
		if ((r->proto && r->proto != proto) || (r->has_ports && (port < r->port_lo || port > r->port_hi)))
			continue;
		if (by)
			*by = r;
		return r->action == POLICY_DENY;
	}
	return true;
}

/* The first egress name rule that takes @qname, whatever its action. */
static struct policy_rule *policy_name_rule(const struct policy *pol, const struct dns_name *qname)
{
	unsigned int i;

	for (i = 0; pol && i < pol->n[POLICY_EGRESS]; i++) {
		const struct policy_rule *r = &pol->rules[POLICY_EGRESS][i];

		if (r->is_name && dns_name_match(&r->name, qname))
			return (struct policy_rule *)r;
	}
	return NULL;
}

/**
 * policy_dns_rule() - the rule that decides a DNS query for @qname
 * @pol:	the policy
 * @qname:	the name asked
 *
 * Return: the first egress name rule that takes it, whatever its action, or
 * NULL (none: the query is refused by default).
 */
const struct policy_rule *policy_dns_rule(const struct policy *pol, const struct dns_name *qname)
{
	return policy_name_rule(pol, qname);
}

/* The first egress address rule that takes @resolver's port 53 (name rules left out). */
static struct policy_rule *policy_resolver_rule(struct policy *pol, const struct net_addr *resolver, uint8_t proto)
{
	unsigned int i;

	for (i = 0; i < pol->n[POLICY_EGRESS]; i++) {
		struct policy_rule *r = &pol->rules[POLICY_EGRESS][i];

		if (!r->is_name && policy_rule_matches(pol, r, resolver, proto, 53))
			return r;
	}
	return NULL;
}

/**
 * policy_name_allowed() - the allow rule that names a name, for its DNS query
 * or its answer
 * @pol:	the policy
 * @qname:	the name asked
 *
 * The first egress name rule whose name or pattern takes @qname decides,
 * whatever its protocol and ports: those speak of the connections.
 *
 * Return: that rule when it allows, or NULL.
 */
const struct policy_rule *policy_name_allowed(const struct policy *pol, const struct dns_name *qname)
{
	const struct policy_rule *r = policy_name_rule(pol, qname);

	return r && r->action == POLICY_ALLOW ? r : NULL;
}

/**
 * policy_dns_query() - what becomes of a DNS query the container sent
 * @pol:	the policy (with names: policy_has_names())
 * @resolver:	where it goes
 * @proto:	IPPROTO_UDP or IPPROTO_TCP
 * @qname:	the name asked
 *
 * The name decides first (policy_name_allowed(); counted on the rule, or
 * in @pol->names_refused); an allowed query then goes to its resolver
 * unless an address rule denies the resolver: the default refusal of
 * egress does not apply to a query the name rules allowed.
 *
 * Return: the verdict.
 */
enum policy_dns_verdict policy_dns_query(struct policy *pol, const struct net_addr *resolver, uint8_t proto,
					 const struct dns_name *qname)
{
	struct policy_rule *named = policy_name_rule(pol, qname), *r;

	if (!named || named->action == POLICY_DENY) {
		if (named)
			named->hits++;
		else
			pol->names_refused++;
		return POLICY_DNS_REFUSE_NAME;
	}
	r = policy_resolver_rule(pol, resolver, proto);
	if (r) {
		r->hits++;
		return r->action == POLICY_DENY ? POLICY_DNS_REFUSE_RESOLVER : POLICY_DNS_ASK;
	}
	named->hits++;
	return POLICY_DNS_ASK;
}

/**
 * policy_resolver_refuses() - a connection to a resolver's port 53, with name
 * rules: the queries it will carry are judged one by one (face_tcp.c), the
 * resolver itself only by the address rules
 * @pol:	the policy (with names: policy_has_names())
 * @resolver:	where it goes
 * @proto:	IPPROTO_TCP
 *
 * The default refusal of egress does not take it; an address rule that
 * denies it does (counted on that rule).
 *
 * Return: true when it must be refused.
 */
bool policy_resolver_refuses(struct policy *pol, const struct net_addr *resolver, uint8_t proto)
{
	struct policy_rule *r = policy_resolver_rule(pol, resolver, proto);

	if (!r)
		return false;
	r->hits++;
	return r->action == POLICY_DENY;
}

/**
 * policy_refusals() - conversations refused in one direction, all rules
 * @pol:	the policy, or NULL
 * @dir:	egress or ingress
 *
 * Return: the sum of the deny rules' hits and the default's refusals.
 */
uint64_t policy_refusals(const struct policy *pol, enum policy_dir dir)
{
	uint64_t n = pol ? pol->refused[dir] : 0;
	unsigned int i;

	for (i = 0; pol && i < pol->n[dir]; i++)
		if (pol->rules[dir][i].action == POLICY_DENY)
			n += pol->rules[dir][i].hits;
	return n;
}

/**
 * policy_print() - the rules in order with their hits ("policy" in stats)
 * @pol:	the policy, or NULL (prints nothing)
 * @o:		the printer
 */
void policy_print(const struct policy *pol, struct out *o)
{
	unsigned int d, i;

	if (!pol)
		return;
	out_obj_begin(o, "policy");
	for (d = 0; d < POLICY_DIR_MAX; d++) {
		out_obj_begin(o, policy_dir_names[d]);
		out_str(o, "no_match", pol->default_deny[d] ? "deny" : "allow");
		out_u64(o, "refused", policy_refusals(pol, d));
		out_u64(o, "allowed_by_default", pol->allowed[d]);
		out_u64(o, "refused_by_default", pol->refused[d]);
		if (d == POLICY_EGRESS && pol->binds) {
			struct name_binds_stats bs;

			name_binds_stats(pol->binds, &bs);
			out_u64(o, "dns_refused", pol->names_refused);
			out_obj_begin(o, "name_bindings");
			out_u64(o, "held", bs.bindings);
			out_u64(o, "max", bs.max);
			out_u64(o, "added", bs.added);
			out_u64(o, "renewed", bs.refreshed);
			out_u64(o, "expired", bs.expired);
			out_u64(o, "evicted", bs.evicted);
			out_obj_end(o);
		}
		out_arr_begin(o, "rules");
		for (i = 0; i < pol->n[d]; i++) {
			const struct policy_rule *r = &pol->rules[d][i];

			out_obj_begin(o, NULL);
			out_str(o, "action", r->action == POLICY_DENY ? "deny" : "allow");
			out_str(o, "rule", r->text);
			out_bool(o, "default", r->builtin);
			out_u64(o, "hits", r->hits);
			out_obj_end(o);
		}
		out_arr_end(o);
		out_obj_end(o);
	}
	out_obj_end(o);
}

/**
 * policy_clear_hits() - a copy's counters back to zero (a shard's own copy)
 * @pol:	the policy
 */
void policy_clear_hits(struct policy *pol)
{
	unsigned int d, i;

	pol->names_refused = 0;
	for (d = 0; d < POLICY_DIR_MAX; d++) {
		pol->allowed[d] = 0;
		pol->refused[d] = 0;
		for (i = 0; i < pol->n[d]; i++)
			pol->rules[d][i].hits = 0;
	}
}

/**
 * policy_add_hits() - add @other's counters to @sum, a copy of the same rules
 * @sum:	the total so far
 * @other:	a shard's copy
 */
void policy_add_hits(struct policy *sum, const struct policy *other)
{
	unsigned int d, i;

	sum->names_refused += other->names_refused;
	for (d = 0; d < POLICY_DIR_MAX; d++) {
		sum->allowed[d] += other->allowed[d];
		sum->refused[d] += other->refused[d];
		for (i = 0; i < sum->n[d] && i < other->n[d]; i++)
			sum->rules[d][i].hits += other->rules[d][i].hits;
	}
}
