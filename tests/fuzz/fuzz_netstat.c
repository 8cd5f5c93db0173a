// SPDX-License-Identifier: MIT
/*
 * fuzz_netstat.c - libFuzzer target for the parsers of the container
 * kernel's /proc/net files (datapath/face/face_netstat.c)
 *
 * Each input is the three files' texts, /proc/net/snmp, snmp6 and dev,
 * separated by NUL bytes (a part missing is empty), for a TUN named
 * sn-eth0. Beyond "no crash, no sanitizer report": parsing is a function
 * of the text alone (the same input twice gives the same counters), and a
 * text without the counters' names counts nothing.
 *
 * Seeds: tests/fuzz/corpus/netstat/ (this machine's files, and cut ones).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datapath/face/face.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 3), *part[3];
	struct face_netstat a, b;
	size_t i, n = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = text[size + 1] = text[size + 2] = '\0';
	part[0] = text;
	for (i = 0; i < size + 2 && n < 2; i++)
		if (!text[i])
			part[++n] = text + i + 1;
	while (n < 2)
		part[++n] = text + size + 2;
	face_netstat_parse(part[0], part[1], part[2], "sn-eth0", &a);
	face_netstat_parse(part[0], part[1], part[2], "sn-eth0", &b);
	if (memcmp(&a, &b, sizeof(a)))
		abort();
	if (!memmem(data, size, "Udp", 3) && (a.udp_in_errors || a.udp_rcvbuf_errors || a.udp_sndbuf_errors))
		abort();
	if (!memmem(data, size, "sn-eth0:", 8) && (a.tun_tx_dropped || a.tun_rx_dropped))
		abort();
	free(text);
	return 0;
}
