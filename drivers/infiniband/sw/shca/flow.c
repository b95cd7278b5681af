// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: flow steering.
 *
 * ibv_create_flow() rules (IB_FLOW_ATTR_NORMAL, port 1, ETH/IPV4/IPV6/
 * TCP/UDP specs) live in the device's table, sorted by priority (lower
 * value first) and creation order.  A frame is matched against them in
 * that order: a DONT_TRAP rule gets a copy for its QP and matching goes
 * on; the first other rule that matches gets the frame and matching
 * stops, so its QP is the only one of the rules after it to see the frame.
 * Frames come from two places:
 *  - the netdev.  While trapping rules exist, shca owns the netdev's
 *    rx_handler and consumes the frames it steers; while only DONT_TRAP
 *    rules exist, a per-device ETH_P_ALL packet tap copies frames and
 *    the rx_handler is left to others.  If someone else (a bridge, bond
 *    or macvlan) owns the rx_handler, trapping rules fail with -EBUSY;
 *    DONT_TRAP rules still work through the tap.
 *  - the device's own RAW_PACKET QPs: every frame they send is offered
 *    to the table as well (a NIC's loopback), except to the sender.
 * Each QP a frame goes to gets a private linear copy on its rx_queue,
 * holding a QP reference; its rq_work writes it to the RQ (raw.c) or,
 * for an RSS QP, to a WQ (rwq.c).
 *
 * Lifetime: ib_core keeps the QP of a rule alive (its usecnt) until the
 * rule is destroyed; destroy waits for an RCU grace period, so no reader
 * still holds the rule, nor its QP pointer, when it returns.
 * Locking: readers walk fd->rules under RCU (softirq, or the SQ engine);
 * writers hold RTNL (the netdev hooks), then fd->lock.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "shca.h"
#include "flow.h"
#include "flow_logic.h"
#include "raw.h"

struct shca_flow {
	struct ib_flow ibflow;		/* ib_core fills it in */
	struct list_head node;		/* fd->rules, RCU */
	struct shca_flow_match match;
	struct shca_qp *qp;		/* kept alive by ib_core (usecnt) */
	u64 seq;
	u16 priority;
	bool trap;			/* no IB_FLOW_ATTR_FLAGS_DONT_TRAP */
};

static struct shca_flow *to_sflow(struct ib_flow *ibflow)
{
	return container_of(ibflow, struct shca_flow, ibflow);
}

/*
 * A frame as a hook sees it: the MAC header (mac_len bytes) sits before
 * skb->data, and a tag the NIC took out is in the skb's metadata; @len
 * is the length of the frame with both put back.
 */
struct shca_frame {
	const struct sk_buff *skb;
	u32 mac_len;
	u32 len;
	bool hwtag;
};

static void shca_frame_init(struct shca_frame *f, const struct sk_buff *skb,
			    u32 mac_len)
{
	f->skb = skb;
	f->mac_len = mac_len;
	f->hwtag = skb_vlan_tag_present(skb) && mac_len >= 2 * ETH_ALEN;
	f->len = mac_len + skb->len + (f->hwtag ? VLAN_HLEN : 0);
}

/* Copy the first @n bytes of the frame (n <= f->len).  Context: any. */
static void shca_frame_copy(const struct shca_frame *f, u8 *to, u32 n)
{
	const struct sk_buff *skb = f->skb;
	const u8 *mac = skb->data - f->mac_len;
	u32 head = f->hwtag ? 2 * ETH_ALEN : f->mac_len;
	u32 pos, c;

	pos = min(n, head);
	memcpy(to, mac, pos);
	if (f->hwtag && pos < n) {
		__be16 tag[2] = { skb->vlan_proto, htons(skb_vlan_tag_get(skb)) };

		c = min_t(u32, n - pos, VLAN_HLEN);
		memcpy(to + pos, tag, c);
		pos += c;
		c = min(n - pos, f->mac_len - head);
		memcpy(to + pos, mac + head, c);
		pos += c;
	}
	if (pos < n && skb_copy_bits(skb, 0, to + pos, n - pos))
		memset(to + pos, 0, n - pos);	/* cannot happen: n <= len */
}

/*
 * Queue a private copy of the frame on @qp for its rq_work.
 * Context: softirq or the SQ engine, under RCU; does not sleep.
 */
static void shca_flow_to_qp(struct shca_dev *sdev, struct shca_qp *qp,
			    const struct shca_frame *f)
{
	struct sk_buff *skb;

	if (!shca_raw_qp_ready(qp) ||
	    skb_queue_len(&qp->rx_queue) >= SHCA_RX_QUEUE_MAX)
		goto drop;
	skb = alloc_skb(f->len, GFP_ATOMIC);
	if (!skb)
		goto drop;
	shca_frame_copy(f, skb_put(skb, f->len), f->len);
	if (!kref_get_unless_zero(&qp->ref)) {
		kfree_skb(skb);
		goto drop;
	}
	shca_rx_queue_req(qp, skb);	/* the skb owns the ref */
	return;
drop:
	shca_stat_inc(sdev, SHCA_STAT_FLOW_RX_DROPPED);
}

/**
 * shca_flow_input - steer one frame through the table
 * @fd: the device's table
 * @f: the frame
 * @from: the RAW_PACKET QP that sent it (loopback), or NULL
 *
 * Context: any, under RCU; does not sleep.
 * Return: true if a trapping rule took the frame.
 */
static bool shca_flow_input(struct shca_flow_dev *fd,
			    const struct shca_frame *f,
			    const struct shca_qp *from)
{
	u8 hdr[SHCA_FLOW_HDR_MAX];
	struct shca_flow_pkt p;
	struct shca_flow *fl;
	u32 n = min_t(u32, f->len, sizeof(hdr));

	if (list_empty(&fd->rules))
		return false;
	shca_frame_copy(f, hdr, n);
	if (shca_flow_parse(hdr, n, &p)) {
		/* shorter than its Ethernet header (and tag) */
		shca_stat_inc(fd->sdev, SHCA_STAT_FLOW_RX_MALFORMED);
		return false;
	}
	/* a cut-short IP or L4 header: only rules on what is there match */
	if (p.malformed)
		shca_stat_inc(fd->sdev, SHCA_STAT_FLOW_RX_MALFORMED);
	list_for_each_entry_rcu(fl, &fd->rules, node) {
		if (fl->qp == from || !shca_flow_matches(&fl->match, &p))
			continue;
		shca_flow_to_qp(fd->sdev, fl->qp, f);
		if (fl->trap)
			return true;
	}
	return false;
}

/* The MAC header length of a received skb, 0 if it has none. */
static u32 shca_flow_mac_len(const struct sk_buff *skb)
{
	if (!skb_mac_header_was_set(skb) || skb_mac_header(skb) > skb->data)
		return 0;
	return skb->data - skb_mac_header(skb);
}

/* The rx_handler while trapping rules exist.  Context: softirq, RCU. */
static rx_handler_result_t shca_flow_rx_handler(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct shca_flow_dev *fd = rcu_dereference(skb->dev->rx_handler_data);
	struct shca_frame f;
	u32 mac_len = shca_flow_mac_len(skb);

	if (skb->pkt_type == PACKET_LOOPBACK || mac_len < ETH_HLEN)
		return RX_HANDLER_PASS;
	shca_frame_init(&f, skb, mac_len);
	if (!shca_flow_input(fd, &f, NULL))
		return RX_HANDLER_PASS;
	consume_skb(skb);
	return RX_HANDLER_CONSUMED;
}

/*
 * The packet tap while only DONT_TRAP rules exist (or the rx_handler is
 * someone else's).  Context: softirq, RCU.
 */
static int shca_flow_tap_rcv(struct sk_buff *skb, struct net_device *dev,
			     struct packet_type *pt,
			     struct net_device *orig_dev)
{
	struct shca_flow_dev *fd = container_of(pt, struct shca_flow_dev,
						ptype);
	u32 mac_len = shca_flow_mac_len(skb);
	struct shca_frame f;

	if (!READ_ONCE(fd->rxh) && skb->pkt_type != PACKET_OUTGOING &&
	    skb->pkt_type != PACKET_LOOPBACK && mac_len >= ETH_HLEN) {
		shca_frame_init(&f, skb, mac_len);
		shca_flow_input(fd, &f, NULL);
	}
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/**
 * shca_flow_loopback - offer a frame a raw QP sends to the device's rules
 * @sdev: the device
 * @from: the sending QP, which gets no copy
 * @skb: linear, data at the Ethernet header; not consumed
 *
 * Context: SQ engine (process).
 */
void shca_flow_loopback(struct shca_dev *sdev, struct shca_qp *from,
			const struct sk_buff *skb)
{
	struct shca_frame f;

	shca_frame_init(&f, skb, 0);
	rcu_read_lock();
	shca_flow_input(sdev->flow, &f, from);
	rcu_read_unlock();
}

/* Start copying with the packet tap.  RTNL and fd->lock held. */
static void shca_flow_tap_on(struct shca_flow_dev *fd)
{
	lockdep_assert_held(&fd->lock);
	if (fd->tap || fd->gone)
		return;
	dev_add_pack(&fd->ptype);
	fd->tap = true;
}

static void shca_flow_tap_off(struct shca_flow_dev *fd)
{
	lockdep_assert_held(&fd->lock);
	if (!fd->tap)
		return;
	dev_remove_pack(&fd->ptype);	/* waits for running taps */
	fd->tap = false;
}

/* Take the netdev's rx_handler.  RTNL and fd->lock held. */
static int shca_flow_rxh_on(struct shca_flow_dev *fd)
{
	struct net_device *ndev = fd->sdev->ndev;
	int err;

	ASSERT_RTNL();
	lockdep_assert_held(&fd->lock);
	if (fd->rxh)
		return 0;
	if (fd->gone)
		return -ENODEV;
	WRITE_ONCE(fd->rxh, true);	/* the tap stands down */
	err = netdev_rx_handler_register(ndev, shca_flow_rx_handler, fd);
	if (err) {
		WRITE_ONCE(fd->rxh, false);
		ibdev_dbg(&fd->sdev->ibdev,
			  "flow: rx_handler of %s is taken (%d): no trapping rules\n",
			  netdev_name(ndev), err);
		return -EBUSY;
	}
	return 0;
}

static void shca_flow_rxh_off(struct shca_flow_dev *fd)
{
	ASSERT_RTNL();
	lockdep_assert_held(&fd->lock);
	if (!fd->rxh)
		return;
	netdev_rx_handler_unregister(fd->sdev->ndev);	/* synchronize_net */
	WRITE_ONCE(fd->rxh, false);
}

/*
 * Make the hooks fit the rules: the rx_handler while trapping rules
 * exist, else the tap while any rule does.  RTNL and fd->lock held.
 */
static void shca_flow_hooks_sync(struct shca_flow_dev *fd)
{
	lockdep_assert_held(&fd->lock);
	if (fd->num_trap) {
		/* shca_flow_rxh_on() succeeded: it sees every rule */
		shca_flow_tap_off(fd);
		return;
	}
	if (fd->num) {
		shca_flow_tap_on(fd);
		shca_flow_rxh_off(fd);
	} else {
		shca_flow_rxh_off(fd);
		shca_flow_tap_off(fd);
	}
}

/* Insert @fl in (priority, seq) order.  fd->lock held. */
static void shca_flow_insert(struct shca_flow_dev *fd, struct shca_flow *fl)
{
	struct shca_flow *pos;

	lockdep_assert_held(&fd->lock);
	fl->seq = fd->seq++;
	list_for_each_entry(pos, &fd->rules, node) {
		if (shca_flow_better(fl->priority, fl->seq, pos->priority,
				     pos->seq)) {
			list_add_tail_rcu(&fl->node, &pos->node);
			return;
		}
	}
	list_add_tail_rcu(&fl->node, &fd->rules);
}

/* Publish a checked rule.  Context: process, may sleep. */
static int shca_flow_add(struct shca_flow_dev *fd, struct shca_flow *fl)
{
	int err = 0;

	rtnl_lock();
	mutex_lock(&fd->lock);
	if (fd->gone) {
		err = -ENODEV;
	} else if (fd->num >= SHCA_MAX_FLOW) {
		ibdev_dbg(&fd->sdev->ibdev, "flow: limit %u reached\n",
			  SHCA_MAX_FLOW);
		err = -ENOMEM;
	} else if (fl->trap) {
		err = shca_flow_rxh_on(fd);
	}
	if (!err) {
		shca_flow_insert(fd, fl);
		fd->num++;
		fd->num_trap += fl->trap;
		shca_flow_hooks_sync(fd);
	}
	mutex_unlock(&fd->lock);
	rtnl_unlock();
	return err;
}

/* The attribute itself: type, port, flags.  Context: process. */
static int shca_flow_check_attr(struct ib_device *ibdev, struct ib_qp *ibqp,
				const struct ib_flow_attr *attr)
{
	if (ibqp->qp_type != IB_QPT_RAW_PACKET) {
		ibdev_dbg(ibdev, "flow: qp %u of type %d cannot steer\n",
			  ibqp->qp_num, ibqp->qp_type);
		return -EOPNOTSUPP;
	}
	if (attr->type != IB_FLOW_ATTR_NORMAL) {
		ibdev_dbg(ibdev, "flow: type %d not supported\n", attr->type);
		return -EOPNOTSUPP;
	}
	if (attr->port != 1) {
		ibdev_dbg(ibdev, "flow: bad port %u\n", attr->port);
		return -EINVAL;
	}
	if (attr->flags & IB_FLOW_ATTR_FLAGS_EGRESS) {
		ibdev_dbg(ibdev, "flow: egress rules not supported\n");
		return -EOPNOTSUPP;
	}
	if (attr->flags & ~IB_FLOW_ATTR_FLAGS_DONT_TRAP) {
		ibdev_dbg(ibdev, "flow: bad flags %#x\n", attr->flags);
		return -EINVAL;
	}
	if (attr->size < sizeof(*attr)) {
		ibdev_dbg(ibdev, "flow: bad size %u\n", attr->size);
		return -EINVAL;
	}
	return 0;
}

/*
 * Context: process (the uverbs command), may sleep.
 * Return: the rule, or an ERR_PTR.
 */
struct ib_flow *shca_create_flow(struct ib_qp *ibqp, struct ib_flow_attr *attr,
				 struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibqp->device);
	struct ib_device *ibdev = &sdev->ibdev;
	struct shca_flow *fl;
	int err;

	err = shca_raw_may_create(sdev, udata, "flow");
	if (!err)
		err = shca_udata_no_req(ibdev, udata);
	if (!err)
		err = shca_flow_check_attr(ibdev, ibqp, attr);
	if (err)
		return ERR_PTR(err);
	fl = kzalloc(sizeof(*fl), shca_gfp(!!udata));
	if (!fl)
		return ERR_PTR(-ENOMEM);
	err = shca_flow_compile(attr->flows, attr->size - sizeof(*attr),
				attr->num_of_specs, &fl->match);
	if (err) {
		ibdev_dbg(ibdev, "flow: bad specs (%u, %u bytes): %d\n",
			  attr->num_of_specs, attr->size, err);
		goto err_free;
	}
	fl->qp = to_sqp(ibqp);
	fl->priority = attr->priority;
	fl->trap = !(attr->flags & IB_FLOW_ATTR_FLAGS_DONT_TRAP);
	err = shca_flow_add(sdev->flow, fl);
	if (err)
		goto err_free;
	return &fl->ibflow;

err_free:
	kfree(fl);
	return ERR_PTR(err);
}

/*
 * Context: process, may sleep.  When it returns, no frame is being
 * steered by the rule any more (frames already queued on the QP hold
 * their own QP references).
 */
int shca_destroy_flow(struct ib_flow *ibflow)
{
	struct shca_flow *fl = to_sflow(ibflow);
	struct shca_flow_dev *fd = to_sdev(ibflow->device)->flow;

	rtnl_lock();
	mutex_lock(&fd->lock);
	list_del_rcu(&fl->node);
	fd->num--;
	fd->num_trap -= fl->trap;
	shca_flow_hooks_sync(fd);
	mutex_unlock(&fd->lock);
	rtnl_unlock();
	synchronize_rcu();
	kfree(fl);
	return 0;
}

/**
 * shca_flow_netdev_gone - the netdev is being unregistered
 * @sdev: its device, about to be unregistered too
 *
 * Let go of the netdev's hooks now; the rules stay (uverbs destroys them
 * with the device) but see no more frames from the wire.
 * Context: process, RTNL held (netdev notifier).
 */
void shca_flow_netdev_gone(struct shca_dev *sdev)
{
	struct shca_flow_dev *fd = sdev->flow;

	ASSERT_RTNL();
	mutex_lock(&fd->lock);
	shca_flow_rxh_off(fd);
	shca_flow_tap_off(fd);
	fd->gone = true;
	mutex_unlock(&fd->lock);
}

/* Context: process (device creation). */
int shca_flow_dev_init(struct shca_dev *sdev)
{
	struct shca_flow_dev *fd = kzalloc(sizeof(*fd), GFP_KERNEL);

	if (!fd)
		return -ENOMEM;
	fd->sdev = sdev;
	mutex_init(&fd->lock);
	INIT_LIST_HEAD(&fd->rules);
	fd->ptype.type = htons(ETH_P_ALL);
	fd->ptype.dev = sdev->ndev;
	fd->ptype.func = shca_flow_tap_rcv;
	sdev->flow = fd;
	return 0;
}

/*
 * Context: process (device release).  ib_core destroyed every rule
 * first; the hooks went with the last one.
 */
void shca_flow_dev_fini(struct shca_dev *sdev)
{
	struct shca_flow_dev *fd = sdev->flow;

	if (!fd)
		return;
	WARN_ON(!list_empty(&fd->rules) || fd->rxh || fd->tap);
	mutex_destroy(&fd->lock);
	kfree(fd);
	sdev->flow = NULL;
}
