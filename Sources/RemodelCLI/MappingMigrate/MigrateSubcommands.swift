import ArgumentParser
import Foundation
import Remodel

struct CheckCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "check",
            abstract: "Check model versions and mapping files; change nothing.",
            discussion: """
                Every mapping file is checked against its two models and the registered \
                policies, and every step between consecutive versions that no mapping file \
                maps is checked through its inferred mapping. Every problem is printed, not \
                just the first: the file, the JSON path (with the entity mapping's name) \
                and, inside an expression, the line and column, with the expression quoted \
                and a caret under the offending text. Exit status 2 when there are problems.

                Example, from the repository's root: the notes-chain example's four versions, \
                its mapping file and its two inferred steps, with no problems:
                  $ cd mappings/notes-chain
                  $ \(MigrateEnvironment.current.commandName) check --models Notes.xcdatamodeld
                """)
    }

    @OptionGroup var models: ModelOptions

    func run() throws {
        try reporting {
            let migrator = try models.migrator()
            let errors = migrator.check()
            if !errors.isEmpty {
                let hint = StepNotes.unregisteredPolicies(migrator.mappings).map { "\n" + $0 } ?? ""
                throw MigrateFailure.badInput(
                    "\(errors.count) problem\(errors.count == 1 ? "" : "s") in the mapping files:\n"
                        + errors.map { $0.rendered() }.joined(separator: "\n") + hint)
            }
            // What the models carry and Remodel does not honour (docs/model-format.md).
            let warnings = migrator.models.flatMap { $0.warnings(file: $0.version) }
            for warning in warnings { print("warning: \(warning)") }
            let noted = warnings.isEmpty ? "" : " (\(warnings.count) warning\(warnings.count == 1 ? "" : "s") above)"
            print(
                "\(migrator.models.count) model versions (\(migrator.models.map(\.version).joined(separator: ", "))), \(migrator.mappings.count) mapping files: no problems\(noted)"
            )
        }
    }
}

struct PlanCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "plan",
            abstract: "Show the steps a run would take; change nothing.",
            discussion: """
                Prints the store's version and one line per step: its mapping file, or \
                "inferred" when no mapping file maps it, then the inferred mapping's \
                warnings and what it does not carry over, then one line per entity \
                mapping: whether it runs as SQL or through the interpreter, and why \
                (`run --no-pushdown` interprets them all). `run --dry-run` goes further: \
                it runs the steps into temporary files.

                Example, from the repository's root:
                  $ cd mappings/notes-chain
                  $ \(MigrateEnvironment.current.commandName) plan Notes1.sqlite --models Notes.xcdatamodeld --to Notes2
                  Notes1.sqlite is at Notes1
                  Notes1 → Notes2: inferred (2 entity mappings)
                    IEM_Transform_Folder: SQL
                      read as they are on well-typed rows: name
                    IEM_Transform_Note: SQL
                      read as they are on well-typed rows: body, priority, title, trashed
                      checks: priority in range
                """)
    }

    @Argument(help: ArgumentHelp("The store.", valueName: "store"))
    var store: String

    @OptionGroup var models: ModelOptions

    @OptionGroup var versions: VersionOptions

    func run() throws {
        try reporting {
            let migrator = try models.migrator()
            let target = try versions.to ?? models.defaultTarget(among: migrator.models)
            let steps = try badInput { () throws(MigrationError) in
                try migrator.plan(storeAt: store, from: versions.from, to: target)
            }
            let start =
                try versions.from
                ?? badInput { () throws(MigrationError) in try migrator.version(ofStoreAt: store).version }
            print("\(store) is at \(start)")
            if steps.isEmpty { print("nothing to do") }
            for (index, step) in steps.enumerated() {
                let mapping = step.isInferred ? "inferred" : step.mapping.file ?? "mapping"
                print(
                    "\(step.source.version) → \(step.destination.version): \(mapping) (\(step.mapping.entityMappings.count) entity mappings)"
                )
                for warning in step.warnings { print("  warning: \(warning)") }
                for note in step.mapping.notes { print("  note: \(note)") }
                if let dropped = StepNotes.notCarriedOver(step) { print("  note: \(dropped)") }
                let readsWhatTheRunWrote = StoreMigrator.readsAStoreTheRunWrote(steps, at: index)
                if readsWhatTheRunWrote && migrator.options.pushdown {
                    print(
                        "  note: reads the store the step before writes, whose values fit \(step.source.version): SQL reads them as they are"
                    )
                }
                printExecutions(
                    step.mapping, step.source, step.destination, migrator, wellTyped: readsWhatTheRunWrote, indent: "  "
                )
            }
            // Steps run as one (docs/engine.md, "Steps run as one"), and why a step
            // starts a pass of its own.
            for pass in migrator.passes(of: steps) {
                let first = steps[pass.steps.lowerBound]
                if let apart = pass.apart {
                    let previous = steps[pass.steps.lowerBound - 1]
                    let (name, before) = (
                        "\(first.source.version) → \(first.destination.version)",
                        "\(previous.source.version) → \(previous.destination.version)"
                    )
                    print("\(name) starts a new pass:")
                    print("  it cannot run after \(before), in the pass before: \(apart.after)")
                    if let reason = apart.before { print("  \(before) cannot run before it, in its pass: \(reason)") }
                }
                guard pass.steps.count > 1 else { continue }
                /// The steps at `indexes`, with what they do (`one`, or `several`).
                func part(_ indexes: [Int], _ one: String, _ several: String) -> String? {
                    guard !indexes.isEmpty else { return nil }
                    let names = indexes.map { "\(steps[$0].source.version) → \(steps[$0].destination.version)" }
                    return names.joined(separator: " and ") + " " + (indexes.count == 1 ? one : several)
                }
                let renaming = pass.steps.filter {
                    $0 != pass.base && !pass.computing.contains($0) && !pass.linking.contains($0)
                        && !pass.filtering.contains($0)
                }
                let drops = pass.dropping.contains(where: renaming.contains)
                let parts = [
                    part(
                        pass.computing.filter { $0 < pass.base }, "computes values the step after it reads",
                        "compute values the steps after them read"),
                    part(
                        pass.computing.filter { $0 > pass.base }, "computes values from what the step before it writes",
                        "compute values from what the steps before them write"),
                    part(
                        pass.filtering,
                        "copies only the rows its filter selects: in the pass where SQL tells which rows the step before fetches",
                        "copy only the rows their filters select: in the pass where SQL tells which rows the steps before fetch"
                    ),
                    part(
                        renaming, "only renames" + (drops ? " or drops properties" : ""),
                        "only rename" + (drops ? " or drop properties" : "")),
                    part(
                        pass.linking,
                        "links relationships through chains, which no step after it reads: in the pass where every key they follow names a row",
                        "link relationships through chains, which no step after them reads: in the pass where every key they follow names a row"
                    ),
                    part(
                        pass.inKeyOrder,
                        "puts ordered relationships in the order its links give (by key, or an owner's earlier members first): in the pass where the store holds them so already",
                        "put ordered relationships in the order their links give (by key, or an owner's earlier members first): in the pass where the store holds them so already"
                    )
                ].compactMap { $0 }
                let last = steps[pass.steps.upperBound - 1]
                print(
                    "one pass: \(first.source.version) → \(last.destination.version) "
                        + "(\(parts.joined(separator: "; ")); `run --step-by-step` runs each step on its own)"
                )
                // (What the pass runs: one mapping, from its first version to its last.)
                if let mapping = migrator.mapping(of: pass, in: steps) {
                    print("  as one mapping, \(first.source.version) → \(last.destination.version):")
                    printExecutions(
                        mapping, first.source, last.destination, migrator,
                        wellTyped: StoreMigrator.readsAStoreTheRunWrote(steps, at: pass.steps.lowerBound),
                        indent: "    ")
                }
            }
        }
    }

    /// How each entity mapping of `mapping` would run (as SQL or interpreted, and why),
    /// a line each, under `indent`.
    private func printExecutions(
        _ mapping: MappingModel, _ source: ObjectModel, _ destination: ObjectModel, _ migrator: StoreMigrator,
        wellTyped: Bool, indent: String
    ) {
        for (name, execution) in MigrationManager.plannedExecutions(
            mapping, source: source, destination: destination, policies: migrator.policies,
            options: migrator.options, sourceIsWellTyped: wellTyped)
        {
            guard execution.instancesAsSQL else {
                print("\(indent)\(name): \(execution)")
                continue
            }
            print("\(indent)\(name): SQL")
            if let reason = execution.relationshipsReason, !execution.relationshipsAsSQL {
                print("\(indent)  relationships interpreted: \(reason)")
            }
            // (What is asked of the source object costs a read of it per row.)
            let marked = { (names: [String]) in
                names.map { execution.evaluatedOnObjects.contains($0) ? "\($0) (on the source object)" : $0 }
                    .joined(separator: ", ")
            }
            if !execution.evaluated.isEmpty {
                print("\(indent)  evaluated per row: \(marked(execution.evaluated))")
            }
            if !execution.evaluatedWhereUndecided.isEmpty {
                print("\(indent)  evaluated where SQL cannot decide: \(marked(execution.evaluatedWhereUndecided))")
            }
            if !execution.readAsTheyAre.isEmpty {
                print(
                    "\(indent)  read as they are on well-typed rows: \(execution.readAsTheyAre.joined(separator: ", "))"
                )
            }
            if !execution.checks.isEmpty {
                print("\(indent)  checks: \(execution.checks.joined(separator: ", "))")
            }
        }
    }
}

struct InspectCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "inspect",
            abstract: "Show a store's version, entities and row counts.",
            discussion: """
                The version is told as Core Data tells it, and as `run` does: by the entity \
                version hashes in the store's metadata; only when they match no version, \
                by the store's tables and columns, which the first line then says, with \
                whether Core Data would open the store with that version without a \
                migration. --hashes lists the store's hashes against the version's, entity \
                by entity. --write-cached-model writes the model a store Core Data wrote \
                carries (Z_MODELCACHE) as a JSON model file, named as the file is: the way \
                back to a version whose model is lost. Mapping files are not read.

                Example, from the repository's root:
                  $ cd mappings/notes-chain
                  $ \(MigrateEnvironment.current.commandName) inspect Notes1.sqlite --models Notes.xcdatamodeld
                  Notes1.sqlite: model version Notes1 (by its version hashes)
                    Folder: 3
                    Note: 6
                """)
    }

    @Argument(help: ArgumentHelp("The store.", valueName: "store"))
    var store: String

    @OptionGroup var models: ModelOptions

    @Flag(help: "List the store's entity version hashes against the version's.")
    var hashes = false

    @Option(
        name: .customLong("write-cached-model"),
        help: ArgumentHelp(
            "Write the model the store carries (Z_MODELCACHE) to this JSON model file, its version named after the file (Model3.model.json: Model3); then inspect as usual.",
            valueName: "file"))
    var cachedModel: String?

    func run() throws {
        try reporting {
            // Only the models: a mappings folder with problems does not stop an inspection.
            let migrator = StoreMigrator(models: try models.loadModels(), mappings: [])
            // Read as it is, a WAL or journal folded in a copy: inspecting never changes a byte.
            let snapshot = try badInput { () throws(MigrationError) in try migrator.snapshot(ofStoreAt: store) }
            defer { snapshot.remove() }
            if let cachedModel { try Self.writeCachedModel(of: snapshot.path, to: cachedModel, store: store) }
            let identification = try badInput { () throws(MigrationError) in try migrator.identification(of: snapshot) }
            let model = identification.model
            let opened: Store
            do {
                opened = try Store.open(at: snapshot.path, model: model, mode: .readOnly)
            } catch {
                throw MigrateFailure.failed("\(error)".replacingOccurrences(of: snapshot.path, with: store))
            }
            let context = ObjectContext(store: opened)
            print("\(store): model version \(model.version) (\(Self.how(identification)))")
            for note in identification.notes { print("  note: \(note)") }
            if let note = StoreMatcher.modelCacheNote(
                storeAt: snapshot.path, metadata: opened.metadata, version: model)
            {
                print("  note: \(note)")
            }
            if let note = StoreMigrator.tablesNote((try? opened.tablesOutsideTheModel()) ?? []) {
                print("  note: \(note)")
            }
            let damage = (try? StoreValidator(store: opened).damage(limit: 10)) ?? []
            for row in damage { print("  damaged row: \(row)") }
            if hashes { for line in Self.hashLines(opened.metadata.versionHashes, model) { print("  \(line)") } }
            for entity in model.entities.sorted(by: { $0.name < $1.name }) {
                var request = FetchRequest(entityName: entity.name)
                request.includesSubentities = false
                let count = try context.count(request)
                print("  \(entity.name): \(count)")
            }
        }
    }
}

extension InspectCommand {
    /// Writes the model the store at `path` caches as a JSON model file at `file`, its
    /// version the file's name without `.model.json`.
    static func writeCachedModel(of path: String, to file: String, store: String) throws {
        let name = URL(fileURLWithPath: file).lastPathComponent
        let version = name.hasSuffix(".model.json") ? String(name.dropLast(".model.json".count)) : name
        let model: ObjectModel?
        do {
            model = try StoreModelCache.model(in: Database(path: path, mode: .readOnly), version: version)
        } catch {
            throw MigrateFailure.failed("\(error)".replacingOccurrences(of: path, with: store))
        }
        guard let model else {
            throw MigrateFailure.badInput(
                "\(store) carries no model (its Z_MODELCACHE is missing or empty: Core Data writes it in newer OS versions)"
            )
        }
        do {
            try Data((model.json.serialized(pretty: true) + "\n").utf8).write(to: URL(fileURLWithPath: file))
        } catch {
            throw MigrateFailure.failed("cannot write \(file): \(error.localizedDescription)")
        }
        let count = model.entities.count
        print("wrote the model \(store) carries to \(file): \(version), \(count) entit\(count == 1 ? "y" : "ies")")
        for warning in model.warnings(file: file) { print("  warning: \(warning.path): \(warning.message)") }
    }

    /// How the version was told, and whether Core Data would open the store with it.
    static func how(_ identification: StoreIdentification) -> String {
        let version = identification.model.version
        switch identification.method {
        case .versionHashes:
            return "by its version hashes"
        case .remodelHashes:
            return
                "by the version hashes an earlier Remodel wrote, which Core Data does not know: it would not open the store with \(version) without a migration"
        case .schema:
            return
                "by its tables and columns: its version hashes are not \(version)'s, so Core Data would not open it with \(version) without a migration"
        }
    }

    /// One line per entity: the store's hash, the version's, and whether they agree.
    static func hashLines(_ stored: [String: Data], _ model: ObjectModel) -> [String] {
        let ours = model.storeVersionHashes
        let names = Set(stored.keys).union(ours.keys).sorted()
        let width = names.map(\.count).max() ?? 0
        func short(_ hash: Data?) -> String {
            hash.map { $0.prefix(8).map { String(format: "%02x", $0) }.joined() }
                ?? "-".padding(toLength: 16, withPad: " ", startingAt: 0)
        }
        var lines = ["version hashes, store against \(model.version):"]
        for name in names {
            let verdict =
                switch (stored[name], ours[name]) {
                case let (s?, o?): s == o ? "same" : "differs"
                case (_?, nil): "only in the store"
                default: "only in the model"
                }
            lines.append(
                "  \(name.padding(toLength: width, withPad: " ", startingAt: 0))  \(short(stored[name]))  \(short(ours[name]))  \(verdict)"
            )
        }
        return lines
    }
}

struct SeedCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "seed",
            abstract: "Create a store from a seed file of objects (for fixtures and tests).",
            discussion: """
                A seed file is a JSON object of entity name → array of objects, with \
                attribute values in the JSON forms of docs/language.md and relationships as \
                {"$ref": id} naming objects that have an "$id" (see docs/object-context.md):
                  {"Folder": [{"$id": "work", "name": "Work"}],
                   "Note": [{"title": "Q3", "folder": {"$ref": "work"}}]}

                Example, from the repository's root: the notes-chain example's fixture store \
                is made from its seed file so:
                  $ cd mappings/notes-chain
                  $ \(MigrateEnvironment.current.commandName) seed /tmp/Notes1.sqlite --models . --version Notes1 \\
                      --seed Notes1.seed.json
                  created /tmp/Notes1.sqlite at Notes1
                """)
    }

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
                throw MigrateFailure.badInput(
                    "no model version '\(version ?? "")'; the versions are \(versions.map(\.version).joined(separator: ", "))"
                )
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
