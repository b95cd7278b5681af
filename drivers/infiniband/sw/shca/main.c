// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: software RoCE v2 HCA - module, device life cycle, netdev events.
 *
 * `rdma link add NAME type shca netdev IF` creates one ib_device per
 * Ethernet netdev.  Each instance owns a struct device used for
 * DMA-coherent ring memory and as parent of the ib_device; under it a
 * "net" directory links to the netdev so that
 * /sys/class/infiniband/NAME/device/net/IF exists.  The link is not
 * renamed when the netdev is (known limitation).
 */
#include <linux/dma-mapping.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

#include "shca.h"
#include "flow.h"
#include "odp.h"
#include "wire.h"
#include "rwq.h"
#include "roce.h"

MODULE_AUTHOR("shca authors");
MODULE_DESCRIPTION("Software RoCE v2 HCA");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("shca");

/* All instances; see the locking overview in shca.h. */
static LIST_HEAD(shca_dev_list);
static DEFINE_MUTEX(shca_dev_mutex);
static DECLARE_WAIT_QUEUE_HEAD(shca_exit_wq);
/* Driver-owned struct devices not yet released. */
static atomic_t shca_dma_devs = ATOMIC_INIT(0);
/* Instance numbers for the driver-owned struct device names. */
static DEFINE_IDA(shca_dev_ida);

static const struct ib_device_ops shca_dev_ops;

/*
 * The driver-owned device, its instance number and its ring memory
 * (charge.c): every charged chunk holds a reference, so the count lives
 * as long as the memory it counts.
 */
struct shca_dma_dev {
	struct device dev;
	int id;
	atomic64_t ring_pages;
};

/* The ring memory count of @dma_dev, a shca DMA device.  Context: any. */
atomic64_t *shca_dma_dev_ring_pages(struct device *dma_dev)
{
	return &container_of(dma_dev, struct shca_dma_dev, dev)->ring_pages;
}

static void shca_dma_dev_release(struct device *dev)
{
	struct shca_dma_dev *ddev = container_of(dev, struct shca_dma_dev, dev);

	ida_free(&shca_dev_ida, ddev->id);
	kfree(ddev);
	if (atomic_dec_and_test(&shca_dma_devs))
		wake_up(&shca_exit_wq);
}

static int shca_dma_dev_add(struct shca_dev *sdev)
{
	struct shca_dma_dev *ddev;
	struct device *dev;
	int err;

	ddev = kzalloc(sizeof(*ddev), GFP_KERNEL);
	if (!ddev)
		return -ENOMEM;
	ddev->id = ida_alloc(&shca_dev_ida, GFP_KERNEL);
	if (ddev->id < 0) {
		err = ddev->id;
		kfree(ddev);
		return err;
	}
	dev = &ddev->dev;
	atomic_inc(&shca_dma_devs);
	device_initialize(dev);
	dev->release = shca_dma_dev_release;
	dev->parent = sdev->ndev->dev.parent;
	err = dev_set_name(dev, "%s-dev%d", SHCA_DRV_NAME, ddev->id);
	if (!err)
		err = dma_coerce_mask_and_coherent(dev, DMA_BIT_MASK(64));
	if (!err)
		err = device_add(dev);
	if (err) {
		put_device(dev);
		return err;
	}
	sdev->dma_dev = dev;
	return 0;
}

static int shca_net_link_add(struct shca_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;
	int err;

	sdev->net_kobj = kobject_create_and_add("net", &sdev->dma_dev->kobj);
	if (!sdev->net_kobj)
		return -ENOMEM;
	strscpy(sdev->net_link, ndev->name, sizeof(sdev->net_link));
	err = sysfs_create_link(sdev->net_kobj, &ndev->dev.kobj,
				sdev->net_link);
	if (err) {
		kobject_put(sdev->net_kobj);
		sdev->net_kobj = NULL;
	}
	return err;
}

/* Undo shca_dma_dev_add() and shca_net_link_add(); ibdev is gone from sysfs. */
static void shca_dma_dev_del(struct shca_dev *sdev)
{
	if (sdev->net_kobj) {
		/* the link carries the name it was created with */
		sysfs_remove_link(sdev->net_kobj, sdev->net_link);
		kobject_put(sdev->net_kobj);
		sdev->net_kobj = NULL;
	}
	device_del(sdev->dma_dev);
	put_device(sdev->dma_dev);
	sdev->dma_dev = NULL;
}

/* Release what shca_dev_init() set up; ib_dealloc_device() is the caller's. */
static void shca_dev_fini(struct shca_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->qps));
	WARN_ON(!xa_empty(&sdev->cqs));
	WARN_ON(!xa_empty(&sdev->mrs));
	WARN_ON(!xa_empty(&sdev->mws));
	WARN_ON(!xa_empty(&sdev->ahs));
	WARN_ON(!xa_empty(&sdev->srqs));
	WARN_ON(!xa_empty(&sdev->rwqs));
	WARN_ON(!xa_empty(&sdev->counters));
	xa_destroy(&sdev->qps);
	xa_destroy(&sdev->cqs);
	xa_destroy(&sdev->mrs);
	xa_destroy(&sdev->mws);
	xa_destroy(&sdev->ahs);
	xa_destroy(&sdev->srqs);
	xa_destroy(&sdev->rwqs);
	xa_destroy(&sdev->counters);
	ida_destroy(&sdev->ind_tbl_ida);
	ida_destroy(&sdev->pd_ida);
	ida_destroy(&sdev->xrcd_ida);
	if (sdev->dma_dev)
		shca_dma_dev_del(sdev);
	shca_flow_dev_fini(sdev);
	shca_net_put(sdev);
	dev_put(sdev->ndev);
}

/*
 * ib_core calls this last on unregistration (all paths), and
 * ib_dealloc_device() on a newlink that failed after shca_dev_init() began.
 */
static void shca_dealloc_driver(struct ib_device *ibdev)
{
	struct shca_dev *sdev = to_sdev(ibdev);

	mutex_lock(&shca_dev_mutex);
	list_del(&sdev->list);
	mutex_unlock(&shca_dev_mutex);
	shca_dev_fini(sdev);
	wake_up(&shca_exit_wq);
}

/*
 * xa_init_flags() is inline: every xarray initialised here would share
 * one lockdep class, mixing the irq-safe (qps, ahs: looked up from the
 * RX softirq) with the process-only ones.
 */
static struct lock_class_key shca_qps_key, shca_cqs_key, shca_mrs_key,
	shca_mws_key, shca_ahs_key, shca_srqs_key, shca_rwqs_key,
	shca_counters_key;

static void shca_dev_init_ids(struct shca_dev *sdev)
{
	ida_init(&sdev->pd_ida);
	ida_init(&sdev->xrcd_ida);
	mutex_init(&sdev->mcg_mutex);
	INIT_LIST_HEAD(&sdev->mcgs);
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->cqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->mrs, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->mws, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->ahs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&sdev->srqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->rwqs, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->counters, XA_FLAGS_ALLOC1);
	ida_init(&sdev->ind_tbl_ida);
	lockdep_set_class(&sdev->qps.xa_lock, &shca_qps_key);
	lockdep_set_class(&sdev->cqs.xa_lock, &shca_cqs_key);
	lockdep_set_class(&sdev->mrs.xa_lock, &shca_mrs_key);
	lockdep_set_class(&sdev->mws.xa_lock, &shca_mws_key);
	lockdep_set_class(&sdev->ahs.xa_lock, &shca_ahs_key);
	lockdep_set_class(&sdev->srqs.xa_lock, &shca_srqs_key);
	lockdep_set_class(&sdev->rwqs.xa_lock, &shca_rwqs_key);
	lockdep_set_class(&sdev->counters.xa_lock, &shca_counters_key);
	sdev->next_qpn = SHCA_GSI_QPN + 1;
}

static int shca_dev_init(struct shca_dev *sdev, struct net_device *ndev)
{
	struct ib_device *ibdev = &sdev->ibdev;
	int err;

	dev_hold(ndev);
	sdev->ndev = ndev;
	INIT_LIST_HEAD(&sdev->list);
	shca_dev_init_ids(sdev);
	/*
	 * From here on ib_dealloc_device() undoes all of this through
	 * shca_dealloc_driver(), on every path: a failure below, a failed
	 * ib_register_device(), and unregistration.
	 */
	ib_set_device_ops(ibdev, &shca_dev_ops);

	err = shca_net_get(sdev);
	if (!err)
		err = shca_flow_dev_init(sdev);
	if (!err)
		err = shca_dma_dev_add(sdev);
	if (!err)
		err = shca_net_link_add(sdev);
	if (err)
		return err;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	/* one completion vector per CPU, see shca_cq_vector_cpu() */
	ibdev->num_comp_vectors = num_online_cpus();
	ibdev->node_guid = shca_mac_to_guid(ndev->dev_addr);
	ibdev->dev.parent = sdev->dma_dev;
	/*
	 * POST_SEND with no work request is the user SQ doorbell,
	 * POST_SRQ_RECV with none a TM SRQ's list operation doorbell.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV);
	strscpy(ibdev->node_desc, "shca", sizeof(ibdev->node_desc));
	return ib_device_set_netdev(ibdev, ndev, 1);
}

/* Find the instance on @ndev; caller holds shca_dev_mutex. */
static struct shca_dev *shca_find_locked(struct net_device *ndev)
{
	struct shca_dev *sdev;

	lockdep_assert_held(&shca_dev_mutex);
	list_for_each_entry(sdev, &shca_dev_list, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/* Reserve @ndev for @sdev: -EEXIST if another instance has it. */
static int shca_dev_list_add(struct shca_dev *sdev)
{
	int err = 0;

	mutex_lock(&shca_dev_mutex);
	if (shca_find_locked(sdev->ndev))
		err = -EEXIST;
	else
		list_add_tail(&sdev->list, &shca_dev_list);
	mutex_unlock(&shca_dev_mutex);
	return err;
}

static void shca_dev_list_del(struct shca_dev *sdev)
{
	mutex_lock(&shca_dev_mutex);
	list_del_init(&sdev->list);
	mutex_unlock(&shca_dev_mutex);
}

static int shca_newlink_check(const char *name, struct net_device *ndev)
{
	bool taken;

	if (ndev->type != ARPHRD_ETHER) {
		netdev_err(ndev, "shca: %s: not an Ethernet device (type %u)\n",
			   name, ndev->type);
		return -EINVAL;
	}
	mutex_lock(&shca_dev_mutex);
	taken = shca_find_locked(ndev);
	mutex_unlock(&shca_dev_mutex);
	if (taken) {
		netdev_err(ndev, "shca: %s: netdev already has an shca device\n",
			   name);
		return -EEXIST;
	}
	return 0;
}

static void shca_unregister_queued(struct shca_dev *sdev)
{
	struct ib_device *ibdev = &sdev->ibdev;

	if (!ib_device_try_get(ibdev))
		return;		/* already on its way out */
	ib_unregister_device_queued(ibdev);
	ib_device_put(ibdev);
}

/*
 * Context: process (rdma link add), may sleep; takes RTNL, then
 * shca_dev_mutex, as the netdev notifier does.
 */
static int shca_register(struct shca_dev *sdev, const char *name)
{
	int err;

	err = shca_dev_list_add(sdev);
	if (err) {
		netdev_err(sdev->ndev, "shca: %s: netdev already has an shca device\n",
			   name);
		return err;
	}
	err = ib_register_device(&sdev->ibdev, name, NULL);
	if (err) {
		netdev_err(sdev->ndev, "shca: %s: ib_register_device: %d\n",
			   name, err);
		shca_dev_list_del(sdev);
		return err;
	}
	/*
	 * Until sdev->registered is set the notifier ignores us, so the
	 * netdev's NETDEV_UNREGISTER may have come and gone since
	 * ib_register_device() made the device visible.  Under RTNL,
	 * reg_state tells: unregister_netdevice() leaves NETREG_REGISTERED,
	 * and runs the notifier, under RTNL; a later one finds registered
	 * set.  If it went, do what the notifier would have done: let go of
	 * the netdev's flow hooks (a rule may have been created meanwhile)
	 * and have the device unregistered.
	 */
	rtnl_lock();
	mutex_lock(&shca_dev_mutex);
	sdev->registered = true;
	sdev->port_state = shca_port_state(sdev);
	if (sdev->ndev->reg_state != NETREG_REGISTERED) {
		shca_flow_netdev_gone(sdev);
		shca_unregister_queued(sdev);
	}
	mutex_unlock(&shca_dev_mutex);
	rtnl_unlock();
	return 0;
}

static int shca_newlink(const char *name, struct net_device *ndev)
{
	struct shca_dev *sdev;
	int err;

	err = shca_newlink_check(name, ndev);
	if (err)
		return err;
	sdev = ib_alloc_device(shca_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	err = shca_dev_init(sdev, ndev);
	if (!err)
		err = shca_register(sdev, name);
	if (err) {
		/* shca_dealloc_driver() undoes shca_dev_init(), once */
		ib_dealloc_device(&sdev->ibdev);
		return err;
	}
	ibdev_info(&sdev->ibdev, "attached to %s\n", netdev_name(ndev));
	return 0;
}

static struct rdma_link_ops shca_link_ops = {
	.type = SHCA_DRV_NAME,
	.newlink = shca_newlink,
};

static void shca_port_event(struct shca_dev *sdev)
{
	enum ib_port_state state = shca_port_state(sdev);
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
	};

	if (state == sdev->port_state)
		return;
	sdev->port_state = state;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/* Context: process, RTNL held. */
static int shca_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct shca_dev *sdev;

	mutex_lock(&shca_dev_mutex);
	sdev = shca_find_locked(ndev);
	if (!sdev || !sdev->registered)
		goto out;

	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		shca_port_event(sdev);
		break;
	case NETDEV_UNREGISTER:
		shca_flow_netdev_gone(sdev);	/* its hooks go now */
		shca_unregister_queued(sdev);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&shca_dev_mutex);
	return NOTIFY_OK;
}

static struct notifier_block shca_netdev_nb = {
	.notifier_call = shca_netdev_event,
};

static const struct ib_device_ops shca_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SHCA_UVERBS_ABI_VERSION,
	.device_group = &shca_attr_group,	/* SHCA_SYSFS_ABI_ATTR */

	.advise_mr = SHCA_ADVISE_MR,	/* NULL without ODP */
	.alloc_hw_port_stats = shca_alloc_hw_port_stats,
	.alloc_mr = shca_alloc_mr,
	.alloc_mw = shca_alloc_mw,
	.alloc_pd = shca_alloc_pd,
	.alloc_ucontext = shca_alloc_ucontext,
	.alloc_xrcd = shca_alloc_xrcd,
	.attach_mcast = shca_attach_mcast,
	.counter_alloc_stats = shca_counter_alloc_stats,
	.counter_bind_qp = shca_counter_bind_qp,
	.counter_dealloc = shca_counter_dealloc,
	.counter_unbind_qp = shca_counter_unbind_qp,
	.counter_update_stats = shca_counter_update_stats,
	.create_ah = shca_create_ah,
	.create_cq = shca_create_cq,
	.create_flow = shca_create_flow,
	.create_qp = shca_create_qp,
	.create_rwq_ind_table = shca_create_rwq_ind_table,
	.create_srq = shca_create_srq,
	.create_user_ah = shca_create_ah,
	.create_wq = shca_create_wq,
	.dealloc_driver = shca_dealloc_driver,
	.dealloc_mw = shca_dealloc_mw,
	.dealloc_pd = shca_dealloc_pd,
	.dealloc_ucontext = shca_dealloc_ucontext,
	.dealloc_xrcd = shca_dealloc_xrcd,
	.dereg_mr = shca_dereg_mr,
	.destroy_ah = shca_destroy_ah,
	.destroy_cq = shca_destroy_cq,
	.destroy_flow = shca_destroy_flow,
	.destroy_qp = shca_destroy_qp,
	.destroy_rwq_ind_table = shca_destroy_rwq_ind_table,
	.destroy_srq = shca_destroy_srq,
	.destroy_wq = shca_destroy_wq,
	.detach_mcast = shca_detach_mcast,
	.disassociate_ucontext = shca_disassociate_ucontext,
	.fill_res_cq_entry = shca_fill_res_cq_entry,
	.fill_res_qp_entry = shca_fill_res_qp_entry,
	.get_dev_fw_str = shca_get_dev_fw_str,
	.get_dma_mr = shca_get_dma_mr,
	.get_hw_stats = shca_get_hw_stats,
	.get_link_layer = shca_get_link_layer,
	.get_port_immutable = shca_get_port_immutable,
	.map_mr_sg = shca_map_mr_sg,
	.mmap = shca_mmap,
	.mmap_free = shca_mmap_free,
	.modify_cq = shca_modify_cq,
	.modify_qp = shca_modify_qp,
	.modify_srq = shca_modify_srq,
	.modify_wq = shca_modify_wq,
	.poll_cq = shca_poll_cq,
	.post_recv = shca_post_recv,
	.post_send = shca_post_send,
	.post_srq_recv = shca_post_srq_recv,
	.query_ah = shca_query_ah,
	.query_device = shca_query_device,
	.query_pkey = shca_query_pkey,
	.query_port = shca_query_port,
	.query_qp = shca_query_qp,
	.query_srq = shca_query_srq,
	.reg_user_mr = shca_reg_user_mr,
	.req_notify_cq = shca_req_notify_cq,
	.rereg_user_mr = shca_rereg_user_mr,
	.resize_cq = shca_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, shca_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, shca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, shca_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, shca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, shca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_rwq_ind_table, shca_ind_tbl, ibtbl),
	INIT_RDMA_OBJ_SIZE(ib_srq, shca_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, shca_ucontext, ibuctx),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, shca_xrcd, ibxrcd),
};

static int __init shca_init(void)
{
	int err;

	/*
	 * WQ_MEM_RECLAIM: storage ULPs (nvmet-rdma, nvme-rdma) destroy QPs
	 * from their own reclaim workqueues, and destroy flushes our engines.
	 * WQ_HIGHPRI: the engines are the packet path; a woken engine must
	 * not queue behind a thread busy-polling its CQ (make bench, TCG:
	 * about 1.6x the bandwidth and 0.65x the round trip).
	 */
	shca_icrc_init();
	shca_wq = alloc_workqueue("shca",
				  WQ_UNBOUND | WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!shca_wq) {
		err = -ENOMEM;
		goto err_icrc;
	}
	/*
	 * Completion events: per-CPU (bound) so an event runs on its
	 * vector's CPU; WQ_MEM_RECLAIM for the same reason as shca_wq, as
	 * QP destroy flushes a queued event.
	 */
	shca_comp_wq = alloc_workqueue("shca_comp", WQ_HIGHPRI | WQ_MEM_RECLAIM,
				       0);
	if (!shca_comp_wq) {
		err = -ENOMEM;
		goto err_wq;
	}
	err = shca_net_init();
	if (err)
		goto err_comp_wq;
	err = register_netdevice_notifier(&shca_netdev_nb);
	if (err)
		goto err_net;
	rdma_link_register(&shca_link_ops);
	return 0;

err_net:
	shca_net_exit();
err_comp_wq:
	destroy_workqueue(shca_comp_wq);
err_wq:
	destroy_workqueue(shca_wq);
err_icrc:
	shca_icrc_exit();
	return err;
}

/* Take a registration reference on the first live instance, if any. */
static struct shca_dev *shca_get_first(void)
{
	struct shca_dev *sdev;

	mutex_lock(&shca_dev_mutex);
	list_for_each_entry(sdev, &shca_dev_list, list) {
		if (sdev->registered && ib_device_try_get(&sdev->ibdev)) {
			sdev->registered = false;
			mutex_unlock(&shca_dev_mutex);
			return sdev;
		}
	}
	mutex_unlock(&shca_dev_mutex);
	return NULL;
}

/*
 * The condition of shca_exit()'s wait_event(), so it runs with the task
 * not running and must not sleep: no mutex.  list_empty() reads the head
 * once; whoever empties the list or drops the last DMA device wakes
 * shca_exit_wq afterwards, and the wait re-checks.
 */
static bool shca_all_gone(void)
{
	return list_empty(&shca_dev_list) && !atomic_read(&shca_dma_devs);
}

static void __exit shca_exit(void)
{
	struct shca_dev *sdev;

	rdma_link_unregister(&shca_link_ops);
	unregister_netdevice_notifier(&shca_netdev_nb);
	while ((sdev = shca_get_first()))
		ib_unregister_device_and_put(&sdev->ibdev);
	/* Fence for unregistrations queued or running elsewhere. */
	wait_event(shca_exit_wq, shca_all_gone());
	shca_net_exit();
	destroy_workqueue(shca_comp_wq);
	destroy_workqueue(shca_wq);
	shca_icrc_exit();
}

module_init(shca_init);
module_exit(shca_exit);
