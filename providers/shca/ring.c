// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Mapping of the kernel-owned queue rings (see "Queue memory model" in
 * shca-abi.h).  The ring description comes from the kernel, but it is
 * still checked completely before any pointer is derived from it.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shca.h"

enum {
	SHCA_RING_MAX_ENTRIES = 1u << 24,
	SHCA_RING_MAX_ENTRY_SHIFT = 16,
	SHCA_RING_MAX_CHUNK_SHIFT = 30,
	SHCA_RING_CTL_ALIGN = 64,
};

#define SHCA_RING_MAX_LEN (1ULL << 34)

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static unsigned int log2_of(uint64_t pow2)
{
	return (unsigned int)__builtin_ctzll(pow2);
}

/* The geometry of the entry array: count, stride and placement. */
static int ring_check_entries(const struct shca_ring_info *info,
			      size_t min_entry)
{
	uint64_t end;

	if (!is_pow2(info->entries) || info->entries > SHCA_RING_MAX_ENTRIES)
		return EINVAL;
	if (info->entry_shift > SHCA_RING_MAX_ENTRY_SHIFT ||
	    info->entry_shift > info->chunk_shift ||
	    (1ULL << info->entry_shift) < min_entry)
		return EINVAL;
	/* Aligned to the stride, so no entry straddles a chunk boundary. */
	if (info->entries_offset & ((1u << info->entry_shift) - 1))
		return EINVAL;
	end = info->entries_offset +
	      ((uint64_t)info->entries << info->entry_shift);
	return end <= info->mmap_len ? 0 : EINVAL;
}

/* The control block: inside the range and not overlapping the entries. */
static int ring_check_ctl(const struct shca_ring_info *info)
{
	uint64_t ctl_end = (uint64_t)info->ctl_offset +
			   sizeof(struct shca_ring_ctl);
	uint64_t ent_end = info->entries_offset +
			   ((uint64_t)info->entries << info->entry_shift);

	if (info->ctl_offset % SHCA_RING_CTL_ALIGN || ctl_end > info->mmap_len)
		return EINVAL;
	if (ctl_end > info->entries_offset && info->ctl_offset < ent_end)
		return EINVAL;
	return 0;
}

/**
 * shca_ring_check - validate a ring description from the kernel
 * @info: the description
 * @min_entry: smallest acceptable entry stride in bytes
 * @page_size: the system page size
 *
 * Return: 0, or EINVAL if any field is out of range.
 */
int shca_ring_check(const struct shca_ring_info *info, size_t min_entry,
		    long page_size)
{
	if (page_size <= 0 || !is_pow2((uint64_t)page_size))
		return EINVAL;
	if (info->chunk_shift < log2_of((uint64_t)page_size) ||
	    info->chunk_shift > SHCA_RING_MAX_CHUNK_SHIFT)
		return EINVAL;
	if (!info->mmap_len || info->mmap_len > SHCA_RING_MAX_LEN)
		return EINVAL;
	if (info->mmap_key & ((uint64_t)page_size - 1) ||
	    info->mmap_key > (uint64_t)INT64_MAX - info->mmap_len)
		return EINVAL;
	if (ring_check_entries(info, min_entry))
		return EINVAL;
	return ring_check_ctl(info);
}

/* Map every chunk over the reserved range; the caller unmaps on error. */
static int ring_map_chunks(uint8_t *base, const struct shca_ring_info *info,
			   int cmd_fd)
{
	uint64_t chunk = 1ULL << info->chunk_shift;
	uint64_t off, len;
	void *p;

	for (off = 0; off < info->mmap_len; off += chunk) {
		len = info->mmap_len - off < chunk ? info->mmap_len - off : chunk;
		p = mmap(base + off, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, cmd_fd,
			 (off_t)(info->mmap_key + off));
		if (p == MAP_FAILED)
			return errno;
	}
	return 0;
}

/*
 * Where the next ring may go without a reservation: right under the last
 * ring mapped (its base).  With the usual top-down layout, mmap(2) puts a
 * new mapping at the top of the highest free gap that holds it, so the
 * space under it is mostly free (and where the kernel would put the next
 * one); anything already there makes MAP_FIXED_NOREPLACE fail, and the
 * ring then goes over a reservation as before.  After
 * SHCA_RING_FAST_MISSES rings in a row went over a reservation (a
 * bottom-up layout, a kernel before 4.17 that takes the flag for a hint)
 * it is not tried again.  The process's threads race on these benignly:
 * a lost update costs a miss at most.
 */
static uintptr_t ring_next_top;
static unsigned int ring_fast_misses;

enum { SHCA_RING_FAST_MISSES = 8 };

/* A ring is mapped at @base; @hit: by ring_map_fast(). */
static void ring_fast_done(uint8_t *base, bool hit)
{
	__atomic_store_n(&ring_next_top, (uintptr_t)base, __ATOMIC_RELAXED);
	if (hit)
		__atomic_store_n(&ring_fast_misses, 0, __ATOMIC_RELAXED);
	else if (__atomic_load_n(&ring_fast_misses, __ATOMIC_RELAXED) <
		 SHCA_RING_FAST_MISSES)
		__atomic_fetch_add(&ring_fast_misses, 1, __ATOMIC_RELAXED);
}

/*
 * One mmap(2) per chunk and no reservation: the chunks at their fixed
 * places under ring_next_top, the last first, none over a mapping
 * already there.  Whatever was mapped is unmapped on a miss.
 * Return: the base of the ring's range, all of it mapped, or NULL.
 */
static uint8_t *ring_map_fast(const struct shca_ring_info *info,
			      uint64_t len, int cmd_fd)
{
#ifdef MAP_FIXED_NOREPLACE
	uintptr_t top = __atomic_load_n(&ring_next_top, __ATOMIC_RELAXED);
	uint64_t chunk = 1ULL << info->chunk_shift;
	uint64_t off, clen;
	uint8_t *base;
	void *p;

	if (!top || top < len ||
	    __atomic_load_n(&ring_fast_misses, __ATOMIC_RELAXED) >=
	    SHCA_RING_FAST_MISSES)
		return NULL;
	base = (uint8_t *)(top - len);
	off = (info->mmap_len - 1) & ~(chunk - 1);
	for (;;) {
		clen = info->mmap_len - off < chunk ? info->mmap_len - off : chunk;
		p = mmap(base + off, clen, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, cmd_fd,
			 (off_t)(info->mmap_key + off));
		if (p != base + off)
			break;
		if (!off)
			return base;
		off -= chunk;
	}
	if (p != MAP_FAILED)
		munmap(p, clen);
	if (off + clen < len)
		munmap(base + off + clen, len - off - clen);
	return NULL;
#else
	(void)info;
	(void)len;
	(void)cmd_fd;
	return NULL;
#endif
}

/*
 * Reserve the whole range, then map each chunk over it (MAP_FIXED): one
 * more mmap(2) than ring_map_fast(), but it needs no free space at a
 * given place.
 */
static int ring_map_reserved(uint8_t **basep,
			     const struct shca_ring_info *info,
			     uint64_t len, int cmd_fd)
{
	void *base;
	int ret;

	base = mmap(NULL, len, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return errno;
	ret = ring_map_chunks(base, info, cmd_fd);
	if (ret) {
		munmap(base, len);
		return ret;
	}
	*basep = base;
	return 0;
}

/**
 * shca_ring_map - validate and map a ring described by the kernel
 * @ring: filled in on success, left unmapped on failure
 * @info: the kernel's description
 * @min_entry: smallest acceptable entry stride in bytes
 * @cmd_fd: the uverbs file the ring is mapped from
 *
 * Each chunk is mapped with its own mmap(2), into one contiguous range:
 * under the last ring mapped (ring_map_fast()) if the space is free, else
 * over a reservation of the whole range.
 *
 * Return: 0 or a positive errno.
 */
int shca_ring_map(struct shca_ring *ring, const struct shca_ring_info *info,
		  size_t min_entry, int cmd_fd)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *base;
	size_t len;
	int ret;

	ring->map = NULL;
	ret = shca_ring_check(info, min_entry, page);
	if (ret)
		return ret;

	len = (info->mmap_len + page - 1) & ~((uint64_t)page - 1);
	base = ring_map_fast(info, len, cmd_fd);
	if (base) {
		ring_fast_done(base, true);
	} else {
		ret = ring_map_reserved(&base, info, len, cmd_fd);
		if (ret)
			return ret;
		ring_fast_done(base, false);
	}

	ring->map = base;
	ring->map_len = len;
	ring->ctl = (struct shca_ring_ctl *)((uint8_t *)base + info->ctl_offset);
	ring->entries = (uint8_t *)base + info->entries_offset;
	ring->mask = info->entries - 1;
	ring->entry_shift = info->entry_shift;
	return 0;
}

void shca_ring_unmap(struct shca_ring *ring)
{
	if (ring->map)
		munmap(ring->map, ring->map_len);
	ring->map = NULL;
}
