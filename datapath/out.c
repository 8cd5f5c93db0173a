// SPDX-License-Identifier: MIT
/*
 * out.c - the text/JSON printer of out.h
 *
 * Theory of operation: a stack of levels records, per depth, whether a
 * member was already printed (JSON commas) and whether the level is an array
 * or an inline row (text layout). JSON strings are escaped per RFC 8259.
 */
#include <string.h>

#include "datapath/out.h"

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
 * out_finish() - close the document
 */
void out_finish(struct out *o)
{
	if (o->json)
		fputs("}\n", o->f);
}

static void out_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
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
	else if (row)
		fputc('\n', o->f);
}

/**
 * out_arr_begin() - open an array
 */
void out_arr_begin(struct out *o, const char *key)
{
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
