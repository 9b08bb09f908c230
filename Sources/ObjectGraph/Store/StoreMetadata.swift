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
    /// Every other entry, kept exactly as read: an app's own keys, and Core Data's that
    /// Remodel does not compute (`NSPersistenceFrameworkVersion`, `_NSAutoVacuumLevel`).
    public var otherEntries = OtherEntries()

    /// The key of the model version Remodel writes a store with.
    public static let remodelVersionKey = "Remodel.ModelVersion"
    /// The key earlier versions of Remodel wrote the model version under; still read.
    static let earlierRemodelVersionKey = "RemodelModelVersion"

    /// The keys Remodel writes itself; every other one is carried in ``otherEntries``.
    static let ownKeys: Set<String> = [
        "NSStoreType", "NSStoreUUID", "NSStoreModelVersionHashes", "NSStoreModelVersionHashesVersion",
        "NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashesDigest", "NSStoreModelVersionChecksumKey",
        remodelVersionKey, earlierRemodelVersionKey,
    ]

    /// Metadata entries carried as they were read (property-list values of any kind).
    public struct OtherEntries: Sendable, Hashable {
        /// A binary property list of the entries; nil when there are none.
        let plist: Data?
        /// The entries' keys, sorted.
        public let keys: [String]

        init() {
            plist = nil
            keys = []
        }

        init(_ entries: [String: Any]) throws {
            keys = entries.keys.sorted()
            plist = entries.isEmpty ? nil : try PropertyListSerialization.data(fromPropertyList: entries, format: .binary, options: 0)
        }

        var dictionary: [String: Any] {
            guard let plist, let object = try? PropertyListSerialization.propertyList(from: plist, format: nil) else { return [:] }
            return object as? [String: Any] ?? [:]
        }

        /// Equal entries, whatever order the property list keeps them in.
        public static func == (lhs: OtherEntries, rhs: OtherEntries) -> Bool {
            lhs.keys == rhs.keys && (lhs.plist == rhs.plist || NSDictionary(dictionary: lhs.dictionary).isEqual(to: rhs.dictionary))
        }

        public func hash(into hasher: inout Hasher) { hasher.combine(keys) }
    }

    /// The entries Core Data writes that Remodel does not compute, as a new store of
    /// Core Data's has them.
    static var newStoreEntries: [String: Any] { ["NSPersistenceFrameworkVersion": 0, "_NSAutoVacuumLevel": "2"] }

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
        self.init(uuid: source?.uuid ?? UUID().uuidString, versionHashes: hashes, versionIdentifiers: model.versionIdentifiers,
                  remodelVersion: model.version)
        versionHashesDigest = ObjectModel.appleStoreDigest(of: hashes)
        versionChecksum = ObjectModel.appleVersionChecksum(of: hashes)
        otherEntries = source?.otherEntries ?? ((try? OtherEntries(Self.newStoreEntries)) ?? OtherEntries())
    }

    /// The property list as Core Data writes it, with the other entries and Remodel's key.
    public func propertyList() throws -> Data {
        var plist = otherEntries.dictionary
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

    /// Reads the property list of `Z_METADATA`.
    public init(propertyList data: Data, uuid fallback: String?) throws(StoreError) {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, format: nil)
        } catch {
            throw StoreError(.metadata, "the store's metadata is not a property list: \(error.localizedDescription)")
        }
        guard let plist = object as? [String: Any] else {
            throw StoreError(.metadata, "the store's metadata is not a dictionary")
        }
        var hashes: [String: Data] = [:]
        for (name, value) in (plist["NSStoreModelVersionHashes"] as? [String: Any]) ?? [:] {
            if let data = value as? Data { hashes[name] = data }
        }
        self.init(uuid: (plist["NSStoreUUID"] as? String) ?? fallback ?? "",
                  versionHashes: hashes,
                  versionIdentifiers: (plist["NSStoreModelVersionIdentifiers"] as? [Any])?.compactMap { $0 as? String } ?? [],
                  remodelVersion: (plist[Self.remodelVersionKey] ?? plist[Self.earlierRemodelVersionKey]) as? String)
        versionHashesDigest = plist["NSStoreModelVersionHashesDigest"] as? String
        versionChecksum = plist["NSStoreModelVersionChecksumKey"] as? String
        do {
            otherEntries = try OtherEntries(plist.filter { !Self.ownKeys.contains($0.key) })
        } catch {
            throw StoreError(.metadata, "the store's metadata has entries that cannot be kept: \(error.localizedDescription)")
        }
    }
}
