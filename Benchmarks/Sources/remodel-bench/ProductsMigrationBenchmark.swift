import CSQLiteBaseline
import Foundation
import Remodel

// remodel-bench migrate-products: a Products1 store of N rows migrated to Products2 with
// mappings/product-price (price * 1.03, the other seven attributes inferred) by the
// MigrationManager, by a raw C-API loop and by one INSERT … SELECT. See docs/performance.md.

// MARK: - The variants (each in its own process)

/// `MigrationManager(mapping:source:destination:)` with default options, then
/// `migrateStore(from:to:)`. The splits are the engine's stages, from its progress reports.
func migrateWithManager(
    _ options: Options, source: String, destination: String, mappingPath: String,
    pushdown: Bool = true
) -> VariantResult {
    let mappings = options.mappingsFolder
    let mapping = loadMapping(mappings, mappingPath)
    let folder = (mappingPath as NSString).deletingLastPathComponent
    let v1 = loadModel(mappings, "\(folder)/\(mapping.sourceModel).model.json")
    let v2 = loadModel(mappings, "\(folder)/\(mapping.destinationModel).model.json")
    let clock = ContinuousClock()
    let start = clock.now
    // When each stage was last reported: a stage's last report comes as it ends.
    var stageEnds: [MigrationProgress.Stage: ContinuousClock.Instant] = [:]
    let report: MigrationReport
    do {
        let manager = try MigrationManager(
            mapping: mapping, source: v1, destination: v2, options: MigrationOptions(pushdown: pushdown))
        report = try manager.migrateStore(from: source, to: destination) { progress in
            stageEnds[progress.stage] = clock.now
        }
    } catch {
        die("MigrationManager: \(error)")
    }
    let end = clock.now
    var splits: [String: Double] = [:]
    var previous = start
    for (stage, name) in [
        (MigrationProgress.Stage.createInstances, "1 create instances"),
        (.createRelationships, "2 create relationships"),
        (.validate, "3 save, validate, policies")
    ] {
        guard let at = stageEnds[stage] else { continue }
        splits[name] = (at - previous).seconds
        previous = at
    }
    splits["4 finish (pragmas, close)"] = (end - previous).seconds
    let rows = report.entityMappings.first?.sourceInstances ?? 0
    return VariantResult(seconds: (end - start).seconds, rows: rows, splits: splits)
}

/// The destination pragmas MigrationManager uses while it writes (MigrationManager.swift):
/// a new file thrown away on failure needs no journal and no syncing.
func applyMigrationPragmas(_ db: OpaquePointer) {
    RawSQLite.exec(db, "PRAGMA journal_mode = OFF")
    RawSQLite.exec(db, "PRAGMA synchronous = OFF")
    RawSQLite.exec(db, "PRAGMA cache_size = -16384")
}

/// And the ones it restores when done.
func restorePragmas(_ db: OpaquePointer) {
    RawSQLite.exec(db, "PRAGMA journal_mode = DELETE")
    RawSQLite.exec(db, "PRAGMA synchronous = FULL")
}

/// Makes the empty destination store with the library (tables, Z_PRIMARYKEY, Z_METADATA)
/// and closes it: the raw variants write into the same layout the engine writes into.
func createEmptyStore(_ path: String, _ model: ObjectModel) {
    do { _ = try Store.create(at: path, model: model) } catch { die("\(path): \(error)") }
}

/// The default chunk size of ``MigrationOptions``: the raw loops commit as often.
let migrationChunkSize = MigrationOptions().chunkSize
let migrationChunkBytes = MigrationOptions().chunkBytes

/// SELECT the eight columns from the source opened read-only, INSERT into a new Products2
/// store with `price * 1.03`, committing every `MigrationOptions().chunkSize` rows, with the
/// engine's pragmas. Text is bound where SQLite has it (`SQLITE_STATIC`).
func migrateProductsRaw(_ options: Options) -> VariantResult {
    let v2 = loadModel(options.mappingsFolder, "product-price/Products2.model.json")
    let (source, destination) = (options.source!, options.destination!)
    var rows = 0
    let (_, seconds) = timed {
        createEmptyStore(destination, v2)
        let src = RawSQLite.open(source, readOnly: true)
        let dst = RawSQLite.open(destination)
        applyMigrationPragmas(dst)
        let entity = RawSQLite.entityNumber(dst, "Product")
        let select = RawSQLite.prepare(
            src,
            "SELECT Z_PK, ZNAME, ZSKU, ZPRICE, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES FROM ZPRODUCT ORDER BY Z_PK")
        let insert = RawSQLite.prepare(
            dst,
            """
            INSERT INTO ZPRODUCT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZSKU, ZPRICE, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES)
            VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let updateMax = RawSQLite.prepare(dst, "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?")
        var highest: Int64 = 0
        func commit() {
            sqlite3_bind_int64(updateMax, 1, highest)
            sqlite3_bind_int64(updateMax, 2, entity)
            RawSQLite.run(updateMax, dst)
            RawSQLite.exec(dst, "COMMIT")
        }
        // Copies a text or NULL column; the bytes stay valid until the next step of `select`.
        @inline(__always) func copyText(_ from: Int32, _ to: Int32) {
            if let text = sqlite3_column_text(select, from) {
                sqlite3_bind_text(insert, to, text, sqlite3_column_bytes(select, from), sqliteStatic)
            } else {
                sqlite3_bind_null(insert, to)
            }
        }
        @inline(__always) func copyReal(_ from: Int32, _ to: Int32) {
            if sqlite3_column_type(select, from) == SQLITE_NULL {
                sqlite3_bind_null(insert, to)
            } else {
                sqlite3_bind_double(insert, to, sqlite3_column_double(select, from))
            }
        }
        RawSQLite.exec(dst, "BEGIN IMMEDIATE")
        while true {
            let rc = sqlite3_step(select)
            if rc != SQLITE_ROW {
                if rc != SQLITE_DONE { die("step: \(RawSQLite.message(src))") }
                break
            }
            highest = sqlite3_column_int64(select, 0)
            sqlite3_bind_int64(insert, 1, highest)
            sqlite3_bind_int64(insert, 2, entity)
            copyText(1, 3)
            copyText(2, 4)
            sqlite3_bind_double(insert, 5, sqlite3_column_double(select, 3) * 1.03)
            sqlite3_bind_int64(insert, 6, sqlite3_column_int64(select, 4))
            copyReal(5, 7)
            copyReal(6, 8)
            sqlite3_bind_int64(insert, 9, sqlite3_column_int64(select, 7))
            copyText(8, 10)
            RawSQLite.run(insert, dst)
            rows += 1
            if rows % migrationChunkSize == 0 {
                commit()
                RawSQLite.exec(dst, "BEGIN IMMEDIATE")
            }
        }
        commit()
        restorePragmas(dst)
        for statement in [select, insert, updateMax] { sqlite3_finalize(statement) }
        RawSQLite.close(src)
        RawSQLite.close(dst)
    }
    return VariantResult(seconds: seconds, rows: rows)
}

/// Pure SQL: ATTACH the source read-only, one `INSERT INTO ZPRODUCT (…) SELECT …,
/// ZPRICE * 1.03, … FROM src.ZPRODUCT` and Z_PRIMARYKEY's Z_MAX, in one transaction,
/// with the engine's pragmas. With `appending`, the keys are SQLite's (a NULL `Z_PK`: the
/// next rowid, the same keys where the source's are 1, 2, …, as the generated store's
/// are), so that SQLite appends each row without a search for its key, as the engine's
/// statements do where they may (docs/pushdown.md).
func migrateProductsSQL(_ options: Options, appending: Bool) -> VariantResult {
    let v2 = loadModel(options.mappingsFolder, "product-price/Products2.model.json")
    let (source, destination) = (options.source!, options.destination!)
    var rows = 0
    let (_, seconds) = timed {
        createEmptyStore(destination, v2)
        let dst = RawSQLite.open(destination, uri: true)
        applyMigrationPragmas(dst)
        let entity = RawSQLite.entityNumber(dst, "Product")
        RawSQLite.exec(dst, "ATTACH DATABASE '\(fileURI(source, readOnly: true))' AS src")
        RawSQLite.exec(
            dst,
            """
            BEGIN IMMEDIATE;
            INSERT INTO ZPRODUCT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZSKU, ZPRICE, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES)
                SELECT \(appending ? "NULL" : "Z_PK"), \(entity), 1, ZNAME, ZSKU, ZPRICE * 1.03, ZQUANTITY, ZWEIGHT, ZADDED,
                    ZACTIVE, ZNOTES
                FROM src.ZPRODUCT ORDER BY Z_PK;
            UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM ZPRODUCT) WHERE Z_ENT = \(entity);
            COMMIT;
            DETACH DATABASE src;
            """)
        rows = Int(RawSQLite.integer(dst, "SELECT count(*) FROM ZPRODUCT"))
        restorePragmas(dst)
        RawSQLite.close(dst)
    }
    return VariantResult(seconds: seconds, rows: rows)
}

/// `file:<path>?mode=ro`, for ATTACH.
func fileURI(_ path: String, readOnly: Bool) -> String {
    var escaped = ""
    for byte in path.utf8 {
        switch byte {
        case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "'"), 0..<0x21, 0x7F...:
            escaped += String(format: "%%%02X", byte)
        default: escaped.unicodeScalars.append(Unicode.Scalar(byte))
        }
    }
    return "file:" + escaped + (readOnly ? "?mode=ro" : "")
}

// MARK: - The benchmark

let productMigrationVariants = [
    Variant(id: "products-migrate-remodel", label: "MigrationManager", role: .remodel),
    Variant(id: "products-migrate-interpreted", label: "MigrationManager, --no-pushdown", role: .remodel),
    Variant(id: "products-migrate-raw", label: "raw C API", role: .raw),
    Variant(id: "products-migrate-sql", label: "pure SQL", role: .reference),
    Variant(id: "products-migrate-sql-appending", label: "pure SQL, keys by SQLite", role: .reference)
]

/// Writes `rows` generated products into a new Products1 store with raw inserts, fast
/// (no journal, no syncing): the source of the migration benchmark.
func generateProductsStore(_ path: String, rows: Int, model: ObjectModel) {
    createEmptyStore(path, model)
    let generator = ProductGenerator()
    let db = RawSQLite.open(path)
    RawSQLite.exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
    let entity = RawSQLite.entityNumber(db, "Product")
    let insert = RawSQLite.prepare(
        db,
        """
        INSERT INTO ZPRODUCT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZSKU, ZPRICE, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES)
        VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)
        """)
    RawSQLite.exec(db, "BEGIN")
    for i in 0..<rows {
        let row = generator.row(i)
        RawSQLite.bindProduct(row, key: Int64(i + 1), entity: entity, to: insert)
        RawSQLite.run(insert, db)
    }
    RawSQLite.exec(db, "UPDATE Z_PRIMARYKEY SET Z_MAX = \(rows) WHERE Z_ENT = \(entity); COMMIT")
    RawSQLite.exec(db, "PRAGMA journal_mode = DELETE")
    sqlite3_finalize(insert)
    RawSQLite.close(db)
}

func runProductsMigrationBenchmark(_ options: Options) {
    let rows = options.rowCount
    let parent = options.directory
    let mappings = options.mappingsFolder
    checkNotInRepository(parent, mappings)
    requireFreeSpace(rows * 250 + (50 << 20), at: parent, for: "a source and a destination store of \(rows) rows")
    let directory = makeTemporaryDirectory(in: parent)
    defer { removeTemporaryDirectory() }
    let loadBefore = Machine.loadAverage
    let started = Date()
    let quiet = options.markdown

    let source = directory + "/Products1.sqlite"
    if !quiet { progressLine("generating \(rows) products in \(source) …") }
    generateProductsStore(source, rows: rows, model: loadModel(mappings, productsModelPath))
    let v2 = loadModel(mappings, "product-price/Products2.model.json")
    let sourceExpected = ProductGenerator().checksum(count: rows)
    let (sourceRows, sourceChecksum) = tableChecksum(source, table: "ZPRODUCT", columns: productColumns)
    guard sourceRows == rows, sourceChecksum == sourceExpected else {
        die("the generated source store does not hold the generated rows")
    }
    let expected = ProductGenerator().checksum(count: rows, priceFactor: 1.03)
    let common = ["--mappings", mappings.path, "--rows", "\(rows)", "--source", source]

    let idle = runVariant("idle", common, resultFile: resultFilePath())
    var destinationBytes: [String: Int] = [:]
    let runs = measureVariants(
        "migrate", productMigrationVariants.filter { options.only?.contains($0.id) ?? true },
        rounds: options.roundCount, quiet: quiet,
        arguments: { variant, _ in common + ["--destination", "\(directory)/\(variant.id).sqlite"] },
        check: { variant, _, measurement in
            let path = "\(directory)/\(variant.id).sqlite"
            defer { removeStore(path) }
            let (count, checksum) = tableChecksum(path, table: "ZPRODUCT", columns: productColumns)
            guard count == rows, checksum == expected, measurement.result.rows == rows else {
                die(
                    "\(variant.label) wrote \(count) rows with checksum \(checksum.hex); expected \(rows), \(expected.hex)"
                )
            }
            verifyPrimaryKeyMax(path, entity: "Product", rows)
            verifyStoreOpens(path, v2)
            destinationBytes[variant.label] = fileSize(path)
        })

    let run = { (id: String) in runs.first { $0.variant.id == id } }
    guard let engine = run("products-migrate-remodel") else { die("--only must keep products-migrate-remodel") }
    var report = BenchmarkReport(
        title: "migrate-products: \(rows) rows, Products1 → Products2 (mappings/product-price: price * 1.03)",
        header: interleavedHeader(
            options, loadBefore: loadBefore, started: started,
            more: "; raw commits every \(migrationChunkSize) rows (MigrationOptions' default chunkSize), "
                + "pure SQL in one transaction"),
        groups: [runs])
    report.footnotes =
        [
            "checksums: every destination agrees with the source's rows with price * 1.03 (\(rows) rows, \(expected.hex)), "
                + "Z_PRIMARYKEY.Z_MAX is \(rows), and each opens as a Products2 store"
        ] + migrationFootnotes(source: source, destinationBytes: destinationBytes, idle: idle, engine: engine)
    // Speed as rows a second: the reference's time over the engine's.
    report.targets =
        [
            ("products-migrate-raw", "the raw loop's", 0.7), ("products-migrate-sql", "pure SQL's", 0.8),
            ("products-migrate-sql-appending", "pure SQL's with SQLite's keys", 0.8)
        ]
        .compactMap { id, label, target in
            run(id).map {
                let ratio = $0.medianSeconds / engine.medianSeconds
                return
                    "target ≥ \(Int(target * 100))% of \(label) rows/s: \(String(format: "%.0f%%", ratio * 100)) — \(verdict(ratio >= target))"
            }
        } + ["target peak memory < 64 MB: \(formatMB(engine.peakRSS)) — \(verdict(engine.peakRSS < 64_000_000))"]
    if options.markdown { report.printMarkdown() } else { report.printText() }
}

/// The footnotes every migration benchmark prints after its checksums: the destination
/// pragmas, the file sizes, the process floor and the engine's stages.
func migrationFootnotes(source: String, destinationBytes: [String: Int], idle: Measurement, engine: VariantRuns)
    -> [String]
{
    [
        "destination pragmas while writing (every variant): journal_mode OFF, synchronous OFF, cache_size -16384 (MigrationManager's)",
        "source store \(formatBytes(fileSize(source))); destinations "
            + destinationBytes.sorted { $0.key < $1.key }.map { "\($0.key) \(formatBytes($0.value))" }.joined(
                separator: ", "),
        "process floor (runtime and model loaded, nothing done): \(formatMB(idle.maxRSS)) peak RSS"
    ]
        + (engine.splits.isEmpty
            ? []
            : [
                "MigrationManager's stages (median s): "
                    + engine.splits.map { "\($0.0) \(String(format: "%.2f", $0.1))" }.joined(separator: "; ")
            ])
}

/// The destination must open as a store of `model` (its tables and columns checked).
func verifyStoreOpens(_ path: String, _ model: ObjectModel) {
    do {
        _ = try Store.open(at: path, model: model, mode: .readOnly)
    } catch {
        die("\(path) does not open as a \(model.version) store: \(error)")
    }
}
