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
            let automaton = Automaton(
                state: 0,
                mapping: { (state: Int, input: Int) in
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

    @Test(
        "a .latest polling loop keeps flat memory and two tracked effects at every reply over 10,000,000 ticks",
        .tags(.long), .enabled(if: LongTests.isEnabled)
    )
    func latestPollingLoopMemoryStaysFlat() async throws {
        enum Poll: Sendable { case start, tick }
        let ticks = 10_000_000
        let measured = await onDedicatedThread { () -> (warm: Int?, after: Int?, tracked: [Int]) in
            let scheduler = TestScheduler()
            // Each tick's effect sends the next tick a second later, then completes.
            let tick = SignalProducer<Poll, Never> { observer, lifetime in
                lifetime += scheduler.schedule(after: .seconds(1)) {
                    observer.send(value: .tick)
                    observer.sendCompleted()
                }
            }
            let automaton = Automaton(
                state: 0,
                mapping: { (state: Int, _: Poll) in
                    (state + 1, state < ticks ? tick : .empty)
                }, strategy: .latest)
            let samples = Locked<(warm: Int?, tracked: [Int])>((nil, []))
            automaton.replies.observeValues { [unowned automaton] reply in
                guard reply.toState.map({ $0 % 1_000_000 == 0 }) == true else { return }
                let tracked = automaton.trackedEffectCount
                let memory = reply.toState == 1_000_000 ? residentMemory() : nil
                samples.withCriticalRegion { samples in
                    samples.tracked.append(tracked)
                    if let memory { samples.warm = memory }
                }
            }
            automaton.send(.start)
            scheduler.run()
            #expect(automaton.state.value == ticks + 1)
            let (warm, tracked) = samples.withCriticalRegion { $0 }
            return (warm, residentMemory(), tracked)
        }
        let warm = try #require(measured?.warm)
        let after = try #require(measured?.after)
        print(
            "polling loop: resident memory after 1,000,000 ticks: \(warm / 1024) KiB; after 10,000,000: \(after / 1024) KiB"
        )
        // At each sampled reply the ticking effect has sent its tick but not yet completed, and the next
        // one is registered: two, at every millionth tick as at the first.
        #expect(measured?.tracked == Array(repeating: 2, count: 10))
        #expect(after - warm < 4 * 1024 * 1024, "grew by \((after - warm) / 1024) KiB")
    }

    @Test(
        "a .merge machine of 1,000,000 closure effects that keep no send keeps flat memory and forgets each at once",
        .tags(.long), .enabled(if: LongTests.isEnabled)
    )
    func mergeClosureEffectsMemoryStaysFlat() async throws {
        enum Go: Sendable { case go, echo }
        let effects = 1_000_000
        let measured = await onDedicatedThread { () -> (warm: Int?, after: Int?, tracked: Int, ended: Int) in
            let automaton = Automaton<Int, Go>(
                state: 0,
                table: [
                    // Sends once, at once, and keeps no `send`: it has ended when it returns.
                    .go | { $0 + 1 } | { send in send(.echo) },
                    .echo | { $0 + 1 },
                ])
            let ended = Locked(0)
            automaton.effectEvents.observeValues { event in
                if case .ended = event.kind { ended.withCriticalRegion { $0 += 1 } }
            }
            var warm: Int?
            for index in 1...effects {
                automaton.send(.go)
                if index == effects / 10 { warm = residentMemory() }
            }
            #expect(automaton.state.value == 2 * effects)
            return (warm, residentMemory(), automaton.trackedEffectCount, ended.withCriticalRegion { $0 })
        }
        let warm = try #require(measured?.warm)
        let after = try #require(measured?.after)
        print(
            "closure effects: resident memory after 100,000 effects: \(warm / 1024) KiB; after 1,000,000: \(after / 1024) KiB"
        )
        #expect(measured?.tracked == 0)
        #expect(measured?.ended == effects)
        #expect(after - warm < 4 * 1024 * 1024, "grew by \((after - warm) / 1024) KiB")
    }

    @Test(
        "1,000,000 subscribe and dispose cycles on a long-lived replies signal leave nothing behind",
        .tags(.long), .enabled(if: LongTests.isEnabled)
    )
    func subscribeDisposeCyclesStayFlat() async throws {
        let automaton = Automaton(state: 0, mapping: { (state: Int, input: Int) in state + input })
        let baseline = automaton.replies.observerCount
        let mapCalls = Locked(0)
        let measured = await onDedicatedThread { () -> (warm: Int?, after: Int?, counts: [Int]) in
            var counts: [Int] = []
            var warm: Int?
            let clock = ContinuousClock()
            var lastCheckpoint = clock.now
            for cycle in 1...1_000_000 {
                // A screen that subscribes to a derived stream of replies and unsubscribes on close.
                let disposable = automaton.replies
                    .map { reply -> Int in
                        mapCalls.withCriticalRegion { $0 += 1 }
                        return reply.toState ?? 0
                    }
                    .filter { $0 >= 0 }
                    .observeValues { _ in }
                if cycle % 1_000 == 0 { automaton.send(1) }
                disposable.dispose()
                if cycle % 100_000 == 0 {
                    counts.append(automaton.replies.observerCount)
                    let now = clock.now
                    print("subscribe/dispose cycles \(cycle - 99_999)-\(cycle): \(now - lastCheckpoint)")
                    lastCheckpoint = now
                    if cycle == 100_000 { warm = residentMemory() }
                }
            }
            return (warm, residentMemory(), counts)
        }
        let warm = try #require(measured?.warm)
        let after = try #require(measured?.after)
        print(
            "subscribe/dispose: resident memory after 100,000 cycles: \(warm / 1024) KiB; after 1,000,000: \(after / 1024) KiB"
        )
        // Nothing is left attached, so each cycle costs the same: the sends ran each map closure once.
        #expect(measured?.counts == Array(repeating: baseline, count: 10))
        #expect(mapCalls.withCriticalRegion { $0 } == 1_000)
        automaton.send(1)
        #expect(mapCalls.withCriticalRegion { $0 } == 1_000)
        #expect(after - warm < 4 * 1024 * 1024, "grew by \((after - warm) / 1024) KiB")
    }
}
