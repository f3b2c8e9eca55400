import Automaton
import Signals
import Testing

// Golden texts: the Mermaid and DOT exports of the four seed systems (BRIEF §7) and of labels that
// need escaping. Each is the whole text, so any change to an export's order or form shows here.

@Suite("State graph export: Mermaid and DOT of the seed systems")
struct GraphExportTests {
    @Test("RxAutomaton login: Mermaid lists states in discovery order and marks the transitions that start an effect")
    func loginMermaid() {
        expectDiagram(
            loginGraph().mermaid(),
            """
            stateDiagram-v2
                state "loggedOut" as loggedOut
                state "loggingIn" as loggingIn
                state "loggedIn" as loggedIn
                state "loggingOut" as loggingOut
                [*] --> loggedOut
                loggedOut --> loggingIn : login / effect
                loggingIn --> loggedIn : loginOK
                loggingIn --> loggingOut : forceLogout / effect
                loggedIn --> loggingOut : logout / effect
                loggedIn --> loggingOut : forceLogout / effect
                loggingOut --> loggedOut : logoutOK
            """, named: "login.mmd")
    }

    @Test("RxAutomaton login: DOT draws the start point, one node per state, and effect edges bold")
    func loginDOT() {
        expectDiagram(
            loginGraph().dot(name: "login"),
            """
            digraph "login" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                loggedOut [label="loggedOut"];
                loggingIn [label="loggingIn"];
                loggedIn [label="loggedIn"];
                loggingOut [label="loggingOut"];
                __start -> loggedOut;
                loggedOut -> loggingIn [label="login / effect", style=bold];
                loggingIn -> loggedIn [label="loginOK"];
                loggingIn -> loggingOut [label="forceLogout / effect", style=bold];
                loggedIn -> loggingOut [label="logout / effect", style=bold];
                loggedIn -> loggingOut [label="forceLogout / effect", style=bold];
                loggingOut -> loggedOut [label="logoutOK"];
            }
            """, named: "login.dot")
    }

    @Test("Stated AppLauncher, explored from the automaton without its table: every transition calls send")
    func appLauncher() {
        let launcher = AppLauncher(services: AppServices(isUpgradePending: true, canLogIn: true))
        let graph = launcher.machine.graph()
        expectDiagram(
            graph.mermaid(),
            """
            stateDiagram-v2
                state "uninitialized" as uninitialized
                state "initialized" as initialized
                state "upgrading" as upgrading
                state "indexing" as indexing
                state "loggedIn" as loggedIn
                state "loggedOut" as loggedOut
                [*] --> uninitialized
                uninitialized --> initialized : initialize / effect
                initialized --> upgrading : upgrade / effect
                initialized --> indexing : indexDatabase / effect
                upgrading --> indexing : indexDatabase / effect
                indexing --> loggedIn : logIn / effect
                indexing --> loggedOut : logOut / effect
                loggedIn --> loggedOut : logOut / effect
                loggedOut --> loggedIn : logIn / effect
            """, named: "app-launcher.mmd")
        expectDiagram(
            graph.dot(name: "AppLauncher"),
            """
            digraph "AppLauncher" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                uninitialized [label="uninitialized"];
                initialized [label="initialized"];
                upgrading [label="upgrading"];
                indexing [label="indexing"];
                loggedIn [label="loggedIn"];
                loggedOut [label="loggedOut"];
                __start -> uninitialized;
                uninitialized -> initialized [label="initialize / effect", style=bold];
                initialized -> upgrading [label="upgrade / effect", style=bold];
                initialized -> indexing [label="indexDatabase / effect", style=bold];
                upgrading -> indexing [label="indexDatabase / effect", style=bold];
                indexing -> loggedIn [label="logIn / effect", style=bold];
                indexing -> loggedOut [label="logOut / effect", style=bold];
                loggedIn -> loggedOut [label="logOut / effect", style=bold];
                loggedOut -> loggedIn [label="logIn / effect", style=bold];
            }
            """, named: "app-launcher.dot")
    }

    @Test("Gauntlet TrafficLight: the inputs are target states, and only red → green → yellow → red is drawn")
    func trafficLight() {
        let graph = transitionMachine(initialState: TrafficLight.red).graph()
        expectDiagram(
            graph.mermaid(),
            """
            stateDiagram-v2
                state "red" as red
                state "green" as green
                state "yellow" as yellow
                [*] --> red
                red --> green : green
                green --> yellow : yellow
                yellow --> red : red
            """, named: "traffic-light.mmd")
        expectDiagram(
            graph.dot(name: "TrafficLight"),
            """
            digraph "TrafficLight" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                red [label="red"];
                green [label="green"];
                yellow [label="yellow"];
                __start -> red;
                red -> green [label="green"];
                green -> yellow [label="yellow"];
                yellow -> red [label="red"];
            }
            """, named: "traffic-light.dot")
    }

    @Test("Gauntlet Connection: sample inputs with associated values give states whose labels keep the values, escaped")
    func gauntletConnection() {
        let graph = transitionMachine(initialState: Connection.idle).graph(inputs: Connection.samples)
        expectDiagram(
            graph.mermaid(),
            #"""
            stateDiagram-v2
                state "idle" as idle
                state "fetching(taskID#58; 7)" as fetching_taskID_7
                state "cancel" as cancel
                state "success(json#58; [#quot;user#quot;#58; #quot;ada#quot;])" as success_json_user_ada
                state "failure(message#58; #quot;timed out#quot;)" as failure_message_timed_out
                [*] --> idle
                idle --> fetching_taskID_7 : fetching(taskID#58; 7)
                idle --> cancel : cancel
                fetching_taskID_7 --> success_json_user_ada : success(json#58; [#quot;user#quot;#58; #quot;ada#quot;])
                fetching_taskID_7 --> failure_message_timed_out : failure(message#58; #quot;timed out#quot;)
                fetching_taskID_7 --> cancel : cancel
                cancel --> cancel : cancel
                success_json_user_ada --> cancel : cancel
                failure_message_timed_out --> cancel : cancel
            """#, named: "gauntlet-connection.mmd")
        expectDiagram(
            graph.dot(name: "Connection"),
            #"""
            digraph "Connection" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                idle [label="idle"];
                fetching_taskID_7 [label="fetching(taskID: 7)"];
                cancel [label="cancel"];
                success_json_user_ada [label="success(json: [\"user\": \"ada\"])"];
                failure_message_timed_out [label="failure(message: \"timed out\")"];
                __start -> idle;
                idle -> fetching_taskID_7 [label="fetching(taskID: 7)"];
                idle -> cancel [label="cancel"];
                fetching_taskID_7 -> success_json_user_ada [label="success(json: [\"user\": \"ada\"])"];
                fetching_taskID_7 -> failure_message_timed_out [label="failure(message: \"timed out\")"];
                fetching_taskID_7 -> cancel [label="cancel"];
                cancel -> cancel [label="cancel"];
                success_json_user_ada -> cancel [label="cancel"];
                failure_message_timed_out -> cancel [label="cancel"];
            }
            """#, named: "gauntlet-connection.dot")
    }

    @Test("Mealy mapper: named states, sample inputs with associated values, outputs drawn as effects")
    func mealyMapper() {
        let graph = playbackMachine().graph(inputs: [.select("intro"), .loaded("intro"), .play, .pause])
        let name: (Playback) -> String = { state in
            (state.video ?? "no video") + (state.isLoading ? " loading" : "") + (state.isPlaying ? " playing" : "")
        }
        expectDiagram(
            graph.mermaid(stateName: name),
            #"""
            stateDiagram-v2
                state "no video" as no_video
                state "intro loading" as intro_loading
                state "intro" as intro
                state "intro playing" as intro_playing
                [*] --> no_video
                no_video --> intro_loading : select(#quot;intro#quot;) / effect
                no_video --> no_video : loaded(#quot;intro#quot;)
                no_video --> no_video : play
                no_video --> no_video : pause
                intro_loading --> intro_loading : select(#quot;intro#quot;) / effect
                intro_loading --> intro : loaded(#quot;intro#quot;) / effect
                intro_loading --> intro_loading : play
                intro_loading --> intro_loading : pause
                intro --> intro_loading : select(#quot;intro#quot;) / effect
                intro --> intro : loaded(#quot;intro#quot;) / effect
                intro --> intro_playing : play
                intro --> intro : pause
                intro_playing --> intro_loading : select(#quot;intro#quot;) / effect
                intro_playing --> intro : loaded(#quot;intro#quot;) / effect
                intro_playing --> intro_playing : play
                intro_playing --> intro : pause
            """#, named: "mealy-playback.mmd")
        expectDiagram(
            graph.dot(name: "Playback", stateName: name),
            #"""
            digraph "Playback" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                no_video [label="no video"];
                intro_loading [label="intro loading"];
                intro [label="intro"];
                intro_playing [label="intro playing"];
                __start -> no_video;
                no_video -> intro_loading [label="select(\"intro\") / effect", style=bold];
                no_video -> no_video [label="loaded(\"intro\")"];
                no_video -> no_video [label="play"];
                no_video -> no_video [label="pause"];
                intro_loading -> intro_loading [label="select(\"intro\") / effect", style=bold];
                intro_loading -> intro [label="loaded(\"intro\") / effect", style=bold];
                intro_loading -> intro_loading [label="play"];
                intro_loading -> intro_loading [label="pause"];
                intro -> intro_loading [label="select(\"intro\") / effect", style=bold];
                intro -> intro [label="loaded(\"intro\") / effect", style=bold];
                intro -> intro_playing [label="play"];
                intro -> intro [label="pause"];
                intro_playing -> intro_loading [label="select(\"intro\") / effect", style=bold];
                intro_playing -> intro [label="loaded(\"intro\") / effect", style=bold];
                intro_playing -> intro_playing [label="play"];
                intro_playing -> intro [label="pause"];
            }
            """#, named: "mealy-playback.dot")
    }
}

@Suite("State graph export: labels that need escaping")
struct GraphExportEscapingTests {
    /// States named with quotes, a backslash, a line break, Mermaid's and DOT's special characters, a
    /// reserved word, a leading digit, no ASCII letter, and two names that reduce to one identifier.
    static let names = [
        #"say "hi""#, #"back\slash"#, "two\nlines", "a: b; c # d % e <f> & {g}", "end", "1st", "é", "a b", "a_b",
    ]

    enum Command: Sendable, CustomStringConvertible {
        case next
        case rename(to: String)

        var description: String {
            switch self {
            case .next: "next"
            case let .rename(name): "rename(to: \"\(name)\")"
            }
        }
    }

    /// `next` walks the names in order; `rename(to:)` jumps from the first name to the one given.
    static func graph() -> StateGraph<String, Command> {
        StateGraph(from: names[0], inputs: [.next, .rename(to: "end")]) {
            (state: String, command: Command) -> String? in
            guard let index = names.firstIndex(of: state) else { return nil }
            switch command {
            case .next: return index + 1 < names.count ? names[index + 1] : nil
            case let .rename(name): return index == 0 && names.contains(name) ? name : nil
            }
        }
    }

    @Test("Mermaid: identifiers are sanitized and unique, labels use entity codes and <br>")
    func mermaid() {
        expectDiagram(
            Self.graph().mermaid(),
            #"""
            stateDiagram-v2
                state "say #quot;hi#quot;" as say_hi
                state "back#92;slash" as back_slash
                state "end" as end_2
                state "two<br>lines" as two_lines
                state "1st" as s1st
                state "a#58; b#59; c #35; d #37; e #lt;f#gt; #amp; #123;g#125;" as a_b_c_d_e_f_g
                state "é" as s
                state "a b" as a_b
                state "a_b" as a_b_2
                [*] --> say_hi
                say_hi --> back_slash : next
                say_hi --> end_2 : rename(to#58; #quot;end#quot;)
                back_slash --> two_lines : next
                end_2 --> s1st : next
                two_lines --> a_b_c_d_e_f_g : next
                s1st --> s : next
                a_b_c_d_e_f_g --> end_2 : next
                s --> a_b : next
                a_b --> a_b_2 : next
            """#, named: "tricky-labels.mmd")
    }

    @Test("DOT: labels are quoted strings with backslashes, quotes and line breaks escaped")
    func dot() {
        expectDiagram(
            Self.graph().dot(name: #"tricky "labels""#),
            #"""
            digraph "tricky \"labels\"" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                say_hi [label="say \"hi\""];
                back_slash [label="back\\slash"];
                end_2 [label="end"];
                two_lines [label="two\nlines"];
                s1st [label="1st"];
                a_b_c_d_e_f_g [label="a: b; c # d % e <f> & {g}"];
                s [label="é"];
                a_b [label="a b"];
                a_b_2 [label="a_b"];
                __start -> say_hi;
                say_hi -> back_slash [label="next"];
                say_hi -> end_2 [label="rename(to: \"end\")"];
                back_slash -> two_lines [label="next"];
                end_2 -> s1st [label="next"];
                two_lines -> a_b_c_d_e_f_g [label="next"];
                s1st -> s [label="next"];
                a_b_c_d_e_f_g -> end_2 [label="next"];
                s -> a_b [label="next"];
                a_b -> a_b_2 [label="next"];
            }
            """#, named: "tricky-labels.dot")
    }

    @Test("Keyed effects and cancelling rows are labelled with their keys")
    func keyedLabels() {
        expectDiagram(
            keyedGraph().mermaid(),
            """
            stateDiagram-v2
                state "disconnected" as disconnected
                state "connecting" as connecting
                state "connected" as connected
                [*] --> disconnected
                disconnected --> connecting : connect / effect [connection]
                disconnected --> disconnected : disconnect / cancel [connection, poll]
                connecting --> connected : opened / effect
                connecting --> disconnected : disconnect / cancel [connection, poll]
                connected --> disconnected : disconnect / cancel [connection, poll]
            """, named: "keyed.mmd")
        expectDiagram(
            keyedGraph().dot(name: "keyed"),
            """
            digraph "keyed" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                disconnected [label="disconnected"];
                connecting [label="connecting"];
                connected [label="connected"];
                __start -> disconnected;
                disconnected -> connecting [label="connect / effect [connection]", style=bold];
                disconnected -> disconnected [label="disconnect / cancel [connection, poll]"];
                connecting -> connected [label="opened / effect", style=bold];
                connecting -> disconnected [label="disconnect / cancel [connection, poll]"];
                connected -> disconnected [label="disconnect / cancel [connection, poll]"];
            }
            """, named: "keyed.dot")
    }
}

// MARK: Machines

/// The login machine's graph, from its mapping (effects are built, never started).
func loginGraph() -> StateGraph<LoginState, LoginInput> {
    let effect = SignalProducer<LoginInput, Never>(value: .loginOK)
    return StateGraph(
        from: .loggedOut, mapping: reduce(loginMappings(loginOK: effect, logoutOK: effect, forceLogoutOK: effect)))
}

extension Connection {
    /// Gauntlet's connection states as inputs (targets), with sample associated values.
    static let samples: [Connection] = [
        .idle, .fetching(taskID: 7), .success(json: ["user": "ada"]), .failure(message: "timed out"), .cancel,
    ]
}

enum Socket: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case disconnected, connecting, connected
    var description: String { rawValue }
}

enum SocketInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case connect, opened, disconnect
    var description: String { rawValue }
}

/// A machine with a keyed effect, an un-keyed one and a row that cancels two keys.
func keyedGraph() -> StateGraph<Socket, SocketInput> {
    let connect = SignalProducer<SocketInput, Never>(value: .opened).keyed("connection")
    let poll = SignalProducer<SocketInput, Never>.never
    return StateGraph(from: .disconnected) {
        (state: Socket, input: SocketInput) -> (Socket, SignalProducer<SocketInput, Never>)? in
        switch (state, input) {
        case (.disconnected, .connect): return (.connecting, connect)
        case (.connecting, .opened): return (.connected, poll)
        case (_, .disconnect): return (.disconnected, .cancel("connection", "poll"))
        default: return nil
        }
    }
}
