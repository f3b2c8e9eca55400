// Heap allocation counting for the benchmarks, without LD_PRELOAD.
//
// On glibc, an executable that defines `malloc` and friends interposes them for every shared library
// in the process (libc itself, libswiftCore, libdispatch, Foundation): the dynamic linker resolves
// those symbols to the executable's definitions first. Our definitions count, then forward to glibc's
// own exported entry points (`__libc_malloc` & co.), so no `dlsym` bootstrapping is needed. Counting
// is gated by a flag so the timing runs pay only one predictable branch per allocation; counters are
// relaxed atomics so effect threads are counted too. Bytes are counted as `malloc_usable_size` reports
// them (what the allocator reserved for the block, without its 8-byte header), added on allocation and
// subtracted on free, so `allocated - freed` is what is outstanding; a `realloc` of a block counts as a
// free of the old one and an allocation of the new one, so allocations minus frees stays the number of
// blocks outstanding.
#include "AllocationCounter.h"

#if defined(__linux__) && defined(__GLIBC__)

#include <errno.h>
#include <malloc.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static volatile int counting = 0;
static uint64_t allocations = 0;
static uint64_t frees = 0;
static uint64_t allocatedBytes = 0;
static uint64_t freedBytes = 0;

#define COUNT(counter) \
    do { if (__builtin_expect(counting, 0)) __atomic_fetch_add(&(counter), 1, __ATOMIC_RELAXED); } while (0)

/// Counts `pointer`, just allocated, if counting is on.
static inline void *allocated(void *pointer) {
    if (__builtin_expect(counting, 0) && pointer) {
        __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&allocatedBytes, malloc_usable_size(pointer), __ATOMIC_RELAXED);
    }
    return pointer;
}

/// Counts `pointer`, about to be freed, if counting is on.
static inline void freeing(void *pointer) {
    if (__builtin_expect(counting, 0) && pointer) {
        __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&freedBytes, malloc_usable_size(pointer), __ATOMIC_RELAXED);
    }
}

void *malloc(size_t size) {
    return allocated(__libc_malloc(size));
}

void *calloc(size_t count, size_t size) {
    return allocated(__libc_calloc(count, size));
}

void *realloc(void *pointer, size_t size) {
    if (!pointer) return allocated(__libc_realloc(pointer, size));
    size_t oldBytes = __builtin_expect(counting, 0) ? malloc_usable_size(pointer) : 0;
    void *result = __libc_realloc(pointer, size);
    if (__builtin_expect(counting, 0) && (result || size == 0)) {
        // The old block is gone (moved, grown in place or, for size 0, freed).
        __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&freedBytes, oldBytes, __ATOMIC_RELAXED);
        allocated(result);
    }
    return result;
}

void free(void *pointer) {
    freeing(pointer);
    __libc_free(pointer);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = allocated(__libc_memalign(alignment, size));
    if (!pointer && size) return ENOMEM;
    *result = pointer;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    return allocated(__libc_memalign(alignment, size));
}

void *memalign(size_t alignment, size_t size) {
    return allocated(__libc_memalign(alignment, size));
}

int allocation_counter_is_available(void) { return 1; }

#else

static uint64_t allocations = 0;
static uint64_t frees = 0;
static uint64_t allocatedBytes = 0;
static uint64_t freedBytes = 0;
static int counting = 0;

int allocation_counter_is_available(void) { return 0; }

#endif

void allocation_counter_start(void) { __atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST); }
void allocation_counter_stop(void) { __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST); }
uint64_t allocation_counter_allocations(void) { return __atomic_load_n(&allocations, __ATOMIC_RELAXED); }
uint64_t allocation_counter_frees(void) { return __atomic_load_n(&frees, __ATOMIC_RELAXED); }
uint64_t allocation_counter_allocated_bytes(void) { return __atomic_load_n(&allocatedBytes, __ATOMIC_RELAXED); }
uint64_t allocation_counter_freed_bytes(void) { return __atomic_load_n(&freedBytes, __ATOMIC_RELAXED); }
