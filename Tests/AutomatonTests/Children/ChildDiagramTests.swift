import Automaton
import Testing

/// Composite diagrams whose hosts come from the parent's rows: the states a child-starting transition
/// leads to.
@Suite struct ChildDiagramTests {
    @Test func theHostsOfANamedChildAreTheStatesItsStartLeadsTo() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let gate = makeGate(twoFactor).graph(inputs: [.submit, .code("123"), .accepted, .rejected, .cancel, .other])
        let child = makeTwoFactor().graph(inputs: [.enter("123"), .enter("999"), .resend])
        #expect(gate.statesStartingChildren(named: "twoFactor") == [.verifying])
        #expect(gate.statesStartingChildren(named: "other").isEmpty)

        let diagram = gate.composite().nesting(child, startedAs: twoFactor.name)
        #expect(diagram.children(of: .verifying).map(\.name) == ["twoFactor"])
        #expect(diagram.children(of: .verifying).map(\.stateNames) == [["waiting", "accepted", "rejected"]])
        #expect(diagram.children(of: .loggedOut).isEmpty)
        #expect(diagram.children(of: .loggedIn).isEmpty)
        #expect(diagram.mermaid().contains("state \"verifying\" as verifying {"))
    }

    @Test func aForwardingTransitionNamesTheChildItFeeds() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let gate = makeGate(twoFactor).graph(inputs: [.submit, .code("123"), .cancel])
        let labels = gate.edges.map { "\($0.from) \($0.input) \($0.forwardedTo.map(\.description) ?? "-")" }
        #expect(
            labels == [
                "loggedOut submit -", "verifying submit -", "verifying code(123) twoFactor", "verifying cancel -",
            ])
        #expect(gate.mermaid().contains("verifying --> verifying : code(123) / send [twoFactor]\n"))
        #expect(gate.mermaid().contains("loggedOut --> verifying : submit / effect [twoFactor]\n"))
    }

    @Test func theHostsOfAKindOfChildrenAreFoundThroughTheirIds() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let manager = makeManager(downloads).graph(inputs: [.add("a"), .tick("a"), .remove("a")])
        #expect(manager.statesStartingChildren(named: "downloads") == [0])
        #expect(manager.statesStartingChildren(named: "twoFactor").isEmpty)
    }
}
