/// How an automaton runs the effects its transitions start: `.merge` or `.latest`.
///
/// A struct with static members, like `FlattenStrategy`, so that strategies can be added later without
/// breaking anyone's `switch`; unlike `FlattenStrategy` it has only the strategies an automaton
/// supports, so an unsupported one does not compile. Write it as `strategy: .latest` or
/// `strategy: .merge`.
public struct AutomatonStrategy: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Hashable, Sendable {
        case merge
        case latest
    }

    @usableFromInline let kind: Kind

    @inlinable
    init(_ kind: Kind) {
        self.kind = kind
    }

    /// Every effect runs until it ends; a new input cancels nothing.
    public static let merge = AutomatonStrategy(.merge)

    /// A successful input replaces the effect previously started at its level (BRIEF §5 rule 5): an
    /// outside input disposes the effect of the previous successful outside input and everything that
    /// effect started; an input emitted by effect E disposes only what E's previous inputs started,
    /// never E itself. The replaced effects are disposed before the new state and reply are emitted.
    /// Failed inputs cancel nothing.
    public static let latest = AutomatonStrategy(.latest)

    /// Not an automaton strategy: effects are not queued one after another.
    @available(
        *, unavailable,
        message:
            "an automaton runs effects under .merge or .latest; to run effects one after another, chain them in one effect with `then(_:)` or `concat`"
    )
    public static var concat: AutomatonStrategy { .merge }

    /// The strategy's name: `merge` or `latest`.
    public var description: String {
        switch kind {
        case .merge: "merge"
        case .latest: "latest"
        }
    }
}
