#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation

// Every variant runs in a process of its own, the same binary started again with the
// hidden `--variant` flag, so that its peak memory is its own and not the benchmark's, and
// no variant inherits another's heap.
//
// The peak is the child's own VmHWM (/proc/self/status), read by the child when its work
// is done, not wait4's ru_maxrss: Linux folds the high-water mark of the memory a process
// had before exec into ru_maxrss, and a child started with posix_spawn or fork had its
// parent's. A child of this benchmark's parent at 300 MB reports ru_maxrss 300 MB however
// little it uses itself; VmHWM counts only what it touched after exec.

/// What a variant's process reports back, through a JSON file the parent names.
struct VariantResult: Codable {
    /// Wall-clock seconds of the measured work, timed inside the child.
    var seconds: Double
    /// Rows (objects, items) processed.
    var rows: Int
    /// Bytes of blobs processed, for MB/s.
    var bytes: Int = 0
    /// The checksum of what the variant read, when it reads (hex).
    var checksum: String? = nil
    /// Named parts of `seconds` (the engine's stages), for "where the time goes".
    var splits: [String: Double] = [:]
    /// The connection's pragmas and similar facts, for the report.
    var notes: [String: String] = [:]
    /// The child's peak resident set size in bytes (VmHWM), filled in when it is done.
    var peakRSS: Int? = nil
}

/// A variant's result with what the kernel says about its process.
struct Measurement {
    var result: VariantResult
    /// Peak resident set size of the child after exec (VmHWM), in bytes.
    var maxRSS: Int
    /// User plus system CPU seconds of the whole child process.
    var cpuSeconds: Double
}

/// The path of this executable, to start it again.
let executablePath: String = {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    if n > 0 { return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    return CommandLine.arguments[0]
}()

/// Runs `remodel-bench --variant <name> <arguments>` and waits for it.
func runVariant(_ name: String, _ arguments: [String], resultFile: String) -> Measurement {
    try? FileManager.default.removeItem(atPath: resultFile)
    let argv = [executablePath, "--variant", name, "--result", resultFile] + arguments
    var cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { for p in cArguments { free(p) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, executablePath, nil, nil, &cArguments, environ)
    guard rc == 0 else { die("cannot start \(executablePath): \(String(cString: strerror(rc)))") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        guard errno == EINTR else { die("wait4: \(String(cString: strerror(errno)))") }
    }
    let signal = status & 0x7F
    let code = (status >> 8) & 0xFF
    guard signal == 0, code == 0 else {
        die(
            "variant \(name) failed (\(signal != 0 ? "signal \(signal)" : "exit code \(code)")): \(argv.joined(separator: " "))"
        )
    }
    guard let data = FileManager.default.contents(atPath: resultFile),
        let result = try? JSONDecoder().decode(VariantResult.self, from: data)
    else { die("variant \(name) wrote no result to \(resultFile)") }
    try? FileManager.default.removeItem(atPath: resultFile)
    #if os(Linux)
        let waitRSS = Int(usage.ru_maxrss) * 1024  // kilobytes on Linux, and at least the parent's (see above)
    #else
        let waitRSS = Int(usage.ru_maxrss)  // bytes on macOS
    #endif
    let maxRSS = result.peakRSS ?? waitRSS
    let cpu =
        Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return Measurement(result: result, maxRSS: maxRSS, cpuSeconds: cpu)
}

/// In the child: writes the result, with the process's peak memory, where the parent
/// looks for it.
func writeResult(_ result: VariantResult, to path: String) {
    var result = result
    result.peakRSS = peakResidentSetSize()
    do {
        try JSONEncoder().encode(result).write(to: URL(fileURLWithPath: path))
    } catch {
        die("cannot write the result to \(path): \(error)")
    }
}

/// This process's peak resident set size since exec, in bytes: VmHWM in /proc/self/status.
func peakResidentSetSize() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        if fields.count >= 2, let kilobytes = Int(fields[1]) { return kilobytes * 1024 }
    }
    return nil
}

/// Times `body` with the monotonic clock.
func timed<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let clock = ContinuousClock()
    let start = clock.now
    let value = try body()
    return (value, (clock.now - start).seconds)
}

extension Duration {
    var seconds: Double { nanoseconds / 1e9 }
}

// MARK: - The temporary directory

/// The directory the stores of one run live in; removed at the end, and on Ctrl-C.
nonisolated(unsafe) var temporaryDirectory: String? = nil

func makeTemporaryDirectory(in parent: String) -> String {
    var template = Array((parent + "/remodel-bench-XXXXXX").utf8CString)
    guard let made = mkdtemp(&template) else {
        die("cannot make a directory in \(parent): \(String(cString: strerror(errno)))")
    }
    let path = String(cString: made)
    temporaryDirectory = path
    signal(SIGINT) { _ in
        if let directory = temporaryDirectory { try? FileManager.default.removeItem(atPath: directory) }
        _exit(130)
    }
    signal(SIGTERM) { _ in
        if let directory = temporaryDirectory { try? FileManager.default.removeItem(atPath: directory) }
        _exit(143)
    }
    return path
}

func removeTemporaryDirectory() {
    if let directory = temporaryDirectory { try? FileManager.default.removeItem(atPath: directory) }
    temporaryDirectory = nil
}

/// Removes a store and its side files.
func removeStore(_ path: String) {
    for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// Bytes free for an unprivileged user on the file system holding `path`.
func freeBytes(at path: String) -> Int {
    var stats = statvfs()
    guard statvfs(path, &stats) == 0 else { return Int.max }
    return Int(stats.f_bavail) * Int(stats.f_frsize)
}

/// Stops unless `needed` bytes are free where the stores go.
func requireFreeSpace(_ needed: Int, at directory: String, for what: String) {
    let free = freeBytes(at: directory)
    if free < needed {
        die(
            """
            not enough disk space in \(directory) for \(what): it needs about \(formatBytes(needed)) and \
            \(formatBytes(free)) are free. Free some space, pass --dir with a roomier directory, or \
            make the benchmark smaller.
            """)
    }
}

func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
}

func formatBytes(_ bytes: Int) -> String {
    let b = Double(bytes)
    if b >= 1e9 { return String(format: "%.2f GB", b / 1e9) }
    if b >= 1e6 { return String(format: "%.1f MB", b / 1e6) }
    if b >= 1e3 { return String(format: "%.0f kB", b / 1e3) }
    return "\(bytes) B"
}

/// Mebibytes, as RSS is usually read.
func formatMiB(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
