// SPDX-License-Identifier: MIT
/*
 * counters.c - the name tables of counters.h, built from the same X-macro
 * lists as the enums so they cannot drift apart, and the walks over a
 * layer's struct stat_table.
 */
#include <ctype.h>
#include <string.h>

#include "common/out.h"
#include "datapath/counters.h"

/* Lower-case copies of the macro names, made once. */
#define DP_X_STR(name) #name,
static const char *const dp_ctr_upper[] = { DP_CTR_LIST(DP_X_STR) };
static const char *const dp_drop_upper[] = { DP_DROP_LIST(DP_X_STR) };
_Static_assert(sizeof(dp_ctr_upper) / sizeof(dp_ctr_upper[0]) == CTR_MAX, "ctr names");
_Static_assert(sizeof(dp_drop_upper) / sizeof(dp_drop_upper[0]) == DROP_MAX, "drop names");

static char dp_ctr_lower[CTR_MAX][32];
static char dp_drop_lower[DROP_MAX][32];

static void dp_lower(const char *up, char *out)
{
	unsigned int i;

	for (i = 0; up[i] && i < 31; i++)
		out[i] = (char)tolower((unsigned char)up[i]);
	out[i] = '\0';
}

/* Made before main(), so that shards' threads only ever read them. */
__attribute__((constructor)) static void dp_names_init(void)
{
	unsigned int i;

	for (i = 0; i < CTR_MAX; i++)
		dp_lower(dp_ctr_upper[i], dp_ctr_lower[i]);
	for (i = 0; i < DROP_MAX; i++)
		dp_lower(dp_drop_upper[i], dp_drop_lower[i]);
}

/**
 * dp_ctr_name() - snake_case name of a protocol counter
 * @c:	enum dp_ctr
 * Return: the name, or "?" when out of range.
 */
const char *dp_ctr_name(unsigned int c)
{
	return c < CTR_MAX ? dp_ctr_lower[c] : "?";
}

/**
 * dp_drop_name() - snake_case name of a drop reason
 * @d:	enum dp_drop
 * Return: the name, or "?" when out of range.
 */
const char *dp_drop_name(unsigned int d)
{
	return d < DROP_MAX ? dp_drop_lower[d] : "?";
}

/**
 * stat_value() - the number a row describes
 * @d:	the row
 * @v:	the layer's struct
 * Return: the value.
 */
uint64_t stat_value(const struct stat_desc *d, const void *v)
{
	uint64_t x;

	memcpy(&x, (const char *)v + d->offset, sizeof(x));
	return x;
}

/**
 * stat_add() - add every number of @part to @sum (the shards' parts)
 * @t:		the table both are described by
 * @sum, @part:	two of the layer's structs
 */
void stat_add(const struct stat_table *t, void *sum, const void *part)
{
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		uint64_t x = stat_value(&t->rows[i], sum) + stat_value(&t->rows[i], part);

		memcpy((char *)sum + t->rows[i].offset, &x, sizeof(x));
	}
}

/**
 * stat_print() - every row of @t, key and value, in the open object of @o
 * @t:	the table
 * @v:	the layer's struct it describes
 * @o:	the printer (text or JSON)
 */
void stat_print(const struct stat_table *t, const void *v, struct out *o)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		out_u64(o, t->rows[i].key, stat_value(&t->rows[i], v));
}

static const char *const stat_kind_names[] = {
	[STAT_COUNTER] = "counter",
	[STAT_GAUGE] = "gauge",
};
_Static_assert(sizeof(stat_kind_names) / sizeof(stat_kind_names[0]) == STAT_KIND_MAX, "stat kind names");

/**
 * stat_kind_name() - the Prometheus TYPE of a kind
 * @k:	the kind
 * Return: "counter" or "gauge".
 */
const char *stat_kind_name(enum stat_kind k)
{
	return k < STAT_KIND_MAX ? stat_kind_names[k] : "untyped";
}
