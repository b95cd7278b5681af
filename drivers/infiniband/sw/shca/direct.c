// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: the same-host direct path.
 *
 * A RoCE v2 packet whose destination address belongs to a shca device of
 * this host (the sender's own netdev, reached over loopback, or the peer
 * of a veth pair, in another namespace) is handed to that device's
 * receive demux (rx_demux.c) directly: no IP stack, no UDP socket, no ICRC.
 * The packet is otherwise the same one the wire would carry (BTH and
 * the rest, IP and UDP headers for the GRH of a UD receive), so the
 * engines run exactly the same code on both paths: PSNs, ACKs, NAKs,
 * RNR, retries, access checks, completions.  Only RC/UC packets of a
 * message that started on the direct path may be larger than the path
 * MTU: their segment size travels with them (shca_rx_cb.seg).
 *
 * A message is started on the direct path only where the wire would have
 * let its packets through, and nobody could see or alter them on the way
 * (shca_direct_usable()): both ends up, joined by loopback or a veth pair
 * (no other link: a netkit runs programs of its own), no qdisc other than
 * noqueue, no tc or XDP program, no rx_handler (bridge, bond, flow
 * steering traps), no VRF, no packet tap (tcpdump) on either end; no
 * netfilter hook but the security modules' labelling ones, no IPsec, and
 * routes that take the packets in, in the sender's namespace and in the
 * target's.  All of that both ways for a message whose responses come
 * back (RC, XRC): its READ data, atomic replies and ACKs take the way the
 * message came (rc_resp.c), so the hooks and routes on the way back are
 * asked here, when it starts.  The module parameter `direct`
 * turns the path off.  A message that started direct stays direct, so
 * its segments never meet the wire's MTU; shca_direct_xmit() loses a
 * packet (as a wire would) only when the destination went away.
 *
 * A request is also executed in the sender's thread when it can be
 * (path->rx_inline, shca_rq_inline()): the destination's RQ engine runs
 * right there instead of in a worker woken for it, and its ACK comes back
 * to the sender's own engine run, which consumes it before it ends; a
 * round trip then wakes no worker at all.
 *
 * Context: everything here runs in process context (the engines).  The
 * delivery takes only the RCU read lock and does not sleep; an inline
 * RQ engine run may sleep.
 */
#include <linux/etherdevice.h>
#include <linux/kallsyms.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <net/dst.h>
#include <net/ip6_route.h>
#include <net/ip_fib.h>
#include <net/l3mdev.h>
#include <net/rtnetlink.h>
#include <net/sch_generic.h>
#include <net/xfrm.h>

#include "shca.h"
#include "direct.h"
#include "direct_logic.h"
#include "wire.h"

static bool shca_direct_on = true;
module_param_named(direct, shca_direct_on, bool, 0644);
MODULE_PARM_DESC(direct,
		 "deliver traffic between shca devices of this host directly, bypassing the IP stack when nothing observes it (default: 1)");

/* The netdev of @net that owns @path's destination address.  RCU held. */
static struct net_device *shca_direct_owner(struct net *net,
					    const struct shca_path *path)
{
	return shca_addr_ndev(net, path->ipv4, &path->daddr);
}

/**
 * shca_dev_is_veth - is @dev one end of a veth pair?
 * @dev: a netdev
 *
 * Of the devices with a peer (ndo_get_peer_dev), only a veth is a plain
 * link inside this host: a netkit runs its BPF programs on the way, or
 * drops what none was attached for by its policy, and that cannot be
 * read from outside its driver.
 * Context: any.
 */
bool shca_dev_is_veth(const struct net_device *dev)
{
	const struct rtnl_link_ops *ops = dev->rtnl_link_ops;

	return dev->netdev_ops->ndo_get_peer_dev && ops &&
	       !strcmp(ops->kind, "veth");
}

/* The other end of @dev if @dev is a veth, else NULL.  RCU held. */
static struct net_device *shca_veth_peer(struct net_device *dev)
{
	if (!shca_dev_is_veth(dev))
		return NULL;
	return dev->netdev_ops->ndo_get_peer_dev(dev);
}

/*
 * The netdev @path ends at on this host: the owner of the address when
 * the route is local (loopback), the veth peer when the route leaves
 * through a veth whose peer owns the address; else NULL.  RCU held.
 */
static struct net_device *shca_direct_target(const struct shca_path *path)
{
	struct net_device *out = path->dst->dev, *peer;

	if (out->flags & IFF_LOOPBACK)
		return shca_direct_owner(dev_net(out), path);
	peer = shca_veth_peer(out);
	if (!peer || shca_direct_owner(dev_net(peer), path) != peer)
		return NULL;
	return peer;
}

static bool shca_direct_dev_up(const struct net_device *dev)
{
	return netif_running(dev) && netif_carrier_ok(dev);
}

/*
 * Is the qdisc of @txq one that hands on what it is given whole and in
 * order, looking at no more than the IP and UDP headers (which every
 * segment of a GSO datagram shares): one a NIC gets by default?  Such a
 * queue treats a GSO datagram as it treats its segments, bar a drop,
 * which loses them together.  RCU held.
 */
static bool shca_txq_plain(struct netdev_queue *txq)
{
	static const char * const ids[] = {
		"noqueue", "pfifo_fast", "pfifo", "fq_codel", "fq",
	};
	__auto_type q = rcu_dereference(txq->qdisc);
	unsigned int i;

	if (!q->enqueue)
		return true;
	for (i = 0; i < ARRAY_SIZE(ids); i++)
		if (!strcmp(q->ops->id, ids[i]))
			return true;
	return false;
}

/*
 * Are the qdiscs @dev's packets meet plain (shca_txq_plain())?  Those of
 * its transmit queues: the root itself, unless the root is one (mq,
 * mqprio) that only holds a qdisc per queue.  RCU held.
 */
static bool shca_dev_qdiscs_plain(struct net_device *dev)
{
	unsigned int i;

	for (i = 0; i < dev->real_num_tx_queues; i++)
		if (!shca_txq_plain(netdev_get_tx_queue(dev, i)))
			return false;
	return true;
}

/*
 * What on @dev could see or alter a packet, or NULL if nothing; with
 * @plain_ok, plain queueing disciplines (shca_txq_plain()) do not
 * count.  RCU held.
 */
static const char *shca_direct_dev_watched(struct net_device *dev,
					   bool plain_ok)
{
	/* a registered netdev always has one: noop, noqueue (no enqueue), ... */
	if (plain_ok ? !shca_dev_qdiscs_plain(dev) :
		       !!rcu_dereference(dev->qdisc)->enqueue)
		return "qdisc";
	if (dev_nit_active(dev))
		return "packet tap";
	if (rcu_access_pointer(dev->rx_handler))
		return "rx_handler";
	if (dev_xdp_prog_count(dev))
		return "XDP";
	if (shca_dev_has_tc(dev))
		return "tc";
	if (shca_dev_has_nf(dev))
		return "netdev netfilter hook";
	if (netif_is_l3_slave(dev))
		return "VRF";
	return NULL;
}

#ifdef CONFIG_NETFILTER
/*
 * The labelling hooks' functions met so far (direct_logic.h): addresses
 * in the kernel's own text, which never change, so a hook found there
 * once is known without asking kallsyms again.  Filled from the front
 * under shca_lsm_fns_lock, read without it.
 */
#define SHCA_LSM_FNS	8
static unsigned long shca_lsm_fns[SHCA_LSM_FNS];
static DEFINE_SPINLOCK(shca_lsm_fns_lock);

/* Is @fn a labelling hook met before?  Context: any. */
static bool shca_lsm_fn_known(unsigned long fn)
{
	unsigned long k;
	int i;

	for (i = 0; i < SHCA_LSM_FNS; i++) {
		k = READ_ONCE(shca_lsm_fns[i]);
		if (!k)
			return false;
		if (k == fn)
			return true;
	}
	return false;
}

/* Remember the labelling hook @fn.  Context: any; takes the lock. */
static void shca_lsm_fn_add(unsigned long fn)
{
	unsigned long flags;
	int i;

	spin_lock_irqsave(&shca_lsm_fns_lock, flags);
	for (i = 0; i < SHCA_LSM_FNS; i++) {
		if (shca_lsm_fns[i] == fn)
			break;
		if (!shca_lsm_fns[i]) {
			WRITE_ONCE(shca_lsm_fns[i], fn);
			break;
		}
	}
	spin_unlock_irqrestore(&shca_lsm_fns_lock, flags);
}

/*
 * Is @ops a security module's labelling hook, which only marks a packet
 * for the socket it ends at (a direct packet ends at the same one)?  At
 * its priority and, whoever registered it, a function of the kernel's own
 * that kallsyms names as one of those hooks (direct_logic.h): an
 * nftables chain or a module's hook at that priority is no such hook.
 * Without kallsyms, or without memory for its answer, none is.
 * Context: any (RCU held by the caller).
 */
static bool shca_direct_nf_exempt(const struct nf_hook_ops *ops)
{
	unsigned long fn = (unsigned long)ops->hook;
	bool lsm;
	char *sym;

	if (ops->priority != NF_IP_PRI_SELINUX_FIRST &&
	    ops->priority != NF_IP_PRI_SELINUX_LAST)
		return false;
	if (shca_lsm_fn_known(fn))
		return true;
	if (!IS_ENABLED(CONFIG_KALLSYMS))
		return false;
	sym = kmalloc(KSYM_SYMBOL_LEN, GFP_ATOMIC);
	if (!sym)
		return false;
	sprint_symbol(sym, fn);
	lsm = shca_lsm_hook_sym(sym);
	kfree(sym);
	if (lsm)
		shca_lsm_fn_add(fn);
	return lsm;
}

/* Does @e hold a hook that may see or alter a packet?  RCU held. */
static bool shca_direct_nf_entries(const struct nf_hook_entries *e)
{
	struct nf_hook_ops **ops;
	unsigned int i;

	if (!e)
		return false;
	ops = nf_hook_entries_get_hook_ops(e);
	for (i = 0; i < e->num_hook_entries; i++)
		if (!shca_direct_nf_exempt(ops[i]))
			return true;
	return false;
}

/* Are there netfilter hooks on the way out of (in to) @net?  RCU held. */
static bool shca_direct_nf(struct net *net, bool ipv4, bool out)
{
	struct nf_hook_entries __rcu **hooks = ipv4 ? net->nf.hooks_ipv4 :
						       net->nf.hooks_ipv6;
	unsigned int first = out ? NF_INET_LOCAL_OUT : NF_INET_PRE_ROUTING;
	unsigned int second = out ? NF_INET_POST_ROUTING : NF_INET_LOCAL_IN;

	return shca_direct_nf_entries(rcu_dereference(hooks[first])) ||
	       shca_direct_nf_entries(rcu_dereference(hooks[second]));
}
#else
static bool shca_direct_nf(struct net *net, bool ipv4, bool out)
{
	return false;
}
#endif

/*
 * The netfilter hooks the wire's packets would meet from the namespace
 * @src to @dst: LOCAL_OUT and POST_ROUTING of @src, PRE_ROUTING and
 * LOCAL_IN of @dst; with @replies also those from @dst back to @src.
 * Return: why the wire must be taken, or NULL.  RCU held.
 */
static const char *shca_direct_nf_ways(struct net *src, struct net *dst,
				       bool ipv4, bool replies)
{
	if (shca_direct_nf(src, ipv4, true) || shca_direct_nf(dst, ipv4, false))
		return "netfilter hook";
	if (replies &&
	    (shca_direct_nf(dst, ipv4, true) || shca_direct_nf(src, ipv4, false)))
		return "netfilter hook on the way back";
	return NULL;
}

/*
 * Could an IPsec policy of @net refuse a packet that comes in without
 * one?  Any inbound policy, or a default that blocks (the UDP socket's
 * own check, xfrm_policy_check(), before shca sees the packet).
 */
static bool shca_direct_xfrm_in(struct net *net)
{
#ifdef CONFIG_XFRM
	return READ_ONCE(net->xfrm.policy_count[XFRM_POLICY_IN]) ||
	       READ_ONCE(net->xfrm.policy_default[XFRM_POLICY_IN]) !=
			XFRM_USERPOLICY_ACCEPT;
#else
	return false;
#endif
}

/*
 * Does the routing of the namespace of @dev deliver a RoCE v2 packet from
 * @remote that comes in on @dev to this host (its local table, through
 * its routing rules)?  The lookup ip_route_input() and ip6_route_input()
 * make for it; rp_filter is shca_direct_routes()'s part.
 * Context: RCU held; does not sleep.
 */
static bool shca_direct_input(struct net_device *dev, bool ipv4,
			      const void *local, const void *remote,
			      __be16 sport)
{
	if (ipv4) {
		struct flowi4 fl = {
			.flowi4_iif = dev->ifindex,
			.flowi4_proto = IPPROTO_UDP,
			.flowi4_scope = RT_SCOPE_UNIVERSE,
			.daddr = *(const __be32 *)local,
			.saddr = *(const __be32 *)remote,
			.fl4_sport = sport,
			.fl4_dport = htons(SHCA_ROCE_UDP_PORT),
		};
		struct fib_result res;

		return !fib_lookup(dev_net(dev), &fl, &res, 0) &&
		       res.type == RTN_LOCAL;
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		struct flowi6 fl = {
			.flowi6_iif = dev->ifindex,
			.flowi6_proto = IPPROTO_UDP,
			.daddr = *(const struct in6_addr *)local,
			.saddr = *(const struct in6_addr *)remote,
			.fl6_sport = sport,
			.fl6_dport = htons(SHCA_ROCE_UDP_PORT),
		};
		struct dst_entry *dst;
		bool ok;

		dst = ip6_route_input_lookup(dev_net(dev), dev, &fl, NULL,
					     RT6_LOOKUP_F_HAS_SADDR);
		ok = !dst->error &&
		     (container_of(dst, struct rt6_info, dst)->rt6i_flags &
		      RTF_LOCAL);
		dst_release(dst);
		return ok;
	}
#else
	return false;
#endif
}

/*
 * The routing part of shca_direct_usable(), for @path from @out to
 * @target (@sdev's device sends): what the wire's packets would meet in
 * the routing of both namespaces.
 *  - A request that comes in over a veth is routed at the target: to
 *    its local table (shca_direct_input()), and rp_filter wants the
 *    route back to its source to leave by the device it came in on.
 *    Over loopback a packet keeps the route it left by.
 *  - With @replies, the responses (routed at the target as the
 *    responder's own packets are) must take the way back to @sdev's
 *    device, without xfrm, and be taken in there.
 * The route back also stands for rp_filter at the sender: it is the way
 * out, the route @path took.
 * Return: why the wire must be taken, or NULL.
 * Context: RCU held; does not sleep.
 */
static const char *shca_direct_routes(struct shca_dev *sdev,
				      const struct shca_path *path,
				      struct net_device *out,
				      struct net_device *target, bool replies)
{
	bool loop = out->flags & IFF_LOOPBACK;
	struct shca_path back = { .ipv4 = path->ipv4 };
	const char *why = NULL;

	if (!loop && !shca_direct_input(target, path->ipv4, &path->daddr,
					&path->saddr, path->sport))
		return "the destination's routing does not take it in";
	if (loop && !replies)
		return NULL;
	back.saddr = path->daddr;
	back.daddr = path->saddr;
	if (shca_path_route(dev_net(target), target, &back))
		return "no route back";
	if (back.dst->dev != (loop ? out : target))
		why = "the route back leaves by another device";
	else if (replies && dst_xfrm(back.dst))
		why = "xfrm on the way back";
	else if (replies && shca_direct_target(&back) != sdev->ndev)
		why = "the way back ends at another device";
	else if (replies && !loop &&
		 !shca_direct_input(out, path->ipv4, &path->saddr,
				    &path->daddr, 0))
		why = "the sender's routing does not take the responses in";
	dst_release(back.dst);
	return why;
}

/*
 * shca_direct_routes(), or its verdict in @memo while @path, @out,
 * @target and the route generations of their namespaces are those it was
 * found for.  Context: RCU held; @memo's QP's SQ engine.
 */
static const char *shca_direct_routes_memo(struct shca_dev *sdev,
					   const struct shca_path *path,
					   struct net_device *out,
					   struct net_device *target,
					   bool replies,
					   struct shca_direct_memo *memo)
{
	struct net *nets[2] = { dev_net(out), dev_net(target) };
	struct shca_direct_key key;
	const char *why;
	int i;

	if (!memo)
		return shca_direct_routes(sdev, path, out, target, replies);
	memset(&key, 0, sizeof(key));
	for (i = 0; i < 2; i++) {
		key.net[i] = nets[i]->net_cookie;
#if IS_ENABLED(CONFIG_IPV6)
		key.genid[i] = path->ipv4 ? rt_genid_ipv4(nets[i]) :
					    rt_genid_ipv6(nets[i]);
#else
		key.genid[i] = rt_genid_ipv4(nets[i]);
#endif
	}
	key.ifindex[0] = out->ifindex;
	key.ifindex[1] = target->ifindex;
	memcpy(&key.saddr, &path->saddr, path->ipv4 ? 4 : 16);
	memcpy(&key.daddr, &path->daddr, path->ipv4 ? 4 : 16);
	key.sport = path->sport;
	key.ipv4 = path->ipv4;
	key.replies = replies;
	if (memo->valid && !memcmp(&memo->key, &key, sizeof(key)))
		return memo->why;
	why = shca_direct_routes(sdev, path, out, target, replies);
	memcpy(&memo->key, &key, sizeof(key));
	memo->why = why;
	memo->valid = true;
	return why;
}

/*
 * Why a packet from @out to @target on this host must take the wire, or
 * NULL: something on either device, or a netfilter hook or an IPsec
 * policy on the way (both ways with @replies).  RCU held.
 */
static const char *shca_direct_watched(struct shca_dev *sdev,
				       const struct shca_path *path,
				       struct net_device *out,
				       struct net_device *target, bool replies)
{
	const char *why;

	if (!shca_direct_dev_up(out) || !shca_direct_dev_up(target))
		return "link down";
	why = shca_direct_dev_watched(out, false) ?:
	      shca_direct_dev_watched(target, false);
	if (!why && target != sdev->ndev)
		why = shca_direct_dev_watched(sdev->ndev, false);
	if (!why)
		why = shca_direct_nf_ways(dev_net(out), dev_net(target),
					  path->ipv4, replies);
	if (!why && (shca_direct_xfrm_in(dev_net(target)) ||
		     (replies && shca_direct_xfrm_in(dev_net(out)))))
		why = "xfrm policy";
	return why;
}

/**
 * shca_way_watched - could something see or alter single packets on @dst?
 * @dst: the route wire packets leave by
 * @ipv4: their IP version
 * @nic: @dst leaves this host: its device cuts GSO datagrams apart
 *	before its driver (net.c, shca_tx_gso_way())
 *
 * The same observers as for the direct path (a qdisc, a packet tap, an
 * rx_handler, XDP, tc, netfilter, xfrm) on the egress device, on its
 * veth peer if it has one, and in the namespaces between.  Leaving
 * the host, only the sending side's: a plain qdisc
 * (shca_txq_plain()) on the device, which sees its datagrams whole and
 * hands them on as such, is no observer.  Such a way gets its packets
 * one by one (net.c, no GSO datagrams).
 * Context: any; takes the RCU read lock.
 */
bool shca_way_watched(const struct dst_entry *dst, bool ipv4, bool nic)
{
	struct net_device *out = dst->dev, *peer;
	bool watched;

	if (dst_xfrm(dst))
		return true;
	rcu_read_lock();
	peer = nic ? NULL : shca_veth_peer(out);
	watched = shca_direct_dev_watched(out, nic) ||
		  (peer && shca_direct_dev_watched(peer, false)) ||
		  shca_direct_nf(dev_net(out), ipv4, true) ||
		  (!nic && shca_direct_nf(dev_net(peer ?: out), ipv4, false));
	rcu_read_unlock();
	return watched;
}

/**
 * shca_direct_usable - may a new message to @path take the direct path?
 * @sdev: sending device
 * @path: resolved route (path->dst held by the caller)
 * @replies: responses and ACKs come back for it (RC, XRC): the way back
 *	must let them pass too
 * @memo: NULL, or where the routing checks' verdict is kept for the next
 *	message of the same QP (its SQ engine's)
 *
 * Context: process or softirq; takes the RCU read lock; with @memo, the
 * SQ engine of its QP.
 * Return: true if the destination is a shca device of this host, the
 * wire would let the message (and its responses) pass, and nothing
 * observes the way between.
 */
bool shca_direct_usable(struct shca_dev *sdev, const struct shca_path *path,
			bool replies, struct shca_direct_memo *memo)
{
	struct net_device *out = path->dst->dev, *target;
	const char *why = NULL;
	struct shca_dev *peer;

	if (!READ_ONCE(shca_direct_on))
		return false;
	if (dst_xfrm(path->dst))
		return false;
	rcu_read_lock();
	target = shca_direct_target(path);
	if (!target) {
		why = "not a local address";
		goto out;
	}
	why = shca_direct_watched(sdev, path, out, target, replies) ?:
	      shca_direct_routes_memo(sdev, path, out, target, replies, memo);
	if (why)
		goto out;
	peer = shca_dev_get_by_netdev(target);
	if (peer)
		ib_device_put(&peer->ibdev);
	else
		why = "no shca device at the destination";
out:
	if (why)
		ibdev_dbg(&sdev->ibdev, "wire path to %s: %s\n",
			  target ? target->name : "-", why);
	rcu_read_unlock();
	return !why;
}

/*
 * The shca device of the netdev @path ends at, referenced, and that
 * netdev in @target; NULL if it is gone or down.
 */
static struct shca_dev *shca_direct_peer(const struct shca_path *path,
					 struct net_device **target)
{
	struct shca_dev *peer = NULL;
	struct net_device *dev;

	rcu_read_lock();
	dev = shca_direct_target(path);
	if (dev && shca_direct_dev_up(path->dst->dev) &&
	    shca_direct_dev_up(dev)) {
		peer = shca_dev_get_by_netdev(dev);
		*target = dev;
	}
	rcu_read_unlock();
	return peer;
}

/*
 * The QP @qp talks to, when it is a QP of a shca device of this host (over
 * loopback or a veth pair, the direct path and the wire alike) connected
 * back to @qp: referenced, with its device (referenced) in *@peerp.
 * Context: process.
 * Return: the QP, or NULL.
 */
struct shca_qp *shca_direct_peer_qp(struct shca_qp *qp,
				    struct shca_dev **peerp)
{
	struct net_device *target;
	struct shca_path path;
	struct shca_dev *peer;
	struct shca_qp *dqp;

	if (shca_qp_path(qp, &path))
		return NULL;
	peer = shca_direct_peer(&path, &target);
	dst_release(path.dst);
	if (!peer)
		return NULL;
	dqp = shca_qp_get(peer, READ_ONCE(qp->attr.dest_qp_num));
	if (dqp && READ_ONCE(dqp->attr.dest_qp_num) != qp->ibqp.qp_num) {
		shca_qp_put(dqp);
		dqp = NULL;
	}
	if (!dqp) {
		ib_device_put(&peer->ibdev);
		return NULL;
	}
	*peerp = peer;
	return dqp;
}

/*
 * Is the QP @qp talks to a QP of a shca device of this host
 * (shca_direct_peer_qp())?  Context: process.
 */
bool shca_direct_peer_is_local(struct shca_qp *qp)
{
	struct shca_dev *peer;
	struct shca_qp *dqp;

	dqp = shca_direct_peer_qp(qp, &peer);
	if (!dqp)
		return false;
	shca_qp_put(dqp);
	ib_device_put(&peer->ibdev);
	return true;
}

/* An Ethernet header, for the source MAC of a UD completion. */
static void shca_direct_push_eth(struct sk_buff *skb,
				 const struct net_device *from,
				 const struct net_device *to)
{
	struct ethhdr *eh;

	if (skb_headroom(skb) < ETH_HLEN)
		return;
	eh = skb_push(skb, ETH_HLEN);
	skb_reset_mac_header(skb);
	ether_addr_copy(eh->h_dest, to->dev_addr);
	ether_addr_copy(eh->h_source, from->dev_addr);
	eh->h_proto = skb->protocol;
}

/**
 * shca_direct_xmit - hand an encapsulated packet to its device on this host
 * @sdev: sending device
 * @path: the route; path->seg is the packet's segment size for the
 *	receiver (0: the path MTU); path->rx_inline lets a request run at
 *	its destination in this thread; the dst reference is consumed
 * @skb: IP and UDP headers pushed, the ICRC field unset
 *
 * Context: process (an engine), BHs enabled; does not sleep, but for
 * path->rx_inline (an SQ engine run holding nothing but its
 * qp->sq_engine), which may.  Always consumes @skb.
 * Return: 0 if the destination device took the packet, else a negative
 * errno (the packet is lost, as on a wire).
 */
int shca_direct_xmit(struct shca_dev *sdev, struct shca_path *path,
		     struct sk_buff *skb)
{
	struct shca_rx_inline inl = {};
	struct net_device *target = NULL;
	struct shca_dev *peer;

	peer = shca_direct_peer(path, &target);
	if (peer)
		shca_direct_push_eth(skb, sdev->ndev, target);
	dst_release(path->dst);
	path->dst = NULL;
	if (!peer) {
		kfree_skb(skb);
		return -ENETUNREACH;
	}
	skb->dev = NULL;	/* @target is only known under RCU */
	shca_stat_inc(sdev, SHCA_STAT_TX_DIRECT_PACKETS);
	local_bh_disable();	/* the demux runs as it does in the softirq */
	shca_rx_direct(peer, skb, path->seg, path->rx_inline ? &inl : NULL);
	local_bh_enable();
	if (inl.qp)
		shca_rq_inline(inl.qp, inl.skb);
	ib_device_put(&peer->ibdev);
	return 0;
}
