/* SPDX-License-Identifier: MIT */
/*
 * out.h - one code path for text and JSON output (iproute2's print_* idea)
 *
 * Every printer calls out_*() with a snake_case key and a value; the struct
 * out decides whether that becomes `"key": value` in a JSON document or a
 * line of text. Objects and arrays nest. In text, a keyed object is a
 * heading with its members indented below; an object inside an array (a
 * table row: a neighbour, a socket) prints its members on one line.
 */
#ifndef SANDNET_DATAPATH_OUT_H
#define SANDNET_DATAPATH_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define OUT_MAX_DEPTH	16

struct out {
	FILE *f;
	bool json;
	int depth;
	bool first[OUT_MAX_DEPTH];	/* no member printed yet at this depth */
	bool row[OUT_MAX_DEPTH];	/* text: this level is an inline row */
	bool in_array[OUT_MAX_DEPTH];
};

void out_init(struct out *o, FILE *f, bool json);
void out_finish(struct out *o);
void out_obj_begin(struct out *o, const char *key);
void out_obj_end(struct out *o);
void out_arr_begin(struct out *o, const char *key);
void out_arr_end(struct out *o);
void out_u64(struct out *o, const char *key, uint64_t v);
void out_double(struct out *o, const char *key, double v);
void out_str(struct out *o, const char *key, const char *v);
void out_bool(struct out *o, const char *key, bool v);

#endif /* SANDNET_DATAPATH_OUT_H */
