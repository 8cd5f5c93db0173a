// SPDX-License-Identifier: MIT
/*
 * counters.c - the name tables of counters.h, built from the same X-macro
 * lists as the enums so they cannot drift apart.
 */
#include <ctype.h>

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
