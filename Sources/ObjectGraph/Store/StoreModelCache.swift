import CZlib
import Foundation

/// The model Core Data keeps in a store it wrote (`Z_MODELCACHE`, newer OS versions): one
/// row whose `Z_CONTENT` is the compiled model of the version the store was saved with, a
/// keyed archive of `NSManagedObjectModel` as in a `.mom`, compressed with raw deflate.
/// Core Data uses it to migrate a store whose model an app no longer ships; Remodel reads
/// it to say what a store is when no given version matches it (docs/store-format.md,
/// "The model cache"). Remodel writes the table empty.
public enum StoreModelCache {
    /// The largest model a cache is inflated to: far beyond any real model (the fixtures'
    /// are a few kilobytes), so that damaged or hostile bytes cannot take the memory.
    static let limit = 64 << 20

    /// The model in the cache of the store `database`; nil when it has no cache or an
    /// empty one. Its version is `version`.
    public static func model(in database: Database, version: String = "Z_MODELCACHE") throws(StoreError) -> ObjectModel?
    {
        let content: Data
        do {
            let table = try database.scalar(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'Z_MODELCACHE'")
            guard table == .integer(1) else { return nil }
            guard case .blob(let blob)? = try database.scalar("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1"),
                !blob.isEmpty
            else { return nil }
            content = blob
        } catch {
            throw StoreError(
                .cannotOpen, "cannot read the model cache: \(error)", path: database.path, underlying: error)
        }
        guard let archive = inflate(content) else {
            throw StoreError(
                .cannotOpen, "the model cache (Z_MODELCACHE) is not a compressed model (\(content.count) bytes)",
                path: database.path)
        }
        do {
            return try CompiledModelReader.parse(archive, version: version, file: "Z_MODELCACHE")
        } catch {
            throw StoreError(
                .cannotOpen,
                "the model cache (Z_MODELCACHE) is not a model Remodel reads: \(error.errors.map(\.description).joined(separator: "; "))",
                path: database.path)
        }
    }

    /// The bytes of a raw deflate stream; nil when they are not one, or inflate to more
    /// than ``limit``.
    static func inflate(_ data: Data) -> Data? {
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            return nil
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let status: Int32 = data.withUnsafeBytes { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            while true {
                let result = chunk.withUnsafeMutableBufferPointer { buffer in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(buffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
                if result != Z_OK || output.count > limit { return result }
                if stream.avail_in == 0 && stream.avail_out != 0 { return Z_BUF_ERROR }
            }
        }
        return status == Z_STREAM_END ? output : nil
    }
}
