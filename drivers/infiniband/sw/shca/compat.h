/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: the one place where ib_core API differences between the kernels
 * we build for (6.1 and 6.12) are handled.  Nothing else in the driver
 * looks at the kernel version.
 */
#ifndef SHCA_COMPAT_H
#define SHCA_COMPAT_H

#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * Since 6.11 ib_device_ops.create_cq takes the uverbs attribute bundle
 * instead of the driver udata; kernel callers pass NULL.
 * SHCA_HAVE_CREATE_CQ_ATTRS comes from a header test in Kbuild.
 */
#ifdef SHCA_HAVE_CREATE_CQ_ATTRS
#define SHCA_CREATE_CQ_ARG struct uverbs_attr_bundle

static inline struct ib_udata *shca_create_cq_udata(SHCA_CREATE_CQ_ARG *arg)
{
	return arg ? &arg->driver_udata : NULL;
}
#else
#define SHCA_CREATE_CQ_ARG struct ib_udata

static inline struct ib_udata *shca_create_cq_udata(SHCA_CREATE_CQ_ARG *arg)
{
	return arg;
}
#endif

#endif /* SHCA_COMPAT_H */
