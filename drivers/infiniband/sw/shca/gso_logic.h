/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: which queued wire packets go out as one UDP GSO datagram (net.c),
 * as a pure function.  KUnit: kunit/shca_kunit_gso.c.
 *
 * The IP stack cuts a GSO datagram into segments of gso_size bytes of
 * UDP payload, the last one possibly shorter, and gives each its own IP
 * and UDP header.  So a run of RoCE v2 packets of one flow can share one
 * trip through the stack if every packet but the last has the size of
 * the first, and the last is no larger.  A run ends at its first shorter
 * packet, at the segment limit, and before the datagram would outgrow
 * the IP length field.  A shorter packet does not join a run of one: the
 * first packet of a message is often the longest (a RETH, an AETH), and
 * the rest of the message then makes a longer run on its own.
 */
#ifndef SHCA_GSO_LOGIC_H
#define SHCA_GSO_LOGIC_H

#include <linux/types.h>

struct shca_gso_run {
	u32 seg;	/* UDP payload bytes of the first packet: gso_size */
	u32 segs;	/* packets in the run */
	u32 bytes;	/* UDP payload bytes of all of them */
	bool closed;	/* a shorter packet ended it */
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
	if (r->closed || !len || len > r->seg || r->segs >= max_segs ||
	    (len < r->seg && r->segs == 1) ||
	    r->bytes >= max_bytes || len > max_bytes - r->bytes)
		return false;
	r->segs++;
	r->bytes += len;
	r->closed = len < r->seg;
	return true;
}

#endif /* SHCA_GSO_LOGIC_H */
