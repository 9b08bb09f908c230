import ArgumentParser
import Foundation
import Remodel

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Migrate a store to a later model version (default: the newest).",
        discussion: """
            The store's version is detected (Remodel's stores by their version hashes, \
            Apple's by their schema) unless --from names it. Each step runs as its own \
            migration; if one fails, the store stays at the last completed version and \
            the failure names the entity mapping, the source row (Z_PK), the property and \
            its expression.
            """)

    @Argument(help: ArgumentHelp("The store to migrate (a Core Data SQLite file).", valueName: "store"))
    var store: String

    @OptionGroup var models: ModelOptions

    @Option(help: ArgumentHelp("The version to migrate to (default: the newest).", valueName: "version"))
    var to: String?

    @Option(help: ArgumentHelp("The store's version, when detection cannot tell.", valueName: "version"))
    var from: String?

    @Flag(help: "Do not keep the store as it was before each step.")
    var noBackup = false

    @Option(help: ArgumentHelp("Destination objects written per transaction.", valueName: "n"))
    var chunkSize = MigrationOptions().chunkSize

    func run() throws {
        try reporting {
            var migrator = try models.migrator(options: MigrationOptions(chunkSize: chunkSize))
            migrator.keepsBackup = !noBackup
            let steps = try badInput { () throws(MigrationError) in try migrator.plan(storeAt: store, from: from, to: to) }
            guard !steps.isEmpty else {
                print("\(store) is already at \(to ?? migrator.models.last!.version); nothing to do")
                return
            }
            for step in steps {
                for warning in step.warnings {
                    FileHandle.standardError.write(Data("\(MigrateEnvironment.current.commandName): warning: inferred \(step.source.version) → \(step.destination.version): \(warning)\n".utf8))
                }
            }
            let reports = try migrator.migrate(storeAt: store, from: from, to: to)
            for step in reports {
                print("\(step.source) → \(step.destination): \(String(format: "%.2f", step.report.seconds)) s")
                for mapping in step.report.entityMappings {
                    print("  \(mapping.name): \(mapping.sourceInstances) read, \(mapping.destinationInstances) created, \(mapping.relationshipsSet) relationships set")
                }
            }
            if !noBackup, let first = reports.first {
                print("backup of the store before the first step: \(store).\(first.source).bak")
            }
        }
    }
}

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check model versions and mapping files; change nothing.",
        discussion: """
            Every problem is printed, not just the first: the file, the JSON path (with the \
            entity mapping's name) and, inside an expression, the line and column, with the \
            expression quoted and a caret under the offending text.
            """)

    @OptionGroup var models: ModelOptions

    func run() throws {
        try reporting {
            let migrator = try models.migrator()
            let errors = migrator.check()
            if !errors.isEmpty {
                throw MigrateFailure.badInput("\(errors.count) problem\(errors.count == 1 ? "" : "s") in the mapping files:\n"
                    + errors.map { $0.rendered() }.joined(separator: "\n"))
            }
            print("\(migrator.models.count) model versions (\(migrator.models.map(\.version).joined(separator: ", "))), \(migrator.mappings.count) mapping files: no problems")
        }
    }
}

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show the steps a run would take; change nothing.")

    @Argument(help: ArgumentHelp("The store.", valueName: "store"))
    var store: String

    @OptionGroup var models: ModelOptions

    @Option(help: ArgumentHelp("The version to migrate to (default: the newest).", valueName: "version"))
    var to: String?

    @Option(help: ArgumentHelp("The store's version, when detection cannot tell.", valueName: "version"))
    var from: String?

    func run() throws {
        try reporting {
            let migrator = try models.migrator()
            let steps = try badInput { () throws(MigrationError) in try migrator.plan(storeAt: store, from: from, to: to) }
            let start = try from ?? badInput { () throws(MigrationError) in try migrator.version(ofStoreAt: store).version }
            print("\(store) is at \(start)")
            if steps.isEmpty { print("nothing to do") }
            for step in steps {
                let mapping = step.isInferred ? "inferred" : step.mapping.file ?? "mapping"
                print("\(step.source.version) → \(step.destination.version): \(mapping) (\(step.mapping.entityMappings.count) entity mappings)")
                for warning in step.warnings { print("  warning: \(warning)") }
            }
        }
    }
}

struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a store's version, entities and row counts.")

    @Argument(help: ArgumentHelp("The store.", valueName: "store"))
    var store: String

    @OptionGroup var models: ModelOptions

    func run() throws {
        try reporting {
            let migrator = try models.migrator()
            let model = try badInput { () throws(MigrationError) in try migrator.version(ofStoreAt: store) }
            let opened: Store
            do {
                opened = try Store.open(at: store, model: model, mode: .readOnly)
            } catch {
                throw MigrateFailure.failed("\(error)")
            }
            let context = ObjectContext(store: opened)
            print("\(store): model version \(model.version)")
            for entity in model.entities.sorted(by: { $0.name < $1.name }) {
                var request = FetchRequest(entityName: entity.name)
                request.includesSubentities = false
                let count = try context.count(request)
                print("  \(entity.name): \(count)")
            }
        }
    }
}

struct SeedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seed",
        abstract: "Create a store from a seed file of objects (for fixtures and tests).",
        discussion: """
            A seed file is a JSON object of entity name → array of objects, with \
            attribute values in the JSON forms of docs/language.md and relationships as \
            {"$ref": id} naming objects that have an "$id" (see docs/object-context.md):
              {"User": [{"$id": "ann", "userId": 1}],
               "Book": [{"title": "Emma", "user": {"$ref": "ann"}}]}
            """)

    @Argument(help: ArgumentHelp("The store to create (it must not exist).", valueName: "store"))
    var store: String

    @OptionGroup var models: ModelOptions

    @Option(help: ArgumentHelp("The model version of the new store (default: the newest).", valueName: "version"))
    var version: String?

    @Option(help: ArgumentHelp("The seed file.", valueName: "file"))
    var seed: String

    func run() throws {
        try reporting {
            let versions = try models.loadModels()
            guard let model = version.map({ v in versions.first { $0.version == v } }) ?? versions.last else {
                throw MigrateFailure.badInput("no model version '\(version ?? "")'; the versions are \(versions.map(\.version).joined(separator: ", "))")
            }
            guard let data = FileManager.default.contents(atPath: seed) else {
                throw MigrateFailure.badInput("cannot read the seed file \(seed)")
            }
            let json: JSON
            do {
                json = try JSON.parse(data)
            } catch {
                throw MigrateFailure.badInput("\(seed): invalid JSON at \(error)")
            }
            let created: Store
            do {
                created = try Store.create(at: store, model: model)
            } catch {
                throw MigrateFailure.badInput("\(error)")
            }
            do {
                let context = ObjectContext(store: created)
                try context.insertSeed(json)
                try context.save()
                print("created \(store) at \(model.version)")
            } catch {
                // Only the file made here is removed.
                MigrationManager.removeStoreFiles(at: store)
                throw MigrateFailure.badInput("\(seed): \(error)")
            }
        }
    }
}

/// Runs `body`; its failure is the user's input (a store that cannot be identified, a
/// version that does not exist), so it exits with status 2.
func badInput<T>(_ body: () throws(MigrationError) -> T) throws -> T {
    do {
        return try body()
    } catch {
        throw MigrateFailure.badInput(error.description)
    }
}
