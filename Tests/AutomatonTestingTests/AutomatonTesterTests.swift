import Automaton
import AutomatonTesting
import Signals
import Testing

private enum Connection: Sendable, Equatable {
    case disconnected, connecting, connected, backingOff
}

private enum Event: Sendable, Equatable {
    case connect, connected, failed, retry, disconnect, foregrounded
}

private enum Keys: Hashable, Sendable {
    case connection, backOff
}

/// A connection manager: connecting and backing off are keyed effects; `.disconnect` cancels both;
/// `.foregrounded` is an unrelated input.
private func makeConnectionManager(scheduler: TestScheduler, connectSucceeds: Bool = true) -> Automaton<
    Connection, Event
> {
    let connect = SignalProducer<Event, Never>(value: connectSucceeds ? .connected : .failed)
        .delay(.seconds(1), on: scheduler)
    let backOff = SignalProducer<Event, Never>(value: .retry).delay(.seconds(30), on: scheduler)
    return Automaton(
        state: .disconnected,
        mapping: { (state: Connection, event: Event) in
            switch (state, event) {
            case (.disconnected, .connect), (.backingOff, .retry):
                return (.connecting, connect.keyed(Keys.connection))
            case (.connecting, .connected): return (.connected, .empty)
            case (.connecting, .failed): return (.backingOff, backOff.keyed(Keys.backOff))
            case (_, .disconnect): return (.disconnected, .cancel(Keys.connection, Keys.backOff))
            case (_, .foregrounded): return (state, .empty)
            default: return nil
            }
        }, strategy: .latest)
}

private enum Poll: Sendable, Equatable, CustomStringConvertible {
    case start, tick

    var description: String { self == .start ? "start" : "tick" }
}

/// Under `.latest`: `.start` starts an effect that runs until replaced; each `.tick` counts and starts an
/// effect that ends after a second.
private func makePoller(scheduler: TestScheduler) -> Automaton<Int, Poll> {
    let runs = SignalProducer<Poll, Never> { observer, lifetime in
        lifetime.observeEnded { withExtendedLifetime(observer) {} }
    }
    let tick = SignalProducer<Poll, Never>.empty.delay(.seconds(1), on: scheduler)
    return Automaton(
        state: 0,
        mapping: { (count: Int, input: Poll) in
            switch input {
            case .start: return (count, runs)
            case .tick: return (count + 1, tick)
            }
        }, strategy: .latest)
}

@Suite("AutomatonTester: exhaustive automaton tests")
struct AutomatonTesterTests {
    @Test("a story that asserts every reply and effect event passes")
    func wholeStoryPasses() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(makeConnectionManager(scheduler: scheduler), scheduler: scheduler)
        tester.send(.connect)
        #expect(
            tester.expect([
                .success(.connect, .disconnected, .connecting),
                .started(by: .connect, key: Keys.connection),
            ]))
        tester.send(.foregrounded)
        tester.advance(by: .seconds(1))
        #expect(
            tester.expect([
                .success(.foregrounded, .connecting, .connecting),
                .success(.connected, .connecting, .connected),
                .ended(key: Keys.connection),
            ]))
        #expect(tester.finish())
        #expect(tester.failures == [])
    }

    @Test("an unasserted reply fails the next assertion, with a line-by-line comparison")
    func unassertedReplyFails() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(makeConnectionManager(scheduler: scheduler), scheduler: scheduler)
        tester.send(.connect)
        tester.send(.foregrounded)
        withKnownIssue {
            tester.expect([
                .success(.connect, .disconnected, .connecting),
                .started(by: .connect, key: Keys.connection),
            ])
        }
        #expect(
            tester.failures == [
                """
                the automaton did something else than expected
                (− expected, + actual)
                  success(connect, disconnected => connecting)
                  effect [connection] started by connect
                + success(foregrounded, connecting => connecting)
                """
            ])
        tester.send(.disconnect)
        tester.expect([
            .cancelled(.cancelled(by: .disconnect), key: Keys.connection),
            .success(.disconnect, .connecting, .disconnected),
        ])
        #expect(tester.finish())
    }

    @Test("an effect still running at the end fails finish(), unless skipped")
    func runningEffectFailsFinish() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(makeConnectionManager(scheduler: scheduler), scheduler: scheduler)
        tester.send(.connect)
        tester.expect([.success(.connect, .disconnected, .connecting), .started(by: .connect, key: Keys.connection)])
        withKnownIssue {
            tester.finish()
        }
        #expect(tester.failures.count == 1)
        #expect(tester.failures.first?.hasPrefix("1 effect is still running at the end of the test") == true)
        #expect(tester.finish(skipRunningEffects: true))
    }

    @Test("unasserted steps at the end fail finish()")
    func unassertedAtEndFails() {
        let tester = AutomatonTester(makeConnectionManager(scheduler: TestScheduler()))
        tester.send(.retry)
        withKnownIssue {
            tester.finish()
        }
        #expect(tester.failures.first?.contains("+ failure(retry, disconnected)") == true)
    }

    @Test("proves that .disconnect cancels the back-off timer and that .foregrounded does not")
    func disconnectCancelsBackOff() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(
            makeConnectionManager(scheduler: scheduler, connectSucceeds: false), scheduler: scheduler)
        tester.send(.connect)
        tester.advance(by: .seconds(1))
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: Keys.connection),
            .success(.failed, .connecting, .backingOff),
            .started(by: .failed, key: Keys.backOff),
            .ended(key: Keys.connection),
        ])
        tester.send(.foregrounded)
        tester.expect([.success(.foregrounded, .backingOff, .backingOff)])
        #expect(scheduler.pendingActionCount == 2)  // the back-off's delayed value and completion survived
        tester.send(.disconnect)
        tester.expect([
            .cancelled(.cancelled(by: .disconnect), key: Keys.backOff),
            .success(.disconnect, .backingOff, .disconnected),
        ])
        #expect(scheduler.pendingActionCount == 0)
        tester.finish()
    }

    @Test("send(_:asIfFromEffect:) processes the input at that effect's level of the .latest tree")
    func sendAsIfFromEffect() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(makePoller(scheduler: scheduler), scheduler: scheduler)
        tester.send(.start)
        tester.expect([.success(.start, 0, 0), .started(by: .start)])
        // From effect 0, a tick replaces only what effect 0's previous tick started, never effect 0.
        tester.send(.tick, asIfFromEffect: 0)
        tester.send(.tick, asIfFromEffect: 0)
        tester.expect([
            .success(.tick, 0, 1),
            .started(by: .tick),
            .cancelled(.replaced(by: .tick)),
            .success(.tick, 1, 2),
            .started(by: .tick),
        ])
        #expect(tester.automaton.runningEffectCount == 2)
        // From outside, the same input replaces effect 0 and what it started.
        tester.send(.tick)
        tester.expect([
            .cancelled(.replaced(by: .tick)),
            .cancelled(.replaced(by: .tick)),
            .success(.tick, 2, 3),
            .started(by: .tick),
        ])
        tester.advance(by: .seconds(1))
        tester.expect([.ended()])
        #expect(tester.finish())
        #expect(tester.failures == [])
    }

    @Test("send(_:asIfFromEffect:) drops the input of an effect that is not running; the next assertion says so")
    func sendAsIfFromEndedEffect() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(makePoller(scheduler: scheduler), scheduler: scheduler)
        tester.send(.tick)
        tester.advance(by: .seconds(1))
        tester.expect([.success(.tick, 0, 1), .started(by: .tick), .ended()])
        tester.send(.tick, asIfFromEffect: 0)  // effect 0 has ended
        tester.send(.tick, asIfFromEffect: 7)  // there is no effect 7
        #expect(tester.pending == [])
        #expect(tester.automaton.state.value == 1)
        #expect(tester.failures == [], "dropping is not itself a failure")
        withKnownIssue {
            tester.expect([.success(.tick, 1, 2), .started(by: .tick)])
        }
        #expect(
            tester.failures == [
                """
                the automaton did something else than expected
                (− expected, + actual)
                − success(tick, 1 => 2)
                − effect started by tick
                """
            ])
        #expect(tester.finish())
    }

    @Test("send(_:asIfFromEffect:) drops the input of a .queue effect that waits for its key: it has not started")
    func sendAsIfFromWaitingEffect() {
        let scheduler = TestScheduler()
        // Effect 0 runs with key `connection`; effect 1 waits behind it. An input sent as if from effect
        // 1 is dropped: were it processed, its effect would hang in the `.latest` tree below a record
        // that the `.cancel` below forgets (and frees) without its subtree.
        let keyed = SignalProducer<Event, Never>(value: .connected).delay(.seconds(10), on: scheduler)
            .keyed(Keys.connection, .queue)
        let unkeyed = SignalProducer<Event, Never>(value: .connected).delay(.seconds(10), on: scheduler)
        let automaton = Automaton(
            state: Connection.disconnected,
            mapping: { (state: Connection, event: Event) in
                switch event {
                case .connect: return (.connecting, keyed)
                case .retry: return (.backingOff, unkeyed)
                case .disconnect: return (.disconnected, .cancel(Keys.connection))
                default: return nil
                }
            }, strategy: .latest)
        let tester = AutomatonTester(automaton, scheduler: scheduler)
        tester.send(.connect)
        tester.send(.connect)
        tester.expect([
            .success(.connect, .disconnected, .connecting), .started(by: .connect, key: Keys.connection),
            .success(.connect, .connecting, .connecting),
        ])
        tester.send(.retry, asIfFromEffect: 1)  // effect 1 waits for effect 0
        #expect(tester.pending == [])
        #expect(tester.automaton.state.value == .connecting)
        tester.send(.disconnect)
        tester.expect([
            .cancelled(.cancelled(by: .disconnect), key: Keys.connection),
            .cancelled(.cancelled(by: .disconnect), key: Keys.connection),
            .success(.disconnect, .connecting, .disconnected),
        ])
        tester.advance(by: .seconds(10))
        #expect(tester.finish())
        #expect(tester.failures == [])
    }

    @Test("effectID(startedBy:) remembers one effect per distinct input, however many effects start")
    func startedEffectsBounded() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(makePoller(scheduler: scheduler), scheduler: scheduler)
        for _ in 0..<100 { tester.send(.tick) }
        tester.send(.start)
        #expect(tester.startedEffectInputCount == 2)
        #expect(tester.effectID(startedBy: .tick) == 99)
        #expect(tester.effectID(startedBy: .start) == 100)
    }

    @Test("a started effect's number is reachable: effectID(startedBy:), and the recorded steps' effectID")
    func effectIDs() throws {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(makePoller(scheduler: scheduler), scheduler: scheduler)
        tester.send(.tick)  // effect 0
        tester.send(.start)  // replaces effect 0; effect 1
        #expect(tester.pending.map(\.effectID) == [nil, 0, 0, nil, 1])
        #expect(tester.pending.last == .started(by: .start), "equality ignores the number")
        #expect(tester.effectID(startedBy: .tick) == 0)
        #expect(tester.effectID(startedBy: .start) == 1)
        tester.expect([
            .success(.tick, 0, 1),
            .started(by: .tick),
            .cancelled(.replaced(by: .start)),
            .success(.start, 1, 1),
            .started(by: .start),
        ])
        #expect(tester.effectID(startedBy: .start) == 1, "asserted steps keep their numbers here")

        let poller = try #require(tester.effectID(startedBy: .start))
        tester.send(.tick, asIfFromEffect: poller)
        tester.send(.tick, asIfFromEffect: poller)
        #expect(tester.pending.map(\.effectID) == [nil, 2, 2, nil, 3])
        #expect(tester.effectID(startedBy: .tick) == 3, "the last effect the input started")
        tester.expect([
            .success(.tick, 1, 2),
            .started(by: .tick),
            .cancelled(.replaced(by: .tick)),
            .success(.tick, 2, 3),
            .started(by: .tick),
        ])
        tester.send(.tick)  // from outside: replaces the poller and what it started
        tester.advance(by: .seconds(1))
        tester.expect([
            .cancelled(.replaced(by: .tick)),
            .cancelled(.replaced(by: .tick)),
            .success(.tick, 3, 4),
            .started(by: .tick),
            .ended(),
        ])
        #expect(tester.finish())
        #expect(AutomatonTester(makePoller(scheduler: scheduler)).effectID(startedBy: .start) == nil)
    }

    @Test("release() lets go of the automaton: the cancellations of its release are steps, in start order")
    func releaseRecordsCancellations() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(makePoller(scheduler: scheduler), scheduler: scheduler)
        tester.send(.start)  // effect 0, runs until cancelled
        tester.send(.tick, asIfFromEffect: 0)  // effect 1, ends after a second
        tester.expect([.success(.start, 0, 0), .started(by: .start), .success(.tick, 0, 1), .started(by: .tick)])
        #expect(scheduler.pendingActionCount == 1)

        #expect(tester.release())
        #expect(tester.pending.map(\.effectID) == [0, 1])
        tester.expect([.cancelled(.released), .cancelled(.released)])
        #expect(scheduler.pendingActionCount == 0)  // the tick's delay is gone
        tester.run()
        #expect(tester.finish())
        #expect(tester.failures == [])

        // A keyed effect, with its key.
        let connection = AutomatonTester(makeConnectionManager(scheduler: scheduler), scheduler: scheduler)
        connection.send(.connect)
        connection.expect([
            .success(.connect, .disconnected, .connecting), .started(by: .connect, key: Keys.connection),
        ])
        connection.release()
        connection.expect([.cancelled(.released, key: Keys.connection)])
        #expect(connection.finish())
    }

    @Test("release() with the automaton held elsewhere releases nothing, and says so")
    func releaseWhileHeldElsewhere() {
        let scheduler = TestScheduler()
        let automaton = makeConnectionManager(scheduler: scheduler)
        let tester = AutomatonTester(automaton, scheduler: scheduler)
        tester.send(.connect)
        tester.expect([.success(.connect, .disconnected, .connecting), .started(by: .connect, key: Keys.connection)])
        withKnownIssue {
            #expect(!tester.release())
        }
        #expect(tester.failures.count == 1)
        #expect(tester.failures.first?.hasPrefix("the automaton is still alive after release()") == true)
        #expect(tester.pending == [])
        #expect(automaton.runningEffectCount == 1)
        automaton.send(.disconnect)
        tester.expect([
            .cancelled(.cancelled(by: .disconnect), key: Keys.connection),
            .success(.disconnect, .connecting, .disconnected),
        ])
    }

    @Test("a failed expect or finish is reported at the caller's file and line")
    func failureSourceLocation() {
        let tester = AutomatonTester(makeConnectionManager(scheduler: TestScheduler()))
        tester.send(.retry)
        let expectLine = #line + 2
        withKnownIssue {
            tester.expect([])
        } matching: { issue in
            issue.sourceLocation?.fileID == #fileID && issue.sourceLocation?.line == expectLine
        }
        tester.send(.retry)
        let finishLine = #line + 2
        withKnownIssue {
            tester.finish()
        } matching: { issue in
            issue.sourceLocation?.fileID == #fileID && issue.sourceLocation?.line == finishLine
        }
        #expect(tester.failures.count == 2)
    }
}

@Suite("TestRecorder: recording any stream")
struct TestRecorderTests {
    @Test("records a producer's events with the virtual time of each")
    func recordsTimedEvents() {
        let scheduler = TestScheduler()
        let recorder = TestRecorder(
            starting: SignalProducer<Int, Never>(values: 1, 2).delay(.seconds(2), on: scheduler), scheduler: scheduler)
        scheduler.run()
        #expect(
            recorder.timedEvents == [
                RecordedEvent(.value(1), at: .seconds(2)),
                RecordedEvent(.value(2), at: .seconds(2)),
                RecordedEvent(.completed, at: .seconds(2)),
            ])
        #expect(recorder.values == [1, 2])
        #expect(recorder.isTerminated)
    }

    @Test("records a signal until disposed, and disposing a producer recording interrupts its run")
    func disposeStops() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = TestRecorder(signal)
        input.send(value: 1)
        recorder.dispose()
        input.send(value: 2)
        #expect(recorder.events == [.value(1)])

        let scheduler = TestScheduler()
        let run = TestRecorder(
            starting: SignalProducer<Duration, Never>.timer(interval: .seconds(1), on: scheduler).map { _ in 0 },
            scheduler: scheduler)
        scheduler.advance(by: .seconds(2))
        run.dispose()
        #expect(
            run.timedEvents == [
                RecordedEvent(.value(0), at: .seconds(1)),
                RecordedEvent(.value(0), at: .seconds(2)),
                RecordedEvent(.interrupted, at: .seconds(2)),
            ])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("expect checks the events since the last assertion, in order; expectNothingMore that none came")
    func expectPasses() {
        let scheduler = TestScheduler()
        let recorder = TestRecorder(
            starting: SignalProducer<Int, Never>(values: 1, 2).concat(
                SignalProducer(value: 3).delay(.seconds(1), on: scheduler)),
            scheduler: scheduler)
        #expect(recorder.expect([.value(1), .value(2)]))
        #expect(recorder.expectNothingMore())
        scheduler.run()
        #expect(
            recorder.expect(timed: [
                RecordedEvent(.value(3), at: .seconds(1)), RecordedEvent(.completed, at: .seconds(1)),
            ]))
        #expect(recorder.expectNothingMore())
        #expect(recorder.failures == [])
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed], "assertions forget nothing")
    }

    @Test("a wrong, missing or extra event fails expect, with a line-by-line comparison, and it starts afresh")
    func expectFails() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = TestRecorder(signal)
        input.send(value: 1)
        input.send(value: 3)
        let expectLine = #line + 2
        withKnownIssue {
            #expect(!recorder.expect([.value(1), .value(2)]))
        } matching: { issue in
            issue.sourceLocation?.fileID == #fileID && issue.sourceLocation?.line == expectLine
        }
        input.send(value: 4)
        input.sendCompleted()
        withKnownIssue {
            recorder.expectNothingMore()
        }
        #expect(recorder.expectNothingMore(), "a failed assertion also covers what it saw")
        #expect(
            recorder.failures == [
                """
                the stream sent something else than expected
                (− expected, + actual)
                  value(1)
                − value(2)
                + value(3)
                """,
                """
                the stream sent events after the last expectation
                (− expected, + actual)
                + value(4)
                + completed
                """,
            ])
    }

    @Test("expect(timed:) fails when an event came at another time")
    func expectTimedFails() {
        let scheduler = TestScheduler()
        let recorder = TestRecorder(
            starting: SignalProducer<Int, Never>(value: 1).delay(.seconds(2), on: scheduler), scheduler: scheduler)
        scheduler.run()
        withKnownIssue {
            recorder.expect(
                timed: [RecordedEvent(.value(1), at: .seconds(1)), RecordedEvent(.completed, at: .seconds(2))],
                "the value is late")
        }
        #expect(
            recorder.failures == [
                """
                the value is late
                (− expected, + actual)
                − value(1) @ 1.0 seconds
                + value(1) @ 2.0 seconds
                  completed @ 2.0 seconds
                """
            ])
    }
}
