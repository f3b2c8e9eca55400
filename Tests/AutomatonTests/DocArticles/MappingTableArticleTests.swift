import Automaton
import AutomatonTesting
import Testing

// The code of the article "The mapping table" (Sources/Automaton/Automaton.docc/MappingTableGuide.md),
// verbatim between the markers (checked by .ci/check-docc-snippets).

// DOCC-TABLE-JOB-BEGIN
enum Job: Sendable, Equatable {
    case idle, queued, running(attempt: Int), done(bytes: Int), failed(attempt: Int), cancelled

    var isRunning: Bool { runningAttempt != nil }
    var runningAttempt: Int? { if case let .running(attempt) = self { attempt } else { nil } }
    var failedAttempt: Int? { if case let .failed(attempt) = self { attempt } else { nil } }
}

enum JobInput: Sendable, Equatable {
    case enqueue, start, finished(bytes: Int), fail, retry, cancel, reset, refresh

    /// The case path of `.finished`: its bytes, or `nil` for any other input.
    var finishedBytes: Int? { if case let .finished(bytes) = self { bytes } else { nil } }
}

enum JobKey: Hashable, Sendable {
    case download
}

/// A download job. `download(attempt)` is the effect that downloads, ending in `.finished` or `.fail`.
func makeJobMachine(
    download: @escaping @Sendable (_ attempt: Int) -> SignalProducer<JobInput, Never>
) -> Automaton<Job, JobInput> {
    let isRestart: @Sendable (JobInput) -> Bool = { $0 == .start || $0 == .retry }

    return Automaton(
        state: .idle,
        table: [
            // A value input, from a value state, with an effect that calls `send`.
            .enqueue | .idle => .queued | { send in send(.start) },
            // A producer effect, keyed so that `.cancel(JobKey.download)` can cancel it.
            .start | .queued => .running(attempt: 1) | download(1).keyed(JobKey.download),
            // Every `.finished(bytes:)`, whatever its bytes, through a key path to an optional.
            \.finishedBytes | { job, bytes in job.isRunning ? .done(bytes: bytes) : nil },
            // The next state computed from the state and the input; `nil` declines.
            .fail | { job, _ in job.runningAttempt.map { .failed(attempt: $0) } },
            // The same, with an effect computed from the from-state and the input.
            .retry | { job, _ in job.failedAttempt.map { .running(attempt: $0 + 1) } }
                | { job, _ in download((job.failedAttempt ?? 0) + 1).keyed(JobKey.download) },
            // A key path to a `Bool` property as a from-state predicate; a row that cancels by key.
            .cancel | \.isRunning => .cancelled | .cancel(JobKey.download),
            // Any of several states.
            .cancel | [.idle, .queued] => .cancelled,
            // Every input a predicate accepts.
            isRestart | .cancelled => .queued | { send in send(.start) },
            // Any state.
            .reset | any => .idle | .cancel(JobKey.download),
            // Any input: a cancelled job accepts everything else and stays cancelled.
            any | .cancelled => .cancelled,
            // The next state as a function of the current one, in every state.
            .refresh | { $0 },
        ])
}
// DOCC-TABLE-JOB-END

// DOCC-TABLE-STEP-BEGIN
func makeRetryingJobMachine(
    download: @escaping @Sendable (_ attempt: Int) -> SignalProducer<JobInput, Never>
) -> Automaton<Job, JobInput> {
    Automaton(
        state: .queued,
        table: [
            .start | .queued => .running(attempt: 1) | download(1).keyed(JobKey.download),
            .fail | { job, _ in job.runningAttempt.map { .failed(attempt: $0) } },
            // The attempt is computed once, for the next state and for the effect.
            .on(.retry) { job, _ in
                guard let attempt = job.failedAttempt, attempt < 3 else { return nil }
                return (.running(attempt: attempt + 1), download(attempt + 1).keyed(JobKey.download))
            },
            // After a case path, the closure receives the case's value.
            .on(\.finishedBytes) { job, bytes in
                job.isRunning ? (.done(bytes: bytes), .empty) : nil
            },
        ])
}
// DOCC-TABLE-STEP-END

// DOCC-TABLE-LAMP-BEGIN
enum Lamp: Sendable, Equatable { case off, on }
enum LampInput: Sendable, Equatable { case press, unplug }
// DOCC-TABLE-LAMP-END

@Suite("Article: The mapping table")
struct MappingTableArticleTests {
    @Test("the job machine: every row form, in one run")
    func jobMachine() {
        // DOCC-TABLE-JOB-USE-BEGIN
        let scheduler = TestScheduler()
        // The first attempt fails after 1 s, the others finish with 42 bytes.
        let automaton = makeJobMachine(download: { attempt in
            SignalProducer(value: attempt == 1 ? .fail : .finished(bytes: 42)).delay(.seconds(1), on: scheduler)
        })
        let replies = TestRecorder(automaton.replies)

        automaton.send(.enqueue)  // its effect sends .start
        scheduler.advance(by: .seconds(1))  // attempt 1 fails
        automaton.send(.retry)
        scheduler.advance(by: .seconds(1))  // attempt 2 finishes
        automaton.send(.refresh)
        automaton.send(.cancel)  // no row: done jobs are not cancelled
        automaton.send(.reset)
        automaton.send(.enqueue)
        automaton.send(.cancel)  // cancels the running download by key
        automaton.send(.fail)  // accepted by `any | .cancelled`
        automaton.send(.retry)  // a restart

        #expect(
            replies.values == [
                .success(.enqueue, .idle, .queued),
                .success(.start, .queued, .running(attempt: 1)),
                .success(.fail, .running(attempt: 1), .failed(attempt: 1)),
                .success(.retry, .failed(attempt: 1), .running(attempt: 2)),
                .success(.finished(bytes: 42), .running(attempt: 2), .done(bytes: 42)),
                .success(.refresh, .done(bytes: 42), .done(bytes: 42)),
                .failure(.cancel, .done(bytes: 42)),
                .success(.reset, .done(bytes: 42), .idle),
                .success(.enqueue, .idle, .queued),
                .success(.start, .queued, .running(attempt: 1)),
                .success(.cancel, .running(attempt: 1), .cancelled),
                .success(.fail, .cancelled, .cancelled),
                .success(.retry, .cancelled, .queued),
                .success(.start, .queued, .running(attempt: 1)),
            ])
        // DOCC-TABLE-JOB-USE-END
        #expect(automaton.runningEffectCount == 1)
        scheduler.run()
        #expect(automaton.state.value == .failed(attempt: 1))
    }

    @Test("one closure for the next state and its effect: the retry's attempt, computed once")
    func retryingJobMachine() {
        let scheduler = TestScheduler()
        let attempts = Recording<Int>()
        let automaton = makeRetryingJobMachine(download: { attempt in
            attempts.append(attempt)
            return SignalProducer(value: attempt < 3 ? .fail : .finished(bytes: 7)).delay(.seconds(1), on: scheduler)
        })
        let replies = TestRecorder(automaton.replies)

        automaton.send(.start)
        scheduler.advance(by: .seconds(1))
        automaton.send(.retry)
        scheduler.advance(by: .seconds(1))
        automaton.send(.retry)
        scheduler.advance(by: .seconds(1))
        automaton.send(.retry)  // declined: done

        #expect(
            replies.values == [
                .success(.start, .queued, .running(attempt: 1)),
                .success(.fail, .running(attempt: 1), .failed(attempt: 1)),
                .success(.retry, .failed(attempt: 1), .running(attempt: 2)),
                .success(.fail, .running(attempt: 2), .failed(attempt: 2)),
                .success(.retry, .failed(attempt: 2), .running(attempt: 3)),
                .success(.finished(bytes: 7), .running(attempt: 3), .done(bytes: 7)),
                .failure(.retry, .done(bytes: 7)),
            ])
        #expect(attempts.values == [1, 2, 3])
    }

    @Test("the array form, combined with reduce, decides as the table does")
    func arrayForm() {
        // DOCC-TABLE-ARRAY-BEGIN
        let rows: [Automaton<Lamp, LampInput>.Mapping] = [
            .press | .off => .on,
            .press | .on => .off,
            .unplug | any => .off,
        ]
        let lamp = Automaton(state: .off, mapping: reduce(rows))

        let withEffects: [Automaton<Lamp, LampInput>.EffectMapping] = [
            .press | .off => .on | .empty,
            .press | .on => .off | { send in send(.unplug) },  // switching off unplugs it
            .unplug | any => .off | .empty,
        ]
        let selfUnplugging = Automaton(state: .off, mapping: reduce(withEffects))
        // DOCC-TABLE-ARRAY-END

        let lampReplies = TestRecorder(lamp.replies)
        lamp.send(.press)
        lamp.send(.press)
        lamp.send(.unplug)
        #expect(
            lampReplies.values == [
                .success(.press, .off, .on),
                .success(.press, .on, .off),
                .success(.unplug, .off, .off),
            ])
        let unpluggingReplies = TestRecorder(selfUnplugging.replies)
        selfUnplugging.send(.press)
        selfUnplugging.send(.press)
        #expect(
            unpluggingReplies.values == [
                .success(.press, .off, .on),
                .success(.press, .on, .off),
                .success(.unplug, .off, .off),
            ])
    }

    @Test("a MappingTable is a value: declared, extended from its rows, and turned into a mapping")
    func tableValue() {
        // DOCC-TABLE-VALUE-BEGIN
        let lampTable: MappingTable<Lamp, LampInput> = [
            .press | .off => .on,
            .press | .on => .off,
        ]
        let lamp = Automaton(state: .off, table: lampTable)

        let rows: [MappingRow<Lamp, LampInput>] = lampTable.rows + [.unplug | any => .off]
        let unpluggable = Automaton(state: .on, table: MappingTable(rows))

        let mapping = MappingTable(rows).mapping  // an Automaton<Lamp, LampInput>.EffectMapping
        let sameMachine = Automaton(state: .on, mapping: mapping)
        // DOCC-TABLE-VALUE-END

        let lampReplies = TestRecorder(lamp.replies)
        lamp.send(.press)
        lamp.send(.unplug)
        #expect(lampReplies.values == [.success(.press, .off, .on), .failure(.unplug, .on)])
        for automaton in [unpluggable, sameMachine] {
            let replies = TestRecorder(automaton.replies)
            automaton.send(.unplug)
            automaton.send(.press)
            #expect(replies.values == [.success(.unplug, .on, .off), .success(.press, .off, .on)])
        }
    }
}
