// SPDX-License-Identifier: MIT
/*
 * err.c - the one error message a failed step leaves for main()
 *
 * A step that fails fills a struct ns_err with a sentence naming the thing
 * and the reason, and returns a negative errno. The first message set wins
 * over none; a later, more general step may overwrite it only when it has
 * something better to say, so callers write only when e->text is empty or
 * when they add context in front.
 */
#include <stdarg.h>
#include <stdio.h>

#include "netsetup/err.h"

static void ns_err_vset(struct ns_err *e, const char *fmt, va_list ap)
{
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
}

/**
 * ns_err_set() - write the error message
 * @e:		where, may be NULL
 * @fmt:	printf format
 */
void ns_err_set(struct ns_err *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	ns_err_vset(e, fmt, ap);
	va_end(ap);
}

/**
 * ns_err_usage() - write the error message of a malformed command line
 * @e:		where, may be NULL
 * @fmt:	printf format
 *
 * As ns_err_set(), and main() exits 2 instead of 1: the caller got the
 * command wrong, nothing was refused or failed.
 */
void ns_err_usage(struct ns_err *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	ns_err_vset(e, fmt, ap);
	va_end(ap);
	e->usage = true;
}
