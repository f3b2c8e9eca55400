import Signals
import Testing

@Suite("Lifetime")
struct LifetimeTests {
    @Test("A lifetime frees its own lock with it, and never a lock it shares with other lifetimes")
    func lockOwnership() {
        weak var ownLock: AnyObject?
        do {
            let lifetime = _LifetimeStorage()
            ownLock = lifetime.lockObject
            lifetime.end()
            #expect(ownLock != nil, "freed while its lifetime lives")
        }
        #expect(ownLock == nil, "a lifetime's own lock outlived it")

        var shared: Lock? = Lock()
        weak let sharedLock: AnyObject? = shared?.storageObject
        do {
            let lifetimes = (0..<3).map { _ in _LifetimeStorage(sharing: shared!.unretained) }
            lifetimes[0].end()
            #expect(lifetimes.map(\.hasEnded) == [true, false, false])
        }
        #expect(sharedLock != nil, "a lifetime released a lock it only shares")
        #expect(shared?.loadWord() == 0)
        shared = nil
        #expect(sharedLock == nil)
    }

    /// The invariant of `keepAliveUntilEnded()`'s manual retain: taken once, only before the end, and
    /// given back by `end()` after the cleanup, so the lifetime is freed then and never before.
    @Test("A lifetime that keeps itself alive outlives its last reference, and is freed by its end, once")
    func keepAliveUntilEnded() {
        let weakLifetime = WeakBox<_LifetimeStorage>()
        let log = TestLog<String>()
        var lifetime: _LifetimeStorage? = _LifetimeStorage()
        weakLifetime.object = lifetime
        lifetime.map(Lifetime.init)?.observeEnded { log.append("cleanup") }
        #expect(lifetime?.keepAliveUntilEnded() == true)
        #expect(lifetime?.keepAliveUntilEnded() == false, "kept once only")
        lifetime = nil
        #expect(weakLifetime.object != nil, "it keeps itself")
        weakLifetime.object?.end()
        #expect(log.entries == ["cleanup"])
        #expect(weakLifetime.object == nil, "its end let go of it")

        let ended = _LifetimeStorage()
        ended.end()
        #expect(!ended.keepAliveUntilEnded(), "an ended lifetime does not keep itself")
    }

    @Test("A lifetime ends when its token is disposed, running its cleanup once, in the order registered")
    func endsWhenTokenDisposed() {
        let (lifetime, token) = Lifetime.make()
        let log = LockedTestValue<[String]>([])
        lifetime.observeEnded { log.withValue { $0.append("first") } }
        lifetime += AnyDisposable { log.withValue { $0.append("disposable") } }
        lifetime.observeEnded { log.withValue { $0.append("last") } }
        #expect(!lifetime.hasEnded)
        #expect(!token.isDisposed)

        token.dispose()
        token.dispose()

        #expect(lifetime.hasEnded)
        #expect(token.isDisposed)
        #expect(log.value == ["first", "disposable", "last"])
    }

    @Test("A lifetime ends when its token is released")
    func endsWhenTokenReleased() {
        let lifetime: Lifetime
        var token: Lifetime.Token?
        (lifetime, token) = Self.makeLifetime()
        let ended = LockedTestValue(0)
        lifetime.observeEnded { ended.withValue { $0 += 1 } }
        #expect(token?.isDisposed == false)
        #expect(!lifetime.hasEnded)

        token = nil

        #expect(token == nil)
        #expect(lifetime.hasEnded)
        #expect(ended.value == 1)
    }

    /// `Lifetime.make()` with an optional token, so the test can release it.
    private static func makeLifetime() -> (Lifetime, Lifetime.Token?) {
        let (lifetime, token) = Lifetime.make()
        return (lifetime, token)
    }

    @Test("Cleanup registered after the end runs at once")
    func observeEndedAfterEnd() {
        let (lifetime, token) = Lifetime.make()
        token.dispose()
        let log = LockedTestValue<[String]>([])

        let handle = lifetime.observeEnded { log.withValue { $0.append("action") } }
        let disposable = AnyDisposable()
        let disposableHandle = lifetime += disposable

        #expect(log.value == ["action"])
        #expect(disposable.isDisposed)
        #expect(handle == nil)
        #expect(disposableHandle == nil)
    }

    @Test("The handle returned by observeEnded unregisters the cleanup")
    func observeEndedHandleUnregisters() {
        let (lifetime, token) = Lifetime.make()
        let log = LockedTestValue<[String]>([])
        let handle = lifetime.observeEnded { log.withValue { $0.append("removed") } }
        lifetime.observeEnded { log.withValue { $0.append("kept") } }

        handle?.dispose()
        token.dispose()

        #expect(log.value == ["kept"])
    }

    @Test("Lifetime.empty has already ended")
    func emptyHasEnded() {
        let lifetime = Lifetime.empty
        #expect(lifetime.hasEnded)
        let ran = LockedTestValue(false)
        lifetime.observeEnded { ran.withValue { $0 = true } }
        #expect(ran.value)
    }

    @Test("A lifetime ended from several threads at once runs its cleanup once")
    func concurrentEnd() {
        for _ in 0..<200 {
            let (lifetime, token) = Lifetime.make()
            let runs = LockedTestValue(0)
            lifetime.observeEnded { runs.withValue { $0 += 1 } }
            Watchdog.runOnThreads(4) { _ in token.dispose() }
            #expect(runs.value == 1)
        }
    }

    @Test("Disposing a started producer interrupts it and ends its lifetime, exactly once")
    func producerDisposalEndsLifetime() {
        let ends = LockedTestValue(0)
        let input = LockedTestValue<Observer<Int, TestError>?>(nil)
        let producer = SignalProducer<Int, TestError> { observer, lifetime in
            input.withValue { $0 = observer }
            lifetime.observeEnded { ends.withValue { $0 += 1 } }
            observer.send(value: 1)
        }
        let recorder = EventRecorder<Int, TestError>()

        let disposable = producer.start(recorder.observer)
        #expect(ends.value == 0)
        Watchdog.runOnThreads(4) { _ in disposable.dispose() }
        input.value?.send(value: 2)
        input.value?.sendCompleted()

        #expect(recorder.events == [.value(1), .interrupted])
        #expect(ends.value == 1)
        #expect(disposable.isDisposed)
    }

    @Test("A run's lifetime has ended by the time its observer hears the terminal event")
    func lifetimeEndsBeforeObserverHearsTerminal() {
        let log = LockedTestValue<[String]>([])
        let producer = SignalProducer<Int, TestError> { observer, lifetime in
            lifetime.observeEnded { log.withValue { $0.append("lifetime ended") } }
            observer.send(value: 1)
            observer.sendCompleted()
        }

        producer.start { event in log.withValue { $0.append("observer \(event)") } }

        #expect(log.value == ["observer value(1)", "lifetime ended", "observer completed"])
    }

    @Test(
        "A producer's lifetime ends when the run completes or fails, and later disposal changes nothing",
        arguments: [Event<Int, TestError>.completed, .failed(.boom)])
    func producerTerminationEndsLifetime(terminal: Event<Int, TestError>) {
        let ends = LockedTestValue(0)
        let producer = SignalProducer<Int, TestError> { observer, lifetime in
            lifetime.observeEnded { ends.withValue { $0 += 1 } }
            observer.send(value: 1)
            observer.send(terminal)
        }
        let recorder = EventRecorder<Int, TestError>()

        let disposable = producer.start(recorder.observer)
        #expect(ends.value == 1)
        disposable.dispose()

        #expect(recorder.events == [.value(1), terminal])
        #expect(ends.value == 1)
    }
}
