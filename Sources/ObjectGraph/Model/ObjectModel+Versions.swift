import ExpressionLanguage
import Foundation

extension ObjectModel {
    /// Every model version at `url`, oldest first: what the `--models` option of the command
    /// line tools takes.
    ///
    /// - a `*.json` model file: its one version;
    /// - an `.xcdatamodeld` folder: its versions (``XcodeModelImporter/importVersions(at:)``);
    /// - an `.xcdatamodel` folder (or its `contents` file): its one version;
    /// - a compiled `.momd` folder: its `.mom` versions (``CompiledModelReader/importVersions(at:)``);
    /// - a compiled `.mom` file: its one version;
    /// - any other folder: its `*.model.json` files, ordered by a `versions.json` manifest
    ///   (`["Model1", "Model2"]`) when there is one, else in the order of ``versionPrecedes(_:_:)``
    ///   (`Model`, `Model 2`, … `Model 10`).
    ///
    /// Every problem is reported with the file it is in.
    public static func loadVersions(at url: URL) throws(ModelErrors) -> [ObjectModel] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ModelErrors([
                ModelError(
                    .unreadable, file: url.path, path: "",
                    message:
                        "no such file or folder; give a *.model.json file, a folder of them, an .xcdatamodeld folder or a compiled .momd"
                )
            ])
        }
        let ext = url.pathExtension
        if ext == "xcdatamodeld" { return try XcodeModelImporter.importVersions(at: url).versions }
        if ext == "xcdatamodel" || url.lastPathComponent == "contents" {
            return [try XcodeModelImporter.importModel(at: url)]
        }
        if ext == "momd" { return try CompiledModelReader.importVersions(at: url).versions }
        if ext == "mom" { return [try CompiledModelReader.importModel(at: url)] }
        if !isDirectory.boolValue { return [try load(contentsOf: url)] }
        return try loadFolder(url)
    }

    /// The versions in the files of the bundle `folder` (`.xcdatamodeld`, `.momd`) whose
    /// names end with `suffix`, each read by `load`, in version order: by version name, not
    /// file name (`Model.xcdatamodel` would sort after `Model 2.xcdatamodel`, since "."
    /// comes after " "). Every file's problems are reported; a folder that cannot be read,
    /// or has no such file (`none` says so), is an error.
    static func loadInVersionOrder(
        in folder: URL, suffix: String, none: String,
        _ load: (URL) throws(ModelErrors) -> ObjectModel
    ) throws(ModelErrors) -> [ObjectModel] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(suffix) }
        } catch {
            throw ModelErrors([
                ModelError(
                    .unreadable, file: folder.path, path: "",
                    message: "cannot read the folder: \(error.localizedDescription)")
            ])
        }
        guard !names.isEmpty else {
            throw ModelErrors([ModelError(.unreadable, file: folder.lastPathComponent, path: "", message: none)])
        }
        let ordered = names.sorted {
            versionPrecedes(($0 as NSString).deletingPathExtension, ($1 as NSString).deletingPathExtension)
        }
        var versions: [ObjectModel] = []
        var errors: [ModelError] = []
        for name in ordered {
            do throws(ModelErrors) {
                versions.append(try load(folder.appendingPathComponent(name)))
            } catch {
                errors += error.errors
            }
        }
        if !errors.isEmpty { throw ModelErrors(errors) }
        return versions
    }

    /// Whether version `a` comes before version `b` in the order Xcode means its default
    /// names: `Model`, `Model 2`, … `Model 10`. Digit runs compare as numbers, other text
    /// case-insensitively (then exactly), and a name that is the start of another comes
    /// first, so the unnumbered base name is the oldest: `Model` < `Model 2` < `Model 10`,
    /// `Model` < `Model_v2` < `Model_v10`.
    public static func versionPrecedes(_ a: String, _ b: String) -> Bool {
        let x = versionNameChunks(a), y = versionNameChunks(b)
        for (p, q) in zip(x, y) {
            switch (p, q) {
            case (.number(let m, let mText), .number(let n, let nText)):
                if m != n { return m < n }
                if mText != nText { return mText.count < nText.count }
            case (.number, .text): return true
            case (.text, .number): return false
            case (.text(let s), .text(let t)):
                let (ls, lt) = (s.lowercased(), t.lowercased())
                // "model" < "model ": a name that is the start of another comes first.
                if ls != lt { return ls < lt }
                if s != t { return s < t }
            }
        }
        return x.count < y.count
    }

    private enum VersionNameChunk {
        case text(String)
        case number(Double, String)
    }

    /// `Model 10` → [text "Model ", number 10].
    private static func versionNameChunks(_ name: String) -> [VersionNameChunk] {
        var chunks: [VersionNameChunk] = []
        var current = "", inDigits = false
        func flush() {
            guard !current.isEmpty else { return }
            chunks.append(inDigits ? .number(Double(current) ?? 0, current) : .text(current))
            current = ""
        }
        for c in name {
            let digit = c.isASCII && c.isNumber
            if digit != inDigits { flush(); inDigits = digit }
            current.append(c)
        }
        flush()
        return chunks
    }

    private static func loadFolder(_ url: URL) throws(ModelErrors) -> [ObjectModel] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: url.path)
        } catch {
            throw ModelErrors([
                ModelError(
                    .unreadable, file: url.path, path: "",
                    message: "cannot read the folder: \(error.localizedDescription)")
            ])
        }
        let files = names.filter { $0.hasSuffix(".model.json") }
        guard !files.isEmpty else {
            let xcode = names.filter { $0.hasSuffix(".xcdatamodeld") || $0.hasSuffix(".momd") }.sorted()
            let hint = xcode.isEmpty ? "" : " (it holds \(xcode.joined(separator: ", ")): give that folder instead)"
            throw ModelErrors([
                ModelError(
                    .unreadable, file: url.path, path: "", message: "no *.model.json files in this folder\(hint)")
            ])
        }
        var models: [ObjectModel] = []
        var errors: [ModelError] = []
        var fileOfVersion: [String: String] = [:]
        for name in files.sorted() {
            do throws(ModelErrors) {
                let model = try load(contentsOf: url.appendingPathComponent(name))
                if let other = fileOfVersion[model.version] {
                    errors.append(
                        ModelError(
                            .versions, file: name, path: "version",
                            message:
                                "version '\(model.version)' is also the version of \(other); each version needs its own name"
                        ))
                    continue
                }
                fileOfVersion[model.version] = name
                models.append(model)
            } catch {
                errors += error.errors
            }
        }
        if !errors.isEmpty { throw ModelErrors(errors) }

        let manifest = url.appendingPathComponent("versions.json")
        guard let data = FileManager.default.contents(atPath: manifest.path) else {
            return models.sorted { Self.versionPrecedes($0.version, $1.version) }
        }
        let json: JSON
        do throws(JSONError) {
            json = try JSON.parse(data)
        } catch {
            throw ModelErrors([
                ModelError(.syntax, file: "versions.json", path: "", message: "invalid JSON at \(error)")
            ])
        }
        let elements = json.arrayValue ?? []
        let order = elements.compactMap(\.stringValue)
        guard json.arrayValue != nil, order.count == elements.count else {
            throw ModelErrors([
                ModelError(
                    .format, file: "versions.json", path: "",
                    message:
                        #"expected an array of version names, oldest first, such as ["Model1", "Model2"]"#)
            ])
        }
        var byVersion = Dictionary(uniqueKeysWithValues: models.map { ($0.version, $0) })
        var ordered: [ObjectModel] = []
        for (i, version) in order.enumerated() {
            guard let model = byVersion.removeValue(forKey: version) else {
                let problem =
                    order[..<i].contains(version)
                    ? "is listed twice" : "is not the version of any *.model.json file here"
                errors.append(
                    ModelError(.versions, file: "versions.json", path: "[\(i)]", message: "'\(version)' \(problem)"))
                continue
            }
            ordered.append(model)
        }
        for version in byVersion.keys.sorted() {
            errors.append(
                ModelError(
                    .versions, file: "versions.json", path: "",
                    message:
                        "does not list '\(version)' (\(fileOfVersion[version] ?? "?")); list every version, oldest first"
                ))
        }
        if !errors.isEmpty { throw ModelErrors(errors) }
        return ordered
    }
}
