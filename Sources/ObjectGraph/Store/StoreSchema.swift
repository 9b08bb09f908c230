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
            let info = try database.prepare("PRAGMA table_info(\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\")")
            while try info.step() {
                if let column = info.string(at: 1) { columns.insert(column.uppercased()) }
            }
            tables[table.uppercased()] = columns
        }
        self.tables = tables
    }
}

/// Identifies which model version a store was written with.
///
/// Stores written by Remodel carry their version and hashes in their metadata. Stores
/// written by Apple's Core Data carry Apple's hashes, which cannot be recomputed, so they
/// are matched by schema: the version whose tables and columns the file has.
public enum StoreMatcher {
    /// The version of `models` that the store at `path` matches.
    public static func identify(storeAt path: String, among models: [ObjectModel]) throws(StoreError) -> ObjectModel {
        let metadata = try Store.metadata(at: path)
        // Our own stores: by version hashes.
        let byHash = models.filter { $0.entityVersionHashes == metadata.versionHashes }
        if byHash.count == 1 { return byHash[0] }
        if byHash.count > 1 {
            throw StoreError(.ambiguousVersion,
                "the store matches several model versions with identical entities (\(byHash.map(\.version).joined(separator: ", "))); name the version explicitly",
                path: path)
        }
        // Apple's stores: by schema.
        let schema = try Store.storeErrors(path: path, otherwise: .cannotOpen) {
            try StoreSchema(database: Database(path: path, mode: .readOnly))
        }
        let results = models.map { ($0, mismatches(schema, StoreLayout(model: $0))) }
        let matching = results.filter { $0.1.isEmpty }.map(\.0)
        // A version whose layout is contained in the file may still leave tables or columns
        // unexplained; prefer the versions that explain the whole file.
        let exact = matching.filter { extras(schema, StoreLayout(model: $0)).isEmpty }
        let candidates = exact.isEmpty ? matching : exact
        if candidates.count == 1 { return candidates[0] }
        if candidates.count > 1 {
            throw StoreError(.ambiguousVersion,
                "the store's tables and columns fit several model versions (\(candidates.map(\.version).joined(separator: ", "))); name the version with --from",
                path: path)
        }
        let report = results.map { "\($0.0.version): \($0.1.prefix(3).joined(separator: "; "))" }.joined(separator: "\n  ")
        throw StoreError(.unknownVersion,
            "the store matches none of the model versions \(models.map(\.version).joined(separator: ", ")):\n  \(report)",
            path: path)
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
        for join in layout.joinTables where !hasJoinTable(schema, join) {
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

    private static func hasJoinTable(_ schema: StoreSchema, _ join: StoreLayout.JoinTable) -> Bool {
        if let columns = schema.tables[join.name] {
            return columns.contains(join.firstColumn) && columns.contains(join.secondColumn)
        }
        // Core Data may name the table after the other side; accept any table with both columns.
        return schema.tables.values.contains { $0.contains(join.firstColumn) && $0.contains(join.secondColumn) }
    }
}
