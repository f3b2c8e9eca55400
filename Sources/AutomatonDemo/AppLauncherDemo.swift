import Automaton

enum LauncherState: String, Sendable, Equatable, CustomStringConvertible {
    case uninitialized, initialized, upgrading, indexing, loggedOut, loggedIn
    var description: String { rawValue }
}

enum LauncherInput: String, Sendable, Equatable, CustomStringConvertible {
    case initialize, upgrade, indexDatabase, logIn, logOut
    var description: String { rawValue }
}

/// The Stated AppLauncher (seed 000): effects are closures that receive `send`. The "screens" and the
/// database are simulated with delays on the scheduler: the upgrade screen finishes after 100 ms,
/// indexing takes 50 ms, and the user logs out of the tour list after 100 ms.
@Sendable
func runAppLauncherDemo() -> Bool {
    let scheduler = QueueScheduler(label: "demo.launcher")
    let isUpgradePending = true
    let canLogIn = true
    typealias Send = @Sendable (LauncherInput) -> Void

    let initialize: @Sendable (@escaping Send) -> Void = { send in
        send(isUpgradePending ? .upgrade : .indexDatabase)
    }
    let upgrade: @Sendable (@escaping Send) -> Void = { send in
        print("   (showing the upgrade screen)")
        scheduler.schedule(after: .milliseconds(100)) { send(.indexDatabase) }  // upgrade finished
    }
    let indexDatabase: @Sendable (@escaping Send) -> Void = { send in
        print("   (creating secondary indices)")
        scheduler.schedule(after: .milliseconds(50)) { send(canLogIn ? .logIn : .logOut) }
    }
    let logIn: @Sendable (@escaping Send) -> Void = { send in
        print("   (showing the tour list)")
        scheduler.schedule(after: .milliseconds(100)) { send(.logOut) }  // the user logs out
    }
    let logOut: @Sendable (@escaping Send) -> Void = { _ in
        print("   (clearing authentication, showing the login screen)")
    }

    let automaton = Automaton<LauncherState, LauncherInput>(
        state: .uninitialized,
        table: [
            /* Input        |      from             to       |   effect    */
            .initialize | .uninitialized => .initialized | initialize,
            .upgrade | .initialized => .upgrading | upgrade,
            .indexDatabase | .initialized => .indexing | indexDatabase,
            .indexDatabase | .upgrading => .indexing | indexDatabase,
            .logIn | .indexing => .loggedIn | logIn,
            .logIn | .loggedOut => .loggedIn | logIn,
            .logOut | .indexing => .loggedOut | logOut,
            .logOut | .loggedIn => .loggedOut | logOut,
        ])

    return play(
        "launcher",
        automaton: automaton,
        scheduler: scheduler,
        script: [(.zero, .initialize)],
        expectedReplies: [
            "success(initialize, uninitialized => initialized)",
            "success(upgrade, initialized => upgrading)",
            "success(indexDatabase, upgrading => indexing)",
            "success(logIn, indexing => loggedIn)",
            "success(logOut, loggedIn => loggedOut)",
        ],
        expectedFinalState: .loggedOut
    )
}
