// The slow paths of the futex-based lock (see include/SignalsLock.h).
#include "SignalsLock.h"

#if defined(__linux__)

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Spins while the lock is held without waiters, a bounded number of times; returns the last state
/// seen.
static uint32_t signals_lock_spin(uint32_t *word) {
    for (int remaining = 100; ; remaining--) {
        uint32_t state = __atomic_load_n(word, __ATOMIC_RELAXED);
        if (state != 1 || remaining == 0) {
            return state;
        }
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    }
}

void signals_lock_lock_contended(uint32_t *word) {
    uint32_t state = signals_lock_spin(word);
    if (state == 0) {
        uint32_t expected = 0;
        if (__atomic_compare_exchange_n(word, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            return;
        }
        state = expected;
    }
    while (true) {
        // Mark the lock as having a waiter; if it was free meanwhile, it is ours (still marked, so
        // the unlock may wake someone needlessly: harmless).
        if (state != 2 && __atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) == 0) {
            return;
        }
        // Sleep while the word is still 2 (the kernel checks atomically); spurious wake-ups loop.
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        state = signals_lock_spin(word);
    }
}

void signals_lock_wake(uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

#endif
