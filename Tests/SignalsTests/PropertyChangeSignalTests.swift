import Dispatch
import Foundation
import Testing

@testable import Signals

/// The change signal of a property is made on first use (`PropertyStorage.signal`); until then the
/// property is a value and a lock. These tests check that nothing about the property's contract
/// depends on when it was made.
@Suite("A property's change signal, made on first use")
struct PropertyChangeSignalTests {
    @Test("writes before the signal is made reach nobody; later ones reach its observers; one signal")
    func writesBeforeAndAfterMaking() {
        let storage = PropertyStorage.holding(0)
        storage.set(1)
        storage.modify { $0 += 1 }
        #expect(!storage.isSignalMade)
        #expect(storage.value == 2)
        let signal = storage.signal
        #expect(storage.isSignalMade)
        #expect(storage.signal === signal)
        let recorder = EventRecorder<Int, Never>()
        signal.observe(recorder.observer)
        storage.set(3)
        storage.modify { $0 += 1 }
        storage.complete()
        storage.set(5)
        #expect(storage.value == 4)
        #expect(recorder.events == [.value(3), .value(4), .completed])
    }

    @Test("completed before the signal is made: it has completed, the producer sends the value and ends")
    func completedBeforeMaking() {
        let property = MutableProperty(7)
        let view = Property(property)
        property.value = 8
        let producerEvents = EventRecorder<Int, Never>()
        let signalEvents = EventRecorder<Int, Never>()
        weak let weakProperty = property
        _ = consume property
        #expect(weakProperty == nil)
        view.signal.observe(signalEvents.observer)
        view.producer.start(producerEvents.observer)
        #expect(signalEvents.events == [.completed])
        #expect(producerEvents.events == [.value(8), .completed])
        #expect(view.value == 8)

        let constant = Property(value: 3)
        let constantEvents = EventRecorder<Int, Never>()
        constant.producer.start(constantEvents.observer)
        #expect(constantEvents.events == [.value(3), .completed])
    }

    @Test("modify after completion returns at once, changing nothing, made or not", arguments: [false, true])
    func modifyAfterCompletion(made: Bool) {
        let storage = PropertyStorage.holding(1)
        if made { _ = storage.signal }
        storage.complete()
        let runs = LockedTestValue(0)
        storage.modify { value in
            runs.withValue { $0 += 1 }
            value = 9
        }
        #expect(runs.value == 1)
        #expect(storage.value == 1)
    }

    /// One thread writes 1...300, then the property completes; two others start the property's producer, the first
    /// of them making the change signal as it does. Each run must see the value current when it
    /// started, then every later change, each once, in order (values are consecutive), then its end.
    @Test("producers started while the signal is being made miss and repeat nothing")
    func producersRaceTheFirstWrite() {
        for round in 0..<300 {
            let storage = PropertyStorage.holding(0)
            let recorders = [EventRecorder<Int, Never>(), EventRecorder<Int, Never>()]
            Watchdog.runOnThreads(3) { index in
                if index == 2 {
                    for value in 1...300 { storage.set(value) }
                } else {
                    storage.producer.start(recorders[index].observer)
                }
            }
            storage.complete()
            for recorder in recorders {
                let events = recorder.events
                let values = events.compactMap(\.value)
                #expect(values.last == 300, "round \(round): up to the last write")
                if let first = values.first {
                    #expect(values == Array(first...300), "round \(round): every change once, in order")
                }
                #expect(events.last == .completed, "round \(round): then completed")
            }
        }
    }
}
