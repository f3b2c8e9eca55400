#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H

#include <stdint.h>

/// Whether this platform's allocator is wrapped (glibc only). When 0, the counts stay at 0.
int allocation_counter_is_available(void);

/// Starts counting allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) on
/// every thread. Counting is off at start.
void allocation_counter_start(void);

/// Stops counting.
void allocation_counter_stop(void);

/// Allocations counted since the process started (only while counting was on).
uint64_t allocation_counter_allocations(void);

/// Frees counted since the process started (only while counting was on).
uint64_t allocation_counter_frees(void);

/// Bytes allocated since the process started (only while counting was on), as `malloc_usable_size`
/// reports each block (without the allocator's 8-byte header per block).
uint64_t allocation_counter_allocated_bytes(void);

/// Bytes freed since the process started (only while counting was on), counted as allocations are.
uint64_t allocation_counter_freed_bytes(void);

#endif
