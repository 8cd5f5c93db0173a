// SPDX-License-Identifier: MIT
/*
 * words.c - what proto/ says to people: the names of message types and GSO
 * modes, and why a message is refused
 *
 * Theory of operation: every file of proto/ words its refusals through
 * proto_why_set() (an errno and a sentence, which proto_recv() sends back as
 * ERROR), and names message types and GSO modes from the tables here, each
 * checked against its enum's count. The lowest file of proto/: it calls
 * none of the others.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const char *const proto_msg_type_names[] = {
	[PROTO_MSG_NONE] = "NONE",
	[PROTO_MSG_HELLO] = "HELLO",
	[PROTO_MSG_LINK] = "LINK",
	[PROTO_MSG_DONE] = "DONE",
	[PROTO_MSG_ACK] = "ACK",
	[PROTO_MSG_ERROR] = "ERROR",
	[PROTO_MSG_ATTACH] = "ATTACH",
};
_Static_assert(sizeof(proto_msg_type_names) / sizeof(proto_msg_type_names[0]) == PROTO_MSG_MAX,
	       "a name for every message type");

static const char *const proto_gso_mode_names[] = {
	[PROTO_GSO_OFF] = "off",
	[PROTO_GSO_SW] = "sw",
	[PROTO_GSO_HW] = "hw",
};
_Static_assert(sizeof(proto_gso_mode_names) / sizeof(proto_gso_mode_names[0]) == PROTO_GSO_MODE_MAX,
	       "a name for every GSO mode");

/**
 * proto_msg_type_name() - name of a message type, for messages to users
 * @type:	enum proto_msg_type, or anything that arrived on the wire
 *
 * Return: "HELLO", "LINK", ... or "UNKNOWN"
 */
const char *proto_msg_type_name(unsigned int type)
{
	return type < PROTO_MSG_MAX ? proto_msg_type_names[type] : "UNKNOWN";
}

/**
 * proto_gso_mode_name() - name of a GSO mode as users write it
 * @mode:	enum proto_gso_mode
 *
 * Return: "off", "sw", "hw" or "unknown"
 */
const char *proto_gso_mode_name(unsigned int mode)
{
	return mode < PROTO_GSO_MODE_MAX ? proto_gso_mode_names[mode] : "unknown";
}

/**
 * proto_gso_mode_parse() - parse "off", "sw" or "hw"
 * @name:	the word
 *
 * Return: enum proto_gso_mode, or -EINVAL
 */
int proto_gso_mode_parse(const char *name)
{
	for (unsigned int i = 0; i < PROTO_GSO_MODE_MAX; i++)
		if (!strcmp(name, proto_gso_mode_names[i]))
			return (int)i;
	return -EINVAL;
}

/**
 * proto_why_set() - record why a message is refused
 * @why:	filled
 * @err:	the errno
 * @fmt:	the reason, printf-style
 *
 * Return: -@err, for the caller's return
 */
int proto_why_set(struct proto_why *why, int err, const char *fmt, ...)
{
	va_list ap;

	why->err = err;
	va_start(ap, fmt);
	vsnprintf(why->text, sizeof(why->text), fmt, ap);
	va_end(ap);
	return -err;
}
