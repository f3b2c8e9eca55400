import Signals

/// The elements of an `.effects(...)` row effect (`SignalProducer.effects(_:)`), flattened, in row
/// order: the engine reads them back from the producer's directive (`EffectDirectiveBox.several`).
@usableFromInline
final class EffectList<Value: Sendable>: Sendable {
    @usableFromInline let elements: [SignalProducer<Value, Never>]

    @usableFromInline
    init(_ elements: [SignalProducer<Value, Never>]) {
        self.elements = elements
    }
}

extension SignalProducer where Error == Never {
    /// One row effect made of several: each element is an effect of its own, with its own directive,
    /// as if it were the row's only effect, and they start in row order.
    ///
    /// ```swift
    /// .checkout | .cart => .paying | .effects(
    ///     charge.keyed(Key.payment),
    ///     timer.keyed(Key.timeout, .latest),
    ///     .cancel(Key.browsing)
    /// )
    /// ```
    ///
    /// - Each element keeps its directive: a keyed element (`keyed(_:_:)`) is governed by its key and
    ///   policy; the keys of a `.cancel(keys)` element are cancelled, with the row's other
    ///   cancellations, before the new state and reply; an input forwarded to a child automaton
    ///   (`ChildAutomata.send(_:to:)`) is forwarded after the reply, at its place in row order. An
    ///   un-keyed `.empty` element is skipped, and a nested `.effects(...)` is flattened into its place.
    /// - The effects are numbered, and start, in row order, after the reply, on the processing thread;
    ///   `effectEvents` reports their `started` (or, for a `.first` element whose key runs, `dropped`)
    ///   events in that order. An element of a key that a later element of the same row replaces (the
    ///   later one's policy is `.latest`) is reported cancelled (`replaced`) with the row's other
    ///   cancellations, and never starts, as a `.queue` effect cancelled while it waits.
    /// - Un-keyed elements: under `.merge`, each is an ordinary effect. Under `.latest`, the row's
    ///   un-keyed elements make **one** effect of the tree, started at the place of the first of them
    ///   (as `SignalProducer.merge` of them): one number, one `started` and one end, replaced together
    ///   by the next successful input at their level; an input any of them sends is an input of that
    ///   effect (its successful inputs replace what the previous one started, whichever element sent it).
    /// - A value an element's start handler sends at once is processed only once every effect of the
    ///   row has started, in the order the values were sent, never before a later element starts.
    ///
    /// `.effects()` of no element, or of only un-keyed `.empty` ones, is `.empty`; `.effects(effect)`
    /// of one element is that element. Apply `.effects` last: an operator applied to the result
    /// (`map`, `keyed`, ...) makes one producer of it, which runs the elements as
    /// `SignalProducer.merge` does, with no directive of theirs (as for any keyed producer).
    @inlinable
    public static func effects(_ effects: SignalProducer...) -> SignalProducer {
        self.effects(effects)
    }

    /// One row effect made of `effects`, in order: see `effects(_:)`.
    @inlinable
    public static func effects<Effects: Sequence>(_ effects: Effects) -> SignalProducer
    where Effects.Element == SignalProducer {
        var elements: [SignalProducer] = []
        for effect in effects {
            if let nested = effect.directiveBox?.several {
                elements.append(contentsOf: unsafeDowncast(nested, to: EffectList<Value>.self).elements)
            } else if !(effect.isEmpty && !effect.hasDirective) {
                elements.append(effect)
            }
        }
        switch elements.count {
        case 0: return .empty
        case 1: return elements[0]
        default:
            return SignalProducer.merge(elements).attaching(EffectDirectiveBox(.several(EffectList(elements))))
        }
    }
}
