import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Refuses to write over an existing regular file unless the user said so
/// (`--force`), as `backup` does: a typo in a file name must not destroy a
/// file. A character device (`/dev/stdout`, a terminal) or a FIFO is not
/// replaced but written to, so it needs no `--force`; a symbolic link is
/// judged by what it points to; anything else (a directory, a socket) is
/// left to the writer, which refuses it with its own message.
///
/// - Throws: ``CommandFailure`` (exit status 1) when `path` is an existing
///   regular file and `force` is false.
func refuseToReplace(_ path: String, force: Bool) throws {
    guard !force else { return }
    var status = stat()
    guard stat(path, &status) == 0 else { return }
    guard status.st_mode & S_IFMT == S_IFREG else { return }
    throw CommandFailure(
        message: "\(Terminal.clean(path)) already exists; use --force to replace it")
}
