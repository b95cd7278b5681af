/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: flow steering (flow.c) - ibv_create_flow rules that steer
 * Ethernet frames of the device's netdev, and of its own RAW_PACKET QPs'
 * sends, to RAW_PACKET QPs.
 */
#ifndef SHCA_FLOW_H
#define SHCA_FLOW_H

#include <linux/netdevice.h>

#include "shca.h"

#define SHCA_MAX_FLOW	4096	/* rules per device */

/*
 * A device's steering table.  Readers (the netdev hooks in softirq, the
 * SQ engine's loopback) walk @rules under RCU; writers hold RTNL and then
 * @lock.
 */
struct shca_flow_dev {
	struct shca_dev *sdev;
	struct mutex lock;		/* the fields below, under RTNL */
	struct list_head rules;		/* RCU, by (priority, seq) */
	u32 num;			/* rules */
	u32 num_trap;			/* rules without DONT_TRAP */
	u64 seq;			/* creation order */
	bool rxh;			/* our rx_handler is on the netdev */
	bool tap;			/* @ptype is added */
	bool gone;			/* netdev unregistering: no hooks */
	struct packet_type ptype;	/* copies where the rx_handler is not ours */
};

int shca_flow_dev_init(struct shca_dev *sdev);
void shca_flow_dev_fini(struct shca_dev *sdev);
void shca_flow_netdev_gone(struct shca_dev *sdev);
struct ib_flow *shca_create_flow(struct ib_qp *ibqp,
				 struct ib_flow_attr *attr,
				 struct ib_udata *udata);
int shca_destroy_flow(struct ib_flow *ibflow);
void shca_flow_loopback(struct shca_dev *sdev, struct shca_qp *from,
			const struct sk_buff *skb);

#endif /* SHCA_FLOW_H */
