// SPDX-License-Identifier: MIT
/*
 * fuzz_hello.c - libFuzzer target for the first-bytes reader of the names
 * policy (datapath/names/hello.c)
 *
 * Theory of operation
 *
 * The bytes are what a program in the container sends first on a
 * connection the policy let through for a name: hostile. The input is
 * handed to hello_read() whole, in a buffer of exactly its size (ASan sees
 * a read past it), and cut at two places before its end.
 *
 * Checked: the answer is 0, -EAGAIN, -EBADMSG or -EILSEQ, a refusal with a
 * reason; the protocol is TLS exactly when the bytes start as a TLS
 * handshake record does; a name is lowercase host-name text of at most 253
 * bytes that parses back to itself (dns_name_from_text()), never an
 * address, and a TLS name's bytes are in the input; nothing is named
 * after a refusal. A cut input is either undecided (-EAGAIN) or decided as
 * the whole input is: more bytes never change a decision.
 *
 * Seeds: tests/fuzz/corpus/hello/ (ClientHellos curl and openssl s_client
 * sent, HTTP/1 requests, the HTTP/2 preface, an SSH banner).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "datapath/names/hello.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_hello: %s\n", what);
	abort();
}

static int fz_read(const uint8_t *data, size_t len, struct hello *h)
{
	uint8_t *copy = malloc(len ? len : 1);
	const char *why = NULL;
	int ret;

	if (!copy)
		fz_fail("malloc");
	memcpy(copy, data, len);
	ret = hello_read(copy, len, h, &why);
	free(copy);
	if (ret && ret != -EAGAIN && ret != -EBADMSG && ret != -EILSEQ)
		fz_fail("an errno hello_read() does not name");
	if ((ret == -EBADMSG || ret == -EILSEQ) && !why)
		fz_fail("a refusal without a reason");
	if (ret && h->has_name)
		fz_fail("a name after a refusal");
	return ret;
}

static void fz_name(const uint8_t *data, size_t size, const struct hello *h)
{
	struct dns_name again;
	const char *last;
	size_t i;

	if (h->name.len > DNS_NAME_MAX || strlen(h->name.text) != h->name.len || !h->name.len)
		fz_fail("a name out of bounds");
	for (i = 0; i < h->name.len; i++)
		if (h->name.text[i] >= 'A' && h->name.text[i] <= 'Z')
			fz_fail("a name with uppercase");
	if (dns_name_from_text(h->name.text, false, &again, NULL) || strcmp(again.text, h->name.text))
		fz_fail("a name that does not parse back to itself");
	last = strrchr(h->name.text, '.');
	last = last ? last + 1 : h->name.text;
	if (strspn(last, "0123456789") == strlen(last))
		fz_fail("an address given as a name");
	if (h->proto == HELLO_TLS) {
		for (i = 0; i + h->name.len <= size; i++)
			if (!strncasecmp((const char *)data + i, h->name.text, h->name.len))
				break;
		if (i + h->name.len > size)
			fz_fail("a server_name that is not in the bytes");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hello whole, cut;
	size_t cuts[2] = { size / 2, size ? size - 1 : 0 };
	bool tls_start = size >= 3 && data[0] == 22 && data[1] == 3 && data[2] <= 4;
	int ret, r;
	unsigned int i;

	ret = fz_read(data, size, &whole);
	if (!ret && (whole.proto == HELLO_TLS) != tls_start)
		fz_fail("TLS told from other bytes than a handshake record's start");
	if (!ret && whole.has_name)
		fz_name(data, size, &whole);
	if (!ret && whole.ech && whole.proto != HELLO_TLS)
		fz_fail("ECH outside TLS");
	for (i = 0; i < 2; i++) {
		r = fz_read(data, cuts[i], &cut);
		if (r == -EAGAIN)
			continue;
		if (r != ret || cut.proto != whole.proto || cut.has_name != whole.has_name ||
		    (cut.has_name && strcmp(cut.name.text, whole.name.text)) || cut.ech != whole.ech)
			fz_fail("a decision that more bytes changed");
	}
	return 0;
}
