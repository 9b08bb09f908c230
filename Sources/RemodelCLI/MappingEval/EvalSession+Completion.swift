import ExpressionLanguage
import Foundation
import ObjectGraph

extension EvalSession {
    /// What Tab offers for the word being typed: command names after `:`, file names
    /// after `:load ` and `:open `, entity names after `:source ` and `:self `, variable
    /// names after `$` (and after `:unset `), collection operators after `@`, and otherwise
    /// the keys of SELF (or of `$name.`), following dictionaries and store objects along a
    /// key path (`address.ci` → `address.city`, `$source.user.u` → `$source.user.userId`).
    ///
    /// `wordStart` is where the word starts in `line`, in UTF-8 bytes. Candidates after
    /// which a space belongs (commands, files) end with one.
    public func completions(line: String, wordStart: Int, word: String) -> [String] {
        let before = String(decoding: line.utf8.prefix(wordStart), as: UTF8.self)
        let trimmed = before.drop(while: \.isWhitespace)
        if trimmed == ":" {
            return Self.commands.flatMap(\.names).filter { $0.hasPrefix(word) && $0.count > 1 }.sorted().map {
                $0 + " "
            }
        }
        if trimmed.hasPrefix(":load ") || trimmed.hasPrefix(":open ") { return Self.fileCompletions(word) }
        if trimmed == ":source " || trimmed == ":self ", let store {
            return store.model.entities.map(\.name).filter { $0.hasPrefix(word) }.sorted().map { $0 + "/" }
        }
        if before.hasSuffix("$"), let dot = word.firstIndex(of: ".") {
            // `$source.us` → the keys of $source's value.
            let name = String(word[..<dot])
            let root = variables[name] ?? (name == "source" ? object : .null)
            return keyPathCompletions(String(word[word.index(after: dot)...]), root: root).map { name + "." + $0 }
        }
        if before.hasSuffix("$") || trimmed.hasPrefix(":unset ") {
            var names = Set(variables.keys)
            if !object.isNull { names.insert("source") }
            return names.filter { $0.hasPrefix(word) }.sorted()
        }
        return keyPathCompletions(word, root: object)
    }

    private func keyPathCompletions(_ word: String, root: Value) -> [String] {
        var components = word.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let partial = components.removeLast()
        let prefix = components.map { $0 + "." }.joined()
        if partial.hasPrefix("@") {
            let operators = [
                "@count", "@sum", "@avg", "@min", "@max", "@unionOfObjects", "@distinctUnionOfObjects",
                "@unionOfArrays", "@distinctUnionOfArrays", "@distinctUnionOfSets"
            ]
            return operators.filter { $0.hasPrefix(partial) }.map { prefix + $0 }
        }
        var current = root
        for component in components {
            // `books.@sum.pri`: the keys after a collection operator are the elements' keys.
            if component.hasPrefix("@") { continue }
            current = Self.sample(current)
            switch current {
            case .dictionary(let members):
                guard let next = members[component] else { return [] }
                current = next
            case .object(let reference):
                guard let object = reference.object as? ManagedObject, Self.keys(of: object).contains(component),
                    let next = try? object.value(forKey: component)
                else { return [] }
                current = next
            default: return []
            }
        }
        let keys: [String]
        switch Self.sample(current) {
        case .dictionary(let members): keys = Array(members.keys)
        case .object(let reference):
            guard let object = reference.object as? ManagedObject else { return [] }
            keys = Self.keys(of: object)
        default: return []
        }
        return keys.filter { $0.hasPrefix(partial) }.sorted().map { prefix + $0 }
    }

    /// The attributes and relationships of a store object.
    private static func keys(of object: ManagedObject) -> [String] {
        guard let model = object.managedObjectContext?.store.model else { return [] }
        return model.allAttributes(of: object.entity).map(\.name)
            + model.allRelationships(of: object.entity).map(\.name)
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
        return entries.filter { $0.hasPrefix(partial) && (partial.hasPrefix(".") || !$0.hasPrefix(".")) }.sorted().map {
            entry in
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(
                atPath: (path as NSString).appendingPathComponent(entry), isDirectory: &isDirectory)
            return directory + entry + (isDirectory.boolValue ? "/" : " ")
        }
    }
}
