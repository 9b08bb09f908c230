import ExpressionLanguage
import Foundation
import ObjectGraph
import Synchronization
import Testing
import TestSupport

@testable import Migration

/// The engine's stages, hooks, default policy and manager functions, on a small shop.
@Suite struct EngineTests {
    static let shop1 = try! model(
        """
        {"version": "Shop1", "entities": {
          "Customer": {"attributes": {"name": "string", "email": "string"},
                       "relationships": {"orders": {"destination": "Order", "inverse": "customer", "toMany": true}}},
          "Order": {"attributes": {"total": "double", "code": "string"},
                    "relationships": {"customer": {"destination": "Customer", "inverse": "orders"},
                                      "tags": {"destination": "Tag", "inverse": "orders", "toMany": true}}},
          "Tag": {"attributes": {"label": "string"},
                  "relationships": {"orders": {"destination": "Order", "inverse": "tags", "toMany": true}}}
        }}
        """)
    static let shop2 = try! model(
        """
        {"version": "Shop2", "entities": {
          "Customer": {"attributes": {"fullName": "string", "email": "string"},
                       "relationships": {"orders": {"destination": "Order", "inverse": "customer", "toMany": true},
                                         "favourite": {"destination": "Order", "inverse": "fan"}}},
          "Order": {"attributes": {"total": "double", "code": "string"},
                    "relationships": {"customer": {"destination": "Customer", "inverse": "orders"},
                                      "fan": {"destination": "Customer", "inverse": "favourite"},
                                      "tags": {"destination": "Tag", "inverse": "orders", "toMany": true}}},
          "Tag": {"attributes": {"label": "string"},
                  "relationships": {"orders": {"destination": "Order", "inverse": "tags", "toMany": true}}}
        }}
        """)
    static let seed = """
        {"Customer": [{"$id": "ann", "name": "Ann Lee", "email": "ann@example.com"},
                      {"$id": "bob", "name": "Bob", "email": null}],
         "Tag": [{"$id": "gift", "label": "gift"}, {"$id": "rush", "label": "rush"}],
         "Order": [{"total": 10.0, "code": "A1", "customer": {"$ref": "ann"}, "tags": [{"$ref": "gift"}]},
                   {"total": 25.5, "code": "A2", "customer": {"$ref": "ann"}, "tags": [{"$ref": "gift"}, {"$ref": "rush"}]},
                   {"total": 7.25, "code": "B1", "customer": {"$ref": "bob"}}]}
        """

    /// A mapping Shop1 → Shop2 whose entity mappings are `mappings` (JSON array text).
    static func shopMapping(_ mappings: String) throws -> MappingModel {
        try mapping(#"{"sourceModel": "Shop1", "destinationModel": "Shop2", "entityMappings": \#(mappings)}"#)
    }

    static let standard = """
        [{"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
          "attributeMappings": {"fullName": "$source.name"}},
         {"name": "TagToTag", "type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag"},
         {"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order"}]
        """

    /// Runs `mapping` on a fresh seeded Shop1 store; returns the destination's context.
    static func migrate(
        _ mapping: MappingModel, policies: PolicyRegistry = PolicyRegistry(),
        in directory: TemporaryDirectory, progress: ((MigrationProgress) -> Void)? = nil
    ) throws -> ObjectContext {
        let source = directory.path("shop.sqlite"), destination = directory.path("shop-2.sqlite")
        if !FileManager.default.fileExists(atPath: source) { try seededStore(at: source, model: shop1, seed: seed) }
        let manager = try MigrationManager(mapping: mapping, source: shop1, destination: shop2, policies: policies)
        try manager.migrateStore(from: source, to: destination, progress: progress)
        return ObjectContext(store: try Store.open(at: destination, model: shop2, mode: .readOnly))
    }

    static func strings(_ objects: [ManagedObject], _ key: String) -> [String] {
        objects.map { if case .string(let s) = $0[key] { s } else { "nil" } }.sorted()
    }

    static func related(_ object: ManagedObject, _ key: String, _ attribute: String) throws -> [String] {
        strings(
            (try object.value(forKey: key).collectionElements ?? (object[key].isNull ? [] : [object[key]])).compactMap(
                \.managedObject), attribute)
    }

    // MARK: - The default policy

    @Test func implicitMappingsCopyAttributesAndRelinkRelationships() throws {
        let directory = try TemporaryDirectory()
        let context = try Self.migrate(Self.shopMapping(Self.standard), in: directory)
        let customers = try context.fetch(FetchRequest(entityName: "Customer"))
        #expect(Self.strings(customers, "fullName") == ["Ann Lee", "Bob"])
        #expect(Self.strings(customers, "email") == ["ann@example.com", "nil"])
        let ann = try #require(customers.first { $0["fullName"] == "Ann Lee" })
        #expect(try Self.related(ann, "orders", "code") == ["A1", "A2"])
        let a2 = try #require(try context.fetch(FetchRequest(entityName: "Order", predicate: "code == 'A2'")).first)
        #expect(try Self.related(a2, "tags", "label") == ["gift", "rush"])
        #expect(try Self.related(a2, "customer", "fullName") == ["Ann Lee"])
    }

    @Test func toOneMappingsTakeAnObjectOrACollectionOfOne() throws {
        let directory = try TemporaryDirectory()
        // A customer's favourite: the destination of their first order (a collection of one).
        let m = try Self.shopMapping(
            """
            [{"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order"},
             {"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
              "attributeMappings": {"fullName": "$source.name"},
              "relationshipMappings": {"favourite": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'OrderToOrder', SUBQUERY($source.orders, $o, $o.code ENDSWITH '1'))"}}]
            """)
        let context = try Self.migrate(m, in: directory)
        let ann = try #require(
            try context.fetch(FetchRequest(entityName: "Customer", predicate: "fullName == 'Ann Lee'")).first)
        #expect(try Self.related(ann, "favourite", "code") == ["A1"])
        // The inverse one-to-one follows.
        let a1 = try #require(try context.fetch(FetchRequest(entityName: "Order", predicate: "code == 'A1'")).first)
        #expect(try Self.related(a1, "fan", "fullName") == ["Ann Lee"])
    }

    @Test func aToOneGivenSeveralObjectsFails() throws {
        let directory = try TemporaryDirectory()
        let m = try Self.shopMapping(
            """
            [{"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order"},
             {"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
              "relationshipMappings": {"favourite": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'OrderToOrder', $source.orders)"}}]
            """)
        let error = try #require(throws: MigrationError.self) { try Self.migrate(m, in: directory) }
        #expect(error.kind == .value)
        #expect(error.entityMapping == "CustomerToCustomer")
        #expect(error.property == "favourite")
        #expect(error.sourceEntity == "Customer" && error.sourceKey == 1)
        #expect(
            error.message
                == "More than one relationship destination for the to-one relationship 'favourite' (2 objects)")
        #expect(!FileManager.default.fileExists(atPath: directory.path("shop-2.sqlite")))
    }

    @Test func relationshipMappingsMustGiveDestinationObjects() throws {
        let directory = try TemporaryDirectory()
        let m = try Self.shopMapping(
            """
            [{"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order"},
             {"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
              "relationshipMappings": {"orders": "$source.orders"}}]
            """)
        let error = try #require(throws: MigrationError.self) { try Self.migrate(m, in: directory) }
        #expect(error.kind == .value)
        #expect(
            error.message.hasPrefix(
                "'orders' needs destination objects, but the expression gave the source object Order/"))
        #expect(error.message.contains("destinationInstancesForEntityMappingNamed:sourceInstances:"))
        let scalar = try Self.shopMapping(
            """
            [{"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
              "relationshipMappings": {"orders": "FUNCTION($source.name, 'uppercaseString')"}}]
            """)
        let second = try #require(throws: MigrationError.self) { try Self.migrate(scalar, in: directory) }
        #expect(
            second.message
                == "a relationship mapping must give objects, a collection of objects or nil; this one gave string")
    }

    @Test func toManyMappingsUniteWithWhatIsThere() throws {
        let directory = try TemporaryDirectory()
        // Both sides of Order.tags / Tag.orders are mapped: the union, no duplicates.
        let m = try Self.shopMapping(
            """
            [{"name": "TagToTag", "type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag"},
             {"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order",
              "relationshipMappings": {"tags": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'TagToTag', $source.tags)"}}]
            """)
        let context = try Self.migrate(m, in: directory)
        let gift = try #require(try context.fetch(FetchRequest(entityName: "Tag", predicate: "label == 'gift'")).first)
        #expect(try Self.related(gift, "orders", "code") == ["A1", "A2"])
        let a2 = try #require(try context.fetch(FetchRequest(entityName: "Order", predicate: "code == 'A2'")).first)
        #expect(try Self.related(a2, "tags", "label") == ["gift", "rush"])
    }

    @Test func plainCopiesAreRecognisedAndOnlyThey() throws {
        func copied(_ text: String) throws -> String? {
            EntityMappingRunner.copiedAttribute(try FormatExpression(parsing: text))
        }
        #expect(try copied("$source.name") == "name")
        #expect(try copied("FUNCTION($source, 'valueForKey:', 'name')") == "name")
        #expect(try copied("$source.customer.name") == nil)
        #expect(try copied("$source.orders.@count") == nil)
        #expect(try copied("$destination.name") == nil)
        #expect(try copied("$source.name + 1") == nil)
        #expect(try copied("FUNCTION($source, 'valueForKeyPath:', 'name')") == nil)
    }

    // MARK: - The manager's functions and variables

    @Test func mappingVariablesAreBound() throws {
        let directory = try TemporaryDirectory()
        let m = try Self.shopMapping(
            """
            [{"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
              "userInfo": {"suffix": " (migrated)"},
              "attributeMappings": {
                "fullName": "FUNCTION($source.name, 'stringByAppendingString:', $entityMapping.userInfo.suffix)",
                "email": {"valueExpression": "FUNCTION(FUNCTION($propertyMapping.name, 'stringByAppendingString:', ':'), 'stringByAppendingString:', $manager.sourceModel)",
                          "userInfo": {"note": "the property mapping's own name"}}}}]
            """)
        let context = try Self.migrate(m, in: directory)
        let customers = try context.fetch(FetchRequest(entityName: "Customer"))
        #expect(Self.strings(customers, "fullName") == ["Ann Lee (migrated)", "Bob (migrated)"])
        #expect(Self.strings(customers, "email") == ["email:Shop1", "email:Shop1"])
    }

    @Test func aFilteredStandardFetchMigratesOnlyWhatItSelects() throws {
        let directory = try TemporaryDirectory()
        let m = try Self.shopMapping(
            """
            [{"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order",
              "sourceExpression": "FETCH(FUNCTION($manager, \\"fetchRequestForSourceEntityNamed:predicateString:\\", \\"Order\\", \\"total > 8 AND code BEGINSWITH 'A'\\"), $manager.sourceContext, NO)"}]
            """)
        let context = try Self.migrate(m, in: directory)
        #expect(Self.strings(try context.fetch(FetchRequest(entityName: "Order")), "code") == ["A1", "A2"])
    }

    @Test func anyOtherSourceExpressionIsEvaluated() throws {
        let directory = try TemporaryDirectory()
        let m = try Self.shopMapping(
            """
            [{"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order",
              "sourceExpression": "SUBQUERY(FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Order', 'TRUEPREDICATE'), FUNCTION($manager, 'sourceContext'), NO), $o, $o.tags.@count > 0)"}]
            """)
        let context = try Self.migrate(m, in: directory)
        #expect(Self.strings(try context.fetch(FetchRequest(entityName: "Order")), "code") == ["A1", "A2"])
    }

    @Test func lookupsAcceptObjectsCollectionsNilAndEveryMapping() throws {
        let directory = try TemporaryDirectory()
        // nil as the mapping name looks in every mapping; a single object is accepted.
        let m = try Self.shopMapping(
            """
            [{"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
              "attributeMappings": {"fullName": "$source.name"}},
             {"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order",
              "relationshipMappings": {
                "customer": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', nil, $source.customer)",
                "fan": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'CustomerToCustomer', FUNCTION($manager, 'sourceInstancesForEntityMappingNamed:destinationInstances:', 'CustomerToCustomer', $destination.customer))"}}]
            """)
        let context = try Self.migrate(m, in: directory)
        let b1 = try #require(try context.fetch(FetchRequest(entityName: "Order", predicate: "code == 'B1'")).first)
        #expect(try Self.related(b1, "customer", "fullName") == ["Bob"])
        #expect(try Self.related(b1, "fan", "fullName") == ["Bob"])
    }

    @Test func destinationInstancesForSourceRelationshipFollowsTheMappingsOfItsEntities() throws {
        let directory = try TemporaryDirectory()
        let m = try Self.shopMapping(
            """
            [{"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
              "attributeMappings": {"fullName": "$source.name"}},
             {"name": "OrderToOrder", "type": "transform", "sourceEntity": "Order", "destinationEntity": "Order",
              "attributeMappings": {"code": "FUNCTION($entityPolicy, '_nonNilValueOrDefaultValueForAttribute:source:destination:', 'code', $source, $destination)"},
              "relationshipMappings": {
                "customer": "FUNCTION($manager, 'destinationInstancesForSourceRelationshipNamed:sourceInstances:', 'customer', FUNCTION($source, 'valueForKey:', 'customer'))",
                "tags": null}}]
            """)
        let context = try Self.migrate(m, in: directory)
        let a1 = try #require(try context.fetch(FetchRequest(entityName: "Order", predicate: "code == 'A1'")).first)
        #expect(try Self.related(a1, "customer", "fullName") == ["Ann Lee"])
        #expect(try Self.related(a1, "tags", "label") == [])
    }

    @Test func anUnknownMappingNameAtRunTimeIsAnError() throws {
        let directory = try TemporaryDirectory()
        let m = try Self.shopMapping(
            """
            [{"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order",
              "relationshipMappings": {"customer": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', FUNCTION('CustomerToCustomr', 'self'), $source.customer)"}}]
            """)
        let error = try #require(throws: MigrationError.self) { try Self.migrate(m, in: directory) }
        #expect(error.kind == .expression)
        #expect(error.message.contains("no entity mapping is named 'CustomerToCustomr'"))
    }

    // MARK: - Hooks, progress, cancellation

    final class Log: @unchecked Sendable {
        var lines: [String] = []
    }

    final class RecordingPolicy: EntityMigrationPolicy {
        let log: Log
        init(_ log: Log) { self.log = log }

        func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
            log.lines.append("\(mapping.name) begin \(manager.currentEntityMapping?.name ?? "-")")
        }
        func createDestinationInstances(
            forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            let created = try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)
            log.lines.append(
                "\(mapping.name) create \(source.objectID) -> \(created.map(\.objectID.description).joined(separator: ","))"
            )
        }
        func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            log.lines.append("\(mapping.name) endInstanceCreation")
        }
        func createRelationships(
            forDestination destination: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try defaultCreateRelationships(forDestination: destination, in: mapping, manager: manager)
            log.lines.append("\(mapping.name) relationships \(destination.objectID)")
        }
        func endRelationshipCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            log.lines.append("\(mapping.name) endRelationshipCreation")
        }
        func performCustomValidation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            log.lines.append("\(mapping.name) performCustomValidation")
        }
        func end(_ mapping: EntityMapping, manager: MigrationManager) throws {
            log.lines.append("\(mapping.name) end")
        }
    }

    /// How an interpreted stage 1 runs, chosen once per entity mapping, with why not faster.
    @Test func eachMappingSaysHowItsStageOneRan() throws {
        let directory = try TemporaryDirectory()
        var policies = PolicyRegistry()
        policies.register("Recording") { RecordingPolicy(Log()) }
        let m = try Self.shopMapping(
            """
            [{"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
              "attributeMappings": {"fullName": "$source.name"}},
             {"name": "TagToTag", "type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag", "policy": "Recording"},
             {"name": "OrderToOrder", "type": "transform", "sourceEntity": "Order", "destinationEntity": "Order",
              "attributeMappings": {"total": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'CustomerToCustomer', $source.customer).@count"}}]
            """)
        let source = directory.path("shop.sqlite"), destination = directory.path("shop-2.sqlite")
        try seededStore(at: source, model: Self.shop1, seed: Self.seed)
        let manager = try MigrationManager(
            mapping: m, source: Self.shop1, destination: Self.shop2, policies: policies,
            options: MigrationOptions(pushdown: false))
        let report = try manager.migrateStore(from: source, to: destination)
        #expect(
            report.entityMappings.map { $0.execution?.interpretedAs } == [
                "row copy",
                "objects (the policy Recording has its own hooks)",
                "rows (the source expression or an attribute mapping needs source objects)"
            ])
    }

    final class FailingPolicy: EntityMigrationPolicy {
        struct Refusal: Error, CustomStringConvertible { var description: String { "no tags today" } }
        func endInstanceCreation(forMapping mapping: EntityMapping, manager: MigrationManager) throws {
            throw Refusal()
        }
    }

    /// A hook's failure names the policy and the hook as the protocol declares it.
    @Test func aFailingHookIsNamedAsDeclared() throws {
        let directory = try TemporaryDirectory()
        var policies = PolicyRegistry()
        policies.register("TagPolicy") { FailingPolicy() }
        let m = try Self.shopMapping(
            #"[{"name": "TagToTag", "type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag", "policy": "TagPolicy"}]"#
        )
        let error = try #require(throws: MigrationError.self) { try Self.migrate(m, policies: policies, in: directory) }
        #expect(error.kind == .policy)
        #expect(
            error.description
                == #"entity mapping "TagToTag": TagPolicy.endInstanceCreation(forMapping:manager:) failed: no tags today"#
        )
    }

    @Test func hooksRunInCoreDatasOrder() throws {
        let directory = try TemporaryDirectory()
        let log = Log()
        var policies = PolicyRegistry()
        policies.register("Recording") { RecordingPolicy(log) }
        let m = try Self.shopMapping(
            """
            [{"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
              "policy": "Recording", "attributeMappings": {"fullName": "$source.name"}},
             {"name": "TagToTag", "type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag", "policy": "Recording"}]
            """)
        _ = try Self.migrate(m, policies: policies, in: directory)
        #expect(
            log.lines == [
                "CustomerToCustomer begin CustomerToCustomer",
                "CustomerToCustomer create Customer/1 -> Customer/1",
                "CustomerToCustomer create Customer/2 -> Customer/2",
                "CustomerToCustomer endInstanceCreation",
                "TagToTag begin TagToTag",
                "TagToTag create Tag/1 -> Tag/1",
                "TagToTag create Tag/2 -> Tag/2",
                "TagToTag endInstanceCreation",
                "CustomerToCustomer relationships Customer/1",
                "CustomerToCustomer relationships Customer/2",
                "CustomerToCustomer endRelationshipCreation",
                "TagToTag relationships Tag/1",
                "TagToTag relationships Tag/2",
                "TagToTag endRelationshipCreation",
                "CustomerToCustomer performCustomValidation",
                "CustomerToCustomer end",
                "TagToTag performCustomValidation",
                "TagToTag end"
            ])
    }

    @Test func progressRisesToOne() throws {
        let directory = try TemporaryDirectory()
        var fractions: [Double] = []
        var stages: [MigrationProgress.Stage] = []
        _ = try Self.migrate(Self.shopMapping(Self.standard), in: directory) { progress in
            fractions.append(progress.fraction)
            if stages.last != progress.stage { stages.append(progress.stage) }
        }
        #expect(fractions == fractions.sorted())
        #expect(fractions.last == 1.0)
        #expect(stages == [.createInstances, .createRelationships, .validate])
    }

    final class CancellingPolicy: EntityMigrationPolicy {
        var seen = 0
        func createDestinationInstances(
            forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)
            seen += 1
            if seen == 2 { manager.cancel("stopped by the test") }
        }
    }

    @Test func cancellingStopsAtTheNextHookAndLeavesNothing() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("shop.sqlite")
        try seededStore(at: source, model: Self.shop1, seed: Self.seed)
        let before = storeBytes(source)
        var policies = PolicyRegistry()
        policies.register("Cancelling") { CancellingPolicy() }
        let m = try Self.shopMapping(
            """
            [{"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order", "policy": "Cancelling"}]
            """)
        let error = try #require(throws: MigrationError.self) { try Self.migrate(m, policies: policies, in: directory) }
        #expect(error.kind == .cancelled)
        #expect(error.code == 134120)
        #expect(error.message == "stopped by the test")
        #expect(error.sourceKey == 2)
        #expect(!FileManager.default.fileExists(atPath: directory.path("shop-2.sqlite")))
        #expect(storeBytes(source) == before)
    }

    /// Installs a trigger in the new store that refuses the order coded A2, as a disk or a
    /// constraint might refuse a row deep inside a run.
    final class RefusingPolicy: EntityMigrationPolicy {
        func begin(_ mapping: EntityMapping, manager: MigrationManager) throws {
            try manager.destinationContext.database.execute(
                "CREATE TEMP TRIGGER refuse_a2 BEFORE INSERT ON ZORDER WHEN NEW.ZCODE = 'A2' BEGIN SELECT RAISE(ABORT, 'no A2 here'); END"
            )
        }
    }

    @Test(arguments: [true, false])
    func aSQLiteErrorKeepsItsCodeItsSQLTheMappingAndTheRow(pushdown: Bool) throws {
        let directory = try TemporaryDirectory()
        var policies = PolicyRegistry()
        policies.register("Refusing") { RefusingPolicy() }
        let m = try Self.shopMapping(
            """
            [{"name": "TagToTag", "type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag", "policy": "Refusing"},
             {"name": "OrderToOrder", "type": "copy", "sourceEntity": "Order", "destinationEntity": "Order"}]
            """)
        let source = directory.path("shop.sqlite"), destination = directory.path("shop-2.sqlite")
        try seededStore(at: source, model: Self.shop1, seed: Self.seed)
        let manager = try MigrationManager(
            mapping: m, source: Self.shop1, destination: Self.shop2, policies: policies,
            options: MigrationOptions(pushdown: pushdown))
        let error = try #require(throws: MigrationError.self) {
            try manager.migrateStore(from: source, to: destination)
        }
        // With pushdown the INSERT … SELECT fails first; the interpreter then runs the
        // mapping and meets the row.
        #expect(error.kind == .destinationStore)
        #expect(error.entityMapping == "OrderToOrder")
        #expect(error.sourceEntity == "Order" && error.sourceKey == 2)
        let sqlite = try #require(error.sqlite, "\(error)")
        #expect(sqlite.code == 19 && sqlite.extendedCode == 1811)  // SQLITE_CONSTRAINT_TRIGGER
        #expect(sqlite.message == "no A2 here")
        #expect(sqlite.sql?.hasPrefix("INSERT INTO ZORDER") == true, "\(sqlite.sql ?? "no SQL")")
        #expect(error.description.contains("no A2 here") && error.description.contains("Z_PK 2"))
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    @Test func validationFailuresNameTheObjectAndTheMapping() throws {
        let directory = try TemporaryDirectory()
        let strict = try model(
            """
            {"version": "Shop2", "entities": {
              "Customer": {"attributes": {"fullName": {"type": "string", "optional": false}, "email": "string"}}}}
            """)
        let source = directory.path("shop.sqlite"), destination = directory.path("shop-2.sqlite")
        try seededStore(at: source, model: Self.shop1, seed: Self.seed)
        // Bob has no email, so fullName (required) gets nil for him.
        let m = try mapping(
            """
            {"sourceModel": "Shop1", "destinationModel": "Shop2", "entityMappings": [
              {"name": "CustomerToCustomer", "type": "transform", "sourceEntity": "Customer", "destinationEntity": "Customer",
               "attributeMappings": {"fullName": "$source.email"}}]}
            """)
        let manager = try MigrationManager(mapping: m, source: Self.shop1, destination: strict)
        let error = try #require(throws: MigrationError.self) {
            try manager.migrateStore(from: source, to: destination)
        }
        #expect(error.kind == .validation)
        #expect(error.entityMapping == "CustomerToCustomer")
        #expect(error.message == "the new store fails validation: Customer/2: 'fullName' is required but has no value")
        #expect(!FileManager.default.fileExists(atPath: destination))
    }
}

extension EngineTests {
    /// A step that carries a Decimal attribute writes each value back as the double its
    /// column held (a store Core Data wrote holds the double nearest 19.99), interpreted
    /// and as SQL: a migration does not move a price by an ulp.
    @Test(arguments: [false, true])
    func aDecimalAttributeIsCarriedBitForBit(pushdown: Bool) throws {
        let a = try model(#"{"version": "A", "entities": {"Item": {"attributes": {"price": "decimal"}}}}"#)
        let b = try model(
            #"{"version": "B", "entities": {"Item": {"attributes": {"price": "decimal", "note": "string"}}}}"#)
        let prices = [19.99, 0.1, 1e-5, 860162.112142062, -2.5e-7, 1e20, 3]
        let directory = try TemporaryDirectory()
        let path = directory.path("Items.sqlite")
        let seed = prices.map { _ in #"{"price": 0}"# }.joined(separator: ", ")
        try seededStore(at: path, model: a, seed: #"{"Item": [\#(seed)]}"#)
        do {
            let database = try Database(path: path)
            for (index, price) in prices.enumerated() {
                try database.execute(
                    "UPDATE ZITEM SET ZPRICE = \(String(format: "%.17g", price)) WHERE Z_PK = \(index + 1)")
            }
        }
        var migrator = StoreMigrator(models: [a, b], mappings: [], options: MigrationOptions(pushdown: pushdown))
        migrator.keepsBackup = false
        _ = try migrator.migrate(storeAt: path)
        let database = try Database(path: path)
        let statement = try database.prepare("SELECT ZPRICE FROM ZITEM ORDER BY Z_PK")
        var read: [UInt64] = []
        while try statement.step() { read.append(statement.double(at: 0).bitPattern) }
        #expect(read == prices.map(\.bitPattern))
    }
}
