import Testing
import TestSupport

@testable import ExpressionLanguage

/// `mappingChildren`, the one structural rewrite the expression rewriters share: it
/// rebuilds every kind of node from what its children become, and gives nil where any
/// child does.
@Suite struct MappingChildrenTests {
    static func copy(_ e: FormatExpression) -> FormatExpression? { e.mappingChildren(copy, predicates: copy) }
    static func copy(_ p: FormatPredicate) -> FormatPredicate? { p.mappingChildren(copy, predicates: copy) }

    /// Rebuilt from themselves, the round trips' random trees come back as they were.
    @Test func aTreeRebuiltFromItsChildrenIsTheSameTree() throws {
        var generator = TreeGenerator(seed: 0x3C)
        for n in 0..<1_500 {
            let expression = generator.expression(depth: 1 + n % 6)
            #expect(try #require(Self.copy(expression)).structure == expression.structure, "\(expression)")
            let predicate = generator.predicate(depth: 1 + n % 5)
            #expect(try #require(Self.copy(predicate)).structure == predicate.structure, "\(predicate)")
        }
    }

    /// A rewrite of some kinds, the rest left to `mappingChildren`: key `a` of SELF
    /// renamed through arithmetic, TERNARY, SUBQUERY and FUNCTION calls (a variable's `a`
    /// kept); a variable it refuses makes the whole expression nil.
    @Test func aRewriterHandlesSomeKindsAndLeavesTheRest() throws {
        func renamed(_ e: FormatExpression) -> FormatExpression? {
            switch e.kind {
            case .keyPath(nil, let path) where path.first == "a":
                return FormatExpression(.keyPath(operand: nil, path: ["z"] + path.dropFirst()))
            case .variable("refused"): return nil
            default: return e.mappingChildren(renamed, predicates: renamedPredicate)
            }
        }
        func renamedPredicate(_ p: FormatPredicate) -> FormatPredicate? {
            p.mappingChildren(renamed, predicates: renamedPredicate)
        }
        func parsed(_ text: String) throws -> FormatExpression { try FormatParser(text).parseExpression() }
        let text = "TERNARY(a > 1, a.b * 2, FUNCTION(a, 'uppercaseString')) + SUBQUERY(c, $x, $x.a == a).@count"
        let result = try renamed(parsed(text))?.description
        #expect(
            result
                == #"TERNARY(z > 1, z.b * 2, FUNCTION(z, "uppercaseString")) + SUBQUERY(c, $x, $x.a == z).@count"#)
        #expect(try renamed(parsed("{1, -a, $refused}")) == nil)
    }
}
