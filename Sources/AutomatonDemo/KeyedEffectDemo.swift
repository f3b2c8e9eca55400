import Automaton
import Dispatch

enum LinkState: String, Sendable, Equatable, CustomStringConvertible {
    case disconnected, connecting, connected, backingOff
    var description: String { rawValue }
}

enum LinkInput: String, Sendable, Equatable, CustomStringConvertible {
    case connect, connected, failed, retry, foregrounded, disconnect
    var description: String { rawValue }
}

enum LinkKey: String, Sendable, Hashable, CustomStringConvertible {
    case attempt, backOff
    var description: String { rawValue }
}

/// A connection manager under `.latest` whose attempt and back-off timer are keyed effects. The first
/// attempt fails; while the machine backs off, the app comes to the foreground (`.foregrounded`, a
/// successful input that changes nothing). An un-keyed timer would be replaced by it, and the machine
/// would back off for ever; the keyed timer survives, fires `.retry`, and the second attempt connects.
/// The effect events show it: nothing is cancelled.
@Sendable
func runKeyedEffectDemo() -> Bool {
    let scheduler = QueueScheduler(label: "demo.keyed")
    func after(_ milliseconds: Int, send input: LinkInput) -> SignalProducer<LinkInput, Never> {
        SignalProducer(value: input).delay(.milliseconds(milliseconds), on: scheduler)
    }
    let automaton = Automaton<LinkState, LinkInput>(
        state: .disconnected, strategy: .latest,
        table: [
            .connect | .disconnected => .connecting | after(50, send: .failed).keyed(LinkKey.attempt),
            .failed | .connecting => .backingOff | after(150, send: .retry).keyed(LinkKey.backOff),
            .retry | .backingOff => .connecting | after(50, send: .connected).keyed(LinkKey.attempt),
            .connected | .connecting => .connected,
            .foregrounded | { $0 },
            .disconnect | any => .disconnected | .cancel(LinkKey.attempt, LinkKey.backOff),
        ])

    let expectedEvents = [
        "effect 0 [attempt] started by connect",
        "effect 1 [backOff] started by failed",
        "effect 0 [attempt] ended",
        "effect 2 [attempt] started by retry",
        "effect 1 [backOff] ended",
        "effect 2 [attempt] ended",
    ]
    let events = MutableProperty<[String]>([])
    let allEvents = DispatchSemaphore(value: 0)
    automaton.effectEvents
        .logEvents(identifier: "link effects", events: .value, logger: { print("   \($0)") })
        .observeValues { event in
            let count = events.modify { events in
                events.append(event.description)
                return events.count
            }
            if count == expectedEvents.count { allEvents.signal() }
        }

    let repliesPassed = play(
        "link",
        automaton: automaton,
        scheduler: scheduler,
        script: [
            (.milliseconds(0), .connect),  // fails at 50 ms: back off until 200 ms
            (.milliseconds(100), .foregrounded),  // unrelated: the keyed timer goes on
        ],
        expectedReplies: [
            "success(connect, disconnected => connecting)",
            "success(failed, connecting => backingOff)",
            "success(foregrounded, backingOff => backingOff)",
            "success(retry, backingOff => connecting)",
            "success(connected, connecting => connected)",
        ],
        expectedFinalState: .connected,
        timeout: .milliseconds(800)
    )
    // The last attempt's end follows its reply on the scheduler's queue.
    let eventsArrived = allEvents.wait(timeout: .now() + .milliseconds(500)) == .success
    guard eventsArrived, events.value == expectedEvents else {
        print("   unexpected effect events; expected:")
        for line in expectedEvents { print("     \(line)") }
        return false
    }
    print("   effects running at the end: \(automaton.runningEffectCount)")
    return repliesPassed && automaton.runningEffectCount == 0
}
