#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads lines from a file descriptor as raw bytes (no decoding, so that `--jsonl` can
/// report invalid UTF-8 where it is), returning each line as soon as it is complete.
public final class LineReader {
    private let file: UnsafeMutablePointer<FILE>?
    private var buffer: UnsafeMutablePointer<CChar>?
    private var capacity = 0

    /// A reader of `descriptor` (standard input by default).
    public init(descriptor: Int32 = 0) {
        file = fdopen(dup(descriptor), "r")
    }

    deinit {
        free(buffer)
        if let file { fclose(file) }
    }

    /// The next line without its `\n` (and without a `\r` before it); nil at the end.
    public func readLine() -> [UInt8]? {
        guard let file else { return nil }
        let count = getline(&buffer, &capacity, file)
        guard count >= 0, let buffer else { return nil }
        var bytes = UnsafeRawBufferPointer(start: buffer, count: count)
        if bytes.last == 0x0A { bytes = UnsafeRawBufferPointer(rebasing: bytes.dropLast()) }
        if bytes.last == 0x0D { bytes = UnsafeRawBufferPointer(rebasing: bytes.dropLast()) }
        return Array(bytes)
    }

    /// The next line decoded as UTF-8 (invalid bytes replaced); nil at the end.
    public func readTextLine() -> String? {
        readLine().map { String(decoding: $0, as: UTF8.self) }
    }
}
