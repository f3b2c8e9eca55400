// The slow paths of the baselines' futex lock (see include/BaselineLock.h).
#include "BaselineLock.h"

#if defined(__linux__)

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void baseline_lock_wait(baseline_lock_t *word) {
    while (true) {
        // Mark the lock as having a waiter; if it was free meanwhile, it is ours.
        if (__atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) == 0) {
            return;
        }
        // Sleep while the word is still 2 (the kernel checks atomically); spurious wake-ups loop.
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    }
}

void baseline_lock_wake(baseline_lock_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

#endif
