import Foundation
import Remodel
import Testing
import TestSupport

/// `mapping-migrate` as a user runs it: the bundled example, exit statuses, messages.
@Suite struct MappingMigrateBinaryTests {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let root = Repository.root

    static let executable: URL? = MappingEvalProcess.executable.map {
        $0.deletingLastPathComponent().appendingPathComponent("mapping-migrate")
    }.flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil }

    func run(_ arguments: String...) throws -> Result { try run(arguments) }

    func run(_ arguments: [String]) throws -> Result {
        let executable = try #require(
            Self.executable, "mapping-migrate was not built; run `swift build --product mapping-migrate`")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = Self.root
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// A `models` folder in `directory` with the product-price example's two versions and
    /// no mapping file.
    static func productModels(in directory: URL) throws -> URL {
        let models = directory.appendingPathComponent("models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        for name in ["Products1.model.json", "Products2.model.json"] {
            try FileManager.default.copyItem(
                at: root.appendingPathComponent("mappings/product-price/\(name)"),
                to: models.appendingPathComponent(name))
        }
        return models
    }

    func temporaryCopy(of store: String) throws -> (URL, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mapping-migrate-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("Products.sqlite").path
        try FileManager.default.copyItem(atPath: Self.root.appendingPathComponent(store).path, toPath: path)
        return (directory, path)
    }

    @Test func runsTheBundledExample() throws {
        let (directory, store) = try temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        let check = try run("check", "--models", "mappings/product-price")
        #expect(check.status == 0)
        #expect(check.stdout == "2 model versions (Products1, Products2), 1 mapping files: no problems\n")
        let plan = try run("plan", store, "--models", "mappings/product-price")
        #expect(plan.stdout.hasPrefix("\(store) is at Products1\nProducts1 → Products2: "))
        let migrated = try run("run", store, "--models", "mappings/product-price")
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdout.contains("  ProductToProduct: 4 read, 4 created, 0 relationships set (SQL)\n"))
        #expect(FileManager.default.fileExists(atPath: store + ".Products1.bak"))
        let inspect = try run("inspect", store, "--models", "mappings/product-price")
        #expect(inspect.stdout == "\(store): model version Products2 (by its version hashes)\n  Product: 4\n")
        let again = try run("run", store, "--models", "mappings/product-price")
        #expect(again.status == 0)
        #expect(again.stdout == "\(store) is already at Products2; nothing to do\n")
    }

    @Test func badInputExitsWithTwo() throws {
        let missing = try run("run", "/nonexistent/Products.sqlite", "--models", "mappings/product-price")
        #expect(missing.status == 2)
        #expect(missing.stderr == "mapping-migrate: no such store: /nonexistent/Products.sqlite\n")
        let noModels = try run("check")
        #expect(noModels.status == 2)
        #expect(noModels.stderr.contains("give the model versions with --models PATH"))
        let unknownVersion = try run(
            "plan", "mappings/product-price/Products1.sqlite", "--models", "mappings/product-price", "--to", "Products9"
        )
        #expect(unknownVersion.status == 2)
        #expect(
            unknownVersion.stderr
                == "mapping-migrate: no model version 'Products9'; the versions are Products1, Products2\n")
        let usage = try run("run")
        #expect(usage.status == 2)
        #expect(usage.stderr.hasPrefix("mapping-migrate: Missing expected argument '<store>'\n"), "\(usage.stderr)")
        #expect(
            noModels.stderr.hasPrefix("mapping-migrate: give the model versions with --models PATH"),
            "\(noModels.stderr)")
    }

    @Test func aFailedStepLeavesTheStoreAsItWas() throws {
        let (directory, store) = try temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        let models = try Self.productModels(in: directory)
        try Data(
            """
            {"sourceModel": "Products1", "destinationModel": "Products2", "entityMappings": [
              {"name": "ProductToProduct", "sourceEntity": "Product", "destinationEntity": "Product",
               "attributeMappings": {"price": "100 / $source.quantity"}}]}
            """.utf8
        ).write(to: models.appendingPathComponent("step.mapping.json"))
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let result = try run("run", store, "--models", models.path)
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "mapping-migrate: entity mapping \"ProductToProduct\", source Product Z_PK 4, 'price' = \"100 / $source.quantity\": 1:1: integer division by zero (100 / 0); divide by a double (100 / 0.0) for IEEE infinity\n"
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(left == ["Products.sqlite", "models"])
    }

    /// A mapping file that maps no step (a misspelt version, versions that are not
    /// consecutive) is an error in every command that plans, never skipped for an inferred
    /// step: what it says would not happen.
    @Test(arguments: [
        (
            #""sourceModel": "Product1", "destinationModel": "Products2""#,
            "sourceModel: no model version 'Product1'; did you mean 'Products1'? the versions are Products1, Products2"
        ),
        (
            #""sourceModel": "Products2", "destinationModel": "Products1""#,
            "maps Products2 → Products1, which is not a step of the chain (Products1 → Products2): it goes backwards; a mapping file maps one version to the next"
        )
    ])
    func aMappingFileThatMapsNoStepIsAnError(models header: String, message: String) throws {
        let (directory, store) = try temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        let models = try Self.productModels(in: directory)
        let file = models.appendingPathComponent("step.mapping.json")
        try Data(
            """
            {\(header), "entityMappings": [
              {"name": "ProductToProduct", "sourceEntity": "Product", "destinationEntity": "Product",
               "attributeMappings": {"price": "$source.price * 1.03"}}]}
            """.utf8
        ).write(to: file)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        for command in ["run", "plan"] {
            let result = try run(command, store, "--models", models.path)
            #expect(result.status == 2, "\(command)")
            #expect(
                result.stderr
                    == "mapping-migrate: a mapping file maps no step of the chain, so it would not be used:\n  \(file.path): \(message)\n",
                "\(command)")
        }
        let check = try run("check", "--models", models.path)
        #expect(check.status == 2)
        #expect(check.stderr.contains("\(file.path): \(message)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    /// The examples' fixture stores are what their seed files describe.
    @Test(arguments: [("product-price", "Products1"), ("person-name", "People1"), ("notes-chain", "Notes1")])
    func fixtureStoresMatchTheirSeeds(example: String, version: String) throws {
        let folder = Self.root.appendingPathComponent("mappings/\(example)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("seed-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fresh = directory.appendingPathComponent("fresh.sqlite").path
        let seeded = try run(
            "seed", fresh, "--models", folder.path, "--version", version, "--seed",
            folder.appendingPathComponent("\(version).seed.json").path)
        #expect(seeded.status == 0, "\(seeded.stderr)")
        let model = try #require(try ObjectModel.loadVersions(at: folder).first { $0.version == version })
        func dump(_ path: String) throws -> [String] {
            let context = ObjectContext(store: try Store.open(at: path, model: model, mode: .readOnly))
            return try model.entities.flatMap { entity in
                try context.fetch(FetchRequest(entityName: entity.name)).map { object in
                    "\(object.objectID) "
                        + entity.attributes.map { "\($0.name)=\(object[$0.name].formatDescription)" }.joined(
                            separator: " ")
                }
            }
        }
        #expect(try dump(folder.appendingPathComponent("\(version).sqlite").path) == dump(fresh))
        // The fixture carries what Core Data writes for its version.
        let metadata = try Store.metadata(at: folder.appendingPathComponent("\(version).sqlite").path)
        #expect(metadata.versionHashes == model.appleVersionHashes)
        #expect(metadata.versionHashesDigest == model.appleStoreDigest)
    }
}
