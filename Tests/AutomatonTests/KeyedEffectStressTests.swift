import Automaton
import Foundation
import Signals
import Testing

// Keyed effects under three threads at once: one starts effects of a few keys under every policy,
// one cancels keys and then releases the automaton, one completes running effects. The key groups
// link their records without retaining them (see `KeyGroup`), so this is the test that the address
// sanitizer run in CI uses to prove that no record is read after it is freed; it also checks each
// effect's event grammar and that every lifetime handed out ends.

@Suite("Keyed effects under threads: starts, cancels, ends and release racing")
struct KeyedEffectStressTests {
    /// One round: its automaton (released by the cancelling thread) and what its effects did.
    final class Round: Sendable {
        let automaton: Locked<Automaton<Int, Int>?>
        /// Observers of running effects, for the completing thread.
        let running = Locked<[Observer<Int, Never>]>([])
        let startHandlerCalls = Locked(0)
        /// Lifetimes handed to a start handler that have not ended.
        let openLifetimes = Locked(0)
        let events = Locked<[EffectEvent<Int>]>([])
        let eventsEnded = Locked(false)
        /// The sending threads that have finished.
        let sendersDone = Locked(0)
        /// How many starts the starting thread has sent: the cancelling thread paces itself by it.
        let startsSent = Locked(0)

        init() {
            let (running, calls, open) = (running, startHandlerCalls, openLifetimes)
            let effect = SignalProducer<Int, Never> { observer, lifetime in
                calls.withCriticalRegion { $0 += 1 }
                open.withCriticalRegion { $0 += 1 }
                lifetime.observeEnded { open.withCriticalRegion { $0 -= 1 } }
                running.withCriticalRegion { $0.append(observer) }
            }
            let policies: [EffectPolicy] = [.merge, .latest, .first, .queue]
            // Input: 1 kkk p = start an effect of key k under policy p; 2 kkk 0 = cancel key k.
            let automaton = Automaton<Int, Int>(
                state: 0,
                mapping: { state, input in
                    let key = (input / 10) % 1_000
                    guard input < 2_000 else { return (state + 1, .cancel(key)) }
                    return (state + 1, effect.keyed(key, policies[input % 10]))
                })
            // The engine checks its invariants after every critical section (debug builds).
            automaton.checksInvariants = true
            let (events, ended) = (events, eventsEnded)
            automaton.effectEvents.observe { event in
                switch event {
                case let .value(value): events.withCriticalRegion { $0.append(value) }
                case .completed, .interrupted: ended.withCriticalRegion { $0 = true }
                }
            }
            self.automaton = Locked(automaton)
        }

        func send(_ input: Int) {
            automaton.withCriticalRegion { $0 }?.send(input)
        }
    }

    @Test("every effect starts at most once and ends or is cancelled exactly once; every lifetime ends")
    func startsCancelsEndsAndRelease() async {
        let rounds = (0..<150).map { _ in Round() }
        let rendezvous = Rendezvous(parties: 3)
        await runOnThreads(3) { thread in
            for (index, round) in rounds.enumerated() {
                guard rendezvous.arrive() else { return }
                var random = SeededGenerator(seed: UInt64(index * 3 + thread))
                switch thread {
                case 0:
                    for _ in 0..<40 {
                        round.send(1_000 + random.int(in: 0..<3) * 10 + random.int(in: 0..<4))
                        round.startsSent.withCriticalRegion { $0 += 1 }
                    }
                    round.sendersDone.withCriticalRegion { $0 += 1 }
                case 1:
                    // Cancels spread over the starts, then the release while the other threads may
                    // still send and complete.
                    for step in 0..<9 {
                        while round.startsSent.withCriticalRegion({ $0 }) < step * 4 { sched_yield() }
                        if step < 8 {
                            round.send(2_000 + random.int(in: 0..<3) * 10)
                        } else {
                            round.automaton.withCriticalRegion { $0 = nil }
                        }
                    }
                    round.sendersDone.withCriticalRegion { $0 += 1 }
                default:
                    // Completes running effects, newest or oldest, until both senders are done and
                    // nothing is left.
                    while true {
                        let next = round.running.withCriticalRegion { running -> Observer<Int, Never>? in
                            guard !running.isEmpty else { return nil }
                            return random.chance(50) ? running.removeLast() : running.removeFirst()
                        }
                        if let next {
                            next.sendCompleted()
                        } else if round.sendersDone.withCriticalRegion({ $0 }) == 2 {
                            break
                        } else {
                            sched_yield()
                        }
                    }
                }
            }
        }
        var totals = (started: 0, ended: 0, cancelled: 0)
        for (index, round) in rounds.enumerated() {
            // Observers the completing thread never took: releasing them is a late end, ignored.
            round.running.withCriticalRegion { $0.removeAll() }
            let events = round.events.withCriticalRegion { $0 }
            #expect(round.eventsEnded.withCriticalRegion { $0 }, "round \(index): effect events ended")
            #expect(round.openLifetimes.withCriticalRegion { $0 } == 0, "round \(index): lifetimes left open")
            let started = events.filter { if case .started = $0.kind { true } else { false } }
            let endedBySelf = events.filter { if case .ended = $0.kind { true } else { false } }
            // An effect that ended by itself ran its start handler. One reported started and then
            // cancelled may not have: a `.queue` effect whose turn came on the completing thread
            // is cancelled before it runs if a cancel or the release is processed first (see
            // EffectEventOrderTests).
            let calls = round.startHandlerCalls.withCriticalRegion { $0 }
            #expect(
                calls >= endedBySelf.count && calls <= started.count,
                "round \(index): \(calls) start handler calls, \(started.count) started, \(endedBySelf.count) ended")
            #expect(Self.grammarViolations(events).isEmpty, "round \(index): \(Self.grammarViolations(events))")
            totals.started += started.count
            totals.ended += endedBySelf.count
            totals.cancelled += events.filter { if case .cancelled = $0.kind { true } else { false } }.count
        }
        // The race was run: effects started, ended by themselves, and were cancelled, in every way.
        #expect(totals.started > rounds.count && totals.ended > 0 && totals.cancelled > 0, "\(totals)")
    }

    /// Per effect: at most one start, and first; then exactly one end or cancellation, last. (A
    /// started effect always gets one: the automaton was released, cancelling what still ran.)
    static func grammarViolations(_ events: [EffectEvent<Int>]) -> [String] {
        var byID: [UInt64: [EffectEvent<Int>.Kind]] = [:]
        for event in events { byID[event.id, default: []].append(event.kind) }
        var violations: [String] = []
        for (id, kinds) in byID {
            let isStart = kinds.map { kind -> Bool in if case .started = kind { true } else { false } }
            let starts = isStart.filter { $0 }.count
            let terminals = kinds.count - starts
            if starts > 1 || (starts == 1 && !isStart[0]) {
                violations.append("effect \(id): a start that is not the one first event: \(kinds)")
            }
            if terminals != 1 || isStart[kinds.count - 1] {
                violations.append("effect \(id): not exactly one end or cancellation, last: \(kinds)")
            }
        }
        return violations
    }
}
