/* SPDX-License-Identifier: MIT */
/*
 * proto_int.h - what codec.c, sock.c and handshake.c share and nobody else sees
 */
#ifndef SANDNET_PROTO_INT_H
#define SANDNET_PROTO_INT_H

#include "proto/proto.h"

/* Linux's limit on descriptors in one SCM_RIGHTS message. */
#define PROTO_SCM_MAX_FD 253
/* A LINK's fds: its channels and the face's TUN. */
#define PROTO_MAX_LINK_FDS (2 * PROTO_MAX_CHANNELS + PROTO_FACE_NETSTAT_FDS)	/* channels, TUN queues, netstat */

int proto_why_set(struct proto_why *why, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int proto_send_hello_versions(int sock, uint32_t seq, const uint8_t *versions, unsigned int n,
			      const char *software, unsigned int shards);

#endif /* SANDNET_PROTO_INT_H */
