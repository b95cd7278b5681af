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

/**
 * shca_ring_map - validate and map a ring described by the kernel
 * @ring: filled in on success, left unmapped on failure
 * @info: the kernel's description
 * @min_entry: smallest acceptable entry stride in bytes
 * @cmd_fd: the uverbs file the ring is mapped from
 *
 * The whole virtual range is reserved first so the chunks, each mapped
 * with its own mmap(2), end up contiguous.
 *
 * Return: 0 or a positive errno.
 */
int shca_ring_map(struct shca_ring *ring, const struct shca_ring_info *info,
		  size_t min_entry, int cmd_fd)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len;
	void *base;
	int ret;

	ring->map = NULL;
	ret = shca_ring_check(info, min_entry, page);
	if (ret)
		return ret;

	len = (info->mmap_len + page - 1) & ~((uint64_t)page - 1);
	base = mmap(NULL, len, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return errno;

	ret = ring_map_chunks(base, info, cmd_fd);
	if (ret) {
		munmap(base, len);
		return ret;
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
