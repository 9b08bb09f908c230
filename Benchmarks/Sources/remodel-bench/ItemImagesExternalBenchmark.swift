import CSQLiteBaseline
import Foundation
import Remodel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// remodel-bench item-images --external: the images are files of the source store's
// `_EXTERNAL_DATA` folder, as Core Data keeps values over its threshold, and Image.data
// allows external storage too, so each image is read from one file and written to a new
// one. MigrationManager against a raw loop that reads and writes the files itself. See
// docs/performance.md.

/// Items2 with Image.data in external storage.
func externalItems2(_ mappings: URL) -> ObjectModel {
    var model = loadModel(mappings, "item-images/Items2.model.json")
    guard let image = model.entities.firstIndex(where: { $0.name == "Image" }),
        let data = model.entities[image].attributes.firstIndex(where: { $0.name == "data" })
    else { die("Items2.model.json has no Image.data") }
    model.entities[image].attributes[data].allowsExternalBinaryDataStorage = true
    return model
}

func migrateExternalImagesWithManager(_ options: Options) -> VariantResult {
    let mappings = options.mappingsFolder
    let mapping = loadMapping(mappings, "item-images/Items1_to_Items2.mapping.json")
    let v1 = loadModel(mappings, "item-images/Items1.model.json")
    let v2 = externalItems2(mappings)
    let clock = ContinuousClock()
    let start = clock.now
    let report: MigrationReport
    do {
        let manager = try MigrationManager(mapping: mapping, source: v1, destination: v2)
        report = try manager.migrateStore(from: options.source!, to: options.destination!)
    } catch {
        die("MigrationManager: \(error)")
    }
    return VariantResult(
        seconds: (clock.now - start).seconds, rows: report.entityMappings.first?.sourceInstances ?? 0)
}

/// One pass over the source items, as migrateImagesRaw, but each image read from its
/// file (one reused buffer) and written to a new file of the destination's folder, named
/// by a new UUID, which the Image row refers to; the new files and their folder synced
/// at the end, as the engine syncs them before a store that refers to them is put in place.
func migrateExternalImagesRaw(_ options: Options) -> VariantResult {
    let v2 = externalItems2(options.mappingsFolder)
    let (source, destination) = (options.source!, options.destination!)
    let sourceFolder = ExternalBinaryData.folder(ofStoreAt: source).path
    let destinationFolder = ExternalBinaryData.folder(ofStoreAt: destination).path
    var (rows, bytes) = (0, 0)
    let (_, seconds) = timed {
        createEmptyStore(destination, v2)
        do {
            try FileManager.default.createDirectory(atPath: destinationFolder, withIntermediateDirectories: true)
        } catch {
            die("cannot make \(destinationFolder): \(error)")
        }
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
        var chunkObjects = 0
        var written: [String] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        func commit() {
            for (key, entity) in [(itemKey, itemEntity), (imageKey, imageEntity)] {
                sqlite3_bind_int64(updateMax, 1, key)
                sqlite3_bind_int64(updateMax, 2, entity)
                RawSQLite.run(updateMax, dst)
            }
            RawSQLite.exec(dst, "COMMIT")
            chunkObjects = 0
        }
        /// The bytes of the file `name` of the source's folder, into `buffer`.
        func readImage(_ name: String) -> Int {
            let fd = open(sourceFolder + "/" + name, O_RDONLY)
            guard fd >= 0 else { die("cannot open \(name)") }
            defer { close(fd) }
            var info = stat()
            fstat(fd, &info)
            let size = Int(info.st_size)
            if buffer.count < size { buffer = [UInt8](repeating: 0, count: size) }
            var done = 0
            while done < size {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, size - done) }
                guard n > 0 else { die("cannot read \(name)") }
                done += n
            }
            return size
        }
        RawSQLite.exec(dst, "BEGIN IMMEDIATE")
        while true {
            let rc = sqlite3_step(select)
            if rc != SQLITE_ROW {
                if rc != SQLITE_DONE { die("step: \(RawSQLite.message(src))") }
                break
            }
            itemKey = sqlite3_column_int64(select, 0)
            sqlite3_bind_int64(insertItem, 1, itemKey)
            sqlite3_bind_int64(insertItem, 2, itemEntity)
            sqlite3_bind_text(
                insertItem, 3, sqlite3_column_text(select, 1), sqlite3_column_bytes(select, 1), sqliteStatic)
            sqlite3_bind_double(insertItem, 4, sqlite3_column_double(select, 2))
            chunkObjects += 1
            if sqlite3_column_type(select, 3) == SQLITE_NULL {
                sqlite3_bind_null(insertItem, 5)
            } else {
                // 0x02, the file's 36-character name, a NUL.
                let reference = UnsafeRawBufferPointer(
                    start: sqlite3_column_blob(select, 3), count: Int(sqlite3_column_bytes(select, 3)))
                guard reference.count == 38, reference[0] == 2 else { die("item \(itemKey): not a file reference") }
                let count = readImage(String(decoding: reference[1..<37], as: UTF8.self))
                let name = UUID().uuidString
                let fd = open(destinationFolder + "/" + name, O_WRONLY | O_CREAT | O_EXCL, 0o644)
                guard fd >= 0, buffer.withUnsafeBytes({ write(fd, $0.baseAddress!, count) }) == count else {
                    die("cannot write \(name)")
                }
                close(fd)
                written.append(name)
                imageKey += 1
                let stored = [UInt8(2)] + Array(name.utf8) + [0]
                sqlite3_bind_int64(insertItem, 5, imageKey)
                sqlite3_bind_int64(insertImage, 1, imageKey)
                sqlite3_bind_int64(insertImage, 2, imageEntity)
                sqlite3_bind_int64(insertImage, 3, itemKey)
                sqlite3_bind_blob(insertImage, 4, stored, Int32(stored.count), sqliteTransient)
                sqlite3_bind_int64(insertImage, 5, Int64(count))
                RawSQLite.run(insertImage, dst)
                chunkObjects += 1
                bytes += count
            }
            RawSQLite.run(insertItem, dst)
            rows += 1
            if chunkObjects >= migrationChunkSize {
                commit()
                RawSQLite.exec(dst, "BEGIN IMMEDIATE")
            }
        }
        commit()
        for name in written {
            let fd = open(destinationFolder + "/" + name, O_RDONLY)
            fsync(fd)
            close(fd)
        }
        let folder = open(destinationFolder, O_RDONLY)
        fsync(folder)
        close(folder)
        restorePragmas(dst)
        for statement in [select, insertItem, insertImage, updateMax] { sqlite3_finalize(statement) }
        RawSQLite.close(src)
        RawSQLite.close(dst)
    }
    return VariantResult(seconds: seconds, rows: rows, bytes: bytes)
}

let externalImagesVariants = [
    Variant(id: "images-external-remodel", label: "MigrationManager", role: .remodel),
    Variant(id: "images-external-raw", label: "raw C API and files", role: .raw)
]

/// ZIMAGE's (Z_PK, ZITEM, ZBYTECOUNT, data) in key order, the data read from the file
/// each row refers to (or inline after its marker); and how many rows refer to a file.
func externalImageChecksum(_ path: String) -> (rows: Int, checksum: Checksum, files: Int) {
    let folder = ExternalBinaryData.folder(ofStoreAt: path)
    let db = RawSQLite.open(path, readOnly: true)
    defer { RawSQLite.close(db) }
    let statement = RawSQLite.prepare(db, "SELECT Z_PK, ZITEM, ZBYTECOUNT, ZDATA FROM ZIMAGE ORDER BY Z_PK")
    defer { sqlite3_finalize(statement) }
    var checksum = Checksum()
    var (rows, files) = (0, 0)
    while sqlite3_step(statement) == SQLITE_ROW {
        rows += 1
        for column in Int32(0)..<3 { checksum.addColumn(statement, column, .integer) }
        let stored = Data(
            UnsafeRawBufferPointer(
                start: sqlite3_column_blob(statement, 3), count: Int(sqlite3_column_bytes(statement, 3))))
        if stored.first == 2 {
            files += 1
            let name = String(decoding: stored.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else {
                die("\(path): image \(rows) refers to \(name), which is missing")
            }
            data.withUnsafeBytes { checksum.add(bytes: $0) }
        } else {
            stored.dropFirst().withUnsafeBytes { checksum.add(bytes: $0) }
        }
    }
    return (rows, checksum, files)
}
