/* SPDX-License-Identifier: MIT */
/*
 * hello.h - the name a connection's first bytes give: a TLS ClientHello's
 * server_name, an HTTP/1 request's host (theory of operation in hello.c)
 *
 * A leaf beside dns.c: libc and dns.h only, nothing of the datapath, no
 * state, no allocation.
 */
#ifndef SANDNET_DATAPATH_NAMES_HELLO_H
#define SANDNET_DATAPATH_NAMES_HELLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datapath/names/dns.h"

#define HELLO_TLS_RECORD_MAX	16384	/* RFC 8446 5.1: a plaintext record's fragment */
#define HELLO_HTTP_HEAD_MAX	16384	/* a request head longer than this is refused */
/* Bytes that always settle hello_read(): one whole record, or a whole head. */
#define HELLO_READ_MAX		(5 + HELLO_TLS_RECORD_MAX)

/* What the first bytes of a connection are. */
enum hello_proto {
	HELLO_OTHER,		/* neither TLS nor HTTP/1: nothing to read */
	HELLO_TLS,		/* a TLS handshake record */
	HELLO_HTTP,		/* an HTTP/1 request */
};

/**
 * struct hello - what hello_read() found
 * @proto:	which protocol the bytes are
 * @name:	the name they give (@has_name): the ClientHello's host_name, or
 *		the request's host (absolute-form target, or Host), no port
 * @has_name:	a name was given (a ClientHello without server_name, an HTTP
 *		host that is an address, an HTTP/1.0 request without Host: none)
 * @ech:	the ClientHello offers Encrypted Client Hello: @name is the
 *		outer, public name, not the one the client is after
 */
struct hello {
	enum hello_proto proto;
	struct dns_name name;
	bool has_name;
	bool ech;
};

int hello_read(const uint8_t *buf, size_t len, struct hello *h, const char **why);

#endif /* SANDNET_DATAPATH_NAMES_HELLO_H */
