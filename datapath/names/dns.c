// SPDX-License-Identifier: MIT
/*
 * dns.c - the DNS messages of the names policy: a container's query, the
 * addresses of its answer, the refusal the datapath answers itself
 *
 * Theory of operation
 *
 * The names policy lets a container reach what a rule names by DNS name.
 * The datapath sees the container's queries: one for a name no rule allows
 * is answered by the datapath itself with a refusal (dns_refusal_build());
 * one that a rule allows goes on, and the addresses its answer gives for
 * the name asked are bound for as long as their TTL says
 * (dns_response_walk()). This file is the codec only: bytes in, host-order
 * structs and callbacks out. It keeps no state, allocates nothing, and
 * names nothing of the datapath (a leaf: libc and dns.h).
 *
 * Names. A name is held as text (struct dns_name): lowercase (RFC 4343:
 * ASCII case folding only), labels joined by '.', no trailing dot, the root
 * "". A rule's name comes from dns_name_from_text(), the hostname syntax of
 * RFC 1123 2.1 plus '_' (service labels), with an optional leading "*."
 * that dns_name_match() reads as "one label or more in front". A name read
 * from a message may hold any byte; the text form is only unambiguous when
 * no label holds a '.' and every byte is printable ASCII, so a name that
 * breaks that is well-formed (no -EBADMSG) but has no text: -EILSEQ. Such a
 * question is refused, such an owner in an answer is nobody's name, and a
 * CNAME to it ends the chain. Comparing texts is then comparing names.
 *
 * Compression (RFC 1035 4.1.4). A name is a run of labels, possibly ended
 * by a pointer to where the rest of it was written before. Decoding keeps
 * the offset where the current run started; a pointer must lead to a byte
 * strictly before it (and after the header: no name lives there). The runs
 * thus start at ever lower offsets and decoding ends, whatever the bytes;
 * a cap of DNS_PTR_HOPS_MAX pointers and the 255-byte limit of the name as
 * it would be written uncompressed (RFC 1035 2.3.4) bound the work of one
 * name. A pointer that breaks the rule is told apart for the reason: out
 * of the message, into the header, back into bytes this name already
 * read (a loop: a pointer to itself, two pointers to each other), or
 * forward. Label types 0x40 and 0x80 (RFC 6891 5 retired the only one
 * defined) are refused, which also refuses a label longer than 63 bytes:
 * its length octet has those bits.
 *
 * Queries (dns_query_parse()). QR clear, opcode QUERY, exactly one
 * question (RFC 9619), no answer or authority records; additional records
 * (the EDNS OPT of RFC 6891 6.1) are bounds-checked and skipped; bytes
 * after the last record are counted, not refused. The question is the
 * first name of the message, so it can never be compressed under the rule
 * above.
 *
 * Responses (dns_response_walk()). QR set, opcode QUERY; any rcode but
 * NOERROR binds nothing (dns_header_parse() tells which). The question
 * must be the name asked. Three passes over the answer section: the first
 * checks every record whole (names, lengths, A data 4 bytes, AAAA 16, a
 * CNAME's data exactly one name), so that no address is reported from a
 * message that turns out broken, and notes where the CNAMEs are (at most
 * DNS_CNAME_RECORDS_MAX: each link of the chain reads them all again, and
 * one name may take 128 pointers to read); the second follows the CNAME
 * chain from the name asked, in whatever order the records come, at most
 * DNS_CNAME_CHAIN_MAX links, a loop refused (RFC 1034 3.6.2: one CNAME per
 * name; two different ones for a name on the chain are refused); the third
 * reports each A and AAAA record whose owner is on the chain, with the
 * least TTL of the CNAMEs that led there and its own (RFC 2181 8: a TTL
 * with the top bit set is 0). Class IN only. A record of any other owner
 * is ignored: an answer may carry addresses for names nobody asked, and
 * binding those is the classic cache-poisoning trick. DNAME (RFC 6672) is
 * ignored too: its server synthesises the CNAME that is followed. The
 * authority and additional sections are not read. TC is the caller's to
 * look at (the client retries over TCP). The work is linear in the
 * message: each record's names are read twice at most, the CNAMEs' 18
 * times at most.
 *
 * Not done: DNSSEC, EDNS in the refusal (RFC 6891 7: a responder may leave
 * OPT out), any record type but A, AAAA, CNAME and a skipped OPT.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "datapath/names/dns.h"

/* pointers followed in one name: it has 127 labels at most, and a compressor points at labels */
#define DNS_PTR_HOPS_MAX	128
/*
 * CNAME records in one answer: a chain needs DNS_CNAME_CHAIN_MAX; more only
 * make the chain's search (up to DNS_CNAME_CHAIN_MAX + 1 rounds) cost more
 */
#define DNS_CNAME_RECORDS_MAX	64

/* RFC 1035 4.1.1 header flags */
#define DNS_F_QR		0x8000
#define DNS_F_OPCODE_SHIFT	11
#define DNS_F_AA		0x0400
#define DNS_F_TC		0x0200
#define DNS_F_RD		0x0100
#define DNS_F_RA		0x0080
#define DNS_F_RCODE		0x000f

const char *const dns_rcode_names[DNS_RCODE_MAX] = {
	[DNS_RCODE_NOERROR] = "NOERROR",
	[DNS_RCODE_FORMERR] = "FORMERR",
	[DNS_RCODE_SERVFAIL] = "SERVFAIL",
	[DNS_RCODE_NXDOMAIN] = "NXDOMAIN",
	[DNS_RCODE_NOTIMP] = "NOTIMP",
	[DNS_RCODE_REFUSED] = "REFUSED",
};
_Static_assert(sizeof(dns_rcode_names) / sizeof(dns_rcode_names[0]) == DNS_RCODE_MAX, "a name per rcode");

/**
 * struct dns_rr - one resource record's fixed part (RFC 1035 4.1.3)
 * @owner:	offset of its owner name
 * @type:	DNS_TYPE_A, ...
 * @class:	DNS_CLASS_IN, ...
 * @ttl_s:	seconds, 0 for a TTL with the top bit set (RFC 2181 8)
 * @rdata:	offset of its data
 * @rdlen:	bytes of data
 * @end:	offset just past it
 */
struct dns_rr {
	size_t owner;
	uint16_t type, class;
	uint32_t ttl_s;
	size_t rdata;
	uint16_t rdlen;
	size_t end;
};

static int dns_fail(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

/* The @n bytes at @off of a @len-byte message, or NULL when they are not all there. */
static const uint8_t *dns_peek(const uint8_t *msg, size_t len, size_t off, size_t n)
{
	if (off > len || n > len - off)
		return NULL;
	return msg + off;
}

static uint16_t dns_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t dns_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void dns_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static bool dns_name_eq(const struct dns_name *a, const struct dns_name *b)
{
	return a->len == b->len && !memcmp(a->text, b->text, a->len);
}

/*
 * Why pointer target @t breaks the rule (theory of operation); the name's
 * runs so far are run[i] .. ptr[i] + 1, their pointers included, the last
 * (i == @hops) ending at the pointer that points to @t.
 */
static const char *dns_ptr_fault(size_t len, size_t t, const size_t *run, const size_t *ptr, unsigned int hops)
{
	unsigned int i;

	if (t >= len)
		return "compression pointer out of the message";
	if (t < DNS_HDR_LEN)
		return "compression pointer into the header";
	for (i = 0; i <= hops; i++)
		if (t >= run[i] && t <= ptr[i] + 1)
			return "compression pointer loop";
	return "compression pointer forward";
}

/**
 * dns_name_read() - one name of a message, compression followed
 * @msg:	the whole message (pointers are offsets into it)
 * @len:	its length
 * @off:	where the name starts
 * @end:	receives the offset just past the name where it starts (past its
 *		root label or its first pointer)
 * @name:	receives its text, or NULL
 * @wire:	receives it uncompressed with its case as sent, or NULL;
 *		DNS_WIRE_NAME_MAX bytes
 * @wire_len:	receives the length of that, or NULL
 * @why:	receives the reason of a failure, or NULL
 *
 * Return: 0; -EBADMSG for a broken name; -EILSEQ for a well-formed name
 * whose text would be ambiguous (@name asked for only).
 */
static int dns_name_read(const uint8_t *msg, size_t len, size_t off, size_t *end, struct dns_name *name,
			 uint8_t *wire, size_t *wire_len, const char **why)
{
	size_t run[DNS_PTR_HOPS_MAX + 1], ptr[DNS_PTR_HOPS_MAX + 1];
	size_t pos = off, wlen = 0, tlen = 0, i;
	unsigned int hops = 0;
	bool ambiguous = false;
	const uint8_t *p;
	uint8_t n;

	run[0] = off;
	for (;;) {
		p = dns_peek(msg, len, pos, 1);
		if (!p)
			return dns_fail(why, "truncated name", -EBADMSG);
		n = *p;
		if ((n & 0xc0) == 0xc0) {
			size_t t;

			p = dns_peek(msg, len, pos, 2);
			if (!p)
				return dns_fail(why, "truncated name", -EBADMSG);
			t = dns_get16(p) & 0x3fff;
			ptr[hops] = pos;
			if (t >= run[hops] || t < DNS_HDR_LEN)
				return dns_fail(why, dns_ptr_fault(len, t, run, ptr, hops), -EBADMSG);
			if (hops == DNS_PTR_HOPS_MAX)
				return dns_fail(why, "more than 128 compression pointers in a name", -EBADMSG);
			if (!hops)
				*end = pos + 2;
			run[++hops] = t;
			pos = t;
			continue;
		}
		if (n & 0xc0)
			return dns_fail(why, "label longer than 63 bytes (label types 0x40, 0x80)", -EBADMSG);
		if (!n)
			break;
		/* RFC 1035 2.3.4: the length octets and the root's count */
		if (wlen + 1 + n + 1 > DNS_WIRE_NAME_MAX)
			return dns_fail(why, "name longer than 255 bytes on the wire", -EBADMSG);
		p = dns_peek(msg, len, pos + 1, n);
		if (!p)
			return dns_fail(why, "truncated name", -EBADMSG);
		if (wire) {
			wire[wlen] = n;
			memcpy(wire + wlen + 1, p, n);
		}
		if (name) {
			if (tlen)
				name->text[tlen++] = '.';
			for (i = 0; i < n; i++) {
				uint8_t c = p[i];

				if (c == '.' || c < 0x21 || c > 0x7e)
					ambiguous = true;
				name->text[tlen++] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
			}
		}
		wlen += 1u + n;
		pos += 1u + n;
	}
	if (!hops)
		*end = pos + 1;
	if (wire)
		wire[wlen] = 0;
	if (wire_len)
		*wire_len = wlen + 1;
	if (name) {
		name->text[tlen] = 0;
		name->len = (uint16_t)tlen;
		if (ambiguous)
			return dns_fail(why, "a label holds a '.' or a byte that is not printable ASCII", -EILSEQ);
	}
	return 0;
}

/* One resource record at @off, whole: its owner, its fixed part, its data. */
static int dns_rr_read(const uint8_t *msg, size_t len, size_t off, struct dns_rr *rr, const char *truncated,
		       const char **why)
{
	const uint8_t *p;
	size_t fixed;
	uint32_t ttl;
	int ret;

	rr->owner = off;
	if (!dns_peek(msg, len, off, 1))
		return dns_fail(why, truncated, -EBADMSG);	/* not even begun */
	ret = dns_name_read(msg, len, off, &fixed, NULL, NULL, NULL, why);
	if (ret)
		return ret;
	p = dns_peek(msg, len, fixed, 10);
	if (!p)
		return dns_fail(why, truncated, -EBADMSG);
	rr->type = dns_get16(p);
	rr->class = dns_get16(p + 2);
	ttl = dns_get32(p + 4);
	rr->ttl_s = ttl > 0x7fffffff ? 0 : ttl;
	rr->rdlen = dns_get16(p + 8);
	rr->rdata = fixed + 10;
	if (!dns_peek(msg, len, rr->rdata, rr->rdlen))
		return dns_fail(why, truncated, -EBADMSG);
	rr->end = rr->rdata + rr->rdlen;
	return 0;
}

/**
 * dns_name_from_text() - a name as a user writes it in a rule
 * @text:	"api.example.com", "Example.COM.", "*.example.com"
 * @allow_wildcard: a leading "*." may stand for one label or more
 * @out:	receives the name, lowercase, without a trailing dot, "*." kept
 * @why:	receives the reason of a refusal, or NULL
 *
 * Labels of 1-63 letters, digits, '-' and '_', not starting or ending with
 * '-' (RFC 1123 2.1, '_' for service labels), 253 bytes in all, one
 * trailing dot allowed.
 *
 * Return: 0 or -EINVAL.
 */
int dns_name_from_text(const char *text, bool allow_wildcard, struct dns_name *out, const char **why)
{
	size_t len = strnlen(text, DNS_NAME_MAX + 2), i, start = 0;

	out->text[0] = 0;
	out->len = 0;
	if (len && text[len - 1] == '.')
		len--;
	if (!len)
		return dns_fail(why, "empty name", -EINVAL);
	if (len > DNS_NAME_MAX)
		return dns_fail(why, "name longer than 253 bytes", -EINVAL);
	if (text[0] == '*') {
		if (!allow_wildcard)
			return dns_fail(why, "a wildcard where none is allowed", -EINVAL);
		if (len == 1 || (len == 2 && text[1] == '.'))
			return dns_fail(why, "nothing after the wildcard", -EINVAL);
		if (text[1] != '.')
			return dns_fail(why, "'*' other than as the whole first label", -EINVAL);
		start = 2;
	}
	for (i = start; i <= len; i++) {
		char c = i < len ? text[i] : '.';

		if (c == '.') {
			if (i == start)
				return dns_fail(why, "empty label", -EINVAL);
			if (i - start > DNS_LABEL_MAX)
				return dns_fail(why, "label longer than 63 bytes", -EINVAL);
			if (text[start] == '-' || text[i - 1] == '-')
				return dns_fail(why, "label starts or ends with '-'", -EINVAL);
			start = i + 1;
		} else if (c == '*') {
			return dns_fail(why, allow_wildcard ? "'*' other than as the whole first label" :
					"a wildcard where none is allowed", -EINVAL);
		} else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			     c == '-' || c == '_')) {
			return dns_fail(why, "a character other than a letter, a digit, '-' or '_'", -EINVAL);
		}
	}
	for (i = 0; i < len; i++)
		out->text[i] = (char)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] + ('a' - 'A') : text[i]);
	out->text[len] = 0;
	out->len = (uint16_t)len;
	return 0;
}

/**
 * dns_name_match() - a rule's name allows a name
 * @pattern:	"example.com" (that name only) or "*.example.com" (every name
 *		with one label or more in front of example.com, not
 *		example.com itself)
 * @name:	the name asked
 *
 * Return: true when @pattern allows @name.
 */
bool dns_name_match(const struct dns_name *pattern, const struct dns_name *name)
{
	size_t suffix_len;

	if (pattern->len < 3 || pattern->text[0] != '*' || pattern->text[1] != '.')
		return dns_name_eq(pattern, name);
	/* ".example.com": labels hold no '.', so this is a label boundary */
	suffix_len = pattern->len - 1u;
	return name->len > suffix_len &&
	       !memcmp(name->text + name->len - suffix_len, pattern->text + 1, suffix_len);
}

/**
 * dns_header_parse() - the fixed header of a message (RFC 1035 4.1.1)
 * @msg:	the message
 * @len:	its length
 * @h:		receives the header in host order
 * @why:	receives the reason of a failure, or NULL
 *
 * Return: 0 or -EBADMSG (shorter than a header).
 */
int dns_header_parse(const uint8_t *msg, size_t len, struct dns_header *h, const char **why)
{
	const uint8_t *p = dns_peek(msg, len, 0, DNS_HDR_LEN);
	uint16_t flags;

	memset(h, 0, sizeof(*h));
	if (!p)
		return dns_fail(why, "truncated header", -EBADMSG);
	flags = dns_get16(p + 2);
	h->id = dns_get16(p);
	h->qr = flags & DNS_F_QR;
	h->opcode = (flags >> DNS_F_OPCODE_SHIFT) & 0xf;
	h->aa = flags & DNS_F_AA;
	h->tc = flags & DNS_F_TC;
	h->rd = flags & DNS_F_RD;
	h->ra = flags & DNS_F_RA;
	h->rcode = flags & DNS_F_RCODE;
	h->qdcount = dns_get16(p + 4);
	h->ancount = dns_get16(p + 6);
	h->nscount = dns_get16(p + 8);
	h->arcount = dns_get16(p + 10);
	return 0;
}

/**
 * dns_query_parse() - a query a container sent
 * @msg:	the message (over UDP, or one dns_tcp_next() framed)
 * @len:	its length
 * @q:		receives what it asks
 * @why:	receives the reason of a failure, or NULL
 *
 * Return: 0; -EBADMSG for a malformed message or one that is not a query
 * with one question; -EOPNOTSUPP for an opcode other than QUERY; -EILSEQ
 * for a well-formed query whose name has no text (a label holding a '.' or
 * a byte that is not printable ASCII): @q is then filled in with the root
 * as its name, so that it can be refused (dns_refusal_build()).
 */
int dns_query_parse(const uint8_t *msg, size_t len, struct dns_query *q, const char **why)
{
	const char *name_why = NULL;
	struct dns_rr rr;
	const uint8_t *p;
	unsigned int i;
	size_t off;
	int ret, name_ret;

	memset(q, 0, sizeof(*q));
	ret = dns_header_parse(msg, len, &q->hdr, why);
	if (ret)
		return ret;
	if (q->hdr.qr)
		return dns_fail(why, "a response, not a query (QR set)", -EBADMSG);
	if (q->hdr.opcode)
		return dns_fail(why, "opcode is not QUERY", -EOPNOTSUPP);
	if (q->hdr.qdcount != 1)
		return dns_fail(why, "not exactly one question", -EBADMSG);
	if (q->hdr.ancount || q->hdr.nscount)
		return dns_fail(why, "answer or authority records in a query", -EBADMSG);
	name_ret = dns_name_read(msg, len, DNS_HDR_LEN, &off, &q->qname, NULL, NULL, &name_why);
	if (name_ret == -EBADMSG)
		return dns_fail(why, name_why, -EBADMSG);
	p = dns_peek(msg, len, off, 4);
	if (!p)
		return dns_fail(why, "truncated question", -EBADMSG);
	q->qtype = dns_get16(p);
	q->qclass = dns_get16(p + 2);
	off += 4;
	q->question_end = off;
	/* RFC 6891 6.1.1: the OPT record lives here; nothing in it is ours */
	for (i = 0; i < q->hdr.arcount; i++) {
		ret = dns_rr_read(msg, len, off, &rr, "truncated additional record", why);
		if (ret)
			return ret;
		off = rr.end;
	}
	q->trailing = len - off;
	if (name_ret) {
		q->qname.text[0] = 0;
		q->qname.len = 0;
		return dns_fail(why, name_why, name_ret);
	}
	return 0;
}

/**
 * dns_question_read() - the one question's name of a query or a response
 * @msg:	the message
 * @len:	its length
 * @qname:	receives the name ("" on a failure)
 * @why:	receives the reason of a failure, or NULL
 *
 * A response's addresses are bound to the name it answers: the caller
 * reads the name here, decides by it, and hands it to dns_response_walk(),
 * which checks the question again.
 *
 * Return: 0; -EBADMSG for a malformed header or name, or not exactly one
 * question; -EILSEQ for a name with no text (see "Names" above).
 */
int dns_question_read(const uint8_t *msg, size_t len, struct dns_name *qname, const char **why)
{
	struct dns_header h;
	size_t end;
	int ret;

	qname->text[0] = 0;
	qname->len = 0;
	ret = dns_header_parse(msg, len, &h, why);
	if (ret)
		return ret;
	if (h.qdcount != 1)
		return dns_fail(why, "not exactly one question", -EBADMSG);
	ret = dns_name_read(msg, len, DNS_HDR_LEN, &end, qname, NULL, NULL, why);
	if (ret) {
		qname->text[0] = 0;
		qname->len = 0;
	}
	return ret;
}

/* The text of the name at @off, or -EILSEQ for one without (nobody's name). */
static int dns_name_at(const uint8_t *msg, size_t len, size_t off, struct dns_name *name)
{
	size_t end;

	return dns_name_read(msg, len, off, &end, name, NULL, NULL, NULL);
}

/**
 * struct dns_cnames - the CNAME records of class IN of an answer section
 * @n:		how many
 * @rec:	each one's owner and data offsets and its TTL
 */
struct dns_cnames {
	unsigned int n;
	struct {
		size_t owner, target;
		uint32_t ttl_s;
	} rec[DNS_CNAME_RECORDS_MAX];
};

/* Pass 1: every answer record whole, those we read well-formed, the CNAMEs into @cn. */
static int dns_answers_check(const uint8_t *msg, size_t len, size_t off, unsigned int count,
			     struct dns_cnames *cn, const char **why)
{
	struct dns_rr rr;
	unsigned int i;
	size_t end;
	int ret;

	cn->n = 0;
	for (i = 0; i < count; i++) {
		ret = dns_rr_read(msg, len, off, &rr, "truncated answer record", why);
		if (ret)
			return ret;
		off = rr.end;
		if (rr.class != DNS_CLASS_IN)
			continue;
		if (rr.type == DNS_TYPE_A && rr.rdlen != 4)
			return dns_fail(why, "A record whose data is not 4 bytes", -EBADMSG);
		if (rr.type == DNS_TYPE_AAAA && rr.rdlen != 16)
			return dns_fail(why, "AAAA record whose data is not 16 bytes", -EBADMSG);
		if (rr.type != DNS_TYPE_CNAME)
			continue;
		ret = dns_name_read(msg, len, rr.rdata, &end, NULL, NULL, NULL, why);
		if (ret)
			return ret;
		if (end != rr.end)
			return dns_fail(why, "CNAME data is not one name", -EBADMSG);
		if (cn->n == DNS_CNAME_RECORDS_MAX)
			return dns_fail(why, "more than 64 CNAME records", -EBADMSG);
		cn->rec[cn->n].owner = rr.owner;
		cn->rec[cn->n].target = rr.rdata;
		cn->rec[cn->n].ttl_s = rr.ttl_s;
		cn->n++;
	}
	return 0;
}

/*
 * Pass 2: the CNAME of @owner, into @target and @ttl_s. Return: 1 found, 0
 * none, -EILSEQ one to a name without text (the chain ends there), -EBADMSG
 * two different ones.
 */
static int dns_cname_of(const uint8_t *msg, size_t len, const struct dns_cnames *cn,
			const struct dns_name *owner, struct dns_name *target, uint32_t *ttl_s, const char **why)
{
	struct dns_name name, t;
	unsigned int i;
	int found = 0;

	for (i = 0; i < cn->n; i++) {
		if (dns_name_at(msg, len, cn->rec[i].owner, &name) || !dns_name_eq(&name, owner))
			continue;
		if (dns_name_at(msg, len, cn->rec[i].target, &t))
			return -EILSEQ;		/* pass 1 found it well-formed */
		if (found && !dns_name_eq(&t, target))
			return dns_fail(why, "two CNAMEs for one name", -EBADMSG);
		/* the same record twice: the lesser TTL */
		if (!found || cn->rec[i].ttl_s < *ttl_s)
			*ttl_s = cn->rec[i].ttl_s;
		*target = t;
		found = 1;
	}
	return found;
}

/**
 * dns_response_walk() - the addresses a response gives for the name asked
 * @msg:	the response (over UDP, or one dns_tcp_next() framed)
 * @len:	its length
 * @qname:	the name the query asked (struct dns_query's)
 * @cb:		called for each address, or NULL to count them only
 * @ctx:	handed to @cb
 * @why:	receives the reason of a failure, or NULL
 *
 * Reports the A and AAAA records of class IN whose owner is @qname or a
 * name the CNAME chain from @qname reaches, each with the least TTL along
 * the way to it; nothing is reported before the whole answer section has
 * been checked. A response whose rcode is not NOERROR reports nothing
 * (dns_header_parse() gives the rcode).
 *
 * Return: the number of addresses reported; -EBADMSG for a malformed
 * message, a query, or one whose question is not @qname; -EOPNOTSUPP for
 * an opcode other than QUERY; -ELOOP for a CNAME loop or a chain longer
 * than DNS_CNAME_CHAIN_MAX; or what @cb returned to stop.
 */
int dns_response_walk(const uint8_t *msg, size_t len, const struct dns_name *qname, dns_addr_fn cb, void *ctx,
		      const char **why)
{
	struct dns_name chain[DNS_CNAME_CHAIN_MAX + 1], name;
	uint32_t chain_ttl_s[DNS_CNAME_CHAIN_MAX + 1], ttl_s = 0;
	unsigned int n_chain = 1, i, j;
	size_t off, answers;
	struct dns_cnames cn;
	struct dns_header h;
	struct dns_rr rr;
	int ret, found = 0;

	ret = dns_header_parse(msg, len, &h, why);
	if (ret)
		return ret;
	if (!h.qr)
		return dns_fail(why, "a query, not a response (QR clear)", -EBADMSG);
	if (h.opcode)
		return dns_fail(why, "opcode is not QUERY", -EOPNOTSUPP);
	if (h.rcode != DNS_RCODE_NOERROR)
		return 0;
	if (h.qdcount != 1)
		return dns_fail(why, "not exactly one question", -EBADMSG);
	ret = dns_name_read(msg, len, DNS_HDR_LEN, &off, &name, NULL, NULL, why);
	if (ret == -EBADMSG)
		return ret;
	if (ret || !dns_name_eq(&name, qname))
		return dns_fail(why, "the question is not the name asked", -EBADMSG);
	if (!dns_peek(msg, len, off, 4))
		return dns_fail(why, "truncated question", -EBADMSG);
	answers = off + 4;
	ret = dns_answers_check(msg, len, answers, h.ancount, &cn, why);
	if (ret)
		return ret;

	chain[0] = *qname;
	chain_ttl_s[0] = UINT32_MAX;
	for (;;) {
		struct dns_name target;

		ret = dns_cname_of(msg, len, &cn, &chain[n_chain - 1], &target, &ttl_s, why);
		if (ret == 0 || ret == -EILSEQ)
			break;
		if (ret < 0)
			return ret;
		for (j = 0; j < n_chain; j++)
			if (dns_name_eq(&chain[j], &target))
				return dns_fail(why, "CNAME loop", -ELOOP);
		if (n_chain > DNS_CNAME_CHAIN_MAX)
			return dns_fail(why, "CNAME chain longer than 16", -ELOOP);
		chain[n_chain] = target;
		chain_ttl_s[n_chain] = ttl_s < chain_ttl_s[n_chain - 1] ? ttl_s : chain_ttl_s[n_chain - 1];
		n_chain++;
	}

	for (i = 0, off = answers; i < h.ancount; i++, off = rr.end) {
		if (dns_rr_read(msg, len, off, &rr, "truncated answer record", why))
			return -EBADMSG;	/* pass 1 read it whole */
		if (rr.class != DNS_CLASS_IN || (rr.type != DNS_TYPE_A && rr.type != DNS_TYPE_AAAA) ||
		    dns_name_at(msg, len, rr.owner, &name))
			continue;
		for (j = 0; j < n_chain && !dns_name_eq(&chain[j], &name); j++)
			;
		if (j == n_chain)
			continue;	/* not a name asked: never bound */
		ttl_s = rr.ttl_s < chain_ttl_s[j] ? rr.ttl_s : chain_ttl_s[j];
		if (cb) {
			ret = cb(ctx, rr.type == DNS_TYPE_A ? AF_INET : AF_INET6, msg + rr.rdata, ttl_s);
			if (ret < 0)
				return ret;
		}
		found++;
	}
	return found;
}

/**
 * dns_refusal_build() - the answer the datapath gives a query it refuses
 * @query:	the query as the container sent it
 * @qlen:	its length
 * @q:		what dns_query_parse() found in it (0 or -EILSEQ)
 * @rcode:	DNS_RCODE_REFUSED or DNS_RCODE_NXDOMAIN (any 4-bit rcode)
 * @out:	receives the answer
 * @cap:	bytes at @out
 *
 * The same id, QR, opcode QUERY, RD copied, RA set, @rcode; the question
 * as sent (case kept, written uncompressed); no other record (no OPT: RFC
 * 6891 7 lets a responder leave it out).
 *
 * Return: the answer's length; -ENOSPC when @cap is too small (nothing
 * written); -EINVAL for an rcode over 15 or a @query @q was not parsed from.
 */
int dns_refusal_build(const uint8_t *query, size_t qlen, const struct dns_query *q, unsigned int rcode,
		      uint8_t *out, size_t cap)
{
	uint8_t wire[DNS_WIRE_NAME_MAX];
	const uint8_t *tail;
	size_t wire_len, end, total;

	if (rcode > DNS_F_RCODE)
		return -EINVAL;
	if (dns_name_read(query, qlen, DNS_HDR_LEN, &end, NULL, wire, &wire_len, NULL) ||
	    end + 4 != q->question_end)
		return -EINVAL;
	tail = dns_peek(query, qlen, end, 4);
	if (!tail)
		return -EINVAL;
	total = DNS_HDR_LEN + wire_len + 4;
	if (total > cap)
		return -ENOSPC;
	dns_put16(out, q->hdr.id);
	dns_put16(out + 2, (uint16_t)(DNS_F_QR | (q->hdr.rd ? DNS_F_RD : 0) | DNS_F_RA | rcode));
	dns_put16(out + 4, 1);
	dns_put16(out + 6, 0);
	dns_put16(out + 8, 0);
	dns_put16(out + 10, 0);
	memcpy(out + DNS_HDR_LEN, wire, wire_len);
	memcpy(out + DNS_HDR_LEN + wire_len, tail, 4);	/* QTYPE, QCLASS as sent */
	return (int)total;
}

/**
 * dns_tcp_next() - the first whole message of a DNS-over-TCP stream
 * @buf:	the bytes received so far, from a message boundary on
 * @len:	their count
 * @msg_off:	receives the message's offset in @buf (past its length)
 * @msg_len:	receives its length
 *
 * RFC 1035 4.2.2, RFC 7766 8: each message goes behind a two-byte length,
 * and a client may send several back to back (pipelining).
 *
 * Return: the bytes the framed message takes (length included: the next
 * one starts there); 0 when it is not all there yet; -EBADMSG for a
 * zero length (no message is empty: the stream is broken).
 */
int dns_tcp_next(const uint8_t *buf, size_t len, size_t *msg_off, size_t *msg_len)
{
	const uint8_t *p = dns_peek(buf, len, 0, 2);
	uint16_t n;

	if (!p)
		return 0;
	n = dns_get16(p);
	if (!n)
		return -EBADMSG;
	if (!dns_peek(buf, len, 2, n))
		return 0;
	*msg_off = 2;
	*msg_len = n;
	return 2 + n;
}
