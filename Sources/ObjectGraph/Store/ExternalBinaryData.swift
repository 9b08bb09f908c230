import ExpressionLanguage
import Foundation

/// How Core Data stores an attribute that allows external binary data storage
/// (`allowsExternalBinaryDataStorage`): its column holds a marker byte, then either the
/// bytes themselves (`0x01`) or the name of a file (`0x02`, a 36-character UUID and a NUL)
/// in `.<StoreName>_SUPPORT/_EXTERNAL_DATA/` beside the store.
///
/// Remodel reads both, so expressions, policies and the object context see the data, never
/// the marker; a reference to a file that is not there is an error naming the object and
/// the file. It writes every value it sets inline (`0x01`), whatever its size: Core Data
/// reads an inline value of any size, the store stays one file that a migration step
/// replaces at once, and no file of the support folder is ever written, moved or removed,
/// so a crash cannot leave a reference to a missing file. A value copied unchanged between
/// two attributes that both allow external storage keeps its reference, which names a file
/// of the same support folder once the new store is in the old one's place.
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
    /// (a snapshot, a dry run's step): a link to the original's support folder beside the
    /// copy. Nothing happens when the original has none.
    public static func share(of original: String, with copy: String) {
        let support = folder(ofStoreAt: original).deletingLastPathComponent()
        guard FileManager.default.fileExists(atPath: support.path) else { return }
        let link = folder(ofStoreAt: copy).deletingLastPathComponent()
        try? FileManager.default.createSymbolicLink(
            at: link, withDestinationURL: support.standardizedFileURL.absoluteURL)
    }

    /// The data a column of an external-storage attribute holds. Bytes without a marker
    /// are taken as they are (a value written without Core Data's encoding).
    static func decode(_ value: Value, storePath: String, object: @autoclosure () -> String, attribute: String)
        throws(ContextError) -> Value
    {
        guard case .data(let stored) = value, let marker = stored.first else { return value }
        switch marker {
        case inline:
            return .data(Data(stored.dropFirst()))
        case reference:
            let name = String(decoding: stored.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
            guard UUID(uuidString: name) != nil else {
                throw ContextError(
                    .externalData,
                    "its external data reference is damaged (\(stored.count) bytes that do not name a file)",
                    object: object(), key: attribute)
            }
            let file = folder(ofStoreAt: storePath).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: file.path) else {
                throw ContextError(
                    .externalData,
                    "its data is stored in \(file.path), which is missing: "
                        + "copy the store with its .\(URL(fileURLWithPath: storePath).deletingPathExtension().lastPathComponent)_SUPPORT folder",
                    object: object(), key: attribute)
            }
            return .data(data)
        default:
            return value
        }
    }

    /// What an external-storage attribute's column holds for `value`: the bytes inline.
    static func encode(_ value: Value) -> Value {
        guard case .data(let data) = value else { return value }
        var stored = Data([inline])
        stored.append(data)
        return .data(stored)
    }
}
