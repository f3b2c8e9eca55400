import Automaton
import AutomatonTesting
import Signals
import Testing

// The README's "Testing effects" section is this file's marked regions, line for line
// (`.ci/check-readme` checks it).

// README-TESTING-EFFECTS-MACHINE-BEGIN
enum ConnectionState: Sendable, Equatable {
    case disconnected, connecting, connected, backingOff
}

enum ConnectionInput: Sendable, Equatable {
    case connect, connected, failed, retry, disconnect, foregrounded
}

enum ConnectionKey: Hashable, Sendable {
    case attempt, backOff
}

/// Connecting and the back-off timer are keyed effects: only their key (`.disconnect`), the
/// automaton's release or its input's interruption cancel them. `.foregrounded` changes nothing.
func makeConnectionManager(
    connect: SignalProducer<ConnectionInput, Never>,
    backOff: SignalProducer<ConnectionInput, Never>
) -> Automaton<ConnectionState, ConnectionInput> {
    Automaton(
        state: .disconnected, strategy: .latest,
        table: [
            .connect | .disconnected => .connecting | connect.keyed(ConnectionKey.attempt, .latest),
            .connected | .connecting => .connected,
            .failed | .connecting => .backingOff | backOff.keyed(ConnectionKey.backOff, .latest),
            .retry | .backingOff => .connecting | connect.keyed(ConnectionKey.attempt, .latest),
            .foregrounded | { $0 },
            .disconnect | any => .disconnected | .cancel(ConnectionKey.attempt, ConnectionKey.backOff),
        ])
}
// README-TESTING-EFFECTS-MACHINE-END

// README-TESTING-EFFECTS-TESTS-BEGIN
// Swift Testing makes a new instance of the suite for each test, so each test has a scheduler of its own.
@Suite("README: testing effects with AutomatonTester")
struct ConnectionManagerTests {
    let scheduler = TestScheduler()
    /// Every attempt fails after 1 s; the back-off timer fires after 30 s.
    var connect: SignalProducer<ConnectionInput, Never> {
        SignalProducer(value: .failed).delay(.seconds(1), on: scheduler)
    }
    var backOff: SignalProducer<ConnectionInput, Never> {
        SignalProducer(value: .retry).delay(.seconds(30), on: scheduler)
    }

    @Test("disconnecting cancels an in-flight connect, and a back-off timer")
    func disconnectCancels() {
        let tester = AutomatonTester(makeConnectionManager(connect: connect, backOff: backOff), scheduler: scheduler)

        tester.send(.connect)
        tester.send(.disconnect)
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: ConnectionKey.attempt),
            .cancelled(.cancelled(by: .disconnect), key: ConnectionKey.attempt),
            .success(.disconnect, .connecting, .disconnected),
        ])
        #expect(scheduler.pendingActionCount == 0)  // the attempt's delivery is gone

        tester.send(.connect)
        tester.advance(by: .seconds(1))  // the attempt fails: back off
        tester.send(.disconnect)
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: ConnectionKey.attempt),
            .success(.failed, .connecting, .backingOff),
            .started(by: .failed, key: ConnectionKey.backOff),
            .ended(key: ConnectionKey.attempt),
            .cancelled(.cancelled(by: .disconnect), key: ConnectionKey.backOff),
            .success(.disconnect, .backingOff, .disconnected),
        ])
        #expect(scheduler.pendingActionCount == 0)  // so is the timer
        tester.finish()  // fails if an effect still runs
    }

    @Test("an unrelated input cancels no keyed effect, even under .latest")
    func unrelatedInputCancelsNothing() {
        let tester = AutomatonTester(makeConnectionManager(connect: connect, backOff: backOff), scheduler: scheduler)

        tester.send(.connect)
        tester.send(.foregrounded)
        tester.advance(by: .seconds(1))  // the attempt still runs, and fails
        tester.send(.foregrounded)
        tester.advance(by: .seconds(30))  // the timer still runs, and fires
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: ConnectionKey.attempt),
            .success(.foregrounded, .connecting, .connecting),
            .success(.failed, .connecting, .backingOff),
            .started(by: .failed, key: ConnectionKey.backOff),
            .ended(key: ConnectionKey.attempt),
            .success(.foregrounded, .backingOff, .backingOff),
            .success(.retry, .backingOff, .connecting),
            .started(by: .retry, key: ConnectionKey.attempt),
            .ended(key: ConnectionKey.backOff),
        ])
        tester.send(.disconnect)
        tester.expect([
            .cancelled(.cancelled(by: .disconnect), key: ConnectionKey.attempt),
            .success(.disconnect, .connecting, .disconnected),
        ])
        tester.finish()
    }

    @Test("releasing the manager cancels the back-off timer, and nothing it scheduled is left")
    func releaseCancels() {
        let tester = AutomatonTester(makeConnectionManager(connect: connect, backOff: backOff), scheduler: scheduler)

        tester.send(.connect)
        tester.advance(by: .seconds(1))  // the attempt fails: back off
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: ConnectionKey.attempt),
            .success(.failed, .connecting, .backingOff),
            .started(by: .failed, key: ConnectionKey.backOff),
            .ended(key: ConnectionKey.attempt),
        ])
        tester.release()  // the tester lets go of the automaton, its only owner: it is released
        tester.expect([.cancelled(.released, key: ConnectionKey.backOff)])
        #expect(scheduler.pendingActionCount == 0)  // the timer is gone
        tester.finish()
    }
}
// README-TESTING-EFFECTS-TESTS-END
