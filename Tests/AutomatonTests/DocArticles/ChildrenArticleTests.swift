import Automaton
import AutomatonTesting
import Signals
import Testing

// The code of the article "Machines made of machines" (Sources/Automaton/Automaton.docc/MachinesMadeOfMachines.md)
// and of the README's section of that name, verbatim between the markers (checked by
// .ci/check-docc-snippets and .ci/check-readme).

// DOCC-CHILDREN-VERIFICATION-BEGIN
// README-CHILDREN-VERIFICATION-BEGIN
enum Verification: Sendable, Equatable { case waiting, accepted, rejected }
enum VerificationInput: Sendable, Equatable { case enter(String) }

/// The two-factor machine: the right code accepts, a wrong one rejects.
func makeVerification(code: String) -> Automaton<Verification, VerificationInput> {
    Automaton(state: .waiting) { state, input in
        guard state == .waiting, case let .enter(entered) = input else { return nil }
        return entered == code ? .accepted : .rejected
    }
}
// README-CHILDREN-VERIFICATION-END
// DOCC-CHILDREN-VERIFICATION-END

// DOCC-CHILDREN-SIGN-IN-BEGIN
// README-CHILDREN-SIGN-IN-BEGIN
enum SignIn: Sendable, Equatable { case signedOut, verifying, signedIn }
enum SignInInput: Sendable, Equatable {
    case submit, code(String), verified, refused, cancel
    var code: String? { if case let .code(code) = self { code } else { nil } }
}

/// What the sign-in machine makes of a reply of its child: the verdict, as one of its own inputs.
@Sendable func verdict(_ reply: Reply<Verification, VerificationInput>) -> SignInInput? {
    switch reply.toState {
    case .accepted?: .verified
    case .rejected?: .refused
    default: nil
    }
}

/// The sign-in machine hosts one two-factor machine while it is verifying.
func makeSignIn(_ twoFactor: ChildAutomaton<Verification, VerificationInput>) -> Automaton<SignIn, SignInInput> {
    Automaton(
        state: .signedOut,
        table: [
            .submit | .signedOut => .verifying | twoFactor.start(replies: verdict),
            \.code | { state, _ in state == .verifying ? .verifying : nil } | { _, code in
                twoFactor.send(.enter(code))
            },
            .verified | .verifying => .signedIn | twoFactor.stop(),
            .refused | .verifying => .signedOut | twoFactor.stop(),
            .cancel | .verifying => .signedOut | twoFactor.stop(),
        ])
}
// README-CHILDREN-SIGN-IN-END
// DOCC-CHILDREN-SIGN-IN-END

// DOCC-CHILDREN-TRANSFER-BEGIN
enum Transfer: Sendable, Equatable { case running(chunks: Int), paused(chunks: Int), done }
enum TransferInput: Sendable, Equatable { case chunk, pause, resume }

/// One download: three chunks finish it; it can pause and resume.
func makeTransfer() -> Automaton<Transfer, TransferInput> {
    Automaton(state: .running(chunks: 0)) { state, input in
        switch (state, input) {
        case let (.running(chunks), .chunk): return chunks == 2 ? .done : .running(chunks: chunks + 1)
        case let (.running(chunks), .pause): return .paused(chunks: chunks)
        case let (.paused(chunks), .resume): return .running(chunks: chunks)
        default: return nil
        }
    }
}
// DOCC-CHILDREN-TRANSFER-END

// DOCC-CHILDREN-DOWNLOADS-BEGIN
// README-CHILDREN-DOWNLOADS-BEGIN
enum DownloadsInput: Sendable, Equatable {
    case add(String), chunk(String), pause(String), resume(String), remove(String), finished(String)
    var added: String? { if case let .add(id) = self { id } else { nil } }
    var chunkOf: String? { if case let .chunk(id) = self { id } else { nil } }
    var paused: String? { if case let .pause(id) = self { id } else { nil } }
    var resumed: String? { if case let .resume(id) = self { id } else { nil } }
    var removed: String? { if case let .remove(id) = self { id } else { nil } }
    var finishedID: String? { if case let .finished(id) = self { id } else { nil } }
}

/// The download manager: one transfer per id, added, forwarded to and removed by its rows. Its state
/// counts the finished downloads.
func makeDownloads(_ transfers: ChildAutomata<String, Transfer, TransferInput>) -> Automaton<Int, DownloadsInput> {
    Automaton(
        state: 0,
        table: [
            \.added | { count, _ in count } | { _, id in
                transfers.start(id, states: { state in state == .done ? .finished(id) : nil })
            },
            \.chunkOf | { count, _ in count } | { _, id in transfers.send(.chunk, to: id) },
            \.paused | { count, _ in count } | { _, id in transfers.send(.pause, to: id) },
            \.resumed | { count, _ in count } | { _, id in transfers.send(.resume, to: id) },
            \.removed | { count, _ in count } | { _, id in transfers.remove(id) },
            \.finishedID | { count, _ in count + 1 } | { _, id in transfers.remove(id) },
        ])
}
// README-CHILDREN-DOWNLOADS-END
// DOCC-CHILDREN-DOWNLOADS-END

// DOCC-CHILDREN-ANSWERS-BEGIN
enum CheckedInput: Sendable, Equatable {
    case add(String), pause(String), refused(String)
    var added: String? { if case let .add(id) = self { id } else { nil } }
    var paused: String? { if case let .pause(id) = self { id } else { nil } }
    var refusedID: String? { if case let .refused(id) = self { id } else { nil } }
}

/// A manager that learns what became of each pause: its state counts the pauses that did not happen.
func makeCheckedDownloads(_ transfers: ChildAutomata<String, Transfer, TransferInput>) -> Automaton<
    Int, CheckedInput
> {
    Automaton(
        state: 0,
        table: [
            \.added | { count, _ in count } | { _, id in transfers.start(id) },
            \.paused | { count, _ in count } | { _, id in
                transfers.send(.pause, to: id) { answer in answer.isSuccess ? nil : .refused(id) }
            },
            \.refusedID | { count, _ in count + 1 },
        ])
}
// DOCC-CHILDREN-ANSWERS-END

// DOCC-CHILDREN-UNNAMED-BEGIN
/// A two-factor machine that reads the codes from a keypad's signal, not from its parent.
func makeKeypadVerification(code: String, keypad: Signal<VerificationInput, Never>) -> Automaton<
    Verification, VerificationInput
> {
    Automaton(state: .waiting, input: keypad) { state, input in
        guard state == .waiting, case let .enter(entered) = input else { return nil }
        return entered == code ? .accepted : .rejected
    }
}

enum Quiz: Sendable, Equatable { case idle, asking, passed, failed }
enum QuizInput: Sendable, Equatable { case ask, passed, failed }

/// The quiz hosts an unnamed two-factor child while it asks, and hears each state the child enters.
func makeQuiz(keypad: Signal<VerificationInput, Never>) -> Automaton<Quiz, QuizInput> {
    Automaton(
        state: .idle,
        table: [
            .ask | .idle => .asking
                | .child(
                    { makeKeypadVerification(code: "42", keypad: keypad) },
                    states: { state in state == .accepted ? .passed : .failed }),
            .passed | .asking => .passed,
            .failed | .asking => .failed,
        ])
}
// DOCC-CHILDREN-UNNAMED-END

@Suite("Article: Machines made of machines")
struct ChildrenArticleTests {

    @Test("the sign-in machine hosts a two-factor machine: the child's reply comes before the parent's")
    func signIn() {
        // DOCC-CHILDREN-SIGN-IN-TEST-BEGIN
        // README-CHILDREN-SIGN-IN-TEST-BEGIN
        let twoFactor = ChildAutomaton("twoFactor") { makeVerification(code: "123") }
        let tester = AutomatonTester(makeSignIn(twoFactor))
        tester.recordReplies(of: twoFactor)  // before the child starts

        tester.send(.submit)
        tester.expect([
            .success(.submit, .signedOut, .verifying),
            .started(by: .submit, key: twoFactor.key),
        ])
        #expect(twoFactor.state(in: tester.automaton) == .waiting)

        tester.send(.code("123"))
        tester.expect([
            .success(.code("123"), .verifying, .verifying),  // the parent forwards the code, after its reply
            .child(twoFactor, .success(.enter("123"), .waiting, .accepted)),
            .cancelled(.cancelled(by: .verified), key: twoFactor.key),  // `.verified` stops the child
            .success(.verified, .verifying, .signedIn),
        ])
        #expect(twoFactor.current(in: tester.automaton) == nil)
        tester.finish()
        // README-CHILDREN-SIGN-IN-TEST-END
        // DOCC-CHILDREN-SIGN-IN-TEST-END
    }

    @Test("a wrong code is refused, and a code sent while no child runs is dropped")
    func wrongCodeAndNoChild() {
        // DOCC-CHILDREN-WRONG-CODE-BEGIN
        let twoFactor = ChildAutomaton("twoFactor") { makeVerification(code: "123") }
        let tester = AutomatonTester(makeSignIn(twoFactor))
        tester.recordReplies(of: twoFactor)
        tester.send(.submit)
        tester.send(.code("999"))
        tester.send(.code("123"))  // the parent is signed out again: no row takes it
        tester.expect([
            .success(.submit, .signedOut, .verifying),
            .started(by: .submit, key: twoFactor.key),
            .success(.code("999"), .verifying, .verifying),
            .child(twoFactor, .success(.enter("999"), .waiting, .rejected)),
            .cancelled(.cancelled(by: .refused), key: twoFactor.key),
            .success(.refused, .verifying, .signedOut),
            .failure(.code("123"), .signedOut),
        ])
        tester.finish()
        // DOCC-CHILDREN-WRONG-CODE-END
    }

    @Test("the download manager adds, forwards to, lists and removes its transfers by id")
    func downloads() {
        // DOCC-CHILDREN-DOWNLOADS-TEST-BEGIN
        let transfers = ChildAutomata<String, Transfer, TransferInput>("transfers") { _ in makeTransfer() }
        let tester = AutomatonTester(makeDownloads(transfers))
        tester.recordReplies(of: transfers)
        tester.send(.add("a.zip"))
        tester.send(.add("b.zip"))
        tester.send(.pause("b.zip"))
        tester.expect([
            .success(.add("a.zip"), 0, 0),
            .started(by: .add("a.zip"), key: transfers.key("a.zip")),
            .success(.add("b.zip"), 0, 0),
            .started(by: .add("b.zip"), key: transfers.key("b.zip")),
            .success(.pause("b.zip"), 0, 0),
            .child(transfers, "b.zip", .success(.pause, .running(chunks: 0), .paused(chunks: 0))),
        ])
        #expect(transfers.ids(in: tester.automaton) == ["a.zip", "b.zip"])
        #expect(transfers.state(of: "b.zip", in: tester.automaton) == .paused(chunks: 0))
        // DOCC-CHILDREN-DOWNLOADS-TEST-END

        // DOCC-CHILDREN-DOWNLOADS-FINISH-BEGIN
        for _ in 0..<3 { tester.send(.chunk("a.zip")) }
        tester.send(.remove("b.zip"))
        tester.send(.pause("b.zip"))  // no transfer b.zip runs: dropped, and recorded
        tester.expect([
            .success(.chunk("a.zip"), 0, 0),
            .child(transfers, "a.zip", .success(.chunk, .running(chunks: 0), .running(chunks: 1))),
            .success(.chunk("a.zip"), 0, 0),
            .child(transfers, "a.zip", .success(.chunk, .running(chunks: 1), .running(chunks: 2))),
            .success(.chunk("a.zip"), 0, 0),
            .child(transfers, "a.zip", .success(.chunk, .running(chunks: 2), .done)),
            .cancelled(.cancelled(by: .finished("a.zip")), key: transfers.key("a.zip")),
            .success(.finished("a.zip"), 0, 1),
            .cancelled(.cancelled(by: .remove("b.zip")), key: transfers.key("b.zip")),
            .success(.remove("b.zip"), 1, 1),
            .success(.pause("b.zip"), 1, 1),
            .undelivered(.pause, to: transfers, "b.zip"),
        ])
        #expect(transfers.ids(in: tester.automaton).isEmpty)
        tester.finish()
        // DOCC-CHILDREN-DOWNLOADS-FINISH-END
    }

    @Test("a view lists the transfers as they are added and removed, without polling")
    func watchingTheChildren() {
        // DOCC-CHILDREN-LIVE-IDS-BEGIN
        let transfers = ChildAutomata<String, Transfer, TransferInput>("transfers") { _ in makeTransfer() }
        let manager = makeDownloads(transfers)
        let listed = MutableProperty<[[String]]>([])
        transfers.liveIDs(in: manager).producer.startWithValues { ids in listed.modify { $0.append(ids) } }
        manager.send(.add("a.zip"))
        manager.send(.add("b.zip"))
        manager.send(.remove("a.zip"))
        #expect(listed.value == [[], ["a.zip"], ["a.zip", "b.zip"], ["b.zip"]])
        // DOCC-CHILDREN-LIVE-IDS-END
    }

    @Test("the manager learns that a transfer refused a pause, and that no transfer ran")
    func answers() {
        // DOCC-CHILDREN-ANSWERS-TEST-BEGIN
        let transfers = ChildAutomata<String, Transfer, TransferInput>("transfers") { _ in makeTransfer() }
        let tester = AutomatonTester(makeCheckedDownloads(transfers))
        tester.recordReplies(of: transfers)
        tester.send(.add("a.zip"))
        tester.send(.pause("a.zip"))
        tester.send(.pause("a.zip"))  // paused already: refused
        tester.send(.pause("b.zip"))  // no transfer b.zip runs
        tester.expect([
            .success(.add("a.zip"), 0, 0),
            .started(by: .add("a.zip"), key: transfers.key("a.zip")),
            .success(.pause("a.zip"), 0, 0),
            .started(by: .pause("a.zip")),  // the answered forward is an effect of the manager
            .child(transfers, "a.zip", .success(.pause, .running(chunks: 0), .paused(chunks: 0))),
            .ended(),  // answered: accepted, nothing sent back
            .success(.pause("a.zip"), 0, 0),
            .started(by: .pause("a.zip")),
            .child(transfers, "a.zip", .failure(.pause, .paused(chunks: 0))),
            .ended(),
            .success(.refused("a.zip"), 0, 1),
            .success(.pause("b.zip"), 1, 1),
            .started(by: .pause("b.zip")),
            .ended(),  // answered at once: no child
            .success(.refused("b.zip"), 1, 2),
        ])
        tester.finish(skipRunningEffects: true)  // a.zip still runs
        // DOCC-CHILDREN-ANSWERS-TEST-END
    }

    @Test("an unnamed child tells its parent each state it enters, and ends when its replies end")
    func unnamedChild() {
        // DOCC-CHILDREN-UNNAMED-TEST-BEGIN
        let (keypad, keys) = Signal<VerificationInput, Never>.pipe()
        let tester = AutomatonTester(makeQuiz(keypad: keypad))
        tester.send(.ask)
        keys.send(value: .enter("42"))  // the child's own input, straight from the keypad
        keys.sendCompleted()  // the child's replies end: so does its effect
        tester.expect([
            .success(.ask, .idle, .asking),
            .started(by: .ask),
            .success(.passed, .asking, .passed),
            .ended(),
        ])
        tester.finish()
        // DOCC-CHILDREN-UNNAMED-TEST-END
    }

    @Test("releasing the parent releases its children")
    func releasingTheParent() {
        // DOCC-CHILDREN-RELEASE-BEGIN
        let transfers = ChildAutomata<String, Transfer, TransferInput>("transfers") { _ in makeTransfer() }
        let tester = AutomatonTester(makeDownloads(transfers))
        tester.send(.add("a.zip"))
        tester.send(.add("b.zip"))
        tester.expect([
            .success(.add("a.zip"), 0, 0),
            .started(by: .add("a.zip"), key: transfers.key("a.zip")),
            .success(.add("b.zip"), 0, 0),
            .started(by: .add("b.zip"), key: transfers.key("b.zip")),
        ])
        #expect(tester.release())  // lets go of the manager: each transfer is cancelled, and released
        tester.expect([
            .cancelled(.released, key: transfers.key("a.zip")),
            .cancelled(.released, key: transfers.key("b.zip")),
        ])
        // DOCC-CHILDREN-RELEASE-END
    }
}
