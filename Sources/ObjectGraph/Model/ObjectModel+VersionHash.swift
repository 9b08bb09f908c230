import Crypto
import Foundation

extension ObjectModel {
    /// Remodel's own version hash of each entity: SHA-256 of its canonical form
    /// (``canonicalForm(of:)``). Stores written by earlier versions of Remodel carry these,
    /// and are still identified by them once Apple's hashes (``appleVersionHashes``,
    /// `ObjectModel+AppleVersionHash.swift`), which stores are identified and written with
    /// now, match no version (docs/store-format.md).
    public var entityVersionHashes: [String: Data] {
        // Entities of one name (an invalid model) keep the first's hash, never a crash.
        Dictionary(entities.map { ($0.name, Data(SHA256.hash(data: Data(canonicalForm(of: $0).utf8)))) }) { first, _ in
            first
        }
    }

    /// The model's version hash: SHA-256 of Remodel's entity hashes concatenated in
    /// entity-name order (the scheme of Core Data's `versionChecksum`, over Remodel's
    /// hashes; Apple's is ``appleVersionChecksum``).
    public var versionHash: Data {
        let hashes = entityVersionHashes
        var input = Data()
        for name in hashes.keys.sorted() { input += hashes[name]! }
        return Data(SHA256.hash(data: input))
    }

    /// The text an entity's version hash digests: what Core Data hashes (B5 of the Core Data
    /// notes: the entity's name, abstractness, parent, version hash modifier and stored
    /// properties — for attributes name, type, optionality, transience, external storage and
    /// modifier; for relationships name, destination, inverse, to-many, ordered, optionality,
    /// transience, counts and modifier), one field per line, properties sorted by name.
    /// Renaming identifiers, defaults, user info and delete rules do not change the store
    /// and are not hashed. Every free-text field is length-prefixed so no two entities
    /// share a form.
    public func canonicalForm(of entity: EntityDescription) -> String {
        func field(_ text: String?) -> String {
            guard let text else { return "-" }
            return "\(text.utf8.count):\(text)"
        }
        func flag(_ b: Bool) -> String { b ? "1" : "0" }
        var lines = [
            "remodel-entity-hash 1",
            "entity \(field(entity.name))",
            "abstract \(flag(entity.isAbstract))",
            "parent \(field(entity.parent))",
            "modifier \(field(entity.versionHashModifier))"
        ]
        for a in entity.attributes.sorted(by: { $0.name < $1.name }) {
            lines.append(
                "attribute \(field(a.name)) type=\(a.type.coreDataCode) optional=\(flag(a.isOptional)) "
                    + "transient=\(flag(a.isTransient)) external=\(flag(a.allowsExternalBinaryDataStorage)) "
                    + "modifier=\(field(a.versionHashModifier))")
        }
        for r in entity.relationships.sorted(by: { $0.name < $1.name }) {
            // A to-one's minCount is read for Apple's hash only; leaving it out keeps the
            // hashes of stores Remodel wrote before it was read.
            let minCount = r.isToMany ? r.minCount : 0
            lines.append(
                "relationship \(field(r.name)) destination=\(field(r.destination)) inverse=\(field(r.inverse)) "
                    + "toMany=\(flag(r.isToMany)) ordered=\(flag(r.isOrdered)) optional=\(flag(r.isOptional)) "
                    + "transient=\(flag(r.isTransient)) min=\(minCount) max=\(r.maxCount) modifier=\(field(r.versionHashModifier))"
            )
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
