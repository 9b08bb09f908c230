import ArgumentParser
import Foundation
import Remodel

/// `infer`: the mapping Core Data would infer between two versions, as a mapping file.
struct InferCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "infer",
            abstract: "Print the mapping Core Data would infer between two versions, as a mapping file.",
            discussion: """
                The mapping follows Core Data's lightweight-migration rules (docs/engine.md, \
                "Inferred mappings"): entities and properties are paired by renaming \
                identifier, numbers and booleans are converted, relationships re-linked. It \
                is what `run` uses for a step that no mapping file maps; saved into the \
                mappings folder, it runs the same, and it can be edited. What cannot be \
                inferred is an error (exit status 2); with --draft the mapping is printed \
                anyway, with a comment at each part left to finish. Warnings go to standard \
                error.

                Example, from the repository's root: the notes-chain example's first step \
                renames Note.body to text (its renaming identifier is "body"), and the \
                inferred mapping reads the old name; then the whole mapping is written to a \
                file to start editing from:
                  $ cd mappings/notes-chain
                  $ \(MigrateEnvironment.current.commandName) infer --models Notes.xcdatamodeld --from Notes1 | grep body
                          "text": "FUNCTION($source, \\"valueForKey:\\", \\"body\\")",
                  $ \(MigrateEnvironment.current.commandName) infer --models Notes.xcdatamodeld --from Notes1 \\
                      --output /tmp/Notes1_to_Notes2.mapping.json
                """)
    }

    @OptionGroup var models: ModelOptions

    @Option(help: ArgumentHelp("The source version.", valueName: "version"))
    var from: String

    @Option(help: ArgumentHelp("The destination version (default: the one after --from).", valueName: "version"))
    var to: String?

    @Option(
        help: ArgumentHelp("Write the mapping file here (it must not exist) instead of printing it.", valueName: "file")
    )
    var output: String?

    @Flag(
        help: "When something cannot be inferred, print the mapping anyway, with a comment at each part left to finish."
    )
    var draft = false

    func run() throws {
        try reporting {
            let versions = try models.loadModels()
            let known = versions.map(\.version).joined(separator: ", ")
            guard let start = versions.firstIndex(where: { $0.version == from }) else {
                throw MigrateFailure.badInput("no model version '\(from)'; the versions are \(known)")
            }
            let destination: ObjectModel
            if let to {
                guard let found = versions.first(where: { $0.version == to }) else {
                    throw MigrateFailure.badInput("no model version '\(to)'; the versions are \(known)")
                }
                destination = found
            } else {
                guard start + 1 < versions.count else {
                    throw MigrateFailure.badInput(
                        "\(from) is the newest version; name the version to infer a mapping to with --to")
                }
                destination = versions[start + 1]
            }
            let source = versions[start]
            guard source.version != destination.version else {
                throw MigrateFailure.badInput(
                    "--from and --to are both \(from); a mapping goes from one version to another")
            }
            let step = "\(source.version) → \(destination.version)"
            let inference = MappingInference(from: source, to: destination)
            if !inference.errors.isEmpty {
                let problems = inference.errors.map { "  \($0)\n" }.joined()
                guard draft, inference.mappingFile() != nil else {
                    let hint =
                        draft ? "" : "; --draft prints what can be inferred, with a comment at each part left to finish"
                    throw MigrateFailure.badInput(
                        "a mapping cannot be inferred for \(step):\n\(problems)write a mapping file for the step\(hint)"
                    )
                }
                let count = inference.errors.count
                warn(
                    "a draft: \(count) thing\(count == 1 ? "" : "s") could not be inferred for \(step):\n\(problems)",
                    prefix: "")
            }
            for warning in inference.warnings { warn("\(warning)\n", prefix: "warning: ") }
            if let existing = (try? models.loadMappings(models: models.modelsURL(), versions: versions))?.first(where: {
                $0.sourceModel == source.version && $0.destinationModel == destination.version
            }) {
                warn(
                    "\(existing.file ?? "a mapping file") already maps \(step); run uses it, not an inferred mapping\n",
                    prefix: "note: ")
            }
            guard let output = try writeMappingFile(inference.mappingFile()!, to: output, command: "infer") else {
                return
            }
            print(
                "wrote \(output): the mapping \(inference.errors.isEmpty ? "inferred" : "drafted") for \(step) (\(inference.mapping.entityMappings.count) entity mappings)"
            )
        }
    }

    private func warn(_ text: String, prefix: String) {
        FileHandle.standardError.write(Data("\(MigrateEnvironment.current.commandName): \(prefix)\(text)".utf8))
    }
}
