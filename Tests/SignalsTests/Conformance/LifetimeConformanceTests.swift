import Signals
import Testing

// The behaviours of ReactiveSwift's LifetimeSpec, written against our API. Each test names the spec
// case it follows.

@Suite("Conformance: LifetimeSpec")
struct LifetimeConformanceTests {
    @Test("LifetimeSpec: should end when the token is disposed")
    func endsOnDispose() {
        let (lifetime, token) = Lifetime.make()
        let ended = LockedTestValue(0)
        lifetime.observeEnded { ended.withValue { $0 += 1 } }
        #expect(!lifetime.hasEnded)
        token.dispose()
        token.dispose()
        #expect(lifetime.hasEnded)
        #expect(ended.value == 1)
    }

    @Test("LifetimeSpec: should end when the token deinitializes, even if the lifetime is still retained")
    func endsWhenTokenIsReleased() {
        let lifetime: Lifetime
        let ended = LockedTestValue(false)
        do {
            let (made, token) = Lifetime.make()
            lifetime = made
            lifetime.observeEnded { ended.withValue { $0 = true } }
            withExtendedLifetime(token) {}
        }
        #expect(lifetime.hasEnded)
        #expect(ended.value)
    }

    @Test("LifetimeSpec: Lifetime.empty should have ended, and run an observer added to it at once")
    func empty() {
        let lifetime = Lifetime.empty
        #expect(lifetime.hasEnded)
        let ran = LockedTestValue(false)
        #expect(lifetime.observeEnded { ran.withValue { $0 = true } } == nil)
        #expect(ran.value)
    }

    @Test("LifetimeSpec: += should dispose the disposable when the lifetime ends, in the order added")
    func addDisposable() {
        let (lifetime, token) = Lifetime.make()
        let log = TestLog<Int>()
        lifetime += AnyDisposable { log.append(1) }
        lifetime.observeEnded { log.append(2) }
        let removed = lifetime.observeEnded { log.append(3) }
        removed?.dispose()
        token.dispose()
        #expect(log.entries == [1, 2])
    }

    @Test(
        "LifetimeSpec: a producer's lifetime should end when its run is interrupted, completes or fails",
        arguments: ["disposed", "completed", "failed"])
    func producerLifetime(ending: String) {
        let ended = LockedTestValue(false)
        let input = LockedTestValue<Observer<Int, TestError>?>(nil)
        let disposable = SignalProducer<Int, TestError> { observer, lifetime in
            input.withValue { $0 = observer }
            lifetime.observeEnded { ended.withValue { $0 = true } }
        }.start()
        #expect(!ended.value)
        switch ending {
        case "disposed": disposable.dispose()
        case "completed": input.value?.sendCompleted()
        default: input.value?.send(error: .boom)
        }
        #expect(ended.value)
    }
}
