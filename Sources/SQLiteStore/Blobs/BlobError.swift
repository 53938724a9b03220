import Foundation

/// A BLOB could not be opened, read or written incrementally, or a file or
/// stream it was copied from or to failed.
///
/// Errors that SQLite reports on its own terms (a missing table, a read-only
/// database, a full disk) are thrown as ``SQLiteError``; misuse of the API
/// (a closed handle, a write on a read-only handle, a chunk size of zero) is
/// a ``SQLiteError`` with ``ResultCode/misuse``. Everything specific to
/// streaming a value is a `BlobError`, so that an app can tell its user what
/// went wrong:
///
/// ```swift
/// do {
///     try db.writeBlob(from: .file(url), table: "coffee", column: "picture", rowID: id,
///                      maximumSize: 64 << 20)
/// } catch let error as BlobError {
///     switch error.reason {
///     case .tooLarge: print("Pictures are limited to 64 MB.")
///     case .unreadableSource(let why): print("Cannot read \(url.path): \(why)")
///     case .rowNotFound: print("No such coffee.")
///     default: print(error)
///     }
/// }
/// ```
///
/// The description names the value and the file, never the bytes:
///
/// ```text
/// blob "coffee"."picture" of row 7: the value is 70000000 bytes, over the limit of 67108864 bytes; nothing was written
/// ```
public struct BlobError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// Why the operation failed.
    public enum Reason: Sendable, Equatable {
        /// The table has no row with that rowid (it may have been deleted).
        case rowNotFound
        /// The value is NULL: there is no blob to open or read.
        case nullValue
        /// The value is not a blob (an INTEGER, a REAL, or TEXT where bytes
        /// were asked for).
        case notABlob(found: SQLiteValue.StorageClass)
        /// SQLite aborted the handle (`SQLITE_ABORT`): the row was updated or
        /// deleted after the handle was opened, or a
        /// ``BlobHandle/reopen(rowID:)`` failed. Only closing it works now;
        /// open a new one to see the current value.
        case expired
        /// A read or write outside the blob: a blob's size is fixed when it
        /// is created and cannot grow through a handle.
        case outOfBounds(offset: Int, count: Int, size: Int)
        /// The value is larger than the caller's limit, or than SQLite's
        /// maximum length. `size` is nil for a source of unknown length
        /// that went past the limit. Nothing was written.
        case tooLarge(size: Int?, limit: Int)
        /// The source ended before delivering the bytes it announced (a
        /// short read, or a file that shrank while it was copied).
        case shortRead(expected: Int, received: Int)
        /// The source holds more bytes than it announced (a file that grew
        /// while it was copied, or a stream given a wrong size).
        case sourceTooLong(expected: Int)
        /// The source file or stream cannot be opened or read; the text is
        /// the system's reason, such as `No such file or directory`.
        case unreadableSource(String)
        /// The destination file or stream cannot be created or written; the
        /// text is the system's reason, such as `Permission denied`.
        case unwritableDestination(String)
        /// The destination stopped accepting bytes (a full fixed-size
        /// stream) before the whole value was written.
        case shortWrite(expected: Int, written: Int)
        /// A source of unknown length could not be buffered in a temporary
        /// file, which is how its size is learnt before anything is written.
        case temporaryFileFailed(String)
    }

    /// Why the operation failed.
    public let reason: Reason
    /// The schema of the table, such as `main`.
    public let schema: String
    /// The table of the blob.
    public let table: String
    /// The column of the blob.
    public let column: String
    /// The rowid of the row.
    public let rowID: Int64
    /// The file read or written, when there was one.
    public let path: String?

    /// Creates an error.
    public init(
        _ reason: Reason, schema: String = "main", table: String, column: String, rowID: Int64, path: String? = nil
    ) {
        self.reason = reason
        self.schema = schema
        self.table = table
        self.column = column
        self.rowID = rowID
        self.path = path
    }

    init(_ reason: Reason, at location: BlobLocation, path: String? = nil) {
        self.init(
            reason, schema: location.schema, table: location.table, column: location.column, rowID: location.rowID,
            path: path)
    }

    public var description: String {
        var name = quotedIdentifier(table) + "." + quotedIdentifier(column)
        if schema != "main" { name = quotedIdentifier(schema) + "." + name }
        let subject = path.map { " file \($0)" } ?? ""
        let detail: String
        switch reason {
        case .rowNotFound:
            detail = "the row does not exist"
        case .nullValue:
            detail = "the value is NULL, not a blob"
        case .notABlob(let found):
            detail = "the value is \(found), not a blob"
        case .expired:
            detail =
                "the handle was aborted: the row was changed or deleted while the blob was open (or a reopen failed)"
        case .outOfBounds(let offset, let count, let size):
            detail =
                "cannot access \(count) byte\(count == 1 ? "" : "s") at offset \(offset): the blob holds \(size) "
                + "byte\(size == 1 ? "" : "s") and its size cannot change"
        case .tooLarge(let size, let limit):
            if let size {
                detail = "the value is \(size) bytes, over the limit of \(limit) bytes; nothing was written"
            } else {
                detail = "the source holds more than the limit of \(limit) bytes; nothing was written"
            }
        case .shortRead(let expected, let received):
            detail = "the source\(subject) ended after \(received) of the \(expected) bytes expected"
        case .sourceTooLong(let expected):
            detail = "the source\(subject) holds more than the \(expected) bytes expected"
        case .unreadableSource(let why):
            detail = "cannot read the source\(subject): \(why)"
        case .unwritableDestination(let why):
            detail = "cannot write the destination\(subject): \(why)"
        case .shortWrite(let expected, let written):
            detail = "the destination\(subject) accepted \(written) of the \(expected) bytes"
        case .temporaryFileFailed(let why):
            detail = "cannot buffer the source of unknown length in a temporary file: \(why)"
        }
        return "blob \(name) of row \(rowID): \(detail)"
    }

    public var errorDescription: String? { description }
}

/// Where a blob lives: schema, table, column and rowid.
struct BlobLocation {
    var schema: String
    var table: String
    var column: String
    var rowID: Int64

    /// The table, qualified with its schema, quoted for SQL.
    var qualifiedTable: String { quotedIdentifier(schema) + "." + quotedIdentifier(table) }

    /// The column, qualified with its schema and table, quoted for SQL.
    /// Qualified, a misspelt column is an error: SQLite reads a lone
    /// double-quoted name that matches no column as a string literal.
    var qualifiedColumn: String { qualifiedTable + "." + quotedIdentifier(column) }
}
