import ExpressionLanguage
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How Core Data stores an attribute that allows external binary data storage
/// (`allowsExternalBinaryDataStorage`): its column holds a marker byte, then either the
/// bytes themselves (`0x01`) or the name of a file (`0x02`, a 36-character UUID and a NUL)
/// in `.<StoreName>_SUPPORT/_EXTERNAL_DATA/` beside the store.
///
/// Remodel reads both, so expressions, policies and the object context see the data, never
/// the marker; a reference to a file that is not there is an error naming the object and
/// the file. It writes as Core Data does: a value larger than a threshold
/// (``ExternalDataFiles/defaultThreshold``) goes to a new file, a smaller one inline. A
/// migration step writes its new files beside the old version's, under new names, and
/// removes the old version's only once the new store is in place (docs/store-format.md,
/// "External binary data").
public enum ExternalBinaryData {
    static let inline: UInt8 = 0x01
    static let reference: UInt8 = 0x02

    /// The folder of a store's external data: `.<name without extension>_SUPPORT/_EXTERNAL_DATA`
    /// beside it.
    public static func folder(ofStoreAt path: String) -> URL {
        let url = URL(fileURLWithPath: path)
        let name = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT").appendingPathComponent(
            "_EXTERNAL_DATA")
    }

    /// Makes the external data of the store at `original` readable from a store at `copy`
    /// (a snapshot): a link to the original's support folder beside the copy. Nothing
    /// happens when the original has none.
    public static func share(of original: String, with copy: String) {
        let support = folder(ofStoreAt: original).deletingLastPathComponent()
        guard FileManager.default.fileExists(atPath: support.path) else { return }
        let link = folder(ofStoreAt: copy).deletingLastPathComponent()
        try? FileManager.default.createSymbolicLink(
            at: link, withDestinationURL: support.standardizedFileURL.absoluteURL)
    }

    /// The file name a column's bytes refer to, when they are a `0x02` reference.
    static func referencedName(_ stored: Data) -> String? {
        guard stored.first == reference else { return nil }
        let name = String(decoding: stored.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
        return UUID(uuidString: name) != nil ? name : nil
    }

    /// What an external-storage attribute's column holds for `value` when it is kept in
    /// the row: the bytes inline.
    static func encode(_ value: Value) -> Value {
        guard case .data(let data) = value else { return value }
        var stored = Data([inline])
        stored.append(data)
        return .data(stored)
    }

    /// The names of the files the rows of the store at `path` refer to, in every column of
    /// an external-storage attribute of `model`. What a migration step keeps, and what it
    /// may remove once no version needs it.
    public static func references(inStoreAt path: String, model: ObjectModel) throws(StoreError) -> Set<String> {
        let layout = StoreLayout(model: model)
        var columns: Set<[String]> = []
        for entity in model.entities {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            for attribute in entity.attributes where attribute.storesExternalEncoding && !attribute.isTransient {
                if let column = entityLayout.attributeColumns[attribute.name] {
                    columns.insert([entityLayout.table, column])
                }
            }
        }
        guard !columns.isEmpty, FileManager.default.fileExists(atPath: path) else { return [] }
        return try Store.storeErrors(path: path, otherwise: .cannotOpen) {
            let database = try Database(path: path, mode: .readOnly)
            var names: Set<String> = []
            for pair in columns.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                let statement = try database.prepare(
                    "SELECT substr(\(pair[1]), 2, 36) FROM \(pair[0]) WHERE substr(\(pair[1]), 1, 1) = x'02'")
                while try statement.step() {
                    if let data = statement.data(at: 0), let name = String(data: data, encoding: .utf8),
                        UUID(uuidString: name) != nil
                    {
                        names.insert(name)
                    }
                }
            }
            return names
        }
    }
}

/// Where a store's external binary data is: the folder new files go to, the folders a
/// reference is looked up in, and how large a value must be to go to a file. A store has
/// one (``Store/externalData``); a migration step's new store writes into the folder of the
/// store it will replace, and a dry run's into its own, reading the original's too.
public final class ExternalDataFiles: @unchecked Sendable {
    /// Values larger than this many bytes go to a file: 100 KB, the size Apple's engineers
    /// give for Core Data (docs/store-format.md, "External binary data").
    public static let defaultThreshold = 100 * 1024

    /// Where new files are written.
    public let folder: URL
    /// Where references are looked up, `folder` first.
    public let readFolders: [URL]
    /// Values of more bytes than this are written to a file; nil: every value inline.
    public let threshold: Int?
    /// The files written since the last ``forgetWritten()``, in order: a context forgets
    /// them once a save has committed them; a migration's new store keeps them until the
    /// step is done, to remove them if it fails.
    public private(set) var written: [String] = []
    /// Whether a context's save syncs the files it wrote before it commits, so that a
    /// committed row never names a file a power loss could take: true but while the store
    /// is written from scratch (``Store/beginScratchWrites()``), whose files are synced
    /// once, before the store is put in place.
    public var syncsEachSave = true
    /// How many of ``written`` are synced.
    private var synced = 0

    public init(folder: URL, alsoReading others: [URL] = [], threshold: Int? = ExternalDataFiles.defaultThreshold) {
        self.folder = folder
        readFolders = [folder] + others.filter { $0 != folder }
        self.threshold = threshold
    }

    /// The files of the store at `path`, written and read in its own folder.
    public convenience init(storeAt path: String) {
        self.init(
            folder: ExternalBinaryData.folder(ofStoreAt: path),
            threshold: path == ":memory:" ? nil : ExternalDataFiles.defaultThreshold)
    }

    /// What the column holds for `value`: a reference to a new file for data larger than
    /// the threshold, the bytes inline otherwise.
    func encode(_ value: Value, object: @autoclosure () -> String, attribute: String) throws(ContextError) -> Value {
        guard case .data(let data) = value else { return value }
        guard let threshold, data.count > threshold else { return ExternalBinaryData.encode(value) }
        let name = UUID().uuidString
        let file = folder.appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try data.write(to: file)
        } catch {
            throw ContextError(
                .externalData, "cannot write its data to \(file.path): \(error.localizedDescription)",
                object: object(), key: attribute)
        }
        written.append(name)
        var stored = Data([ExternalBinaryData.reference])
        stored.append(contentsOf: Array(name.utf8))
        stored.append(0)
        return .data(stored)
    }

    /// The data a column of an external-storage attribute holds. Bytes without a marker
    /// are taken as they are (a value written without Core Data's encoding).
    func decode(_ value: Value, object: @autoclosure () -> String, attribute: String) throws(ContextError) -> Value {
        guard case .data(let stored) = value, let marker = stored.first else { return value }
        switch marker {
        case ExternalBinaryData.inline:
            return .data(Data(stored.dropFirst()))
        case ExternalBinaryData.reference:
            guard let name = ExternalBinaryData.referencedName(stored) else {
                throw ContextError(
                    .externalData,
                    "its external data reference is damaged (\(stored.count) bytes that do not name a file)",
                    object: object(), key: attribute)
            }
            for folder in readFolders {
                if let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) {
                    return .data(data)
                }
            }
            let support = folder.deletingLastPathComponent().lastPathComponent
            throw ContextError(
                .externalData,
                "its data is stored in \(folder.appendingPathComponent(name).path), which is missing: "
                    + "copy the store with its \(support) folder",
                object: object(), key: attribute)
        default:
            return value
        }
    }

    /// Whether a file named `name` is in one of the read folders.
    func hasFile(named name: String) -> Bool {
        readFolders.contains { FileManager.default.fileExists(atPath: $0.appendingPathComponent(name).path) }
    }

    /// Syncs the files written (from index `start` on), and the folder, to disk: before
    /// the rows or the store that refer to them are committed or put in place.
    public func syncWritten(from start: Int = 0) throws(ContextError) {
        guard start < written.count else { return }
        for name in written[start...] {
            let path = folder.appendingPathComponent(name).path
            let fd = open(path, O_RDONLY)
            guard fd >= 0, fsync(fd) == 0 else {
                let reason = String(cString: strerror(errno))
                if fd >= 0 { close(fd) }
                throw ContextError(.externalData, "cannot sync \(path) to disk: \(reason)")
            }
            close(fd)
        }
        syncFolder()
    }

    /// Makes the files' creation and removal in ``folder`` durable.
    public func syncFolder() {
        let fd = open(folder.path, O_RDONLY)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    /// Syncs the files written and not synced yet: what a save does before it commits.
    func syncPending() throws(ContextError) {
        try syncWritten(from: synced)
        synced = written.count
    }

    /// Removes the files written since the last ``forgetWritten()`` (those from index
    /// `start` on): what a failed save or step does, so no file is left that nothing
    /// refers to.
    public func removeWritten(from start: Int = 0) {
        guard start < written.count else { return }
        for name in written[start...] { unlink(folder.appendingPathComponent(name).path) }
        written.removeSubrange(start...)
        synced = min(synced, start)
    }

    /// Forgets the files written so far: they belong to a store that is in place.
    public func forgetWritten() {
        written = []
        synced = 0
    }
}
