/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the addresses a connected QP takes packets from (rx_demux.c).  Pure
 * logic, no state; KUnit: kunit/shca_kunit_path.c.
 *
 * A connected QP (RC, UC, XRC initiator or target) talks to one peer, at
 * the addresses of its primary path.  RoCE v2 carries the path's GIDs as
 * IP addresses: the peer's packets come from the address of the remote
 * GID (ah_attr.grh.dgid) to that of the local one (the sgid), both
 * IPv4-mapped GIDs in IPv4 packets, both other GIDs in IPv6 packets.  A
 * packet from anywhere else is not the peer's, whatever QPN and PSN it
 * names.
 */
#ifndef SHCA_PATH_LOGIC_H
#define SHCA_PATH_LOGIC_H

#include <linux/string.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "roce.h"

enum shca_path_family {
	SHCA_PATH_NONE,		/* no path stored yet (before RTR) */
	SHCA_PATH_V4,		/* both GIDs IPv4-mapped */
	SHCA_PATH_V6,		/* neither */
	SHCA_PATH_MIXED,	/* one of each: no packet can be the peer's */
};

/* The addresses of a connected QP's primary path. */
struct shca_path_addrs {
	union ib_gid remote;	/* the remote GID: the packets' source */
	union ib_gid local;	/* the local GID (sgid): their destination */
	u8 family;		/* enum shca_path_family */
};

/* Store the path from @remote to @local in @p. */
static inline void shca_path_addrs_set(struct shca_path_addrs *p,
				       const union ib_gid *remote,
				       const union ib_gid *local)
{
	bool r4 = shca_gid_is_v4mapped(remote);

	p->remote = *remote;
	p->local = *local;
	if (r4 != shca_gid_is_v4mapped(local))
		p->family = SHCA_PATH_MIXED;
	else
		p->family = r4 ? SHCA_PATH_V4 : SHCA_PATH_V6;
}

/**
 * shca_path_addrs_match - may a packet be the peer's?
 * @p: the QP's path
 * @ipv4: the packet is IPv4 (else IPv6)
 * @saddr: its source address (a __be32 or a struct in6_addr)
 * @daddr: its destination address (the same type)
 *
 * With no path stored yet, any packet passes: a QP before RTR takes
 * nothing anyway, and its engines drop it by state.
 * Return: true if the packet comes from @p's remote address to its local
 * one, over the IP version of the two.
 */
static inline bool shca_path_addrs_match(const struct shca_path_addrs *p,
					 bool ipv4, const void *saddr,
					 const void *daddr)
{
	switch (p->family) {
	case SHCA_PATH_NONE:
		return true;
	case SHCA_PATH_V4:
		return ipv4 && !memcmp(&p->remote.raw[12], saddr, 4) &&
		       !memcmp(&p->local.raw[12], daddr, 4);
	case SHCA_PATH_V6:
		return !ipv4 && !memcmp(p->remote.raw, saddr, 16) &&
		       !memcmp(p->local.raw, daddr, 16);
	default:
		return false;
	}
}

#endif /* SHCA_PATH_LOGIC_H */
