import Dispatch
import Foundation
import Signals
import Testing

@Suite("Property map, combineLatest(with:), zip(with:) and skipRepeats")
struct PropertyOperatorTests {
    // MARK: map

    @Test("A mapped property's value, producer and signal follow the source")
    func map() {
        let source = MutableProperty(1)
        let mapped = source.map { $0 * 10 }
        #expect(mapped.value == 10)
        let produced = EventRecorder<Int, Never>()
        let changes = EventRecorder<Int, Never>()
        mapped.producer.start(produced.observer)
        mapped.signal.observe(changes.observer)
        source.value = 2
        source.value = 2
        #expect(mapped.value == 20)
        #expect(produced.values == [10, 20, 20])
        #expect(changes.values == [20, 20])
    }

    @Test("A mapped property has no stale window: an earlier observer of the source already reads the new value")
    func mapHasNoStaleWindow() {
        let source = MutableProperty(1)
        let view = Property(source)
        let composed = LockedTestValue<(mapped: Property<Int>, combined: Property<(Int, String)>)?>(nil)
        let log = TestLog<String>()
        // Registered before the composed properties exist, so it runs before they hear of a change.
        source.signal.observeValues { value in
            guard let (mapped, combined) = composed.value else { return }
            log.append("source \(value): mapped \(mapped.value), combined \(combined.value.0)")
        }
        let mapped = view.map { $0 * 10 }
        composed.withValue { $0 = (mapped, view.combineLatest(with: Property(value: "x"))) }
        mapped.signal.observeValues { value in log.append("mapped told \(value), reads \(mapped.value)") }
        source.value = 2
        source.value = 3
        #expect(
            log.entries == [
                "source 2: mapped 20, combined 2", "mapped told 20, reads 20",
                "source 3: mapped 30, combined 3", "mapped told 30, reads 30",
            ])
    }

    @Test("Releasing the source completes a mapped property's signal; the value stays the last one")
    func mapSourceReleased() {
        var source: MutableProperty<Int>? = MutableProperty(1)
        let mapped = source!.map { $0 + 100 }
        let changes = EventRecorder<Int, Never>()
        mapped.signal.observe(changes.observer)
        source!.value = 2
        source = nil
        #expect(changes.events == [.value(102), .completed])
        #expect(mapped.value == 102)
        let late = EventRecorder<Int, Never>()
        mapped.producer.start(late.observer)
        #expect(late.events == [.value(102), .completed])
    }

    @Test("Disposing a run of a composed property's producer detaches it from the source")
    func producerDisposal() {
        let source = MutableProperty(1)
        let recorder = EventRecorder<Int, Never>()
        let run = source.map { $0 * 2 }.skipRepeats().producer.start(recorder.observer)
        source.value = 2
        run.dispose()
        source.value = 3
        #expect(recorder.events == [.value(2), .value(4), .interrupted])
    }

    // MARK: combineLatest

    @Test("A combined property reads both values, sends the current pair then each change, completes with both")
    func combineLatest() {
        var first: MutableProperty<Int>? = MutableProperty(1)
        var second: MutableProperty<String>? = MutableProperty("a")
        let combined = first!.combineLatest(with: Property(second!))
        let produced = EventRecorder<String, Never>()
        combined.producer.map { "\($0)\($1)" }.start(produced.observer)
        first!.value = 2
        second!.value = "b"
        #expect(combined.value == (2, "b"))
        #expect(Property.combineLatest(Property(first!), Property(second!)).value == (2, "b"))
        first = nil
        #expect(produced.events == [.value("1a"), .value("2a"), .value("2b")])
        second = nil
        #expect(produced.events == [.value("1a"), .value("2a"), .value("2b"), .completed])
        #expect(combined.value == (2, "b"))
    }

    // MARK: zip

    @Test("A zipped property holds the last pair formed in step, changed before its observers hear of it")
    func zip() {
        let first = MutableProperty(1)
        let second = MutableProperty(10)
        let zipped = first.zip(with: Property(second))
        #expect(zipped.value == (1, 10))
        let log = TestLog<String>()
        zipped.signal.observeValues { pair in log.append("told \(pair), reads \(zipped.value)") }
        first.value = 2
        first.value = 3
        #expect(zipped.value == (1, 10), "no pair formed yet")
        second.value = 20
        second.value = 30
        #expect(zipped.value == (3, 30))
        #expect(log.entries == ["told (2, 20), reads (2, 20)", "told (3, 30), reads (3, 30)"])
        #expect(Property.zip(Property(first), Property(second)).value == (3, 30))
    }

    // MARK: skipRepeats

    @Test("skipRepeats leaves out changes equal to the previous value, in its signal and producer")
    func skipRepeats() {
        let source = MutableProperty(1)
        let distinct = source.skipRepeats()
        let changes = EventRecorder<Int, Never>()
        let produced = EventRecorder<Int, Never>()
        distinct.signal.observe(changes.observer)
        distinct.producer.start(produced.observer)
        for value in [1, 2, 2, 3, 3, 1] { source.value = value }
        #expect(distinct.value == 1)
        #expect(changes.values == [2, 3, 1])
        #expect(produced.values == [1, 2, 3, 1])
    }

    // MARK: Reentrancy and threads

    @Test("An observer of a composed property that sets the source is queued, not recursed into")
    func reentrancy() {
        let source = MutableProperty(0)
        let mapped = source.map { $0 * 2 }
        let probe = InFlightProbe()
        let seen = TestLog<String>()
        // Unowned: the observer must not keep the properties alive, or the source would never complete.
        mapped.signal.observeValues { [unowned source, unowned mapped] value in
            probe.run {
                seen.append("\(value) reads \(mapped.value)")
                if value < 6 { source.value = value / 2 + 1 }
            }
        }
        source.value = 1
        #expect(seen.entries == ["2 reads 2", "4 reads 4", "6 reads 6"])
        #expect(probe.maximum == 1)
    }

    @Test("Two threads changing the two sources of a combined property: one consistent, complete sequence")
    func combineLatestThreads() {
        let perThread = 10_000
        for _ in 0..<3 {
            let first = MutableProperty(0)
            let second = MutableProperty(0)
            let combined = first.combineLatest(with: Property(second))
            let pairs = EventRecorder<[Int], Never>()
            let other = EventRecorder<[Int], Never>()
            combined.producer.map { [$0, $1] }.start(pairs.observer)
            let changes = EventRecorder<[Int], Never>()
            combined.signal.map { [$0, $1] }.observe(changes.observer)
            combined.signal.map { [$0, $1] }.observe(other.observer)
            let reads = LockedTestValue(0)
            Watchdog.runOnThreads(3) { thread in
                switch thread {
                case 0: for value in 1...perThread { first.value = value }
                case 1: for value in 1...perThread { second.value = value }
                default:
                    // A reader on a third thread: the pair it reads never goes back.
                    var last = (0, 0)
                    for _ in 0..<perThread {
                        let now = combined.value
                        if now.0 < last.0 || now.1 < last.1 { reads.withValue { $0 += 1 } }
                        last = now
                    }
                }
            }
            let values = pairs.values
            // Failures print a summary, not 20,000 pairs.
            for sequence in [values, [[0, 0]] + changes.values] {
                #expect(sequence.first == [0, 0])
                #expect(sequence.last == [perThread, perThread])
                #expect(sequence.count == 2 * perThread + 1, "every change of either source is sent")
                let steps = Swift.zip(sequence, sequence.dropFirst()).map { [$1[0] - $0[0], $1[1] - $0[1]] }
                #expect(steps.allSatisfy { $0 == [1, 0] || $0 == [0, 1] }, "one source moves by one at each step")
            }
            let same = other.values == changes.values
            #expect(same, "every observer of the signal sees the same sequence")
            #expect(reads.value == 0)
            #expect(combined.value == (perThread, perThread))
        }
    }
}
