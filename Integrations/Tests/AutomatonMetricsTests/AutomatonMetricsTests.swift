import Testing
@testable import AutomatonMetrics
