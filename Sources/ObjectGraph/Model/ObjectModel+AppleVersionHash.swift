import Crypto
import Foundation

// Core Data's own version hashes, byte for byte: `NSPropertyDescription.versionHash`,
// `NSEntityDescription.versionHash`, the store metadata's `NSStoreModelVersionHashesDigest`
// and `NSManagedObjectModel.versionChecksum`. The algorithm is the one of
// ../shared/spec/VERSION-HASH.md, described in docs/store-format.md ("Version hashes"),
// where the points no data has pinned down yet are listed; each is marked UNVERIFIED below.
//
// Notation of the comments: H = SHA-256, ‖ = concatenation, str = UTF-8 bytes with no
// length or terminator, b = one byte 0x01/0x00, le32 = 4-byte little-endian unsigned.

/// The bytes Apple's hashes are built from.
private struct AppleHashInput {
    var bytes = Data()

    mutating func append(_ text: String) { bytes.append(contentsOf: Array(text.utf8)) }
    mutating func append(_ flag: Bool) { bytes.append(flag ? 1 : 0) }
    mutating func append(_ data: Data) { bytes.append(data) }
    mutating func appendLE32(_ n: Int) {
        let value = UInt32(truncatingIfNeeded: n)
        bytes.append(contentsOf: [
            UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)
        ])
    }

    var sha256: Data { Data(SHA256.hash(data: bytes)) }

    /// The part every kind of property shares:
    /// `H(str(name) ‖ b(isOptional) ‖ b(isTransient) ‖ [str(versionHashModifier)])`.
    /// (`isReadOnly`, named in Apple's documentation, is not in the bytes.)
    static func propertyBase(name: String, isOptional: Bool, isTransient: Bool, versionHashModifier: String?) -> Data {
        var input = AppleHashInput()
        input.append(name)
        input.append(isOptional)
        input.append(isTransient)
        if let versionHashModifier { input.append(versionHashModifier) }
        return input.sha256
    }
}

/// Code-point order of names (`compare:` without options), which is UTF-8 byte order.
/// UNVERIFIED against case-insensitive order: no data has names the two order differently.
private func appleNameOrder(_ a: String, _ b: String) -> Bool {
    a.utf8.lexicographicallyPrecedes(b.utf8)
}

extension AttributeDescription {
    /// Core Data's `versionHash` of this attribute (32 bytes):
    /// `H(base ‖ le32(NSAttributeType) ‖ [01 if preservesValueInHistoryOnDeletion] ‖ [01 if allowsExternalBinaryDataStorage])`.
    ///
    /// Reproduces Apple's bytes for stored attributes. For a transient attribute it is not
    /// Apple's value (which is unknown), but transient attributes are not part of any
    /// entity hash.
    public var appleVersionHash: Data {
        var input = AppleHashInput()
        input.append(
            AppleHashInput.propertyBase(
                name: name, isOptional: isOptional, isTransient: isTransient,
                versionHashModifier: versionHashModifier))
        input.appendLE32(type.coreDataCode)
        // UNVERIFIED: the order of these two bytes (no attribute in the data has both flags).
        if preservesValueInHistoryOnDeletion { input.append(true) }
        if allowsExternalBinaryDataStorage { input.append(true) }
        return input.sha256
    }
}

extension RelationshipDescription {
    /// Core Data's `maxCount` for this relationship: 1 for a to-one, the declared bound
    /// (0: none) for a to-many.
    var appleMaxCount: Int { isToMany ? maxCount : 1 }

    /// Core Data's `versionHash` of this relationship (32 bytes):
    /// `H(base ‖ str(destination) ‖ [str(inverse)] ‖ le32(maxCount) ‖ le32(minCount) ‖ [01 00 if ordered])`.
    ///
    /// The delete rule and the renaming identifier are not in it. A relationship
    /// `versionHashModifier` goes into the base like an attribute's (UNVERIFIED: none in
    /// the data). For a transient relationship it is not Apple's value (see
    /// ``AttributeDescription/appleVersionHash``).
    public var appleVersionHash: Data {
        var input = AppleHashInput()
        input.append(
            AppleHashInput.propertyBase(
                name: name, isOptional: isOptional, isTransient: isTransient,
                versionHashModifier: versionHashModifier))
        input.append(destination)
        if let inverse { input.append(inverse) }
        // Max before min (verified: the other order breaks nearly every entity).
        input.appendLE32(appleMaxCount)
        input.appendLE32(minCount)
        // What the second byte stands for is unknown (UNVERIFIED); it is 00 in all the data.
        if isOrdered { input.bytes.append(contentsOf: [0x01, 0x00]) }
        return input.sha256
    }
}

extension ObjectModel {
    /// Core Data's `versionHash` of `entity` (32 bytes), as Apple's Core Data writes it into
    /// a store's `NSStoreModelVersionHashes` and a compiled model's `VersionInfo.plist`:
    ///
    /// `H(str(name) ‖ b(isAbstract) ‖ [parent's hash] ‖ V(p₁) ‖ V(p₂) ‖ … ‖ UC ‖ [str(versionHashModifier)])`
    ///
    /// where p₁, p₂, … are the entity's stored (non-transient) attributes and relationships,
    /// inherited ones included, in one list sorted by name, and UC its own uniqueness
    /// constraints, each joined with ".". Class names, renaming identifiers, indexes,
    /// defaults, user info and sub-entities do not change it.
    ///
    /// ```swift
    /// let model = try XcodeModelImporter.importModel(at: url)
    /// model.appleVersionHash(of: model.entity(named: "Book")!)   // 32 bytes
    /// ```
    public func appleVersionHash(of entity: EntityDescription) -> Data {
        var visiting: Set<String> = []
        return appleVersionHash(of: entity, visiting: &visiting)
    }

    private func appleVersionHash(of entity: EntityDescription, visiting: inout Set<String>) -> Data {
        visiting.insert(entity.name)
        var input = AppleHashInput()
        input.append(entity.name)
        input.append(entity.isAbstract)
        // A cycle of parents (which validation rejects) hashes as if the loop had no parent.
        if let parentName = entity.parent, let parent = self.entity(named: parentName), !visiting.contains(parentName) {
            input.append(appleVersionHash(of: parent, visiting: &visiting))
        }
        // Fetched properties are left out as well (UNVERIFIED: no data; Remodel's models
        // have none).
        var properties: [(name: String, hash: Data)] = []
        for attribute in allAttributes(of: entity) where !attribute.isTransient {
            properties.append((attribute.name, attribute.appleVersionHash))
        }
        for relationship in allRelationships(of: entity) where !relationship.isTransient {
            properties.append((relationship.name, relationship.appleVersionHash))
        }
        for property in properties.sorted(by: { appleNameOrder($0.name, $1.name) }) { input.append(property.hash) }
        // UNVERIFIED: with two or more constraints, the separator between them (here none)
        // and their order (here as declared).
        for constraint in entity.uniquenessConstraints { input.append(constraint.joined(separator: ".")) }
        // UNVERIFIED: the place of an entity's modifier (no store or compiled model has one).
        if let versionHashModifier = entity.versionHashModifier { input.append(versionHashModifier) }
        return input.sha256
    }

    /// Core Data's version hash of every entity, abstract ones included: what Apple's Core
    /// Data writes as a store's `NSStoreModelVersionHashes` for this model, and Xcode as the
    /// version's entry of `NSManagedObjectModel_VersionHashes` in `VersionInfo.plist`.
    /// Computed from the model; ``storeVersionHashes`` is what stores are written with and
    /// matched against.
    public var appleVersionHashes: [String: Data] {
        // Entities of one name (an invalid model) keep the first's hash, never a crash.
        Dictionary(entities.map { ($0.name, appleVersionHash(of: $0)) }) { first, _ in first }
    }

    /// The entity hashes stores of this model carry and are identified by, as Core Data
    /// uses them: those a compiled model declares (``declaredVersionHashes``) where it
    /// declares them, else ``appleVersionHashes``.
    public var storeVersionHashes: [String: Data] {
        guard let declared = declaredVersionHashes else { return appleVersionHashes }
        var hashes = appleVersionHashes
        for (name, hash) in declared where hashes[name] != nil { hashes[name] = hash }
        return hashes
    }

    /// A hash in lower-case hexadecimal, for messages.
    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    /// Where the hashes a compiled model declares differ from those Remodel computes:
    /// one line per entity; empty when they agree (or nothing is declared).
    public var declaredVersionHashDifferences: [String] {
        guard let declared = declaredVersionHashes else { return [] }
        let computed = appleVersionHashes
        return Set(declared.keys).union(computed.keys).sorted().compactMap { name in
            switch (declared[name], computed[name]) {
            case let (d?, c?) where d == c: nil
            case let (d?, c?):
                "\(name): VersionInfo.plist gives \(Self.hex(d)), Remodel computes \(Self.hex(c)); the given one is used"
            case (_?, nil): "\(name): in VersionInfo.plist, not in the model"
            default: "\(name): in the model, not in VersionInfo.plist; the computed hash is used"
            }
        }
    }

    /// The store metadata's `NSStoreModelVersionHashesDigest` for this model (written by
    /// Core Data since about iOS 8): ``appleStoreDigest(of:)`` of ``storeVersionHashes``.
    public var appleStoreDigest: String { Self.appleStoreDigest(of: storeVersionHashes) }

    /// `NSStoreModelVersionHashesDigest` of a store's entity hashes: the base64 of SHA-512
    /// over `str(name) ‖ hash` for each entity, in name order.
    public static func appleStoreDigest(of versionHashes: [String: Data]) -> String {
        var input = AppleHashInput()
        for name in versionHashes.keys.sorted(by: appleNameOrder) {
            input.append(name)
            input.append(versionHashes[name]!)
        }
        return Data(SHA512.hash(data: input.bytes)).base64EncodedString()
    }

    /// Core Data's `NSManagedObjectModel.versionChecksum` of this model (the version's
    /// entry of `NSManagedObjectModel_VersionChecksums` in a compiled model's
    /// `VersionInfo.plist`): ``appleVersionChecksum(of:)`` of ``storeVersionHashes``.
    public var appleVersionChecksum: String { Self.appleVersionChecksum(of: storeVersionHashes) }

    /// `versionChecksum` of a model's entity hashes: the base64 of SHA-256 over the
    /// hashes in entity-name order (the names themselves are not in the input).
    public static func appleVersionChecksum(of versionHashes: [String: Data]) -> String {
        var input = AppleHashInput()
        for name in versionHashes.keys.sorted(by: appleNameOrder) { input.append(versionHashes[name]!) }
        return input.sha256.base64EncodedString()
    }
}
