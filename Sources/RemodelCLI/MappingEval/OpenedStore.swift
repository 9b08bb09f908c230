import ExpressionLanguage
import Foundation
import ObjectGraph

/// A store that `mapping-eval` opened (`:open`, `--store`): read-only, as the model
/// version it matched among those of `--models`, with a context that reads its objects
/// as expressions ask for them.
///
///     let opened = try OpenedStore.open("Model1.sqlite", models: "Model.xcdatamodeld")
///     let book = try opened.object("Book/9")   // .object(…), for $source
public final class OpenedStore {
    /// The store's path as the user wrote it.
    public let path: String
    /// The `--models` path as the user wrote it.
    public let modelsPath: String
    /// Every version found at ``modelsPath``, oldest first.
    public let versions: [ObjectModel]
    public let store: Store
    public let context: ObjectContext
    /// Whether the version was named (`--from`) rather than identified from the file.
    public let versionWasNamed: Bool
    /// What is read: the store, or a copy with its WAL or journal folded in, so that the
    /// store's files are never changed.
    private let snapshot: StoreSnapshot

    /// The version the store was opened as.
    public var model: ObjectModel { store.model }

    /// The file that is read (the store, or its snapshot): what a dry run migrates from.
    var readPath: String { snapshot.path }

    private init(
        path: String, modelsPath: String, versions: [ObjectModel], store: Store, versionWasNamed: Bool,
        snapshot: StoreSnapshot
    ) {
        self.snapshot = snapshot
        self.path = path
        self.modelsPath = modelsPath
        self.versions = versions
        self.store = store
        self.context = ObjectContext(store: store)
        self.versionWasNamed = versionWasNamed
    }

    /// Opens the store at `path` read-only as the version of `models` that it matches, or
    /// as `version` when given. Nothing is written to the store.
    public static func open(_ path: String, models: String, version: String? = nil) throws(InputError) -> OpenedStore {
        let storePath = JSONInput.expandingTilde(path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: storePath, isDirectory: &isDirectory) else {
            throw InputError("cannot open \(path): no such file")
        }
        guard !isDirectory.boolValue else { throw InputError("cannot open \(path): it is a folder, not a store file") }
        let versions: [ObjectModel]
        let modelsURL = URL(fileURLWithPath: JSONInput.expandingTilde(models))
        do {
            versions = try ObjectModel.loadVersions(at: modelsURL)
        } catch {
            // Problems with the path itself are named by the prefix already.
            let problems = error.errors.map { problem in
                var problem = problem
                if problem.file == modelsURL.path { problem.file = nil }
                return problem.description
            }
            throw InputError(
                "cannot load the models of \(models):"
                    + (problems.count == 1 ? " " + problems[0] : "\n  " + problems.joined(separator: "\n  ")))
        }
        let snapshot: StoreSnapshot
        do {
            snapshot = try StoreSnapshot(of: storePath)
        } catch {
            throw InputError("cannot open \(path): " + Self.describe(error, storePath: storePath, path: path))
        }
        let model: ObjectModel
        if let version {
            guard let named = versions.first(where: { $0.version == version }) else {
                throw InputError(
                    "\(models) has no version '\(version)'; it has \(versions.map(\.version).joined(separator: ", "))")
            }
            model = named
        } else {
            do {
                model = try StoreMatcher.identify(storeAt: snapshot.path, among: versions)
            } catch {
                throw InputError(
                    "cannot open \(path): "
                        + snapshot.explaining(Self.describe(error, storePath: snapshot.path, path: path)))
            }
        }
        do {
            let store = try Store.open(at: snapshot.path, model: model, mode: .readOnly)
            return OpenedStore(
                path: path, modelsPath: models, versions: versions, store: store, versionWasNamed: version != nil,
                snapshot: snapshot)
        } catch {
            throw InputError("cannot open \(path): " + Self.describe(error, storePath: snapshot.path, path: path))
        }
    }

    /// The message of a store error, without the path the caller already names.
    private static func describe(_ error: StoreError, storePath: String, path: String) -> String {
        var message = error.message
        if error.kind == .unknownVersion {
            message += "\n(name the version with --from VERSION to open it as one of them anyway)"
        }
        return message.replacingOccurrences(of: storePath + ": ", with: "").replacingOccurrences(
            of: storePath, with: path)
    }

    /// The object `reference` names (`Book/9`, or `Book 9`), as a value.
    public func object(_ reference: String) throws(InputError) -> Value {
        let words = reference.split(whereSeparator: { $0.isWhitespace || $0 == "/" })
        guard words.count == 2, let key = Int64(words[1]) else {
            throw InputError(
                "'\(reference)' does not name an object; write ENTITY/PRIMARY-KEY or ENTITY PRIMARY-KEY, such as Book/9"
            )
        }
        do {
            return .object(ObjectReference(try context.object(entityName: String(words[0]), primaryKey: key)))
        } catch {
            throw InputError(error.description)
        }
    }

    /// Resolves `{"$object": "Book/9"}` in JSON input.
    func resolve(_ reference: String) throws -> Value {
        do {
            return try object(reference)
        } catch {
            throw ExpressionError(.host, error.message)
        }
    }

    /// What `:open` shows: the file, the version, and how many objects of each entity.
    ///
    ///     Model1.sqlite (read-only) is model version Model1 of Model.xcdatamodeld (Model1, Model2, Model3)
    ///       Book  4 objects
    ///       User  3 objects
    public var summary: String {
        let how = versionWasNamed ? "opened as" : "is"
        var lines = [
            "\(path) (read-only) \(how) model version \(model.version) of \(modelsPath) (\(versions.map(\.version).joined(separator: ", ")))"
        ]
        let names = model.entities.map(\.name).sorted()
        let width = names.map(\.count).max() ?? 0
        for name in names {
            var request = FetchRequest(entityName: name)
            request.includesSubentities = false
            let count = (try? context.count(request)).map { "\($0) object\($0 == 1 ? "" : "s")" } ?? "?"
            let abstract = model.entity(named: name)?.isAbstract == true ? " (abstract)" : ""
            lines.append("  " + name + String(repeating: " ", count: width - name.count + 2) + count + abstract)
        }
        return lines.joined(separator: "\n")
    }
}
