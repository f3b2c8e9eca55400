import Dispatch
import Foundation
import Signals
import Testing

/// A signal nobody observes drops a value after one load of its word, without taking the delivering
/// role. These tests check that the "nobody observes" mark always follows the observers: a value sent
/// once an observer is attached (directly, from inside a delivery, or from another thread) reaches it.
@Suite("A signal nobody observes drops values at once, and hears again as soon as an observer attaches")
struct UnobservedSignalTests {
    @Test("values sent with no observer reach nobody; each observer hears exactly what is sent while it is attached")
    func observersComeAndGo() {
        let (signal, input) = Signal<Int, Never>.pipe()
        input.send(value: 0)
        let first = EventRecorder<Int, Never>()
        let firstDisposable = signal.observe(first.observer)
        input.send(value: 1)
        firstDisposable.dispose()
        input.send(value: 2)
        let second = EventRecorder<Int, Never>()
        let secondDisposable = signal.observe(second.observer)
        input.send(value: 3)
        let third = EventRecorder<Int, Never>()
        signal.observe(third.observer)
        secondDisposable.dispose()
        input.send(value: 4)
        input.sendCompleted()
        #expect(first.events == [.value(1)])
        #expect(second.events == [.value(3)])
        #expect(third.events == [.value(4), .completed])
    }

    @Test(
        "an observer attached from inside a delivery, by the observer that detaches itself, hears what is queued and what follows"
    )
    func replacedDuringDelivery() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let replacement = EventRecorder<Int, Never>()
        let heard = TestLog<Int>()
        let disposable = LockedTestValue<Disposable?>(nil)
        disposable.withValue { slot in
            slot = signal.observeValues { value in
                heard.append(value)
                // Both changes are queued for this delivery's thread: the removal empties the list, the
                // attachment fills it again.
                disposable.withValue { $0?.dispose() }
                signal.observe(replacement.observer)
                // Queued behind the attachment: still queued when the attachment is applied.
                input.send(value: 10)
            }
        }
        input.send(value: 1)
        input.send(value: 2)
        input.send(value: 3)
        #expect(heard.entries == [1])
        #expect(replacement.values == [10, 2, 3])
    }

    @Test("a completion sent with no observer still ends the signal: a later observer hears only the completion")
    func completionWithoutObservers() {
        let (signal, input) = Signal<Int, Never>.pipe()
        input.send(value: 1)
        input.sendCompleted()
        input.send(value: 2)
        let late = EventRecorder<Int, Never>()
        signal.observe(late.observer)
        #expect(late.events == [.completed])
    }

    @Test(
        "a property whose last observer left stores every change and sends it to the next observer as its current value"
    )
    func propertyBetweenObservers() {
        let property = MutableProperty(0)
        let first = EventRecorder<Int, Never>()
        let firstDisposable = property.signal.observe(first.observer)
        property.value = 1
        firstDisposable.dispose()
        property.value = 2
        property.value = 3
        #expect(property.value == 3)
        let second = EventRecorder<Int, Never>()
        property.producer.start(second.observer)
        property.value = 4
        #expect(first.values == [1])
        #expect(second.values == [3, 4])
    }

    @Test("observers attached from another thread while values are sent each hear a gap-free run that starts at once")
    func attachWhileSending() {
        for _ in 0..<20 {
            let (signal, input) = Signal<Int, Never>.pipe()
            let total = 20_000
            // How many values the sender has finished sending.
            let sent = LockedTestValue(0)
            let runs = LockedTestValue<[(attachedAfter: Int, values: [Int])]>([])
            Watchdog.runOnThreads(2) { thread in
                if thread == 0 {
                    for value in 0..<total {
                        input.send(value: value)
                        sent.withValue { $0 = value + 1 }
                    }
                    return
                }
                while sent.value < total {
                    let recorder = EventRecorder<Int, Never>()
                    let disposable = signal.observe(recorder.observer)
                    let attachedAfter = sent.value
                    // Let a few values through, then leave: the signal is unobserved until the next round.
                    while recorder.values.count < 3 && sent.value < total {}
                    disposable.dispose()
                    runs.withValue { $0.append((attachedAfter, recorder.values)) }
                }
            }
            for run in runs.value {
                // Value `attachedAfter` may have been in flight when the observer attached; the one
                // after it was sent once the attachment had returned (and the one sender delivers what
                // it sends before it counts it sent), so it must have been heard, if there was one.
                if run.attachedAfter + 1 < total {
                    let first = run.values.first ?? total
                    #expect(first <= run.attachedAfter + 1, "the observer started late: \(run)")
                }
                #expect(
                    run.values == Array(run.values.first.map { $0..<($0 + run.values.count) } ?? 0..<0),
                    "a gap in \(run.values)")
            }
        }
    }
}
