// A futex-based mutex for Linux: the lock of the Signals library there (Apple platforms use
// os_unfair_lock). Uncontended, locking and unlocking are one atomic operation each, where
// glibc's pthread_mutex_t costs about 50 instructions per pair; under contention a waiter spins
// briefly, then sleeps in the kernel until the holder wakes it. The algorithm is the three-state
// mutex of Ulrich Drepper's "Futexes Are Tricky" (0 unlocked, 1 locked, 2 locked with waiters), as
// Rust's standard library implements it. The atomic operations carry the acquire/release ordering,
// so the thread sanitizer sees every hand-over. Package-internal: not API.

#ifndef SIGNALS_LOCK_H
#define SIGNALS_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__linux__)

/// The slow paths, in SignalsLock.c: wait for the lock; wake one waiter.
void signals_lock_lock_contended(uint32_t *_Nonnull word);
void signals_lock_wake(uint32_t *_Nonnull word);

/// Initializes an unlocked lock.
static inline void signals_lock_init(uint32_t *_Nonnull word) {
    __atomic_store_n(word, 0, __ATOMIC_RELAXED);
}

/// Takes the lock, waiting for it if another thread holds it.
static inline void signals_lock_lock(uint32_t *_Nonnull word) {
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(word, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        signals_lock_lock_contended(word);
    }
}

/// Releases the lock, waking a waiter if there is one.
static inline void signals_lock_unlock(uint32_t *_Nonnull word) {
    if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2) {
        signals_lock_wake(word);
    }
}

#endif

#endif
