// The lock of the hand-written baselines: on Linux a futex-based mutex, one atomic operation to lock
// and one to unlock when uncontended (the three-state mutex of Ulrich Drepper's "Futexes Are Tricky":
// 0 unlocked, 1 locked, 2 locked with waiters), so that a baseline pays what an expert's lock costs
// and no more, as the Signals library's own lock does on Linux. Elsewhere, `os_unfair_lock` (Apple
// platforms) or a `pthread_mutex_t`.

#ifndef BASELINE_LOCK_H
#define BASELINE_LOCK_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__linux__)

typedef uint32_t baseline_lock_t;

/// The slow paths, in BaselineLock.c.
void baseline_lock_wait(baseline_lock_t *_Nonnull word);
void baseline_lock_wake(baseline_lock_t *_Nonnull word);

static inline void baseline_lock_init(baseline_lock_t *_Nonnull word) { __atomic_store_n(word, 0, __ATOMIC_RELAXED); }
static inline void baseline_lock_destroy(baseline_lock_t *_Nonnull word) { (void)word; }

static inline void baseline_lock_lock(baseline_lock_t *_Nonnull word) {
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(word, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        baseline_lock_wait(word);
    }
}

static inline void baseline_lock_unlock(baseline_lock_t *_Nonnull word) {
    if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2) {
        baseline_lock_wake(word);
    }
}

#elif defined(__APPLE__)

#include <os/lock.h>
typedef os_unfair_lock baseline_lock_t;
static inline void baseline_lock_init(baseline_lock_t *_Nonnull lock) { *lock = OS_UNFAIR_LOCK_INIT; }
static inline void baseline_lock_destroy(baseline_lock_t *_Nonnull lock) { (void)lock; }
static inline void baseline_lock_lock(baseline_lock_t *_Nonnull lock) { os_unfair_lock_lock(lock); }
static inline void baseline_lock_unlock(baseline_lock_t *_Nonnull lock) { os_unfair_lock_unlock(lock); }

#else

#include <pthread.h>
typedef pthread_mutex_t baseline_lock_t;
static inline void baseline_lock_init(baseline_lock_t *_Nonnull lock) { pthread_mutex_init(lock, NULL); }
static inline void baseline_lock_destroy(baseline_lock_t *_Nonnull lock) { pthread_mutex_destroy(lock); }
static inline void baseline_lock_lock(baseline_lock_t *_Nonnull lock) { pthread_mutex_lock(lock); }
static inline void baseline_lock_unlock(baseline_lock_t *_Nonnull lock) { pthread_mutex_unlock(lock); }

#endif

#endif
