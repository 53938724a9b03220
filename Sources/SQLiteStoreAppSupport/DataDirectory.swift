import Foundation
import SQLiteStore

/// Where an application keeps its data files on each platform.
///
/// | Platform | Directory |
/// | --- | --- |
/// | Linux and other Unix | `$XDG_DATA_HOME/<name>`, by default `~/.local/share/<name>` |
/// | Apple platforms | `Application Support/<name>` in the user's (or the sandbox's) Library |
///
/// ```swift
/// let directory = try DataDirectory.create(forApplication: "records")
/// let path = directory.appendingPathComponent("records.sqlite").path
/// ```
///
/// Following the XDG Base Directory specification, a relative
/// `XDG_DATA_HOME` is ignored.
public enum DataDirectory {
    /// The data directory of an application, without creating it.
    ///
    /// - Parameters:
    ///   - name: The application's name, used as the last path component.
    ///   - environment: The environment to read `XDG_DATA_HOME` and `HOME`
    ///     from; the process's by default.
    /// - Throws: ``DatabaseFileError`` (``DatabaseFileError/Kind/invalidName``)
    ///   when `name` is not a single path component, or
    ///   ``DatabaseFileError/Kind/dataDirectoryUnavailable`` when no base
    ///   directory can be found.
    public static func url(
        forApplication name: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> URL {
        try validateComponent(name, what: "application name")
        return try baseDirectory(environment: environment).appendingPathComponent(name, isDirectory: true)
    }

    /// The data directory of an application, created with its parents if it
    /// does not exist yet.
    ///
    /// - Throws: the errors of ``url(forApplication:environment:)``, and
    ///   ``DatabaseFileError/Kind/dataDirectoryUnavailable`` when the
    ///   directory cannot be created (or a file is in its way).
    @discardableResult
    public static func create(
        forApplication name: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> URL {
        let directory = try url(forApplication: name, environment: environment)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw DatabaseFileError(
                .dataDirectoryUnavailable, path: directory.path,
                message: "cannot create the data directory \(directory.path): \(Self.reason(of: error))")
        }
        return directory
    }

    private static func baseDirectory(environment: [String: String]) throws -> URL {
        #if canImport(Darwin)
            do {
                return try FileManager.default.url(
                    for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: false)
            } catch {
                throw DatabaseFileError(
                    .dataDirectoryUnavailable, path: "",
                    message: "cannot find the Application Support directory: \(reason(of: error))")
            }
        #else
            if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
                return URL(fileURLWithPath: xdg, isDirectory: true)
            }
            let home: String
            if let fromEnvironment = environment["HOME"], fromEnvironment.hasPrefix("/") {
                home = fromEnvironment
            } else {
                home = FileManager.default.homeDirectoryForCurrentUser.path
            }
            guard home.hasPrefix("/") else {
                throw DatabaseFileError(
                    .dataDirectoryUnavailable, path: home,
                    message: "cannot find the home directory: set HOME or XDG_DATA_HOME to an absolute path")
            }
            return URL(fileURLWithPath: home, isDirectory: true)
                .appendingPathComponent(".local", isDirectory: true)
                .appendingPathComponent("share", isDirectory: true)
        #endif
    }

    /// Throws unless `name` can be used as exactly one path component.
    static func validateComponent(_ name: String, what: String) throws {
        if name.isEmpty || name == "." || name == ".." || name.contains("/") || name.contains("\0") {
            throw DatabaseFileError(
                .invalidName, path: name,
                message: "invalid \(what) \"\(name)\": it must be a single, non-empty path component")
        }
    }

    /// The most useful sentence for a Foundation file error.
    static func reason(of error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        return nsError.localizedDescription
    }
}
