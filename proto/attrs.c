// SPDX-License-Identifier: MIT
/*
 * attrs.c - the validating walk of a message's netlink attributes, shared by
 * every body decoder (decode.c)
 *
 * Theory of operation
 *
 * An attribute space (struct attr_space, proto_int.h) is one table of
 * nla_policy entries and the attributes' names, so that every refusal names
 * what it refuses. proto_attrs_parse() walks a run of attributes once with
 * nla_ok()/nla_next(), so that a truncated attribute or trailing garbage is
 * caught (nla_parse() would skip it with a debug message), checks each known
 * attribute against its policy entry on its own (the size, then what the size
 * cannot tell: a string without its NUL), and only then lets nla_parse() fill
 * the table. Attribute types above what this build knows are skipped: that is
 * how a newer minor version adds fields. Type 0 is refused.
 * proto_attrs_require() refuses a missing mandatory attribute by name, and
 * proto_attrs_list() walks a list (addresses, routes, neighbours: a nest of
 * repeated entries), bounding the count and handing each entry, parsed in its
 * own space, to the decoder of one entry.
 *
 * What it does not do: know any message (decode.c does), own any fd, or keep
 * state between calls.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <netlink/attr.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

/**
 * proto_attrs_parse() - walk a run of attributes, refuse truncation and
 * policy violations naming the attribute, then fill @tb with nla_parse()
 * @sp:		the attribute space
 * @tb:		receives the attributes by type (@sp->maxtype + 1 entries, zeroed)
 * @head, @len:	the run
 * @why:	the reason of a refusal
 *
 * Unknown types are skipped.
 *
 * Return: 0, or a negative errno with @why filled
 */
int proto_attrs_parse(const struct attr_space *sp, struct nlattr **tb, struct nlattr *head, int len,
		      struct proto_why *why)
{
	struct nlattr *nla;
	int rem, err;

	nla_for_each_attr(nla, head, len, rem) {
		int type = nla_type(nla);
		const struct nla_policy *pt;

		if (type == 0)
			return proto_why_set(why, EBADMSG, "%s: attribute of type 0", sp->what);
		if (type > sp->maxtype)
			continue;	/* a newer minor version's attribute */

		pt = &sp->policy[type];
		if (nla_len(nla) < pt->minlen || (pt->maxlen && nla_len(nla) > pt->maxlen)) {
			if (pt->type == NLA_STRING)
				return proto_why_set(why, EINVAL,
					       "%s: attribute %s: string of %d bytes, allowed 1..%d with the NUL",
					       sp->what, sp->names[type], nla_len(nla), pt->maxlen);
			if (pt->minlen == pt->maxlen)
				return proto_why_set(why, EINVAL,
					       "%s: attribute %s: wrong size %d, expected %d",
					       sp->what, sp->names[type], nla_len(nla), pt->minlen);
			return proto_why_set(why, EINVAL, "%s: attribute %s: wrong size %d, expected %d..%d",
				       sp->what, sp->names[type], nla_len(nla), pt->minlen,
				       pt->maxlen);
		}
		/* The size is checked above, so this finds what size cannot: a string without NUL. */
		if (nla_validate(nla, nla->nla_len, sp->maxtype, sp->policy) < 0) {
			if (pt->type == NLA_STRING)
				return proto_why_set(why, EINVAL, "%s: attribute %s: string without NUL",
					       sp->what, sp->names[type]);
			return proto_why_set(why, EINVAL, "%s: attribute %s: malformed", sp->what,
				       sp->names[type]);
		}
	}
	/* nla_next() steps by the aligned length: an unpadded last attribute leaves rem in (-4, 0]. */
	if (rem > 0)
		return proto_why_set(why, EBADMSG, "%s: truncated attribute (%d bytes left over)", sp->what,
			       rem);

	err = nla_parse(tb, sp->maxtype, head, len, sp->policy);
	if (err < 0)
		return proto_why_set(why, EBADMSG, "%s: attributes do not parse", sp->what);
	return 0;
}

/**
 * proto_attrs_require() - refuse a missing mandatory attribute by its name
 * @sp:		the attribute space
 * @tb:		the table proto_attrs_parse() filled
 * @types, @n:	the mandatory types
 * @why:	the reason of a refusal
 *
 * Return: 0, or -EINVAL with @why filled
 */
int proto_attrs_require(const struct attr_space *sp, struct nlattr **tb, const int *types, unsigned int n,
			struct proto_why *why)
{
	for (unsigned int i = 0; i < n; i++)
		if (!tb[types[i]])
			return proto_why_set(why, EINVAL, "%s: missing mandatory attribute %s", sp->what,
				       sp->names[types[i]]);
	return 0;
}

/**
 * proto_attrs_list() - decode the entries of a list nest
 * @what, @list: the message and the list, for messages ("LINK", "ROUTES")
 * @nest:	the list's attribute
 * @entry_type:	the entries' type; others are skipped (a newer minor's kinds)
 * @max:	entries allowed
 * @entry_sp:	an entry's attribute space (its @what is set per entry)
 * @tb:		room for an entry's table
 * @array, @elem_size: where the decoded entries go
 * @count:	receives how many
 * @each:	decodes one entry
 * @why:	the reason of a refusal
 *
 * Return: 0, or a negative errno with @why filled (-E2BIG over @max)
 */
int proto_attrs_list(const char *what, const char *list, struct nlattr *nest, int entry_type, unsigned int max,
		     struct attr_space *entry_sp, struct nlattr **tb, void *array, size_t elem_size,
		     unsigned int *count, proto_attrs_entry_fn each, struct proto_why *why)
{
	char where[96];
	struct nlattr *entry;
	int rem, err;

	*count = 0;
	nla_for_each_nested(entry, nest, rem) {
		if (nla_type(entry) == 0)
			return proto_why_set(why, EBADMSG, "%s: %s: entry of type 0", what, list);
		if (nla_type(entry) != entry_type)
			continue;	/* newer minors may add other entry kinds */
		if (*count >= max)
			return proto_why_set(why, E2BIG, "%s: more than %u entries in %s", what, max,
				       list);
		snprintf(where, sizeof(where), "%s: %s entry %u", what, list, *count);
		entry_sp->what = where;
		memset(tb, 0, sizeof(*tb) * (entry_sp->maxtype + 1));
		err = proto_attrs_parse(entry_sp, tb, nla_data(entry), nla_len(entry), why);
		if (err)
			return err;
		err = each(entry_sp, tb, (char *)array + elem_size * *count, why);
		if (err)
			return err;
		(*count)++;
	}
	if (rem > 0)
		return proto_why_set(why, EBADMSG, "%s: %s: truncated entry (%d bytes left over)", what,
			       list, rem);
	return 0;
}
