/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: which queued wire packets go out as one UDP GSO datagram (net.c),
 * as a pure function.  KUnit: kunit/shca_kunit_gso.c.
 *
 * A run of RoCE v2 packets of one flow shares one trip through the IP
 * stack as a GSO datagram of the fraglist kind (net.c): the first
 * packet is its head, with gso_size its own UDP payload, and the others
 * hang on its frag_list with their own headers, which the stack's
 * segmentation merely unchains.  So the sizes behind the first are free
 * but for gso_size, the largest a segment may be: a packet joins if it
 * is no larger than the first.  A run starts at the first packet of a
 * message more often than not (the RETH or AETH makes it the longest),
 * so it can go on over the whole message and over the next ones.  It
 * ends at a larger packet, at the segment limit, and before the datagram
 * would outgrow the IP length field.
 */
#ifndef SHCA_GSO_LOGIC_H
#define SHCA_GSO_LOGIC_H

#include <linux/types.h>

struct shca_gso_run {
	u32 seg;	/* UDP payload bytes of the first packet: gso_size */
	u32 segs;	/* packets in the run */
	u32 bytes;	/* UDP payload bytes of all of them */
};

/**
 * shca_gso_join - may a packet of @len UDP payload bytes join run @r?
 * @r: the run so far (zeroed for a new one); updated if the packet joins
 * @len: the packet's UDP payload bytes (BTH to ICRC)
 * @max_bytes: UDP payload bytes one datagram may carry
 * @max_segs: packets one datagram may carry
 *
 * Return: true if it joined.  The first packet of a run always joins.
 */
static inline bool shca_gso_join(struct shca_gso_run *r, u32 len,
				 u32 max_bytes, u32 max_segs)
{
	if (!r->segs) {
		*r = (struct shca_gso_run){ .seg = len, .segs = 1,
					    .bytes = len };
		return true;
	}
	if (!len || len > r->seg || r->segs >= max_segs ||
	    r->bytes >= max_bytes || len > max_bytes - r->bytes)
		return false;
	r->segs++;
	r->bytes += len;
	return true;
}

#endif /* SHCA_GSO_LOGIC_H */
