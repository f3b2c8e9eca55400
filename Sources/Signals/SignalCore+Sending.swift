// Sending: the uncontended path, the queue behind a delivery, and the delivery itself (see `DeliveryState`).

extension SignalCore {
    /// Sends `event`: delivers it now if nobody is delivering, or queues it behind the current delivery.
    ///
    /// The uncontended path (a value, nobody delivering, nothing queued) takes the delivering role and
    /// gives it back with one compare-and-swap each, and takes no lock; if nobody observes either, it
    /// drops the value after one load.
    @inlinable @inline(__always)
    package func send(_ event: Event<Value, Error>) {
        if case let .value(value) = event, deliverUncontended({ deliverValue(value) }) { return }
        lock.lock()
        sendWithLockHeld(event)
    }

    /// The uncontended path of a value's send: if nobody is delivering, nothing is queued and the
    /// signal has not ended, takes the delivering role, runs `deliver`, gives the role back (draining
    /// what was queued meanwhile), and returns true; if, besides, nobody observes, returns true at once
    /// (the value reaches nobody either way); else returns false, having done nothing.
    @inlinable @inline(__always)
    func deliverUncontended(_ deliver: () -> Void) -> Bool {
        let word = lock.loadWord()
        if word == DeliveryState.unobserved { return true }
        guard word == 0, lock.compareExchangeWord(expected: 0, desired: DeliveryState.delivering) else {
            return false
        }
        deliver()
        if !lock.compareExchangeWord(expected: DeliveryState.delivering, desired: 0) {
            drain()
        }
        return true
    }

    /// Sends the value `make()` returns, exactly as `send(.value(make()))` would, but makes it only if
    /// someone can hear it: on the uncontended path with no observer, `make` is not called (the event
    /// would reach nobody either way). `make` must be package code, never a user closure: it may run
    /// while this thread holds the delivering role, or with the lock held. For events that cost
    /// something to build (they retain what they carry), on a signal that often has no observer.
    @inlinable @inline(__always)
    package func sendValue(_ make: () -> Value) {
        if deliverUncontended({ if !deliveryList.isEmpty { deliverValue(make()) } }) { return }
        lock.lock()
        sendWithLockHeld(.value(make()))
    }

    /// Sends `event` only if `condition`, evaluated under the lock together with the decision to queue
    /// or deliver, returns true. `condition` must be package code, never a user closure. Properties use
    /// it so that a change of value and the order of its notification cannot be separated.
    @inlinable
    package func send(_ event: Event<Value, Error>, if condition: () -> Bool) {
        lock.lock()
        guard lock.loadWord() & DeliveryState.closed == 0, condition() else {
            lock.unlock()
            return
        }
        sendWithLockHeld(event)
    }

    /// The slow path of `send`, entered with `lock` held; it releases the lock before delivering.
    @inlinable
    func sendWithLockHeld(_ event: Event<Value, Error>) {
        let closing = event.isTerminating ? DeliveryState.closed : 0
        while true {
            let word = lock.loadWord()
            if word & DeliveryState.closed != 0 {
                lock.unlock()
                return
            }
            if word & DeliveryState.delivering != 0 {
                // Someone is delivering: queue behind it. The `pending` bit makes its lock-free
                // give-back fail, so it will take the lock and find this event.
                guard lock.compareExchangeWord(expected: word, desired: word | DeliveryState.pending | closing) else {
                    continue
                }
                pending.append(.event(event))
                lock.unlock()
                return
            }
            if observers.isEmpty && closing == 0 {
                // Nobody to tell: a value changes nothing.
                lock.unlock()
                return
            }
            guard lock.compareExchangeWord(expected: word, desired: word | DeliveryState.delivering | closing) else {
                continue
            }
            lock.unlock()
            deliver(event)
            drain()
            return
        }
    }

    /// Delivers one event to every observer. Only the delivering thread calls it.
    @inlinable
    func deliver(_ event: Event<Value, Error>) {
        guard case let .value(value) = event else {
            deliverTerminal(event)
            return
        }
        deliverValue(value)
    }

    /// Delivers the value `value` to every observer. Only the delivering thread calls it. Inlined into
    /// `send`: an uncontended send then calls its observers directly, one call less.
    ///
    /// An observer made with a value closure (`Observer.valueAction`) is called with the value itself,
    /// one closure hop less; the others with the event `.value(value)`, made once per delivery (for a
    /// reference-counted value, one retain, as before).
    @inlinable @inline(__always)
    func deliverValue(_ value: Value) {
        // `observers` keeps every observer in the list alive, and neither changes while observers run
        // (changes made meanwhile are queued), so each can be called without retaining it.
        let event = Event<Value, Error>.value(value)
        let list = deliveryList
        for index in list.indices {
            list[index]._withUnsafeGuaranteedRef { observer in
                // Optional chaining calls the closure in place; binding it (`if let`) would retain it.
                if observer.valueAction?(value) == nil { observer.action(event) }
            }
        }
    }

    /// Ends the signal: first what ends with it (`onTermination`), then the observers hear `event`.
    @inlinable
    func deliverTerminal(_ event: Event<Value, Error>) {
        let disposable = lock.withLock { () -> Disposable? in
            hasTakenTermination = true
            defer { onTermination = nil }
            return onTermination
        }
        disposable?.dispose()
        var notified = detachAllObservers()
        for entry in notified {
            entry.observer.action(event)
        }
        notified.removeAll()  // released here, before the lock is taken below
        lock.withLock {
            terminal = event
            observerCount = 0
        }
    }

    /// Delivers queued work until the queue is empty, then gives up the delivering role. Only the
    /// delivering thread calls it.
    @inlinable
    func drain() {
        while true {
            lock.lock()
            let removed = pendingRemovals.isEmpty ? [] : applyPendingRemovals()
            guard let work = pending.removeFirst() else {
                // Nothing queued: a removal still waiting for its `.add` is left over from termination.
                pendingRemovals.removeAll(keepingCapacity: true)
                releaseDeliveringRole()
                lock.unlock()
                withExtendedLifetime(removed) {}
                return
            }
            switch work {
            case let .event(event):
                lock.unlock()
                deliver(event)
            case let .add(entry):
                if let index = pendingRemovals.firstIndex(of: entry.token) {
                    // Detached before it was attached: drop it (released below, unlocked).
                    pendingRemovals.remove(at: index)
                    lock.unlock()
                } else if let terminal {
                    lock.unlock()
                    entry.observer.action(terminal)
                } else {
                    appendObserver(entry)
                    lock.unlock()
                }
                withExtendedLifetime(entry) {}
            }
            withExtendedLifetime(removed) {}
        }
    }

    /// Clears `delivering` and `pending`, keeping `closed` and `unobserved`. Called with `lock` held by
    /// the thread that owns the role: nobody else can change the word then (the lock-free path only
    /// takes the role from 0, and everything else changes it under the lock).
    @inlinable
    func releaseDeliveringRole() {
        lock.storeWord(lock.loadWord() & (DeliveryState.closed | DeliveryState.unobserved))
    }

    /// Takes the delivering role with `lock` held, to change `observers` directly, if nobody holds it.
    /// Returns false if someone is delivering; then `pending` is set, and the caller must queue its
    /// change for the deliverer before releasing the lock.
    @inlinable
    func takeDeliveringRoleOrMarkPending() -> Bool {
        lock.takeWordBit(DeliveryState.delivering, orSet: DeliveryState.pending)
    }

    /// Drops the observers detached during delivery, and returns them, to be released once `lock` is.
    /// Called by the delivering thread with `lock` held.
    @inlinable
    func applyPendingRemovals() -> ContiguousArray<Entry> {
        var removed: ContiguousArray<Entry> = []
        var index = 0
        while index < pendingRemovals.count {
            if let position = indexOfObserver(pendingRemovals[index]) {
                removed.append(detachObserver(at: position))
                pendingRemovals.remove(at: index)
            } else {
                index += 1  // its `.add` is still queued
            }
        }
        return removed
    }
}
