import Foundation
import OrderedCollections

extension FunctionRegistry {
    /// The Foundation methods mapping authors call through FUNCTION, as docs/functions.md
    /// lists them. String indexes and lengths count UTF-16 code units, as NSString's do.
    public static let standard: FunctionRegistry = {
        var r = FunctionRegistry()

        // MARK: Strings
        r.register("stringByAppendingString:", on: .string) { t, a in
            let (s, tail) = (try str(t), try str(a[0], "stringByAppendingString:"))
            try EvaluationLimits.check(stringLength: s.utf16.count + tail.utf16.count, "stringByAppendingString:")
            return .string(s + tail)
        }
        r.register("substringToIndex:", on: .string) { t, a in
            let s = try str(t)
            let i = try index(a[0], upTo: s.utf16.count, "substringToIndex:")
            return .string(String(decoding: Array(s.utf16.prefix(i)), as: UTF16.self))
        }
        r.register("substringFromIndex:", on: .string) { t, a in
            let s = try str(t)
            let i = try index(a[0], upTo: s.utf16.count, "substringFromIndex:")
            return .string(String(decoding: Array(s.utf16.dropFirst(i)), as: UTF16.self))
        }
        r.register("substringWithRange:", on: .string) { t, a in
            // The range is given as {location, length}.
            let s = try str(t)
            guard let parts = a[0].collectionElements, parts.count == 2,
                let location = parts[0].integerValue, let length = parts[1].integerValue,
                location >= 0, length >= 0, Int(location + length) <= s.utf16.count
            else {
                throw ExpressionError(
                    .range,
                    "substringWithRange: needs {location, length} within the string's \(s.utf16.count) UTF-16 units")
            }
            return .string(
                String(decoding: Array(s.utf16.dropFirst(Int(location)).prefix(Int(length))), as: UTF16.self))
        }
        r.register("componentsSeparatedByString:", on: .string) { t, a in
            let separator = try str(a[0], "componentsSeparatedByString:")
            guard !separator.isEmpty else {
                throw ExpressionError(.range, "componentsSeparatedByString: needs a non-empty separator")
            }
            return .array(try str(t).components(separatedBy: separator).map(Value.string))
        }
        r.register("stringByReplacingOccurrencesOfString:withString:", on: .string) { t, a in
            let target = try str(a[0], "stringByReplacingOccurrencesOfString:withString:")
            guard !target.isEmpty else { return t }
            let (s, replacement) = (try str(t), try str(a[1], "stringByReplacingOccurrencesOfString:withString:"))
            let growth = replacement.utf16.count - target.utf16.count
            if growth > 0,
                s.utf16.count + s.utf16.count / target.utf16.count * growth > EvaluationLimits.maximumStringLength
            {
                let occurrences = s.components(separatedBy: target).count - 1
                try EvaluationLimits.check(
                    stringLength: s.utf16.count + occurrences * growth,
                    "stringByReplacingOccurrencesOfString:withString:")
            }
            return .string(s.replacingOccurrences(of: target, with: replacement))
        }
        r.register("stringByTrimmingWhitespace", on: .string) { t, _ in
            .string(try str(t).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        r.register("stringByPaddingToLength:withString:startingAtIndex:", on: .string) { t, a in
            let s = try str(t)
            let length = try index(a[0], upTo: Int.max, "stringByPaddingToLength:withString:startingAtIndex:")
            let pad = try str(a[1], "stringByPaddingToLength:withString:startingAtIndex:")
            let start = try index(
                a[2], upTo: max(0, pad.utf16.count - 1), "stringByPaddingToLength:withString:startingAtIndex:")
            guard !pad.isEmpty else { throw ExpressionError(.range, "the padding string is empty") }
            try EvaluationLimits.check(stringLength: length, "stringByPaddingToLength:withString:startingAtIndex:")
            return .string(s.padding(toLength: length, withPad: pad, startingAt: start))
        }
        r.register("uppercaseString", on: .string) { t, _ in .string(try str(t).uppercased()) }
        r.register("lowercaseString", on: .string) { t, _ in .string(try str(t).lowercased()) }
        r.register("capitalizedString", on: .string) { t, _ in .string(try str(t).capitalized) }
        r.register("length", on: .string) { t, _ in .integer(Int64(try str(t).utf16.count)) }
        // As NSString's: an empty prefix or suffix is never found (Swift's hasPrefix says true).
        r.register("hasPrefix:", on: .string) { t, a in
            let prefix = try str(a[0], "hasPrefix:")
            return .bool(try !prefix.isEmpty && str(t).hasPrefix(prefix))
        }
        r.register("hasSuffix:", on: .string) { t, a in
            let suffix = try str(a[0], "hasSuffix:")
            return .bool(try !suffix.isEmpty && str(t).hasSuffix(suffix))
        }
        r.register("containsString:", on: .string) { t, a in .bool(try str(t).contains(str(a[0], "containsString:"))) }
        r.register("isEqualToString:", on: .string) { t, a in .bool(a[0] == t) }
        r.register("intValue", on: .string) { t, _ in .integer(leadingInteger(try str(t), bits: 32)) }
        r.register("integerValue", on: .string) { t, _ in .integer(leadingInteger(try str(t), bits: 64)) }
        r.register("longLongValue", on: .string) { t, _ in .integer(leadingInteger(try str(t), bits: 64)) }
        r.register("doubleValue", on: .string) { t, _ in .double(leadingDouble(try str(t))) }
        r.register("floatValue", on: .string) { t, _ in .double(Double(Float(leadingDouble(try str(t))))) }
        r.register("boolValue", on: .string) { t, _ in .bool(stringBool(try str(t))) }

        // MARK: Numbers
        r.register("stringValue", on: .number) { t, _ in .string(t.formatDescription) }
        r.register("intValue", on: .number) { t, _ in .integer(try truncated(t, bits: 32)) }
        r.register("integerValue", on: .number) { t, _ in .integer(try truncated(t, bits: 64)) }
        r.register("longLongValue", on: .number) { t, _ in .integer(try truncated(t, bits: 64)) }
        r.register("doubleValue", on: .number) { t, _ in .double(t.doubleValue ?? 0) }
        r.register("floatValue", on: .number) { t, _ in .double(Double(Float(t.doubleValue ?? 0))) }
        r.register("boolValue", on: .number) { t, _ in .bool((t.doubleValue ?? 0) != 0) }
        r.register("decimalValue", on: .number) { t, _ in try Cast.toDecimal(t) }

        // MARK: Dates
        r.register("timeIntervalSinceReferenceDate", on: .date) { t, _ in
            guard case .date(let d) = t else { return .null }
            return .double(d.timeIntervalSinceReferenceDate)
        }
        r.register("timeIntervalSince1970", on: .date) { t, _ in
            guard case .date(let d) = t else { return .null }
            return .double(d.timeIntervalSince1970)
        }
        r.register("dateByAddingTimeInterval:", on: .date) { t, a in
            guard case .date(let d) = t else { return .null }
            return .date(d.addingTimeInterval(try Arithmetic.number(a[0], "dateByAddingTimeInterval:")))
        }

        // MARK: Data
        r.register("length", on: .data) { t, _ in
            guard case .data(let d) = t else { return .null }
            return .integer(Int64(d.count))
        }

        // MARK: Collections
        for kind: Target in [.array, .set, .dictionary] {
            r.register("count", on: kind) { t, _ in
                if case .dictionary(let d) = t { return .integer(Int64(d.count)) }
                return .integer(Int64(t.collectionElements?.count ?? 0))
            }
        }
        r.register("objectAtIndex:", on: .array) { t, a in
            let items = t.collectionElements ?? []
            guard !items.isEmpty else {
                let i = try index(a[0], upTo: Int.max, "objectAtIndex:")
                throw ExpressionError(.range, "objectAtIndex: index \(i) is out of range of an empty array")
            }
            return items[try index(a[0], upTo: items.count - 1, "objectAtIndex:")]
        }
        r.register("firstObject", on: .array) { t, _ in t.collectionElements?.first ?? .null }
        r.register("lastObject", on: .array) { t, _ in t.collectionElements?.last ?? .null }
        r.register("containsObject:", on: .array) { t, a in .bool(t.collectionElements?.contains(a[0]) ?? false) }
        r.register("containsObject:", on: .set) { t, a in .bool(t.collectionElements?.contains(a[0]) ?? false) }
        r.register("componentsJoinedByString:", on: .array) { t, a in
            let separator = try str(a[0], "componentsJoinedByString:")
            let parts = (t.collectionElements ?? []).map(\.formatDescription)
            let length = parts.reduce(max(0, parts.count - 1) * separator.utf16.count) { $0 + $1.utf16.count }
            try EvaluationLimits.check(stringLength: length, "componentsJoinedByString:")
            return .string(parts.joined(separator: separator))
        }
        r.register("arrayByAddingObject:", on: .array) { t, a in .array((t.collectionElements ?? []) + [a[0]]) }
        r.register("arrayByAddingObjectsFromArray:", on: .array) { t, a in
            guard let more = a[0].collectionElements else {
                throw ExpressionError(
                    .type, "arrayByAddingObjectsFromArray: needs a collection, not \(Arithmetic.describe(a[0]))")
            }
            let elements = t.collectionElements ?? []
            try EvaluationLimits.check(collectionCount: elements.count + more.count, "arrayByAddingObjectsFromArray:")
            return .array(elements + more)
        }
        r.register("allObjects", on: .set) { t, _ in .array(t.collectionElements ?? []) }
        r.register("anyObject", on: .set) { t, _ in t.collectionElements?.first ?? .null }
        r.register("objectForKey:", on: .dictionary) { t, a in
            guard case .dictionary(let d) = t, case .string(let key) = a[0] else { return .null }
            return d[key] ?? .null
        }
        r.register("allKeys", on: .dictionary) { t, _ in
            guard case .dictionary(let d) = t else { return .null }
            return .array(d.keys.sorted().map(Value.string))
        }
        r.register("allValues", on: .dictionary) { t, _ in
            guard case .dictionary(let d) = t else { return .null }
            return .array(d.keys.sorted().map { d[$0]! })
        }

        // MARK: Any value
        r.register("valueForKey:", on: .any) { t, a in
            try KeyValue.value(forKey: try str(a[0], "valueForKey:"), of: t)
        }
        r.register("valueForKeyPath:", on: .any) { t, a in
            let path = try str(a[0], "valueForKeyPath:").split(separator: ".").map(String.init)
            return try KeyValue.value(forPath: path[...], of: t)
        }
        r.register("description", on: .any) { t, _ in .string(t.formatDescription) }
        r.register("isEqual:", on: .any) { t, a in .bool(t == a[0]) }
        r.register("self", on: .any) { t, _ in t }
        r.markStandard()
        return r
    }()
}

private func str(_ value: Value, _ selector: String = "the target") throws(ExpressionError) -> String {
    guard case .string(let s) = value else {
        throw ExpressionError(.type, "\(selector) needs a string, not \(Arithmetic.describe(value))")
    }
    return s
}

private func index(_ value: Value, upTo limit: Int, _ selector: String) throws(ExpressionError) -> Int {
    guard let i = value.integerValue else {
        throw ExpressionError(.type, "\(selector) needs an integer index, not \(Arithmetic.describe(value))")
    }
    guard i >= 0, i <= limit else {
        throw ExpressionError(.range, "\(selector) index \(i) is out of range 0...\(limit)")
    }
    return Int(i)
}

private func truncated(_ value: Value, bits: Int) throws(ExpressionError) -> Int64 {
    if let i = value.integerValue { return bits == 32 ? Int64(Int32(truncatingIfNeeded: i)) : i }
    let d = value.doubleValue ?? 0
    guard d.isFinite, Swift.abs(d) < 9.2e18 else { throw ExpressionError(.overflow, "\(d) does not fit in an integer") }
    let i = Int64(d.rounded(.towardZero))
    return bits == 32 ? Int64(Int32(truncatingIfNeeded: i)) : i
}

/// NSString's `integerValue`: leading whitespace, an optional sign, digits; 0 when none.
private func leadingInteger(_ s: String, bits: Int) -> Int64 {
    var scalars = Substring(s).drop(while: { $0.isWhitespace })
    var sign: Int64 = 1
    if let first = scalars.first, first == "-" || first == "+" {
        sign = first == "-" ? -1 : 1
        scalars = scalars.dropFirst()
    }
    var value: Int64 = 0
    for ch in scalars {
        guard let digit = ch.wholeNumberValue, ch.isASCII else { break }
        let (m, o1) = value.multipliedReportingOverflow(by: 10)
        let (a, o2) = m.addingReportingOverflow(Int64(digit))
        if o1 || o2 { return sign > 0 ? .max : .min }
        value = a
    }
    let result = sign * value
    return bits == 32 ? Int64(Int32(clamping: result)) : result
}

/// NSString's `doubleValue`: the longest leading decimal number; 0 when none.
private func leadingDouble(_ s: String) -> Double {
    let trimmed = s.drop(while: { $0.isWhitespace })
    var best = 0.0
    var end = trimmed.startIndex
    while end < trimmed.endIndex {
        end = trimmed.index(after: end)
        if let d = Double(trimmed[trimmed.startIndex..<end]) {
            best = d
        } else if trimmed[trimmed.index(before: end)].isLetter && trimmed[trimmed.index(before: end)] != "e"
            && trimmed[trimmed.index(before: end)] != "E"
        {
            break
        }
    }
    return best
}

/// NSString's `boolValue`: true for a leading Y, y, T, t or a non-zero digit.
private func stringBool(_ s: String) -> Bool {
    let trimmed = s.drop(while: { $0.isWhitespace || $0 == "+" || $0 == "-" || $0 == "0" })
    guard let first = trimmed.first else { return false }
    return "YyTt123456789".contains(first)
}
