import Foundation
import OrderedCollections

// The JSON encoding of values, used by the CLIs and the test fixtures (DESIGN.md, "Values").
//
//     value                      JSON
//     null, bool, string         null, true/false, "text"
//     integer 2, double 2.5      2, 2.5 (and 2.0 for the double 2)
//     double NaN, ±infinity      {"$double": "NaN"}, {"$double": "Infinity"}, {"$double": "-Infinity"}
//     decimal 12.5               12.5 (a number: integer when integral, else double)
//     date                       {"$date": "2001-01-01T00:00:00Z"} (ISO 8601, UTC, proleptic
//                                Gregorian calendar; fractional seconds only when there are
//                                some, with as many digits as the exact value needs)
//     date NaN, ±infinity        {"$date": "NaN"}, {"$date": "Infinity"}, … (also dates more
//                                than ~285 billion years away, as ±infinity)
//     data                       {"$data": "AQID"} (base64)
//     array                      [...]
//     set                        {"$set": [...]}
//     dictionary                 {...} (keys sorted)
//     object of a store          {"$object": "Book/9"}
//
// Reading also accepts `{"$decimal": "12.50"}` and dates with an offset
// (`"2001-01-01T01:00:00+01:00"`). An object is one of these forms only when it has
// exactly one member with one of these keys; any other object is a dictionary. So a
// dictionary that has a single key `$date`, `$data`, `$set`, `$decimal`, `$double` or
// `$object` does not survive a round trip: it reads back as that form (or as an error).

extension Value {
    /// The value that `json` encodes (see the table at the top of Value+JSON.swift).
    ///
    /// `resolveObject` turns the text of `{"$object": "Book/9"}` into an object; without
    /// one, such a reference is an error. Errors have kind ``ExpressionError/Kind/type``
    /// (an `ExpressionError` thrown by `resolveObject` keeps its kind; any other error it
    /// throws becomes kind ``ExpressionError/Kind/host``) and say which form was expected
    /// and where, as a JSON path:
    ///
    ///     try Value(json: JSON.parse(#"{"$date": "2001-01-01T00:00:00.5Z"}"#))
    ///     // .date(Date(timeIntervalSinceReferenceDate: 0.5))
    ///     try Value(json: JSON.parse(#"{"when": [{"$date": 5}]}"#))
    ///     // .when[0]: "$date" expects an ISO 8601 date-time string such as
    ///     // "2001-01-01T00:00:00Z", not 5
    public init(json: JSON, resolveObject: ((String) throws -> Value)? = nil) throws(ExpressionError) {
        do {
            self = try JSONDecoding(resolveObject: resolveObject).value(json)
        } catch {
            throw error.expressionError
        }
    }

    /// This value as JSON (see the table at the top of Value+JSON.swift). Deterministic:
    /// dictionary keys are sorted as Swift orders strings (by the Unicode code points of
    /// their NFC forms), sets keep their order.
    ///
    ///     Value.double(2).json.serialized()                    // 2.0
    ///     Value.date(Date(timeIntervalSinceReferenceDate: 0)).json.serialized()
    ///     // {"$date":"2001-01-01T00:00:00Z"}
    public var json: JSON {
        switch self {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .integer(let value): return .integer(value)
        case .double(let value): return Self.json(for: value)
        case .decimal(let value):
            let text = value.description
            if let integer = Int64(text) { return .integer(integer) }
            return Self.json(for: Self.double(value))
        case .string(let value): return .string(value)
        case .date(let date):
            if let text = ISO8601Text.format(date) { return ["$date": .string(text)] }
            let interval = date.timeIntervalSinceReferenceDate
            return ["$date": .string(interval.isNaN ? "NaN" : interval < 0 ? "-Infinity" : "Infinity")]
        case .data(let data): return ["$data": .string(data.base64EncodedString())]
        case .array(let elements): return .array(elements.map(\.json))
        case .set(let elements): return ["$set": .array(elements.map(\.json))]
        case .dictionary(let members):
            var object = OrderedDictionary<String, JSON>(minimumCapacity: members.count)
            for key in members.keys.sorted() {
                object[key] = members[key]!.json
            }
            return .object(object)
        case .object(let reference): return ["$object": .string(reference.object.objectDescription)]
        }
    }

    private static func json(for double: Double) -> JSON {
        if double.isFinite { return .double(double) }
        return ["$double": .string(double.isNaN ? "NaN" : double < 0 ? "-Infinity" : "Infinity")]
    }
}

/// A decoding error and the JSON path to where it happened, built from the inside out as
/// the error leaves nested arrays and objects.
private struct JSONDecodingFailure: Error {
    var path = ""
    var error: ExpressionError

    init(_ message: String, kind: ExpressionError.Kind = .type) {
        error = ExpressionError(kind, message)
    }

    init(_ error: ExpressionError) {
        self.error = error
    }

    /// The same failure, one level further out.
    func inside(_ component: String) -> JSONDecodingFailure {
        var copy = self
        copy.path = component + path
        return copy
    }

    /// `.items[1]: message`.
    var expressionError: ExpressionError {
        guard !path.isEmpty else { return error }
        var error = error
        error.message = "\(path): \(error.message)"
        return error
    }
}

private struct JSONDecoding {
    let resolveObject: ((String) throws -> Value)?

    func value(_ json: JSON) throws(JSONDecodingFailure) -> Value {
        switch json {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .integer(let value): return .integer(value)
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        case .array(let elements):
            return .array(try values(elements, path: ""))
        case .object(let members):
            if members.count == 1, let special = try specialForm(key: members.keys[0], value: members.values[0]) {
                return special
            }
            var dictionary = [String: Value](minimumCapacity: members.count)
            for (key, member) in members {
                do {
                    dictionary[key] = try value(member)
                } catch {
                    throw error.inside(Self.pathComponent(key))
                }
            }
            return .dictionary(dictionary)
        }
    }

    private func values(_ elements: [JSON], path: String) throws(JSONDecodingFailure) -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do {
                values.append(try value(element))
            } catch {
                throw error.inside("\(path)[\(index)]")
            }
        }
        return values
    }

    /// The value of `{"$date": …}` and its kin, or nil when `key` names no special form.
    private func specialForm(key: String, value json: JSON) throws(JSONDecodingFailure) -> Value? {
        switch key {
        case "$date":
            guard case .string(let text) = json else { throw expected(key, Self.dateExample, json) }
            switch text {
            case "NaN": return .date(Date(timeIntervalSinceReferenceDate: .nan))
            case "Infinity": return .date(Date(timeIntervalSinceReferenceDate: .infinity))
            case "-Infinity": return .date(Date(timeIntervalSinceReferenceDate: -.infinity))
            default: break
            }
            do {
                return .date(try ISO8601Text.parse(text))
            } catch {
                throw expected(key, Self.dateExample, json, reason: error.reason)
            }
        case "$data":
            guard case .string(let text) = json else { throw expected(key, "a base64 string", json) }
            guard let data = Data(base64Encoded: text) else {
                throw expected(key, "a base64 string", json, reason: "invalid base64")
            }
            return .data(data)
        case "$set":
            guard case .array(let elements) = json else { throw expected(key, "an array", json) }
            return .set(OrderedSet(try values(elements, path: ".$set")))
        case "$decimal":
            let example = #"a decimal number in a string, such as "12.50""#
            guard case .string(let text) = json else { throw expected(key, example, json) }
            guard Self.isDecimalNumber(text) else { throw expected(key, example, json) }
            guard let decimal = Decimal(string: text) else {
                throw expected(key, example, json, reason: "out of the range of a decimal")
            }
            return .decimal(decimal)
        case "$double":
            switch json {
            case "NaN": return .double(.nan)
            case "Infinity": return .double(.infinity)
            case "-Infinity": return .double(-.infinity)
            default: throw expected(key, #""NaN", "Infinity" or "-Infinity""#, json)
            }
        case "$object":
            guard case .string(let reference) = json else {
                throw expected(key, #"an object reference string such as "Book/9""#, json)
            }
            guard let resolveObject else {
                throw JSONDecodingFailure(
                    "object reference \(JSON.quoted(reference)) cannot be resolved here: there is no object graph to look it up in"
                )
            }
            do {
                return try resolveObject(reference)
            } catch let error as ExpressionError {
                throw JSONDecodingFailure(error)
            } catch {
                throw JSONDecodingFailure(
                    "cannot resolve object reference \(JSON.quoted(reference)): \(error)", kind: .host)
            }
        default:
            return nil
        }
    }

    private static let dateExample = #"an ISO 8601 date-time string such as "2001-01-01T00:00:00Z""#

    /// `"$date" expects …, not 5 (reason)`, quoting at most 40 characters of what was found.
    private func expected(_ key: String, _ expectation: String, _ found: JSON, reason: String? = nil)
        -> JSONDecodingFailure
    {
        var text = found.serialized()
        if text.count > 40 { text = text.prefix(40) + "…" }
        return JSONDecodingFailure("\"\(key)\" expects \(expectation), not \(text)\(reason.map { " (\($0))" } ?? "")")
    }

    /// `-?digits(.digits)?([eE][+-]?digits)?`: what `$decimal` accepts. (`Decimal(string:)`
    /// alone would read "12abc" as 12.)
    private static func isDecimalNumber(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        func digits() -> Bool {
            let count = bytes.prefix(while: { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }).count
            bytes = bytes.dropFirst(count)
            return count > 0
        }
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        guard digits() else { return false }
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            guard digits() else { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() else { return false }
        }
        return bytes.isEmpty
    }

    /// `.name` for identifier-like keys, `["a key"]` for others.
    private static func pathComponent(_ key: String) -> String {
        let isIdentifier =
            !key.isEmpty
            && key.utf8.enumerated().allSatisfy { index, byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"),
                    UInt8(ascii: "$"):
                    true
                case UInt8(ascii: "0")...UInt8(ascii: "9"): index > 0
                default: false
                }
            }
        return isIdentifier ? ".\(key)" : "[\(JSON.quoted(key))]"
    }
}
