import ArgumentParser
import Foundation
import Remodel

/// `mapping-migrate convert`: an Xcode mapping model written out as a JSON mapping file.
struct ConvertCommand: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "convert",
            abstract: "Write an Xcode mapping model (.xcmappingmodel or compiled .cdm) as a JSON mapping file.",
            discussion: """
                The JSON mapping is what `run` makes of the Xcode mapping model: the same \
                entity mappings, in the same order, with what Xcode's mapping compiler fills \
                in written out (docs/mapping-format.md, "Xcode mapping models"). Saved in the \
                mappings folder in place of the Xcode file, it runs to the same result, and \
                it can be edited by hand from then on. Custom policies keep their class names; \
                run them with Swift stand-ins registered (docs/engine.md, "Custom policies").

                Example:
                  $ \(MigrateEnvironment.current.commandName) convert Model1_to_Model2.xcmappingmodel --models Model.xcdatamodeld \\
                      --output Model1_to_Model2.mapping.json
                """)
    }

    @Argument(
        help: ArgumentHelp("The .xcmappingmodel bundle (or its xcmapping.xml) or .cdm file.", valueName: "mapping"))
    var mapping: String

    @OptionGroup var models: ModelOptions

    @Option(
        help: ArgumentHelp("Write the mapping file here (it must not exist) instead of printing it.", valueName: "file")
    )
    var output: String?

    func run() throws {
        try reporting {
            let versions = try models.loadModels()
            let url = URL(fileURLWithPath: mapping)
            let loaded: MappingModel
            do {
                loaded =
                    url.pathExtension == "cdm"
                    ? try MappingModel.load(compiledMappingModelAt: url, models: versions)
                    : try MappingModel.load(xcodeMappingModelAt: url, models: versions)
            } catch let error as MappingErrors {
                throw MigrateFailure.badInput(error.rendered())
            }
            guard let output = try writeMappingFile(loaded.json, to: output, command: "convert") else { return }
            print(
                "wrote \(output): \(loaded.sourceModel) → \(loaded.destinationModel) (\(loaded.entityMappings.count) entity mappings)"
            )
        }
    }
}

/// Writes the mapping file `json` to `output`, which must not exist, or prints it when
/// there is no `output`; returns the path written, nil when printed.
func writeMappingFile(_ json: JSON, to output: String?, command: String) throws -> String? {
    let text = json.serialized(pretty: true) + "\n"
    guard let output else {
        FileHandle.standardOutput.write(Data(text.utf8))
        return nil
    }
    guard !FileManager.default.fileExists(atPath: output) else {
        throw MigrateFailure.badInput(
            "\(output) exists; remove it or choose another --output (\(command) does not overwrite a mapping file)")
    }
    guard FileManager.default.createFile(atPath: output, contents: Data(text.utf8)) else {
        throw MigrateFailure.badInput("cannot write \(output)")
    }
    return output
}
