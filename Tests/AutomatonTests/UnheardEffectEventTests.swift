import Automaton
import Dispatch
import Foundation
import Signals
import Testing

// An effect event decided while nobody holds the emitter role and `effectEvents` has no observer
// reaches nobody, and the engine neither sends nor queues it (see `EffectEventGate`). These tests check
// that skipping it loses nothing an observer should hear: an observer hears every event that follows
// its `observe`, with no gap, whichever thread decided it (the processing thread, or another thread
// ending an effect) and however the observer's attachment races with the decisions.

/// An effect that completes in its start handler.
private let completesAtOnce = SignalProducer<Int, Never> { observer, _ in observer.sendCompleted() }

/// The lines of every event `effectEvents` sends while the returned disposable is kept.
private func observeLines(
    _ automaton: Automaton<Int, Int>
) -> (lines: Recording<String>, disposable: (any Disposable)?) {
    let lines = Recording<String>()
    let disposable = automaton.effectEvents.observe { event in
        switch event {
        case let .value(effectEvent): lines.append(effectEvent.description)
        case .completed: lines.append("completed")
        case .interrupted: lines.append("interrupted")
        }
    }
    return (lines, disposable)
}

/// Observers of a started effect, completed by another thread (`completeAll`).
private final class Completer: Sendable {
    private let observers = Locked<[Observer<Int, Never>]>([])

    func keep(_ observer: Observer<Int, Never>) {
        observers.withCriticalRegion { $0.append(observer) }
    }

    /// Completes the observers kept so far; returns how many.
    func completeKept() -> Int {
        let taken = observers.withCriticalRegion { observers in
            defer { observers = [] }
            return observers
        }
        for observer in taken { observer.sendCompleted() }
        return taken.count
    }
}

@Suite("Effect events nobody hears: skipped, and an observer still hears everything after it attaches")
struct UnheardEffectEventTests {
    @Test("events decided before the first observe reach nobody; those after it are heard in full, and ids go on")
    func beforeAndAfterObserve() {
        let automaton = Automaton<Int, Int>(
            state: 0, mapping: { state, input in (state + 1, completesAtOnce) }, strategy: .merge)
        automaton.send(0)
        automaton.send(1)
        let (lines, disposable) = observeLines(automaton)
        automaton.send(2)
        disposable?.dispose()
        automaton.send(3)
        let (again, _) = observeLines(automaton)
        automaton.send(4)
        #expect(lines.values == ["effect 2 started by 2", "effect 2 ended"])
        #expect(again.values == ["effect 4 started by 4", "effect 4 ended"])
    }

    @Test("replacements under .latest and ends on another thread are heard once an observer attaches")
    func replacementsAndOtherThreadEnds() {
        let completer = Completer()
        let automaton = Automaton<Int, Int>(
            state: 0,
            mapping: { state, input in
                (state + 1, SignalProducer<Int, Never> { observer, _ in completer.keep(observer) })
            },
            strategy: .latest)
        automaton.send(0)
        automaton.send(1)  // replaces effect 0, unheard
        let endedUnheard = Thread.detachAndWait { completer.completeKept() }  // effect 1 ends, unheard
        #expect(endedUnheard == 2)
        automaton.send(2)
        let (lines, _) = observeLines(automaton)
        automaton.send(3)  // replaces effect 2
        let endedHeard = Thread.detachAndWait { completer.completeKept() }  // effect 2 already cancelled, effect 3 ends
        #expect(endedHeard == 2)
        #expect(
            lines.values == [
                "effect 2 replaced by 3", "effect 3 started by 3", "effect 3 ended",
            ])
        #expect(automaton.state.value == 4)
    }

    @Test(
        "observers attached and detached from another thread while one thread runs effects each hear a gap-free run that starts at once"
    )
    func attachWhileOneThreadDecides() async {
        for _ in 0..<20 {
            let automaton = Automaton<Int, Int>(
                state: 0, mapping: { state, input in (state + 1, completesAtOnce) }, strategy: .merge)
            let total = 2_000
            // How many inputs the sender has finished sending (each one's two events are decided by then).
            let sent = Locked(0)
            let runs = Locked<[(attachedAfter: Int, lines: [String])]>([])
            await runOnThreads(2) { thread in
                if thread == 0 {
                    for input in 0..<total {
                        automaton.send(input)
                        sent.withCriticalRegion { $0 = input + 1 }
                    }
                    return
                }
                while sent.withCriticalRegion({ $0 }) < total {
                    let (lines, disposable) = observeLines(automaton)
                    let attachedAfter = sent.withCriticalRegion { $0 }
                    // Let a few events through, then leave: unobserved until the next round.
                    while lines.count < 5 && sent.withCriticalRegion({ $0 }) < total { sched_yield() }
                    disposable?.dispose()
                    runs.withCriticalRegion { $0.append((attachedAfter, lines.values)) }
                }
            }
            // Every event in decided order: effect n's start, then its end.
            let all = (0..<total).flatMap { ["effect \($0) started by \($0)", "effect \($0) ended"] }
            for run in runs.withCriticalRegion({ $0 }) {
                // Input `attachedAfter` may have been in flight when the observer attached; the next one
                // was sent after the attachment returned, so its events must all have been heard (if
                // there was one: after the last input, an observer may hear nothing).
                guard let first = run.lines.first else {
                    #expect(run.attachedAfter + 1 >= total, "an observer heard nothing: \(run)")
                    continue
                }
                guard let start = all.firstIndex(of: first) else {
                    Issue.record("an observer heard an event never decided: \(run)")
                    continue
                }
                #expect(start <= 2 * (run.attachedAfter + 1), "the observer started late: \(run)")
                #expect(Array(all[start..<min(start + run.lines.count, all.count)]) == run.lines, "a gap: \(run)")
            }
        }
    }

    @Test(
        "an observer attached while effects start on one thread and end on another hears every event after it, once",
        arguments: [AutomatonStrategy.merge, .latest])
    func attachWhileTwoThreadsDecide(strategy: AutomatonStrategy) async {
        for _ in 0..<20 {
            let completer = Completer()
            let automaton = Automaton<Int, Int>(
                state: 0,
                mapping: { state, input in
                    (state + 1, SignalProducer<Int, Never> { observer, _ in completer.keep(observer) })
                },
                strategy: strategy)
            let total = 2_000
            let sent = Locked(0)
            let observed = Locked<(attachedAfter: Int, lines: Recording<String>)?>(nil)
            await runOnThreads(3) { thread in
                switch thread {
                case 0:
                    for input in 0..<total {
                        automaton.send(input)
                        sent.withCriticalRegion { $0 = input + 1 }
                    }
                case 1:
                    // Ends effects on this thread until every effect has started and been ended here.
                    var ended = 0
                    while sent.withCriticalRegion({ $0 }) < total || ended < total {
                        let completed = completer.completeKept()
                        if completed == 0 { sched_yield() }
                        ended += completed
                    }
                default:
                    while sent.withCriticalRegion({ $0 }) < total / 4 { sched_yield() }
                    let (lines, _) = observeLines(automaton)
                    let attachedAfter = sent.withCriticalRegion { $0 }
                    observed.withCriticalRegion { $0 = (attachedAfter, lines) }
                }
            }
            guard let (attachedAfter, recording) = observed.withCriticalRegion({ $0 }) else {
                Issue.record("the observer did not attach")
                continue
            }
            // Every effect from `attachedAfter + 1` on started after the observer attached, and has
            // ended: by itself, or (under .latest, unless it ended first) replaced by the next input.
            // Each of those events is heard exactly once.
            let heard = Dictionary(recording.values.map { ($0, 1) }, uniquingKeysWith: +)
            for id in (attachedAfter + 1)..<max(attachedAfter + 1, total) {
                let started = heard["effect \(id) started by \(id)", default: 0]
                let ends =
                    heard["effect \(id) ended", default: 0] + heard["effect \(id) replaced by \(id + 1)", default: 0]
                #expect(started == 1, "effect \(id) started \(started) times in what the observer heard")
                #expect(ends == 1, "effect \(id) ended \(ends) times in what the observer heard")
            }
            withExtendedLifetime(automaton) {}
        }
    }
}

extension Thread {
    /// Runs `body` on a new thread and returns its result once it has finished.
    fileprivate static func detachAndWait<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        let result = Locked<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            result.withCriticalRegion { $0 = body() }
            done.signal()
        }
        done.wait()
        return result.withCriticalRegion { $0 }!
    }
}
