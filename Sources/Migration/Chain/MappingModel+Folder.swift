import Foundation

extension MappingModel {
    /// Every `*.mapping.json` file in `folder` (each is found by its `sourceModel` and
    /// `destinationModel`, whatever it is called). Every problem of every file is reported.
    ///
    /// An Xcode mapping model (`*.xcmappingmodel`) in the folder for a step that no mapping
    /// file maps is a problem too: Remodel cannot read it, and running the step through
    /// the inferred mapping instead would quietly do something else than what it says.
    public static func loadAll(in folder: URL) throws(MappingErrors) -> [MappingModel] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw MappingErrors([MappingError(file: folder.path, path: "", message: "cannot read the mappings folder: \(error.localizedDescription)")])
        }
        var mappings: [MappingModel] = []
        var errors: [MappingError] = []
        var fileOfStep: [String: String] = [:]
        for name in names.sorted() where name.hasSuffix(".mapping.json") {
            let url = folder.appendingPathComponent(name)
            do throws(MappingErrors) {
                let mapping = try load(contentsOf: url)
                let step = "\(mapping.sourceModel) → \(mapping.destinationModel)"
                if let other = fileOfStep[step] {
                    errors.append(MappingError(file: url.path, path: "", message: "\(other) already maps \(step); keep one mapping file per step"))
                    continue
                }
                fileOfStep[step] = url.path
                mappings.append(mapping)
            } catch {
                errors += error.errors
            }
        }
        for name in names.sorted() where name.hasSuffix(".xcmappingmodel") {
            let url = folder.appendingPathComponent(name)
            let versions = xcodeMappingModelVersions(at: url)
            if let versions, fileOfStep["\(versions.source) → \(versions.destination)"] != nil { continue }
            let what = versions.map { "an Xcode mapping model of \($0.source) → \($0.destination)" } ?? "an Xcode mapping model"
            let file = versions.map { "\($0.source)_to_\($0.destination).mapping.json" } ?? "a *.mapping.json file"
            errors.append(MappingError(file: url.path, path: "", message:
                "\(what), which Remodel cannot read (it reads mapping files written in JSON, with Core Data's names); "
                + "write the step as \(file) in this folder (docs/migration-guide.md, \"Xcode mapping models\"), "
                + "or move the .xcmappingmodel out of the folder to run the step through the inferred mapping, as a lightweight migration would"))
        }
        if !errors.isEmpty { throw MappingErrors(errors) }
        return mappings
    }

    /// The source and destination model versions an Xcode mapping model names (the
    /// `sourcemodelpath` and `destinationmodelpath` of its `xcmapping.xml`, such as
    /// `App/Model.xcdatamodeld/Model1.xcdatamodel`), when it can be read.
    static func xcodeMappingModelVersions(at url: URL) -> (source: String, destination: String)? {
        guard let data = FileManager.default.contents(atPath: url.appendingPathComponent("xcmapping.xml").path) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        func version(_ attribute: String) -> String? {
            guard let start = text.range(of: "name=\"\(attribute)\" type=\"string\">"),
                let end = text[start.upperBound...].firstIndex(of: "<")
            else { return nil }
            let path = String(text[start.upperBound..<end])
            return ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        }
        guard let source = version("sourcemodelpath"), let destination = version("destinationmodelpath"),
            !source.isEmpty, !destination.isEmpty
        else { return nil }
        return (source, destination)
    }
}
