// A headless stand-in for the few SwiftUI views that the SwiftUI article's screen uses (`View`,
// `VStack`, `Text`, `Button`, `ProgressView`, `.disabled(_:)`, `@ViewBuilder`), with SwiftUI's
// signatures for the forms the screen calls, so that the screen's code, which the README and the
// article show, is compiled and run on Linux verbatim (`SwiftUIArticleTests.swift`). It draws a view
// as lines of text and taps a button by its title; it is no part of the package.
//
// SwiftUI redraws a view when an `@Observable` property its `body` read changes: it evaluates `body`
// inside `withObservationTracking`. `draw(_:)` evaluates `body` the same way, so a test can check what
// a screen reads and when it would be redrawn.

/// A view: a leaf drawn by the stand-in, or a composition with a `body`.
@MainActor
protocol View {
    associatedtype Body: View
    @ViewBuilder var body: Body { get }
}

/// A leaf view: drawn as lines, with no `body` of its own.
@MainActor
protocol LeafView: View where Body == Never {
    func draw(into drawing: inout Drawing)
}

extension LeafView {
    var body: Never { return fatalError("A leaf view has no body") }  // `return`: no builder
}

extension Never: View {
    var body: Never { return fatalError("Never has no body") }
}

/// What a view drew: one line per leaf, and the actions of its enabled buttons, by title.
struct Drawing {
    var lines: [String] = []
    var actions: [String: @MainActor () -> Void] = [:]
    var isDisabled = false
}

@MainActor
@resultBuilder
enum ViewBuilder {
    static func buildExpression(_ view: some View) -> [any View] { [view] }
    static func buildBlock(_ parts: [any View]...) -> [any View] { parts.flatMap { $0 } }
    static func buildOptional(_ part: [any View]?) -> [any View] { part ?? [] }
    static func buildEither(first part: [any View]) -> [any View] { part }
    static func buildEither(second part: [any View]) -> [any View] { part }
    static func buildFinalResult(_ parts: [any View]) -> ViewList { ViewList(parts: parts) }
}

/// The views of a `@ViewBuilder` block, in order.
struct ViewList: LeafView {
    let parts: [any View]
    func draw(into drawing: inout Drawing) {
        for part in parts { drawView(part, into: &drawing) }
    }
}

struct VStack<Content: View>: LeafView {
    let content: Content
    init(@ViewBuilder content: () -> Content) { self.content = content() }
    func draw(into drawing: inout Drawing) { drawView(content, into: &drawing) }
}

struct Text: LeafView {
    let content: String
    init(_ content: some StringProtocol) { self.content = String(content) }
    func draw(into drawing: inout Drawing) { drawing.lines.append("Text: \(content)") }
}

struct Button: LeafView {
    let title: String
    let action: @MainActor () -> Void
    init(_ title: String, action: @escaping @MainActor () -> Void) {
        self.title = title
        self.action = action
    }
    func draw(into drawing: inout Drawing) {
        drawing.lines.append("Button: \(title)" + (drawing.isDisabled ? " (disabled)" : ""))
        if !drawing.isDisabled { drawing.actions[title] = action }
    }
}

struct ProgressView: LeafView {
    func draw(into drawing: inout Drawing) { drawing.lines.append("ProgressView") }
}

struct DisabledView<Content: View>: LeafView {
    let content: Content
    let isDisabled: Bool
    func draw(into drawing: inout Drawing) {
        let outer = drawing.isDisabled
        drawing.isDisabled = outer || isDisabled
        drawView(content, into: &drawing)
        drawing.isDisabled = outer
    }
}

extension View {
    func disabled(_ disabled: Bool) -> some View { DisabledView(content: self, isDisabled: disabled) }
}

@MainActor
private func drawView(_ view: any View, into drawing: inout Drawing) {
    if let leaf = view as? any LeafView {
        leaf.draw(into: &drawing)
    } else {
        drawView(view.body, into: &drawing)
    }
}

/// Draws `view`, as SwiftUI would: its `body`, evaluated now.
@MainActor
func draw(_ view: some View) -> Drawing {
    var drawing = Drawing()
    drawView(view, into: &drawing)
    return drawing
}
