import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// Inference over the consecutive versions of the real projects' models in the shared
/// fixtures: every step infers, and the inferred mapping checks clean except where a new
/// required attribute has no default (those steps have mapping models in their projects).
@Suite struct FixtureInferenceTests {
    /// Steps whose inferred mapping does not check, with the properties nothing gives a value.
    static let notInferable: [String: [String]] = [
        "AltStore → AltStore 2": ["iconURL", "screenshotURLs"],
        "AltStore 2 → AltStore 3": ["installedDate"],
        "AltStore 12 → AltStore 13": ["appBundleID", "permission", "sourceID", "buildVersion", "buildVersion"],
        "MWKCoreDataTests2 → MWKCoreDataTests3": ["firstName", "lastName"]
    ]

    @Test func everyStepInfersOrHasAMappingModel() throws {
        guard SharedFixtures.isAvailable else { try Test.cancel(SharedFixtures.missingMessage) }
        var found: [String: [String]] = [:]
        var steps = 0
        for versions in try RealModelsDifferentialTests.modelFolders() {
            for (source, destination) in zip(versions, versions.dropFirst()) {
                steps += 1
                let inference = MappingInference(from: source, to: destination)
                #expect(inference.errors.isEmpty, "\(source.version) → \(destination.version): \(inference.errors)")
                let problems = MigrationManager.check(inference.mapping, source: source, destination: destination)
                if !problems.isEmpty {
                    found["\(source.version) → \(destination.version)"] = problems.map {
                        $0.path.components(separatedBy: ".").last ?? $0.path
                    }
                }
            }
        }
        #expect(steps == 29)
        #expect(found == Self.notInferable)
    }
}
