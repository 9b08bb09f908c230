import ArgumentParser
import Foundation
import Remodel

/// What a `mapping-migrate`-style tool is built with: its name, its policies, and the
/// folders `--models` and `--mappings` default to. `book-migration` is `mapping-migrate`
/// with the example's policies and folders.
public struct MigrateEnvironment: Sendable {
    public var commandName: String
    public var policies: PolicyRegistry
    public var defaultModels: String?
    public var defaultMappings: String?

    public init(
        commandName: String = "mapping-migrate", policies: PolicyRegistry = PolicyRegistry(),
        defaultModels: String? = nil, defaultMappings: String? = nil
    ) {
        self.commandName = commandName
        self.policies = policies
        self.defaultModels = defaultModels
        self.defaultMappings = defaultMappings
    }

    // Set once, before parsing, by the executable's main.
    nonisolated(unsafe) static var current = MigrateEnvironment()
}

/// `mapping-migrate`: run, check and plan migrations of Core Data stores.
///
/// Exit statuses: 0 success; 1 the migration failed (the store is left as it was, or at
/// the last completed step); 2 bad input (usage, model or mapping errors).
public struct MigrateCommand: ParsableCommand {
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: MigrateEnvironment.current.commandName,
            abstract: "Migrate Core Data stores between model versions with mapping files.",
            discussion: """
                A store is migrated one model version at a time, each step through the \
                mapping file for that step (*.mapping.json, found by its sourceModel and \
                destinationModel), or, when there is none, through the mapping Core Data \
                would infer (see `infer`). Each step writes a new file beside the store and puts \
                it in the store's place only when it is complete; the store before the \
                step is kept as STORE.<version>.bak unless --no-backup is given.

                Try it on the bundled notes-chain example, from the repository's root:
                  $ cd mappings/notes-chain
                  $ cp Notes1.sqlite /tmp/Notes.sqlite
                  $ \(MigrateEnvironment.current.commandName) check --models Notes.xcdatamodeld
                  $ \(MigrateEnvironment.current.commandName) plan /tmp/Notes.sqlite --models Notes.xcdatamodeld
                  $ \(MigrateEnvironment.current.commandName) run /tmp/Notes.sqlite --models Notes.xcdatamodeld --dry-run
                  $ \(MigrateEnvironment.current.commandName) run /tmp/Notes.sqlite --models Notes.xcdatamodeld
                Each subcommand's --help has an example of its own. docs/migration-guide.md \
                goes from an Xcode project to migrations in CI.

                Exit status: 0 success, 1 the migration failed (the store is as it was, or \
                at the last completed version), 2 bad input (usage, model or mapping \
                errors). See docs/mapping-migrate.md.
                """,
            subcommands: [
                RunCommand.self, CheckCommand.self, PlanCommand.self, InferCommand.self, ConvertCommand.self,
                InspectCommand.self, SeedCommand.self
            ]
        )
    }

    public init() {}

    /// Runs the tool with `environment` (its name, policies and default folders) and
    /// exits: 0 on success, 1 when a migration failed, 2 for bad input, including usage
    /// errors (which argument-parser would end with 64). `--help` exits 0.
    public static func main(environment: MigrateEnvironment, arguments: [String]? = nil) -> Never {
        MigrateEnvironment.current = environment
        // Usage errors in the tool's own style, `mapping-migrate: <message>`, then the usage.
        runAndExit(arguments) { message in
            message.hasPrefix("Error: ") ? "\(environment.commandName): " + message.dropFirst("Error: ".count) : message
        }
    }
}

/// The options every subcommand that reads models shares.
struct ModelOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The model versions: an .xcdatamodeld folder, a compiled .momd, a folder of *.model.json files, or one such file.",
            valueName: "path"))
    var models: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The folder of mapping files: *.mapping.json, and Xcode's *.xcmappingmodel and *.cdm in it or below it (default: the folder that holds the models).",
            valueName: "dir"))
    var mappings: String?

    func validate() throws {
        // Here rather than at first use, so that the usage printed is the subcommand's.
        _ = try modelsURL()
    }

    func modelsURL() throws -> URL {
        guard let path = models ?? MigrateEnvironment.current.defaultModels else {
            throw ValidationError(
                "give the model versions with --models PATH (an .xcdatamodeld folder or a folder of *.model.json files)"
            )
        }
        return URL(fileURLWithPath: path)
    }

    func loadModels() throws -> [ObjectModel] {
        do {
            return try ObjectModel.loadVersions(at: modelsURL())
        } catch let error as ModelErrors {
            throw MigrateFailure.badInput(error.description)
        }
    }

    func loadMappings(models: URL, versions: [ObjectModel]) throws -> [MappingModel] {
        let folder =
            (mappings ?? MigrateEnvironment.current.defaultMappings).map { URL(fileURLWithPath: $0) }
            ?? StoreMigrator.defaultMappingsFolder(forModels: models)
        do {
            return try MappingModel.loadAll(in: folder, models: versions)
        } catch {
            throw MigrateFailure.badInput(error.rendered())
        }
    }

    /// The version `run` and `plan` go to without `--to`: an `.xcdatamodeld`'s current
    /// version, else the newest.
    func defaultTarget(among versions: [ObjectModel]) throws -> String? {
        let current = StoreMigrator.currentVersion(ofModelsAt: try modelsURL())
        return versions.contains { $0.version == current } ? current : nil
    }

    func migrator(options: MigrationOptions = MigrationOptions()) throws -> StoreMigrator {
        let url = try modelsURL()
        let versions = try loadModels()
        return StoreMigrator(
            models: versions, mappings: try loadMappings(models: url, versions: versions),
            policies: MigrateEnvironment.current.policies, options: options)
    }
}

/// `--to` and `--from`, for the commands that plan steps.
struct VersionOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The version to migrate to (default: an .xcdatamodeld's current version, else the newest).",
            valueName: "version"))
    var to: String?

    @Option(help: ArgumentHelp("The store's version, when detection cannot tell.", valueName: "version"))
    var from: String?
}

/// A failure with its exit status: 1 for a failed migration, 2 for bad input.
enum MigrateFailure: Error, CustomStringConvertible {
    case badInput(String)
    case failed(String)

    var description: String {
        switch self {
        case .badInput(let s), .failed(let s): s
        }
    }

    var status: ExitStatus {
        switch self {
        case .badInput: .badInput
        case .failed: .failed
        }
    }
}

extension ParsableCommand {
    /// Runs `body`, printing a failure as `<tool>: <message>` and exiting with its status.
    func reporting(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let failure as MigrateFailure {
            FileHandle.standardError.write(
                Data("\(MigrateEnvironment.current.commandName): \(failure.description)\n".utf8))
            throw failure.status.code
        } catch let error as MigrationError {
            let status: ExitStatus = error.kind == .invalidMapping ? .badInput : .failed
            FileHandle.standardError.write(
                Data("\(MigrateEnvironment.current.commandName): \(error.description)\n".utf8))
            throw status.code
        }
    }
}
