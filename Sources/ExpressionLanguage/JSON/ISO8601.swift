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

        var text = ""
        if (0...9999).contains(year) {
            text += padded(year, 4)
        } else {
            text += (year < 0 ? "-" : "+") + padded(year.magnitude, 4)
        }
        text += "-" + padded(month, 2) + "-" + padded(day, 2)
        text += "T" + padded(secondOfDay / 3600, 2) + ":" + padded(secondOfDay / 60 % 60, 2) + ":"
            + padded(secondOfDay % 60, 2)
        if !fraction.isEmpty { text += "." + fraction }
        return text + "Z"
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
        var mantissa = Substring(interval.magnitude.description)
        var exponent = 0
        if let e = mantissa.firstIndex(of: "e") {
            exponent = Int(mantissa[mantissa.index(after: e)...])!
            mantissa = mantissa[..<e]
        }
        let pointIndex = mantissa.firstIndex(of: ".") ?? mantissa.endIndex
        let digits = Array(mantissa.filter { $0 != "." })
        let point = mantissa.distance(from: mantissa.startIndex, to: pointIndex) + exponent
        var integerDigits = "0"
        var fractionDigits: String
        if point <= 0 {
            fractionDigits = String(repeating: "0", count: -point) + String(digits)
        } else {
            integerDigits = String(digits[..<min(point, digits.count)])
            fractionDigits = point < digits.count ? String(digits[point...]) : ""
        }
        while fractionDigits.hasSuffix("0") { fractionDigits.removeLast() }
        let integer = Int64(integerDigits)!
        if fractionDigits.isEmpty { return (interval < 0 ? -integer : integer, "") }
        return interval < 0 ? (-integer - 1, complement(fractionDigits)) : (integer, fractionDigits)
    }

    /// `whole + 0.fraction` with a single rounding, by letting `Double(String)` read the
    /// exact decimal.
    static func seconds(whole: Int64, fraction: String) -> Double {
        var fraction = Substring(fraction)
        while fraction.hasSuffix("0") { fraction.removeLast() }
        if fraction.isEmpty { return Double(whole) }
        if whole >= 0 { return Double("\(whole).\(fraction)")! }
        // whole + 0.f = -((-whole - 1) + (1 - 0.f))
        return Double("-\(-(whole + 1)).\(complement(String(fraction)))")!
    }

    /// The digits of 1 - 0.`digits` (which has no trailing zero): "25" → "75", "5" → "5".
    private static func complement(_ digits: String) -> String {
        let values = digits.utf8.map { Int($0 - UInt8(ascii: "0")) }
        var result = values.dropLast().map { Character(String(9 - $0)) }
        result.append(Character(String(10 - values.last!)))
        return String(result)
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
