/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shca: the same-host direct path (direct.c). */
#ifndef SHCA_DIRECT_H
#define SHCA_DIRECT_H

#include "shca.h"

/*
 * The segment size of RC/UC messages on the direct path: the payload of
 * one packet, whatever the path MTU.  With the headers an skb of this
 * size still comes from an order-3 allocation (the per-CPU page lists).
 */
#define SHCA_DIRECT_SEG		16384

bool shca_way_watched(const struct dst_entry *dst, bool ipv4);
bool shca_direct_usable(struct shca_dev *sdev, const struct shca_path *path);
int shca_direct_xmit(struct shca_dev *sdev, struct shca_path *path,
		     struct sk_buff *skb);

#endif /* SHCA_DIRECT_H */
