// SPDX-License-Identifier: MIT
/*
 * output.c - one printer for text and JSON
 *
 * Theory of operation (iproute2's print_*(PRINT_ANY, key, fmt, value)): the
 * caller describes each value once, with its JSON key and its text format.
 * In text mode the key is ignored and the value goes through the format (a
 * NULL format prints nothing); in JSON mode the format is ignored and the
 * value is written as "key": value, with commas and nesting tracked here, so
 * the two outputs cannot drift apart. ns_out_text() adds words that only the
 * text form has. Strings are escaped per RFC 8259 section 7: quote,
 * backslash and control characters; other bytes pass through unchanged.
 */
#include <stdio.h>

#include "netsetup/netsetup.h"

#define OUT_DEPTH_MAX ((int)(sizeof(((struct ns_out *)0)->need_comma) / sizeof(bool)) - 1)

/**
 * ns_json_escape() - write @s as a JSON string, quotes included
 * @f:		stream
 * @s:		NUL-terminated string
 */
void ns_json_escape(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/**
 * ns_out_init() - start a printer
 * @o:		printer
 * @f:		stream
 * @json:	JSON or text
 */
void ns_out_init(struct ns_out *o, FILE *f, bool json)
{
	*o = (struct ns_out){ .f = f, .json = json };
}

static void json_key(struct ns_out *o, const char *key)
{
	if (o->need_comma[o->depth])
		fputc(',', o->f);
	o->need_comma[o->depth] = true;
	if (key && o->depth > 0) {
		ns_json_escape(o->f, key);
		fputc(':', o->f);
	}
}

/**
 * ns_out_open() - open an object or array (JSON only)
 * @o:		printer
 * @key:	its key inside an object, NULL inside an array or at top level
 * @array:	'[' instead of '{'
 */
void ns_out_open(struct ns_out *o, const char *key, bool array)
{
	if (!o->json)
		return;
	json_key(o, key);
	fputc(array ? '[' : '{', o->f);
	if (o->depth < OUT_DEPTH_MAX)
		o->depth++;
	o->need_comma[o->depth] = false;
}

/**
 * ns_out_close() - close what ns_out_open() opened
 * @o:		printer
 * @array:	as given to ns_out_open()
 */
void ns_out_close(struct ns_out *o, bool array)
{
	if (!o->json)
		return;
	fputc(array ? ']' : '}', o->f);
	if (o->depth > 0)
		o->depth--;
}

/**
 * ns_out_str() - a string value
 * @o:		printer
 * @key:	JSON key
 * @fmt:	text format with one %s, or NULL
 * @val:	value
 */
void ns_out_str(struct ns_out *o, const char *key, const char *fmt, const char *val)
{
	if (o->json) {
		json_key(o, key);
		ns_json_escape(o->f, val);
	} else if (fmt) {
		fprintf(o->f, fmt, val);
	}
}

/**
 * ns_out_uint() - an unsigned value
 * @o:		printer
 * @key:	JSON key
 * @fmt:	text format with one %llu, or NULL
 * @val:	value
 */
void ns_out_uint(struct ns_out *o, const char *key, const char *fmt, unsigned long long val)
{
	if (o->json) {
		json_key(o, key);
		fprintf(o->f, "%llu", val);
	} else if (fmt) {
		fprintf(o->f, fmt, val);
	}
}

/**
 * ns_out_bool() - a boolean: JSON true/false, text "on"/"off"
 * @o:		printer
 * @key:	JSON key
 * @fmt:	text format with one %s, or NULL
 * @val:	value
 */
void ns_out_bool(struct ns_out *o, const char *key, const char *fmt, bool val)
{
	if (o->json) {
		json_key(o, key);
		fputs(val ? "true" : "false", o->f);
	} else if (fmt) {
		fprintf(o->f, fmt, val ? "on" : "off");
	}
}

/**
 * ns_out_text() - words only the text form has
 * @o:		printer
 * @text:	printed as is in text mode
 */
void ns_out_text(struct ns_out *o, const char *text)
{
	if (!o->json)
		fputs(text, o->f);
}

/**
 * ns_out_end() - finish the document (JSON: a newline)
 * @o:		printer
 */
void ns_out_end(struct ns_out *o)
{
	if (o->json)
		fputc('\n', o->f);
	fflush(o->f);
}
