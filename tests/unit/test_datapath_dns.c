// SPDX-License-Identifier: MIT
/*
 * test_datapath_dns.c - the DNS codec of the names policy (datapath/names/
 * dns.c): a rule's names and their wildcards; a container's query, good and
 * each way broken (compression loops, forward pointers, long labels and
 * names, every truncation), each refusal with its errno and its reason; the
 * addresses of a response, along a CNAME chain in any order with the least
 * TTL, never for an owner nobody asked; the refusal the datapath sends,
 * byte by byte; DNS-over-TCP framing. Messages are built here by hand,
 * label by label, with a builder that shares nothing with the codec.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "datapath/names/dns.h"

#define F_QR	0x8000
#define F_RD	0x0100
#define F_RA	0x0080

/* A message being built. */
struct msg {
	uint8_t b[2048];
	size_t len;
};

static void put8(struct msg *m, unsigned int v)
{
	ck_assert_uint_lt(m->len, sizeof(m->b));
	m->b[m->len++] = (uint8_t)v;
}

static void put16(struct msg *m, unsigned int v)
{
	put8(m, v >> 8 & 0xff);
	put8(m, v & 0xff);
}

static void put32(struct msg *m, uint32_t v)
{
	put16(m, v >> 16);
	put16(m, v & 0xffff);
}

static void put_bytes(struct msg *m, const void *p, size_t n)
{
	ck_assert_uint_le(m->len + n, sizeof(m->b));
	memcpy(m->b + m->len, p, n);
	m->len += n;
}

/* @name ("a.test", "" for the root) uncompressed; Return: its offset. */
static size_t put_name(struct msg *m, const char *name)
{
	size_t at = m->len;
	const char *dot;

	while (*name) {
		dot = strchr(name, '.');
		if (!dot)
			dot = name + strlen(name);
		put8(m, (unsigned int)(dot - name));
		put_bytes(m, name, (size_t)(dot - name));
		name = *dot ? dot + 1 : dot;
	}
	put8(m, 0);
	return at;
}

static void put_ptr(struct msg *m, size_t to)
{
	put16(m, 0xc000 | (unsigned int)to);
}

static void put_hdr(struct msg *m, unsigned int id, unsigned int flags, unsigned int qd, unsigned int an,
		    unsigned int ns, unsigned int ar)
{
	m->len = 0;
	put16(m, id);
	put16(m, flags);
	put16(m, qd);
	put16(m, an);
	put16(m, ns);
	put16(m, ar);
}

/* The fixed part of a record after its owner. */
static void put_rr(struct msg *m, unsigned int type, unsigned int class, uint32_t ttl, unsigned int rdlen)
{
	put16(m, type);
	put16(m, class);
	put32(m, ttl);
	put16(m, rdlen);
}

static void put_a(struct msg *m, uint32_t ttl, const char *addr)
{
	struct in_addr a;

	ck_assert_int_eq(inet_pton(AF_INET, addr, &a), 1);
	put_rr(m, DNS_TYPE_A, DNS_CLASS_IN, ttl, 4);
	put_bytes(m, &a, 4);
}

static void put_aaaa(struct msg *m, uint32_t ttl, const char *addr)
{
	struct in6_addr a;

	ck_assert_int_eq(inet_pton(AF_INET6, addr, &a), 1);
	put_rr(m, DNS_TYPE_AAAA, DNS_CLASS_IN, ttl, 16);
	put_bytes(m, &a, 16);
}

/* A CNAME's fixed part and its data, @target uncompressed; Return: the data's offset. */
static size_t put_cname(struct msg *m, uint32_t ttl, const char *target)
{
	size_t rdlen_at, at;

	put_rr(m, DNS_TYPE_CNAME, DNS_CLASS_IN, ttl, 0);
	rdlen_at = m->len - 2;
	at = put_name(m, target);
	m->b[rdlen_at] = (uint8_t)((m->len - at) >> 8);
	m->b[rdlen_at + 1] = (uint8_t)(m->len - at);
	return at;
}

/* The EDNS OPT record of RFC 6891 6.1.2: a 1232-byte UDP payload, no options. */
static void put_opt(struct msg *m)
{
	put8(m, 0);
	put_rr(m, DNS_TYPE_OPT, 1232, 0, 0);
}

/* A query as a stub resolver sends it: RD, one question, an OPT record. */
static void make_query(struct msg *m, unsigned int id, const char *name, unsigned int qtype)
{
	put_hdr(m, id, F_RD, 1, 0, 0, 1);
	put_name(m, name);
	put16(m, qtype);
	put16(m, DNS_CLASS_IN);
	put_opt(m);
}

/* The header and question of a NOERROR answer to @name; ancount patched by end_answer(). */
static void begin_answer(struct msg *m, const char *name, unsigned int qtype)
{
	put_hdr(m, 0x1234, F_QR | F_RD | F_RA, 1, 0, 0, 0);
	put_name(m, name);
	put16(m, qtype);
	put16(m, DNS_CLASS_IN);
}

static void set_count(struct msg *m, unsigned int at, unsigned int n)
{
	m->b[at] = (uint8_t)(n >> 8);
	m->b[at + 1] = (uint8_t)n;
}

static struct dns_name name_of(const char *text)
{
	struct dns_name n;
	const char *why = NULL;

	ck_assert_msg(dns_name_from_text(text, true, &n, &why) == 0, "%s: %s", text, why);
	return n;
}

/* What dns_response_walk() reported. */
struct got {
	unsigned int n;
	int family[32];
	char addr[32][INET6_ADDRSTRLEN];
	uint32_t ttl_s[32];
	int stop_after;		/* > 0: return -ENOSPC at that call */
};

static int collect(void *ctx, int family, const uint8_t *addr, uint32_t ttl_s)
{
	struct got *g = ctx;

	ck_assert(family == AF_INET || family == AF_INET6);
	ck_assert_uint_lt(g->n, 32);
	g->family[g->n] = family;
	inet_ntop(family, addr, g->addr[g->n], sizeof(g->addr[0]));
	g->ttl_s[g->n] = ttl_s;
	g->n++;
	return g->stop_after && (int)g->n == g->stop_after ? -ENOSPC : 0;
}

static void expect_query_err(const struct msg *m, int err, const char *words)
{
	struct dns_query q;
	const char *why = NULL;
	int ret = dns_query_parse(m->b, m->len, &q, &why);

	ck_assert_msg(ret == err, "want %d (%s), got %d (%s)", err, words, ret, why ? why : "-");
	ck_assert_msg(why && strstr(why, words), "want '%s', got '%s'", words, why ? why : "-");
}

static void expect_walk_err(const struct msg *m, const char *qname, int err, const char *words)
{
	struct dns_name n = name_of(qname);
	struct got g = { 0 };
	const char *why = NULL;
	int ret = dns_response_walk(m->b, m->len, &n, collect, &g, &why);

	ck_assert_msg(ret == err, "want %d (%s), got %d (%s)", err, words, ret, why ? why : "-");
	ck_assert_msg(why && strstr(why, words), "want '%s', got '%s'", words, why ? why : "-");
	ck_assert_uint_eq(g.n, 0);	/* nothing reported from a refused message */
}

START_TEST(test_name_from_text)
{
	static const struct { const char *in; bool wild; const char *out; } good[] = {
		{ "example.com", false, "example.com" },
		{ "Example.COM.", false, "example.com" },
		{ "a", false, "a" },
		{ "_dmarc.x-1.example", false, "_dmarc.x-1.example" },
		{ "123.456", false, "123.456" },
		{ "*.Example.com", true, "*.example.com" },
		{ "*.com.", true, "*.com" },
	};
	static const struct { const char *in; bool wild; const char *words; } bad[] = {
		{ "", true, "empty name" },
		{ ".", true, "empty name" },
		{ "a..b", false, "empty label" },
		{ ".a", false, "empty label" },
		{ "a..", false, "empty label" },
		{ "-a.com", false, "label starts or ends with '-'" },
		{ "a-.com", false, "label starts or ends with '-'" },
		{ "a b.com", false, "a character other than a letter, a digit, '-' or '_'" },
		{ "a\\.b.com", false, "a character other than" },
		{ "caf\xc3\xa9.fr", false, "a character other than" },
		{ "*.example.com", false, "a wildcard where none is allowed" },
		{ "a.*.example.com", true, "'*' other than as the whole first label" },
		{ "a.*.example.com", false, "a wildcard where none is allowed" },
		{ "*a.example.com", true, "'*' other than as the whole first label" },
		{ "*", true, "nothing after the wildcard" },
		{ "*.", true, "nothing after the wildcard" },
		{ "*..", true, "nothing after the wildcard" },
		{ "*..com", true, "empty label" },
		{ "*.*.com", true, "'*' other than as the whole first label" },
	};
	char text[400];
	struct dns_name n;
	const char *why;
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		why = NULL;
		ck_assert_msg(dns_name_from_text(good[i].in, good[i].wild, &n, &why) == 0, "%s: %s", good[i].in,
			      why);
		ck_assert_str_eq(n.text, good[i].out);
		ck_assert_uint_eq(n.len, strlen(good[i].out));
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		ck_assert_msg(dns_name_from_text(bad[i].in, bad[i].wild, &n, &why) == -EINVAL, "'%s' accepted",
			      bad[i].in);
		ck_assert_msg(why && strstr(why, bad[i].words), "'%s': want '%s', got '%s'", bad[i].in,
			      bad[i].words, why ? why : "-");
		ck_assert_uint_eq(n.len, 0);
	}

	/* a label of 63 is fine, 64 is not */
	memset(text, 'a', 63);
	strcpy(text + 63, ".com");
	ck_assert_int_eq(dns_name_from_text(text, false, &n, &why), 0);
	memset(text, 'a', 64);
	strcpy(text + 64, ".com");
	ck_assert_int_eq(dns_name_from_text(text, false, &n, &why), -EINVAL);
	ck_assert_str_eq(why, "label longer than 63 bytes");

	/* 253 bytes is fine (with or without the trailing dot), 254 is not */
	memset(text, 'a', 253);
	for (i = 63; i < 253; i += 64)
		text[i] = '.';
	text[253] = 0;
	ck_assert_int_eq(dns_name_from_text(text, false, &n, &why), 0);
	ck_assert_uint_eq(n.len, 253);
	strcpy(text + 253, ".");
	ck_assert_int_eq(dns_name_from_text(text, false, &n, &why), 0);
	strcpy(text + 253, "a");
	ck_assert_int_eq(dns_name_from_text(text, false, &n, &why), -EINVAL);
	ck_assert_str_eq(why, "name longer than 253 bytes");
	memset(text, 'a', sizeof(text) - 1);
	text[sizeof(text) - 1] = 0;
	ck_assert_int_eq(dns_name_from_text(text, false, &n, &why), -EINVAL);
	ck_assert_str_eq(why, "name longer than 253 bytes");
	/* why may be NULL */
	ck_assert_int_eq(dns_name_from_text("a..b", false, &n, NULL), -EINVAL);
}
END_TEST

START_TEST(test_name_match)
{
	static const struct { const char *pattern, *name; bool match; } table[] = {
		{ "example.com", "example.com", true },
		{ "example.com", "www.example.com", false },
		{ "www.example.com", "example.com", false },
		{ "example.com", "example.co", false },
		{ "Example.COM", "example.com.", true },
		{ "*.example.com", "www.example.com", true },
		{ "*.example.com", "a.b.c.example.com", true },
		{ "*.example.com", "example.com", false },
		{ "*.example.com", "wwwexample.com", false },
		{ "*.example.com", "www.example.com.evil", false },
		{ "*.example.com", "www.example.org", false },
		{ "*.example.com", "xexample.com", false },
		{ "*.com", "example.com", true },
		{ "*.com", "com", false },
		{ "a.example.com", "*.example.com", false },
	};
	struct dns_name p, n;
	unsigned int i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		p = name_of(table[i].pattern);
		n = name_of(table[i].name);
		ck_assert_msg(dns_name_match(&p, &n) == table[i].match, "%s ~ %s: want %d", table[i].pattern,
			      table[i].name, table[i].match);
	}
	/* a name read from a message: a literal '*' label is just a label under example.com */
	p = name_of("*.example.com");
	n = name_of("*.example.com");
	ck_assert(dns_name_match(&p, &n));
	/* the root matches only the root */
	n.len = 0;
	n.text[0] = 0;
	ck_assert(!dns_name_match(&p, &n));
}
END_TEST

START_TEST(test_header)
{
	struct dns_header h;
	struct msg m;
	const char *why = NULL;

	put_hdr(&m, 0xbeef, F_QR | 0x0400 | 0x0200 | F_RD | F_RA | (2 << 11) | 3, 1, 2, 3, 4);
	ck_assert_int_eq(dns_header_parse(m.b, m.len, &h, &why), 0);
	ck_assert_uint_eq(h.id, 0xbeef);
	ck_assert(h.qr && h.aa && h.tc && h.rd && h.ra);
	ck_assert_uint_eq(h.opcode, 2);
	ck_assert_uint_eq(h.rcode, DNS_RCODE_NXDOMAIN);
	ck_assert_str_eq(dns_rcode_names[h.rcode], "NXDOMAIN");
	ck_assert_uint_eq(h.qdcount, 1);
	ck_assert_uint_eq(h.ancount, 2);
	ck_assert_uint_eq(h.nscount, 3);
	ck_assert_uint_eq(h.arcount, 4);
	put_hdr(&m, 0x0102, 0, 0, 0, 0, 0);
	ck_assert_int_eq(dns_header_parse(m.b, m.len, &h, &why), 0);
	ck_assert(!h.qr && !h.aa && !h.tc && !h.rd && !h.ra);
	ck_assert_int_eq(dns_header_parse(m.b, 11, &h, &why), -EBADMSG);
	ck_assert_str_eq(why, "truncated header");
}
END_TEST

START_TEST(test_query)
{
	struct dns_query q;
	struct msg m;
	const char *why = NULL;

	make_query(&m, 0xabcd, "WWW.Example.com", DNS_TYPE_AAAA);
	ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), 0);
	ck_assert_uint_eq(q.hdr.id, 0xabcd);
	ck_assert(!q.hdr.qr && q.hdr.rd);
	ck_assert_str_eq(q.qname.text, "www.example.com");
	ck_assert_uint_eq(q.qname.len, 15);
	ck_assert_uint_eq(q.qtype, DNS_TYPE_AAAA);
	ck_assert_uint_eq(q.qclass, DNS_CLASS_IN);
	ck_assert_uint_eq(q.question_end, 12 + 17 + 4);
	ck_assert_uint_eq(q.trailing, 0);

	/* bytes after the last record are counted, not refused */
	put_bytes(&m, "xyz", 3);
	ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), 0);
	ck_assert_uint_eq(q.trailing, 3);

	/* no OPT, the root asked (". NS", a priming query), class CH */
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	put_name(&m, "");
	put16(&m, 2);
	put16(&m, 3);
	ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), 0);
	ck_assert_str_eq(q.qname.text, "");
	ck_assert_uint_eq(q.qname.len, 0);
	ck_assert_uint_eq(q.qclass, 3);

	/* 255 bytes on the wire is the longest name: 253 as text */
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	for (int i = 0; i < 3; i++) {
		put8(&m, 63);
		for (int j = 0; j < 63; j++)
			put8(&m, 'a');
	}
	put8(&m, 61);
	for (int j = 0; j < 61; j++)
		put8(&m, 'B');
	put8(&m, 0);
	put16(&m, DNS_TYPE_A);
	put16(&m, DNS_CLASS_IN);
	ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), 0);
	ck_assert_uint_eq(q.qname.len, 253);
	ck_assert_int_eq(q.qname.text[252], 'b');
}
END_TEST

START_TEST(test_query_malformed)
{
	struct msg m;
	size_t x, y;

	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	m.len = 11;
	expect_query_err(&m, -EBADMSG, "truncated header");
	make_query(&m, 1, "a.test", DNS_TYPE_A);
	m.b[2] |= F_QR >> 8;
	expect_query_err(&m, -EBADMSG, "a response, not a query");
	make_query(&m, 1, "a.test", DNS_TYPE_A);
	m.b[2] |= 4 << 3;	/* NOTIFY */
	expect_query_err(&m, -EOPNOTSUPP, "opcode is not QUERY");
	make_query(&m, 1, "a.test", DNS_TYPE_A);
	set_count(&m, 4, 0);
	expect_query_err(&m, -EBADMSG, "not exactly one question");
	set_count(&m, 4, 2);
	expect_query_err(&m, -EBADMSG, "not exactly one question");
	make_query(&m, 1, "a.test", DNS_TYPE_A);
	set_count(&m, 6, 1);
	expect_query_err(&m, -EBADMSG, "answer or authority records in a query");
	make_query(&m, 1, "a.test", DNS_TYPE_A);
	set_count(&m, 8, 1);
	expect_query_err(&m, -EBADMSG, "answer or authority records in a query");

	/* a label of 64 bytes */
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	put8(&m, 64);
	for (int i = 0; i < 64; i++)
		put8(&m, 'a');
	put8(&m, 0);
	put32(&m, 0x00010001);
	expect_query_err(&m, -EBADMSG, "label longer than 63 bytes");
	/* label type 0x80 */
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	put8(&m, 0x81);
	put_bytes(&m, "a\0\0\1\0\1", 6);
	expect_query_err(&m, -EBADMSG, "label types 0x40, 0x80");

	/* 256 bytes on the wire: three labels of 63 and one of 62 */
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	for (int i = 0; i < 4; i++) {
		put8(&m, i < 3 ? 63 : 62);
		for (int j = 0; j < (i < 3 ? 63 : 62); j++)
			put8(&m, 'a');
	}
	put8(&m, 0);
	put32(&m, 0x00010001);
	expect_query_err(&m, -EBADMSG, "name longer than 255 bytes on the wire");

	/* compression: to itself, forward, out of the message, into the header */
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	put_ptr(&m, 12);
	put32(&m, 0x00010001);
	expect_query_err(&m, -EBADMSG, "compression pointer loop");
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	put_ptr(&m, 18);
	put32(&m, 0x00010001);
	put_name(&m, "a.test");
	expect_query_err(&m, -EBADMSG, "compression pointer forward");
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	put_ptr(&m, 0x3fff);
	put32(&m, 0x00010001);
	expect_query_err(&m, -EBADMSG, "compression pointer out of the message");
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	put_ptr(&m, 4);
	put32(&m, 0x00010001);
	expect_query_err(&m, -EBADMSG, "compression pointer into the header");
	/* a pointer back into the name being read */
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	put_bytes(&m, "\1a", 2);
	put_ptr(&m, 12);
	put32(&m, 0x00010001);
	expect_query_err(&m, -EBADMSG, "compression pointer loop");

	/*
	 * Two pointers to each other, in the additional section: the first
	 * record's data is a pointer to the second's owner, which points back.
	 */
	make_query(&m, 1, "a.test", DNS_TYPE_A);
	set_count(&m, 10, 2);
	m.len -= 11;		/* no OPT */
	put8(&m, 0);
	put_rr(&m, 16, DNS_CLASS_IN, 0, 2);
	x = m.len;
	y = x + 2;
	put_ptr(&m, y);
	put_ptr(&m, x);
	put_rr(&m, 16, DNS_CLASS_IN, 0, 0);
	expect_query_err(&m, -EBADMSG, "compression pointer loop");

	/* truncations past the name */
	make_query(&m, 1, "a.test", DNS_TYPE_A);
	m.len = 12 + 8 + 3;
	set_count(&m, 10, 0);
	expect_query_err(&m, -EBADMSG, "truncated question");
	make_query(&m, 1, "a.test", DNS_TYPE_A);
	m.len -= 1;
	expect_query_err(&m, -EBADMSG, "truncated additional record");
	make_query(&m, 1, "a.test", DNS_TYPE_A);
	m.b[m.len - 1] = 1;	/* OPT says one byte of data that is not there */
	expect_query_err(&m, -EBADMSG, "truncated additional record");
	make_query(&m, 1, "a.test", DNS_TYPE_A);
	m.len = 14;
	expect_query_err(&m, -EBADMSG, "truncated name");
}
END_TEST

/* A hop limit: a chain of pointers, each to the one before, ending in the root. */
START_TEST(test_query_pointer_hops)
{
	struct dns_query q;
	struct msg m;
	const char *why = NULL;
	size_t chain, i;

	for (int hops = 127; hops <= 128; hops++) {
		/* the chain lies in a TXT record's data; the OPT-less second record's owner enters it */
		make_query(&m, 1, "a.test", DNS_TYPE_A);
		set_count(&m, 10, 2);
		m.len -= 11;
		put8(&m, 0);
		put_rr(&m, 16, DNS_CLASS_IN, 0, (unsigned int)(1 + 2 * hops));
		chain = m.len;
		put8(&m, 0);
		for (i = 1; i <= (size_t)hops; i++)
			put_ptr(&m, chain + 2 * (i - 1) - (i > 1));
		put_ptr(&m, m.len - 2);
		put_rr(&m, 16, DNS_CLASS_IN, 0, 0);
		/* hops + 1 pointers from the owner */
		if (hops + 1 <= 128) {
			ck_assert_msg(dns_query_parse(m.b, m.len, &q, &why) == 0, "%d hops: %s", hops + 1, why);
		} else {
			ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), -EBADMSG);
			ck_assert_str_eq(why, "more than 128 compression pointers in a name");
		}
	}
}
END_TEST

/* Every prefix of a good query and of a good response is refused, none crashes. */
START_TEST(test_truncated_everywhere)
{
	struct dns_name qn = name_of("www.example.com");
	struct dns_query q;
	struct msg m;
	const char *why;
	size_t len, cut;
	struct got g;

	make_query(&m, 7, "www.example.com", DNS_TYPE_A);
	for (cut = 0; cut < m.len; cut++) {
		why = NULL;
		ck_assert_msg(dns_query_parse(m.b, cut, &q, &why) == -EBADMSG, "query cut at %zu parsed", cut);
		ck_assert_ptr_nonnull(why);
	}
	ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), 0);

	begin_answer(&m, "www.example.com", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_cname(&m, 30, "b.example.net");
	put_ptr(&m, m.len - 15);
	put_a(&m, 30, "192.0.2.1");
	set_count(&m, 6, 2);
	len = m.len;
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(dns_response_walk(m.b, len, &qn, collect, &g, &why), 1);
	for (cut = 0; cut < len; cut++) {
		why = NULL;
		memset(&g, 0, sizeof(g));
		ck_assert_msg(dns_response_walk(m.b, cut, &qn, collect, &g, &why) == -EBADMSG,
			      "response cut at %zu walked", cut);
		ck_assert_ptr_nonnull(why);
		ck_assert_uint_eq(g.n, 0);
	}
}
END_TEST

/*
 * www.example.com CNAME b.cdn.example.net (300 s) CNAME c.edge.example.org
 * (60 s), whose A (3600 s) and AAAA (30 s) come first, the CNAMEs in reverse
 * order, names compressed, owners in another case; and an address for a
 * name nobody asked.
 */
START_TEST(test_response_chain)
{
	struct dns_name qn = name_of("www.example.com");
	struct dns_header h;
	struct got g = { 0 };
	struct msg m;
	const char *why = NULL;
	size_t b_at, c_at;

	begin_answer(&m, "WWW.example.COM", DNS_TYPE_A);
	/* c.edge.example.org's A, its owner written in full here */
	c_at = put_name(&m, "C.Edge.Example.Org");
	put_a(&m, 3600, "192.0.2.10");
	/* an A for a name nobody asked: ignored, whatever its TTL */
	put_name(&m, "evil.example.com");
	put_a(&m, 999, "203.0.113.66");
	/* b.cdn.example.net CNAME c.edge.example.org (pointer) */
	b_at = m.len;
	put_name(&m, "b.cdn.example.net");
	put_rr(&m, DNS_TYPE_CNAME, DNS_CLASS_IN, 60, 2);
	put_ptr(&m, c_at);
	/* www.example.com CNAME b.cdn.example.net: "b" and a pointer to cdn.example.net */
	put_ptr(&m, 12);
	put_rr(&m, DNS_TYPE_CNAME, DNS_CLASS_IN, 300, 4);
	put_bytes(&m, "\1b", 2);
	put_ptr(&m, b_at + 2);
	/* c.edge.example.org's AAAA, owner by pointer */
	put_ptr(&m, c_at);
	put_aaaa(&m, 30, "2001:db8::10");
	/* class CH for the name asked: ignored */
	put_ptr(&m, 12);
	put_rr(&m, DNS_TYPE_A, 3, 5, 4);
	put_bytes(&m, "\x0a\0\0\x01", 4);
	set_count(&m, 6, 6);
	/* an authority record, not read */
	put_name(&m, "example.com");
	put_rr(&m, 2, DNS_CLASS_IN, 1, 2);
	put_ptr(&m, 12);
	set_count(&m, 8, 1);

	ck_assert_int_eq(dns_header_parse(m.b, m.len, &h, &why), 0);
	ck_assert_uint_eq(h.rcode, DNS_RCODE_NOERROR);
	ck_assert_int_eq(dns_response_walk(m.b, m.len, &qn, collect, &g, &why), 2);
	ck_assert_uint_eq(g.n, 2);
	ck_assert_int_eq(g.family[0], AF_INET);
	ck_assert_str_eq(g.addr[0], "192.0.2.10");
	ck_assert_uint_eq(g.ttl_s[0], 60);	/* min(300, 60, 3600) */
	ck_assert_int_eq(g.family[1], AF_INET6);
	ck_assert_str_eq(g.addr[1], "2001:db8::10");
	ck_assert_uint_eq(g.ttl_s[1], 30);	/* min(300, 60, 30) */
	/* NULL callback: counted only */
	ck_assert_int_eq(dns_response_walk(m.b, m.len, &qn, NULL, NULL, &why), 2);

	/* the callback stops the walk */
	memset(&g, 0, sizeof(g));
	g.stop_after = 1;
	ck_assert_int_eq(dns_response_walk(m.b, m.len, &qn, collect, &g, &why), -ENOSPC);
	ck_assert_uint_eq(g.n, 1);
}
END_TEST

/* The question's name of a query and of a response; broken ones refused. */
START_TEST(test_question_read)
{
	struct dns_name n;
	const char *why = NULL;
	struct msg m;

	make_query(&m, 7, "Files.PyPI.org", DNS_TYPE_AAAA);
	ck_assert_int_eq(dns_question_read(m.b, m.len, &n, &why), 0);
	ck_assert_str_eq(n.text, "files.pypi.org");
	ck_assert_uint_eq(n.len, 14);
	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_a(&m, 10, "10.1.2.3");
	set_count(&m, 6, 1);
	ck_assert_int_eq(dns_question_read(m.b, m.len, &n, &why), 0);
	ck_assert_str_eq(n.text, "a.test");
	/* two questions, none, a header cut short, a name cut short */
	set_count(&m, 4, 2);
	ck_assert_int_eq(dns_question_read(m.b, m.len, &n, &why), -EBADMSG);
	ck_assert_str_eq(why, "not exactly one question");
	set_count(&m, 4, 0);
	ck_assert_int_eq(dns_question_read(m.b, m.len, &n, &why), -EBADMSG);
	ck_assert_int_eq(dns_question_read(m.b, 11, &n, &why), -EBADMSG);
	make_query(&m, 7, "files.pypi.org", DNS_TYPE_A);
	ck_assert_int_eq(dns_question_read(m.b, 12 + 6, &n, &why), -EBADMSG);
	ck_assert_str_eq(n.text, "");
	/* a label with a dot in it: well-formed, no text */
	m.len = 0;
	put_hdr(&m, 1, 0, 1, 0, 0, 0);
	put_bytes(&m, "\x03" "a.b" "\x04" "test", 10);	/* and the root */
	put16(&m, DNS_TYPE_A);
	put16(&m, 1);
	ck_assert_int_eq(dns_question_read(m.b, m.len, &n, &why), -EILSEQ);
	ck_assert_uint_eq(n.len, 0);
}
END_TEST

START_TEST(test_response_direct)
{
	struct dns_name qn = name_of("a.test");
	struct got g = { 0 };
	struct msg m;
	const char *why = NULL;

	/* the A's own TTL is the least; a TTL with its top bit set is 0; two of one CNAME: the lesser */
	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_a(&m, 10, "10.1.2.3");
	put_ptr(&m, 12);
	put_a(&m, 0x80000000u, "10.1.2.4");
	put_ptr(&m, 12);
	put_aaaa(&m, 20, "fd00::1");
	set_count(&m, 6, 3);
	ck_assert_int_eq(dns_response_walk(m.b, m.len, &qn, collect, &g, &why), 3);
	ck_assert_uint_eq(g.ttl_s[0], 10);
	ck_assert_uint_eq(g.ttl_s[1], 0);
	ck_assert_str_eq(g.addr[2], "fd00::1");

	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_cname(&m, 500, "b.test");
	put_ptr(&m, 12);
	put_cname(&m, 50, "B.test");
	put_name(&m, "b.test");
	put_a(&m, 900, "10.9.9.9");
	set_count(&m, 6, 3);
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(dns_response_walk(m.b, m.len, &qn, collect, &g, &why), 1);
	ck_assert_uint_eq(g.ttl_s[0], 50);

	/* no answer (NODATA) */
	begin_answer(&m, "a.test", DNS_TYPE_AAAA);
	ck_assert_int_eq(dns_response_walk(m.b, m.len, &qn, collect, &g, &why), 0);

	/* NXDOMAIN: nothing bound, even with a CNAME and an A; the header says why */
	begin_answer(&m, "a.test", DNS_TYPE_A);
	m.b[3] |= DNS_RCODE_NXDOMAIN;
	put_ptr(&m, 12);
	put_a(&m, 10, "10.1.2.3");
	set_count(&m, 6, 1);
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(dns_response_walk(m.b, m.len, &qn, collect, &g, &why), 0);
	ck_assert_uint_eq(g.n, 0);

	/* a CNAME to a name without text ends the chain there; an owner without text is nobody */
	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_cname(&m, 5, "b\x01.test");
	put_name(&m, "b\x01.test");
	put_a(&m, 5, "10.6.6.6");
	put_ptr(&m, 12);
	put_a(&m, 5, "10.1.1.1");
	put_bytes(&m, "\6a.test", 8);	/* one label "a.test": its text would be the name asked */
	put_a(&m, 5, "10.7.7.7");
	set_count(&m, 6, 4);
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(dns_response_walk(m.b, m.len, &qn, collect, &g, &why), 1);
	ck_assert_str_eq(g.addr[0], "10.1.1.1");
}
END_TEST

START_TEST(test_response_malformed)
{
	struct dns_name qn;
	struct got g = { 0 };
	const char *why = NULL;
	struct msg m;
	size_t x;
	char name[16];

	begin_answer(&m, "a.test", DNS_TYPE_A);
	m.len = 5;
	expect_walk_err(&m, "a.test", -EBADMSG, "truncated header");
	begin_answer(&m, "a.test", DNS_TYPE_A);
	m.b[2] &= (uint8_t)~(F_QR >> 8);
	expect_walk_err(&m, "a.test", -EBADMSG, "a query, not a response (QR clear)");
	begin_answer(&m, "a.test", DNS_TYPE_A);
	m.b[2] |= 5 << 3;	/* UPDATE */
	expect_walk_err(&m, "a.test", -EOPNOTSUPP, "opcode is not QUERY");
	begin_answer(&m, "a.test", DNS_TYPE_A);
	set_count(&m, 4, 0);
	expect_walk_err(&m, "a.test", -EBADMSG, "not exactly one question");
	begin_answer(&m, "b.test", DNS_TYPE_A);
	expect_walk_err(&m, "a.test", -EBADMSG, "the question is not the name asked");
	begin_answer(&m, "a.test", DNS_TYPE_A);
	m.len -= 1;
	expect_walk_err(&m, "a.test", -EBADMSG, "truncated question");

	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_rr(&m, DNS_TYPE_A, DNS_CLASS_IN, 1, 5);
	put_bytes(&m, "\1\2\3\4\5", 5);
	set_count(&m, 6, 1);
	expect_walk_err(&m, "a.test", -EBADMSG, "A record whose data is not 4 bytes");
	begin_answer(&m, "a.test", DNS_TYPE_AAAA);
	put_ptr(&m, 12);
	put_rr(&m, DNS_TYPE_AAAA, DNS_CLASS_IN, 1, 4);
	put_bytes(&m, "\1\2\3\4", 4);
	set_count(&m, 6, 1);
	expect_walk_err(&m, "a.test", -EBADMSG, "AAAA record whose data is not 16 bytes");
	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_rr(&m, DNS_TYPE_CNAME, DNS_CLASS_IN, 1, 3);
	put_ptr(&m, 12);
	put8(&m, 0);
	set_count(&m, 6, 1);
	expect_walk_err(&m, "a.test", -EBADMSG, "CNAME data is not one name");

	/* an A record is reported only after the whole section is checked */
	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_a(&m, 1, "10.0.0.1");
	set_count(&m, 6, 2);
	expect_walk_err(&m, "a.test", -EBADMSG, "truncated answer record");
	put_ptr(&m, 12);
	put16(&m, DNS_TYPE_A);
	expect_walk_err(&m, "a.test", -EBADMSG, "truncated answer record");

	/* two pointers to each other: an A's data, then an owner pointing to it */
	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_rr(&m, 16, DNS_CLASS_IN, 1, 2);
	x = m.len;
	put_ptr(&m, x + 2);
	put_ptr(&m, x);
	put_a(&m, 1, "10.0.0.1");
	set_count(&m, 6, 2);
	expect_walk_err(&m, "a.test", -EBADMSG, "compression pointer loop");

	/* CNAME loops: to itself, and a -> b -> a */
	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_rr(&m, DNS_TYPE_CNAME, DNS_CLASS_IN, 1, 2);
	put_ptr(&m, 12);
	set_count(&m, 6, 1);
	expect_walk_err(&m, "a.test", -ELOOP, "CNAME loop");
	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_name(&m, "b.test");
	put_cname(&m, 1, "a.test");
	put_ptr(&m, 12);
	put_cname(&m, 1, "b.test");
	put_name(&m, "a.test");
	put_a(&m, 1, "10.0.0.1");
	set_count(&m, 6, 3);
	expect_walk_err(&m, "a.test", -ELOOP, "CNAME loop");

	/* two different CNAMEs for a name of the chain */
	begin_answer(&m, "a.test", DNS_TYPE_A);
	put_ptr(&m, 12);
	put_cname(&m, 1, "b.test");
	put_ptr(&m, 12);
	put_cname(&m, 1, "c.test");
	set_count(&m, 6, 2);
	expect_walk_err(&m, "a.test", -EBADMSG, "two CNAMEs for one name");

	/* more CNAME records than any chain needs */
	begin_answer(&m, "a.test", DNS_TYPE_A);
	for (int i = 0; i < 65; i++) {
		snprintf(name, sizeof(name), "x%d.test", i);
		put_name(&m, name);
		put_rr(&m, DNS_TYPE_CNAME, DNS_CLASS_IN, 1, 2);
		put_ptr(&m, 12);
	}
	set_count(&m, 6, 64);
	qn = name_of("a.test");
	ck_assert_int_eq(dns_response_walk(m.b, m.len, &qn, collect, &g, &why), 0);
	set_count(&m, 6, 65);
	expect_walk_err(&m, "a.test", -EBADMSG, "more than 64 CNAME records");

	/* 16 links are followed; 17 are too many */
	for (int links = 16; links <= 17; links++) {
		begin_answer(&m, "n0.test", DNS_TYPE_A);
		for (int i = links - 1; i >= 0; i--) {
			snprintf(name, sizeof(name), "n%d.test", i);
			put_name(&m, name);
			snprintf(name, sizeof(name), "n%d.test", i + 1);
			put_cname(&m, (uint32_t)(100 + i), name);
		}
		snprintf(name, sizeof(name), "n%d.test", links);
		put_name(&m, name);
		put_a(&m, 1000, "10.0.0.1");
		set_count(&m, 6, (unsigned int)links + 1);
		if (links == 16) {
			qn = name_of("n0.test");
			memset(&g, 0, sizeof(g));
			ck_assert_int_eq(dns_response_walk(m.b, m.len, &qn, collect, &g, &why), 1);
			ck_assert_uint_eq(g.ttl_s[0], 100);
		} else {
			expect_walk_err(&m, "n0.test", -ELOOP, "CNAME chain longer than 16");
		}
	}
}
END_TEST

START_TEST(test_refusal)
{
	struct dns_name qn = name_of("www.example.com");
	uint8_t out[600];
	struct dns_header h;
	struct dns_query q;
	struct msg m;
	const char *why = NULL;
	int len;

	make_query(&m, 0xbeef, "WwW.ExAmple.com", DNS_TYPE_AAAA);
	ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), 0);
	len = dns_refusal_build(m.b, m.len, &q, DNS_RCODE_REFUSED, out, sizeof(out));
	ck_assert_int_eq(len, 12 + 17 + 4);
	ck_assert_uint_eq(out[0], 0xbe);	/* id */
	ck_assert_uint_eq(out[1], 0xef);
	ck_assert_uint_eq(out[2], 0x81);	/* QR, opcode 0, not AA, not TC, RD */
	ck_assert_uint_eq(out[3], 0x85);	/* RA, Z 0, REFUSED */
	ck_assert_uint_eq(out[4], 0);		/* one question */
	ck_assert_uint_eq(out[5], 1);
	for (int i = 6; i < 12; i++)		/* no answer, authority, additional */
		ck_assert_uint_eq(out[i], 0);
	ck_assert_mem_eq(out + 12, "\3WwW\7ExAmple\3com\0", 17);	/* the case as sent */
	ck_assert_mem_eq(out + 29, "\0\x1c\0\1", 4);			/* AAAA IN */

	/* it reads back: our id and question, REFUSED, nothing to bind */
	ck_assert_int_eq(dns_header_parse(out, (size_t)len, &h, &why), 0);
	ck_assert(h.qr && h.rd && h.ra && !h.aa && !h.tc);
	ck_assert_uint_eq(h.id, 0xbeef);
	ck_assert_uint_eq(h.rcode, DNS_RCODE_REFUSED);
	ck_assert_int_eq(dns_response_walk(out, (size_t)len, &qn, collect, &(struct got){ 0 }, &why), 0);
	ck_assert_int_eq(dns_query_parse(out, (size_t)len, &q, &why), -EBADMSG);

	/* exactly the room it needs; one byte less writes nothing */
	ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), 0);
	memset(out, 0xaa, sizeof(out));
	ck_assert_int_eq(dns_refusal_build(m.b, m.len, &q, DNS_RCODE_NXDOMAIN, out, 32), -ENOSPC);
	ck_assert_uint_eq(out[0], 0xaa);
	ck_assert_int_eq(dns_refusal_build(m.b, m.len, &q, DNS_RCODE_NXDOMAIN, out, 33), 33);
	ck_assert_uint_eq(out[3], 0x80 | DNS_RCODE_NXDOMAIN);
	ck_assert_int_eq(dns_refusal_build(m.b, m.len, &q, 16, out, sizeof(out)), -EINVAL);
	/* NOERROR reads back as a walk of the same question: no answer */
	len = dns_refusal_build(m.b, m.len, &q, DNS_RCODE_NOERROR, out, sizeof(out));
	ck_assert_int_eq(dns_response_walk(out, (size_t)len, &qn, collect, &(struct got){ 0 }, &why), 0);
	/* a query q was not parsed from */
	ck_assert_int_eq(dns_refusal_build(m.b, 20, &q, DNS_RCODE_REFUSED, out, sizeof(out)), -EINVAL);

	/* RD clear stays clear */
	make_query(&m, 7, "a.test", DNS_TYPE_A);
	m.b[2] = 0;
	ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), 0);
	ck_assert_int_eq(dns_refusal_build(m.b, m.len, &q, DNS_RCODE_REFUSED, out, sizeof(out)), 12 + 8 + 4);
	ck_assert_uint_eq(out[2], 0x80);
	ck_assert_uint_eq(out[3], 0x85);

	/* a name without text: -EILSEQ, the root as its name, and still a refusal as sent */
	make_query(&m, 9, "a\x01.test", DNS_TYPE_A);
	ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), -EILSEQ);
	ck_assert_str_eq(why, "a label holds a '.' or a byte that is not printable ASCII");
	ck_assert_uint_eq(q.qname.len, 0);
	len = dns_refusal_build(m.b, m.len, &q, DNS_RCODE_REFUSED, out, sizeof(out));
	ck_assert_int_eq(len, 12 + 9 + 4);
	ck_assert_mem_eq(out + 12, "\2a\x01\4test\0", 9);
	make_query(&m, 9, "a.b.test", DNS_TYPE_A);
	m.b[12] = 3;		/* "\1a\1b" becomes "\3a.b": one label "a.b" */
	m.b[14] = '.';
	ck_assert_int_eq(dns_query_parse(m.b, m.len, &q, &why), -EILSEQ);
}
END_TEST

START_TEST(test_tcp_framing)
{
	uint8_t buf[64];
	size_t off = 99, len = 99, at;
	int ret;

	/* two pipelined messages of 5 and 3 bytes, then one byte of a third length */
	memcpy(buf, "\0\5hello\0\3abc\0", 13);
	ret = dns_tcp_next(buf, 13, &off, &len);
	ck_assert_int_eq(ret, 7);
	ck_assert_uint_eq(off, 2);
	ck_assert_uint_eq(len, 5);
	ck_assert_mem_eq(buf + off, "hello", 5);
	at = (size_t)ret;
	ret = dns_tcp_next(buf + at, 13 - at, &off, &len);
	ck_assert_int_eq(ret, 5);
	ck_assert_mem_eq(buf + at + off, "abc", 3);
	at += (size_t)ret;
	ck_assert_int_eq(dns_tcp_next(buf + at, 13 - at, &off, &len), 0);
	/* need more: nothing, a length alone, part of a message */
	ck_assert_int_eq(dns_tcp_next(buf, 0, &off, &len), 0);
	ck_assert_int_eq(dns_tcp_next(buf, 2, &off, &len), 0);
	ck_assert_int_eq(dns_tcp_next(buf, 6, &off, &len), 0);
	buf[0] = 0xff;
	ck_assert_int_eq(dns_tcp_next(buf, sizeof(buf), &off, &len), 0);
	/* a zero length breaks the stream */
	ck_assert_int_eq(dns_tcp_next((const uint8_t *)"\0\0abc", 5, &off, &len), -EBADMSG);
}
END_TEST

/*
 * Captured from dnsmasq 2.90 in a network namespace of its own (--no-resolv
 * --no-hosts --local-ttl=600 --host-record=a.test,10.1.2.3,fd00::123
 * --cname=b.test,a.test,300): the answers to "B.test A" and "b.test AAAA"
 * (a CNAME, 300 s, to a.test, 600 s; compressed; an EDNS OPT), and the
 * query "nope.test A" with dnsmasq's REFUSED for it (OPT with an RFC 8914
 * extended error).
 */
static const uint8_t dnsmasq_b_a[] = {
	0x42, 0x42, 0x85, 0x80, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01,
	0x01, 0x42, 0x04, 0x74, 0x65, 0x73, 0x74, 0x00, 0x00, 0x01, 0x00, 0x01,
	0xc0, 0x0c, 0x00, 0x05, 0x00, 0x01, 0x00, 0x00, 0x01, 0x2c, 0x00, 0x08,
	0x01, 0x61, 0x04, 0x74, 0x65, 0x73, 0x74, 0x00, 0xc0, 0x24, 0x00, 0x01,
	0x00, 0x01, 0x00, 0x00, 0x02, 0x58, 0x00, 0x04, 0x0a, 0x01, 0x02, 0x03,
	0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t dnsmasq_b_aaaa[] = {
	0x42, 0x43, 0x85, 0x80, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01,
	0x01, 0x62, 0x04, 0x74, 0x65, 0x73, 0x74, 0x00, 0x00, 0x1c, 0x00, 0x01,
	0xc0, 0x0c, 0x00, 0x05, 0x00, 0x01, 0x00, 0x00, 0x01, 0x2c, 0x00, 0x08,
	0x01, 0x61, 0x04, 0x74, 0x65, 0x73, 0x74, 0x00, 0xc0, 0x24, 0x00, 0x1c,
	0x00, 0x01, 0x00, 0x00, 0x02, 0x58, 0x00, 0x10, 0xfd, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x23,
	0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
static const uint8_t dnsmasq_nope_query[] = {
	0x42, 0x44, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x04, 0x6e, 0x6f, 0x70, 0x65, 0x04, 0x74, 0x65, 0x73, 0x74, 0x00, 0x00,
	0x01, 0x00, 0x01, 0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00,
};
static const uint8_t dnsmasq_nope_refused[] = {
	0x42, 0x44, 0x81, 0x85, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x04, 0x6e, 0x6f, 0x70, 0x65, 0x04, 0x74, 0x65, 0x73, 0x74, 0x00, 0x00,
	0x01, 0x00, 0x01, 0x00, 0x00, 0x29, 0x04, 0xd0, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x06, 0x00, 0x0f, 0x00, 0x02, 0x00, 0x0e,
};

START_TEST(test_dnsmasq)
{
	struct dns_name qn = name_of("b.test");
	struct got g = { 0 };
	struct dns_header h;
	struct dns_query q;
	const char *why = NULL;
	uint8_t out[64];

	ck_assert_int_eq(dns_response_walk(dnsmasq_b_a, sizeof(dnsmasq_b_a), &qn, collect, &g, &why), 1);
	ck_assert_str_eq(g.addr[0], "10.1.2.3");
	ck_assert_uint_eq(g.ttl_s[0], 300);
	ck_assert_int_eq(dns_response_walk(dnsmasq_b_aaaa, sizeof(dnsmasq_b_aaaa), &qn, collect, &g, &why), 1);
	ck_assert_str_eq(g.addr[1], "fd00::123");
	ck_assert_uint_eq(g.ttl_s[1], 300);
	/* a.test's addresses, but a.test was not asked */
	qn = name_of("a.test");
	ck_assert_int_eq(dns_response_walk(dnsmasq_b_a, sizeof(dnsmasq_b_a), &qn, collect, &g, &why), -EBADMSG);
	ck_assert_str_eq(why, "the question is not the name asked");

	/* our refusal is dnsmasq's, less its OPT record */
	ck_assert_int_eq(dns_query_parse(dnsmasq_nope_query, sizeof(dnsmasq_nope_query), &q, &why), 0);
	ck_assert_str_eq(q.qname.text, "nope.test");
	ck_assert_int_eq(dns_refusal_build(dnsmasq_nope_query, sizeof(dnsmasq_nope_query), &q, DNS_RCODE_REFUSED,
					     out, sizeof(out)), 12 + 11 + 4);
	ck_assert_mem_eq(out, dnsmasq_nope_refused, 11);
	ck_assert_uint_eq(out[11], 0);
	ck_assert_mem_eq(out + 12, dnsmasq_nope_refused + 12, 11 + 4);
	ck_assert_int_eq(dns_header_parse(dnsmasq_nope_refused, sizeof(dnsmasq_nope_refused), &h, &why), 0);
	ck_assert_uint_eq(h.rcode, DNS_RCODE_REFUSED);
}
END_TEST

static Suite *dns_suite(void)
{
	Suite *s = suite_create("datapath_dns");
	TCase *tc = tcase_create("dns");

	tcase_add_test(tc, test_name_from_text);
	tcase_add_test(tc, test_name_match);
	tcase_add_test(tc, test_header);
	tcase_add_test(tc, test_query);
	tcase_add_test(tc, test_query_malformed);
	tcase_add_test(tc, test_query_pointer_hops);
	tcase_add_test(tc, test_truncated_everywhere);
	tcase_add_test(tc, test_response_chain);
	tcase_add_test(tc, test_response_direct);
	tcase_add_test(tc, test_question_read);
	tcase_add_test(tc, test_response_malformed);
	tcase_add_test(tc, test_refusal);
	tcase_add_test(tc, test_tcp_framing);
	tcase_add_test(tc, test_dnsmasq);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dns_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
