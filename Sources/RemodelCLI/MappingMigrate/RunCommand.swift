import ArgumentParser
import Foundation
import OrderedCollections
import Remodel

/// `run`: migrates a store to a later version, or with `--dry-run` shows what that would
/// do without touching it.
struct RunCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        let tool = MigrateEnvironment.current.commandName
        return CommandConfiguration(
            commandName: "run",
            abstract: "Migrate a store to a later model version (default: the current or newest one).",
            discussion: """
                The store's version is detected (Remodel's stores by their version hashes, \
                Apple's by their schema) unless --from names it. Each step runs through its \
                mapping file, or the inferred mapping when there is none, into a new file \
                that takes the store's place only when the step is complete; the store \
                before each step is kept as STORE.<version>.bak unless --no-backup is given. \
                If a step fails, the store stays at the last completed version and the \
                failure names the entity mapping, the source row (Z_PK), the property and \
                its expression.

                --dry-run runs the steps into temporary files instead and prints what each \
                entity mapping would do and a few objects of each entity after each step; \
                the store is not changed. Progress goes to standard error: a bar on a \
                terminal, a few plain lines otherwise. --json writes JSON lines to standard \
                output instead: progress events and a final result object \
                (docs/mapping-migrate.md, "JSON output").

                Example, from the repository's root, on the bundled notes-chain example \
                (Notes1 → Notes4: two inferred steps and one mapping file):
                  $ cd mappings/notes-chain
                  $ cp Notes1.sqlite /tmp/Notes.sqlite
                  $ \(tool) run /tmp/Notes.sqlite --models Notes.xcdatamodeld --dry-run
                  $ \(tool) run /tmp/Notes.sqlite --models Notes.xcdatamodeld \\
                      --to Notes2
                  $ \(tool) run /tmp/Notes.sqlite --models Notes.xcdatamodeld --json
                The first prints what each step would do and a few objects of each entity \
                after it, the second migrates to Notes2 (keeping \
                /tmp/Notes.sqlite.Notes1.bak), the third goes on to Notes4, in JSON lines.

                Exit status: 0 success (or nothing to do), 1 the migration failed (the store \
                is as it was, or at the last completed version), 2 bad input.
                """)
    }

    @Argument(help: ArgumentHelp("The store to migrate (a Core Data SQLite file).", valueName: "store"))
    var store: String

    @OptionGroup var models: ModelOptions

    @OptionGroup var versions: VersionOptions

    @Flag(help: "Run the steps into temporary files and report what they would do; the store is not changed.")
    var dryRun = false

    @Option(
        help: ArgumentHelp(
            "With --dry-run: the objects of each entity to show after each step (default: 3).", valueName: "n"))
    var samples: Int?

    @Flag(
        help:
            "Refuse a store with damaged rows (text in a number column, a row of no entity, a to-one pointing at no row) instead of warning and reading them as inspect does."
    )
    var strict = false

    @Flag(help: "Do not keep the store as it was before each step.")
    var noBackup = false

    @Flag(
        help:
            "Run every step on its own, each with its own backup, even a step that only renames what the step before it wrote (inferred, or by a mapping file that only copies) (which otherwise runs in one pass with it)."
    )
    var stepByStep = false

    @Option(help: ArgumentHelp("Destination objects written per transaction.", valueName: "n"))
    var chunkSize = MigrationOptions().chunkSize

    @Flag(help: "Run every entity mapping through the interpreter, none as SQL (see `plan`).")
    var noPushdown = false

    @Flag(help: "Write JSON lines to standard output: progress events and a final result object.")
    var json = false

    @Flag(name: [.short, .long], help: "Show no progress (the summary and errors are still printed).")
    var quiet = false

    func validate() throws {
        if let samples {
            guard dryRun else { throw ValidationError("--samples goes with --dry-run: a run shows no samples") }
            guard samples >= 0 else { throw ValidationError("--samples must be 0 or more") }
        }
        guard chunkSize > 0 else { throw ValidationError("--chunk-size must be 1 or more") }
    }

    func run() throws {
        let result = RunResult(store: store, dryRun: dryRun)
        do {
            try reporting { try migrate(result) }
        } catch let code as ExitCode {
            if json {
                result.status = code.rawValue == ExitStatus.badInput.rawValue ? "bad input" : "failed"
                result.exitCode = code.rawValue
                emit(result.json)
            }
            throw code
        }
        if json { emit(result.json) }
    }

    private func emit(_ json: JSON) {
        FileHandle.standardOutput.write(Data((json.serialized() + "\n").utf8))
    }

    private func migrate(_ result: RunResult) throws {
        do {
            try migrateRecording(result)
        } catch let failure as MigrateFailure {
            // A failed migration has put its own kind and code there already.
            if result.error == .null {
                result.error = [
                    "kind": failure.status == .badInput ? "badInput" : "failed", "message": .string(failure.description)
                ]
            }
            throw failure
        }
    }

    private func migrateRecording(_ result: RunResult) throws {
        let tool = MigrateEnvironment.current.commandName
        var migrator = try models.migrator(options: MigrationOptions(chunkSize: chunkSize, pushdown: !noPushdown))
        migrator.keepsBackup = !noBackup
        migrator.fusesSteps = !stepByStep
        migrator.refusesDamagedRows = strict
        let target = try versions.to ?? models.defaultTarget(among: migrator.models) ?? migrator.models.last!.version
        result.to = target
        let start =
            try versions.from
            ?? badInput { () throws(MigrationError) in try migrator.version(ofStoreAt: store).version }
        result.from = start
        let steps = try badInput { () throws(MigrationError) in
            try migrator.plan(storeAt: store, from: versions.from, to: target)
        }
        result.at = start
        if json {
            emit([
                "event": "plan", "store": .string(store), "dryRun": .bool(dryRun), "from": .string(start),
                "to": .string(target),
                "steps": .array(steps.map(Self.json(plan:)))
            ])
        }
        guard !steps.isEmpty else {
            // A run killed after its last step may have left its lock file: a dry run
            // changes nothing, a run cleans up as the library's migrate does.
            if !dryRun { migrator.removeLeftovers(ofStoreAt: store) }
            result.status = "nothing to do"
            if !json { print("\(store) is already at \(target); nothing to do" + newerHint(target, migrator.models)) }
            return
        }
        let outside = try badInput { () throws(MigrationError) in
            try migrator.tablesOutsideTheModel(ofStoreAt: store, at: steps[0].source.version)
        }
        if let note = StoreMigrator.tablesNote(outside) {
            FileHandle.standardError.write(Data("\(tool): note: \(note)\n".utf8))
        }
        // Damaged rows are looked for beside the steps (--strict refuses them before).
        let damage =
            strict
            ? nil
            : DamageScan(
                try badInput { () throws(MigrationError) in
                    try migrator.damageCheck(ofStoreAt: store, at: steps[0].source.version)
                })
        for step in steps {
            for warning in step.warnings {
                FileHandle.standardError.write(
                    Data(
                        "\(tool): warning: inferred \(step.source.version) → \(step.destination.version): \(warning)\n"
                            .utf8))
            }
            if let dropped = StepNotes.notCarriedOver(step) {
                FileHandle.standardError.write(
                    Data(
                        "\(tool): note: inferred \(step.source.version) → \(step.destination.version): \(dropped)\n"
                            .utf8))
            }
        }
        let display = ProgressDisplay(
            style: ProgressDisplay.automatic(json: json, quiet: quiet), steps: steps,
            write: { text in
                (self.json ? FileHandle.standardOutput : FileHandle.standardError).write(Data(text.utf8))
            })
        if !json && dryRun {
            print(
                "dry run: \(store) is at \(start); the \(steps.count == 1 ? "step runs" : "\(steps.count) steps run") into temporary files, and the store is not changed"
            )
        }
        do {
            if dryRun {
                // No signal handling: the store is only read, and Ctrl-C ends the dry run
                // where it is (its temporary files are in the temporary directory).
                let ran = try migrator.dryRun(
                    storeAt: store, from: versions.from, to: target, samples: samples ?? 3, progress: display.update)
                display.finish()
                damage?.warn(tool)
                result.steps = ran.map { Self.json(step: $0.step, report: $0.report, entities: $0.entities) }
                result.status = "dry run"
                if !json {
                    for step in ran { printReport(step.step, step.report, entities: step.entities) }
                    let total = ran.reduce(0) { $0 + $1.report.seconds }
                    print(
                        "dry run done: a run would take \(store) from \(start) to \(target) in \(Self.count(ran.count, "step")) "
                            + "(\(String(format: "%.2f", total)) s here); nothing was changed")
                }
            } else {
                // Ctrl-C and SIGTERM cancel the run; the store stays at the last completed version.
                let interruption = Interruption(cancelling: migrator.cancellation, store: store)
                defer { interruption.end() }
                let reports = try migrator.migrate(
                    storeAt: store, from: versions.from, to: target, progress: display.update)
                display.finish()
                damage?.warn(tool)
                result.steps = zip(steps, reports).map {
                    Self.json(step: $0, report: $1.report, entities: nil, fused: $1.isFused)
                }
                result.status = "migrated"
                let at = reports.last?.destination ?? start
                result.at = at
                // (A step run in one pass with the step before it has no backup of its own.)
                let passes = reports.indices.filter { $0 == 0 || reports[$0].pass != reports[$0 - 1].pass }
                let backups = noBackup ? [] : passes.map { "\(store).\(reports[$0].source).bak" }
                result.backups = backups
                if !json {
                    for (step, report) in zip(steps, reports) {
                        // A step run in another's pass names that step.
                        let base = reports.first { $0.pass == report.pass && !$0.isFused }
                        printReport(
                            step, report.report, entities: nil,
                            fusedWith: report.isFused ? base.map { "\($0.source) → \($0.destination)" } : nil)
                    }
                    let total = reports.reduce(0) { $0 + $1.report.seconds }
                    print(
                        "done: \(store) is at \(at) after \(Self.count(reports.count, "step")) (\(String(format: "%.2f", total)) s)"
                    )
                    if !backups.isEmpty {
                        let pass = backups.count == reports.count ? "step" : "pass"
                        print(
                            "the store before \(backups.count == 1 ? "the \(pass)" : "each \(pass)") is kept: \(backups.joined(separator: ", ")) (remove \(backups.count == 1 ? "it" : "them") when no longer needed)"
                        )
                    }
                }
            }
        } catch {
            display.finish()
            // (An interrupted run stops the scan and says nothing of it.)
            if error.kind == .cancelled { damage?.stop() } else { damage?.warn(tool) }
            var message = error.description
            if error.kind == .invalidMapping, let hint = StepNotes.unregisteredPolicies(steps.map(\.mapping)) {
                message += "\n" + hint
            }
            if dryRun {
                message += "\n(a dry run: \(store) was not changed)"
            } else if error.kind != .cancelled, let now = try? migrator.version(ofStoreAt: store).version {
                result.at = now
                if now != start {
                    message +=
                        "\n\(store) is at \(now): the steps before the failed one were completed; run again to continue from there"
                }
                if !noBackup, let from = steps.firstIndex(where: { $0.source.version == start }),
                    let to = steps.firstIndex(where: { $0.source.version == now })
                {
                    result.backups = steps[from..<to].map { "\(store).\($0.source.version).bak" }
                        .filter { FileManager.default.fileExists(atPath: $0) }
                }
            }
            result.error = RunResult.json(of: error, message: message)
            throw error.kind == .invalidMapping ? MigrateFailure.badInput(message) : MigrateFailure.failed(message)
        }
    }

    /// `; Notes5 is newer than the current version (--to Notes5)` when an .xcdatamodeld
    /// has versions after its current one.
    private func newerHint(_ target: String, _ versions: [ObjectModel]) -> String {
        guard self.versions.to == nil, let index = versions.firstIndex(where: { $0.version == target }),
            index + 1 < versions.count
        else { return "" }
        return " (the current version of \((try? models.modelsURL().lastPathComponent) ?? "the models"); "
            + "\(versions[(index + 1)...].map(\.version).joined(separator: ", ")) \(versions.count - index - 1 == 1 ? "is" : "are") newer: name one with --to)"
    }

    private func printReport(
        _ step: StoreMigrator.Step, _ report: MigrationReport, entities: [StoreMigrator.EntitySummary]?,
        fusedWith: String? = nil
    ) {
        let files = step.mapping.files.map { ($0 as NSString).lastPathComponent }
        let source = step.isInferred ? "inferred" : files.isEmpty ? "mapping" : files.joined(separator: " + ")
        print(
            "\(step.source.version) → \(step.destination.version) (\(source)): "
                + (fusedWith.map { "in one pass with \($0)" } ?? "\(String(format: "%.2f", report.seconds)) s"))
        for mapping in report.entityMappings {
            print(
                "  \(mapping.name): \(ProgressDisplay.grouped(mapping.sourceInstances)) read, \(ProgressDisplay.grouped(mapping.destinationInstances)) created, "
                    + "\(ProgressDisplay.grouped(mapping.relationshipsSet)) relationships set"
                    + (mapping.execution.map {
                        $0.instancesAsSQL
                            ? ($0.relationshipsAsSQL ? " (SQL)" : " (SQL, relationships interpreted)")
                            : ($0.relationshipsAsSQL
                                ? " (interpreted, relationships SQL)"
                                : $0.relationshipsWithInstances
                                    ? " (interpreted, relationships with the instances)" : " (interpreted)")
                    } ?? ""))
        }
        for entity in entities ?? [] {
            print("  \(entity.entity): \(ProgressDisplay.grouped(entity.count)) object\(entity.count == 1 ? "" : "s")")
            for sample in entity.samples { print("    \(sample)") }
        }
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    static func json(plan step: StoreMigrator.Step) -> JSON {
        [
            "source": .string(step.source.version), "destination": .string(step.destination.version),
            "mapping": .string(step.isInferred ? "inferred" : step.mapping.file ?? "mapping"),
            "entityMappings": .integer(Int64(step.mapping.entityMappings.count)),
            "warnings": .array(step.warnings.map { .string($0.description) })
        ]
    }

    static func json(
        step: StoreMigrator.Step, report: MigrationReport, entities: [StoreMigrator.EntitySummary]?, fused: Bool = false
    ) -> JSON {
        var object: JSON = [
            "source": .string(step.source.version), "destination": .string(step.destination.version),
            "mapping": .string(step.isInferred ? "inferred" : step.mapping.file ?? "mapping"),
            "fused": .bool(fused),
            "seconds": .double(ProgressDisplay.rounded(report.seconds, 4)),
            "entityMappings": .array(
                report.entityMappings.map { mapping in
                    var object: OrderedDictionary<String, JSON> = [
                        "name": .string(mapping.name), "read": .integer(Int64(mapping.sourceInstances)),
                        "created": .integer(Int64(mapping.destinationInstances)),
                        "relationshipsSet": .integer(Int64(mapping.relationshipsSet)),
                        "seconds": .double(ProgressDisplay.rounded(mapping.seconds, 4))
                    ]
                    if let execution = mapping.execution {
                        // How it ran (docs/pushdown.md): SQL or the interpreter, and why.
                        object["instancesAsSQL"] = .bool(execution.instancesAsSQL)
                        object["relationshipsAsSQL"] = .bool(execution.relationshipsAsSQL)
                        if execution.relationshipsWithInstances { object["relationshipsWithInstances"] = .bool(true) }
                        if let reason = execution.instancesReason { object["instancesReason"] = .string(reason) }
                        if !execution.instancesAsSQL, let strategy = execution.interpretedAs {
                            object["interpretedAs"] = .string(strategy)
                        }
                        if let reason = execution.relationshipsReason {
                            object["relationshipsReason"] = .string(reason)
                        }
                        object["evaluations"] = .integer(Int64(execution.evaluations))
                    }
                    return .object(object)
                })
        ]
        if let entities, case .object(var members) = object {
            members["entities"] = .array(
                entities.map { entity in
                    [
                        "entity": .string(entity.entity), "count": .integer(Int64(entity.count)),
                        "samples": .array(entity.samples.map(\.json))
                    ]
                })
            object = .object(members)
        }
        return object
    }
}

/// What `run` did, for `--json`'s final result object.
final class RunResult {
    let store: String
    let dryRun: Bool
    var status = "failed"
    var exitCode: Int32 = 0
    var from: String?
    var to: String?
    var at: String?
    var steps: [JSON] = []
    var backups: [String] = []
    var error: JSON = .null

    init(store: String, dryRun: Bool) {
        self.store = store
        self.dryRun = dryRun
    }

    /// `--json`'s `error` for a failed migration: its kind, Core Data's code, the message,
    /// and, when the failure began in SQLite, SQLite's codes and statement.
    static func json(of error: MigrationError, message: String) -> JSON {
        var members: OrderedDictionary<String, JSON> = [
            "kind": .string(error.kind.rawValue), "code": .integer(Int64(error.code)),
            "message": .string(message)
        ]
        if let sqlite = error.sqlite {
            members["sqlite"] = [
                "code": .integer(Int64(sqlite.code)), "extendedCode": .integer(Int64(sqlite.extendedCode)),
                "message": .string(sqlite.message), "sql": sqlite.sql.map(JSON.string) ?? .null
            ]
        }
        return .object(members)
    }

    var json: JSON {
        [
            "event": "result", "status": .string(status), "exitCode": .integer(Int64(exitCode)),
            "store": .string(store),
            "dryRun": .bool(dryRun), "from": from.map(JSON.string) ?? .null, "to": to.map(JSON.string) ?? .null,
            "at": at.map(JSON.string) ?? .null, "steps": .array(steps), "backups": .array(backups.map(JSON.string)),
            "error": error
        ]
    }
}

/// Notes on inferred steps that a user should read before running them.
enum StepNotes {
    /// The source properties and entities an inferred step does not carry over (nothing
    /// in the destination has their name or renaming identifier), or nil. A relationship
    /// whose inverse is carried over is not listed: its links are kept through the inverse.
    static func notCarriedOver(_ step: StoreMigrator.Step) -> String? {
        guard step.isInferred else { return nil }
        var dropped: [String] = []
        var droppedRelationships: [(entity: EntityDescription, relationship: RelationshipDescription)] = []
        var carried: Set<String> = []
        for mapping in step.mapping.entityMappings {
            guard let sourceName = mapping.sourceEntity, let source = step.source.entity(named: sourceName) else {
                continue
            }
            guard let destinationName = mapping.destinationEntity,
                let destination = step.destination.entity(named: destinationName)
            else {
                if mapping.type == .remove { dropped.append("\(sourceName) (the whole entity)") }
                continue
            }
            let kept = Set(
                step.destination.allAttributes(of: destination).map { $0.renamingIdentifier ?? $0.name }
                    + step.destination.allRelationships(of: destination).map { $0.renamingIdentifier ?? $0.name })
            for attribute in step.source.allAttributes(of: source)
            where !attribute.isTransient && !kept.contains(attribute.renamingIdentifier ?? attribute.name) {
                dropped.append("\(sourceName).\(attribute.name)")
            }
            for relationship in step.source.allRelationships(of: source) where !relationship.isTransient {
                if kept.contains(relationship.renamingIdentifier ?? relationship.name) {
                    carried.insert("\(sourceName).\(relationship.name)")
                } else {
                    droppedRelationships.append((source, relationship))
                }
            }
        }
        for (entity, relationship) in droppedRelationships {
            if let inverse = relationship.inverse, carried.contains("\(relationship.destination).\(inverse)") {
                continue
            }
            dropped.append("\(entity.name).\(relationship.name)")
        }
        guard !dropped.isEmpty else { return nil }
        return
            "does not carry over \(dropped.joined(separator: ", ")): nothing in \(step.destination.version) has \(dropped.count == 1 ? "its" : "their") name or renaming identifier; "
            + "if the data must be kept, give what replaces \(dropped.count == 1 ? "it" : "them") the old name as renaming identifier, or write a mapping file for the step"
    }

    /// A hint when mapping files name policies this tool does not have: policies are
    /// Swift, and run in a tool built with them.
    static func unregisteredPolicies(_ mappings: [MappingModel]) -> String? {
        let policies = MigrateEnvironment.current.policies
        let missing = Set(mappings.flatMap { $0.entityMappings.compactMap(\.policy) }.filter { !policies.contains($0) })
            .sorted()
        guard !missing.isEmpty else { return nil }
        let tool = MigrateEnvironment.current.commandName
        return
            "\(missing.joined(separator: ", ")) \(missing.count == 1 ? "is a policy" : "are policies") written in Swift, which \(tool) does not have: "
            + "run these mapping files with a tool built with \(missing.count == 1 ? "it" : "them") registered "
            + "(MigrateCommand.main(environment:), docs/mapping-migrate.md; mappings/book-authors/book-migration is one)"
    }
}
