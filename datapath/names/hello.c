// SPDX-License-Identifier: MIT
/*
 * hello.c - the name a connection's first bytes give
 *
 * Theory of operation
 *
 * A name rule lets a container connect to the addresses a DNS answer gave
 * for an allowed name. One address serves many names (a CDN, a shared
 * host), so the datapath also reads what the connection itself says it is
 * for, before any of its bytes leave: the server_name of a TLS ClientHello
 * (RFC 6066 3), or the host of an HTTP/1 request (RFC 9112 3.2: the
 * absolute-form target, or the Host header). hello_read() is handed the
 * first bytes the container sent and says which of the two they are, and
 * the name; the face (face_tcp.c) then asks the policy about the name.
 *
 * What the bytes are is decided on as few of them as possible:
 *  - TLS: the first byte is 22 (handshake) and the record's version 3.x.
 *    The ClientHello must be whole within that first record: a client's
 *    first flight puts it there (it is a few hundred bytes to a few KiB,
 *    the record holds 16 KiB), and reading one split across records would
 *    be code for an attacker only. The body is walked field by field
 *    (RFC 8446 4.1.2), every length checked against what holds it: legacy
 *    version, random, session id (at most 32), cipher suites (even, at
 *    least one), compression methods (at least one), then the extensions,
 *    which must end exactly where the message does. A server_name extension
 *    or an encrypted_client_hello one given twice, two host_name entries,
 *    a host_name that is not a host name (a literal address included, which
 *    RFC 6066 forbids), bytes after the ClientHello in its record: each is
 *    refused (-EBADMSG, -EILSEQ for the name) rather than guessed at, since
 *    a server that read it otherwise would be reached under a name nobody
 *    checked. Encrypted Client Hello (the extension 0xfe0d) is reported: its
 *    server_name is the public, outer name.
 *  - HTTP/1: a method of capital letters, a space, a target, a space and
 *    HTTP/1.0 or HTTP/1.1, CRLF. A first line that does not end so is
 *    another protocol (SMTP's EHLO, Redis's PING). "PRI * HTTP/2.0", the
 *    preface of HTTP/2 with prior knowledge, is refused: its host travels
 *    in HPACK. The head must end (an empty line) within 16 KiB. Header
 *    lines are field, colon, value; a line folded onto the one before
 *    (obsolete, RFC 9112 5.2), a space before the colon, or a second Host is
 *    refused. The name is the absolute-form target's host when there is
 *    one (it is what a server obeys), else the Host header's; both given and
 *    different is refused. A port is dropped; a host that is an address
 *    literal gives no name, nor does an empty Host.
 *  - Anything else is neither (HELLO_OTHER): nothing to read.
 * Before the bytes decide, the answer is -EAGAIN: the caller waits for
 * more, or, when no more can come, refuses.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "datapath/names/hello.h"

#define TLS_CONTENT_HANDSHAKE	22	/* RFC 8446 5.1 */
#define TLS_HS_CLIENT_HELLO	1	/* RFC 8446 4 */
#define TLS_EXT_SERVER_NAME	0	/* RFC 6066 3 */
#define TLS_EXT_ECH		0xfe0d	/* draft-ietf-tls-esni */
#define TLS_SNI_HOST_NAME	0
#define HTTP_METHOD_MAX		20

/* A bounds-checked reader of one message. */
struct hello_rd {
	const uint8_t *p;
	size_t len, off;
};

static const uint8_t *hello_take(struct hello_rd *r, size_t n)
{
	const uint8_t *at;

	if (n > r->len - r->off)
		return NULL;
	at = r->p + r->off;
	r->off += n;
	return at;
}

static bool hello_u8(struct hello_rd *r, size_t *v)
{
	const uint8_t *p = hello_take(r, 1);

	if (p)
		*v = p[0];
	return p;
}

static bool hello_u16(struct hello_rd *r, size_t *v)
{
	const uint8_t *p = hello_take(r, 2);

	if (p)
		*v = (size_t)p[0] << 8 | p[1];
	return p;
}

static int hello_fail(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

/*
 * @len bytes of a host (no port) into @h->name. An address literal (a
 * last label of digits; ':' never passes the name check) is no name.
 * Return: 0, or -EILSEQ for bytes that are no host name.
 */
static int hello_host(const uint8_t *s, size_t len, bool literal_ok, struct hello *h, const char **why)
{
	char text[DNS_NAME_MAX + 2];
	const char *last;

	if (len > DNS_NAME_MAX || memchr(s, 0, len))
		return hello_fail(why, "a host that is no host name", -EILSEQ);
	memcpy(text, s, len);
	text[len] = 0;
	last = strrchr(text, '.');
	last = last ? last + 1 : text;
	if (*last && strspn(last, "0123456789") == strlen(last)) {
		if (!literal_ok)
			return hello_fail(why, "server_name is an address (RFC 6066 3)", -EILSEQ);
		return 0;	/* an IPv4 literal */
	}
	if ((len && text[len - 1] == '.') || dns_name_from_text(text, false, &h->name, NULL) < 0)
		return hello_fail(why, "a host that is no host name", -EILSEQ);
	h->has_name = true;
	return 0;
}

/* The server_name extension's body (RFC 6066 3). */
static int hello_sni(const uint8_t *p, size_t len, struct hello *h, const char **why)
{
	struct hello_rd r = { .p = p, .len = len };
	size_t list_len, type, name_len;
	const uint8_t *name;
	bool host_seen = false;
	int ret;

	if (!hello_u16(&r, &list_len) || list_len != len - 2 || !list_len)
		return hello_fail(why, "server_name list length is not the extension's", -EBADMSG);
	while (r.off < r.len) {
		if (!hello_u8(&r, &type) || !hello_u16(&r, &name_len) || !(name = hello_take(&r, name_len)))
			return hello_fail(why, "truncated server_name entry", -EBADMSG);
		if (type != TLS_SNI_HOST_NAME)
			continue;	/* no other type is defined; a server skips it too */
		if (host_seen)
			return hello_fail(why, "two host_name entries", -EBADMSG);
		host_seen = true;
		if (!name_len)
			return hello_fail(why, "an empty host_name", -EBADMSG);
		ret = hello_host(name, name_len, false, h, why);
		if (ret)
			return ret;
	}
	return 0;
}

/* The ClientHello body (RFC 8446 4.1.2), whole. */
static int hello_client_hello(const uint8_t *p, size_t len, struct hello *h, const char **why)
{
	struct hello_rd r = { .p = p, .len = len };
	size_t n, ext_len, type, elen;
	const uint8_t *e;
	bool sni_seen = false;
	int ret;

	if (!hello_take(&r, 2 + 32))
		return hello_fail(why, "truncated ClientHello version or random", -EBADMSG);
	if (!hello_u8(&r, &n) || n > 32 || !hello_take(&r, n))
		return hello_fail(why, "bad ClientHello session id", -EBADMSG);
	if (!hello_u16(&r, &n) || n < 2 || n % 2 || !hello_take(&r, n))
		return hello_fail(why, "bad ClientHello cipher suites", -EBADMSG);
	if (!hello_u8(&r, &n) || !n || !hello_take(&r, n))
		return hello_fail(why, "bad ClientHello compression methods", -EBADMSG);
	if (r.off == r.len)
		return 0;	/* no extensions (TLS 1.0 allows it): no name */
	if (!hello_u16(&r, &ext_len) || ext_len != r.len - r.off)
		return hello_fail(why, "ClientHello extensions do not end with the message", -EBADMSG);
	while (r.off < r.len) {
		if (!hello_u16(&r, &type) || !hello_u16(&r, &elen) || !(e = hello_take(&r, elen)))
			return hello_fail(why, "truncated ClientHello extension", -EBADMSG);
		if (type == TLS_EXT_SERVER_NAME) {
			if (sni_seen)
				return hello_fail(why, "two server_name extensions", -EBADMSG);
			sni_seen = true;
			ret = hello_sni(e, elen, h, why);
			if (ret)
				return ret;
		} else if (type == TLS_EXT_ECH) {
			if (h->ech)
				return hello_fail(why, "two encrypted_client_hello extensions", -EBADMSG);
			h->ech = true;
		}
	}
	return 0;
}

/* The first record, which must hold the whole ClientHello. */
static int hello_tls(const uint8_t *buf, size_t len, struct hello *h, const char **why)
{
	size_t rec_len, hs_len;

	if (len < 5)
		return -EAGAIN;
	rec_len = (size_t)buf[3] << 8 | buf[4];
	if (rec_len < 4 || rec_len > HELLO_TLS_RECORD_MAX)
		return hello_fail(why, "a TLS record length out of 4..16384", -EBADMSG);
	if (len < 5 + 4)
		return -EAGAIN;
	if (buf[5] != TLS_HS_CLIENT_HELLO)
		return hello_fail(why, "the first handshake message is not a ClientHello", -EBADMSG);
	hs_len = (size_t)buf[6] << 16 | (size_t)buf[7] << 8 | buf[8];
	if (hs_len > rec_len - 4)
		return hello_fail(why, "a ClientHello split across TLS records", -EBADMSG);
	if (hs_len < rec_len - 4)
		return hello_fail(why, "bytes after the ClientHello in its record", -EBADMSG);
	if (len < 5 + rec_len)
		return -EAGAIN;
	return hello_client_hello(buf + 9, hs_len, h, why);
}

/* The first CRLF in @p .. @end: its CR, or NULL. */
static const uint8_t *hello_crlf(const uint8_t *p, const uint8_t *end)
{
	for (; p + 1 < end; p++)
		if (p[0] == '\r' && p[1] == '\n')
			return p;
	return NULL;
}

/* A host with an optional ":port", or "[v6]:port", into @h. */
static int hello_authority(const uint8_t *s, size_t len, struct hello *h, const char **why)
{
	const uint8_t *colon;

	if (len && s[0] == '[')
		return memchr(s, ']', len) ? 0 : hello_fail(why, "an unclosed '[' in a host", -EILSEQ);
	if (memchr(s, '@', len))
		return hello_fail(why, "userinfo in a request's authority", -EBADMSG);
	colon = memchr(s, ':', len);
	if (colon) {
		const uint8_t *d;

		for (d = colon + 1; d < s + len; d++)
			if (*d < '0' || *d > '9')
				return hello_fail(why, "a host's port is not a number", -EILSEQ);
		len = (size_t)(colon - s);
	}
	if (!len)
		return 0;	/* an empty host: no name */
	return hello_host(s, len, true, h, why);
}

/* An HTTP/1 request's head; -ENOMSG when the first line says it is none. */
static int hello_http(const uint8_t *buf, size_t len, struct hello *h, const char **why)
{
	const uint8_t *end = buf + len, *line, *eol, *sp1, *sp2, *target_host = NULL;
	size_t i, target_host_len = 0;
	struct hello target = { 0 };
	bool host_seen = false;
	int ret;

	for (i = 0; i < len && i <= HTTP_METHOD_MAX && buf[i] >= 'A' && buf[i] <= 'Z'; i++)
		;
	if (i == len && i <= HTTP_METHOD_MAX)
		return -EAGAIN;
	if (!i || i > HTTP_METHOD_MAX || buf[i] != ' ')
		return -ENOMSG;
	eol = hello_crlf(buf, end);
	if ((!eol && len >= HELLO_HTTP_HEAD_MAX) || (eol && eol - buf > HELLO_HTTP_HEAD_MAX))
		return hello_fail(why, "a request line over 16 KiB", -EBADMSG);
	if (!eol)
		return -EAGAIN;
	if (eol - buf >= 14 && !memcmp(buf, "PRI * HTTP/2.0", 14))
		return hello_fail(why, "HTTP/2 with prior knowledge (its host is in HPACK)", -EBADMSG);
	if ((size_t)(eol - buf) < i + 2 + 9)
		return -ENOMSG;	/* too short for METHOD SP TARGET " HTTP/1.x" */
	sp1 = buf + i;
	sp2 = eol - 9;
	if (memcmp(sp2, " HTTP/1.", 8) || (sp2[8] != '0' && sp2[8] != '1'))
		return -ENOMSG;
	h->proto = HELLO_HTTP;
	if (memchr(sp1 + 1, ' ', (size_t)(sp2 - sp1 - 1)))
		return hello_fail(why, "a space in the request target", -EBADMSG);
	/* absolute-form ("http://host/...") or CONNECT's authority-form */
	if ((size_t)(sp2 - sp1 - 1) > 7 && !strncasecmp((const char *)sp1 + 1, "http://", 7))
		target_host = sp1 + 8;
	else if ((size_t)(sp2 - sp1 - 1) > 8 && !strncasecmp((const char *)sp1 + 1, "https://", 8))
		target_host = sp1 + 9;
	else if (i == 7 && !memcmp(buf, "CONNECT", 7))
		target_host = sp1 + 1;
	if (target_host) {
		const uint8_t *t = target_host;

		while (t < sp2 && *t != '/' && *t != '?' && *t != '#')
			t++;
		target_host_len = (size_t)(t - target_host);
		ret = hello_authority(target_host, target_host_len, &target, why);
		if (ret)
			return ret;
	}
	for (line = eol + 2;; line = eol + 2) {
		const uint8_t *colon, *v, *ve;

		eol = hello_crlf(line, end);
		if (!eol)
			return len >= HELLO_HTTP_HEAD_MAX ? hello_fail(why, "a request head over 16 KiB", -EBADMSG) :
							    -EAGAIN;
		if (eol == line)
			break;	/* the empty line: the head's end */
		if (eol - buf > HELLO_HTTP_HEAD_MAX)
			return hello_fail(why, "a request head over 16 KiB", -EBADMSG);
		if (*line == ' ' || *line == '\t')
			return hello_fail(why, "a folded header line (RFC 9112 5.2)", -EBADMSG);
		colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon || colon == line)
			return hello_fail(why, "a header line without a field name and a colon", -EBADMSG);
		if (colon[-1] == ' ' || colon[-1] == '\t')
			return hello_fail(why, "a space before a header's colon (RFC 9112 5.1)", -EBADMSG);
		if (colon - line != 4 || strncasecmp((const char *)line, "host", 4))
			continue;
		if (host_seen)
			return hello_fail(why, "two Host headers", -EBADMSG);
		host_seen = true;
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		for (ve = eol; ve > v && (ve[-1] == ' ' || ve[-1] == '\t'); ve--)
			;
		ret = hello_authority(v, (size_t)(ve - v), h, why);
		if (ret)
			return ret;
	}
	if (target_host) {
		if (host_seen && (h->has_name != target.has_name ||
				  (h->has_name && strcmp(h->name.text, target.name.text))))
			return hello_fail(why, "the request target's host and the Host header differ", -EBADMSG);
		h->name = target.name;
		h->has_name = target.has_name;
	}
	return 0;
}

/**
 * hello_read() - what a connection's first bytes are, and the name they give
 * @buf:	the first bytes the client sent (HELLO_READ_MAX always settle it)
 * @len:	how many
 * @h:		receives the protocol and the name
 * @why:	receives the reason of a refusal, or NULL
 *
 * Return: 0 (@h says it); -EAGAIN: more bytes are needed to tell; -EBADMSG:
 * TLS or HTTP/1 that is malformed, or formed as this reader refuses to
 * guess at (above); -EILSEQ: a name that is no host name.
 */
int hello_read(const uint8_t *buf, size_t len, struct hello *h, const char **why)
{
	int ret;

	memset(h, 0, sizeof(*h));
	if (!len)
		return -EAGAIN;
	if (buf[0] == TLS_CONTENT_HANDSHAKE) {
		if (len < 3)
			return -EAGAIN;
		if (buf[1] == 3 && buf[2] <= 4) {
			h->proto = HELLO_TLS;
			ret = hello_tls(buf, len, h, why);
			if (ret) {
				h->has_name = false;
				h->ech = false;
			}
			return ret;
		}
		return 0;	/* HELLO_OTHER */
	}
	ret = hello_http(buf, len, h, why);
	if (ret == -ENOMSG) {
		memset(h, 0, sizeof(*h));
		return 0;	/* HELLO_OTHER */
	}
	if (ret)
		h->has_name = false;
	return ret;
}
