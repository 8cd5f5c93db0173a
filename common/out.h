/* SPDX-License-Identifier: MIT */
/*
 * out.h - one text/JSON printer for both programs (iproute2's json_print idea)
 *
 * Every printer calls out_*() with a snake_case key and a value; the struct
 * out decides whether that becomes `"key": value` in a JSON document or
 * text, so the two forms cannot drift apart. Objects and arrays nest.
 *
 * Two kinds of text, chosen at init:
 *   out_init()            the text is laid out from the keys (`datapath
 *                         stats`): a keyed object is a heading with its
 *                         members indented below; an object inside an array
 *                         (a table row: a neighbour, a socket) prints its
 *                         members on one line. The JSON is one object.
 *   out_init_formatted()  the text is the callers' own (`netsetup gso show`):
 *                         each value comes with a printf format (NULL: JSON
 *                         only), out_text() adds words only the text has,
 *                         and objects and arrays print nothing in text. The
 *                         JSON's top level is what the caller opens first.
 */
#ifndef SANDNET_COMMON_OUT_H
#define SANDNET_COMMON_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define OUT_MAX_DEPTH	16

struct out {
	FILE *f;
	bool json;
	bool formatted;			/* out_init_formatted(): the text is the callers' */
	int depth;
	bool first[OUT_MAX_DEPTH];	/* no member printed yet at this depth */
	bool row[OUT_MAX_DEPTH];	/* text: this level is an inline row */
	bool in_array[OUT_MAX_DEPTH];
};

void out_init(struct out *o, FILE *f, bool json);
void out_init_formatted(struct out *o, FILE *f, bool json);
void out_finish(struct out *o);
void out_obj_begin(struct out *o, const char *key);
void out_obj_end(struct out *o);
void out_arr_begin(struct out *o, const char *key);
void out_arr_end(struct out *o);
void out_u64(struct out *o, const char *key, uint64_t v);
void out_double(struct out *o, const char *key, double v);
void out_str(struct out *o, const char *key, const char *v);
void out_bool(struct out *o, const char *key, bool v);

/* With a text format of their own (formatted printers) */
void out_u64f(struct out *o, const char *key, const char *fmt, uint64_t v);
void out_strf(struct out *o, const char *key, const char *fmt, const char *v);
void out_boolf(struct out *o, const char *key, const char *fmt, bool v);
void out_text(struct out *o, const char *text);

void out_json_str(FILE *f, const char *s);

#endif /* SANDNET_COMMON_OUT_H */
