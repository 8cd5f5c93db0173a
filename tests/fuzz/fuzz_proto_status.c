// SPDX-License-Identifier: MIT
/*
 * fuzz_proto_status.c - libFuzzer target for the status file's reader
 *
 * Theory of operation
 *
 * The status file (proto/status.c) is written by the datapath's supervisor,
 * an unprivileged process, and read by netsetup, which runs as root: its
 * reader is a parser of outside bytes. Each input is the whole file, read
 * once by proto_status_parse() through fmemopen() (the retries of
 * proto_status_read() only read the same bytes again).
 * Properties checked beyond "no crash, no sanitizer report": the answer is
 * 0, -EAGAIN or -EINVAL; the texts are terminated within their arrays; and
 * a status read with a state this build knows is written again by
 * proto_status_format() and reads back the same (writer and reader agree;
 * what the writer leaves out, last_death without deaths and reason when not
 * dark, reads back as "").
 *
 * Seeds: tests/fuzz/corpus/proto_status/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_fail(const char *what)
{
	fprintf(stderr, "fuzz_proto_status: %s\n", what);
	abort();
}

/* Parse @size bytes of @data as the status file into @s. */
static int fuzz_parse(const void *data, size_t size, struct proto_status *s)
{
	FILE *f;
	int err;

	if (!size) {
		memset(s, 0, sizeof(*s));
		return -EAGAIN;	/* what an empty file reads as; fmemopen() takes no empty buffer */
	}
	f = fmemopen((void *)data, size, "r");
	if (!f)
		fuzz_fail("fmemopen");
	err = proto_status_parse(f, s);
	fclose(f);
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[PROTO_STATUS_MAX_BYTES];
	struct proto_status s, again;
	int err, len;

	err = fuzz_parse(data, size, &s);
	if (err != 0 && err != -EAGAIN && err != -EINVAL)
		fuzz_fail("an answer other than 0, -EAGAIN or -EINVAL");
	if (s.state > PROTO_DP_STATE_MAX)
		fuzz_fail("a state out of range");
	if (!memchr(s.last_death, '\0', sizeof(s.last_death)) || !memchr(s.reason, '\0', sizeof(s.reason)))
		fuzz_fail("a text not terminated");
	if (err || s.state == PROTO_DP_STATE_MAX)
		return 0;

	len = proto_status_format(&s, text, sizeof(text));
	if (len <= 0)
		fuzz_fail("a status read does not format");
	if (fuzz_parse(text, (size_t)len, &again))
		fuzz_fail("a status written does not read back");
	if (!s.deaths)
		s.last_death[0] = '\0';
	if (s.state != PROTO_DP_DARK)
		s.reason[0] = '\0';
	if (again.state != s.state || again.supervisor != s.supervisor || again.datapath != s.datapath ||
	    again.restarts != s.restarts || again.deaths != s.deaths ||
	    strcmp(again.last_death, s.last_death) || strcmp(again.reason, s.reason))
		fuzz_fail("a status written reads back different");
	return 0;
}
