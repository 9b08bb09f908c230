import Foundation

/// The metadata Core Data keeps in `Z_METADATA`: a binary property list with the version
/// hashes of the model the store was written with.
public struct StoreMetadata: Sendable, Hashable {
    /// `NSStoreUUID` (also `Z_UUID`).
    public var uuid: String
    /// `NSStoreModelVersionHashes`: entity name → 32-byte hash.
    public var versionHashes: [String: Data]
    /// `NSStoreModelVersionIdentifiers`.
    public var versionIdentifiers: [String]
    /// The model version Remodel wrote the store with (`RemodelModelVersion`); nil for
    /// stores written by Core Data.
    public var remodelVersion: String?
    /// `NSStoreModelVersionHashesDigest`: the base64 of a SHA-512 digest of the entity
    /// hashes (``ObjectModel/appleStoreDigest(of:)``), in stores written by Core Data since
    /// about iOS 8; nil when the store has none (Remodel does not write it yet).
    public var versionHashesDigest: String? = nil

    public init(uuid: String, versionHashes: [String: Data], versionIdentifiers: [String], remodelVersion: String?) {
        self.uuid = uuid
        self.versionHashes = versionHashes
        self.versionIdentifiers = versionIdentifiers
        self.remodelVersion = remodelVersion
    }

    /// Metadata for a new store of `model`.
    public init(model: ObjectModel, uuid: String = UUID().uuidString) {
        self.init(uuid: uuid, versionHashes: model.entityVersionHashes, versionIdentifiers: [model.version],
                  remodelVersion: model.version)
    }

    /// The property list as Core Data writes it, plus Remodel's version key.
    public func propertyList() throws -> Data {
        var plist: [String: Any] = [
            "NSStoreType": "SQLite",
            "NSStoreUUID": uuid,
            "NSStoreModelVersionHashes": versionHashes,
            "NSStoreModelVersionHashesVersion": 3,
            "NSStoreModelVersionIdentifiers": versionIdentifiers,
            "NSPersistenceFrameworkVersion": 0,
            "_NSAutoVacuumLevel": "2",
        ]
        if let remodelVersion { plist["RemodelModelVersion"] = remodelVersion }
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
                  remodelVersion: plist["RemodelModelVersion"] as? String)
        versionHashesDigest = plist["NSStoreModelVersionHashesDigest"] as? String
    }
}
