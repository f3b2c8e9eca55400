/// How `flatMap` combines the inner streams it starts, and how an automaton runs its effects.
///
/// A struct with static members rather than an enum, so that strategies can be added without breaking
/// anyone's `switch`.
///
/// Under every strategy an inner stream that is interrupted ends quietly, as if it had completed: the
/// result is not interrupted, and goes on with the other inners. Only an interruption of the outer
/// stream, or disposal of the result, interrupts the result.
public struct FlattenStrategy: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Hashable, Sendable {
        case merge
        case latest
        case concat
    }

    @usableFromInline let kind: Kind

    @inlinable
    init(_ kind: Kind) {
        self.kind = kind
    }

    /// Every inner stream runs until it ends; their values are interleaved as they arrive. The result
    /// completes when the outer stream and every inner stream have completed.
    public static let merge = FlattenStrategy(.merge)

    /// Only the newest inner stream runs: the previous one is disposed **before** the next one starts,
    /// and every later event of a replaced inner stream, a late terminal event included, is ignored.
    /// The result completes when the outer stream and the current inner stream have completed.
    public static let latest = FlattenStrategy(.latest)

    /// Inner streams run one after another, in the order the outer stream sent them; each starts when
    /// the previous one completes. The result completes when the outer stream and every inner stream
    /// have completed.
    public static let concat = FlattenStrategy(.concat)

    /// The strategy's name: `merge`, `latest` or `concat`.
    public var description: String {
        switch kind {
        case .merge: return "merge"
        case .latest: return "latest"
        case .concat: return "concat"
        }
    }
}
