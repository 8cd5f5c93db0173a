// SPDX-License-Identifier: MIT
/*
 * conf.c - the "key = value" configuration files of netsetup
 *
 * Theory of operation: `netsetup serve` (serve_conf.c) and sandnet-runtime
 * (runtime.c) read files of one shape: one setting a line, "key = value"
 * with blanks around either side allowed, '#' to the end of the line is a
 * comment, blank lines are skipped. ns_conf_next() hands out the settings one
 * at a time, trimmed, with the line number; what the keys mean, and which
 * are unknown, is the caller's business, and its messages name the file and
 * the line the same way ("FILE line N: ...").
 */
#include <errno.h>
#include <string.h>

#include "netsetup/front/front.h"

/**
 * ns_conf_next() - the next setting of a configuration file
 * @f:		the file
 * @name:	its name, for messages
 * @line:	a buffer for one line; @key and @val point into it
 * @size:	its size: a longer line is refused
 * @lineno:	the number of the line read last; start it at 0
 * @key:	receives the key, trimmed
 * @val:	receives the value, trimmed (may be "")
 * @e:		"FILE line N: too long" or "FILE line N: expected key = value"
 *
 * Return: 1 with a setting, 0 at the end of the file, -EINVAL.
 */
int ns_conf_next(FILE *f, const char *name, char *line, size_t size, unsigned int *lineno, char **key,
		 char **val, struct ns_err *e)
{
	char *p;

	while (fgets(line, (int)size, f)) {
		(*lineno)++;
		if (!strchr(line, '\n') && !feof(f)) {
			ns_err_set(e, "%s line %u: too long", name, *lineno);
			return -EINVAL;
		}
		p = strchr(line, '#');
		if (p)
			*p = 0;
		*key = line + strspn(line, " \t\r\n");
		if (!**key)
			continue;
		*val = strchr(*key, '=');
		if (!*val) {
			ns_err_set(e, "%s line %u: expected key = value", name, *lineno);
			return -EINVAL;
		}
		*(*val)++ = 0;
		for (p = *key + strlen(*key); p > *key && strchr(" \t", p[-1]); p--)
			p[-1] = 0;
		*val += strspn(*val, " \t");
		for (p = *val + strlen(*val); p > *val && strchr(" \t\r\n", p[-1]); p--)
			p[-1] = 0;
		return 1;
	}
	return 0;
}
