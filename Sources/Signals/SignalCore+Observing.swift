// Observing: adding and removing observers, and what ends a signal that nothing can reach.

extension SignalCore {
    /// Adds `observer`, which receives every event sent from now on. See `Signal.observe(_:)`.
    /// Inlinable, with what it calls, so that it runs specialized: generic, it looked up generic
    /// metadata at each observation (a child's start observes its replies; BENCHMARKS.md, "children
    /// specialized").
    @inlinable
    package func observe(_ observer: Observer<Value, Error>) -> Disposable {
        lock.lock()
        if let terminal {
            lock.unlock()
            observer.action(terminal)
            return AnyDisposable.disposed
        }
        let token = attach(observer)
        lock.unlock()
        return AnyDisposable { [weak self] in self?.removeObserver(token) }
    }

    /// Adds `observer` and delivers `initial()` to it alone before any later event. `initial` runs
    /// under the lock, in the same critical section that attaches the observer, so no event is missed
    /// or repeated in between: it must be package code, never a user closure.
    ///
    /// The initial event is delivered on the calling thread without holding the delivering role, so
    /// the signal's other observers are never held up by it: events sent meanwhile reach them at once,
    /// and reach this observer after its initial event, in order, on the calling thread.
    package func observe(
        _ observer: Observer<Value, Error>,
        initial: () -> Event<Value, Error>
    ) -> Disposable {
        lock.lock()
        let initialEvent = initial()
        if let terminal {
            lock.unlock()
            observer.action(initialEvent)
            observer.action(terminal)
            return AnyDisposable.disposed
        }
        let catchingUp = CatchingUpObserver(observer)
        let token = attach(catchingUp.observer)
        lock.unlock()
        catchingUp.catchUp(after: initialEvent)
        return AnyDisposable { [weak self] in
            catchingUp.cancel()
            self?.removeObserver(token)
        }
    }

    /// Attaches `observer` with `lock` held: at once if nobody is delivering, or queued for the
    /// deliverer. Returns its token.
    @inlinable
    func attach(_ observer: Observer<Value, Error>) -> UInt64 {
        let token = nextToken
        nextToken &+= 1
        observerCount += 1
        let entry = Entry(token: token, observer: observer)
        if takeDeliveringRoleOrMarkPending() {
            appendObserver(entry)
            releaseDeliveringRole()
        } else {
            pending.append(.add(entry))
        }
        return token
    }

    /// Whether a terminal event has been accepted.
    package var hasTerminated: Bool {
        lock.loadWord() & DeliveryState.closed != 0
    }

    @inlinable
    func removeObserver(_ token: UInt64) {
        lock.lock()
        if ending != nil {
            lock.unlock()
            return
        }
        observerCount -= 1
        var removed: Entry?
        if takeDeliveringRoleOrMarkPending() {
            if let index = indexOfObserver(token) {
                removed = detachObserver(at: index)
            }
            releaseDeliveringRole()
        } else {
            pendingRemovals.append(token)
        }
        endIfUnreachableWithLockHeld()
        withExtendedLifetime(removed) {}
    }

    /// The `Signal` handle was released: nobody can add an observer any more.
    func handleReleased() {
        lock.lock()
        isHandleReleased = true
        endIfUnreachableWithLockHeld()
    }

    /// Entered with `lock` held; releases it. If the handle is gone and no observer is left, nobody
    /// can ever hear this signal again: it ends, interrupted, so that what ends with it runs.
    @usableFromInline
    func endIfUnreachableWithLockHeld() {
        if isHandleReleased, observerCount == 0, lock.loadWord() & DeliveryState.closed == 0 {
            interruptWithLockHeld()
        } else {
            lock.unlock()
        }
    }

    /// Sends `.interrupted`, entered with `lock` held. A function of its own, so that the common path
    /// of `endIfUnreachableWithLockHeld()` (a released handle of a signal that has ended), which runs
    /// unspecialized from `Signal`'s `deinit`, builds no `Event` and so looks up no generic metadata.
    @usableFromInline @inline(never)
    func interruptWithLockHeld() {
        sendWithLockHeld(.interrupted)
    }
}
