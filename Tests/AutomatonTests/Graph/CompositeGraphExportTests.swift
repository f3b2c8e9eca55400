import Automaton
import Testing

// Golden texts: the Mermaid and DOT exports of composite diagrams (issue 33, machines made of
// machines), whole, so that any change to their order, nesting or identifiers shows here. Every
// export is written to AUTOMATON_DIAGRAM_DIR, where CI renders the DOT with `dot -Tsvg` and checks
// the Mermaid's structure (.ci/check-mermaid).

@Suite("Composite state graph export: Mermaid blocks and DOT clusters")
struct CompositeGraphExportTests {
    @Test("Two levels: the sign-in machine hosts the two-factor machine while verifying")
    func signInWithTwoFactor() {
        let diagram = signInGraph().composite().nesting(twoFactorGraph(), in: .verifying)
        expectDiagram(
            diagram.mermaid(),
            """
            stateDiagram-v2
                state "signedOut" as signedOut
                state "verifying" as verifying {
                    state "waitingForCode" as verifying__waitingForCode
                    state "checking" as verifying__checking
                    state "accepted" as verifying__accepted
                    [*] --> verifying__waitingForCode
                    verifying__waitingForCode --> verifying__checking : submit / effect
                    verifying__checking --> verifying__accepted : valid
                    verifying__checking --> verifying__waitingForCode : invalid
                }
                state "signedIn" as signedIn
                [*] --> signedOut
                signedOut --> verifying : submitPassword / effect
                verifying --> signedIn : verified
                verifying --> signedOut : failed
                signedIn --> signedOut : signOut
            """, named: "composite-sign-in.mmd")
        expectDiagram(
            diagram.dot(name: "sign-in"),
            """
            digraph "sign-in" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                signedOut [label="signedOut"];
                subgraph cluster_verifying {
                    label="";
                    style="rounded,dashed";
                    verifying [label="verifying"];
                    __start__verifying [shape=point, label=""];
                    verifying__waitingForCode [label="waitingForCode"];
                    verifying__checking [label="checking"];
                    verifying__accepted [label="accepted"];
                    __start__verifying -> verifying__waitingForCode;
                    verifying__waitingForCode -> verifying__checking [label="submit / effect", style=bold];
                    verifying__checking -> verifying__accepted [label="valid"];
                    verifying__checking -> verifying__waitingForCode [label="invalid"];
                }
                signedIn [label="signedIn"];
                __start -> signedOut;
                signedOut -> verifying [label="submitPassword / effect", style=bold];
                verifying -> signedIn [label="verified"];
                verifying -> signedOut [label="failed"];
                signedIn -> signedOut [label="signOut"];
            }
            """, named: "composite-sign-in.dot")
    }

    @Test("A collection: each download machine is drawn, named, in every state that has downloads")
    func downloadManager() {
        let diagram = managerGraph().composite()
            .nesting(downloadGraph(), in: { $0.hasDownloads }, name: "downloads[*]")
        expectDiagram(
            diagram.mermaid(),
            """
            stateDiagram-v2
                state "idle" as idle
                state "running" as running {
                    state "downloads[*]" as running__downloads {
                        state "queued" as running__downloads__queued
                        state "downloading" as running__downloads__downloading
                        state "finished" as running__downloads__finished
                        state "failed" as running__downloads__failed
                        [*] --> running__downloads__queued
                        running__downloads__queued --> running__downloads__downloading : begin / effect
                        running__downloads__downloading --> running__downloads__finished : complete
                        running__downloads__downloading --> running__downloads__failed : fail
                        running__downloads__failed --> running__downloads__downloading : retry / effect
                    }
                }
                state "paused" as paused {
                    state "downloads[*]" as paused__downloads {
                        state "queued" as paused__downloads__queued
                        state "downloading" as paused__downloads__downloading
                        state "finished" as paused__downloads__finished
                        state "failed" as paused__downloads__failed
                        [*] --> paused__downloads__queued
                        paused__downloads__queued --> paused__downloads__downloading : begin / effect
                        paused__downloads__downloading --> paused__downloads__finished : complete
                        paused__downloads__downloading --> paused__downloads__failed : fail
                        paused__downloads__failed --> paused__downloads__downloading : retry / effect
                    }
                }
                [*] --> idle
                idle --> running : start
                running --> paused : pause
                running --> idle : finish
                paused --> running : resume
            """, named: "composite-downloads.mmd")
        expectDiagram(
            diagram.dot(name: "downloads"),
            """
            digraph "downloads" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                idle [label="idle"];
                subgraph cluster_running {
                    label="";
                    style="rounded,dashed";
                    running [label="running"];
                    subgraph cluster_running__downloads {
                        label="downloads[*]";
                        style=rounded;
                        __start__running__downloads [shape=point, label=""];
                        running__downloads__queued [label="queued"];
                        running__downloads__downloading [label="downloading"];
                        running__downloads__finished [label="finished"];
                        running__downloads__failed [label="failed"];
                        __start__running__downloads -> running__downloads__queued;
                        running__downloads__queued -> running__downloads__downloading [label="begin / effect", style=bold];
                        running__downloads__downloading -> running__downloads__finished [label="complete"];
                        running__downloads__downloading -> running__downloads__failed [label="fail"];
                        running__downloads__failed -> running__downloads__downloading [label="retry / effect", style=bold];
                    }
                }
                subgraph cluster_paused {
                    label="";
                    style="rounded,dashed";
                    paused [label="paused"];
                    subgraph cluster_paused__downloads {
                        label="downloads[*]";
                        style=rounded;
                        __start__paused__downloads [shape=point, label=""];
                        paused__downloads__queued [label="queued"];
                        paused__downloads__downloading [label="downloading"];
                        paused__downloads__finished [label="finished"];
                        paused__downloads__failed [label="failed"];
                        __start__paused__downloads -> paused__downloads__queued;
                        paused__downloads__queued -> paused__downloads__downloading [label="begin / effect", style=bold];
                        paused__downloads__downloading -> paused__downloads__finished [label="complete"];
                        paused__downloads__downloading -> paused__downloads__failed [label="fail"];
                        paused__downloads__failed -> paused__downloads__downloading [label="retry / effect", style=bold];
                    }
                }
                __start -> idle;
                idle -> running [label="start"];
                running -> paused [label="pause"];
                running -> idle [label="finish"];
                paused -> running [label="resume"];
            }
            """, named: "composite-downloads.dot")
    }

    @Test("Three levels: the two-factor machine's checking state hosts the request machine")
    func threeLevels() {
        let twoFactor = twoFactorGraph().composite().nesting(requestGraph(), in: .checking)
        let diagram = signInGraph().composite().nesting(twoFactor, in: .verifying)
        expectDiagram(
            diagram.mermaid(),
            """
            stateDiagram-v2
                state "signedOut" as signedOut
                state "verifying" as verifying {
                    state "waitingForCode" as verifying__waitingForCode
                    state "checking" as verifying__checking {
                        state "sending" as verifying__checking__sending
                        state "waiting" as verifying__checking__waiting
                        [*] --> verifying__checking__sending
                        verifying__checking__sending --> verifying__checking__waiting : sent
                        verifying__checking__waiting --> verifying__checking__sending : timeout / effect
                    }
                    state "accepted" as verifying__accepted
                    [*] --> verifying__waitingForCode
                    verifying__waitingForCode --> verifying__checking : submit / effect
                    verifying__checking --> verifying__accepted : valid
                    verifying__checking --> verifying__waitingForCode : invalid
                }
                state "signedIn" as signedIn
                [*] --> signedOut
                signedOut --> verifying : submitPassword / effect
                verifying --> signedIn : verified
                verifying --> signedOut : failed
                signedIn --> signedOut : signOut
            """, named: "composite-three-levels.mmd")
        expectDiagram(
            diagram.dot(name: "three levels"),
            """
            digraph "three levels" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                signedOut [label="signedOut"];
                subgraph cluster_verifying {
                    label="";
                    style="rounded,dashed";
                    verifying [label="verifying"];
                    __start__verifying [shape=point, label=""];
                    verifying__waitingForCode [label="waitingForCode"];
                    subgraph cluster_verifying__checking {
                        label="";
                        style="rounded,dashed";
                        verifying__checking [label="checking"];
                        __start__verifying__checking [shape=point, label=""];
                        verifying__checking__sending [label="sending"];
                        verifying__checking__waiting [label="waiting"];
                        __start__verifying__checking -> verifying__checking__sending;
                        verifying__checking__sending -> verifying__checking__waiting [label="sent"];
                        verifying__checking__waiting -> verifying__checking__sending [label="timeout / effect", style=bold];
                    }
                    verifying__accepted [label="accepted"];
                    __start__verifying -> verifying__waitingForCode;
                    verifying__waitingForCode -> verifying__checking [label="submit / effect", style=bold];
                    verifying__checking -> verifying__accepted [label="valid"];
                    verifying__checking -> verifying__waitingForCode [label="invalid"];
                }
                signedIn [label="signedIn"];
                __start -> signedOut;
                signedOut -> verifying [label="submitPassword / effect", style=bold];
                verifying -> signedIn [label="verified"];
                verifying -> signedOut [label="failed"];
                signedIn -> signedOut [label="signOut"];
            }
            """, named: "composite-three-levels.dot")
    }

    @Test("Two kinds of children in one state are concurrent regions, in the order nested")
    func twoKinds() {
        let diagram = managerGraph().composite()
            .nesting(downloadGraph(), in: .running, name: "downloads[*]")
            .nesting(speedGraph(), in: .running)
        expectDiagram(
            diagram.mermaid(),
            """
            stateDiagram-v2
                state "idle" as idle
                state "running" as running {
                    state "downloads[*]" as running__downloads {
                        state "queued" as running__downloads__queued
                        state "downloading" as running__downloads__downloading
                        state "finished" as running__downloads__finished
                        state "failed" as running__downloads__failed
                        [*] --> running__downloads__queued
                        running__downloads__queued --> running__downloads__downloading : begin / effect
                        running__downloads__downloading --> running__downloads__finished : complete
                        running__downloads__downloading --> running__downloads__failed : fail
                        running__downloads__failed --> running__downloads__downloading : retry / effect
                    }
                    --
                    state "measuring" as running__region__measuring
                    state "stalled" as running__region__stalled
                    [*] --> running__region__measuring
                    running__region__measuring --> running__region__stalled : stall
                    running__region__stalled --> running__region__measuring : recover
                }
                state "paused" as paused
                [*] --> idle
                idle --> running : start
                running --> paused : pause
                running --> idle : finish
                paused --> running : resume
            """, named: "composite-two-kinds.mmd")
        expectDiagram(
            diagram.dot(name: "two kinds"),
            """
            digraph "two kinds" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                idle [label="idle"];
                subgraph cluster_running {
                    label="";
                    style="rounded,dashed";
                    running [label="running"];
                    subgraph cluster_running__downloads {
                        label="downloads[*]";
                        style=rounded;
                        __start__running__downloads [shape=point, label=""];
                        running__downloads__queued [label="queued"];
                        running__downloads__downloading [label="downloading"];
                        running__downloads__finished [label="finished"];
                        running__downloads__failed [label="failed"];
                        __start__running__downloads -> running__downloads__queued;
                        running__downloads__queued -> running__downloads__downloading [label="begin / effect", style=bold];
                        running__downloads__downloading -> running__downloads__finished [label="complete"];
                        running__downloads__downloading -> running__downloads__failed [label="fail"];
                        running__downloads__failed -> running__downloads__downloading [label="retry / effect", style=bold];
                    }
                    subgraph cluster_running__region {
                        label="";
                        style=rounded;
                        __start__running__region [shape=point, label=""];
                        running__region__measuring [label="measuring"];
                        running__region__stalled [label="stalled"];
                        __start__running__region -> running__region__measuring;
                        running__region__measuring -> running__region__stalled [label="stall"];
                        running__region__stalled -> running__region__measuring [label="recover"];
                    }
                }
                paused [label="paused"];
                __start -> idle;
                idle -> running [label="start"];
                running -> paused [label="pause"];
                running -> idle [label="finish"];
                paused -> running [label="resume"];
            }
            """, named: "composite-two-kinds.dot")
    }

    @Test("A diagram with no child exports exactly as its parent graph")
    func noChild() {
        let graph = signInGraph()
        #expect(graph.composite().mermaid() == graph.mermaid())
        #expect(graph.composite().dot(name: "sign-in") == graph.dot(name: "sign-in"))
        let named = graph.composite(stateName: { "state \($0)" }, inputName: { "input \($0)" })
        #expect(named.mermaid() == graph.mermaid(stateName: { "state \($0)" }, inputName: { "input \($0)" }))
    }
}

@Suite("Composite state graph export: identifiers and labels")
struct CompositeGraphNamingTests {
    /// A walk through `names` by `next`, each name a state.
    static func walk(_ names: [String]) -> StateGraph<String, String> {
        StateGraph(from: names[0], inputs: ["next"]) { (state: String, _: String) -> String? in
            names.firstIndex(of: state).flatMap { $0 + 1 < names.count ? names[$0 + 1] : nil }
        }
    }

    /// Parent and child states with the same names, parent names that read like prefixed child
    /// identifiers, cluster names or start points, and two regions with the same name.
    static func collidingDiagram() -> CompositeStateGraph<String, String> {
        let child = walk(["idle", "start", "running"])
        return walk(["idle", "running", "running idle", "cluster running", "start", "__start__idle"]).composite()
            .nesting(child, in: "idle")
            .nesting(child, in: "running", name: "x")
            .nesting(child, in: "running", name: "x")
    }

    @Test("Identifiers are unique across levels: children's are prefixed with their host's and region's")
    func collisions() {
        let diagram = Self.collidingDiagram()
        expectDiagram(
            diagram.mermaid(),
            """
            stateDiagram-v2
                state "idle" as idle {
                    state "idle" as idle__idle
                    state "start" as idle__start
                    state "running" as idle__running
                    [*] --> idle__idle
                    idle__idle --> idle__start : next
                    idle__start --> idle__running : next
                }
                state "running" as running {
                    state "x" as running__x {
                        state "idle" as running__x__idle
                        state "start" as running__x__start
                        state "running" as running__x__running
                        [*] --> running__x__idle
                        running__x__idle --> running__x__start : next
                        running__x__start --> running__x__running : next
                    }
                    --
                    state "x" as running__x_2 {
                        state "idle" as running__x_2__idle
                        state "start" as running__x_2__start
                        state "running" as running__x_2__running
                        [*] --> running__x_2__idle
                        running__x_2__idle --> running__x_2__start : next
                        running__x_2__start --> running__x_2__running : next
                    }
                }
                state "running idle" as running_idle
                state "cluster running" as cluster_running
                state "start" as start
                state "__start__idle" as start_idle
                [*] --> idle
                idle --> running : next
                running --> running_idle : next
                running_idle --> cluster_running : next
                cluster_running --> start : next
                start --> start_idle : next
            """, named: "composite-collisions.mmd")
        expectDiagram(
            diagram.dot(name: "collisions"),
            """
            digraph "collisions" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                subgraph cluster_idle {
                    label="";
                    style="rounded,dashed";
                    idle [label="idle"];
                    __start__idle [shape=point, label=""];
                    idle__idle [label="idle"];
                    idle__start [label="start"];
                    idle__running [label="running"];
                    __start__idle -> idle__idle;
                    idle__idle -> idle__start [label="next"];
                    idle__start -> idle__running [label="next"];
                }
                subgraph cluster_running {
                    label="";
                    style="rounded,dashed";
                    running [label="running"];
                    subgraph cluster_running__x {
                        label="x";
                        style=rounded;
                        __start__running__x [shape=point, label=""];
                        running__x__idle [label="idle"];
                        running__x__start [label="start"];
                        running__x__running [label="running"];
                        __start__running__x -> running__x__idle;
                        running__x__idle -> running__x__start [label="next"];
                        running__x__start -> running__x__running [label="next"];
                    }
                    subgraph cluster_running__x_2 {
                        label="x";
                        style=rounded;
                        __start__running__x_2 [shape=point, label=""];
                        running__x_2__idle [label="idle"];
                        running__x_2__start [label="start"];
                        running__x_2__running [label="running"];
                        __start__running__x_2 -> running__x_2__idle;
                        running__x_2__idle -> running__x_2__start [label="next"];
                        running__x_2__start -> running__x_2__running [label="next"];
                    }
                }
                running_idle [label="running idle"];
                cluster_running [label="cluster running"];
                start [label="start"];
                start_idle [label="__start__idle"];
                __start -> idle;
                idle -> running [label="next"];
                running -> running_idle [label="next"];
                running_idle -> cluster_running [label="next"];
                cluster_running -> start [label="next"];
                start -> start_idle [label="next"];
            }
            """, named: "composite-collisions.dot")
    }

    @Test("Children's labels and region names are escaped as the parent's are")
    func escaping() {
        let child = Self.walk([#"say "hi""#, "two\nlines", #"a: b; c # d {e} \ f"#])
        let diagram = Self.walk(["host: #1", "end"]).composite()
            .nesting(child, in: "host: #1", name: #"tasks["x"] {1}"#, inputName: { "\($0): \"go\"" })
        expectDiagram(
            diagram.mermaid(),
            """
            stateDiagram-v2
                state "host#58; #35;1" as host_1 {
                    state "tasks[#quot;x#quot;] #123;1#125;" as host_1__tasks_x_1 {
                        state "say #quot;hi#quot;" as host_1__tasks_x_1__say_hi
                        state "two<br>lines" as host_1__tasks_x_1__two_lines
                        state "a#58; b#59; c #35; d #123;e#125; #92; f" as host_1__tasks_x_1__a_b_c_d_e_f
                        [*] --> host_1__tasks_x_1__say_hi
                        host_1__tasks_x_1__say_hi --> host_1__tasks_x_1__two_lines : next#58; #quot;go#quot;
                        host_1__tasks_x_1__two_lines --> host_1__tasks_x_1__a_b_c_d_e_f : next#58; #quot;go#quot;
                    }
                }
                state "end" as end_2
                [*] --> host_1
                host_1 --> end_2 : next
            """, named: "composite-escaping.mmd")
        expectDiagram(
            diagram.dot(name: #"escaping "composite""#),
            #"""
            digraph "escaping \"composite\"" {
                rankdir=LR;
                node [shape=box, style=rounded];
                __start [shape=point, label=""];
                subgraph cluster_host_1 {
                    label="";
                    style="rounded,dashed";
                    host_1 [label="host: #1"];
                    subgraph cluster_host_1__tasks_x_1 {
                        label="tasks[\"x\"] {1}";
                        style=rounded;
                        __start__host_1__tasks_x_1 [shape=point, label=""];
                        host_1__tasks_x_1__say_hi [label="say \"hi\""];
                        host_1__tasks_x_1__two_lines [label="two\nlines"];
                        host_1__tasks_x_1__a_b_c_d_e_f [label="a: b; c # d {e} \\ f"];
                        __start__host_1__tasks_x_1 -> host_1__tasks_x_1__say_hi;
                        host_1__tasks_x_1__say_hi -> host_1__tasks_x_1__two_lines [label="next: \"go\""];
                        host_1__tasks_x_1__two_lines -> host_1__tasks_x_1__a_b_c_d_e_f [label="next: \"go\""];
                    }
                }
                end_2 [label="end"];
                __start -> host_1;
                host_1 -> end_2 [label="next"];
            }
            """#, named: "composite-escaping.dot")
    }
}
