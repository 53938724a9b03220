import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The command line as the process received it, checked for UTF-8.
///
/// `CommandLine.arguments` has already replaced each byte that is not
/// UTF-8 with U+FFFD, so `--first $'\xff'` would store "�" and report
/// success. The raw `argv` still has the bytes: any argument that is not
/// UTF-8 is refused, as passwords that are not are (``PasswordInput``).
enum RawArguments {
    /// Checks the process's own arguments.
    ///
    /// - Throws: ``UsageError`` naming the first argument that is not UTF-8,
    ///   by position and the option it belongs to (never its bytes).
    static func check() throws {
        try check((0..<Int(CommandLine.argc)).map { CommandLine.unsafeArgv[$0].map { cStringBytes($0) } ?? [] })
    }

    /// Checks raw arguments, `words[0]` being the program's name.
    static func check(_ words: [[UInt8]]) throws {
        for index in words.indices.dropFirst() where text(words[index]) == nil {
            throw UsageError(
                message: "\(describe(index, of: words)) is not valid UTF-8 text; records takes only UTF-8 arguments",
                helpPath: [])
        }
    }

    /// "argument 4 (the value of '--first')", or "argument 4 (after
    /// '--first')" when the value is a word of its own: the parser, not
    /// this check, knows which options take one.
    private static func describe(_ index: Int, of words: [[UInt8]]) -> String {
        let word = words[index]
        if let equals = word.firstIndex(of: UInt8(ascii: "=")), let name = text(word[..<equals]), name.hasPrefix("--") {
            return "argument \(index) (the value of '\(Terminal.clean(name))')"
        }
        if index > 1, let previous = text(words[index - 1]), previous.hasPrefix("--"), previous.count > 2,
            !previous.contains("=")
        {
            return "argument \(index) (after '\(Terminal.clean(previous))')"
        }
        return "argument \(index)"
    }
}

/// A C string's bytes, without its NUL.
private func cStringBytes(_ cString: UnsafePointer<CChar>) -> [UInt8] {
    UnsafeRawBufferPointer(start: cString, count: strlen(cString)).map { $0 }
}

/// The text of UTF-8 bytes, or nil when they are not UTF-8.
private func text(_ bytes: some Collection<UInt8>) -> String? {
    String(validating: bytes, as: UTF8.self)
}

/// Environment variables as the process received them.
enum RawEnvironment {
    /// Whether `name` is set to bytes that are not UTF-8 (which
    /// `ProcessInfo` would have decoded with U+FFFD in their place).
    static func isNotUTF8(_ name: String) -> Bool {
        guard let value = getenv(name) else { return false }
        return text(cStringBytes(value)) == nil
    }
}
