#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#elseif canImport(Darwin)
    import Darwin
#endif

/// A warning about a misuse that the package survives but that is likely a bug in the caller (an input
/// forwarded to a child that does not run), as TCA's runtime warnings are: one line on standard error.
/// Debug builds only; callers wrap their use in `#if DEBUG`.
enum RuntimeWarning {
    /// Writes `message` and a line break to standard error in one `write`, so that lines from several
    /// threads do not interleave. With no lock held; a failed write is ignored.
    static func emit(_ message: String) {
        #if canImport(Glibc) || canImport(Musl) || canImport(Android) || canImport(Darwin)
            var line = message + "\n"
            line.withUTF8 { bytes in
                _ = write(2, bytes.baseAddress, bytes.count)
            }
        #else
            print(message)
        #endif
    }
}
