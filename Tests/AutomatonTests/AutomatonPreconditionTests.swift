import Automaton
import Testing

@Suite("Automaton misuse stops with a clear message")
struct AutomatonPreconditionTests {
    @Test("a strategy other than .merge or .latest")
    func unsupportedStrategy() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Automaton(state: 0, mapping: { (state: Int, _: Int) in (state, .empty) }, strategy: .concat)
        }
        #if DEBUG
        let output = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(output.contains("Automaton supports the .merge and .latest strategies, not concat"))
        #endif
    }
}
