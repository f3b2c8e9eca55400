import Dispatch
import Foundation
import Testing

@testable import Signals

/// A property's value, its lock and its change signal's slot are one allocation (`PropertyBuffer`):
/// the fields laid out by hand after the lock, the change signal's core holding the storage (its
/// lock), which `complete()` lets go of. These tests attack the layout, the release of the storage
/// and the letting go under threads.
@Suite("A property's storage: value and lock in one allocation")
struct PropertyStorageTests {
    /// A value whose deinit is counted, so that a value released twice, or never, shows.
    final class Counted: Sendable {
        let id: Int
        let released: LockedTestValue<[Int]>

        init(_ id: Int, released: LockedTestValue<[Int]>) {
            self.id = id
            self.released = released
        }

        deinit { released.withValue { $0.append(id) } }
    }

    /// Writes, modifies, observes and completes a storage of `Value`, checking its layout and every
    /// event on the way.
    func roundTrip<Value: Sendable & Equatable>(_ values: [Value]) {
        let storage = PropertyStorage.holding(values[0])
        #expect(storage.valueIsLaidOutInBounds, "\(Value.self)")
        #expect(storage.value == values[0])
        let recorder = EventRecorder<Value, Never>()
        storage.producer.start(recorder.observer)
        for value in values.dropFirst() { storage.set(value) }
        storage.modify { $0 = values[0] }
        storage.complete()
        storage.set(values[1])
        #expect(storage.value == values[0])
        #expect(recorder.events == values.map { .value($0) } + [.value(values[0]), .completed])
    }

    @Test("values of every size and alignment are laid out inside the allocation and round-trip")
    func layoutOfEverySize() {
        roundTrip([UInt8(1), 2, 3])
        roundTrip([UInt16(1), 2, 3])
        roundTrip([UInt64.max, 0, 7])
        roundTrip([true, false, true])
        roundTrip(["", "a string too long to be stored inline in its own sixteen bytes", "b"])
        roundTrip([SIMD16<UInt8>(repeating: 1), SIMD16<UInt8>(repeating: 2), SIMD16<UInt8>(repeating: 3)])
        roundTrip([SIMD4<Double>(1, 2, 3, 4), SIMD4<Double>(repeating: 5), SIMD4<Double>(repeating: 6)])
        roundTrip([SIMD8<Double>(repeating: 1), SIMD8<Double>(repeating: 2), SIMD8<Double>(repeating: 3)])
        roundTrip([[1, 2], [3], []])
        roundTrip([Int?.none, 1, 2])
        roundTrip([Large(seed: 1), Large(seed: 2), Large(seed: 3)])
    }

    /// A value larger than the fields before it, with a reference inside.
    struct Large: Equatable, Sendable {
        var a, b, c, d, e: UInt64
        var name: String

        init(seed: UInt64) {
            (a, b, c, d, e) = (seed, seed &* 3, seed &* 5, seed &* 7, seed &* 11)
            name = "value \(seed), long enough to live outside the string's inline storage"
        }
    }

    @Test("every value is released exactly once: when replaced, and the last with the storage")
    func valuesReleasedOnce() {
        let released = LockedTestValue<[Int]>([])
        weak var weakStorage: AnyObject?
        do {
            let storage = PropertyStorage.holding(Counted(0, released: released))
            weakStorage = storage.object
            storage.set(Counted(1, released: released))
            #expect(released.value == [0])
            _ = storage.signal
            storage.modify { $0 = Counted(2, released: released) }
            #expect(released.value == [0, 1])
            storage.complete()
            storage.set(Counted(3, released: released))  // ignored: released at once, not stored
            #expect(released.value == [0, 1, 3])
        }
        #expect(weakStorage == nil)
        #expect(released.value == [0, 1, 3, 2])
    }

    @Test("a released MutableProperty whose signal was observed frees its storage, once nobody holds the signal")
    func releasedWithSignalMade() {
        weak var weakStorage: AnyObject?
        let recorder = EventRecorder<Int, Never>()
        var keptSignal: Signal<Int, Never>?
        var keptDisposable: Disposable?
        do {
            let property = MutableProperty(0)
            weakStorage = property.storage.object
            keptSignal = property.signal
            keptDisposable = property.signal.observe(recorder.observer)
            property.value = 1
        }
        #expect(recorder.events == [.value(1), .completed])
        // The signal's core holds the storage, its lock: alive while the signal is.
        #expect(weakStorage != nil)
        withExtendedLifetime(keptSignal) {}
        keptSignal = nil
        keptDisposable?.dispose()
        keptDisposable = nil
        #expect(weakStorage == nil)
    }

    @Test("a constant, a view and a property fed by a signal free their storage after their signal was read")
    func otherOwnersFreeTheirStorage() {
        weak var constantStorage: AnyObject?
        weak var viewStorage: AnyObject?
        weak var fedStorage: AnyObject?
        do {
            let constant = Property(value: 1)
            constantStorage = constant.storedObject
            let first = constant.signal
            let second = constant.signal
            #expect(first === second)  // the ended signal, made once and kept
            let recorder = EventRecorder<Int, Never>()
            first.observe(recorder.observer)
            second.observe(recorder.observer)
            #expect(recorder.events == [.completed, .completed])
        }
        #expect(constantStorage == nil)
        do {
            let view: Property<Int>
            let recorder = EventRecorder<Int, Never>()
            do {
                let mutable = MutableProperty(0)
                view = Property(mutable)
                viewStorage = view.storedObject
                view.signal.observe(recorder.observer)
                mutable.value = 1
            }
            #expect(recorder.events == [.value(1), .completed])
            #expect(view.value == 1)
        }
        #expect(viewStorage == nil)
        do {
            let (values, input) = Signal<Int, Never>.pipe()
            let property = Property(initial: 0, then: values)
            let recorder = EventRecorder<Int, Never>()
            property.signal.observe(recorder.observer)
            input.send(value: 1)
            input.sendCompleted()
            #expect(recorder.events == [.value(1), .completed])
            #expect(property.value == 1)
            fedStorage = property.storedObject
        }
        #expect(fedStorage == nil)
    }

    @Test("a value that kept its own property's change signal, then let go of it, is freed (keeping it is a cycle)")
    func valueLettingGoOfItsSignal() {
        final class Holder: @unchecked Sendable {
            // Safe: set before the value is shared, never changed.
            let kept: Signal<Holder?, Never>?
            let released: LockedTestValue<Int>

            init(kept: Signal<Holder?, Never>?, released: LockedTestValue<Int>) {
                self.kept = kept
                self.released = released
            }

            deinit { released.withValue { $0 += 1 } }
        }
        let released = LockedTestValue(0)
        weak var weakStorage: AnyObject?
        do {
            let property = MutableProperty<Holder?>(nil)
            weakStorage = property.storage.object
            property.value = Holder(kept: property.signal, released: released)
            property.value = Holder(kept: nil, released: released)
            #expect(released.value == 1)
        }
        #expect(weakStorage == nil)
        #expect(released.value == 2)
    }

    @Test("a completed property's producer sends its last value and completes, with no signal made")
    func completedProducer() {
        let constant = PropertyStorage.holding(5)
        constant.complete()
        constant.complete()  // idempotent
        for _ in 0..<3 {
            let recorder = EventRecorder<Int, Never>()
            constant.producer.start(recorder.observer)
            #expect(recorder.events == [.value(5), .completed])
        }
        #expect(!constant.isSignalMade)
        let ended = constant.signal
        #expect(constant.signal === ended)
        constant.complete()  // with the ended signal kept: still nothing
        #expect(constant.signal === ended)
    }

    @Test("complete() lets go of the signal while other threads write, read the signal and observe", arguments: 0..<200)
    func completeUnderThreads(round: Int) {
        let storage = PropertyStorage.holding(0)
        let recorder = EventRecorder<Int, Never>()
        storage.signal.observe(recorder.observer)
        let late = EventRecorder<Int, Never>()
        let done = DispatchGroup()
        let perWriter = 50
        for writer in 0..<2 {
            done.enter()
            Watchdog.startThread {
                for index in 1...perWriter { storage.set(writer * 1_000 + index) }
                done.leave()
            }
        }
        done.enter()
        Watchdog.startThread {
            for _ in 0..<(round % 7) * 5 { _ = storage.value }
            storage.complete()
            done.leave()
        }
        done.enter()
        Watchdog.startThread {
            for _ in 0..<(round % 5) * 5 { _ = storage.isSignalMade }
            storage.signal.observe(late.observer)
            done.leave()
        }
        Watchdog.wait(done, "the writers, the completion and the late observer")

        // Each observer: each writer's values in its order, then one completion, last.
        for events in [recorder.events, late.events] {
            #expect(events.last == .completed)
            #expect(events.filter(\.isTerminating).count == 1)
            for writer in 0..<2 {
                let mine = events.compactMap(\.value).filter { $0 / 1_000 == writer }
                #expect(mine == mine.sorted())
            }
        }
        // The first observer heard every value stored before the completion, and the last of them is
        // the value that stuck.
        #expect(recorder.events.compactMap(\.value).last ?? 0 == storage.value)
        #expect(storage.hasCompleted)
        // Read after the completion: one ended signal, kept, that completes each new observer.
        let ended = storage.signal
        #expect(storage.signal === ended)
        let after = EventRecorder<Int, Never>()
        ended.observe(after.observer)
        #expect(after.events == [.completed])
    }
}
