/* SPDX-License-Identifier: MIT */
/*
 * policy.h - what the container's programs may reach, and who may reach them
 * (theory of operation in policy.c, docs/face.md "Policy")
 */
#ifndef SANDNET_DATAPATH_POLICY_H
#define SANDNET_DATAPATH_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datapath/names/dns.h"
#include "datapath/net/net.h"

#define POLICY_MAX_RULES	64	/* per direction, the defaults included */
#define POLICY_TEXT_MAX		96

enum policy_dir {
	POLICY_EGRESS,		/* the container connects or sends out */
	POLICY_INGRESS,		/* the network connects or sends to the container */
	POLICY_DIR_MAX
};

enum policy_action {
	POLICY_ALLOW,
	POLICY_DENY,
};

/**
 * struct policy_rule - one rule, as given
 * @action:	what a match does
 * @builtin:	one of the defaults (the cloud metadata services)
 * @proto:	IPPROTO_TCP, IPPROTO_UDP or IPPROTO_ICMP (ICMPv6 too); 0: any
 * @family:	AF_INET or AF_INET6; 0: both ("any")
 * @addr:	the network, masked to @prefix_len
 * @prefix_len:	its length
 * @port_lo:	the port range; 0-65535 when none was given (a rule with a
 * @port_hi:	range never matches ICMP)
 * @has_ports:	a range was given
 * @is_name:	a name rule (egress only): @name, not @family and @addr, says
 *		what it reaches
 * @name:	the name or the "*.suffix" pattern
 * @text:	the rule as given, for stats and messages
 * @hits:	packets or connections it decided
 */
struct policy_rule {
	enum policy_action action;
	bool builtin;
	uint8_t proto;
	uint8_t family;
	union proto_inaddr addr;
	uint8_t prefix_len;
	uint16_t port_lo, port_hi;
	bool has_ports;
	bool is_name;
	struct dns_name name;
	char text[POLICY_TEXT_MAX];
	uint64_t hits;
};

/**
 * struct policy - both rule lists, in the order they are tried
 * @default_deny: per direction, what no rule matches is refused (egress
 *		once a name rule is given), else allowed
 * @allowed:	per direction, what no rule matched, allowed by default
 * @refused:	per direction, what no rule matched, refused by default
 * @names_refused: DNS queries for a name no rule allows, answered REFUSED
 * @binds:	the addresses DNS answers bound to names (policy_finish()
 *		makes it when a name rule is given); shared by every copy of
 *		the policy, freed by policy_release() of the original
 * @ttl_min_s, @ttl_max_s, @binds_max: what policy_finish() makes @binds
 *		with (--name-ttl, --name-bindings; 0: the defaults)
 */
struct policy {
	unsigned int n[POLICY_DIR_MAX];
	struct policy_rule rules[POLICY_DIR_MAX][POLICY_MAX_RULES];
	bool default_deny[POLICY_DIR_MAX];
	uint64_t allowed[POLICY_DIR_MAX];
	uint64_t refused[POLICY_DIR_MAX];
	uint64_t names_refused;
	struct name_binds *binds;
	uint32_t ttl_min_s, ttl_max_s;
	unsigned int binds_max;
	bool finished;
};

/* What the face does with a DNS query the container sent (policy_dns_query()). */
enum policy_dns_verdict {
	POLICY_DNS_ASK,			/* it goes to the resolver */
	POLICY_DNS_REFUSE_NAME,		/* the datapath answers REFUSED itself */
	POLICY_DNS_REFUSE_RESOLVER,	/* a rule denies the resolver: ICMP prohibited */
};

struct out;

extern const char *const policy_dir_names[POLICY_DIR_MAX];

int policy_add(struct policy *pol, enum policy_dir dir, enum policy_action action, const char *text,
	       char *err, size_t err_len);
int policy_names_option(struct policy *pol, const char *opt, const char *val, char *err, size_t err_len);
int policy_finish(struct policy *pol, char *err, size_t err_len);
void policy_release(struct policy *pol);
bool policy_has_names(const struct policy *pol);
enum policy_dns_verdict policy_dns_query(struct policy *pol, const struct net_addr *resolver, uint8_t proto,
					 const struct dns_name *qname);
int policy_name_bind(struct policy *pol, int family, const uint8_t *addr, const struct dns_name *name,
		     uint32_t ttl_s);
bool policy_resolver_refuses(struct policy *pol, const struct net_addr *resolver, uint8_t proto);
const struct policy_rule *policy_dns_rule(const struct policy *pol, const struct dns_name *qname);
const struct policy_rule *policy_name_allowed(const struct policy *pol, const struct dns_name *qname);
void policy_clear_hits(struct policy *pol);
void policy_add_hits(struct policy *sum, const struct policy *other);
const struct policy_rule *policy_match(struct policy *pol, enum policy_dir dir, const struct net_addr *remote,
				       uint8_t proto, uint16_t port);
bool policy_decide(struct policy *pol, enum policy_dir dir, const struct net_addr *remote, uint8_t proto,
		   uint16_t port, const struct policy_rule **by);
bool policy_bound_name(const struct policy *pol, const struct policy_rule *by, const struct net_addr *remote,
		       struct dns_name *out);
bool policy_name_refuses(const struct policy *pol, const struct dns_name *name, uint8_t proto, uint16_t port,
			 const struct policy_rule **by);
bool policy_refuses(struct policy *pol, enum policy_dir dir, const struct net_addr *remote, uint8_t proto,
		    uint16_t port);
uint64_t policy_refusals(const struct policy *pol, enum policy_dir dir);
void policy_print(const struct policy *pol, struct out *o);

#endif /* SANDNET_DATAPATH_POLICY_H */
