import ExpressionLanguage
import Foundation
import Migration
import ObjectGraph
import RemodelCLI
import Testing
import TestSupport

/// `:mapping` and `:map` in mapping-eval: what an entity mapping makes of a row is what a
/// real run writes for it, value for value.
@Suite struct MapCommandTests {
    /// Every source row of `example`'s fixture store through `mappingFile`, in the REPL and
    /// in a real run of the same step: every attribute agrees.
    @Test(arguments: [
        ("product-price", "Products1", "Products1_to_Products2.mapping.json", "ProductToProduct", "Product"),
        ("person-name", "People1", "expressions/People1_to_People2.mapping.json", "PersonToPerson", "Person")
    ])
    func mapShowsWhatARunWrites(
        example: String, version: String, mappingFile: String, entityMapping: String, entity: String
    ) throws {
        let folder = MappingMigrateBinaryTests.root.appendingPathComponent("mappings/\(example)")
        let fixture = folder.appendingPathComponent("\(version).sqlite").path
        let mappingPath = folder.appendingPathComponent(mappingFile)

        let session = EvalSession()
        #expect(session.execute(":open \(fixture) --models \(folder.path)").status == .success)
        let loaded = session.execute(":mapping \(mappingPath.path)")
        #expect(loaded.status == .success, "\(loaded.diagnostics)")
        #expect(loaded.output.contains(": \(version) → "))

        // The real run, into a copy.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("map-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("store.sqlite").path
        try FileManager.default.copyItem(atPath: fixture, toPath: copy)
        let models = try ObjectModel.loadVersions(at: folder)
        let mapping = try MappingModel.load(contentsOf: mappingPath)
        try StoreMigrator(models: models, mappings: [mapping]).migrate(storeAt: copy, to: mapping.destinationModel)
        let destination = try #require(models.first { $0.version == mapping.destinationModel })
        let migrated = ObjectContext(store: try Store.open(at: copy, model: destination, mode: .readOnly))

        let keys = try ObjectContext(store: try Store.open(at: fixture, model: models[0], mode: .readOnly))
            .fetch(FetchRequest(entityName: entity)).map(\.objectID.primaryKey)
        #expect(keys.count >= 4)
        for key in keys {
            let (_, properties) = try session.mapped(entityMapping, source: "\(entity)/\(key)")
            // The default policy keeps the source's key order: row k becomes object k.
            let object = try migrated.object(entityName: entity, primaryKey: key)
            for property in properties where destination.entity(named: entity)?.attribute(named: property.name) != nil {
                let value = try property.result.get()
                #expect(
                    value == object[property.name],
                    "\(entity)/\(key).\(property.name): :map \(value), run \(object[property.name])")
            }
        }
        let shown = session.execute(":map \(entityMapping) \(entity)/\(keys[0])")
        #expect(
            shown.output.hasPrefix("\(entityMapping) (transform) on \(entity)/\(keys[0]), into \(entity):\n"),
            "\(shown.output)")
    }

    /// `--jsonl` with `--store` and `--mapping`: `{"map": …}` requests, and `$manager`.
    @Test func jsonLinesMapRequests() throws {
        let folder = MappingMigrateBinaryTests.root.appendingPathComponent("mappings/product-price")
        let result = try MappingEvalProcess.run(
            [
                "--jsonl", "--store", "Products1.sqlite", "--models", ".", "--mapping",
                "Products1_to_Products2.mapping.json"
            ],
            stdin: #"""
                {"map": "ProductToProduct", "source": "Product/2"}
                {"expression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Product\", \"price > 10\"), $manager.sourceContext, YES)"}
                {"map": "ProductToProduct", "source": "Product/2", "extra": 1}

                """#, directory: folder)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(result.stderr)")
        #expect(
            lines.first?.hasPrefix(
                #"{"properties":[{"name":"price","expression":"$source.price * 1.03","value":19.055,"type":"double"},"#)
                == true)
        #expect(lines.dropFirst().first == #"{"value":2,"type":"integer"}"#)
        #expect(
            lines.last
                == #"{"error":{"kind":"request","message":"unknown member \"extra\"; a map request has \"map\" and \"source\"","line":null,"column":null}}"#
        )
        let without = try MappingEvalProcess.run(
            ["--jsonl"], stdin: #"{"map": "ProductToProduct", "source": "Product/2"}"# + "\n")
        #expect(
            without.stdout.contains(
                "no mapping is loaded; start mapping-eval --jsonl with --store STORE --models PATH --mapping FILE"))
    }

    @Test func mapSaysWhatItNeeds() throws {
        let session = EvalSession()
        #expect(
            session.execute(":mapping x.mapping.json").diagnostics.hasPrefix(
                "error: no store is open; :open STORE --models PATH first"))
        #expect(session.execute(":map ProductToProduct Product/1").diagnostics.hasPrefix("error: no mapping is loaded"))
        let folder = MappingMigrateBinaryTests.root.appendingPathComponent("mappings/product-price")
        _ = session.execute(":open \(folder.appendingPathComponent("Products1.sqlite").path) --models \(folder.path)")
        _ = session.execute(":mapping \(folder.appendingPathComponent("Products1_to_Products2.mapping.json").path)")
        #expect(
            session.execute(":map ProductToPerson Product/1").diagnostics
                == "error: the mapping has no entity mapping 'ProductToPerson'; it has ProductToProduct\n")
        #expect(
            session.execute(":map ProductToProduct Product").diagnostics.hasPrefix(
                "error: usage: :map ENTITYMAPPING [ENTITY/PK]"))
        // Without a row: the first rows the mapping reads, one line each.
        let rows = session.execute(":map ProductToProduct").output.split(separator: "\n").map(String.init)
        #expect(rows.first == "ProductToProduct: its first 4 source rows")
        #expect(rows.dropFirst().first?.hasPrefix("  Product/1  price=25.75 name=\"Kettle\"") == true)
    }

    /// A policy that marks the tags it makes, so that the test can see it ran.
    final class MarkingPolicy: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: ManagedObject, in mapping: EntityMapping, manager: MigrationManager
        ) throws {
            for tag in try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager) {
                guard case .string(let label) = tag["label"] else { continue }
                try tag.setValue(.string("*" + label), forKey: "label")
            }
        }
    }

    static func label(_ value: Value) -> String? {
        guard case .object(let reference) = value, let object = reference.object as? ManagedObject,
            case .string(let label) = object["label"]
        else {
            return nil
        }
        return label
    }

    /// With a mapping loaded, the lookups answer from a dry run of it, with the session's
    /// registered policies; without one they say to load one. The store is not changed.
    @Test func lookupsAnswerFromADryRun() throws {
        let directory = try TemporaryDirectory()
        let shop1 = """
            {"version": "Shop1", "entities": {
              "Order": {"attributes": {"code": "string"}, "relationships": {"tags": {"destination": "Tag", "inverse": "orders", "toMany": true}}},
              "Tag": {"attributes": {"label": "string"}, "relationships": {"orders": {"destination": "Order", "inverse": "tags", "toMany": true}}}}}
            """
        try Data(shop1.utf8).write(to: directory.url.appendingPathComponent("Shop1.model.json"))
        try Data(shop1.replacingOccurrences(of: "Shop1", with: "Shop2").utf8).write(
            to: directory.url.appendingPathComponent("Shop2.model.json"))
        let store = directory.path("shop.sqlite")
        let created = try Store.create(at: store, model: try ObjectModel(json: JSON.parse(shop1)))
        let context = ObjectContext(store: created)
        _ = try context.insertSeed(
            JSON.parse(
                """
                {"Tag": [{"$id": "gift", "label": "gift"}, {"$id": "rush", "label": "rush"}],
                 "Order": [{"code": "A1", "tags": [{"$ref": "gift"}, {"$ref": "rush"}]}, {"code": "B1", "tags": [{"$ref": "rush"}]}]}
                """))
        try context.save()
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let mapping = directory.path("Shop1_to_Shop2.mapping.json")
        try Data(
            #"""
            {"sourceModel": "Shop1", "destinationModel": "Shop2", "entityMappings": [
              {"name": "TagToTag", "type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag", "policy": "Marking"},
              {"name": "OrderToOrder", "type": "transform", "sourceEntity": "Order", "destinationEntity": "Order",
               "relationshipMappings": {"tags": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'TagToTag', $source.tags)"}}]}
            """#.utf8
        ).write(to: URL(fileURLWithPath: mapping))

        let session = EvalSession()
        session.policies.register("Marking") { MarkingPolicy() }
        #expect(session.execute(":open \(store) --models \(directory.url.path)").status == .success)
        let lookup =
            "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'TagToTag', $source.tags).label"
        #expect(session.execute(":source Order/1").status == .success)
        #expect(session.execute(lookup).diagnostics.contains("answers from a mapping: load one with :mapping FILE"))
        let loaded = session.execute(":mapping \(mapping)")
        #expect(loaded.status == .success, "\(loaded.diagnostics)")

        // The relationship mapping's lookup, answered by the dry run (its policy marked the tags).
        let (_, properties) = try session.mapped("OrderToOrder", source: "Order/1")
        let result = try #require(properties.first { $0.name == "tags" }?.result)
        let tags = try result.get()
        #expect(Set((tags.collectionElements ?? []).compactMap(Self.label)) == ["*gift", "*rush"])
        // And $manager in the REPL, once a mapping is loaded.
        let labels = try session.evaluate(lookup).value.collectionElements ?? []
        #expect(Set(labels.compactMap { if case .string(let s) = $0 { s } else { nil } }) == ["*gift", "*rush"])
        // An entity mapping with a policy shows what the policy made of the row there.
        let shown = session.execute(":map TagToTag Tag/1").output.split(separator: "\n").map(String.init)
        #expect(
            shown.dropFirst().prefix(3) == [
                "  its policy Marking made, in the mapping's dry run:",
                #"    Tag/1  label="*gift""#,
                "  its expressions, evaluated alone:"
            ], "\(shown)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)

        // A dry run that fails says why, on each lookup.
        let unregistered = EvalSession()
        _ = unregistered.execute(":open \(store) --models \(directory.url.path)")
        _ = unregistered.execute(":mapping \(mapping)")
        let (_, failed) = try unregistered.mapped("OrderToOrder", source: "Order/1")
        guard case .failure(let error)? = failed.first(where: { $0.name == "tags" })?.result else {
            Issue.record("the lookup did not fail")
            return
        }
        #expect(error.message.contains("the lookups answer from a dry run of the mapping, which failed"))
        #expect(error.message.contains("Marking"))
    }
}
