// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: UD multicast.
 *
 * A group is keyed by its MGID, which for RoCE v2 is an IP multicast
 * address: IPv4-mapped (::ffff:224.0.0.0/100) or IPv6 (ff00::/8).  Each
 * group lists the UD QPs attached to it.  While a group has members the
 * netdev is a member of the IP group (which also programs its MAC
 * filter), so the UDP tunnel socket receives the group's datagrams.
 *
 * Locking: sdev->mcg_mutex serialises attach/detach and the IP
 * membership changes (RTNL nests inside it).  The lists are RCU
 * lists so the RX softirq walks them without a lock; detach waits for an
 * RCU grace period before it frees an attachment, so a reader never sees
 * a QP that destroy_qp may free (destroy_qp refuses attached QPs).
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/rculist.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "shca.h"

struct shca_mcg {
	struct list_head list;		/* sdev->mcgs */
	union ib_gid mgid;
	struct list_head qps;		/* struct shca_mca */
	u32 nqps;
	struct rcu_head rcu;
};

/* One QP attached to one group. */
struct shca_mca {
	struct list_head list;		/* mcg->qps */
	struct shca_qp *qp;
};

/* Is @mgid an IP multicast address RoCE v2 can name? */
static bool shca_mgid_valid(const union ib_gid *mgid)
{
	const struct in6_addr *a = (const struct in6_addr *)mgid->raw;

	if (ipv6_addr_v4mapped(a))
		return ipv4_is_multicast(a->s6_addr32[3]);
	return ipv6_addr_is_multicast(a);
}

/* Context: process; sdev->mcg_mutex held; takes RTNL. */
static int shca_mcg_join_ip(struct shca_dev *sdev, const union ib_gid *mgid)
{
	const struct in6_addr *a = (const struct in6_addr *)mgid->raw;
	struct in_device *in_dev;
	int err = 0;

	lockdep_assert_held(&sdev->mcg_mutex);
	rtnl_lock();
	if (!ipv6_addr_v4mapped(a)) {
		err = ipv6_dev_mc_inc(sdev->ndev, a);
	} else {
		in_dev = __in_dev_get_rtnl(sdev->ndev);
		if (in_dev)
			ip_mc_inc_group(in_dev, a->s6_addr32[3]);
		else
			err = -ENODEV;
	}
	rtnl_unlock();
	return err;
}

/* Context: process; sdev->mcg_mutex held; takes RTNL. */
static void shca_mcg_leave_ip(struct shca_dev *sdev, const union ib_gid *mgid)
{
	const struct in6_addr *a = (const struct in6_addr *)mgid->raw;
	struct in_device *in_dev;

	lockdep_assert_held(&sdev->mcg_mutex);
	rtnl_lock();
	if (!ipv6_addr_v4mapped(a)) {
		ipv6_dev_mc_dec(sdev->ndev, a);
	} else {
		in_dev = __in_dev_get_rtnl(sdev->ndev);
		if (in_dev)
			ip_mc_dec_group(in_dev, a->s6_addr32[3]);
	}
	rtnl_unlock();
}

/* The group of @mgid.  Context: any, mcg_mutex or RCU read lock held. */
static struct shca_mcg *shca_mcg_find(struct shca_dev *sdev,
				      const union ib_gid *mgid)
{
	struct shca_mcg *mcg;

	list_for_each_entry_rcu(mcg, &sdev->mcgs, list,
				lockdep_is_held(&sdev->mcg_mutex))
		if (!memcmp(&mcg->mgid, mgid, sizeof(*mgid)))
			return mcg;
	return NULL;
}

static struct shca_mca *shca_mca_find(struct shca_mcg *mcg,
				      struct shca_qp *qp)
{
	struct shca_mca *mca;

	list_for_each_entry(mca, &mcg->qps, list)
		if (mca->qp == qp)
			return mca;
	return NULL;
}

/* Find or make the group of @mgid (joined at the IP level); mcg_mutex held. */
static struct shca_mcg *shca_mcg_get(struct shca_dev *sdev,
				     const union ib_gid *mgid)
{
	struct shca_mcg *mcg = shca_mcg_find(sdev, mgid);
	int err;

	lockdep_assert_held(&sdev->mcg_mutex);
	if (mcg)
		return mcg;
	if (sdev->num_mcg >= SHCA_MAX_MCG) {
		ibdev_dbg(&sdev->ibdev, "mcast: group limit %u\n", SHCA_MAX_MCG);
		return ERR_PTR(-ENOMEM);
	}
	mcg = kzalloc(sizeof(*mcg), GFP_KERNEL);
	if (!mcg)
		return ERR_PTR(-ENOMEM);
	mcg->mgid = *mgid;
	INIT_LIST_HEAD(&mcg->qps);
	err = shca_mcg_join_ip(sdev, mgid);
	if (err) {
		kfree(mcg);
		return ERR_PTR(err);
	}
	list_add_tail_rcu(&mcg->list, &sdev->mcgs);
	sdev->num_mcg++;
	return mcg;
}

/* Drop an empty group and its IP membership; mcg_mutex held. */
static void shca_mcg_put(struct shca_dev *sdev, struct shca_mcg *mcg)
{
	lockdep_assert_held(&sdev->mcg_mutex);
	if (mcg->nqps)
		return;
	list_del_rcu(&mcg->list);
	sdev->num_mcg--;
	shca_mcg_leave_ip(sdev, &mcg->mgid);
	kfree_rcu(mcg, rcu);
}

static int shca_mcast_check(struct ib_qp *ibqp, const union ib_gid *mgid)
{
	if (ibqp->qp_type != IB_QPT_UD) {
		ibdev_dbg(ibqp->device, "mcast: qp %u is not UD\n",
			  ibqp->qp_num);
		return -EINVAL;
	}
	if (!shca_mgid_valid(mgid)) {
		ibdev_dbg(ibqp->device, "mcast: %pI6 is not IP multicast\n",
			  mgid->raw);
		return -EINVAL;
	}
	return 0;
}

/* Attach @qp to @mcg unless it already is; mcg_mutex held. */
static int shca_mca_add(struct shca_dev *sdev, struct shca_mcg *mcg,
			struct shca_qp *qp)
{
	struct shca_mca *mca;

	lockdep_assert_held(&sdev->mcg_mutex);
	if (shca_mca_find(mcg, qp))
		return 0;		/* attaching twice is a no-op */
	if (mcg->nqps >= SHCA_MAX_MCG_QP ||
	    sdev->num_mca >= SHCA_MAX_TOTAL_MCG_QP) {
		ibdev_dbg(&sdev->ibdev, "mcast: attach limit reached\n");
		return -ENOMEM;
	}
	mca = kzalloc(sizeof(*mca), GFP_KERNEL);
	if (!mca)
		return -ENOMEM;
	mca->qp = qp;
	list_add_tail_rcu(&mca->list, &mcg->qps);
	mcg->nqps++;
	sdev->num_mca++;
	return 0;
}

/**
 * shca_attach_mcast - attach a UD QP to a multicast group
 * @ibqp: the QP (IB_QPT_UD only)
 * @mgid: IPv4-mapped or IPv6 multicast address
 * @mlid: ignored (RoCE has no LIDs)
 *
 * Context: process, may sleep.
 * Return: 0 (also if already attached), -EINVAL or -ENOMEM.
 */
int shca_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid)
{
	struct shca_dev *sdev = to_sdev(ibqp->device);
	struct shca_mcg *mcg;
	int err;

	err = shca_mcast_check(ibqp, mgid);
	if (err)
		return err;
	mutex_lock(&sdev->mcg_mutex);
	mcg = shca_mcg_get(sdev, mgid);
	if (IS_ERR(mcg)) {
		err = PTR_ERR(mcg);
	} else {
		err = shca_mca_add(sdev, mcg, to_sqp(ibqp));
		shca_mcg_put(sdev, mcg);	/* frees it if still empty */
	}
	mutex_unlock(&sdev->mcg_mutex);
	return err;
}

/**
 * shca_detach_mcast - detach a UD QP from a multicast group
 * @ibqp: the QP
 * @mgid: the group
 * @mlid: ignored
 *
 * Waits for the RX path to let go of the attachment.
 * Context: process, may sleep.
 * Return: 0, or -EINVAL if @ibqp is not attached to @mgid.
 */
int shca_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid)
{
	struct shca_dev *sdev = to_sdev(ibqp->device);
	struct shca_mca *mca = NULL;
	struct shca_mcg *mcg;

	mutex_lock(&sdev->mcg_mutex);
	mcg = shca_mcg_find(sdev, mgid);
	if (mcg)
		mca = shca_mca_find(mcg, to_sqp(ibqp));
	if (!mca) {
		mutex_unlock(&sdev->mcg_mutex);
		ibdev_dbg(ibqp->device, "mcast: qp %u not attached to %pI6\n",
			  ibqp->qp_num, mgid->raw);
		return -EINVAL;
	}
	list_del_rcu(&mca->list);
	mcg->nqps--;
	sdev->num_mca--;
	shca_mcg_put(sdev, mcg);
	mutex_unlock(&sdev->mcg_mutex);
	synchronize_rcu();		/* no RX reader still sees mca->qp */
	kfree(mca);
	return 0;
}

/**
 * shca_mcast_qp_attached - is @qp attached to any group?
 * @qp: a QP being destroyed
 *
 * Context: process, may sleep.
 */
bool shca_mcast_qp_attached(struct shca_qp *qp)
{
	struct shca_dev *sdev = to_sdev(qp->ibqp.device);
	struct shca_mcg *mcg;
	bool found = false;

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return false;
	mutex_lock(&sdev->mcg_mutex);
	list_for_each_entry(mcg, &sdev->mcgs, list)
		if (shca_mca_find(mcg, qp)) {
			found = true;
			break;
		}
	mutex_unlock(&sdev->mcg_mutex);
	return found;
}

/* The MGID a received packet was addressed to: its destination IP. */
static void shca_skb_mgid(struct sk_buff *skb, union ib_gid *mgid)
{
	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid->raw);
	else
		memcpy(mgid->raw, &ipv6_hdr(skb)->daddr, sizeof(mgid->raw));
}

/* Queue a clone of @skb on one attached QP; count what goes wrong. */
static void shca_mcast_one(struct shca_dev *sdev, struct shca_qp *qp,
			   struct sk_buff *skb)
{
	struct sk_buff *clone;
	int stat;

	if (!kref_get_unless_zero(&qp->ref))
		return;
	clone = skb_clone(skb, GFP_ATOMIC);
	if (!clone) {
		shca_qp_put(qp);
		shca_stat_inc(sdev, SHCA_STAT_RX_DROPPED);
		return;
	}
	stat = shca_rx_enqueue(qp, clone);	/* takes over the reference */
	if (stat >= 0) {
		shca_stat_inc(sdev, stat);
		kfree_skb(clone);
	}
}

/**
 * shca_mcast_rx - deliver a packet sent to DestQP 0xFFFFFF
 * @sdev: the receiving device
 * @skb: checked and parsed (skb->cb filled)
 *
 * Every QP attached to the group of the destination IP gets its own
 * clone, holding its own QP reference; the Q_Key is checked per QP by
 * the receive engine.
 * Context: softirq.
 * Return: -1 if @skb was consumed, else the stat to count (the caller
 * frees @skb).
 */
int shca_mcast_rx(struct shca_dev *sdev, struct sk_buff *skb)
{
	struct shca_mcg *mcg;
	struct shca_mca *mca;
	union ib_gid mgid;

	shca_skb_mgid(skb, &mgid);
	rcu_read_lock();
	mcg = shca_mcg_find(sdev, &mgid);
	if (!mcg) {
		rcu_read_unlock();
		return SHCA_STAT_RX_NO_QP;
	}
	list_for_each_entry_rcu(mca, &mcg->qps, list)
		shca_mcast_one(sdev, mca->qp, skb);
	rcu_read_unlock();
	consume_skb(skb);
	return -1;
}
