// SPDX-License-Identifier: MIT
/*
 * fuzz_dns.c - libFuzzer target for the names policy's DNS codec
 * (datapath/names/dns.c)
 *
 * Theory of operation
 *
 * The queries come from whatever runs in the container, the responses from
 * whatever answers them: every byte is hostile. The input is read three
 * ways at once:
 *
 * - as one DNS message, and as a DNS-over-TCP stream: every message
 *   dns_tcp_next() frames out of it is a message too (each lies inside the
 *   input, behind its two length bytes; a refusal means a zero length).
 *   Each message goes through dns_query_parse(), a refusal for what it
 *   parsed (dns_refusal_build(), into a buffer of exactly the size it
 *   needs and one a byte short), and dns_response_walk() for the name of
 *   its question (read as a query's: a copy with QR clear and no records;
 *   "example.com" when there is none); dns_question_read() must find the
 *   same name there;
 * - as a rule's name, up to its first NUL (dns_name_from_text()).
 *
 * Checked: every failure is one of the errnos documented, with a reason. A
 * parsed query's name is lowercase text of at most 253 bytes without an
 * empty label. A refusal is written only when it fits, parses back with the
 * query's id, RD, QR, the rcode asked and the question's bytes as sent, and
 * a NOERROR one walks back to no address for the same name. A walk reports
 * as many addresses as it returns, each from an A or AAAA record of class
 * IN in the answer section with those bytes (found by a reader here that
 * shares no code with dns.c), whose TTL is at least the one reported; from
 * a record whose owner is not the name asked only when that name has a
 * CNAME, and never with a TTL above that CNAME's (the chain's first link).
 * A rule's name parses back to itself and matches itself.
 *
 * Seeds: tests/fuzz/corpus/dns/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "datapath/names/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_dns: %s\n", what);
	abort();
}

/* ---- an independent reader: lenient, only to look things up ---- */

static uint16_t fz_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Past the name at @off (labels to the root, or to a pointer), or 0. */
static size_t fz_skip_name(const uint8_t *m, size_t len, size_t off)
{
	while (off < len) {
		if ((m[off] & 0xc0) == 0xc0)
			return off + 2 <= len ? off + 2 : 0;
		if (!m[off])
			return off + 1;
		off += 1u + m[off];
	}
	return 0;
}

/* The name at @off, pointers followed anywhere, lowercase, as length-prefixed labels; false if none. */
static bool fz_read_name(const uint8_t *m, size_t len, size_t off, uint8_t *out, size_t *out_len)
{
	unsigned int hops = 0;
	size_t n = 0, i;

	while (off < len) {
		uint8_t l = m[off];

		if ((l & 0xc0) == 0xc0) {
			if (off + 2 > len || ++hops > 200)
				return false;
			off = fz_get16(m + off) & 0x3fff;
			continue;
		}
		if (l > 63 || off + 1 + l > len || n + 1 + l > 300)
			return false;
		out[n++] = l;
		if (!l) {
			*out_len = n;
			return true;
		}
		for (i = 0; i < l; i++) {
			uint8_t c = m[off + 1 + i];

			out[n++] = c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
		}
		off += 1u + l;
	}
	return false;
}

/* A name's text as length-prefixed labels (the text holds no '.' inside a label). */
static size_t fz_text_wire(const struct dns_name *name, uint8_t *out)
{
	size_t n = 0, i = 0, start;

	while (i < name->len) {
		start = i;
		while (i < name->len && name->text[i] != '.')
			i++;
		out[n++] = (uint8_t)(i - start);
		memcpy(out + n, name->text + start, i - start);
		n += i - start;
		i++;
	}
	out[n++] = 0;
	return n;
}

/* ---- the checks ---- */

/* An answer record as the independent reader sees it. */
struct fz_rr {
	uint16_t type, class, rdlen;
	uint32_t ttl_s;
	size_t rdata;
	bool ours;		/* its owner is the name asked */
};

struct fz_walk {
	const uint8_t *msg;
	size_t len;
	struct fz_rr *rr;	/* the answer section, NULL if the reader could not read it */
	unsigned int n_rr;
	bool has_cname;		/* the name asked has a CNAME of class IN ... */
	uint32_t cname_ttl_s;	/* ... the least TTL of those */
	unsigned int calls;
};

/* The answer section into @w, leniently; false when even that cannot read it. */
static bool fz_read_answers(struct fz_walk *w, const struct dns_name *qname)
{
	const uint8_t *m = w->msg;
	uint8_t qwire[320], owner[320];
	size_t off, f, qwire_len, owner_len;
	unsigned int i, an;

	if (w->len < DNS_HDR_LEN)
		return false;
	qwire_len = fz_text_wire(qname, qwire);
	an = fz_get16(m + 6);
	off = fz_skip_name(m, w->len, DNS_HDR_LEN);
	if (!off || off + 4 > w->len)
		return false;
	off += 4;
	/* a record takes 11 bytes at least: the count in the header may lie */
	if (an > (w->len - off) / 11)
		return false;
	w->rr = calloc(an ? an : 1, sizeof(*w->rr));
	if (!w->rr)
		fz_fail("calloc");
	for (i = 0; i < an; i++, w->n_rr++) {
		struct fz_rr *r = &w->rr[i];

		f = fz_skip_name(m, w->len, off);
		if (!f || f + 10 > w->len)
			return false;
		r->type = fz_get16(m + f);
		r->class = fz_get16(m + f + 2);
		r->ttl_s = (uint32_t)fz_get16(m + f + 4) << 16 | fz_get16(m + f + 6);
		r->ttl_s = r->ttl_s > 0x7fffffff ? 0 : r->ttl_s;
		r->rdlen = fz_get16(m + f + 8);
		r->rdata = f + 10;
		if (r->rdata + r->rdlen > w->len)
			return false;
		r->ours = fz_read_name(m, w->len, off, owner, &owner_len) && owner_len == qwire_len &&
			  !memcmp(owner, qwire, owner_len);
		if (r->ours && r->class == 1 && r->type == 5) {
			w->cname_ttl_s = w->has_cname && w->cname_ttl_s < r->ttl_s ? w->cname_ttl_s : r->ttl_s;
			w->has_cname = true;
		}
		off = r->rdata + r->rdlen;
	}
	return true;
}

/*
 * An address reported: some A/AAAA record of class IN in the answer section
 * has these bytes and a TTL at least this; if its owner is not the name
 * asked, that name has a CNAME whose TTL is at least this too.
 */
static int fz_addr(void *ctx, int family, const uint8_t *addr, uint32_t ttl_s)
{
	struct fz_walk *w = ctx;
	uint16_t type = family == AF_INET ? 1 : 28, rdlen = family == AF_INET ? 4 : 16;
	unsigned int i;

	w->calls++;
	if ((family != AF_INET && family != AF_INET6) || ttl_s > 0x7fffffff)
		fz_fail("a family that is neither, or a TTL with its top bit set");
	if (addr < w->msg || addr + rdlen > w->msg + w->len)
		fz_fail("an address outside the message");
	if (!w->rr)
		fz_fail("reported from an answer section the lenient reader cannot read");
	for (i = 0; i < w->n_rr; i++) {
		const struct fz_rr *r = &w->rr[i];

		if (r->class == 1 && r->type == type && r->rdlen == rdlen && !memcmp(w->msg + r->rdata, addr, rdlen) &&
		    r->ttl_s >= ttl_s && (r->ours || (w->has_cname && w->cname_ttl_s >= ttl_s)))
			return 0;
	}
	fz_fail("an address no record of the name asked (or of its CNAME chain) gives, or a TTL above one");
	return 0;
}

static void fz_walk(const uint8_t *msg, size_t len, const struct dns_name *qname)
{
	struct fz_walk w = { .msg = msg, .len = len };
	const char *why = NULL;
	int ret;

	if (!fz_read_answers(&w, qname)) {
		free(w.rr);
		w.rr = NULL;
	}
	ret = dns_response_walk(msg, len, qname, fz_addr, &w, &why);
	if (ret < 0 && ((ret != -EBADMSG && ret != -EOPNOTSUPP && ret != -ELOOP) || !why))
		fz_fail("a walk refused without -EBADMSG, -EOPNOTSUPP or -ELOOP and a reason");
	if (ret >= 0 && (unsigned int)ret != w.calls)
		fz_fail("a walk's count is not its callbacks");
	if (ret < 0 && w.calls)
		fz_fail("addresses reported from a message then refused");
	free(w.rr);
}

static void fz_refusal(const uint8_t *msg, size_t len, const struct dns_query *q, bool named)
{
	struct dns_header h;
	uint8_t big[600], *exact, *small;
	int need, ret;

	need = dns_refusal_build(msg, len, q, DNS_RCODE_REFUSED, big, sizeof(big));
	if (need < DNS_HDR_LEN + 5 || (size_t)need != DNS_HDR_LEN + (q->question_end - DNS_HDR_LEN))
		fz_fail("a refusal of the wrong size");
	exact = malloc((size_t)need);
	small = malloc((size_t)need - 1);
	if (!exact || !small)
		fz_fail("malloc");
	if (dns_refusal_build(msg, len, q, DNS_RCODE_NXDOMAIN, exact, (size_t)need) != need)
		fz_fail("a refusal did not fit its own size");
	memset(small, 0x5a, (size_t)need - 1);
	if (dns_refusal_build(msg, len, q, DNS_RCODE_REFUSED, small, (size_t)need - 1) != -ENOSPC ||
	    small[0] != 0x5a)
		fz_fail("a refusal a byte too big for its buffer was not -ENOSPC, or wrote");
	if (dns_header_parse(exact, (size_t)need, &h, NULL) || h.id != q->hdr.id || !h.qr || h.opcode ||
	    h.rd != q->hdr.rd || !h.ra || h.rcode != DNS_RCODE_NXDOMAIN || h.qdcount != 1 || h.ancount ||
	    h.nscount || h.arcount)
		fz_fail("a refusal's header is not the query's id and RD with the rcode asked");
	/* the question as sent: the first name of a query is never compressed */
	if (memcmp(exact + DNS_HDR_LEN, msg + DNS_HDR_LEN, q->question_end - DNS_HDR_LEN) ||
	    memcmp(big + DNS_HDR_LEN, exact + DNS_HDR_LEN, (size_t)need - DNS_HDR_LEN))
		fz_fail("a refusal's question is not the query's");
	if (named) {
		ret = dns_refusal_build(msg, len, q, DNS_RCODE_NOERROR, big, sizeof(big));
		if (ret != need || dns_response_walk(big, (size_t)ret, &q->qname, NULL, NULL, NULL) != 0)
			fz_fail("a NOERROR refusal does not walk back to nothing for its own question");
	}
	free(exact);
	free(small);
}

static void fz_message(const uint8_t *msg, size_t len)
{
	static const struct dns_name fallback = { .text = "example.com", .len = 11 };
	struct dns_query q, qq;
	const char *why = NULL;
	struct dns_name qn;
	uint8_t *copy;
	size_t i;
	int ret, qret;

	ret = dns_query_parse(msg, len, &q, &why);
	if (ret && ((ret != -EBADMSG && ret != -EOPNOTSUPP && ret != -EILSEQ) || !why))
		fz_fail("a query refused without -EBADMSG, -EOPNOTSUPP or -EILSEQ and a reason");
	if (!ret || ret == -EILSEQ) {
		if (q.qname.len > DNS_NAME_MAX || strlen(q.qname.text) != q.qname.len ||
		    q.question_end > len || q.trailing > len - q.question_end)
			fz_fail("a query's name or offsets out of bounds");
		if (ret == -EILSEQ && q.qname.len)
			fz_fail("a name without text has text");
		for (i = 0; i < q.qname.len; i++)
			if ((q.qname.text[i] >= 'A' && q.qname.text[i] <= 'Z') ||
			    (q.qname.text[i] == '.' && (i == 0 || i + 1 == q.qname.len || q.qname.text[i + 1] == '.')))
				fz_fail("a query's name has uppercase or an empty label");
		fz_refusal(msg, len, &q, !ret);
	}

	/* the question's name, read as a query's */
	copy = malloc(len ? len : 1);
	if (!copy)
		fz_fail("malloc");
	memcpy(copy, msg, len);
	if (len >= DNS_HDR_LEN) {
		copy[2] &= 0x07;	/* QR and opcode clear */
		memcpy(copy + 4, "\0\1\0\0\0\0\0\0", 8);
	}
	ret = dns_query_parse(copy, len, &qq, NULL);
	fz_walk(msg, len, ret ? &fallback : &qq.qname);
	free(copy);

	/* the question's name read as the face reads an answer's: the same name */
	qret = dns_question_read(msg, len, &qn, &why);
	if (qret && ((qret != -EBADMSG && qret != -EILSEQ) || !why || qn.len))
		fz_fail("a question refused without -EBADMSG or -EILSEQ, a reason and no text");
	if (!qret && (qn.len > DNS_NAME_MAX || strlen(qn.text) != qn.len))
		fz_fail("a question's name out of bounds");
	if (!ret && len >= DNS_HDR_LEN && msg[4] == 0 && msg[5] == 1 &&
	    (qret || qn.len != qq.qname.len || memcmp(qn.text, qq.qname.text, qn.len)))
		fz_fail("a question's name is not the one the query reader finds");
}

static void fz_rule(const uint8_t *data, size_t size)
{
	struct dns_name n, again, x;
	const char *why = NULL;
	char *text, buf[DNS_NAME_MAX + 3];
	int ret;

	text = strndup((const char *)data, size);
	if (!text)
		fz_fail("strndup");
	for (int wild = 0; wild < 2; wild++) {
		ret = dns_name_from_text(text, wild, &n, &why);
		if (ret) {
			if (ret != -EINVAL || !why || n.len)
				fz_fail("a rule's name refused without -EINVAL and a reason");
			continue;
		}
		if (n.len > DNS_NAME_MAX || strlen(n.text) != n.len || strncasecmp(n.text, text, n.len) ||
		    (text[n.len] && strcmp(text + n.len, ".")))
			fz_fail("a rule's name is not its text, case folded, less one trailing dot");
		if (dns_name_from_text(n.text, wild, &again, NULL) || again.len != n.len ||
		    memcmp(again.text, n.text, n.len))
			fz_fail("a rule's name does not parse back to itself");
		if (!dns_name_match(&n, &n))
			fz_fail("a name does not match itself");
		if (n.text[0] == '*') {
			/* "*.rest" matches "x.rest", never "rest" */
			if (dns_name_from_text(n.text + 2, false, &x, NULL))
				fz_fail("the rest of a wildcard is not a name");
			if (dns_name_match(&n, &x))
				fz_fail("a wildcard matched the name it stands in front of");
			/* as long as the wildcard: it fits */
			snprintf(buf, sizeof(buf), "x.%s", n.text + 2);
			if (dns_name_from_text(buf, false, &x, NULL) || !dns_name_match(&n, &x))
				fz_fail("a wildcard did not match a name one label below");
		}
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0, msg_off, msg_len;
	int ret;

	fz_message(data, size);
	while ((ret = dns_tcp_next(data + off, size - off, &msg_off, &msg_len)) > 0) {
		if (msg_off != 2 || !msg_len || (size_t)ret != msg_off + msg_len || msg_len > size - off - 2)
			fz_fail("a framed message outside the stream");
		fz_message(data + off + msg_off, msg_len);
		off += (size_t)ret;
	}
	if (ret == -EBADMSG && (size - off < 2 || data[off] || data[off + 1]))
		fz_fail("a stream refused that has no zero length");
	if (ret == 0 && size - off >= 2 && (size_t)fz_get16(data + off) + 2 <= size - off)
		fz_fail("a whole message not framed");
	fz_rule(data, size);
	return 0;
}
