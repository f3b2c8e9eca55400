import Automaton
import Signals
import Testing

@Suite("Depth and memory over millions of inputs (BRIEF §6)", .serialized)
struct LongRunningTests {
    @Test(
        "a 10,000,000-step synchronous feedback chain completes in constant stack (a 512 KiB thread stack)",
        .tags(.long), .enabled(if: LongTests.isEnabled)
    )
    func tenMillionStepChain() async {
        let steps = 10_000_000
        let checkpoints = await onDedicatedThread(stackSize: 512 * 1024) { () -> [Int] in
            let automaton = Automaton(state: 0, mapping: { (state: Int, input: Int) in
                (state + 1, input < steps ? SignalProducer(value: input + 1) : .empty)
            })
            let checkpoints = Recording<Int>()
            automaton.replies.observeValues { reply in
                if reply.input % 1_000_000 == 0 { checkpoints.append(reply.input) }
            }
            automaton.send(1)
            #expect(automaton.state.value == steps)
            return checkpoints.values
        }
        #expect(checkpoints == Array(stride(from: 1_000_000, through: steps, by: 1_000_000)))
    }

    @Test(
        "resident memory stays flat over 10,000,000 inputs",
        .tags(.long), .enabled(if: LongTests.isEnabled)
    )
    func memoryStaysFlat() async throws {
        enum Login: Sendable, Equatable { case login, loginOK, logout, logoutOK }
        let mappings: [Automaton<Int, Login>.Mapping] = [
            .login | 0 => 1, .loginOK | 1 => 2, .logout | 2 => 3, .logoutOK | 3 => 0,
        ]
        let automaton = Automaton(state: 0, mapping: reduce(mappings))
        let counter = Locked(0)
        automaton.replies.observeValues { reply in
            if reply.isSuccess { counter.withCriticalRegion { $0 += 1 } }
        }
        let cycle: [Login] = [.login, .loginOK, .logout, .logoutOK]

        let measured = await onDedicatedThread { () -> (warm: Int?, after: Int?) in
            for index in 0..<1_000_000 { automaton.send(cycle[index % 4]) }
            let warm = residentMemory()
            for index in 0..<9_000_000 { automaton.send(cycle[index % 4]) }
            return (warm, residentMemory())
        }
        let warm = try #require(measured?.warm)
        let after = try #require(measured?.after)

        print("resident memory after 1,000,000 inputs: \(warm / 1024) KiB; after 10,000,000: \(after / 1024) KiB")
        #expect(counter.withCriticalRegion { $0 } == 10_000_000)
        #expect(after - warm < 4 * 1024 * 1024, "grew by \((after - warm) / 1024) KiB")
    }
}
