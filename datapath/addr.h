/* SPDX-License-Identifier: MIT */
/*
 * addr.h - the one address type of the datapath (passt's inany idea)
 *
 * netsetup sends addresses as union proto_inaddr (proto/proto.h); the
 * datapath keeps them as they came, with their family, in struct net_addr,
 * and every part of it (the stack, the TCP engine, the container face, the
 * policy, the services) uses that one type, so that nothing converts an
 * address between layers. A socket address (struct sockaddr_*) exists only
 * where the datapath talks to the host's own sockets (svc/).
 *
 * An IPv4 address uses the first 4 bytes; the others are not part of it:
 * comparisons and hashes use net_addr_len() bytes.
 */
#ifndef SANDNET_DATAPATH_ADDR_H
#define SANDNET_DATAPATH_ADDR_H

#include <stdint.h>
#include <netinet/in.h>

#include "proto/proto.h"

/**
 * struct net_addr - an IPv4 or IPv6 address; family AF_UNSPEC means "any"
 */
struct net_addr {
	uint8_t family;
	union proto_inaddr a;
};

/* Bytes of @family's addresses: 4, 16, or 0 for AF_UNSPEC. */
static inline unsigned int net_addr_len(uint8_t family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

#endif /* SANDNET_DATAPATH_ADDR_H */
