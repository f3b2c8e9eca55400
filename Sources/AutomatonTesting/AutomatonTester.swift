import Automaton
import Signals
import Testing

/// Exhaustive tests of an automaton, in the spirit of TCA's `TestStore`: send inputs, move virtual
/// time, and assert **everything** that happened since the last assertion: every reply and every
/// effect event, in order. Anything unasserted fails the next assertion, and effects still running at
/// `finish()` fail the test.
///
/// With the connection manager of the README's "Testing effects" (`makeConnectionManager(connect:backOff:)`,
/// whose connect effect is keyed `ConnectionKey.attempt`):
///
/// ```swift
/// let scheduler = TestScheduler()
/// let connect = SignalProducer<ConnectionInput, Never>(value: .failed).delay(.seconds(1), on: scheduler)
/// let backOff = SignalProducer<ConnectionInput, Never>(value: .retry).delay(.seconds(30), on: scheduler)
/// let tester = AutomatonTester(makeConnectionManager(connect: connect, backOff: backOff), scheduler: scheduler)
/// tester.send(.connect)
/// tester.expect([
///     .success(.connect, .disconnected, .connecting),
///     .started(by: .connect, key: ConnectionKey.attempt),
/// ])
/// tester.send(.disconnect)
/// tester.expect([
///     .cancelled(.cancelled(by: .disconnect), key: ConnectionKey.attempt),
///     .success(.disconnect, .connecting, .disconnected),
/// ])
/// tester.finish()
/// ```
///
/// Failures are reported through Swift Testing's `Issue.record`, with a line-by-line comparison, at
/// the caller's source location. A file that calls `expect` or `finish` imports `Testing`: their
/// default `sourceLocation` is Swift Testing's `#_sourceLocation`.
///
/// Under XCTest, assert the `Bool` that `expect` and `finish` return
/// (`XCTAssertTrue(tester.expect([...]))`); `failures` lists what went wrong. Do not rely on the
/// issue: with Swift 6.3 and swift-corelibs-xctest (Linux), an issue recorded during an XCTest test
/// is dropped and the test passes, whatever `SWIFT_TESTING_XCTEST_INTEROP_MODE` says; only a
/// toolchain whose XCTest interoperates with Swift Testing reports it as an XCTest failure.
///
/// The tester holds its automaton until `release()`, which lets go of it so that a test can assert
/// what the automaton's release does (its running effects are cancelled, `cancelled(.released)`).
///
/// Thread safety: the tester records from any thread; drive it (send, advance, assert, release) from
/// one thread at a time, as a test does.
public final class AutomatonTester<State: Sendable & Equatable, Input: Sendable & Equatable>: Sendable {
    /// The automaton under test.
    ///
    /// Reading it after `release()` stops the test with a precondition failure: the tester no longer
    /// holds it. Read what you need (`state.value`, `runningEffectCount`) before releasing it.
    public var automaton: Automaton<State, Input> {
        guard let automaton = held.withCriticalRegion({ $0 }) else {
            preconditionFailure(
                "AutomatonTester: the automaton was used (automaton, send) after release(), which let go of it. "
                    + "Read what the test needs before calling release(), and send nothing after it.")
        }
        return automaton
    }
    /// The virtual clock that effects are scheduled on.
    public let scheduler: TestScheduler

    /// The automaton, until `release()`.
    private let held: Locked<Automaton<State, Input>?>
    /// The automaton, weakly: after `release()`, whether something else still holds it.
    private let watched: Locked<WeakAutomaton<State, Input>>

    let recorded = Locked<[Step<State, Input>]>([])
    /// The watches of children's replies (`recordReplies(of:)`), until the tester goes.
    let childWatches = Locked<[ChildReplyWatch]>([])
    private let reported = Locked<[String]>([])
    /// The last effect each input started, asserted or not, in the order of those starts: the input
    /// and the effect's number. One entry per input (by its `==`), so a long test keeps as many as it
    /// has distinct inputs, not one per effect.
    private let started = Locked<[(input: Input, id: UInt64)]>([])

    /// A tester of `automaton`, whose effects run on `scheduler`. It records from now on.
    public init(_ automaton: Automaton<State, Input>, scheduler: TestScheduler = TestScheduler()) {
        held = Locked(automaton)
        watched = Locked(WeakAutomaton(automaton))
        self.scheduler = scheduler
        automaton.replies.observeValues { [recorded] reply in
            recorded.withCriticalRegion { $0.append(.reply(reply)) }
        }
        automaton.effectEvents.observeValues { [recorded, started] event in
            if case let .started(input) = event.kind {
                // The user's `==` runs here, with no lock held. Effect events are delivered one at a
                // time, and only this observer changes `started`, so the index stays right.
                let earlier = started.withCriticalRegion { $0 }.lastIndex { $0.input == input }
                let replaced = started.withCriticalRegion { list -> (input: Input, id: UInt64)? in
                    let old = earlier.map { list.remove(at: $0) }
                    list.append((input, event.id))
                    return old
                }
                withExtendedLifetime(replaced) {}  // the replaced input is let go of after the lock
            }
            recorded.withCriticalRegion { $0.append(Step(event)) }
        }
    }

    // MARK: Driving

    /// Sends an outside input (see `Automaton.send(_:)`).
    public func send(_ input: Input) {
        automaton.send(input)
    }

    /// Sends `input` as if the running effect `effectID` had sent it (see `EffectEvent.id`): it is
    /// processed at that effect's level of the `.latest` tree. It is dropped, silently, if that effect
    /// has ended, was cancelled, waits for its key (`.queue`: it has not started) or never existed: no
    /// issue is recorded then, but the reply a test expected is missing at its next `expect`.
    ///
    /// Take the number from the tester rather than working it out: `effectID(startedBy:)`, or the
    /// `effectID` of a recorded step in `pending`.
    ///
    /// ```swift
    /// tester.send(.start)
    /// tester.expect([.success(.start, 0, 0), .started(by: .start)])
    /// let poller = try #require(tester.effectID(startedBy: .start))
    /// tester.send(.tick, asIfFromEffect: poller)  // at the poller's level of the tree
    /// ```
    public func send(_ input: Input, asIfFromEffect effectID: UInt64) {
        automaton.send(input, asIfFromEffect: effectID)
    }

    /// Runs what is due now on the scheduler.
    public func advance() {
        scheduler.advance()
    }

    /// Moves the virtual clock forward by `duration`, running what comes due, on this thread, before it
    /// returns.
    ///
    /// Effects scheduled on `scheduler` (`delay`, `timer`, `debounce`, ...) have done what came due when
    /// it returns. An async effect sleeping on `scheduler.clock` has not: advancing resumes its task,
    /// which goes on later on Swift's concurrency pool. For those, advance with
    /// `await scheduler.clock.advance(by:)` (it returns once the woken tasks are past their sleep), then
    /// await what the task does, e.g. its `.ended` event through a stream made beforehand
    /// (`automaton.effectEvents.stream()`), before asserting with `expect`.
    public func advance(by duration: Duration) {
        scheduler.advance(by: duration)
    }

    /// Runs everything scheduled, moving the clock as far as needed.
    public func run() {
        scheduler.run()
    }

    /// Lets go of the automaton, so that it is released if nothing else holds it, and its release is
    /// recorded like anything else it does: each running effect's `.cancelled(.released)` step (keyed
    /// ones with their key), in the order the effects started, before `release()` returns (unless
    /// another thread is processing an input then: that thread performs the release when it is done).
    /// Assert them with `expect` as usual; `finish()` then finds no running effect.
    ///
    /// ```swift
    /// tester.release()
    /// tester.expect([.cancelled(.released, key: ConnectionKey.backOff)])
    /// #expect(scheduler.pendingActionCount == 0)  // nothing the effect scheduled is left
    /// ```
    ///
    /// For the automaton to be released, the tester must be the only one to hold it: make it in the
    /// tester's initializer (`AutomatonTester(makeMachine())`) and reach it through `automaton`. If
    /// something else still holds it, nothing is released, and a Swift Testing issue is recorded at
    /// `sourceLocation`. After `release()`, `send` and `automaton` must not be used (a precondition
    /// stops the test); `advance`, `run`, `expect` and `finish` go on. Calling it twice is a
    /// precondition failure too.
    ///
    /// - Returns: whether the automaton was released.
    @discardableResult
    public func release(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        var automaton = held.withCriticalRegion { held in
            defer { held = nil }
            return held
        }
        guard automaton != nil else {
            preconditionFailure(
                "AutomatonTester.release() was called twice: the tester released its automaton already.")
        }
        // The last reference goes here, with no lock held: the automaton's release runs on this thread.
        automaton = nil
        guard watched.withCriticalRegion({ $0.automaton }) == nil else {
            fail(
                "the automaton is still alive after release(): something else holds it (a variable of the "
                    + "test, or an observer or effect that captured it). Make it in the tester's initializer, "
                    + "AutomatonTester(makeMachine()), and reach it through tester.automaton.",
                at: sourceLocation
            )
            return false
        }
        return true
    }

    /// How many inputs `effectID(startedBy:)` remembers an effect for: one per distinct input that
    /// started one. For the package's tests.
    package var startedEffectInputCount: Int {
        started.withCriticalRegion { $0.count }
    }

    /// The number of the effect `input` started last (`EffectEvent.id`), asserted or not, for
    /// `send(_:asIfFromEffect:)`; `nil` if `input` has started no effect since the tester was made.
    /// An effect that waited for its key (`.queue`) counts from its start; one that was dropped or
    /// cancelled before it started does not count. The effect may have ended since.
    public func effectID(startedBy input: Input) -> UInt64? {
        // Copied out first: `Input`'s `==` is user code, never called with a lock held.
        let started = started.withCriticalRegion { $0 }
        return started.last { $0.input == input }?.id
    }

    // MARK: Asserting

    /// What has happened since the last assertion, unasserted. Each effect step carries its effect's
    /// number, `effectID`.
    public var pending: [Step<State, Input>] {
        recorded.withCriticalRegion { $0 }
    }

    /// Every failure reported so far, as text.
    public var failures: [String] {
        reported.withCriticalRegion { $0 }
    }

    /// Asserts that exactly `expected` happened since the last assertion, in this order, and starts
    /// afresh. Effect events are compared by what happened and their key, not by effect number.
    ///
    /// - Returns: whether it held. A failure is recorded as a Swift Testing issue at `sourceLocation`.
    @discardableResult
    public func expect(
        _ expected: [Step<State, Input>],
        _ comment: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let actual = recorded.withCriticalRegion { recorded in
            defer { recorded = [] }
            return recorded
        }
        guard actual != expected else { return true }
        fail(Self.difference(expected: expected, actual: actual, comment: comment), at: sourceLocation)
        return false
    }

    /// Ends the test: fails if anything happened that was not asserted, or if an effect is still
    /// running (pass `skipRunningEffects` to allow that, for example for a timer that never ends).
    ///
    /// - Returns: whether the automaton ended the test clean.
    @discardableResult
    public func finish(skipRunningEffects: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        var clean = true
        let unasserted = recorded.withCriticalRegion { $0 }
        if !unasserted.isEmpty {
            clean = expect([], "unasserted steps at the end of the test", sourceLocation: sourceLocation)
        }
        // A released automaton has no running effect.
        let running = held.withCriticalRegion { $0 }?.runningEffectCount ?? 0
        if !skipRunningEffects, running > 0 {
            fail(
                "\(running) effect\(running == 1 ? " is" : "s are") still running at the end of the test. "
                    + "Cancel them, let them end (advance the scheduler), or call finish(skipRunningEffects: true).",
                at: sourceLocation
            )
            clean = false
        }
        return clean
    }

    func fail(_ message: String, at sourceLocation: SourceLocation) {
        reported.withCriticalRegion { $0.append(message) }
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    }

    /// A line-by-line comparison: `  ` for a step in both, `−` expected but missing, `+` happened but
    /// not expected.
    static func difference(expected: [Step<State, Input>], actual: [Step<State, Input>], comment: String?) -> String {
        lineDifference(
            expected: expected, actual: actual, header: comment ?? "the automaton did something else than expected",
            describe: \.description)
    }
}

/// A weak reference to an automaton, kept under the tester's lock.
private struct WeakAutomaton<State: Sendable, Input: Sendable>: Sendable {
    weak var automaton: Automaton<State, Input>?

    init(_ automaton: Automaton<State, Input>) {
        self.automaton = automaton
    }
}

/// One thing an automaton did: a reply, or an effect's start, end or cancellation; with
/// `AutomatonTester.recordReplies(of:)`, a child's reply or an input forwarded to no running child.
///
/// Effect steps name what happened and the effect's key, not its number, so a test reads as the
/// story of the machine: two steps are equal when they say the same thing, whatever their
/// `effectID`. A step the tester recorded from an effect event still carries the effect's number, in
/// `effectID`, for `AutomatonTester.send(_:asIfFromEffect:)`.
public struct Step<State: Sendable & Equatable, Input: Sendable & Equatable>: Sendable, Equatable,
    CustomStringConvertible
{
    @usableFromInline
    enum Kind: Sendable, Equatable {
        case reply(Reply<State, Input>)
        case effect(EffectEvent<Input>.Kind, key: EffectKey?)
        /// A reply of the child automaton whose effect has this key (`AutomatonTester.recordReplies(of:)`).
        case child(EffectKey, ChildValue)
        /// An input forwarded to the child of this key while none ran: dropped
        /// (`AutomatonTester.recordReplies(of:)`).
        case undelivered(EffectKey, ChildValue)
    }

    let kind: Kind

    /// The number of the effect this step happened to (`EffectEvent.id`), when the tester recorded
    /// it from an effect event: the number `AutomatonTester.send(_:asIfFromEffect:)` takes. `nil` for
    /// a reply, and for a step made to be expected (`.started(by:)`, ...), which names no number.
    /// Equality ignores it.
    public let effectID: UInt64?

    init(_ kind: Kind) {
        self.kind = kind
        effectID = nil
    }

    init(_ event: EffectEvent<Input>) {
        kind = .effect(event.kind, key: event.key)
        effectID = event.id
    }

    /// Whether the two steps say the same thing: the same reply, or the same event of an effect with
    /// the same key. Their `effectID`s are not compared.
    public static func == (lhs: Step, rhs: Step) -> Bool {
        lhs.kind == rhs.kind
    }

    /// A reply.
    public static func reply(_ reply: Reply<State, Input>) -> Step { Step(.reply(reply)) }

    /// A `.success(input, fromState, toState)` reply.
    public static func success(_ input: Input, _ fromState: State, _ toState: State) -> Step {
        Step(.reply(.success(input, fromState, toState)))
    }

    /// A `.failure(input, fromState)` reply.
    public static func failure(_ input: Input, _ fromState: State) -> Step {
        Step(.reply(.failure(input, fromState)))
    }

    /// An un-keyed effect started by `input`.
    public static func started(by input: Input) -> Step { Step(.effect(.started(by: input), key: nil)) }

    /// A keyed effect started by `input`.
    public static func started(by input: Input, key: some Hashable & Sendable) -> Step {
        Step(.effect(.started(by: input), key: EffectKey(key)))
    }

    /// An un-keyed effect ended by itself.
    public static func ended() -> Step { Step(.effect(.ended, key: nil)) }

    /// A keyed effect ended by itself.
    public static func ended(key: some Hashable & Sendable) -> Step {
        Step(.effect(.ended, key: EffectKey(key)))
    }

    /// An un-keyed effect cancelled for `cause`.
    public static func cancelled(_ cause: EffectCancellation<Input>) -> Step {
        Step(.effect(.cancelled(cause), key: nil))
    }

    /// A keyed effect cancelled for `cause`.
    public static func cancelled(_ cause: EffectCancellation<Input>, key: some Hashable & Sendable) -> Step {
        Step(.effect(.cancelled(cause), key: EffectKey(key)))
    }

    /// e.g. `success(connect, disconnected => connecting)` or `effect [connection] cancelled by disconnect`.
    public var description: String {
        switch kind {
        case let .reply(reply):
            return "\(reply)"
        case let .child(key, reply):
            return "child [\(key)] \(reply.description)"
        case let .undelivered(key, input):
            return "child [\(key)] not running: \(input.description) dropped"
        case let .effect(kind, key):
            let name = "effect" + (key.map { " [\($0)]" } ?? "")
            switch kind {
            case let .started(input): return "\(name) started by \(input)"
            case .ended: return "\(name) ended"
            case let .cancelled(cause): return "\(name) \(cause)"
            }
        }
    }
}
