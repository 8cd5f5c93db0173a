// SPDX-License-Identifier: MIT
/*
 * face_dns.c - the container's DNS, read when the policy has name rules
 *
 * Theory of operation
 *
 * With a name rule in the policy (policy.c, "Names"), every UDP datagram
 * the container sends to port 53, whatever the resolver, is read as a DNS
 * query before it may leave (face_dns_query()):
 *  - a query for a name an allow rule names goes on to its resolver, even
 *    though egress is refused by default (unless an address rule denies
 *    the resolver: then the container gets ICMP administratively
 *    prohibited, as for any refused conversation);
 *  - a query for any other name never leaves: the face answers it itself,
 *    REFUSED, from the resolver's address and port (REFUSED rather than
 *    NXDOMAIN: the name may well exist, the datapath declines to look, and
 *    a resolver library tries its next server or fails at once rather than
 *    caching a negative answer);
 *  - a datagram that is no query (a response, a bad header, two questions)
 *    is dropped (bad_dns), as is a UDP GSO frame to port 53: no resolver
 *    library sends one.
 * Every datagram is read, not only a flow's first: one socket may ask many
 * names, so a flow's first query allowing the next would be a way out.
 *
 * The answers (face_dns_answer()) come back on the flow the query made.
 * Their question is read again: an answer for a name no allow rule names
 * (a resolver answering what was never let out, or spoofing) is dropped
 * (dns_unasked), and nothing is bound for it. For an allowed name, each A
 * and AAAA record on the CNAME chain of the name asked binds its address to
 * that name (names/bind.c) for the record's TTL, and then the answer goes
 * to the container, unchanged. An answer whose rcode is not NOERROR binds
 * nothing and goes on. An answer over FACE_DNS_ANSWER_MAX bytes is not read
 * and dropped (dns_too_big): the resolver library asks again over TCP.
 * Reading is bounded by the message (names/dns.c), and this bound keeps
 * one answer's work under a millisecond.
 *
 * DNS over TCP (RFC 7766: each message behind two length bytes, several
 * pipelined on one connection) is read the same way by face_tcp.c, message
 * by message, each query whole before any of it leaves: the connection to
 * port 53 is allowed unless an address rule denies the resolver, a query
 * for a name no rule allows resets it (the face cannot answer inside the
 * resolver's stream), and each answer, up to FACE_DNS_TCP_ANSWER_MAX bytes
 * (over TCP answers are the large ones), binds as above before it goes on.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "datapath/face/face_int.h"
#include "datapath/names/dns.h"
#include "datapath/policy.h"

/* The refusal: the question as asked and a header; the query bounds it. */
#define FACE_DNS_REFUSAL_MAX	(DNS_HDR_LEN + DNS_WIRE_NAME_MAX + 4)

/**
 * face_dns_query() - a datagram the container sent to port 53, with name rules
 * @f:		the face
 * @src:	the container's address
 * @sport:	its port
 * @dst:	the resolver
 * @data:	the payload
 * @len:	its length
 *
 * Return: 0 when the query may go on (the policy has decided: the caller
 * does not ask it again); -EACCES when the face answered it or dropped it
 * (counted); -EPERM when an address rule denies the resolver (the caller
 * answers ICMP administratively prohibited).
 */
int face_dns_query(struct face *f, const struct net_addr *src, uint16_t sport, const struct net_addr *dst,
		   const uint8_t *data, size_t len)
{
	uint8_t refusal[FACE_DNS_REFUSAL_MAX];
	struct dns_query q;
	int ret, n;

	ret = dns_query_parse(data, len, &q, NULL);
	if (ret && ret != -EILSEQ) {
		face_drop(f, FACE_DROP_BAD_DNS);
		return -EACCES;
	}
	face_count(f, FACE_CTR_DNS_QUERIES);
	if (!ret) {
		switch (policy_dns_query(f->st->policy, dst, IPPROTO_UDP, &q.qname)) {
		case POLICY_DNS_ASK:
			return 0;
		case POLICY_DNS_REFUSE_RESOLVER:
			face_drop(f, FACE_DROP_POLICY);
			return -EPERM;
		case POLICY_DNS_REFUSE_NAME:
			break;
		}
	}
	/* a name no rule allows, or one with no text (no rule can name it) */
	n = dns_refusal_build(data, len, &q, DNS_RCODE_REFUSED, refusal, sizeof(refusal));
	if (n < 0) {
		face_drop(f, FACE_DROP_BAD_DNS);
		return -EACCES;
	}
	face_count(f, FACE_CTR_DNS_REFUSED);
	face_log_refused(f, IPPROTO_UDP, false, src, sport, dst, 53, ret ? NULL : policy_dns_rule(f->st->policy, &q.qname),
			 ret ? "" : q.qname.text, len);
	face_udp_to_inner(f, dst, 53, src, sport, refusal, (size_t)n);
	return -EACCES;
}

/**
 * face_dns_tcp_query() - one whole query of a DNS-over-TCP stream the
 * container sent, its two length bytes taken off
 * @f:		the face
 * @dst:	the resolver (the address rules let the connection through)
 * @data:	the query
 * @len:	its length
 *
 * @log:	the connection's flow log record, or NULL: a refused query's
 *		name and the rule that refused it go there
 *
 * Over TCP the face cannot answer in the resolver's stream: a query it
 * refuses ends the connection instead (the caller resets it).
 *
 * Return: 0 when it may go on; -EACCES when refused (counted: dns_refused);
 * -EBADMSG when malformed (bad_dns).
 */
int face_dns_tcp_query(struct face *f, const struct net_addr *dst, const uint8_t *data, size_t len,
		       struct flowlog_record *log)
{
	struct dns_query q;
	int ret;

	ret = dns_query_parse(data, len, &q, NULL);
	if (ret && ret != -EILSEQ) {
		face_drop(f, FACE_DROP_BAD_DNS);
		return -EBADMSG;
	}
	face_count(f, FACE_CTR_DNS_QUERIES);
	if (!ret && policy_dns_query(f->st->policy, dst, IPPROTO_TCP, &q.qname) == POLICY_DNS_ASK)
		return 0;
	face_count(f, FACE_CTR_DNS_REFUSED);
	if (log && !ret) {
		face_log_name(log, q.qname.text);
		face_log_rule(log, policy_dns_rule(f->st->policy, &q.qname));
	}
	return -EACCES;
}

/* dns_addr_fn: one address of an allowed answer */
struct face_dns_bind {
	struct face *f;
	const struct dns_name *qname;
};

static int face_dns_bind_one(void *ctx, int family, const uint8_t *addr, uint32_t ttl_s)
{
	struct face_dns_bind *b = ctx;

	if (policy_name_bind(b->f->st->policy, family, addr, b->qname, ttl_s) == 0)
		face_count(b->f, FACE_CTR_DNS_BOUND);
	else
		face_drop(b->f, FACE_DROP_NO_MEMORY);
	return 0;
}

/**
 * face_dns_answer() - an answer from port 53 on a flow or a connection the
 * container opened
 * @f:		the face
 * @data:	the answer (a datagram's payload, or a TCP message without its
 *		length bytes)
 * @len:	its length
 * @max:	longer is not read: FACE_DNS_ANSWER_MAX (UDP) or
 *		FACE_DNS_TCP_ANSWER_MAX
 *
 * Binds the addresses an allowed answer gives (see above).
 *
 * Return: true when it goes to the container, false when it was dropped
 * (counted).
 */
bool face_dns_answer(struct face *f, const uint8_t *data, size_t len, size_t max)
{
	struct face_dns_bind b = { .f = f };
	struct dns_name qname;
	int ret;

	if (len > max) {
		face_drop(f, FACE_DROP_DNS_TOO_BIG);
		return false;
	}
	if (dns_question_read(data, len, &qname, NULL) < 0) {
		face_drop(f, FACE_DROP_BAD_DNS);
		return false;
	}
	if (!policy_name_allowed(f->st->policy, &qname)) {
		face_drop(f, FACE_DROP_DNS_UNASKED);
		return false;
	}
	b.qname = &qname;
	ret = dns_response_walk(data, len, &qname, face_dns_bind_one, &b, NULL);
	if (ret < 0) {
		face_drop(f, FACE_DROP_BAD_DNS);
		return false;
	}
	face_count(f, FACE_CTR_DNS_ANSWERS);
	return true;
}
