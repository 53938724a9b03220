import Foundation

/// Why a path cannot be used as a destination, as the end of a sentence
/// that names the path: "it is a directory", "the directory /x does not
/// exist".
package struct PathProblem: Error {
    package let reason: String
}

/// What a destination path names, once symbolic links are followed.
///
/// Both file destinations of the library (a template install, a blob copied
/// to a file) follow symbolic links: a link is never replaced, what it
/// points to is written, and a link whose target does not exist yet creates
/// that target (as `cp` and the shell's `>` do).
package struct ResolvedDestination {
    /// The path as given.
    let path: String
    /// The file to create or replace: `path` with its symbolic links
    /// resolved, so that a replacement goes into the directory of the real
    /// file. Devices and FIFOs are opened through `path` itself.
    package let target: String
    /// What is at the target; nil when nothing is, and a new file will be
    /// created.
    package let status: FileStatus?
    /// Whether `path` itself is a symbolic link.
    let isSymbolicLink: Bool

    /// The target's directory and name.
    package var targetDirectory: String { DestinationPath.directory(of: target) }

    /// "it is a FIFO (named pipe)", or "it is a symbolic link to a FIFO
    /// (named pipe)": for messages about what is at the path.
    package func describe(_ type: FileStatus.FileType) -> String {
        isSymbolicLink ? "it is a symbolic link to \(type.description)" : "it is \(type.description)"
    }
}

/// Turns paths and URLs into destinations, explaining the ones that cannot
/// hold a file.
///
/// `package`: the app-support module's `DatabaseTemplate` installs through it.
package enum DestinationPath {
    /// Links followed before the chain counts as a loop, as Linux does.
    static let maximumLinkDepth = 40

    /// Finds out what `path` names, following symbolic links, and explains
    /// a path that can hold no file.
    package static func resolve(_ path: String) throws(PathProblem) -> ResolvedDestination {
        if path.isEmpty { throw PathProblem(reason: "the path is empty") }
        if path.utf8.contains(0) { throw PathProblem(reason: "the path contains a NUL character") }
        if path.unicodeScalars.last == "/" {
            if (try? FileStatus.following(path))?.isDirectory == true {
                throw PathProblem(reason: "it is a directory")
            }
            throw PathProblem(reason: "the path names a directory, not a file")
        }
        let own: FileStatus
        do {
            own = try FileStatus.notFollowing(path)
        } catch {
            guard error.code == ENOENT else { throw explain(error, at: path) }
            try requireDirectory(of: path, whatFor: path)
            return ResolvedDestination(path: path, target: path, status: nil, isSymbolicLink: false)
        }
        guard own.type == .symbolicLink else {
            return ResolvedDestination(path: path, target: path, status: own, isSymbolicLink: false)
        }
        do {
            let status = try FileStatus.following(path)
            // A replacement is made in the directory of the real file; a
            // device or FIFO is opened through the link (which also covers
            // Linux's /proc/self/fd links to pipes, which name no path).
            let target = status.isRegularFile ? (realPath(path) ?? path) : path
            return ResolvedDestination(path: path, target: target, status: status, isSymbolicLink: true)
        } catch {
            if error.code == ELOOP {
                throw PathProblem(
                    reason: "it is a symbolic link that leads back to itself (or through more than "
                        + "\(maximumLinkDepth) links)")
            }
            guard error.code == ENOENT else { throw explain(error, at: path) }
        }
        // A dangling link: the file it points to is created.
        let target = try danglingTarget(of: path)
        if target.unicodeScalars.last == "/" {
            throw PathProblem(reason: "it is a symbolic link to \(target), which names a directory, not a file")
        }
        do {
            try requireDirectory(of: target, whatFor: target)
        } catch {
            throw PathProblem(reason: "it is a symbolic link to \(target), which cannot be created: \(error.reason)")
        }
        return ResolvedDestination(path: path, target: target, status: nil, isSymbolicLink: true)
    }

    /// The path of a file URL, keeping the trailing slash of a URL that
    /// names a directory (`URL.path` drops it, and `dir/` would become the
    /// file `dir`).
    package static func path(of url: URL) -> String {
        url.hasDirectoryPath && url.path != "/" ? url.path + "/" : url.path
    }

    // Paths are taken apart by Unicode scalar, never by Character: a "/"
    // followed by a combining mark (a name may begin with one) is one
    // Character that is not "/", and the system sees the slash.

    /// The directory part of `path`: "." for a bare name, "/" for a file in
    /// the root.
    static func directory(of path: String) -> String {
        let scalars = path.unicodeScalars
        guard let slash = scalars.lastIndex(of: "/") else { return "." }
        if slash == scalars.startIndex { return "/" }
        return String(Substring(scalars[..<slash]))
    }

    /// The last component of `path`.
    package static func name(of path: String) -> String {
        let scalars = path.unicodeScalars
        guard let slash = scalars.lastIndex(of: "/") else { return path }
        return String(Substring(scalars[scalars.index(after: slash)...]))
    }

    /// Whether `path` starts at the root.
    private static func isAbsolute(_ path: String) -> Bool { path.unicodeScalars.first == "/" }

    /// The names `path` is made of, in order.
    private static func components(of path: String) -> [Substring] {
        path.unicodeScalars.split(separator: "/").map(Substring.init)
    }

    /// Throws unless the directory that would hold `path` exists.
    private static func requireDirectory(of path: String, whatFor subject: String) throws(PathProblem) {
        let directory = directory(of: path)
        let status: FileStatus
        do {
            status = try FileStatus.following(directory)
        } catch {
            if error.code == ENOENT { throw PathProblem(reason: "the directory \(directory) does not exist") }
            throw explain(error, at: subject)
        }
        if !status.isDirectory { throw PathProblem(reason: "\(directory) is not a directory") }
    }

    /// Where a chain of symbolic links ends, at a path where nothing is.
    private static func danglingTarget(of path: String) throws(PathProblem) -> String {
        var current = path
        for _ in 0..<maximumLinkDepth {
            guard let status = try? FileStatus.notFollowing(current), status.type == .symbolicLink else {
                return current
            }
            guard let destination = readLink(current) else {
                throw PathProblem(reason: "its symbolic link \(current) cannot be read")
            }
            current = isAbsolute(destination) ? destination : directory(of: current) + "/" + destination
        }
        throw PathProblem(
            reason: "it is a symbolic link that leads back to itself (or through more than \(maximumLinkDepth) links)")
    }

    /// Turns a failed system call on `path` into the sentence that names
    /// the real problem.
    static func explain(_ error: SystemCallError, at path: String) -> PathProblem {
        switch error.code {
        case ENAMETOOLONG:
            return tooLong(path) ?? PathProblem(reason: error.message)
        case ENOTDIR:
            if let file = firstNonDirectory(in: path) { return PathProblem(reason: "\(file) is not a directory") }
            return PathProblem(reason: error.message)
        case ENOENT:
            return PathProblem(reason: "the directory \(directory(of: path)) does not exist")
        default:
            return PathProblem(reason: error.message)
        }
    }

    /// Which limit a path breaks: one name over `NAME_MAX` bytes, or the
    /// whole over `PATH_MAX`.
    static func tooLong(_ path: String) -> PathProblem? {
        let nameLimit = Int(NAME_MAX)
        if let name = components(of: path).first(where: { $0.utf8.count > nameLimit }) {
            let shown = name.count > 24 ? name.prefix(24) + "…" : name
            return PathProblem(
                reason: "the name \"\(shown)\" is \(name.utf8.count) bytes long, over the limit of \(nameLimit) "
                    + "bytes for one name")
        }
        let pathLimit = Int(PATH_MAX) - 1
        if path.utf8.count > pathLimit {
            return PathProblem(
                reason: "the path is \(path.utf8.count) bytes long, over the limit of \(pathLimit) bytes")
        }
        return nil
    }

    /// The first component of `path`'s directory that exists but is not a
    /// directory.
    private static func firstNonDirectory(in path: String) -> String? {
        var prefix = isAbsolute(path) ? "" : "."
        for component in components(of: directory(of: path)) {
            prefix += "/" + component
            guard let status = FileStatus.of(path: prefix) else { return nil }
            if !status.isDirectory {
                return isAbsolute(path) ? prefix : String(prefix.dropFirst(2))
            }
        }
        return nil
    }

    /// The content of the symbolic link at `path`.
    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer { readlink(path, $0.baseAddress!, Int(PATH_MAX)) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` with every symbolic link resolved, for an existing file.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
