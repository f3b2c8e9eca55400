import Automaton
import Dispatch
import Foundation
import Signals
import Testing

/// An input that is equal to every other of its kind: `tag` (who sent it) takes no part in `==` or
/// `hash`, so an engine that matched replies to askers by equality would hand them each other's.
struct TaggedInput: Sendable, Hashable, CustomStringConvertible {
    let tag: Int

    static func == (_: TaggedInput, _: TaggedInput) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
    var description: String { "add#\(tag)" }
}

/// Counts every input: each reply is `success(input, n, n + 1)`, so a reply names its place.
private func makeCountingMachine(input: Signal<TaggedInput, Never>? = nil) -> Automaton<Int, TaggedInput> {
    let mapping: Automaton<Int, TaggedInput>.Mapping = { state, _ in state + 1 }
    if let input { return Automaton(state: 0, input: input, mapping: mapping) }
    return Automaton(state: 0, mapping: mapping)
}

private let threads = 4
private var asksPerThread: Int { LongTests.isEnabled ? 5_000 : 500 }
private var rounds: Int { LongTests.isEnabled ? 200 : 20 }

@Suite("Request and reply under threads: every caller its own reply, nobody hangs")
struct AskConcurrencyTests {
    @Test(
        "4 threads ask equal inputs at once: each caller gets the reply to its own input, every reply is answered once")
    func equalInputsFromThreads() async {
        let automaton = makeCountingMachine()
        let replies = Recording<Reply<Int, TaggedInput>>()
        automaton.replies.observeValues { replies.append($0) }
        // Per thread: the replies its callbacks received, in the order received.
        let answers = (0..<threads).map { _ in Recording<Reply<Int, TaggedInput>>() }
        await runOnThreads(threads) { thread in
            for index in 0..<asksPerThread {
                let tag = thread * 1_000_000 + index
                automaton.ask(TaggedInput(tag: tag)) { result in
                    guard case let .success(reply) = result else {
                        Issue.record("ask \(tag) answered \(result)")
                        return
                    }
                    answers[thread].append(reply)
                }
            }
        }
        let total = threads * asksPerThread
        #expect(replies.count == total)
        // Every reply is success(n, n + 1) in processing order: nothing lost, nothing doubled.
        #expect(replies.values.enumerated().allSatisfy { $1.fromState == $0 && $1.toState == $0 + 1 })
        for thread in 0..<threads {
            let received = answers[thread].values
            #expect(received.count == asksPerThread)
            // Each answer is the reply to this thread's own input, in the order this thread asked.
            #expect(received.map(\.input.tag) == (0..<asksPerThread).map { thread * 1_000_000 + $0 })
            #expect(zip(received, received.dropFirst()).allSatisfy { $0.fromState < $1.fromState })
        }
        // Answers and replies are one and the same set: each reply went to exactly the caller of its input.
        let answered = Set((0..<threads).flatMap { answers[$0].values.map { "\($0.input.tag)@\($0.fromState)" } })
        #expect(answered == Set(replies.values.map { "\($0.input.tag)@\($0.fromState)" }))
    }

    @Test("tasks await asks of equal inputs from 4 threads: each returns the reply to its own input")
    func awaitedEqualInputs() async {
        let automaton = makeCountingMachine()
        let replies = Recording<Reply<Int, TaggedInput>>()
        automaton.replies.observeValues { replies.append($0) }
        let perTask = asksPerThread / 5
        let received = await withTaskGroup(of: [Reply<Int, TaggedInput>].self) { group in
            for task in 0..<threads * 4 {
                group.addTask {
                    var mine: [Reply<Int, TaggedInput>] = []
                    for index in 0..<perTask {
                        do {
                            mine.append(try await automaton.ask(TaggedInput(tag: task * 1_000_000 + index)))
                        } catch {
                            Issue.record("ask answered \(error)")
                        }
                    }
                    return mine
                }
            }
            var all: [[Reply<Int, TaggedInput>]] = []
            for await mine in group { all.append(mine) }
            return all
        }
        #expect(replies.count == threads * 4 * perTask)
        for mine in received {
            guard let first = mine.first else {
                Issue.record("a task got no reply")
                continue
            }
            let task = first.input.tag / 1_000_000
            #expect(mine.map(\.input.tag) == (0..<perTask).map { task * 1_000_000 + $0 })
        }
        let answered = Set(received.joined().map { "\($0.input.tag)@\($0.fromState)" })
        #expect(answered == Set(replies.values.map { "\($0.input.tag)@\($0.fromState)" }))
    }

    @Test("an interruption races asks from 4 threads: each is answered once, with its reply or .interrupted")
    func interruptionRacesAsks() async {
        for _ in 0..<rounds {
            let (input, inputObserver) = Signal<TaggedInput, Never>.pipe()
            let automaton = makeCountingMachine(input: input)
            let replies = automaton.replies.record()
            let outcomes = Recording<String>()
            let perThread = asksPerThread / 10
            await runOnThreads(threads + 1) { thread in
                guard thread < threads else {
                    inputObserver.sendInterrupted()
                    return
                }
                for index in 0..<perThread {
                    let tag = thread * 1_000_000 + index
                    automaton.ask(TaggedInput(tag: tag)) { result in
                        switch result {
                        case let .success(reply): outcomes.append("\(tag) replied \(reply.fromState)")
                        case .failure(.interrupted): outcomes.append("\(tag) interrupted")
                        case let .failure(error): outcomes.append("\(tag) unexpected \(error)")
                        }
                    }
                }
            }
            // Every ask answered exactly once (nobody hangs: runOnThreads fails after its time-out).
            let values = outcomes.values
            #expect(values.count == threads * perThread)
            #expect(Set(values.map { $0.split(separator: " ")[0] }).count == threads * perThread)
            #expect(!values.contains { $0.contains("unexpected") })
            // The replied ones are exactly the replies sent, and the replies were interrupted.
            let replied = values.filter { $0.contains("replied") }
            #expect(replied.count == replies.values.count - 1)
            #expect(replies.values.last == .interrupted)
        }
    }

    @Test("the automaton's release races callback asks: each is answered once, with its reply or .released")
    func releaseRacesAsks() async {
        for _ in 0..<rounds {
            let holder = Locked<Automaton<Int, TaggedInput>?>(makeCountingMachine())
            let outcomes = Recording<String>()
            let repliesCount = Locked(0)
            let ended = Locked(false)
            _ = holder.withCriticalRegion { automaton in
                automaton!.replies.observe { event in
                    if case .value = event {
                        repliesCount.withCriticalRegion { $0 += 1 }
                    } else {
                        ended.withCriticalRegion { $0 = true }
                    }
                }
            }
            let perThread = asksPerThread / 10
            await runOnThreads(threads + 1) { thread in
                guard thread < threads else {
                    let released = holder.withCriticalRegion { held in
                        defer { held = nil }
                        return held
                    }
                    withExtendedLifetime(released) {}
                    return
                }
                for index in 0..<perThread {
                    // Borrowed only for the call: the release may happen at any point between calls.
                    guard let automaton = holder.withCriticalRegion({ $0 }) else {
                        outcomes.append("\(thread * 1_000_000 + index) not sent")
                        continue
                    }
                    let tag = thread * 1_000_000 + index
                    automaton.ask(TaggedInput(tag: tag)) { result in
                        switch result {
                        case .success: outcomes.append("\(tag) replied")
                        case .failure(.released): outcomes.append("\(tag) released")
                        case let .failure(error): outcomes.append("\(tag) unexpected \(error)")
                        }
                    }
                }
            }
            let values = outcomes.values
            #expect(values.count == threads * perThread)
            #expect(!values.contains { $0.contains("unexpected") })
            #expect(values.filter { $0.contains("replied") }.count == repliesCount.withCriticalRegion { $0 })
            #expect(ended.withCriticalRegion { $0 })
        }
    }

    @Test(
        "awaiting tasks cancelled while they wait: each returns its reply or .cancelled, and every input is processed")
    func cancellationRacesAnswers() async {
        let automaton = makeCountingMachine()
        let replies = Recording<Reply<Int, TaggedInput>>()
        automaton.replies.observeValues { replies.append($0) }
        let tasksPerRound = 16
        var cancelled = 0
        var answered = 0
        for round in 0..<rounds * 5 {
            // 16 tasks ask at once, so most wait behind another's input; every other one is cancelled
            // as soon as it has started.
            let outcomes = await withTaskGroup(of: (Int, Result<Reply<Int, TaggedInput>, any Error>).self) { group in
                for index in 0..<tasksPerRound {
                    let tag = round * tasksPerRound + index
                    let task = Task { () throws(AskError) -> Reply<Int, TaggedInput> in
                        try await automaton.ask(TaggedInput(tag: tag))
                    }
                    if index % 2 == 1 { task.cancel() }
                    group.addTask { (tag, await task.result) }
                }
                var all: [(Int, Result<Reply<Int, TaggedInput>, any Error>)] = []
                for await outcome in group { all.append(outcome) }
                return all
            }
            for (tag, outcome) in outcomes {
                switch outcome {
                case let .success(reply):
                    #expect(reply.input.tag == tag)
                    answered += 1
                case .failure(AskError.cancelled):
                    cancelled += 1
                case let .failure(error):
                    Issue.record("ask \(tag) threw \(error)")
                }
            }
        }
        let count = rounds * 5 * tasksPerRound
        #expect(answered + cancelled == count)
        #expect(answered >= count / 2)
        // Cancelled or not, every asked input is processed: the cancelled ones may still be queued
        // when their task returns, so one more ask, queued behind them all, is awaited first.
        _ = try? await automaton.ask(TaggedInput(tag: -1))
        let asked = Set(replies.values.map(\.input.tag))
        #expect(asked == Set(-1..<count))
    }
}
