/// A line-by-line comparison of what was expected with what happened, as the testers report it:
/// `header`, then `(− expected, + actual)`, then one line per element: `  ` for one in both, `−` for one
/// expected but missing, `+` for one that happened but was not expected.
///
/// Calls `==` and `describe` on the elements (user code): call it with no lock held.
func lineDifference<Element: Equatable>(
    expected: [Element], actual: [Element], header: String, describe: (Element) -> String
) -> String {
    var lines = [header, "(− expected, + actual)"]
    var expectedIndex = 0
    var actualIndex = 0
    while expectedIndex < expected.count || actualIndex < actual.count {
        if expectedIndex < expected.count, actualIndex < actual.count,
            expected[expectedIndex] == actual[actualIndex]
        {
            lines.append("  \(describe(actual[actualIndex]))")
            expectedIndex += 1
            actualIndex += 1
        } else if expectedIndex < expected.count,
            !actual[actualIndex...].contains(expected[expectedIndex])
        {
            lines.append("− \(describe(expected[expectedIndex]))")
            expectedIndex += 1
        } else {
            lines.append("+ \(describe(actual[actualIndex]))")
            actualIndex += 1
        }
    }
    return lines.joined(separator: "\n")
}
