import Automaton
import Dispatch

/// The video player's state in seed 003's Mealy machine.
struct Playback: Sendable, Equatable, CustomStringConvertible {
    var video: String?
    var isLoading = false
    var isPlaying = false

    var description: String {
        guard let video else { return "no video" }
        return isLoading ? "\(video) loading" : isPlaying ? "\(video) playing" : "\(video) paused"
    }
}

enum PlaybackInput: Sendable, Equatable, CustomStringConvertible {
    case select(String), loaded(String), play, pause

    var selected: String? { if case let .select(video) = self { video } else { nil } }
    var loadedVideo: String? { if case let .loaded(video) = self { video } else { nil } }

    var description: String {
        switch self {
        case let .select(video): "select(\(video))"
        case let .loaded(video): "loaded(\(video))"
        case .play: "play"
        case .pause: "pause"
        }
    }
}

/// A Mealy machine's output, postponed (seed 003): an effect that sends it as the next input, processed
/// once the current input has been.
func postpone(_ output: PlaybackInput) -> SignalProducer<PlaybackInput, Never> {
    SignalProducer(value: output)
}

/// Seed 003's mapper `(State, Input) -> (State, Output?)` as a table: each row gives the next state and,
/// as its effect, the output. Selecting a video outputs `loaded`, which outputs `play`; the last row keeps
/// the state, with no output, for every other input (the mapper's `default`).
@Sendable
func runMealyDemo() -> Bool {
    let scheduler = QueueScheduler(label: "demo.mealy")
    let automaton = Automaton<Playback, PlaybackInput>(
        state: Playback(),
        table: [
            \.selected | { _, video in Playback(video: video, isLoading: true) }
                | { _, input in postpone(.loaded(input.selected ?? "")) },
            \.loadedVideo | { state, video in video == state.video ? Playback(video: video) : nil }
                | postpone(.play),
            .play | { state, _ in
                state.isLoading || state.video == nil ? nil : Playback(video: state.video, isPlaying: true)
            },
            .pause | { state, _ in Playback(video: state.video, isLoading: state.isLoading) },
            any | { state, _ in state },
        ])
    return play(
        "player",
        automaton: automaton,
        scheduler: scheduler,
        script: [
            (.milliseconds(0), .play),  // nothing selected: kept as is, no output
            (.milliseconds(50), .select("intro")),  // outputs loaded(intro), which outputs play
            (.milliseconds(100), .pause),
        ],
        expectedReplies: [
            "success(play, no video => no video)",
            "success(select(intro), no video => intro loading)",
            "success(loaded(intro), intro loading => intro paused)",
            "success(play, intro paused => intro playing)",
            "success(pause, intro playing => intro paused)",
        ],
        expectedFinalState: Playback(video: "intro")
    )
}
