import Foundation

/// The tables and columns a SQLite file actually has, read from `sqlite_master`.
public struct StoreSchema: Sendable, Hashable {
    /// Table name → column names, upper-cased as Core Data writes them.
    public let tables: [String: Set<String>]

    public init(tables: [String: Set<String>]) {
        self.tables = tables
    }

    init(database: Database) throws {
        var tables: [String: Set<String>] = [:]
        let names = try database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        while try names.step() {
            guard let table = names.string(at: 0) else { continue }
            var columns = Set<String>()
            let info = try database.prepare(
                "PRAGMA table_info(\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\")")
            while try info.step() {
                if let column = info.string(at: 1) { columns.insert(column.uppercased()) }
            }
            tables[table.uppercased()] = columns
        }
        self.tables = tables
    }
}

/// How a store's version was told (``StoreMatcher/identification(storeAt:among:)``).
public struct StoreIdentification: Sendable {
    public enum Method: String, Sendable {
        /// By the entity version hashes in the store's metadata, as Core Data tells it.
        case versionHashes
        /// By the hashes an earlier Remodel wrote (its own, not Apple's).
        case remodelHashes
        /// By the store's tables and columns: its hashes match no version.
        case schema
    }

    /// The version.
    public let model: ObjectModel
    public let method: Method
    /// What else to know: versions with the same hashes, or why the schema decided.
    public let notes: [String]
}

/// Identifies which model version a store was written with, as Core Data does: by the
/// entity version hashes in its metadata (``ObjectModel/storeVersionHashes``), compared
/// entity by entity; then by the hashes earlier Remodel versions wrote; and only when
/// no version's hashes match, by schema (the version whose tables and columns the file
/// has), saying so.
public enum StoreMatcher {
    /// The version of `models` that the store at `path` matches.
    public static func identify(storeAt path: String, among models: [ObjectModel]) throws(StoreError) -> ObjectModel {
        try identification(storeAt: path, among: models).model
    }

    /// The version of `models` that the store at `path` matches, and how it was told.
    public static func identification(storeAt path: String, among models: [ObjectModel]) throws(StoreError)
        -> StoreIdentification
    {
        let metadata = try Store.metadata(at: path)
        let byHashes = models.filter { $0.storeVersionHashes == metadata.versionHashes }
        if let chosen = choose(byHashes, metadata: metadata) {
            return StoreIdentification(model: chosen.model, method: .versionHashes, notes: chosen.notes)
        }
        // Stores written by Remodel before it wrote Apple's hashes.
        if let chosen = choose(models.filter { $0.entityVersionHashes == metadata.versionHashes }, metadata: metadata) {
            return StoreIdentification(model: chosen.model, method: .remodelHashes, notes: chosen.notes)
        }
        let differences = hashDifferences(metadata.versionHashes, models)
        let schema = try Store.storeErrors(path: path, otherwise: .cannotOpen) {
            try StoreSchema(database: Database(path: path, mode: .readOnly))
        }
        let results = models.map { ($0, mismatches(schema, StoreLayout(model: $0))) }
        let matching = results.filter { $0.1.isEmpty }.map(\.0)
        // A version whose layout is contained in the file may still leave tables or columns
        // unexplained; prefer the versions that explain the whole file.
        let exact = matching.filter { extras(schema, StoreLayout(model: $0)).isEmpty }
        let candidates = exact.isEmpty ? matching : exact
        let hashNote =
            metadata.versionHashes.isEmpty
            ? "the store's metadata has no version hashes"
            : "the store's version hashes match no version (\(differences.closest))"
        if candidates.count == 1 {
            return StoreIdentification(
                model: candidates[0], method: .schema,
                notes: ["\(hashNote); identified by its tables and columns, which only \(candidates[0].version) has"])
        }
        if candidates.count > 1 {
            throw StoreError(
                .ambiguousVersion,
                "\(hashNote), and its tables and columns fit several model versions (\(candidates.map(\.version).joined(separator: ", "))); name the version with --from",
                path: path)
        }
        let report = results.map { version, problems in
            "\(version.version): \(differences.byVersion[version.version] ?? "hashes differ"); schema: \(problems.prefix(3).joined(separator: "; "))"
        }.joined(separator: "\n  ")
        let cache = modelCacheNote(storeAt: path, metadata: metadata, version: nil).map { "\n  \($0)" } ?? ""
        throw StoreError(
            .unknownVersion,
            "the store matches none of the model versions \(models.map(\.version).joined(separator: ", ")) by its version hashes or by its tables and columns:\n  \(report)\(cache)",
            path: path)
    }

    /// What the model Core Data cached in the store (``StoreModelCache``) says, compared
    /// with the store's hashes and with `version` when given; nil when there is none.
    public static func modelCacheNote(storeAt path: String, metadata: StoreMetadata, version: ObjectModel?) -> String? {
        let model: ObjectModel?
        do {
            let database: Database
            do { database = try Database(path: path, mode: .readOnly) } catch { return nil }
            model = try StoreModelCache.model(in: database)
        } catch {
            return "the store's model cache (Z_MODELCACHE) cannot be read: \(error.message)"
        }
        guard let model else { return nil }
        let hashes = model.appleVersionHashes
        let entities = model.entities.map(\.name).sorted()
        var note =
            "the store carries the model it was saved with (Z_MODELCACHE, \(entities.count) entit\(entities.count == 1 ? "y" : "ies"): \(entities.joined(separator: ", ")))"
        if let version {
            let differ = Set(hashes.keys).union(version.storeVersionHashes.keys).filter {
                hashes[$0] != version.storeVersionHashes[$0]
            }.sorted()
            note +=
                differ.isEmpty
                ? "; it hashes as \(version.version)"
                : "; it differs from \(version.version) in \(differ.joined(separator: ", "))"
        } else if hashes == metadata.versionHashes {
            note += ", which hashes as the store's metadata: that version is missing from the models given"
        }
        return note
    }

    /// One of `candidates`, all with the store's hashes: Core Data opens the store with any
    /// of them. Remodel's own record of the version decides between them, else the newest.
    private static func choose(_ candidates: [ObjectModel], metadata: StoreMetadata) -> (
        model: ObjectModel, notes: [String]
    )? {
        guard let newest = candidates.last else { return nil }
        guard candidates.count > 1 else { return (newest, []) }
        let names = candidates.map(\.version).joined(separator: ", ")
        if let recorded = candidates.first(where: { $0.version == metadata.remodelVersion }) {
            return (
                recorded, ["the versions \(names) have the same version hashes; the store records \(recorded.version)"]
            )
        }
        return (
            newest,
            [
                "the versions \(names) have the same version hashes, so Core Data opens the store with any of them; taken as the newest, \(newest.version)"
            ]
        )
    }

    /// Entity by entity, how the store's hashes differ from each version's, and the
    /// version with the fewest differences.
    static func hashDifferences(_ hashes: [String: Data], _ models: [ObjectModel]) -> (
        byVersion: [String: String], closest: String
    ) {
        var byVersion: [String: String] = [:]
        var best: (count: Int, text: String)?
        for model in models {
            let ours = model.storeVersionHashes
            let differ = ours.keys.filter { hashes[$0] != nil && hashes[$0] != ours[$0] }.sorted()
            let onlyStore = hashes.keys.filter { ours[$0] == nil }.sorted()
            let onlyModel = ours.keys.filter { hashes[$0] == nil }.sorted()
            var parts: [String] = []
            if !differ.isEmpty { parts.append("\(differ.joined(separator: ", ")) differ") }
            if !onlyStore.isEmpty { parts.append("\(onlyStore.joined(separator: ", ")) only in the store") }
            if !onlyModel.isEmpty { parts.append("\(onlyModel.joined(separator: ", ")) only in the model") }
            let text = parts.joined(separator: "; ")
            byVersion[model.version] = text
            let count = differ.count + onlyStore.count + onlyModel.count
            if best == nil || count < best!.count { best = (count, "closest: \(model.version), where \(text)") }
        }
        return (byVersion, best?.text ?? "no versions")
    }

    /// What `layout` needs that `schema` lacks, as messages.
    static func mismatches(_ schema: StoreSchema, _ layout: StoreLayout) -> [String] {
        var problems: [String] = []
        for table in layout.tables.values.sorted(by: { $0.name < $1.name }) {
            guard let columns = schema.tables[table.name] else {
                problems.append("no table \(table.name)")
                continue
            }
            let missing = table.columns.map(\.name).filter { !columns.contains($0) }
            if !missing.isEmpty { problems.append("table \(table.name) lacks \(missing.joined(separator: ", "))") }
        }
        for join in layout.joinTables where join.name(in: schema.tables) == nil {
            problems.append("no join table \(join.name)")
        }
        return problems
    }

    /// Entity tables and columns in `schema` that `layout` does not account for.
    static func extras(_ schema: StoreSchema, _ layout: StoreLayout) -> [String] {
        var extra: [String] = []
        for (name, columns) in schema.tables where name.hasPrefix("Z") && !name.hasPrefix("Z_") {
            guard let table = layout.tables[name] else { extra.append(name); continue }
            let known = Set(table.columns.map(\.name))
            extra += columns.filter { !known.contains($0) }.map { "\(name).\($0)" }
        }
        return extra
    }
}
