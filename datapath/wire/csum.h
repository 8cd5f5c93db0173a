/* SPDX-License-Identifier: MIT */
/*
 * csum.h - the Internet checksum (RFC 1071) and the pseudo-headers (csum.c)
 */
#ifndef SANDNET_DATAPATH_WIRE_CSUM_H
#define SANDNET_DATAPATH_WIRE_CSUM_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

struct pkt;

uint32_t csum_partial(const void *data, size_t len, uint32_t sum);
uint16_t csum_fold(uint32_t sum);
uint32_t csum_pseudo4(struct in_addr src, struct in_addr dst, uint8_t proto, uint32_t len);
uint32_t csum_pseudo6(const struct in6_addr *src, const struct in6_addr *dst, uint8_t nh,
		      uint32_t len);
uint16_t csum_pkt_l4(const struct pkt *p, uint32_t sum);

#endif /* SANDNET_DATAPATH_WIRE_CSUM_H */
