// Atomic operations on one machine word, for the Signals library's delivery fast path.
//
// Swift's own `Synchronization.Atomic` needs macOS 15 / iOS 18; these wrappers over the compiler's
// `__atomic` builtins work on every supported platform, are inlined into Swift callers, and are seen
// by the thread sanitizer. Package-internal: not API.

#ifndef SIGNALS_ATOMICS_H
#define SIGNALS_ATOMICS_H

#if defined(_WIN32)
#include <windows.h>
#else
#include <pthread.h>
#endif
#include <stdbool.h>
#include <stdint.h>

#include "SignalsLock.h"

/// Loads the word (acquire).
static inline uintptr_t signals_atomic_load(uintptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}

/// Stores `value` (release).
static inline void signals_atomic_store(uintptr_t *_Nonnull word, uintptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}

/// Replaces the word with `desired` if it equals `expected` (acquire-release); returns whether it did.
static inline bool signals_atomic_compare_exchange(uintptr_t *_Nonnull word, uintptr_t expected,
                                                   uintptr_t desired) {
    return __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

/// Loads the word (sequentially consistent: ordered after every earlier sequentially consistent
/// operation of this thread, on any word).
static inline uintptr_t signals_atomic_load_sequential(uintptr_t *_Nonnull word) {
    return __atomic_load_n(word, __ATOMIC_SEQ_CST);
}

/// Stores `value` (sequentially consistent: no later load of this thread moves before it).
static inline void signals_atomic_store_sequential(uintptr_t *_Nonnull word, uintptr_t value) {
    __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
}

/// Sets `bits` in the word (sequentially consistent).
static inline void signals_atomic_or_sequential(uintptr_t *_Nonnull word, uintptr_t bits) {
    __atomic_fetch_or(word, bits, __ATOMIC_SEQ_CST);
}

/// The calling thread's identity: no two running threads share it, and it is never 0.
static inline uintptr_t signals_thread_id(void) {
#if defined(_WIN32)
    return (uintptr_t)GetCurrentThreadId();
#else
    return (uintptr_t)pthread_self();
#endif
}

#endif
