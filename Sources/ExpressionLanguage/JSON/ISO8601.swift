import Foundation

/// ISO 8601 / RFC 3339 date-times for `{"$date": …}`, by civil-date arithmetic on the
/// proleptic Gregorian calendar: no formatter, locale or time zone database involved,
/// correct before 1970 and far from it, and exact — the fraction of a second is written
/// with as many digits as it takes to read back the same `Date`, and no more.
///
///     2001-01-01T00:00:00Z          the reference date (0 s)
///     2001-01-01T00:00:00.5Z        0.5 s
///     1969-12-31T23:59:59.999Z      a millisecond before 1970
///     -0001-12-31T00:00:00Z         years outside 0000...9999 have a sign
///     +10000-01-01T00:00:00Z
enum ISO8601Text {
    /// Why text is not a date-time that ``parse(_:)`` accepts; nil `reason` means the text
    /// does not have the shape at all.
    struct Failure: Error {
        var reason: String?
    }

    /// Seconds from 1970-01-01 (Unix) to 2001-01-01 (Core Data's reference date).
    private static let referenceDateUnixSeconds: Int64 = 978_307_200

    /// `date` in UTC, with a fraction of a second only when it has one; nil for a date
    /// that is not finite or is more than about 285 billion years away.
    static func format(_ date: Date) -> String? {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, interval.magnitude < 9.0e18 else { return nil }
        let (whole, fraction) = decimalParts(of: interval)
        let unixSeconds = whole + referenceDateUnixSeconds
        let days = floorDivide(unixSeconds, 86_400)
        let secondOfDay = unixSeconds - days * 86_400
        let (year, month, day) = civilDate(fromDays: days)

        // Built as bytes: this runs once per date in every JSON output.
        var text: [UInt8] = []
        text.reserveCapacity(24 + fraction.count)
        if !(0...9999).contains(year) { text.append(year < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+")) }
        appendDigits(year.magnitude, width: 4, to: &text)
        text.append(UInt8(ascii: "-"))
        appendDigits(UInt64(month), width: 2, to: &text)
        text.append(UInt8(ascii: "-"))
        appendDigits(UInt64(day), width: 2, to: &text)
        text.append(UInt8(ascii: "T"))
        appendDigits(UInt64(secondOfDay / 3600), width: 2, to: &text)
        text.append(UInt8(ascii: ":"))
        appendDigits(UInt64(secondOfDay / 60 % 60), width: 2, to: &text)
        text.append(UInt8(ascii: ":"))
        appendDigits(UInt64(secondOfDay % 60), width: 2, to: &text)
        if !fraction.isEmpty {
            text.append(UInt8(ascii: "."))
            text.append(contentsOf: fraction.utf8)
        }
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    /// `value` in decimal, with leading zeros up to `width` digits.
    private static func appendDigits(_ value: UInt64, width: Int, to text: inout [UInt8]) {
        let start = text.count
        var value = value
        repeat {
            text.append(UInt8(ascii: "0") + UInt8(value % 10))
            value /= 10
        } while value > 0
        while text.count - start < width { text.append(UInt8(ascii: "0")) }
        text[start...].reverse()
    }

    /// Reads `YYYY-MM-DDThh:mm:ss[.fraction](Z|±hh:mm|±hhmm)`; the year may be signed and
    /// longer than four digits (`+10000`, `-0001`).
    static func parse(_ text: String) throws(Failure) -> Date {
        var scanner = Scanner(bytes: Array(text.utf8))
        var year: Int64
        if let sign = scanner.take(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) {
            let digits = scanner.digits()
            guard (4...12).contains(digits.count) else { throw Failure() }
            year = Int64(digits)! * (sign == UInt8(ascii: "-") ? -1 : 1)
        } else {
            guard let value = scanner.number(digits: 4) else { throw Failure() }
            year = value
        }
        guard scanner.take(UInt8(ascii: "-")), let month = scanner.number(digits: 2),
            scanner.take(UInt8(ascii: "-")), let day = scanner.number(digits: 2),
            scanner.take(UInt8(ascii: "T")), let hour = scanner.number(digits: 2),
            scanner.take(UInt8(ascii: ":")), let minute = scanner.number(digits: 2),
            scanner.take(UInt8(ascii: ":")), let second = scanner.number(digits: 2)
        else { throw Failure() }
        var fraction = ""
        if scanner.take(UInt8(ascii: ".")) {
            fraction = scanner.digits()
            guard !fraction.isEmpty else { throw Failure() }
        }
        var offsetSeconds: Int64 = 0
        if !scanner.take(UInt8(ascii: "Z")) {
            guard let sign = scanner.take(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }),
                let offsetHours = scanner.number(digits: 2)
            else { throw Failure() }
            _ = scanner.take(UInt8(ascii: ":"))
            guard let offsetMinutes = scanner.number(digits: 2) else { throw Failure() }
            guard offsetHours <= 23, offsetMinutes <= 59 else {
                throw Failure(reason: "the offset from UTC must be at most 23:59")
            }
            offsetSeconds = (offsetHours * 3600 + offsetMinutes * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        }
        guard scanner.isAtEnd else { throw Failure() }

        guard (1...12).contains(month) else { throw Failure(reason: "month \(padded(month, 2)) is not 01 to 12") }
        let monthLength = daysInMonth(month, of: year)
        guard (1...monthLength).contains(day) else {
            throw Failure(reason: "day \(padded(day, 2)) is not 01 to \(monthLength) in that month")
        }
        guard hour <= 23 else { throw Failure(reason: "hour \(padded(hour, 2)) is not 00 to 23") }
        guard minute <= 59 else { throw Failure(reason: "minute \(padded(minute, 2)) is not 00 to 59") }
        guard second <= 59 else { throw Failure(reason: "second \(padded(second, 2)) is not 00 to 59") }

        let days = daysFromCivil(year: year, month: month, day: day)
        let (daySeconds, overflow1) = days.multipliedReportingOverflow(by: 86_400)
        let (unixSeconds, overflow2) = daySeconds.addingReportingOverflow(
            hour * 3600 + minute * 60 + second - offsetSeconds)
        let (whole, overflow3) = unixSeconds.subtractingReportingOverflow(referenceDateUnixSeconds)
        guard !(overflow1 || overflow2 || overflow3), whole.magnitude < 9_000_000_000_000_000_000 else {
            throw Failure(reason: "the year is out of range")
        }
        return Date(timeIntervalSinceReferenceDate: seconds(whole: whole, fraction: fraction))
    }

    // MARK: Exact seconds

    /// Splits a non-integral or integral `interval` into whole seconds (rounded down) and
    /// the decimal digits of the rest, from the shortest decimal that reads back as
    /// `interval`: 1.25 → (1, "25"); -1.25 → (-2, "75"). `seconds(whole:fraction:)` undoes it.
    static func decimalParts(of interval: Double) -> (whole: Int64, fraction: String) {
        if interval.rounded(.down) == interval { return (Int64(interval), "") }
        // Not integral, so |interval| < 2^52: `description` is "123.456" or, below 1e-4,
        // "1.5e-05".
        let text = Array(interval.magnitude.description.utf8)
        var mantissaEnd = text.count
        var exponent = 0
        if let e = text.firstIndex(of: UInt8(ascii: "e")) {
            exponent = Int(String(decoding: text[(e + 1)...], as: UTF8.self))!
            mantissaEnd = e
        }
        var digits: [UInt8] = []
        var point = mantissaEnd
        for (index, byte) in text[..<mantissaEnd].enumerated() {
            if byte == UInt8(ascii: ".") { point = index } else { digits.append(byte) }
        }
        point += exponent
        var integer: Int64 = 0
        for byte in digits.prefix(max(0, point)) { integer = integer * 10 + Int64(byte - UInt8(ascii: "0")) }
        var fraction =
            point <= 0
            ? [UInt8](repeating: UInt8(ascii: "0"), count: -point) + digits : Array(digits.dropFirst(point))
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        if fraction.isEmpty { return (interval < 0 ? -integer : integer, "") }
        if interval < 0 { return (-integer - 1, String(decoding: complement(fraction), as: UTF8.self)) }
        return (integer, String(decoding: fraction, as: UTF8.self))
    }

    /// `whole + 0.fraction` with a single rounding, by letting `Double(String)` read the
    /// exact decimal.
    static func seconds(whole: Int64, fraction: String) -> Double {
        var fraction = Array(fraction.utf8)
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        if fraction.isEmpty { return Double(whole) }
        if whole >= 0 { return Double("\(whole).\(String(decoding: fraction, as: UTF8.self))")! }
        // whole + 0.f = -((-whole - 1) + (1 - 0.f))
        return Double("-\(-(whole + 1)).\(String(decoding: complement(fraction), as: UTF8.self))")!
    }

    /// The ASCII digits of 1 - 0.`digits`, where `digits` has no trailing zero:
    /// "25" → "75", "5" → "5".
    private static func complement(_ digits: [UInt8]) -> [UInt8] {
        var result = digits.map { UInt8(ascii: "9") - $0 + UInt8(ascii: "0") }
        result[result.count - 1] += 1
        return result
    }

    // MARK: Civil dates (Howard Hinnant's algorithms, days since 1970-01-01)

    private static func civilDate(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let year = month <= 2 ? year - 1 : year
        let era = floorDivide(year, 400)
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func daysInMonth(_ month: Int64, of year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }

    private static func padded<T: BinaryInteger>(_ value: T, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// A cursor over the date-time's bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        var isAtEnd: Bool { position == bytes.count }

        mutating func take(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        mutating func take(where predicate: (UInt8) -> Bool) -> UInt8? {
            guard position < bytes.count, predicate(bytes[position]) else { return nil }
            position += 1
            return bytes[position - 1]
        }

        /// All the ASCII digits from here, possibly none.
        mutating func digits() -> String {
            let start = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        /// Exactly `count` digits, or nil (and nothing consumed).
        mutating func number(digits count: Int) -> Int64? {
            guard position + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[position..<(position + count)] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            position += count
            return value
        }
    }
}
