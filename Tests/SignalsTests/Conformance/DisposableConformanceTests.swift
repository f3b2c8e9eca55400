import Signals
import Testing

// The behaviours of ReactiveSwift's DisposableSpec, written against our API. Each test names the spec
// case it follows.

@Suite("Conformance: DisposableSpec")
struct DisposableConformanceTests {
    @Test("DisposableSpec: SimpleDisposable should set disposed to true")
    func simple() {
        let disposable = AnyDisposable()
        #expect(!disposable.isDisposed)
        disposable.dispose()
        #expect(disposable.isDisposed)
    }

    @Test("DisposableSpec: AnyDisposable should run the given action upon disposal, once")
    func action() {
        let count = LockedTestValue(0)
        let disposable = AnyDisposable { count.withValue { $0 += 1 } }
        #expect(count.value == 0)
        disposable.dispose()
        disposable.dispose()
        #expect(count.value == 1)
        #expect(disposable.isDisposed)
    }

    @Test("DisposableSpec: a disposable wrapping another disposes it when disposed")
    func wrapping() {
        let inner = AnyDisposable()
        let outer = AnyDisposable(inner)
        outer.dispose()
        #expect(inner.isDisposed)
        #expect(AnyDisposable.disposed.isDisposed)
    }

    @Test("DisposableSpec: CompositeDisposable should ignore the addition of nil")
    func compositeNil() {
        let composite = CompositeDisposable()
        #expect(composite.add(nil as Disposable?) == nil)
        composite.dispose()
        #expect(composite.isDisposed)
    }

    @Test("DisposableSpec: CompositeDisposable should dispose of added disposables, in order")
    func compositeDisposesAdded() {
        let log = TestLog<Int>()
        let composite = CompositeDisposable([AnyDisposable { log.append(1) }])
        composite += AnyDisposable { log.append(2) }
        composite += { log.append(3) }
        composite.dispose()
        #expect(log.entries == [1, 2, 3])
    }

    @Test("DisposableSpec: CompositeDisposable should not dispose of removed disposables")
    func compositeRemoval() {
        let composite = CompositeDisposable()
        let disposable = AnyDisposable()
        let handle = composite.add(disposable)
        handle?.dispose()
        composite.dispose()
        #expect(!disposable.isDisposed)
    }

    @Test("DisposableSpec: CompositeDisposable should dispose of a disposable added after it was disposed, at once")
    func compositeLateAddition() {
        let composite = CompositeDisposable()
        composite.dispose()
        let disposable = AnyDisposable()
        #expect(composite.add(disposable) == nil)
        #expect(disposable.isDisposed)
    }

    @Test("DisposableSpec: SerialDisposable should dispose of the inner disposable upon disposal")
    func serialDisposesInner() {
        let serial = SerialDisposable()
        let inner = AnyDisposable()
        serial.inner = inner
        #expect(!inner.isDisposed)
        serial.dispose()
        #expect(inner.isDisposed)
    }

    @Test("DisposableSpec: SerialDisposable should dispose of the previous disposable when swapping the inner one")
    func serialSwap() {
        let first = AnyDisposable()
        let second = AnyDisposable()
        let serial = SerialDisposable(first)
        serial.inner = second
        #expect(first.isDisposed)
        #expect(!second.isDisposed)
        #expect(serial.inner === second)
    }

    @Test("DisposableSpec: SerialDisposable should dispose of an inner disposable set after it was disposed")
    func serialLateInner() {
        let serial = SerialDisposable()
        serial.dispose()
        let inner = AnyDisposable()
        serial.inner = inner
        #expect(inner.isDisposed)
    }

    @Test("DisposableSpec: disposing from many threads at once runs the action exactly once")
    func concurrentDisposal() {
        for _ in 0..<200 {
            let count = LockedTestValue(0)
            let disposable = AnyDisposable { count.withValue { $0 += 1 } }
            Watchdog.runOnThreads(4) { _ in disposable.dispose() }
            #expect(count.value == 1)
        }
    }
}
