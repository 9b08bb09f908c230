import Foundation
import OrderedCollections

/// Key-value coding over values: what `valueForKey:` and `valueForKeyPath:` do on
/// Foundation's collections, including the collection operators (`@count`, `@sum.x`, …).
enum KeyValue {
    /// `valueForKey:`: dictionaries answer by lookup (missing → nil), arrays and sets map
    /// the key over their elements, objects answer through ``KeyValueCoding``.
    static func value(forKey key: String, of base: Value) throws(ExpressionError) -> Value {
        switch base {
        case .dictionary(let d):
            if let v = d[key] { return v }
            return key == "self" ? base : .null
        case .object(let reference):
            if key == "self" { return base }
            do {
                return try reference.object.value(forKey: key)
            } catch let error as ExpressionError {
                throw error
            } catch {
                throw ExpressionError(
                    .host, "reading '\(key)' of \(reference.object.objectDescription) failed: \(error)")
            }
        case .array(let elements):
            var result: [Value] = []
            result.reserveCapacity(elements.count)
            for element in elements { result.append(try value(forKey: key, of: element)) }
            return .array(result)
        case .set(let elements):
            var result = OrderedSet<Value>()
            for element in elements { result.append(try value(forKey: key, of: element)) }
            return .set(result)
        case .null:
            return .null
        default:
            if key == "self" { return base }
            // Foundation's valueForKey: calls the getter method of that name; for plain
            // values the getters are the registered zero-argument selectors
            // (`name.length`, `name.uppercaseString`, `birthday.timeIntervalSinceReferenceDate`).
            if !key.contains(":"),
                let getter = getters(key).first(where: { $0.target.accepts(base) })
            {
                return try FunctionRegistry.call(key, on: base, arguments: [], among: [getter])
            }
            throw ExpressionError(.unknownKey, "\(base.kind.rawValue) has no key '\(key)'")
        }
    }

    /// The standard registry's zero-argument selectors named `key` that read a value
    /// (`description`, `self` and the other selectors registered for any value are not
    /// keys: a dictionary or an object answers those itself).
    private static func getters(_ key: String) -> [FunctionRegistry.Implementation] {
        FunctionRegistry.standard.implementations(of: key).filter {
            if case .any = $0.target { return false }
            return true
        }
    }

    /// `valueForKeyPath:` over `path`, with collection operators.
    static func value(forPath path: ArraySlice<String>, of base: Value) throws(ExpressionError) -> Value {
        var current = base
        var index = path.startIndex
        while index < path.endIndex {
            let key = path[index]
            if key.hasPrefix("@") {
                return try collectionOperator(key, rest: path[(index + 1)...], of: current)
            }
            current = try value(forKey: key, of: current)
            index += 1
        }
        return current
    }

    private static func elements(of value: Value, for op: String) throws(ExpressionError) -> [Value]? {
        switch value {
        case .array(let a): return a
        case .set(let s): return s.elements
        case .dictionary(let d) where op == "@count": return Array(d.values)
        case .null: return nil
        default:
            throw ExpressionError(.type, "\(op) needs a collection, not \(value.kind.rawValue)")
        }
    }

    /// `@count`, `@sum.k`, `@avg.k`, `@min.k`, `@max.k`, `@unionOfObjects.k`,
    /// `@distinctUnionOfObjects.k`, `@unionOfArrays.k`, `@distinctUnionOfArrays.k`,
    /// `@distinctUnionOfSets.k`. A missing right key means the elements themselves.
    static func collectionOperator(_ op: String, rest: ArraySlice<String>, of base: Value) throws(ExpressionError)
        -> Value
    {
        guard let items = try elements(of: base, for: op) else { return .null }
        func mapped() throws(ExpressionError) -> [Value] {
            if rest.isEmpty { return items }
            var out: [Value] = []
            out.reserveCapacity(items.count)
            for item in items { out.append(try value(forPath: rest, of: item)) }
            return out
        }
        switch op {
        case "@count":
            let count = Value.integer(Int64(items.count))
            return rest.isEmpty ? count : try value(forPath: rest, of: count)
        case "@sum":
            return try Arithmetic.sum(mapped().filter { !$0.isNull }, integral: true)
        case "@avg":
            let values = try mapped().filter { !$0.isNull }
            if values.isEmpty { return .null }
            let sum = try Arithmetic.sum(values, integral: false)
            return .double((sum.doubleValue ?? 0) / Double(values.count))
        case "@min", "@max":
            let values = try mapped().filter { !$0.isNull }
            guard var best = values.first else { return .null }
            for v in values.dropFirst() {
                let order = try ComparisonEvaluation.order(v, best, options: [], op: op)
                if (op == "@min" && order == .orderedAscending) || (op == "@max" && order == .orderedDescending) {
                    best = v
                }
            }
            return best
        case "@unionOfObjects":
            return .array(try mapped().filter { !$0.isNull })
        case "@distinctUnionOfObjects":
            return .array(Array(OrderedSet(try mapped().filter { !$0.isNull })))
        case "@unionOfArrays", "@distinctUnionOfArrays", "@distinctUnionOfSets":
            var all: [Value] = []
            for item in items {
                let inner = rest.isEmpty ? item : try value(forPath: rest, of: item)
                guard let nested = inner.collectionElements else {
                    if inner.isNull { continue }
                    throw ExpressionError(
                        .type, "\(op) needs a collection of collections, found \(inner.kind.rawValue)")
                }
                all.append(contentsOf: nested.filter { !$0.isNull })
            }
            switch op {
            case "@unionOfArrays": return .array(all)
            case "@distinctUnionOfArrays": return .array(Array(OrderedSet(all)))
            default: return .set(OrderedSet(all))
            }
        default:
            throw ExpressionError(
                .unknownKey,
                "unknown collection operator '\(op)'; the operators are @count, @sum, @avg, @min, @max, "
                    + "@unionOfObjects, @distinctUnionOfObjects, @unionOfArrays, @distinctUnionOfArrays, @distinctUnionOfSets"
            )
        }
    }
}
