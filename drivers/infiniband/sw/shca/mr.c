// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca: memory regions.
 *
 * Keys are (xarray index << 8) | generation byte; lkey == rkey.  The
 * index is reserved first (NULL entry) and the MR is published with
 * xa_store() once fully built.  Deregistration unpublishes, drops the
 * creation reference and waits for lookups (the future datapath) to
 * finish with the MR.
 */
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "shca.h"

#define SHCA_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

static int shca_mr_check_access(struct ib_device *ibdev, int access)
{
	int unsupported = access & ~(SHCA_MR_ACCESS | IB_ACCESS_OPTIONAL);

	if (unsupported) {
		ibdev_dbg(ibdev, "mr: unsupported access flags %#x\n",
			  unsupported);
		return -EOPNOTSUPP;
	}
	return 0;
}

static void shca_mr_release(struct kref *ref)
{
	complete(&container_of(ref, struct shca_mr, ref)->freed);
}

static struct shca_mr *shca_mr_new(struct shca_dev *sdev, int access)
{
	struct shca_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	kref_init(&mr->ref);
	init_completion(&mr->freed);
	spin_lock_init(&mr->lock);
	mr->access = access;

	if (atomic_inc_return(&sdev->num_mr) > SHCA_MAX_MR) {
		ibdev_dbg(&sdev->ibdev, "mr: limit %u reached\n", SHCA_MAX_MR);
		err = -ENOMEM;
		goto err_count;
	}
	err = xa_alloc(&sdev->mrs, &mr->index, NULL,
		       XA_LIMIT(1, SHCA_MAX_MR), GFP_KERNEL);
	if (err)
		goto err_count;
	mr->ibmr.lkey = (mr->index << 8) |
			(atomic_inc_return(&sdev->mr_key_gen) & 0xff);
	mr->ibmr.rkey = mr->ibmr.lkey;
	return mr;

err_count:
	atomic_dec(&sdev->num_mr);
	kfree(mr);
	return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
}

static int shca_mr_publish(struct shca_dev *sdev, struct shca_mr *mr)
{
	return xa_err(xa_store(&sdev->mrs, mr->index, mr, GFP_KERNEL));
}

/* Unpublish, drop the creation reference, wait for users, free. */
static void shca_mr_destroy(struct shca_dev *sdev, struct shca_mr *mr)
{
	xa_erase(&sdev->mrs, mr->index);
	kref_put(&mr->ref, shca_mr_release);
	wait_for_completion(&mr->freed);
	ib_umem_release(mr->umem);
	atomic_dec(&sdev->num_mr);
	kfree(mr);
}

struct ib_mr *shca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct shca_mr *mr;
	int err;

	err = shca_mr_check_access(&sdev->ibdev, access);
	if (err)
		goto err_out;
	mr = shca_mr_new(sdev, access);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto err_out;
	}
	mr->type = SHCA_MR_DMA;
	mr->length = U64_MAX;
	err = shca_mr_publish(sdev, mr);
	if (err) {
		shca_mr_destroy(sdev, mr);
		goto err_out;
	}
	return &mr->ibmr;

err_out:
	shca_stat_inc(sdev, SHCA_STAT_REG_MR_ERR);
	return ERR_PTR(err);
}

static int shca_mr_check_range(struct ib_device *ibdev, u64 start,
			       u64 length, u64 iova)
{
	u64 end;

	if (!length || length > SHCA_MAX_MR_SIZE ||
	    check_add_overflow(start, length, &end) ||
	    check_add_overflow(iova, length, &end)) {
		ibdev_dbg(ibdev, "mr: bad range start %#llx len %#llx iova %#llx\n",
			  start, length, iova);
		return -EINVAL;
	}
	return 0;
}

static struct ib_umem *shca_umem_get(struct ib_device *ibdev, u64 start,
				     u64 length, u64 iova, int access)
{
	struct ib_umem *umem;
	int err;

	err = shca_mr_check_range(ibdev, start, length, iova);
	if (err)
		return ERR_PTR(err);
	umem = ib_umem_get(ibdev, start, length, access);
	if (IS_ERR(umem))
		ibdev_dbg(ibdev, "mr: ib_umem_get failed %ld\n", PTR_ERR(umem));
	return umem;
}

struct ib_mr *shca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibpd->device);
	struct ib_umem *umem;
	struct shca_mr *mr;
	int err;

	err = shca_udata_no_req(&sdev->ibdev, udata);
	if (!err)
		err = shca_mr_check_access(&sdev->ibdev, access);
	if (err)
		goto err_out;
	umem = shca_umem_get(&sdev->ibdev, start, length, iova, access);
	if (IS_ERR(umem)) {
		err = PTR_ERR(umem);
		goto err_out;
	}
	mr = shca_mr_new(sdev, access);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		err = PTR_ERR(mr);
		goto err_out;
	}
	mr->type = SHCA_MR_USER;
	mr->umem = umem;
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	err = shca_mr_publish(sdev, mr);
	if (err) {
		shca_mr_destroy(sdev, mr);
		goto err_out;
	}
	return &mr->ibmr;

err_out:
	shca_stat_inc(sdev, SHCA_STAT_REG_MR_ERR);
	return ERR_PTR(err);
}

/* Swap the translation; the old umem is returned for release. */
static struct ib_umem *shca_mr_set_trans(struct shca_mr *mr,
					 struct ib_umem *umem, u64 iova,
					 u64 length)
{
	struct ib_umem *old;

	spin_lock(&mr->lock);
	old = mr->umem;
	mr->umem = umem;
	mr->iova = iova;
	mr->length = length;
	spin_unlock(&mr->lock);
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	return old;
}

static int shca_rereg_check(struct ib_device *ibdev, struct shca_mr *mr,
			    int flags, int access, struct ib_udata *udata)
{
	int err = shca_udata_no_req(ibdev, udata);

	if (err)
		return err;
	if (flags & ~IB_MR_REREG_SUPPORTED) {
		ibdev_dbg(ibdev, "mr: unknown rereg flags %#x\n", flags);
		return -EOPNOTSUPP;
	}
	if (mr->type != SHCA_MR_USER) {
		ibdev_dbg(ibdev, "mr: rereg of a non-user MR\n");
		return -EINVAL;
	}
	if (flags & IB_MR_REREG_ACCESS)
		return shca_mr_check_access(ibdev, access);
	return 0;
}

static bool shca_mr_needs_repin(struct shca_mr *mr, int access)
{
	return ib_access_writable(access) && !mr->umem->writable;
}

/* Modifies the MR in place and returns NULL, or an ERR_PTR. */
struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct ib_device *ibdev = ibmr->device;
	struct shca_mr *mr = to_smr(ibmr);
	struct ib_umem *umem = NULL;
	int new_access;
	int err;

	err = shca_rereg_check(ibdev, mr, flags, access, udata);
	if (err)
		return ERR_PTR(err);
	new_access = flags & IB_MR_REREG_ACCESS ? access : mr->access;
	if (!(flags & IB_MR_REREG_TRANS) && shca_mr_needs_repin(mr, new_access)) {
		/* same range, pinned again for writing */
		flags |= IB_MR_REREG_TRANS;
		start = mr->umem->address;
		length = mr->length;
		iova = mr->iova;
	}
	if (flags & IB_MR_REREG_TRANS) {
		umem = shca_umem_get(ibdev, start, length, iova, new_access);
		if (IS_ERR(umem))
			return ERR_CAST(umem);
		umem = shca_mr_set_trans(mr, umem, iova, length);
	}
	spin_lock(&mr->lock);
	mr->access = new_access;
	spin_unlock(&mr->lock);
	/* ib_core updates ibmr->pd for IB_MR_REREG_PD itself */
	ib_umem_release(umem);
	return NULL;
}

int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	shca_mr_destroy(to_sdev(ibmr->device), to_smr(ibmr));
	return 0;
}

/**
 * shca_mr_get - look up an MR by lkey/rkey for the datapath
 * @sdev: device
 * @key: key from a WQE or packet (untrusted)
 *
 * Context: process (the engines); the MR xarray's lock is not irq-safe.
 * Return: the MR with a reference held, or NULL.
 */
struct shca_mr *shca_mr_get(struct shca_dev *sdev, u32 key)
{
	struct shca_mr *mr;

	xa_lock(&sdev->mrs);
	mr = xa_load(&sdev->mrs, key >> 8);
	if (mr && (mr->ibmr.lkey != key || !kref_get_unless_zero(&mr->ref)))
		mr = NULL;
	xa_unlock(&sdev->mrs);
	return mr;
}

void shca_mr_put(struct shca_mr *mr)
{
	kref_put(&mr->ref, shca_mr_release);
}
