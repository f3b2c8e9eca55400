import Signals
import Testing

/// An input observer's release hook reads its target unretained: safe only because the observer's
/// `action` keeps the target alive. `Observer(sendingTo:)` builds that `action` itself, so the
/// invariant holds by construction; these tests pin it (AddressSanitizer would flag a freed target).
@Suite("Observer(sendingTo:): the observer keeps its target alive and tells it of its release")
struct ObserverTargetTests {
    final class Target: ObserverTarget {
        let log: TestLog<String>

        init(log: TestLog<String>) {
            self.log = log
        }

        func receive(_ event: Event<Int, Never>) {
            log.append("\(event)")
        }

        func observerReleased() {
            log.append("released")
        }
    }

    @Test("The target lives as long as the observer, hears its events, then its release, then is freed")
    func targetLifetime() {
        let log = TestLog<String>()
        let weakTarget = WeakBox<Target>()
        var observer: Observer<Int, Never>?
        do {
            let target = Target(log: log)
            weakTarget.object = target
            observer = Observer(sendingTo: target)
        }
        #expect(weakTarget.object != nil, "the observer does not keep its target")
        observer?.send(value: 1)
        observer?.sendCompleted()
        observer = nil
        #expect(log.entries == ["value(1)", "completed", "released"])
        #expect(weakTarget.object == nil, "the target outlived its observer")
    }
}
