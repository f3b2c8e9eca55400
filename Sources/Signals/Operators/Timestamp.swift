#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#elseif canImport(WinSDK)
    import WinSDK
#endif

/// Wall-clock timestamps for logs, in UTC, formatted without Foundation.
package enum UTCTimestamp {
    /// The current wall-clock time as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    package static func now() -> String {
        #if canImport(WinSDK)
            var fileTime = FILETIME()
            GetSystemTimePreciseAsFileTime(&fileTime)
            // 100 ns ticks since 1601-01-01.
            let ticks = Int64(UInt64(fileTime.dwHighDateTime) << 32 | UInt64(fileTime.dwLowDateTime))
            let unixTicks = ticks - 116_444_736_000_000_000
            let seconds = floorDivide(unixTicks, 10_000_000)
            return format(secondsSinceEpoch: seconds, nanoseconds: (unixTicks - seconds * 10_000_000) * 100)
        #else
            var time = timespec()
            clock_gettime(CLOCK_REALTIME, &time)
            return format(secondsSinceEpoch: Int64(time.tv_sec), nanoseconds: Int64(time.tv_nsec))
        #endif
    }

    /// Formats an instant, given as seconds since 1970-01-01T00:00:00Z plus `nanoseconds` (0 up to
    /// 999,999,999), as `YYYY-MM-DDTHH:MM:SS.mmmZ` in the proleptic Gregorian calendar. Milliseconds
    /// are truncated, not rounded.
    package static func format(secondsSinceEpoch seconds: Int64, nanoseconds: Int64) -> String {
        let days = floorDivide(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDaysSinceEpoch: days)
        var text = ""
        text.reserveCapacity(24)
        if year < 0 { text += "-" }
        text += padded(year.magnitude, width: 4)
        text += "-" + padded(UInt64(month), width: 2)
        text += "-" + padded(UInt64(day), width: 2)
        text += "T" + padded(UInt64(secondOfDay / 3_600), width: 2)
        text += ":" + padded(UInt64(secondOfDay % 3_600 / 60), width: 2)
        text += ":" + padded(UInt64(secondOfDay % 60), width: 2)
        text += "." + padded(UInt64(nanoseconds / 1_000_000), width: 3)
        text += "Z"
        return text
    }

    /// Howard Hinnant's `civil_from_days`: the Gregorian date `days` after 1970-01-01.
    static func civil(fromDaysSinceEpoch days: Int64) -> (year: Int64, month: Int, day: Int) {
        let shifted = days + 719_468  // days since 0000-03-01
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097  // [0, 146096]
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365  // [0, 399]
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // [0, 365], from March 1
        let monthFromMarch = (5 * dayOfYear + 2) / 153  // [0, 11]
        let day = Int(dayOfYear - (153 * monthFromMarch + 2) / 5 + 1)  // [1, 31]
        let month = Int(monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9)  // [1, 12]
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func floorDivide(_ dividend: Int64, _ divisor: Int64) -> Int64 {
        let quotient = dividend / divisor
        return (dividend % divisor < 0) ? quotient - 1 : quotient
    }

    private static func padded(_ number: UInt64, width: Int) -> String {
        let digits = String(number)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
