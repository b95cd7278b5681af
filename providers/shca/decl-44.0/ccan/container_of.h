/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca's own declaration of the container_of() the provider takes from
 * rdma-core 44.0's ccan/container_of.h.  Used only when no rdma-core 44.0
 * source tree can be had (scripts/rdma-core.sh build 44.0, "decl" way);
 * otherwise the provider is built inside rdma-core's tree.
 */
#ifndef SHCA_DECL_CCAN_CONTAINER_OF_H
#define SHCA_DECL_CCAN_CONTAINER_OF_H

#include <stddef.h>

/*
 * The object of type 'type' whose member 'member' ptr points to.  The
 * pointed-to type must be the member's type (qualifiers aside): a
 * mismatch does not compile.
 */
#define container_of(ptr, type, member)                                        \
	((type *)(void *)((char *)(ptr) - offsetof(type, member) +             \
			  0 * sizeof(struct {                                  \
				  _Static_assert(                              \
					  __builtin_types_compatible_p(        \
						  __typeof__(*(ptr)),          \
						  __typeof__(((type *)0)       \
								     ->member)), \
					  "container_of: pointer and member "  \
					  "types differ");                     \
				  int shca_unused;                             \
			  })))

#endif
