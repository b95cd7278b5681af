/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shca: the same-host direct path (direct.c). */
#ifndef SHCA_DIRECT_H
#define SHCA_DIRECT_H

#include "shca.h"

/*
 * The segment size of RC/UC messages on the direct path: the payload of
 * one packet, whatever the path MTU.  With the headers (under 600 bytes
 * with the skb's shared info) an skb of this size fills most of an
 * order-3 allocation (32 KiB, still served from the per-CPU page lists);
 * a 16 KiB segment took one too, half of it unused but zeroed all the
 * same where init_on_alloc is on (Debian's default).
 */
#define SHCA_DIRECT_SEG		31744

bool shca_dev_is_veth(const struct net_device *dev);
bool shca_way_watched(const struct dst_entry *dst, bool ipv4, bool nic);
bool shca_direct_usable(struct shca_dev *sdev, const struct shca_path *path,
			bool replies, struct shca_direct_memo *memo);
int shca_direct_xmit(struct shca_dev *sdev, struct shca_path *path,
		     struct sk_buff *skb);
struct shca_qp *shca_direct_peer_qp(struct shca_qp *qp,
				    struct shca_dev **peerp);
bool shca_direct_peer_is_local(struct shca_qp *qp);

#endif /* SHCA_DIRECT_H */
