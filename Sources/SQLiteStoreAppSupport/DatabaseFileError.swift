import Foundation

/// A database file could not be located, created or installed.
///
/// The description names the file and says what went wrong, so it can be
/// shown to a person as is:
///
/// ```text
/// cannot install the database template: no file at /app/Resources/sample.sqlite
/// ```
public struct DatabaseFileError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// What kind of failure this is.
    public enum Kind: Sendable, Equatable {
        /// A file or application name that cannot be used as one path
        /// component (empty, `.`, `..`, or containing `/`).
        case invalidName
        /// The platform's data directory could not be found or created.
        case dataDirectoryUnavailable
        /// There is no template file where one was expected.
        case templateMissing
        /// The template is not a usable SQLite database (empty, another kind
        /// of file, truncated or corrupt).
        case templateNotADatabase
        /// The destination cannot receive the database: it is a directory,
        /// a device, a FIFO or a socket (left as it is), an empty file that
        /// may not be written, a symbolic link to one of those; its directory
        /// is missing or cannot be written; or its name or path is too long.
        case destinationUnusable
        /// Reading or writing failed while copying.
        case ioFailure
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// The path the failure is about.
    public let path: String
    /// A sentence that explains the failure, naming the path.
    public let message: String

    /// Creates an error.
    public init(_ kind: Kind, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    public var description: String { message }

    public var errorDescription: String? { message }
}
