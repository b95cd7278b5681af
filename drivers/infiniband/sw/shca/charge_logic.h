/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * shca: pure arithmetic of the ring memory charge (charge.c) - bytes to
 * pages, the locked-memory limit in pages, the device ceiling and the
 * limit comparison, and the choice of allocator for per-object state
 * (what a power-of-two kmalloc would waste).  No device or mm state; kunit/shca_kunit_charge.c
 * tests these exact functions.
 */
#ifndef SHCA_CHARGE_LOGIC_H
#define SHCA_CHARGE_LOGIC_H

#include <linux/types.h>

/* The ceiling when the module parameter is 0: RAM / this. */
#define SHCA_RING_MEM_RAM_DIV	4

/* Pages that @bytes of ring memory hold: rounded up to whole pages. */
static inline u64 shca_charge_pages(u64 bytes, unsigned int page_shift)
{
	u64 mask = (1ULL << page_shift) - 1;

	return (bytes >> page_shift) + !!(bytes & mask);
}

/*
 * RLIMIT_MEMLOCK (bytes; RLIM_INFINITY stays larger than any count) in
 * whole pages, rounded down as ib_umem does.
 */
static inline u64 shca_charge_rlimit_pages(u64 rlim_bytes,
					   unsigned int page_shift)
{
	return rlim_bytes >> page_shift;
}

/*
 * The device's ceiling in pages: @max_mb MiB, or when it is 0, a
 * SHCA_RING_MEM_RAM_DIV-th of @ram_pages.  Needs page_shift <= 20.
 */
static inline u64 shca_charge_ceiling(u32 max_mb, u64 ram_pages,
				      unsigned int page_shift)
{
	if (!max_mb)
		return ram_pages / SHCA_RING_MEM_RAM_DIV;
	return (u64)max_mb << (20 - page_shift);
}

/*
 * Does a count that became @total once @pages were added stay within
 * @limit?  A sum that wrapped (total < pages) never does.
 */
static inline bool shca_charge_within(u64 total, u64 pages, u64 limit)
{
	return total >= pages && total <= limit;
}

/*
 * Whether per-object state of @bytes is better vmalloc'ed than
 * kmalloc'ed: past @kmalloc_max (KMALLOC_MAX_CACHE_SIZE) kmalloc takes a
 * power-of-two block of pages, nearly twice the size asked at worst
 * (e.g. 76 KiB of shadow WQEs in 128 KiB); vmalloc takes whole pages.
 * True when the power of two would waste more than an eighth of it.
 */
static inline bool shca_alloc_wants_vmalloc(u64 bytes, u64 kmalloc_max,
					    unsigned int page_shift)
{
	u64 pages, block;

	if (bytes <= kmalloc_max)
		return false;
	pages = shca_charge_pages(bytes, page_shift);
	block = 1;
	while (block < pages)
		block <<= 1;
	return (block - pages) << 3 > block;
}

#endif /* SHCA_CHARGE_LOGIC_H */
