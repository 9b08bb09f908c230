import ExpressionLanguage
import Foundation
import ObjectGraph
import PersonNamePolicies
import Testing
import TestSupport

@testable import Migration

/// mappings/person-name: Person.name split into first and last name, with expressions
/// only and with a Swift policy.
@Suite struct PersonNameTests {
    static let folder = Repository.root.appendingPathComponent("mappings/person-name")

    static func migrate(_ variant: String, policies: PolicyRegistry) throws -> [[String: Value]] {
        let v1 = try ObjectModel.load(contentsOf: folder.appendingPathComponent("People1.model.json"))
        let v2 = try ObjectModel.load(contentsOf: folder.appendingPathComponent("People2.model.json"))
        let mapping = try MappingModel.load(
            contentsOf: folder.appendingPathComponent("\(variant)/People1_to_People2.mapping.json"))
        let directory = try TemporaryDirectory()
        let source = directory.path("People.sqlite"), destination = directory.path("People-2.sqlite")
        try seededStore(
            at: source, model: v1,
            seed: String(contentsOf: folder.appendingPathComponent("People1.seed.json"), encoding: .utf8))
        try MigrationManager(mapping: mapping, source: v1, destination: v2, policies: policies).migrateStore(
            from: source, to: destination)
        return try rows("Person", at: destination, model: v2, keys: ["firstName", "lastName", "email"])
    }

    static func names(_ rows: [[String: Value]]) -> [String] {
        rows.map { "\($0["firstName"]!.formatDescription) | \($0["lastName"]!.formatDescription)" }
    }

    @Test func expressionsSplitOnTheFirstSpace() throws {
        let rows = try Self.migrate("expressions", policies: PolicyRegistry())
        #expect(
            Self.names(rows) == [
                "Ada | Lovelace",
                "Grace | Brewster Hopper",
                "Plato | <null>",
                "Alan | Turing",
                "<null> | <null>",
                "Mary | Ann   Evans"
            ])
        #expect(
            rows.map { $0["email"]! } == [
                .string("ada@example.org"), .string("grace@example.org"), .null,
                .string("alan@example.org"), .string("nobody@example.org"),
                .string("george@example.org")
            ])
    }

    @Test func thePolicySplitsOnAnyWhitespace() throws {
        let rows = try Self.migrate("policy", policies: .personName)
        #expect(
            Self.names(rows) == [
                "Ada | Lovelace",
                "Grace | Brewster Hopper",
                "Plato | <null>",
                "Alan | Turing",
                "<null> | <null>",
                "Mary | Ann Evans"
            ])
    }

    @Test func theVariantsDifferOnlyWhereTheReadmeSays() throws {
        #expect(PersonNamePolicy.split("Ada  King   Lovelace") == ("Ada", "King Lovelace"))
        let expressions = try Self.migrate("expressions", policies: PolicyRegistry())
        let policy = try Self.migrate("policy", policies: .personName)
        let differing = zip(Self.names(expressions), Self.names(policy)).filter { $0 != $1 }
        #expect(differing.map { "\($0.0) ≠ \($0.1)" } == ["Mary | Ann   Evans ≠ Mary | Ann Evans"])
    }

    @Test func thePolicyVariantNeedsItsPolicyRegistered() throws {
        let v1 = try ObjectModel.load(contentsOf: Self.folder.appendingPathComponent("People1.model.json"))
        let v2 = try ObjectModel.load(contentsOf: Self.folder.appendingPathComponent("People2.model.json"))
        let mapping = try MappingModel.load(
            contentsOf: Self.folder.appendingPathComponent("policy/People1_to_People2.mapping.json"))
        let problems = MigrationManager.check(mapping, source: v1, destination: v2, policies: PolicyRegistry())
        #expect(
            problems.map(\.message).contains(
                "no policy named 'PersonNamePolicy' is registered; register a Swift stand-in for it: `policies.register(\"PersonNamePolicy\") { MyPolicy() }` (docs/engine.md, \"Custom policies\")"
            ))
    }
}
