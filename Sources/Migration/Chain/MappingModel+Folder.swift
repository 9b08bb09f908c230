import Foundation

extension MappingModel {
    /// Every `*.mapping.json` file in `folder` (each is found by its `sourceModel` and
    /// `destinationModel`, whatever it is called). Every problem of every file is reported.
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
        if !errors.isEmpty { throw MappingErrors(errors) }
        return mappings
    }
}
