/* SPDX-License-Identifier: MIT */
/*
 * dns.h - a DNS message codec for the names policy: names, one query, the
 * addresses of a response, a refusal, TCP framing (theory of operation in
 * dns.c)
 *
 * A leaf: libc only, nothing of the datapath. Nothing here allocates or keeps
 * state; every function reads the bytes it is given and nothing else.
 */
#ifndef SANDNET_DATAPATH_NAMES_DNS_H
#define SANDNET_DATAPATH_NAMES_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_HDR_LEN		12	/* RFC 1035 4.1.1 */
#define DNS_LABEL_MAX		63	/* RFC 1035 2.3.4 */
#define DNS_WIRE_NAME_MAX	255	/* RFC 1035 2.3.4, length octets and root included */
#define DNS_NAME_MAX		253	/* the same name as dotted text, no trailing dot */
#define DNS_CNAME_CHAIN_MAX	16	/* CNAMEs followed from the name asked */

/* RFC 1035 3.2.2, RFC 3596 2.1, RFC 6891 6.1.1 */
#define DNS_TYPE_A		1
#define DNS_TYPE_CNAME		5
#define DNS_TYPE_AAAA		28
#define DNS_TYPE_OPT		41
#define DNS_CLASS_IN		1	/* RFC 1035 3.2.4 */

/* RFC 1035 4.1.1 RCODE (4 bits; RFC 6895 2.3 lists the rest) */
enum dns_rcode {
	DNS_RCODE_NOERROR,
	DNS_RCODE_FORMERR,
	DNS_RCODE_SERVFAIL,
	DNS_RCODE_NXDOMAIN,
	DNS_RCODE_NOTIMP,
	DNS_RCODE_REFUSED,
	DNS_RCODE_MAX
};

extern const char *const dns_rcode_names[DNS_RCODE_MAX];

/**
 * struct dns_name - a domain name as text
 * @text:	lowercase (ASCII, RFC 4343), labels joined by '.', no trailing
 *		dot; the root is ""; a rule's wildcard keeps its "*."
 * @len:	strlen(@text), at most DNS_NAME_MAX
 */
struct dns_name {
	char text[DNS_NAME_MAX + 1];
	uint16_t len;
};

/**
 * struct dns_header - the fixed header (RFC 1035 4.1.1), in host order
 * @id:		the query's identifier, echoed by the answer
 * @qr:		a response
 * @opcode:	0 is QUERY
 * @aa, @tc, @rd, @ra: authoritative, truncated, recursion desired, available
 * @rcode:	enum dns_rcode, or another value of the 4 bits
 * @qdcount, @ancount, @nscount, @arcount: the four sections' record counts
 */
struct dns_header {
	uint16_t id;
	bool qr, aa, tc, rd, ra;
	uint8_t opcode;
	uint8_t rcode;
	uint16_t qdcount, ancount, nscount, arcount;
};

/**
 * struct dns_query - what dns_query_parse() found in a query
 * @hdr:	its header
 * @qname:	the one question's name
 * @qtype:	the question's type (DNS_TYPE_A, ...)
 * @qclass:	the question's class (DNS_CLASS_IN, ...)
 * @question_end: offset just past the question's QCLASS
 * @trailing:	bytes after the last record, ignored (a sloppy client's padding)
 */
struct dns_query {
	struct dns_header hdr;
	struct dns_name qname;
	uint16_t qtype, qclass;
	size_t question_end;
	size_t trailing;
};

/**
 * typedef dns_addr_fn - an address a response gave for the name asked
 * @ctx:	the caller's
 * @family:	AF_INET or AF_INET6
 * @addr:	4 or 16 bytes, network order
 * @ttl_s:	seconds it may be kept: the least TTL on the way to it
 *
 * Return: 0 to go on, negative errno to stop the walk with that value.
 */
typedef int (*dns_addr_fn)(void *ctx, int family, const uint8_t *addr, uint32_t ttl_s);

int dns_name_from_text(const char *text, bool allow_wildcard, struct dns_name *out, const char **why);
bool dns_name_match(const struct dns_name *pattern, const struct dns_name *name);
int dns_header_parse(const uint8_t *msg, size_t len, struct dns_header *h, const char **why);
int dns_question_read(const uint8_t *msg, size_t len, struct dns_name *qname, const char **why);
int dns_query_parse(const uint8_t *msg, size_t len, struct dns_query *q, const char **why);
int dns_response_walk(const uint8_t *msg, size_t len, const struct dns_name *qname, dns_addr_fn cb, void *ctx,
		      const char **why);
int dns_refusal_build(const uint8_t *query, size_t qlen, const struct dns_query *q, unsigned int rcode,
		      uint8_t *out, size_t cap);
int dns_tcp_next(const uint8_t *buf, size_t len, size_t *msg_off, size_t *msg_len);

#endif /* SANDNET_DATAPATH_NAMES_DNS_H */
