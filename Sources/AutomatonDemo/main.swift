// Prints the login machine's state diagram (Mermaid), then plays the seed scenarios in real time on a
// QueueScheduler, logging every reply, and checks that each machine ends where it must. Exits 0 on
// success, 1 if a scenario went wrong or did not finish.
//
//   automaton-demo             the Mermaid diagram, then the scenarios
//   automaton-demo --mermaid   only the login machine's Mermaid diagram
//   automaton-demo --dot       only its Graphviz DOT (`automaton-demo --dot | dot -Tpng -o login.png`)

import Automaton
import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

switch CommandLine.arguments.dropFirst().first {
case nil:
    print("== The login machine (Mermaid stateDiagram-v2; --dot prints Graphviz DOT)")
    print(loginGraph().mermaid())
case "--mermaid":
    print(loginGraph().mermaid(), terminator: "")
    exit(0)
case "--dot":
    print(loginGraph().dot(name: "login"), terminator: "")
    exit(0)
case let argument?:
    print("usage: automaton-demo [--mermaid | --dot]   (unknown argument: \(argument))")
    exit(2)
}

let scenarios: [(name: String, run: @Sendable () -> Bool)] = [
    ("RxAutomaton login / logout, with forceLogout racing a pending loginOK (.latest)", runLoginDemo),
    (
        "Stated AppLauncher: uninitialized → initialized → upgrading → indexing → loggedIn → loggedOut",
        runAppLauncherDemo
    ),
    ("Gauntlet traffic light: the inputs are target states, validated by shouldTransition(to:)", runTrafficLightDemo),
    ("A connection with associated values: a dropped attempt n is retried as attempt n + 1", runConnectionDemo),
    ("Keyed effects: a back-off timer survives an unrelated input under .latest, and fires", runKeyedEffectDemo),
    ("Machines made of machines: a download manager runs one transfer machine per file", runChildrenDemo),
    ("Mealy machine (seed 003): a mapper's output is a postponed input, processed after the current one", runMealyDemo),
]

var failed = false
for (name, run) in scenarios {
    print("== \(name)")
    let passed = run()
    print(passed ? "   ok" : "   FAILED")
    print()
    failed = failed || !passed
}
print(failed ? "demo failed" : "demo finished: every machine reached its expected final state")
exit(failed ? 1 : 0)
