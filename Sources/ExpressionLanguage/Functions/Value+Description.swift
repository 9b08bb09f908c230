import Foundation

extension Value {
    /// The value's description as Foundation's `description` gives it, used by
    /// `CAST(x, 'NSString')` and the `stringValue`/`description` selectors: integers as
    /// digits, integral doubles without a fraction (`3`), booleans as `1`/`0`, dates as
    /// `2001-01-01 00:00:00 +0000`, collections in property-list style.
    public var formatDescription: String {
        switch self {
        case .null: return "<null>"
        case .bool(let b): return b ? "1" : "0"
        case .integer(let i): return String(i)
        case .double(let d): return Value.numberDescription(d)
        case .decimal(let d): return d.description
        case .string(let s): return s
        case .date(let date): return Value.dateDescription(date)
        case .data(let data):
            return
                "{length = \(data.count), bytes = 0x\(data.prefix(24).map { String(format: "%02x", $0) }.joined())\(data.count > 24 ? "..." : "")}"
        case .array(let elements): return "(" + elements.map(\.formatDescription).joined(separator: ", ") + ")"
        case .set(let elements): return "{(" + elements.map(\.formatDescription).joined(separator: ", ") + ")}"
        case .dictionary(let d):
            return "{" + d.keys.sorted().map { "\($0) = \(d[$0]!.formatDescription);" }.joined(separator: " ") + "}"
        case .object(let reference): return reference.object.objectDescription
        }
    }

    /// A double as NSNumber describes it: `3` for 3.0, `1.5`, `1e+20`.
    static func numberDescription(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }

    /// `2001-01-01 00:00:00 +0000`.
    static func dateDescription(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d-%02d-%02d %02d:%02d:%02d +0000",
            c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }
}
