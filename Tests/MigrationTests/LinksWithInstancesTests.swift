import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// Relationships set in stage 1, with each instance, rather than in stage 2 (docs/engine.md,
/// "Relationships with the instances"): the store and the report must be those of the run
/// that sets them in stage 2, bit for bit, and the mappings that do not qualify must not
/// do it.
@Suite struct LinksWithInstancesTests {
    /// Owners and their pets, the same in both versions.
    static func pets(_ version: String) -> String {
        """
        {"version": "\(version)", "entities": {
          "Owner": {"attributes": {"name": "string"},
                    "relationships": {"pets": {"destination": "Pet", "inverse": "owner", "toMany": true}}},
          "Pet": {"attributes": {"name": "string", "photo": "binary"},
                  "relationships": {"owner": {"destination": "Owner", "inverse": "pets"}}}}}
        """
    }

    /// 40 owners and 90 pets: some pets have no owner, some owners no pets.
    static func makeStore(at path: String, model: ObjectModel) throws {
        let context = ObjectContext(store: try Store.create(at: path, model: model))
        var owners: [ManagedObject] = []
        for i in 0..<40 {
            let owner = try context.insert("Owner")
            try owner.setValue(.string("owner \(i)"), forKey: "name")
            owners.append(owner)
        }
        for i in 0..<90 {
            let pet = try context.insert("Pet")
            try pet.setValue(.string("pet \(i)"), forKey: "name")
            try pet.setValue(.data(Data(repeating: UInt8(i), count: 100 + i)), forKey: "photo")
            if i % 7 != 3 { try pet.setValue(.object(ObjectReference(owners[(i * 13) % 29])), forKey: "owner") }
            if i % 25 == 24 { try context.save() }
        }
        try context.save()
    }

    /// Owners made by `ownerType` (`custom` maps no relationship; `transform` re-links
    /// `pets` too), then pets, which re-link `owner` (or pets first).
    static func mapping(ownerType: String = "custom", petsFirst: Bool = false, ownerPolicy: String? = nil) throws
        -> MappingModel
    {
        let policy = ownerPolicy.map { #", "policy": "\#($0)""# } ?? ""
        let owners = """
            {"name": "OwnerToOwner", "type": "\(ownerType)", "sourceEntity": "Owner", "destinationEntity": "Owner",
             "attributeMappings": {"name": "$source.name"}\(policy)}
            """
        let pets = """
            {"name": "PetToPet", "type": "transform", "sourceEntity": "Pet", "destinationEntity": "Pet"}
            """
        let list = petsFirst ? [pets, owners] : [owners, pets]
        return try MigrationTests.mapping(
            #"{"sourceModel": "P1", "destinationModel": "P2", "entityMappings": [\#(list.joined(separator: ", "))]}"#)
    }

    /// A policy with a hook of its own, which the default's are not.
    final class Hooked: EntityMigrationPolicy {
        func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {}
    }

    /// The store and the report of a run, and whether PetToPet's stage 1 set its
    /// relationships.
    static func run(
        _ mapping: MappingModel, _ v1: ObjectModel, _ v2: ObjectModel, source: String, to path: String,
        pushdown: Bool, withInstances: Bool, policies: PolicyRegistry = PolicyRegistry()
    ) throws -> (PushdownDifferentialTests.Outcome, setWithInstances: Bool) {
        let manager = try MigrationManager(
            mapping: mapping, source: v1, destination: v2, policies: policies,
            options: MigrationOptions(chunkSize: 16, pushdown: pushdown))
        manager.setsLinksWithInstances = withInstances
        let report = try manager.migrateStore(from: source, to: path)
        let counts = report.entityMappings.map { [$0.sourceInstances, $0.destinationInstances, $0.relationshipsSet] }
        let pets = report.entityMappings.first { $0.name == "PetToPet" }
        return (
            .store(try PushdownDifferentialTests.dump(path), counts),
            pets?.execution?.interpretedAs?.contains("relationships are set with each instance") == true
        )
    }

    @Test(arguments: [false, true])
    func aToOneSetWithItsInstanceIsWhatStage2Sets(pushdown: Bool) throws {
        let v1 = try model(Self.pets("P1")), v2 = try model(Self.pets("P2"))
        let directory = try TemporaryDirectory()
        let source = directory.path("P1.sqlite")
        try Self.makeStore(at: source, model: v1)
        var policies = PolicyRegistry()
        policies.register("Hooked") { Hooked() }
        // (mapping, whether PetToPet qualifies): with SQL, the pets' stage 1 and links run
        // as SQL, so only the interpreter's run sets them in stage 1.
        let cases: [(String, MappingModel, Bool)] = [
            ("owners first, pets' inverse unmapped", try Self.mapping(), !pushdown),
            ("pets first: the owners are not made yet", try Self.mapping(petsFirst: true), false),
            ("the owners' mapping links the inverse", try Self.mapping(ownerType: "transform"), false),
            ("a policy with hooks on the owners", try Self.mapping(ownerPolicy: "Hooked"), false)
        ]
        for (n, (name, mapping, qualifies)) in cases.enumerated() {
            let (inStage2, setBefore) = try Self.run(
                mapping, v1, v2, source: source, to: directory.path("a\(n).sqlite"), pushdown: pushdown,
                withInstances: false, policies: policies)
            let (inStage1, set) = try Self.run(
                mapping, v1, v2, source: source, to: directory.path("b\(n).sqlite"), pushdown: pushdown,
                withInstances: true, policies: policies)
            #expect(!setBefore, "\(name)")
            #expect(set == qualifies, "\(name)")
            // `plan` says so before the run.
            let planned = MigrationManager.plannedExecutions(
                mapping, source: v1, destination: v2, policies: policies,
                options: MigrationOptions(pushdown: pushdown))
            #expect(planned.first { $0.entityMapping == "PetToPet" }?.execution.relationshipsWithInstances == qualifies)
            #expect(inStage1 == inStage2, "\(name)")
            // The links are there: every pet that had an owner has one.
            let linked = try Database(path: directory.path("b\(n).sqlite"), mode: .readOnly)
                .scalar("SELECT count(*) FROM ZPET WHERE ZOWNER IS NOT NULL")
            #expect(linked == .integer(90 - 13), "\(name)")
        }
    }

    /// mappings/item-images: each image is written with its item's key, once, where stage 2
    /// rewrote each image row (its blob included) to set it; also when the items' mapping
    /// links the inverse by the same source (as a mapping made in Xcode does), which then
    /// finds the link made. Not when it links the inverse otherwise.
    @Test(arguments: [
        nil,
        "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"ItemToImage\", $source)",
        "nil"
    ])
    func theImagesAreWrittenOnceWithTheirItems(itemsLinkTheirImage: String?) throws {
        let (v1, v2, original) = try ItemImagesTests.load()
        var mapping = original
        if let expression = itemsLinkTheirImage {
            mapping.entityMappings[0].relationshipMappings.append(
                PropertyMapping(name: "image", valueExpression: expression))
        }
        let qualifies = itemsLinkTheirImage != "nil"
        let directory = try TemporaryDirectory()
        let source = directory.path("Items.sqlite")
        _ = try ItemImagesTests.makeStore(at: source, model: v1, count: 30)
        func run(_ withInstances: Bool, _ name: String) throws -> (PushdownDifferentialTests.Outcome, MigrationReport) {
            let manager = try MigrationManager(mapping: mapping, source: v1, destination: v2)
            manager.setsLinksWithInstances = withInstances
            let report = try manager.migrateStore(from: source, to: directory.path(name))
            let counts = report.entityMappings.map {
                [$0.sourceInstances, $0.destinationInstances, $0.relationshipsSet]
            }
            return (.store(try PushdownDifferentialTests.dump(directory.path(name)), counts), report)
        }
        let (inStage2, before) = try run(false, "a.sqlite")
        let (inStage1, after) = try run(true, "b.sqlite")
        #expect(inStage1 == inStage2)
        #expect(before.entityMappings[1].execution?.interpretedAs?.contains("set with each instance") == false)
        #expect(after.entityMappings[1].execution?.interpretedAs?.contains("set with each instance") == qualifies)
        #expect(after.entityMappings[1].execution?.relationshipsWithInstances == qualifies)
        let planned = MigrationManager.plannedExecutions(mapping, source: v1, destination: v2)
        #expect(planned[1].execution.relationshipsWithInstances == qualifies)
        #expect(planned[1].execution.description.hasSuffix("; relationships set with the instances") == qualifies)
        #expect(after.entityMappings[1].relationshipsSet == 23)
    }
}
