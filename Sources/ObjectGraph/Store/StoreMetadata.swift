import ExpressionLanguage
import Foundation

/// The metadata Core Data keeps in `Z_METADATA`: a binary property list with the version
/// hashes of the model the store was written with, and whatever else apps keep there.
///
/// Stores Remodel writes carry what Core Data writes: Apple's entity version hashes
/// (``ObjectModel/storeVersionHashes``), their digest and checksum,
/// `NSStoreModelVersionHashesVersion` 3 and the model's version identifiers, so that Core
/// Data opens them with the same model without a migration. A migrated store keeps the
/// source store's UUID and its other entries (``otherEntries``: an app's own keys).
public struct StoreMetadata: Sendable, Hashable {
    /// `NSStoreUUID` (also `Z_UUID`).
    public var uuid: String
    /// `NSStoreModelVersionHashes`: entity name → 32-byte hash.
    public var versionHashes: [String: Data]
    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String]
    /// The model version Remodel wrote the store with (``remodelVersionKey``); nil for
    /// stores written by Core Data.
    public var remodelVersion: String?
    /// `NSStoreModelVersionHashesDigest`: the base64 of a SHA-512 digest of the entity
    /// hashes (``ObjectModel/appleStoreDigest(of:)``), in stores written by Core Data since
    /// about iOS 8 and by Remodel.
    public var versionHashesDigest: String? = nil
    /// `NSStoreModelVersionChecksumKey`: the model's checksum
    /// (``ObjectModel/appleVersionChecksum(of:)``), in stores written by recent Core Data
    /// and by Remodel.
    public var versionChecksum: String? = nil
    /// Every other entry, kept as read: an app's own keys, and Core Data's that Remodel
    /// does not compute (`NSPersistenceFrameworkVersion`, `_NSAutoVacuumLevel`).
    public var otherEntries: [String: PropertyList] = [:]

    /// The key of the model version Remodel writes a store with.
    public static let remodelVersionKey = "Remodel.ModelVersion"
    /// The key earlier versions of Remodel wrote the model version under; still read.
    static let earlierRemodelVersionKey = "RemodelModelVersion"

    /// The keys Remodel writes itself; every other one is carried in ``otherEntries``.
    static let ownKeys: Set<String> = [
        "NSStoreType", "NSStoreUUID", "NSStoreModelVersionHashes", "NSStoreModelVersionHashesVersion",
        "NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey",
        remodelVersionKey, earlierRemodelVersionKey
    ]

    /// The entries Core Data writes that Remodel does not compute, as a new store of
    /// Core Data's has them.
    static let newStoreEntries: [String: PropertyList] = [
        "NSPersistenceFrameworkVersion": .integer(0), "_NSAutoVacuumLevel": .string("2")
    ]

    public init(uuid: String, versionHashes: [String: Data], versionIdentifiers: [String], remodelVersion: String?) {
        self.uuid = uuid
        self.versionHashes = versionHashes
        self.versionIdentifiers = versionIdentifiers
        self.remodelVersion = remodelVersion
    }

    /// Metadata for a store of `model`, as Core Data would write it: a new UUID, or, for a
    /// store migrated from another, that store's UUID and other entries (`carrying`).
    public init(model: ObjectModel, carrying source: StoreMetadata? = nil) {
        let hashes = model.storeVersionHashes
        self.init(
            uuid: source?.uuid ?? UUID().uuidString, versionHashes: hashes,
            versionIdentifiers: model.versionIdentifiers,
            remodelVersion: model.version)
        versionHashesDigest = ObjectModel.appleStoreDigest(of: hashes)
        versionChecksum = ObjectModel.appleVersionChecksum(of: hashes)
        otherEntries = source?.otherEntries ?? Self.newStoreEntries
    }

    /// The property list as Core Data writes it, with the other entries and Remodel's key.
    public func propertyList() throws -> Data {
        var plist: [String: Any] = [:]
        for (key, value) in otherEntries { if let object = Self.foundationObject(value) { plist[key] = object } }
        plist["NSStoreType"] = "SQLite"
        plist["NSStoreUUID"] = uuid
        plist["NSStoreModelVersionHashes"] = versionHashes
        plist["NSStoreModelVersionHashesVersion"] = 3
        plist["NSStoreModelVersionIdentifiers"] = versionIdentifiers
        if let versionHashesDigest { plist["NSStoreModelVersionHashesDigest"] = versionHashesDigest }
        if let versionChecksum { plist["NSStoreModelVersionChecksumKey"] = versionChecksum }
        if let remodelVersion { plist[Self.remodelVersionKey] = remodelVersion }
        return try PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
    }

    /// Reads the property list of `Z_METADATA`, a binary property list as Core Data writes
    /// it (read by Remodel's own reader, which refuses damage rather than crash).
    public init(propertyList data: Data, uuid fallback: String?) throws(StoreError) {
        let plist: [String: PropertyList]
        do throws(ArchiveError) {
            guard BinaryPropertyList.isBinaryPropertyList(data) else {
                throw ArchiveError("it is not a binary property list, as Core Data writes metadata")
            }
            guard case .dictionary(let entries) = try BinaryPropertyList.decode(data) else {
                throw ArchiveError("it is not a dictionary")
            }
            plist = entries
        } catch {
            throw StoreError(.metadata, "the store's metadata cannot be read: \(error.message)")
        }
        var hashes: [String: Data] = [:]
        if case .dictionary(let entries)? = plist["NSStoreModelVersionHashes"] {
            for (name, value) in entries { if case .data(let hash) = value { hashes[name] = hash } }
        }
        var identifiers: [String] = []
        if case .array(let values)? = plist["NSStoreModelVersionIdentifiers"] {
            identifiers = values.compactMap(\.string)
        }
        self.init(
            uuid: plist["NSStoreUUID"]?.string ?? fallback ?? "", versionHashes: hashes,
            versionIdentifiers: identifiers,
            remodelVersion: plist[Self.remodelVersionKey]?.string ?? plist[Self.earlierRemodelVersionKey]?.string)
        versionHashesDigest = plist["NSStoreModelVersionHashesDigest"]?.string
        versionChecksum = plist["NSStoreModelVersionChecksumKey"]?.string
        otherEntries = plist.filter { !Self.ownKeys.contains($0.key) }
    }

    /// A value as Foundation writes it into a property list; nil for what a property list
    /// cannot hold (a null, an archive reference).
    static func foundationObject(_ value: PropertyList) -> Any? {
        switch value {
        case .null, .uid: nil
        case .bool(let b): b
        case .integer(let i): i
        case .real(let d): d
        case .date(let t): Date(timeIntervalSinceReferenceDate: t)
        case .data(let d): d
        case .string(let s): s
        case .array(let elements): elements.compactMap(foundationObject)
        case .dictionary(let entries): entries.compactMapValues(foundationObject)
        }
    }
}
