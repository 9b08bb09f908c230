import CSQLiteBaseline
import Foundation
import Remodel

// remodel-bench item-images: N items carrying images of S random bytes (Items1) migrated
// to Items2 with mappings/item-images, which moves each image into an Image linked from
// its item, by the MigrationManager, a raw C-API loop and pure SQL. See docs/performance.md.

// MARK: - The variants (each in its own process)

/// One pass over the source items: each item is inserted without its image; an item with
/// an image gets an Image holding the bytes (bound where SQLite has them, `SQLITE_STATIC`)
/// and the two are linked both ways. Commits when `MigrationOptions`' default chunk fills:
/// 5,000 objects or 32 MiB of strings and data, whichever comes first.
func migrateImagesRaw(_ options: Options) -> VariantResult {
    let v2 = loadModel(options.mappingsFolder, "item-images/Items2.model.json")
    let (source, destination) = (options.source!, options.destination!)
    var (rows, bytes) = (0, 0)
    let (_, seconds) = timed {
        createEmptyStore(destination, v2)
        let src = RawSQLite.open(source, readOnly: true)
        let dst = RawSQLite.open(destination)
        applyMigrationPragmas(dst)
        let (itemEntity, imageEntity) = (RawSQLite.entityNumber(dst, "Item"), RawSQLite.entityNumber(dst, "Image"))
        let select = RawSQLite.prepare(src, "SELECT Z_PK, ZNAME, ZCREATED, ZIMAGE FROM ZITEM ORDER BY Z_PK")
        let insertItem = RawSQLite.prepare(
            dst, "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCREATED, ZIMAGE) VALUES (?, ?, 1, ?, ?, ?)")
        let insertImage = RawSQLite.prepare(
            dst, "INSERT INTO ZIMAGE (Z_PK, Z_ENT, Z_OPT, ZITEM, ZDATA, ZBYTECOUNT) VALUES (?, ?, 1, ?, ?, ?)")
        let updateMax = RawSQLite.prepare(dst, "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?")
        var (itemKey, imageKey): (Int64, Int64) = (0, 0)
        var (chunkObjects, chunkBytes) = (0, 0)
        func commit() {
            for (key, entity) in [(itemKey, itemEntity), (imageKey, imageEntity)] {
                sqlite3_bind_int64(updateMax, 1, key)
                sqlite3_bind_int64(updateMax, 2, entity)
                RawSQLite.run(updateMax, dst)
            }
            RawSQLite.exec(dst, "COMMIT")
            (chunkObjects, chunkBytes) = (0, 0)
        }
        RawSQLite.exec(dst, "BEGIN IMMEDIATE")
        while true {
            let rc = sqlite3_step(select)
            if rc != SQLITE_ROW {
                if rc != SQLITE_DONE { die("step: \(RawSQLite.message(src))") }
                break
            }
            itemKey = sqlite3_column_int64(select, 0)
            let name = sqlite3_column_text(select, 1)
            let nameBytes = sqlite3_column_bytes(select, 1)
            sqlite3_bind_int64(insertItem, 1, itemKey)
            sqlite3_bind_int64(insertItem, 2, itemEntity)
            sqlite3_bind_text(insertItem, 3, name, nameBytes, sqliteStatic)
            if sqlite3_column_type(select, 2) == SQLITE_NULL {
                sqlite3_bind_null(insertItem, 4)
            } else {
                sqlite3_bind_double(insertItem, 4, sqlite3_column_double(select, 2))
            }
            chunkObjects += 1
            chunkBytes += Int(nameBytes)
            if sqlite3_column_type(select, 3) == SQLITE_NULL {
                sqlite3_bind_null(insertItem, 5)
            } else {
                imageKey += 1
                // Core Data's inline encoding of an external-storage attribute: a 0x01 marker,
                // then the bytes, which the new Image's data holds without it.
                let blob = sqlite3_column_blob(select, 3).map { $0 + 1 }
                let count = sqlite3_column_bytes(select, 3) - 1
                sqlite3_bind_int64(insertItem, 5, imageKey)
                sqlite3_bind_int64(insertImage, 1, imageKey)
                sqlite3_bind_int64(insertImage, 2, imageEntity)
                sqlite3_bind_int64(insertImage, 3, itemKey)
                sqlite3_bind_blob(insertImage, 4, blob, count, sqliteStatic)
                sqlite3_bind_int64(insertImage, 5, Int64(count))
                RawSQLite.run(insertImage, dst)
                chunkObjects += 1
                chunkBytes += Int(count)
                bytes += Int(count)
            }
            RawSQLite.run(insertItem, dst)
            rows += 1
            if chunkObjects >= migrationChunkSize || chunkBytes >= migrationChunkBytes {
                commit()
                RawSQLite.exec(dst, "BEGIN IMMEDIATE")
            }
        }
        commit()
        restorePragmas(dst)
        for statement in [select, insertItem, insertImage, updateMax] { sqlite3_finalize(statement) }
        RawSQLite.close(src)
        RawSQLite.close(dst)
    }
    return VariantResult(seconds: seconds, rows: rows, bytes: bytes)
}

/// Pure SQL: ATTACH the source read-only; insert the images in the items' order (SQLite
/// numbers them 1, 2, … as Z_PK), then the items without their images, each joined to its
/// image through the Image.item index; Z_PRIMARYKEY. One transaction, the engine's pragmas.
func migrateImagesSQL(_ options: Options) -> VariantResult {
    let v2 = loadModel(options.mappingsFolder, "item-images/Items2.model.json")
    let (source, destination) = (options.source!, options.destination!)
    var (rows, bytes) = (0, 0)
    let (_, seconds) = timed {
        createEmptyStore(destination, v2)
        let dst = RawSQLite.open(destination, uri: true)
        applyMigrationPragmas(dst)
        let (item, image) = (RawSQLite.entityNumber(dst, "Item"), RawSQLite.entityNumber(dst, "Image"))
        RawSQLite.exec(dst, "ATTACH DATABASE '\(fileURI(source, readOnly: true))' AS src")
        RawSQLite.exec(
            dst,
            """
            BEGIN IMMEDIATE;
            INSERT INTO ZIMAGE (Z_ENT, Z_OPT, ZITEM, ZBYTECOUNT, ZDATA)
                SELECT \(image), 1, Z_PK, length(ZIMAGE) - 1, substr(ZIMAGE, 2) FROM src.ZITEM WHERE ZIMAGE IS NOT NULL ORDER BY Z_PK;
            INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCREATED, ZIMAGE)
                SELECT i.Z_PK, \(item), 1, i.ZNAME, i.ZCREATED, m.Z_PK
                FROM src.ZITEM i LEFT JOIN ZIMAGE m ON m.ZITEM = i.Z_PK ORDER BY i.Z_PK;
            UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM ZITEM) WHERE Z_ENT = \(item);
            UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM ZIMAGE) WHERE Z_ENT = \(image);
            COMMIT;
            DETACH DATABASE src;
            """)
        rows = Int(RawSQLite.integer(dst, "SELECT count(*) FROM ZITEM"))
        bytes = Int(RawSQLite.integer(dst, "SELECT ifnull(sum(ZBYTECOUNT), 0) FROM ZIMAGE"))
        restorePragmas(dst)
        RawSQLite.close(dst)
    }
    return VariantResult(seconds: seconds, rows: rows, bytes: bytes)
}

// MARK: - The benchmark

let itemImagesVariants = [
    Variant(id: "images-migrate-remodel", label: "MigrationManager", role: .remodel),
    Variant(id: "images-migrate-raw", label: "raw C API", role: .raw),
    Variant(id: "images-migrate-sql", label: "pure SQL", role: .reference)
]

/// What a correct destination holds, computed while generating the source.
struct ItemImagesExpectation {
    var items = 0
    var images = 0
    var bytes = 0
    /// Over ZITEM's (Z_PK, ZNAME, ZCREATED, ZIMAGE) in key order.
    var itemChecksum = Checksum()
    /// Over ZIMAGE's (Z_PK, ZITEM, ZBYTECOUNT, ZDATA) in key order.
    var imageChecksum = Checksum()
}

let itemColumns: [(String, ColumnKind)] = [
    ("Z_PK", .integer), ("ZNAME", .text), ("ZCREATED", .real), ("ZIMAGE", .integer)
]
let imageColumns: [(String, ColumnKind)] = [
    ("Z_PK", .integer), ("ZITEM", .integer), ("ZBYTECOUNT", .integer), ("ZDATA", .blob)
]

/// Writes `count` items into a new Items1 store: item `i` is named `item i`, has a date,
/// and (except every 100th, which has none) an image of `size` random bytes from a seeded
/// generator, so nothing compresses and every run sees the same bytes. With `external`,
/// each image is a file of the store's `_EXTERNAL_DATA` folder, as Core Data stores a
/// value over its threshold; otherwise inline.
func generateItemsStore(_ path: String, count: Int, size: Int, model: ObjectModel, external: Bool = false)
    -> ItemImagesExpectation
{
    let folder = ExternalBinaryData.folder(ofStoreAt: path)
    if external {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            die("cannot make \(folder.path): \(error)")
        }
    }
    createEmptyStore(path, model)
    let db = RawSQLite.open(path)
    RawSQLite.exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
    let entity = RawSQLite.entityNumber(db, "Item")
    let insert = RawSQLite.prepare(
        db, "INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCREATED, ZIMAGE) VALUES (?, ?, 1, ?, ?, ?)")
    var expected = ItemImagesExpectation()
    var random = SplitMix64(seed: 0x1DEA_5EED)
    let words = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: (size + 7) / 8)
    defer { words.deallocate() }
    // Stored as Core Data stores an external-storage attribute's value inline: 0x01, then
    // the bytes.
    let stored = UnsafeMutableRawBufferPointer.allocate(byteCount: size + 1, alignment: 8)
    defer { stored.deallocate() }
    stored[0] = 0x01
    RawSQLite.exec(db, "BEGIN")
    for i in 0..<count {
        let key = Int64(i + 1)
        let name = "item \(i)"
        let created = 700_000_000 + Double(i) * 3_600.5
        sqlite3_bind_int64(insert, 1, key)
        sqlite3_bind_int64(insert, 2, entity)
        sqlite3_bind_text(insert, 3, name, -1, sqliteTransient)
        sqlite3_bind_double(insert, 4, created)
        expected.items += 1
        expected.itemChecksum.add(integer: key)
        expected.itemChecksum.add(string: name)
        expected.itemChecksum.add(real: created)
        if i % 100 == 99 {
            sqlite3_bind_null(insert, 5)
            expected.itemChecksum.addNull()
        } else {
            for w in words.indices { words[w] = random.next() }
            let bytes = UnsafeRawBufferPointer(start: words.baseAddress, count: size)
            if external {
                let name = UUID().uuidString
                guard
                    FileManager.default.createFile(
                        atPath: folder.appendingPathComponent(name).path, contents: Data(bytes))
                else { die("cannot write an image into \(folder.path)") }
                let reference = [UInt8(2)] + Array(name.utf8) + [0]
                sqlite3_bind_blob(insert, 5, reference, Int32(reference.count), sqliteTransient)
            } else {
                UnsafeMutableRawBufferPointer(rebasing: stored[1...]).copyMemory(from: bytes)
                sqlite3_bind_blob(insert, 5, stored.baseAddress, Int32(size + 1), sqliteStatic)
            }
            expected.images += 1
            expected.bytes += size
            let imageKey = Int64(expected.images)
            expected.itemChecksum.add(integer: imageKey)
            expected.imageChecksum.add(integer: imageKey)
            expected.imageChecksum.add(integer: key)
            expected.imageChecksum.add(integer: Int64(size))
            expected.imageChecksum.add(bytes: bytes)
        }
        RawSQLite.run(insert, db)
        if i % 50 == 49 { RawSQLite.exec(db, "COMMIT; BEGIN") }
    }
    RawSQLite.exec(db, "UPDATE Z_PRIMARYKEY SET Z_MAX = \(count) WHERE Z_ENT = \(entity); COMMIT")
    RawSQLite.exec(db, "PRAGMA journal_mode = DELETE")
    sqlite3_finalize(insert)
    RawSQLite.close(db)
    return expected
}

/// Parses `614400`, `600K`, `600k`, `1M`: kibibytes and mebibytes.
func parseSize(_ text: String) -> Int? {
    let lower = text.lowercased()
    if lower.hasSuffix("k"), let n = Int(lower.dropLast()) { return n * 1024 }
    if lower.hasSuffix("m"), let n = Int(lower.dropLast()) { return n * 1024 * 1024 }
    return Int(lower)
}

func runItemImagesBenchmark(_ options: Options) {
    let (count, size) = (options.items ?? 2_000, options.size ?? 600 * 1024)
    let external = options.external
    let parent = options.directory
    let mappings = options.mappingsFolder
    checkNotInRepository(parent, mappings)
    // The source, one destination at a time (the engine's can be larger than the data,
    // see docs/performance.md), and a margin.
    let payload = count * size
    requireFreeSpace(
        payload * 7 / 2 + (100 << 20), at: parent,
        for: "a source of \(count) items of \(formatBytes(size)) (\(formatBytes(payload))) and its migrated copy")
    let directory = makeTemporaryDirectory(in: parent)
    defer { removeTemporaryDirectory() }
    let loadBefore = Machine.loadAverage
    let started = Date()
    let quiet = options.markdown

    let source = directory + "/Items1.sqlite"
    if !quiet {
        progressLine(
            "generating \(count) items with images of \(size) random bytes \(external ? "in files beside" : "in") \(source) …"
        )
    }
    let expected = generateItemsStore(
        source, count: count, size: size, model: loadModel(mappings, "item-images/Items1.model.json"),
        external: external)
    let v2 = external ? externalItems2(mappings) : loadModel(mappings, "item-images/Items2.model.json")
    let variants = external ? externalImagesVariants : itemImagesVariants
    let common = ["--mappings", mappings.path, "--source", source]

    let idle = runVariant("idle", common, resultFile: resultFilePath())
    var destinationBytes: [String: Int] = [:]
    let runs = measureVariants(
        "migrate", variants, rounds: options.roundCount, quiet: quiet,
        arguments: { variant, _ in common + ["--destination", "\(directory)/\(variant.id).sqlite"] },
        check: { variant, _, measurement in
            let path = "\(directory)/\(variant.id).sqlite"
            let support = ExternalBinaryData.folder(ofStoreAt: path).deletingLastPathComponent()
            defer {
                removeStore(path)
                try? FileManager.default.removeItem(at: support)
            }
            let items = tableChecksum(path, table: "ZITEM", columns: itemColumns)
            guard items.rows == expected.items, items.checksum == expected.itemChecksum else {
                die(
                    "\(variant.label): \(items.rows) items, checksum \(items.checksum.hex); expected \(expected.items), \(expected.itemChecksum.hex)"
                )
            }
            // With external storage, each image must be in a file of its own.
            var images = (rows: 0, checksum: Checksum(), files: 0)
            if external {
                images = externalImageChecksum(path)
            } else {
                let table = tableChecksum(path, table: "ZIMAGE", columns: imageColumns)
                images = (table.rows, table.checksum, 0)
            }
            guard images.rows == expected.images, images.checksum == expected.imageChecksum,
                !external || images.files == expected.images
            else {
                die(
                    "\(variant.label): \(images.rows) images (\(images.files) in files), checksum \(images.checksum.hex); expected \(expected.images), \(expected.imageChecksum.hex)"
                )
            }
            verifyPrimaryKeyMax(path, entity: "Item", expected.items)
            verifyPrimaryKeyMax(path, entity: "Image", expected.images)
            verifyStoreOpens(path, v2)
            destinationBytes[variant.label] = fileSize(path)
        })

    // MigrationManager reports rows, not bytes: every variant moved the same images.
    var groups = runs
    for i in groups.indices {
        for r in groups[i].runs.indices {
            groups[i].runs[r].result.bytes = expected.bytes
            groups[i].runs[r].result.rows = expected.items
        }
    }
    let ratio = groups[1].medianSeconds / groups[0].medianSeconds
    let how =
        external
        ? "each image read from its file and written to a new one, synced at the end; raw commits at \(migrationChunkSize) objects"
        : "raw commits at \(migrationChunkSize) objects or \(migrationChunkBytes >> 20) MiB (MigrationOptions' defaults), pure SQL in one transaction"
    var report = BenchmarkReport(
        title:
            "item-images\(external ? " --external" : ""): \(count) items, \(expected.images) images of \(size) random bytes (\(formatBytes(expected.bytes))\(external ? ", each in a file" : "")), Items1 → Items2",
        header: interleavedHeader(
            options, loadBefore: loadBefore, started: started,
            more: "; rows/s counts source items, MB/s image bytes; \(how)"),
        groups: [groups], showsBytes: true)
    report.footnotes =
        [
            "checksums: every destination holds \(expected.items) items and \(expected.images) images that agree with the source "
                + "(items \(expected.itemChecksum.hex), images and their bytes \(expected.imageChecksum.hex)\(external ? ", each read from the file its row names" : "")); Z_MAX is right; each opens as an Items2 store"
        ] + migrationFootnotes(source: source, destinationBytes: destinationBytes, idle: idle, engine: groups[0])
    report.targets = [
        "raw loop's speed: MigrationManager at \(String(format: "%.0f%%", ratio * 100)) (no target set)",
        "target peak memory < 100 MB: \(formatMB(groups[0].peakRSS)) — \(verdict(groups[0].peakRSS < 100_000_000))"
    ]
    if options.markdown { report.printMarkdown() } else { report.printText() }
}
