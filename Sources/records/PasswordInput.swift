import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where passwords come from. Never the command line, where other users can
/// read them (`ps`, `/proc/PID/cmdline`) and shells keep them in history:
///
/// - with `--password-stdin`, one per line of standard input (for scripts:
///   `printf '%s\n%s\n' "$pw" "$pw" | records users register ...`); a line
///   may end in `\n` or `\r\n`, the last one may lack it; lines after the
///   ones asked for are not read;
/// - otherwise typed at the terminal, without echo, after a prompt on
///   standard error.
enum PasswordInput {
    /// The longest input read for passwords, in bytes.
    static let maximumInput = 16 * 1024

    /// Reads one password per name ("password", "password confirmation"):
    /// from standard input when `fromStandardInput`, else from the terminal,
    /// prompting with each name ("Password confirmation: ").
    ///
    /// - Throws: ``UsageError`` when standard input has too few lines or is
    ///   not UTF-8, or when there is no terminal to ask on.
    static func read(_ names: [String], fromStandardInput: Bool, path: [String]) throws -> [String] {
        if fromStandardInput {
            return try standardInputLines(names, path: path)
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw UsageError(
                message: "standard input is not a terminal to type the password on; "
                    + "give \(describe(names)) on standard input with --password-stdin",
                helpPath: path)
        }
        return try names.map { try prompt($0, path: path) }
    }

    /// "the password and the password confirmation", for messages.
    private static func describe(_ fields: [String]) -> String {
        let names = fields.map { "the " + $0 }
        return names.count <= 1
            ? names.joined() : names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
    }

    // MARK: - Standard input

    private static func standardInputLines(_ names: [String], path: [String]) throws -> [String] {
        var buffer: [UInt8] = []
        defer { wipe(&buffer) }
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { wipe(&chunk) }
        while buffer.count(where: { $0 == UInt8(ascii: "\n") }) < names.count {
            let count = chunk.withUnsafeMutableBytes { posixRead(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw UsageError(
                    message: "cannot read standard input: \(String(cString: strerror(errno)))", helpPath: path)
            }
            if count == 0 { break }
            buffer += chunk[0..<count]
            if buffer.count > maximumInput {
                throw UsageError(message: "standard input is too long for passwords", helpPath: path)
            }
        }
        // Lines end in "\n"; a last line without one counts unless empty.
        var lines: [[UInt8]] = []
        var current: [UInt8] = []
        for byte in buffer where lines.count < names.count {
            if byte == UInt8(ascii: "\n") {
                lines.append(current)
                wipe(&current)
                current.removeAll(keepingCapacity: true)
            } else {
                current.append(byte)
            }
        }
        if lines.count < names.count && !current.isEmpty { lines.append(current) }
        wipe(&current)
        guard lines.count == names.count else {
            throw UsageError(
                message: "--password-stdin needs \(names.count) line\(names.count == 1 ? "" : "s") on standard "
                    + "input (\(describe(names))); it had \(lines.count)",
                helpPath: path)
        }
        defer { for index in lines.indices { wipe(&lines[index]) } }
        var passwords: [String] = []
        for index in lines.indices {
            if lines[index].last == UInt8(ascii: "\r") { lines[index].removeLast() }
            guard let password = String(validating: lines[index], as: UTF8.self) else {
                throw UsageError(
                    message: "\(describe([names[index]])) on standard input is not valid UTF-8", helpPath: path)
            }
            passwords.append(password)
        }
        return passwords
    }

    // MARK: - Terminal

    /// Prompts on standard error and reads a line from the terminal with
    /// echo off. A signal that ends the program meanwhile (Ctrl-C) restores
    /// echo first.
    private static func prompt(_ name: String, path: [String]) throws -> String {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else {
            throw UsageError(
                message: "cannot use the terminal: \(String(cString: strerror(errno))); use --password-stdin",
                helpPath: path)
        }
        var silent = original
        // No echo, but the Enter key still moves to the next line.
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ECHONL)
        TerminalRestorer.arm(original)
        defer { TerminalRestorer.disarm() }
        // Echo goes off (and what was typed before is dropped) before the
        // prompt shows: what is typed once it shows is kept, and not echoed.
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent) == 0 else {
            throw UsageError(
                message: "cannot turn off the terminal's echo: \(String(cString: strerror(errno)))", helpPath: path)
        }
        Console.prompt(name.prefix(1).uppercased() + name.dropFirst() + ": ")
        var line: [UInt8] = []
        defer { wipe(&line) }
        var byte: UInt8 = 0
        var sawNewline = false
        while line.count <= maximumInput {
            let count = withUnsafeMutableBytes(of: &byte) { posixRead(STDIN_FILENO, $0.baseAddress, 1) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            if byte == UInt8(ascii: "\n") {
                sawNewline = true
                break
            }
            line.append(byte)
        }
        if !sawNewline {
            // Ctrl-D: the terminal did not move to a new line.
            Console.error("")
            throw CommandFailure(message: "no \(name) was typed")
        }
        guard let password = String(validating: line, as: UTF8.self) else {
            throw UsageError(message: "the \(name) typed is not valid UTF-8", helpPath: path)
        }
        return password
    }

    /// Overwrites bytes that held a password (best effort: Swift strings
    /// made from them cannot be wiped).
    private static func wipe(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }
}

/// Puts the terminal back as it was when a signal ends the program while
/// echo is off, then lets the signal do what it would have done.
private enum TerminalRestorer {
    /// Read by the signal handler, which can capture nothing.
    nonisolated(unsafe) static var saved = termios()
    static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    nonisolated(unsafe) static var previous: [Int32: SignalHandler?] = [:]

    static func arm(_ terminal: termios) {
        saved = terminal
        for signal in signals {
            previous[signal] = posixSignal(signal) { received in
                tcsetattr(STDIN_FILENO, TCSANOW, &TerminalRestorer.saved)
                posixSignal(received, SIG_DFL)
                raise(received)
            }
        }
    }

    static func disarm() {
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
        for signal in signals {
            posixSignal(signal, previous[signal] ?? SIG_DFL)
        }
        previous = [:]
    }
}

/// A signal handler as `signal(2)` takes it.
private typealias SignalHandler = @convention(c) (Int32) -> Void

// The C functions under names that members called `read` cannot shadow.
private func posixRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

@discardableResult
private func posixSignal(_ number: Int32, _ handler: SignalHandler?) -> SignalHandler? {
    signal(number, handler)
}
