import ExpressionLanguage
import Foundation

extension EvalSession {
    /// What Tab offers for the word being typed: command names after `:`, file names
    /// after `:load `, variable names after `$` (and after `:unset `), collection operators
    /// after `@`, and otherwise the keys of SELF, following dictionaries along a key path
    /// (`address.ci` → `address.city`).
    ///
    /// `wordStart` is where the word starts in `line`, in UTF-8 bytes. Candidates after
    /// which a space belongs (commands, files) end with one.
    public func completions(line: String, wordStart: Int, word: String) -> [String] {
        let before = String(decoding: line.utf8.prefix(wordStart), as: UTF8.self)
        let trimmed = before.drop(while: \.isWhitespace)
        if trimmed == ":" {
            return Self.commands.flatMap(\.names).filter { $0.hasPrefix(word) && $0.count > 1 }.sorted().map { $0 + " " }
        }
        if trimmed.hasPrefix(":load ") { return Self.fileCompletions(word) }
        if before.hasSuffix("$") || trimmed.hasPrefix(":unset ") {
            var names = Set(variables.keys)
            if !object.isNull { names.insert("source") }
            return names.filter { $0.hasPrefix(word) }.sorted()
        }
        return keyPathCompletions(word)
    }

    private func keyPathCompletions(_ word: String) -> [String] {
        var components = word.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let partial = components.removeLast()
        let prefix = components.map { $0 + "." }.joined()
        if partial.hasPrefix("@") {
            let operators = [
                "@count", "@sum", "@avg", "@min", "@max", "@unionOfObjects", "@distinctUnionOfObjects",
                "@unionOfArrays", "@distinctUnionOfArrays", "@distinctUnionOfSets",
            ]
            return operators.filter { $0.hasPrefix(partial) }.map { prefix + $0 }
        }
        var current = object
        for component in components {
            // `books.@sum.pri`: the keys after a collection operator are the elements' keys.
            if component.hasPrefix("@") { continue }
            current = Self.sample(current)
            guard case .dictionary(let members) = current, let next = members[component] else { return [] }
            current = next
        }
        guard case .dictionary(let members) = Self.sample(current) else { return [] }
        return members.keys.filter { $0.hasPrefix(partial) }.sorted().map { prefix + $0 }
    }

    /// A collection's first element (a key applies to each element); anything else itself.
    private static func sample(_ value: Value) -> Value {
        value.collectionElements?.first ?? value
    }

    /// Entries of the directory of `word` that start with its last component; directories
    /// end with `/`, files with a space.
    static func fileCompletions(_ word: String) -> [String] {
        let slash = word.lastIndex(of: "/")
        let directory = slash.map { String(word[...$0]) } ?? ""
        let partial = slash.map { String(word[word.index(after: $0)...]) } ?? word
        let path = JSONInput.expandingTilde(directory.isEmpty ? "." : directory)
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        return entries.filter { $0.hasPrefix(partial) && (partial.hasPrefix(".") || !$0.hasPrefix(".")) }.sorted().map { entry in
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent(entry), isDirectory: &isDirectory)
            return directory + entry + (isDirectory.boolValue ? "/" : " ")
        }
    }
}
