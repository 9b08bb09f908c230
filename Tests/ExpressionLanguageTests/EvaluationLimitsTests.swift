import Testing

@testable import ExpressionLanguage

/// The limits on values expressions make out of little (docs/language.md, "Limits"): the
/// check itself, at and past the limit; the functions that use it are fixtures
/// (functions.jsonl, fn-127), run at the default limits.
@Suite struct EvaluationLimitsTests {
    @Test func theChecksStopPastTheLimitsOnly() throws {
        try EvaluationLimits.check(stringLength: EvaluationLimits.maximumStringLength, "f:")
        try EvaluationLimits.check(collectionCount: EvaluationLimits.maximumCollectionCount, "f:")
        let string = #expect(throws: ExpressionError.self) {
            try EvaluationLimits.check(stringLength: EvaluationLimits.maximumStringLength + 1, "f:")
        }
        #expect(string?.kind == .range)
        #expect(
            string?.message
                == "f: would make a string of 268435457 characters, more than the limit of 268435456 (EvaluationLimits.maximumStringLength)"
        )
        let collection = #expect(throws: ExpressionError.self) {
            try EvaluationLimits.check(collectionCount: EvaluationLimits.maximumCollectionCount + 1, "f:")
        }
        #expect(
            collection?.message
                == "f: would make a collection of 67108865 elements, more than the limit of 67108864 (EvaluationLimits.maximumCollectionCount)"
        )
    }
}
