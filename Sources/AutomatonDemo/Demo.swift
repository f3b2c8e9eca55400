import Automaton
import Dispatch

/// Plays one scenario: schedules the script on `scheduler`, logs each reply (one timestamped line per
/// reply, through `logEvents`), waits until as many replies as expected have arrived (at most `timeout`), then
/// compares the final state and the replies with the expectation.
func play<State: Sendable & Equatable, Input: Sendable>(
    _ name: String,
    automaton: Automaton<State, Input>,
    scheduler: QueueScheduler,
    script: [(at: Duration, input: Input)],
    expectedReplies: [String],
    expectedFinalState: State,
    timeout: Duration = .seconds(2)
) -> Bool {
    let replies = MutableProperty<[String]>([])
    let done = DispatchSemaphore(value: 0)

    automaton.replies
        .logEvents(identifier: name, events: .value, logger: { print("   \($0)") })
        .observeValues { reply in
            let count = replies.modify { replies in
                replies.append(reply.description)
                return replies.count
            }
            if count == expectedReplies.count { done.signal() }
        }

    for step in script {
        scheduler.schedule(after: step.at) { automaton.send(step.input) }
    }

    let finished = done.wait(timeout: .now() + .milliseconds(Int(milliseconds(timeout)))) == .success
    // Let anything still scheduled at this instant run, so the final state is settled.
    let settled = DispatchSemaphore(value: 0)
    scheduler.schedule { settled.signal() }
    settled.wait()

    let finalState = automaton.state.value
    let observed = replies.value
    print("   final state: \(finalState)")
    guard finished else {
        print("   did not get the \(expectedReplies.count) expected replies within \(timeout)")
        return false
    }
    if observed != expectedReplies {
        print("   unexpected replies; expected:")
        for line in expectedReplies { print("     \(line)") }
        return false
    }
    return finalState == expectedFinalState
}

func milliseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
}
