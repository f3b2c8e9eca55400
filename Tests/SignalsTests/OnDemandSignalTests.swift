import Dispatch
import Foundation
import Testing

@testable import Signals

/// An on-demand signal and the word group it lives in, released together as its owner would.
private final class OnDemandOwner: @unchecked Sendable {
    // Safe: the group is immutable, and the signal's own operations are thread safe.
    let words = AtomicWordGroup.make(count: 1)
    let signal: OnDemandSignal<Int>

    init() {
        signal = OnDemandSignal(word: words.word(0))
    }

    deinit {
        signal.releaseMadeSignal()
    }
}

@Suite("OnDemandSignal: a signal made when first asked for")
struct OnDemandSignalTests {
    @Test("values sent before it is made reach nobody; its observers hear every later value, then its end")
    func valuesAfterMaking() {
        let owner = OnDemandOwner()
        owner.signal.send(.value(1))
        owner.signal.sendValue { 2 }
        #expect(!owner.signal.isMade)
        #expect(owner.signal.isUnobserved)
        let made = owner.signal.signal
        #expect(owner.signal.isMade)
        #expect(owner.signal.signal === made, "every read returns the same signal")
        let recorder = EventRecorder<Int, Never>()
        made.observe(recorder.observer)
        #expect(!owner.signal.isUnobserved)
        owner.signal.send(.value(3))
        owner.signal.sendValue { 4 }
        owner.signal.sendIfMade { 5 }
        #expect(!owner.signal.hasTerminated)
        owner.signal.send(.completed)
        owner.signal.send(.value(6))
        owner.signal.send(.interrupted)
        #expect(owner.signal.hasTerminated)
        #expect(recorder.events == [.value(3), .value(4), .value(5), .completed])
    }

    @Test("ended before it is made: the signal made later has ended so, and a later end is ignored")
    func endedBeforeMaking() {
        for (first, second) in [
            (Event<Int, Never>.completed, Event<Int, Never>.interrupted), (.interrupted, .completed),
        ] {
            let owner = OnDemandOwner()
            owner.signal.send(.value(1))
            owner.signal.send(first)
            owner.signal.send(second)
            owner.signal.send(.value(2))
            #expect(owner.signal.hasTerminated)
            #expect(!owner.signal.isMade)
            let recorder = EventRecorder<Int, Never>()
            owner.signal.signal.observe(recorder.observer)
            #expect(recorder.events == [first], "heard at once, on the observing thread")
            let late = EventRecorder<Int, Never>()
            owner.signal.signal.observe(late.observer)
            #expect(late.events == [first])
        }
    }

    /// A core made already ended has taken its termination: what is set to end with it later is
    /// disposed at once, as after any termination (`SignalCore.init(sharing:endedWith:)`).
    @Test("made after its end: what is set to end with it is disposed at once")
    func terminationAfterAnEndedMaking() {
        let owner = OnDemandOwner()
        owner.signal.send(.completed)
        let disposable = AnyDisposable {}
        owner.signal.signal.core.setOnTermination(disposable)
        #expect(disposable.isDisposed)
    }

    @Test("the owner's release frees the signal made, its observers and what ends with it")
    func ownerReleaseFreesTheSignal() {
        weak var handle: Signal<Int, Never>?
        let recorder = EventRecorder<Int, Never>()
        do {
            let owner = OnDemandOwner()
            let made = owner.signal.signal
            handle = made
            made.observe(recorder.observer)
            owner.signal.send(.value(1))
            owner.signal.send(.completed)
        }
        #expect(handle == nil)
        #expect(recorder.events == [.value(1), .completed])

        // Never ended, observed: the owner's release lets go of the handle; with its observer still
        // attached, the signal lives on, unended, until that observer is disposed.
        weak var unended: Signal<Int, Never>?
        let observerGone = LockedTestValue(false)
        var disposable: Disposable?
        do {
            let owner = OnDemandOwner()
            let made = owner.signal.signal
            unended = made
            disposable = made.observe(
                Observer { event in
                    if event.isTerminating { observerGone.withValue { $0 = true } }
                })
        }
        #expect(unended == nil, "nobody holds the handle")
        disposable?.dispose()
        #expect(!observerGone.value, "a disposed observer hears nothing more")

        // Made, then released unobserved: nothing is left either.
        weak var unobserved: Signal<Int, Never>?
        do {
            let owner = OnDemandOwner()
            unobserved = owner.signal.signal
        }
        #expect(unobserved == nil)
    }

    /// Three threads race on a fresh signal each round: two make it and observe it, one sends 1...200
    /// and ends it. Both makers must get the same signal, and each observer must hear a gap-free run
    /// that ends with the last value (whatever was sent after it attached), then the end, once.
    @Test("threads that make it race a sender that ends it: one signal, gap-free runs, one end each")
    func makersRaceTheSender() {
        let rounds = 400
        let values = 200
        for round in 0..<rounds {
            let owner = OnDemandOwner()
            let completes = round % 2 == 0
            let made = LockedTestValue<[ObjectIdentifier]>([])
            let recorders = [EventRecorder<Int, Never>(), EventRecorder<Int, Never>()]
            Watchdog.runOnThreads(3) { index in
                if index == 2 {
                    for value in 1...values { owner.signal.send(.value(value)) }
                    owner.signal.send(completes ? .completed : .interrupted)
                } else {
                    let signal = owner.signal.signal
                    made.withValue { $0.append(ObjectIdentifier(signal)) }
                    signal.observe(recorders[index].observer)
                }
            }
            #expect(Set(made.value).count == 1, "round \(round): both makers got the same signal")
            for recorder in recorders {
                let events = recorder.events
                let heard = events.compactMap(\.value)
                let expectedRun = heard.isEmpty ? [] : Array((values - heard.count + 1)...values)
                #expect(heard == expectedRun, "round \(round): a gap-free run up to the last value")
                #expect(events.last == (completes ? .completed : .interrupted), "round \(round): its end, last")
                #expect(events.filter(\.isTerminating).count == 1, "round \(round): one end")
            }
        }
    }
}
