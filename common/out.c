// SPDX-License-Identifier: MIT
/*
 * out.c - the text/JSON printer of out.h, for netsetup and the datapath
 *
 * Theory of operation: a stack of levels records, per depth, whether a
 * member was already printed (JSON commas) and whether the level is an array
 * or an inline row (text layout). A formatted printer leaves the text to
 * its callers' formats and only keeps the JSON's nesting. JSON strings are
 * escaped per RFC 8259 section 7: quote, backslash and control characters
 * (and DEL); other bytes pass through unchanged.
 */
#include <string.h>

#include "common/out.h"

/**
 * out_init() - start a document on @f
 * @o:		printer
 * @f:		stream
 * @json:	JSON instead of text
 */
void out_init(struct out *o, FILE *f, bool json)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->json = json;
	o->first[0] = true;
	if (json)
		fputc('{', f);
}

/**
 * out_init_formatted() - start a printer whose text the callers format
 * @o:		printer
 * @f:		stream
 * @json:	JSON instead of text
 *
 * The JSON's top level is the first object or array the caller opens.
 */
void out_init_formatted(struct out *o, FILE *f, bool json)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->json = json;
	o->formatted = true;
	o->first[0] = true;
	o->in_array[0] = true;	/* the top level has no key */
}

/**
 * out_finish() - close the document (JSON: a newline after it)
 */
void out_finish(struct out *o)
{
	if (o->json)
		fputs(o->formatted ? "\n" : "}\n", o->f);
	fflush(o->f);
}

/**
 * out_json_str() - write @s as a JSON string, quotes included
 * @f:		stream
 * @s:		NUL-terminated string
 */
void out_json_str(FILE *f, const char *s)
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

static void out_indent(struct out *o)
{
	int i;

	for (i = 0; i < o->depth; i++)
		fputs("  ", o->f);
}

/* Before a member: comma and key in JSON; indentation or a space in text. */
static void out_key(struct out *o, const char *key)
{
	if (o->json) {
		if (!o->first[o->depth])
			fputc(',', o->f);
		o->first[o->depth] = false;
		if (key && !o->in_array[o->depth]) {
			out_json_str(o->f, key);
			fputc(':', o->f);
		}
		return;
	}
	if (o->row[o->depth]) {
		if (!o->first[o->depth])
			fputc(' ', o->f);
		o->first[o->depth] = false;
		if (key)
			fprintf(o->f, "%s ", key);
		return;
	}
	out_indent(o);
	if (key)
		fprintf(o->f, "%s: ", key);
}

static void out_push(struct out *o, bool array, bool row)
{
	if (o->depth < OUT_MAX_DEPTH - 1)
		o->depth++;
	o->first[o->depth] = true;
	o->in_array[o->depth] = array;
	o->row[o->depth] = row;
}

/**
 * out_obj_begin() - open an object (@key NULL inside an array: a row)
 */
void out_obj_begin(struct out *o, const char *key)
{
	bool row = o->in_array[o->depth];

	if (!o->json && o->formatted) {
		out_push(o, false, row);
		return;
	}
	if (o->json) {
		out_key(o, key);
		fputc('{', o->f);
		out_push(o, false, row);
		return;
	}
	if (row) {
		out_indent(o);
	} else {
		out_key(o, key);
		fputc('\n', o->f);
	}
	out_push(o, false, row);
}

/**
 * out_obj_end() - close the object
 */
void out_obj_end(struct out *o)
{
	bool row = o->row[o->depth];

	if (o->depth > 0)
		o->depth--;
	if (o->json)
		fputc('}', o->f);
	else if (row && !o->formatted)
		fputc('\n', o->f);
}

/**
 * out_arr_begin() - open an array
 */
void out_arr_begin(struct out *o, const char *key)
{
	if (!o->json && o->formatted) {
		out_push(o, true, false);
		return;
	}
	out_key(o, key);
	fputc(o->json ? '[' : '\n', o->f);
	out_push(o, true, false);
}

/**
 * out_arr_end() - close the array
 */
void out_arr_end(struct out *o)
{
	if (o->depth > 0)
		o->depth--;
	if (o->json)
		fputc(']', o->f);
}

/**
 * out_u64() - an unsigned number
 */
void out_u64(struct out *o, const char *key, uint64_t v)
{
	out_key(o, key);
	fprintf(o->f, "%llu", (unsigned long long)v);
	if (!o->json && !o->row[o->depth])
		fputc('\n', o->f);
}

/**
 * out_double() - a ratio (frames per syscall)
 */
void out_double(struct out *o, const char *key, double v)
{
	out_key(o, key);
	fprintf(o->f, "%.2f", v);
	if (!o->json && !o->row[o->depth])
		fputc('\n', o->f);
}

/**
 * out_str() - a string
 */
void out_str(struct out *o, const char *key, const char *v)
{
	out_key(o, key);
	if (o->json)
		out_json_str(o->f, v);
	else
		fputs(v, o->f);
	if (!o->json && !o->row[o->depth])
		fputc('\n', o->f);
}

/**
 * out_bool() - true or false
 */
void out_bool(struct out *o, const char *key, bool v)
{
	out_key(o, key);
	fputs(v ? "true" : "false", o->f);
	if (!o->json && !o->row[o->depth])
		fputc('\n', o->f);
}

/*
 * A value with its own text format: JSON as any value, text through @fmt
 * (nothing when NULL).
 */

/**
 * out_u64f() - an unsigned number; text: @fmt with one %llu
 */
void out_u64f(struct out *o, const char *key, const char *fmt, uint64_t v)
{
	if (o->json) {
		out_key(o, key);
		fprintf(o->f, "%llu", (unsigned long long)v);
	} else if (fmt) {
		fprintf(o->f, fmt, (unsigned long long)v);
	}
}

/**
 * out_strf() - a string; text: @fmt with one %s
 */
void out_strf(struct out *o, const char *key, const char *fmt, const char *v)
{
	if (o->json) {
		out_key(o, key);
		out_json_str(o->f, v);
	} else if (fmt) {
		fprintf(o->f, fmt, v);
	}
}

/**
 * out_boolf() - a boolean: JSON true/false; text: @fmt with one %s, "on"/"off"
 */
void out_boolf(struct out *o, const char *key, const char *fmt, bool v)
{
	if (o->json) {
		out_key(o, key);
		fputs(v ? "true" : "false", o->f);
	} else if (fmt) {
		fprintf(o->f, fmt, v ? "on" : "off");
	}
}

/**
 * out_text() - words only the text form has
 */
void out_text(struct out *o, const char *text)
{
	if (!o->json)
		fputs(text, o->f);
}
