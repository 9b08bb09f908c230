import ExpressionLanguage
import Foundation
import ObjectGraph

extension MappingModel {
    /// The name of the file in a mappings folder that states the order of the mapping
    /// models of a step that has several: `{"order": ["Model2_to_Model3_User.xcmappingmodel", …]}`.
    public static let orderFileName = "mapping-order.json"

    /// How deep ``loadAll(in:models:)`` looks for Xcode's mapping models below the folder.
    static let xcodeSearchDepth = 4

    /// Every mapping in `folder`: `*.mapping.json` files in the folder itself (each found by
    /// its `sourceModel` and `destinationModel`, whatever it is called), and Xcode's mapping
    /// models (`*.xcmappingmodel`) and compiled ones (`*.cdm`) in it or in its subfolders,
    /// read against `models`. Every problem of every file is reported.
    ///
    /// A step mapped by several files (Core Data's "multiple passes") gets one mapping:
    /// their entity mappings in the files' order (``orderFileName`` states it; otherwise
    /// the natural order of the file names), where an entity mapping with the name of an
    /// earlier one replaces it in its place (the mapping's ``MappingModel/notes`` say so).
    public static func loadAll(in folder: URL, models: [ObjectModel] = []) throws(MappingErrors) -> [MappingModel] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw MappingErrors([
                MappingError(
                    .unreadable, file: folder.path, path: "",
                    message: "cannot read the mappings folder: \(error.localizedDescription)")
            ])
        }
        var loaded: [(file: String, mapping: MappingModel)] = []
        var errors: [MappingError] = []
        for name in names.sorted() where name.hasSuffix(".mapping.json") {
            do throws(MappingErrors) {
                loaded.append((name, try load(contentsOf: folder.appendingPathComponent(name))))
            } catch {
                errors += error.errors
            }
        }
        for relative in xcodeMappingFiles(in: folder) {
            let url = folder.appendingPathComponent(relative)
            guard !models.isEmpty else {
                errors.append(
                    MappingError(
                        file: url.relativePath, path: "",
                        message:
                            "an Xcode mapping model is read against the model versions it maps; pass them (MappingModel.loadAll(in:models:), or --models)"
                    ))
                continue
            }
            do throws(MappingErrors) {
                let mapping =
                    url.pathExtension == "cdm"
                    ? try load(compiledMappingModelAt: url, models: models)
                    : try load(xcodeMappingModelAt: url, models: models)
                loaded.append((relative, mapping))
            } catch {
                errors += error.errors
            }
        }
        let order: [String]
        do throws(MappingErrors) {
            order = try statedOrder(in: folder)
        } catch {
            throw MappingErrors(errors + error.errors)
        }
        if !errors.isEmpty { throw MappingErrors(errors) }
        return combinedBySteps(loaded, order: order)
    }

    /// Xcode's mapping models and compiled mapping models under `folder`, relative to it.
    static func xcodeMappingFiles(in folder: URL) -> [String] {
        var found: [String] = []
        func walk(_ relative: String, depth: Int) {
            let url = relative.isEmpty ? folder : folder.appendingPathComponent(relative)
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: url.path) else { return }
            for name in names where !name.hasPrefix(".") {
                let path = relative.isEmpty ? name : "\(relative)/\(name)"
                if name.hasSuffix(".xcmappingmodel") || name.hasSuffix(".cdm") {
                    found.append(path)
                    continue
                }
                var isDirectory: ObjCBool = false
                // Models and build products hold no mapping models of the project's own.
                let skip =
                    ["xcdatamodeld", "xcdatamodel", "momd", "build"].contains((name as NSString).pathExtension)
                    || name == "DerivedData"
                if depth < xcodeSearchDepth, !skip,
                    FileManager.default.fileExists(
                        atPath: url.appendingPathComponent(name).path, isDirectory: &isDirectory),
                    isDirectory.boolValue
                {
                    walk(path, depth: depth + 1)
                }
            }
        }
        walk("", depth: 0)
        return found.sorted { $0.localizedStandardCompare($1) == .orderedAscending }
    }

    /// The file order stated by the folder's ``orderFileName``, if it has one.
    static func statedOrder(in folder: URL) throws(MappingErrors) -> [String] {
        let url = folder.appendingPathComponent(orderFileName)
        guard let data = FileManager.default.contents(atPath: url.path) else { return [] }
        let place = url.relativePath
        let json: JSON
        do throws(JSONError) {
            json = try JSON.parse(data)
        } catch {
            throw MappingErrors([
                MappingError(
                    .syntax, file: place, path: "",
                    message: "invalid JSON at \(error.line):\(error.column): \(error.message)")
            ])
        }
        guard let list = json.objectValue?["order"]?.arrayValue else {
            throw MappingErrors([
                MappingError(
                    file: place, path: "",
                    message: "expected {\"order\": [\"<mapping file>\", …]}, the files of a step in the order they run")
            ])
        }
        var order: [String] = []
        for (i, element) in list.enumerated() {
            guard let name = element.stringValue else {
                throw MappingErrors([
                    MappingError(
                        file: place, path: "order[\(i)]", message: "expected the name of a mapping file in the folder")
                ])
            }
            guard FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path) else {
                throw MappingErrors([
                    MappingError(
                        file: place, path: "order[\(i)]", message: "no mapping file '\(name)' in \(folder.relativePath)"
                    )
                ])
            }
            order.append(name)
        }
        return order
    }

    /// One mapping per step: the files of a step in `order` (the rest after them, in the
    /// order given), their entity mappings combined.
    static func combinedBySteps(_ loaded: [(file: String, mapping: MappingModel)], order: [String]) -> [MappingModel] {
        func rank(_ file: String) -> Int { order.firstIndex(of: file) ?? order.count }
        let sorted = loaded.sorted { a, b in
            rank(a.file) != rank(b.file)
                ? rank(a.file) < rank(b.file) : a.file.localizedStandardCompare(b.file) == .orderedAscending
        }
        var steps: [String] = []
        var parts: [String: [MappingModel]] = [:]
        for (_, mapping) in sorted {
            let step = "\(mapping.sourceModel) → \(mapping.destinationModel)"
            if parts[step] == nil { steps.append(step) }
            parts[step, default: []].append(mapping)
        }
        return steps.map { combined(parts[$0]!) }
    }

    /// The mapping models of one step as one: entity mappings in order; one named like an
    /// earlier one replaces it in its place.
    public static func combined(_ parts: [MappingModel]) -> MappingModel {
        guard var result = parts.first else { preconditionFailure("combined(_:) needs at least one mapping") }
        guard parts.count > 1 else { return result }
        func located(_ part: MappingModel) -> [EntityMapping] {
            part.entityMappings.enumerated().map { index, mapping in
                var mapping = mapping
                if let file = part.file { mapping.origin = EntityMapping.Origin(file: file, index: index) }
                return mapping
            }
        }
        result.entityMappings = located(result)
        result.parts = parts.flatMap(\.files)
        result.file = result.files.joined(separator: " + ")
        for part in parts.dropFirst() {
            for entityMapping in located(part) {
                if let i = result.entityMappings.firstIndex(where: { $0.name == entityMapping.name }) {
                    result.notes.append(
                        "\(entityMapping.name) of \(part.file ?? "a later mapping") replaces the entity mapping of that name before it"
                    )
                    result.entityMappings[i] = entityMapping
                } else {
                    result.entityMappings.append(entityMapping)
                }
            }
            result.notes += part.notes
        }
        return result
    }
}
