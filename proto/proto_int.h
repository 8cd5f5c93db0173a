/* SPDX-License-Identifier: MIT */
/*
 * proto_int.h - what the files of proto/ share and nobody else sees: codec.c
 * (a message as a whole), attrs.c (the attribute walk), decode.c and
 * encode.c (each message's body), words.c (names, refusals), sock.c and
 * handshake.c
 */
#ifndef SANDNET_PROTO_INT_H
#define SANDNET_PROTO_INT_H

#include <sys/socket.h>

#include "proto/proto.h"

struct nlattr;
struct nla_policy;
struct nl_msg;

/* Linux's limit on descriptors in one SCM_RIGHTS message. */
#define PROTO_SCM_MAX_FD 253
/* A LINK's fds: its channels and the face's TUN. */
#define PROTO_MAX_LINK_FDS (2 * PROTO_MAX_CHANNELS + PROTO_FACE_NETSTAT_FDS)	/* channels, TUN queues, netstat */

int proto_why_set(struct proto_why *why, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int proto_send_hello_versions(int sock, uint32_t seq, const uint8_t *versions, unsigned int n,
			      const char *software, unsigned int shards);

/* Bytes of an address of @family on the wire: 4, 16, or 0 for another family. */
static inline unsigned int proto_family_addr_len(uint8_t family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

/* --- attrs.c: the validating walk of attributes ---------------------------- */

/**
 * struct attr_space - one attribute namespace: its policy and names
 * @what:	prefix for messages, e.g. "LINK" or "LINK: ROUTES entry 3"
 */
struct attr_space {
	const char *what;
	int maxtype;
	const struct nla_policy *policy;
	const char *const *names;
};

/* Decodes one entry of a list (proto_attrs_list()) from its parsed table into @out. */
typedef int (*proto_attrs_entry_fn)(const struct attr_space *sp, struct nlattr **tb, void *out,
				    struct proto_why *why);

int proto_attrs_parse(const struct attr_space *sp, struct nlattr **tb, struct nlattr *head, int len,
		      struct proto_why *why);
int proto_attrs_require(const struct attr_space *sp, struct nlattr **tb, const int *types, unsigned int n,
			struct proto_why *why);
int proto_attrs_list(const char *what, const char *list, struct nlattr *nest, int entry_type, unsigned int max,
		     struct attr_space *entry_sp, struct nlattr **tb, void *array, size_t elem_size,
		     unsigned int *count, proto_attrs_entry_fn each, struct proto_why *why);

/* --- decode.c: each message's body, its fds checked -------------------------- */

int proto_hello_decode(struct nlattr *head, int len, struct proto_hello *h, struct proto_why *why);
int proto_link_decode(struct nlattr *head, int len, const int *fds, unsigned int n_fds, struct proto_link *l,
		      struct proto_why *why);
int proto_done_decode(struct nlattr *head, int len, const int *fds, unsigned int n_fds, struct proto_done *d,
		      struct proto_why *why);
int proto_error_decode(struct nlattr *head, int len, struct proto_error *e, struct proto_why *why);
int proto_attach_decode(struct nlattr *head, int len, const int *fds, unsigned int n_fds,
			struct proto_attach *a, struct proto_why *why);
int proto_bare_decode(unsigned int type, struct nlattr *head, int len, struct proto_why *why);

/* --- encode.c: each message's body ------------------------------------------- */

int proto_hello_encode(struct nl_msg *nl, const struct proto_hello *h);
int proto_link_encode(struct nl_msg *nl, const struct proto_link *l);
int proto_done_encode(struct nl_msg *nl, const struct proto_done *d);
int proto_error_encode(struct nl_msg *nl, const struct proto_error *e);
int proto_attach_encode(struct nl_msg *nl, const struct proto_attach *a);

#endif /* SANDNET_PROTO_INT_H */
