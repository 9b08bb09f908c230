import CSQLiteBaseline
import Foundation
import Remodel

// remodel-bench store: N Product rows (mappings/product-price/Products1, 8 attributes)
// inserted through ObjectContext and read back through a FetchCursor, against raw C-API
// loops doing the same into and out of the same tables. See docs/performance.md.

let productsModelPath = "product-price/Products1.model.json"

// MARK: - The variants (each in its own process)

/// Times `body` on a context over a new store at the destination: `body` inserts the
/// generated rows, saving every `chunk`; the last save and the pragmas follow.
private func timedProductInsert(
    _ options: Options, _ what: String,
    _ body: (ObjectContext, ProductGenerator, _ rows: Int, _ chunk: Int) throws -> Void
) -> VariantResult {
    let model = loadModel(options.mappingsFolder, productsModelPath)
    let generator = ProductGenerator()
    var pragmas = ""
    let (_, seconds) = timed {
        do {
            let context = ObjectContext(store: try Store.create(at: options.destination!, model: model))
            try body(context, generator, options.rowCount, options.chunk)
            try context.save()
            pragmas = try connectionPragmas(context.database)
        } catch {
            die("insert through \(what): \(error)")
        }
    }
    return VariantResult(seconds: seconds, rows: options.rowCount, notes: ["pragmas": pragmas])
}

/// The eight attributes of `Product`, in the order of ``productAttributes``, each resolved
/// once into an `AttributeKey` and held in a local by the loops that use them.
private func productKeys(_ context: ObjectContext) throws
    -> (AttributeKey, AttributeKey, AttributeKey, AttributeKey, AttributeKey, AttributeKey, AttributeKey, AttributeKey)
{
    let keys = try productAttributes.map { try context.attributeKey($0, of: "Product") }
    return (keys[0], keys[1], keys[2], keys[3], keys[4], keys[5], keys[6], keys[7])
}

/// Inserts rows through the object context: `insert`, eight `setValue(_:forKey:)`,
/// `save()` every `chunk` objects.
func storeInsertRemodel(_ options: Options) -> VariantResult {
    timedProductInsert(options, "ObjectContext") { context, generator, rows, chunk in
        for i in 0..<rows {
            let row = generator.row(i)
            let product = try context.insert("Product")
            try product.setValue(.string(row.name), forKey: "name")
            try product.setValue(row.sku.map(Value.string) ?? .null, forKey: "sku")
            try product.setValue(.double(row.price), forKey: "price")
            try product.setValue(.integer(row.quantity), forKey: "quantity")
            try product.setValue(row.weight.map(Value.double) ?? .null, forKey: "weight")
            try product.setValue(
                row.added.map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null, forKey: "added")
            try product.setValue(.bool(row.active), forKey: "active")
            try product.setValue(row.notes.map(Value.string) ?? .null, forKey: "notes")
            if (i + 1) % chunk == 0 { try context.save() }
        }
    }
}

/// The same inserts written as the object graph's documentation suggests for loops that
/// set the same attributes on many objects: each attribute resolved once into an
/// `AttributeKey`, then `setValue(_:for:)`.
func storeInsertRemodelKeys(_ options: Options) -> VariantResult {
    timedProductInsert(options, "ObjectContext with attribute keys") { context, generator, rows, chunk in
        let (name, sku, price, quantity, weight, added, active, notes) = try productKeys(context)
        for i in 0..<rows {
            let row = generator.row(i)
            let product = try context.insert("Product")
            try product.setValue(.string(row.name), for: name)
            try product.setValue(row.sku.map(Value.string) ?? .null, for: sku)
            try product.setValue(.double(row.price), for: price)
            try product.setValue(.integer(row.quantity), for: quantity)
            try product.setValue(row.weight.map(Value.double) ?? .null, for: weight)
            try product.setValue(row.added.map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null, for: added)
            try product.setValue(.bool(row.active), for: active)
            try product.setValue(row.notes.map(Value.string) ?? .null, for: notes)
            if (i + 1) % chunk == 0 { try context.save() }
        }
    }
}

/// The same rows through a `RowInserter`, the object graph's API for creating many
/// objects and keeping none (Core Data's batch insert, in spirit): each row is written
/// when it is complete, without an object; `save()` every `chunk` rows commits them.
func storeInsertRowInserter(_ options: Options) -> VariantResult {
    timedProductInsert(options, "a RowInserter") { context, generator, rows, chunk in
        let (name, sku, price, quantity, weight, added, active, notes) = try productKeys(context)
        let inserter = try context.makeRowInserter(for: "Product")
        for i in 0..<rows {
            let row = generator.row(i)
            try inserter.set(.string(row.name), for: name)
            try inserter.set(row.sku.map(Value.string) ?? .null, for: sku)
            try inserter.set(.double(row.price), for: price)
            try inserter.set(.integer(row.quantity), for: quantity)
            try inserter.set(row.weight.map(Value.double) ?? .null, for: weight)
            try inserter.set(row.added.map { .date(Date(timeIntervalSinceReferenceDate: $0)) } ?? .null, for: added)
            try inserter.set(.bool(row.active), for: active)
            try inserter.set(row.notes.map(Value.string) ?? .null, for: notes)
            try inserter.insert()
            if (i + 1) % chunk == 0 { try context.save() }
        }
    }
}

/// The pragmas of a library connection, as `RawSQLite.pragmas` describes a raw one.
func connectionPragmas(_ database: Database) throws -> String {
    func text(_ sql: String) throws -> String {
        switch try database.scalar(sql) {
        case .text(let s)?: return s.uppercased()
        case .integer(let i)?: return "\(i)"
        default: return "?"
        }
    }
    let synchronous = ["0": "OFF", "1": "NORMAL", "2": "FULL", "3": "EXTRA"]
    let s = try text("PRAGMA synchronous")
    return
        "journal_mode \(try text("PRAGMA journal_mode")), synchronous \(synchronous[s] ?? s), cache_size \(try text("PRAGMA cache_size"))"
}

/// The same rows into the same layout with one prepared INSERT, the same chunks, the
/// same pragmas (the defaults of a store `Store.create` makes), and Z_PRIMARYKEY kept
/// up to date at each commit as `save()` does.
func storeInsertRaw(_ options: Options) -> VariantResult {
    let model = loadModel(options.mappingsFolder, productsModelPath)
    let generator = ProductGenerator()
    let (rows, chunk, path) = (options.rowCount, options.chunk, options.destination!)
    var pragmas = ""
    let (_, seconds) = timed {
        // The empty store (tables, Z_PRIMARYKEY, Z_METADATA), as the library makes it.
        do { _ = try Store.create(at: path, model: model) } catch { die("\(error)") }
        let db = RawSQLite.open(path)
        let entity = RawSQLite.entityNumber(db, "Product")
        let insert = RawSQLite.prepare(
            db,
            """
            INSERT INTO ZPRODUCT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZSKU, ZPRICE, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES)
            VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let updateMax = RawSQLite.prepare(db, "UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?")
        func commit(_ highest: Int) {
            sqlite3_bind_int64(updateMax, 1, Int64(highest))
            sqlite3_bind_int64(updateMax, 2, entity)
            RawSQLite.run(updateMax, db)
            RawSQLite.exec(db, "COMMIT")
        }
        RawSQLite.exec(db, "BEGIN IMMEDIATE")
        for i in 0..<rows {
            let row = generator.row(i)
            RawSQLite.bindProduct(row, key: Int64(i + 1), entity: entity, to: insert)
            RawSQLite.run(insert, db)
            if (i + 1) % chunk == 0 {
                commit(i + 1)
                RawSQLite.exec(db, "BEGIN IMMEDIATE")
            }
        }
        commit(rows)
        pragmas = RawSQLite.pragmas(db)
        sqlite3_finalize(insert)
        sqlite3_finalize(updateMax)
        RawSQLite.close(db)
    }
    return VariantResult(seconds: seconds, rows: rows, notes: ["pragmas": pragmas])
}

/// Times `body` on a context over the source store, opened read-only: `body` reads every
/// Product into the checksum and returns how many it read.
private func timedProductRead(_ options: Options, _ what: String, _ body: (ObjectContext, inout Checksum) throws -> Int)
    -> VariantResult
{
    let model = loadModel(options.mappingsFolder, productsModelPath)
    var checksum = Checksum()
    var rows = 0
    let (_, seconds) = timed {
        do {
            let context = ObjectContext(store: try Store.open(at: options.source!, model: model, mode: .readOnly))
            rows = try body(context, &checksum)
        } catch {
            die("read through \(what): \(error)")
        }
    }
    return VariantResult(seconds: seconds, rows: rows, checksum: checksum.hex)
}

/// Reads every Product through `context.makeCursor(FetchRequest(entityName: "Product"))`,
/// reading all eight values of each object with `value(forKey:)` into a checksum.
func storeReadRemodel(_ options: Options) -> VariantResult {
    timedProductRead(options, "a FetchCursor") { context, checksum in
        var rows = 0
        let cursor = try context.makeCursor(FetchRequest(entityName: "Product"))
        while let product = try cursor.next() {
            checksum.add(integer: product.objectID.primaryKey)
            for key in productAttributes { checksum.add(value: try product.value(forKey: key)) }
            rows += 1
        }
        return rows
    }
}

/// The same reads with each attribute resolved once into an `AttributeKey`, then
/// `value(for:)`: the hot-loop form the object graph documents.
func storeReadRemodelKeys(_ options: Options) -> VariantResult {
    timedProductRead(options, "a FetchCursor with attribute keys") { context, checksum in
        var rows = 0
        let (name, sku, price, quantity, weight, added, active, notes) = try productKeys(context)
        let cursor = try context.makeCursor(FetchRequest(entityName: "Product"))
        while let product = try cursor.next() {
            checksum.add(integer: product.objectID.primaryKey)
            checksum.add(value: try product.value(for: name))
            checksum.add(value: try product.value(for: sku))
            checksum.add(value: try product.value(for: price))
            checksum.add(value: try product.value(for: quantity))
            checksum.add(value: try product.value(for: weight))
            checksum.add(value: try product.value(for: added))
            checksum.add(value: try product.value(for: active))
            checksum.add(value: try product.value(for: notes))
            rows += 1
        }
        return rows
    }
}

/// The same reads through a `RowReader`, the object graph's reader of saved rows without
/// objects (Core Data's dictionary results, in spirit), with attribute keys.
func storeReadRowReader(_ options: Options) -> VariantResult {
    timedProductRead(options, "a RowReader") { context, checksum in
        var rows = 0
        let (name, sku, price, quantity, weight, added, active, notes) = try productKeys(context)
        let reader = try context.makeRowReader(for: "Product")
        while try reader.next() {
            checksum.add(integer: reader.primaryKey)
            checksum.add(value: try reader.value(for: name))
            checksum.add(value: try reader.value(for: sku))
            checksum.add(value: try reader.value(for: price))
            checksum.add(value: try reader.value(for: quantity))
            checksum.add(value: try reader.value(for: weight))
            checksum.add(value: try reader.value(for: added))
            checksum.add(value: try reader.value(for: active))
            checksum.add(value: try reader.value(for: notes))
            rows += 1
        }
        return rows
    }
}

/// The raw floor: one SELECT of the eight columns, `sqlite3_step`, each column read with
/// `sqlite3_column_*` and mixed into the checksum where SQLite has it (text bytes are not
/// copied into Swift strings).
func storeReadRaw(_ options: Options) -> VariantResult {
    var checksum = Checksum()
    var rows = 0
    let (_, seconds) = timed {
        let db = RawSQLite.open(options.source!, readOnly: true)
        let select = RawSQLite.prepare(
            db,
            "SELECT Z_PK, ZNAME, ZSKU, ZPRICE, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES FROM ZPRODUCT ORDER BY Z_PK")
        while true {
            let rc = sqlite3_step(select)
            if rc != SQLITE_ROW {
                if rc != SQLITE_DONE { die("step: \(RawSQLite.message(db))") }
                break
            }
            checksum.addColumn(select, 0, .integer)
            checksum.addColumn(select, 1, .text)
            checksum.addColumn(select, 2, .text)
            checksum.addColumn(select, 3, .real)
            checksum.addColumn(select, 4, .integer)
            checksum.addColumn(select, 5, .real)
            checksum.addColumn(select, 6, .real)
            checksum.addColumn(select, 7, .integer)
            checksum.addColumn(select, 8, .text)
            rows += 1
        }
        sqlite3_finalize(select)
        RawSQLite.close(db)
    }
    return VariantResult(seconds: seconds, rows: rows, checksum: checksum.hex)
}

/// The raw loop as hand-written Swift would keep the values: each row decoded into a
/// `ProductRow` (Swift `String`s, optionals), then checksummed. For reference: what the
/// decoding into Swift values costs over the raw floor.
func storeReadRawSwift(_ options: Options) -> VariantResult {
    var checksum = Checksum()
    var rows = 0
    let (_, seconds) = timed {
        let db = RawSQLite.open(options.source!, readOnly: true)
        let select = RawSQLite.prepare(
            db,
            "SELECT Z_PK, ZNAME, ZSKU, ZPRICE, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES FROM ZPRODUCT ORDER BY Z_PK")
        @inline(__always) func string(_ i: Int32) -> String? {
            guard let text = sqlite3_column_text(select, i) else { return nil }
            return String(
                decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(select, i))), as: UTF8.self)
        }
        @inline(__always) func real(_ i: Int32) -> Double? {
            sqlite3_column_type(select, i) == SQLITE_NULL ? nil : sqlite3_column_double(select, i)
        }
        while true {
            let rc = sqlite3_step(select)
            if rc != SQLITE_ROW {
                if rc != SQLITE_DONE { die("step: \(RawSQLite.message(db))") }
                break
            }
            let key = sqlite3_column_int64(select, 0)
            let row = ProductRow(
                name: string(1) ?? "", sku: string(2), price: sqlite3_column_double(select, 3),
                quantity: sqlite3_column_int64(select, 4), weight: real(5), added: real(6),
                active: sqlite3_column_int64(select, 7) != 0, notes: string(8))
            checksum.add(integer: key)
            checksum.add(opaque(row))
            rows += 1
        }
        sqlite3_finalize(select)
        RawSQLite.close(db)
    }
    return VariantResult(seconds: seconds, rows: rows, checksum: checksum.hex)
}

/// Loads the models and does nothing: the memory every variant's process starts with.
func idleVariant(_ options: Options) -> VariantResult {
    let model = loadModel(options.mappingsFolder, productsModelPath)
    blackHole(model)
    return VariantResult(seconds: 0, rows: 0)
}

// MARK: - The benchmark

let storeVariants = (
    insert: [
        Variant(id: "store-insert-remodel", label: "ObjectContext", role: .remodel),
        Variant(id: "store-insert-raw", label: "raw C API", role: .raw),
        Variant(id: "store-insert-remodel-keys", label: "ObjectContext, AttributeKey", role: .remodel),
        Variant(id: "store-insert-rows", label: "RowInserter", role: .remodel)
    ],
    read: [
        Variant(id: "store-read-remodel", label: "FetchCursor", role: .remodel),
        Variant(id: "store-read-raw", label: "raw C API", role: .raw),
        Variant(id: "store-read-raw-swift", label: "raw C API + Swift values", role: .reference),
        Variant(id: "store-read-remodel-keys", label: "FetchCursor, AttributeKey", role: .remodel),
        Variant(id: "store-read-rows", label: "RowReader", role: .remodel)
    ]
)

func runStoreBenchmark(_ options: Options) {
    let rows = options.rowCount
    let parent = options.directory
    let mappings = options.mappingsFolder
    checkNotInRepository(parent, mappings)
    // Two stores of ~110 bytes a row at once (the one kept for reading, the one being written).
    requireFreeSpace(rows * 250 + (50 << 20), at: parent, for: "two stores of \(rows) rows")
    let directory = makeTemporaryDirectory(in: parent)
    defer { removeTemporaryDirectory() }
    let loadBefore = Machine.loadAverage
    let started = Date()
    let generator = ProductGenerator()
    let expected = generator.checksum(count: rows)
    let common = ["--mappings", mappings.path, "--rows", "\(rows)", "--chunk", "\(options.chunk)"]
    let quiet = options.markdown

    let idle = runVariant("idle", common, resultFile: resultFilePath())

    // (a) Inserts. Each round writes a new store; the first round's ObjectContext store is
    // kept for the reads.
    let kept = directory + "/read.sqlite"
    var pragmas: [String: String] = [:]
    let inserts = measureVariants(
        "insert", storeVariants.insert, rounds: options.roundCount, quiet: quiet,
        arguments: { variant, round in common + ["--destination", "\(directory)/\(variant.id)-\(round).sqlite"] },
        check: { variant, round, measurement in
            let path = "\(directory)/\(variant.id)-\(round).sqlite"
            let (count, checksum) = tableChecksum(path, table: "ZPRODUCT", columns: productColumns)
            guard count == rows, checksum == expected else {
                die(
                    "\(variant.label) wrote \(count) rows with checksum \(checksum.hex); expected \(rows), \(expected.hex)"
                )
            }
            verifyPrimaryKeyMax(path, entity: "Product", rows)
            pragmas[variant.label] = measurement.result.notes["pragmas"]
            if round == 0 && variant.id == storeVariants.insert[0].id {
                try? FileManager.default.moveItem(atPath: path, toPath: kept)
            } else {
                removeStore(path)
            }
        })
    let storeBytes = fileSize(kept)

    // (b) Reads of the kept store.
    let reads = measureVariants(
        "read", storeVariants.read, rounds: options.roundCount, quiet: quiet,
        arguments: { _, _ in common + ["--source", kept] },
        check: { variant, _, measurement in
            guard measurement.result.rows == rows, measurement.result.checksum == expected.hex else {
                die(
                    "\(variant.label) read \(measurement.result.rows) rows with checksum \(measurement.result.checksum ?? "none"); expected \(rows), \(expected.hex)"
                )
            }
        })
    removeStore(kept)

    let insertRatio = inserts[1].medianSeconds / inserts[0].medianSeconds
    let readRatio = reads[1].medianSeconds / reads[0].medianSeconds
    let insertKeysRatio = inserts[1].medianSeconds / inserts[2].medianSeconds
    let insertRowsRatio = inserts[1].medianSeconds / inserts[3].medianSeconds
    let readKeysRatio = reads[1].medianSeconds / reads[3].medianSeconds
    let readRowsRatio = reads[1].medianSeconds / reads[4].medianSeconds
    let peak = [inserts[0], inserts[2], inserts[3], reads[0], reads[3], reads[4]].map(\.peakRSS).max()!
    var report = BenchmarkReport(
        title: "store: \(rows) Product rows (mappings/product-price/Products1, 8 attributes)",
        header: interleavedHeader(
            options, loadBefore: loadBefore, started: started, more: "; inserts save every \(options.chunk) objects"),
        groups: [inserts, reads])
    report.footnotes = [
        "checksums: every insert round's store and every read agree with the generated rows (\(rows) rows, \(expected.hex))",
        "pragmas while inserting: "
            + pragmas.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; "),
        "store file: \(formatBytes(storeBytes)); process floor (runtime and model loaded, nothing done): \(formatMB(idle.maxRSS)) peak RSS"
    ]
    report.targets = [
        "target insert ≥ 70% of raw: by name \(String(format: "%.0f%%", insertRatio * 100)) — \(verdict(insertRatio >= 0.7)); "
            + "with attribute keys \(String(format: "%.0f%%", insertKeysRatio * 100)) — \(verdict(insertKeysRatio >= 0.7)); "
            + "RowInserter \(String(format: "%.0f%%", insertRowsRatio * 100)) — \(verdict(insertRowsRatio >= 0.7))",
        "target read ≥ 70% of raw: by name \(String(format: "%.0f%%", readRatio * 100)) — \(verdict(readRatio >= 0.7)); "
            + "with attribute keys \(String(format: "%.0f%%", readKeysRatio * 100)) — \(verdict(readKeysRatio >= 0.7)); "
            + "RowReader \(String(format: "%.0f%%", readRowsRatio * 100)) — \(verdict(readRowsRatio >= 0.7))",
        "target peak memory < 64 MB: insert \(formatMB([inserts[0], inserts[2], inserts[3]].map(\.peakRSS).max()!)), read \(formatMB([reads[0], reads[3], reads[4]].map(\.peakRSS).max()!)) — \(verdict(peak < 64_000_000))"
    ]
    if options.markdown { report.printMarkdown() } else { report.printText() }
}

/// Z_PRIMARYKEY's Z_MAX for `entity` must be the highest key written.
func verifyPrimaryKeyMax(_ path: String, entity: String, _ expected: Int) {
    let db = RawSQLite.open(path, readOnly: true)
    defer { RawSQLite.close(db) }
    let max = RawSQLite.integer(db, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = '\(entity)'")
    if max != expected { die("\(path): Z_PRIMARYKEY.Z_MAX of \(entity) is \(max), not \(expected)") }
}

/// Stores are never made inside the repository.
func checkNotInRepository(_ directory: String, _ mappings: URL) {
    let root = repositoryRoot(mappings).standardizedFileURL.resolvingSymlinksInPath().path
    let target = URL(fileURLWithPath: directory).standardizedFileURL.resolvingSymlinksInPath().path
    if target == root || target.hasPrefix(root + "/") {
        die(
            "\(directory) is inside the repository (\(root)); the benchmark's stores go in $TMPDIR or a --dir outside it"
        )
    }
}
