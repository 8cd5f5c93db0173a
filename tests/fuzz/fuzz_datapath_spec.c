// SPDX-License-Identifier: MIT
/*
 * fuzz_datapath_spec.c - libFuzzer target for the --publish/--forward SPEC
 * parser (datapath/svc/svc_spec.c)
 *
 * Theory of operation
 *
 * The first byte picks the kind (publish or forward), the rest is the SPEC
 * text, cut at its first NUL. svc_spec_parse() must refuse with -EINVAL and
 * a non-empty reason, or succeed with a protocol of udp or tcp, a non-zero
 * port for publish and a non-zero remote port for forward, and the text kept
 * NUL-terminated.
 *
 * The parser resolves HOST names with getaddrinfo(): this target defines its
 * own getaddrinfo() that forces AI_NUMERICHOST and calls the C library's, so
 * that a run never waits on DNS or /etc/hosts and stays deterministic.
 *
 * Seeds: tests/fuzz/corpus/datapath_spec/.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/svc/svc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef int (*fz_gai_fn)(const char *, const char *, const struct addrinfo *, struct addrinfo **);

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
		struct addrinfo **res)
{
	static fz_gai_fn real;
	struct addrinfo h;

	if (!real)
		real = (fz_gai_fn)dlsym(RTLD_NEXT, "getaddrinfo");
	if (!real)
		return EAI_FAIL;
	memset(&h, 0, sizeof(h));
	if (hints)
		h = *hints;
	h.ai_flags |= AI_NUMERICHOST | AI_NUMERICSERV;
	return real(node, service, &h, res);
}

static void fz_fail(const char *what)
{
	fprintf(stderr, "fuzz_datapath_spec: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum svc_kind kind;
	struct svc_spec spec;
	char err[512];
	char *text;
	int ret;

	if (size < 1)
		return 0;
	kind = (data[0] & 1) ? SVC_FORWARD : SVC_PUBLISH;
	text = strndup((const char *)data + 1, size - 1);
	if (!text)
		fz_fail("strndup");
	err[0] = 0;
	ret = svc_spec_parse(text, kind, &spec, err, sizeof(err));
	if (ret) {
		if (ret != -EINVAL || !err[0])
			fz_fail("refusal without -EINVAL and a reason");
	} else {
		if (spec.kind != kind || (spec.proto != IPPROTO_UDP && spec.proto != IPPROTO_TCP))
			fz_fail("accepted SPEC with a bad kind or protocol");
		if (kind == SVC_PUBLISH && !spec.port)
			fz_fail("accepted publish SPEC without a port");
		if (kind == SVC_FORWARD && !spec.remote_port)
			fz_fail("accepted forward SPEC without a remote port");
		if (!memchr(spec.text, 0, sizeof(spec.text)))
			fz_fail("SPEC text not terminated");
	}
	free(text);
	return 0;
}
