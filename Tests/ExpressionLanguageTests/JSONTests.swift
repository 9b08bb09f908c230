import Testing
@testable import ExpressionLanguage
@Test func placeholder() {}
