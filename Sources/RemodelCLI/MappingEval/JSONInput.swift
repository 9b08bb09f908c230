import Foundation
import ExpressionLanguage

/// A problem with what the user typed or named (a command, JSON, a file), already worded
/// for the terminal; it may span lines (a caret under the offending column).
public struct InputError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// Values written as JSON by the user (`:let`, `:self`, `:args`, `--var`, files), in the
/// encoding of DESIGN.md: `{"$date": "…"}`, `{"$data": "…"}`, `{"$set": […]}`.
enum JSONInput {
    /// The value of `text`. Errors say where in the JSON: `1:7: invalid JSON: …` with the
    /// line and a caret when `caret` is true (typed text is short; files may not be).
    /// `resolveObject` turns `{"$object": "Book/9"}` into an object of an open store.
    static func value(
        from text: String, label: String? = nil, caret: Bool = true, resolveObject: ((String) throws -> Value)? = nil
    ) throws(InputError) -> Value {
        let json: JSON
        do {
            json = try JSON.parse(text)
        } catch {
            let located = ExpressionError(
                .syntax, "invalid JSON: \(error.message)", source: text,
                range: SourceRange(error.offset, error.offset + 1))
            // The reader's own line and column (which skip a byte order mark) are the truth.
            var rendered = located.rendered(label: label, caret: caret)
            let ours = "\(error.line):\(error.column): "
            if let location = located.location, "\(location): " != ours,
                let range = rendered.range(of: "\(location): ")
            {
                rendered.replaceSubrange(range, with: ours)
            }
            throw InputError(rendered)
        }
        do {
            return try Value(json: json, resolveObject: resolveObject)
        } catch {
            throw InputError((label.map { "\($0): " } ?? "") + error.message)
        }
    }

    /// The value of the JSON file at `path` (`~` expanded), relative to the working
    /// directory.
    static func value(fromFile path: String, resolveObject: ((String) throws -> Value)? = nil) throws(InputError)
        -> Value
    {
        let expanded = expandingTilde(path)
        let text: String
        do {
            text = try String(contentsOfFile: expanded, encoding: .utf8)
        } catch {
            throw InputError("cannot read \(path): \(reason(for: error, path: expanded))")
        }
        return try value(from: text, label: path, caret: false, resolveObject: resolveObject)
    }

    static func expandingTilde(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
        return home + path.dropFirst()
    }

    private static func reason(for error: any Error, path: String) -> String {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        return "it is not UTF-8 text"
    }
}
