import Automaton
import Observation
import Testing

// The code of the article "SwiftUI through Observation" (SwiftUIThroughObservation.md in
// Sources/Automaton/Automaton.docc) and of the README's SwiftUI section, verbatim between the markers
// (checked by .ci/check-docc-snippets and .ci/check-readme). The screen is SwiftUI code; here it
// compiles and runs against the headless stand-in of Support/HeadlessSwiftUI.swift, which has
// SwiftUI's signatures for what it calls, so the text the documents show is the text tested here.

// DOCC-SWIFTUI-LOGIN-SCREEN-BEGIN
// README-SWIFTUI-LOGIN-SCREEN-BEGIN
/// The login machine's screen. The view reads `model.state`, `model.lastReply` and
/// `model.runningEffectCount`, so SwiftUI redraws it when one of them changes, on the main actor.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
struct LoginScreen: View {
    let model: ObservableAutomaton<State, Input>

    var body: some View {
        VStack {
            Text(title)
            if let refusal { Text(refusal) }
            if model.runningEffectCount > 0 { ProgressView() }
            Button("Log in") { model.send(.login) }
                .disabled(model.state != .loggedOut)
            Button("Log out") { model.send(.logout) }
                .disabled(model.state != .loggedIn)
        }
    }

    var title: String {
        switch model.state {
        case .loggedOut: "Logged out"
        case .loggingIn: "Logging in…"
        case .loggedIn: "Welcome"
        case .loggingOut: "Logging out…"
        }
    }

    /// Why the last input was refused, if it was: the state and the reply change together.
    var refusal: String? {
        guard case let .failure(input, state)? = model.lastReply else { return nil }
        return "Cannot \(input) while \(state)"
    }
}
// README-SWIFTUI-LOGIN-SCREEN-END
// DOCC-SWIFTUI-LOGIN-SCREEN-END

/// Counts `onChange` calls, from whatever thread Observation makes them.
final class ChangeCount: Sendable {
    private let count = Locked(0)
    func increment() { count.withCriticalRegion { $0 += 1 } }
    var value: Int { count.withCriticalRegion { $0 } }
}

@MainActor
@Suite("Article: SwiftUI through Observation")
struct SwiftUIArticleTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("the login screen draws the model, is redrawn once per applied transition, and its buttons send")
    func loginScreen() async {
        let scheduler = TestScheduler()
        let loginOK = SignalProducer<Input, Never>(value: .loginOK).delay(.seconds(1), on: scheduler)
        // DOCC-SWIFTUI-MAKE-MODEL-BEGIN
        // README-SWIFTUI-MAKE-MODEL-BEGIN
        let model = makeLoginMachine(loginOK: loginOK, logoutOK: .empty).observable()  // on the main actor
        let screen = LoginScreen(model: model)
        // README-SWIFTUI-MAKE-MODEL-END
        // DOCC-SWIFTUI-MAKE-MODEL-END

        var redraws = ChangeCount()
        var drawing = withObservationTracking {
            draw(screen)
        } onChange: { [redraws] in
            redraws.increment()
        }
        #expect(drawing.lines == ["Text: Logged out", "Button: Log in", "Button: Log out (disabled)"])

        drawing.actions["Log in"]?()  // the tap: login is processed now, its reply applied later
        #expect(model.state == .loggedOut)
        await waitUntil { model.lastReply != nil && model.runningEffectCount == 1 }
        #expect(redraws.value == 1)  // tracking is one-shot: SwiftUI draws again, and tracks again

        redraws = ChangeCount()
        drawing = withObservationTracking {
            draw(screen)
        } onChange: { [redraws] in
            redraws.increment()
        }
        #expect(
            drawing.lines == [
                "Text: Logging in…", "ProgressView", "Button: Log in (disabled)", "Button: Log out (disabled)",
            ])

        scheduler.advance(by: .seconds(1))  // loginOK
        await waitUntil { model.state == .loggedIn && model.runningEffectCount == 0 }
        #expect(redraws.value == 1)
        drawing = draw(screen)
        #expect(drawing.lines == ["Text: Welcome", "Button: Log in (disabled)", "Button: Log out"])

        model.send(.login)  // refused: the screen says why
        await waitUntil { model.lastReply?.isSuccess == false }
        #expect(
            draw(screen).lines == [
                "Text: Welcome", "Text: Cannot login while loggedIn", "Button: Log in (disabled)", "Button: Log out",
            ])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("a test reads the model as a view does, and awaits the main actor's deliveries")
    func testingTheModel() async {
        // DOCC-SWIFTUI-TEST-MODEL-BEGIN
        let model = makeLoginMachine(loginOK: .empty, logoutOK: .empty).observable()
        let redraws = MutableProperty(0)
        _ = withObservationTracking {
            model.state
        } onChange: {
            redraws.modify { $0 += 1 }
        }

        model.send(.login)
        model.send(.logout)  // refused in loggingIn
        #expect(model.state == .loggedOut)  // the replies are applied later, on the main actor
        await Task { @MainActor in }.value  // the main-actor deliveries queued before it have run
        #expect(model.state == .loggingIn)
        #expect(model.lastReply == .failure(.logout, .loggingIn))
        #expect(redraws.value == 1)  // a view that read the state is drawn again, once
        // DOCC-SWIFTUI-TEST-MODEL-END
    }
}

/// Yields the main actor until `condition` holds, so that the main-actor deliveries queued meanwhile
/// run; records an issue instead of waiting for ever.
@MainActor
func waitUntil(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: @MainActor () -> Bool
) async {
    for _ in 0..<200_000 {
        if condition() { return }
        await Task.yield()
    }
    Issue.record("The condition never held", sourceLocation: sourceLocation)
}
