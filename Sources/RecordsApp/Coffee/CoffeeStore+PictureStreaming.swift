import Foundation
import SQLiteStore

extension CoffeeStore {
    /// Starts an upload of a picture that arrives in chunks (a web
    /// request's body), checked against this store's rules as it arrives;
    /// store it with ``setPicture(id:from:)`` and
    /// ``PictureSource/upload(_:)`` once it is complete.
    ///
    /// - Parameters:
    ///   - name: How messages name it, such as the file name the browser
    ///     sent.
    ///   - directory: Where the (unlinked) temporary file is made.
    public func makePictureUpload(
        name: String = "the uploaded picture", directory: URL = FileManager.default.temporaryDirectory
    ) -> PictureUpload {
        PictureUpload(name: name, limit: pictureSizeLimit, directory: directory)
    }

    /// Opens a coffee's picture to be read in chunks
    /// (``PictureReader/read(at:count:)``), and says what it is: size,
    /// type, version. Reads only the row's header and the version: never
    /// the picture's bytes, so answering a `HEAD` or a conditional request
    /// costs the same whatever the picture's size.
    ///
    /// - Throws: ``RecordNotFoundError``; ``PictureError`` when the coffee has
    ///   no picture (``PictureError/Reason/noPicture(coffeeID:)``) or holds
    ///   something other than bytes in its place
    ///   (``PictureError/Reason/unreadable(_:)``); a database error.
    public func openPicture(id: Int64) async throws -> PictureReader {
        let database = self.database
        return try await database.read(for: .coffee) { db in
            // typeof() and length() are read from the row's header.
            typealias Column = Coffee.Columns
            let coffee: SQL = "\(identifier: Coffee.tableName)"
            guard
                let row = try db.fetchOne(
                    """
                    SELECT typeof(\(Column.picture)), length(\(Column.picture)), \(Column.pictureType),
                        (SELECT version FROM coffee_picture_version v WHERE v.coffeeID = \(coffee).\(Column.id))
                    FROM \(coffee) WHERE \(Column.id) = \(id)
                    """)
            else { throw RecordNotFoundError(kind: "coffee", id: id) }
            let storage: String = try row[0]
            switch storage {
            case "blob": break
            case "null": throw PictureError(.noPicture(coffeeID: id), subject: nil)
            default:
                throw PictureError(
                    .unreadable("coffee \(id) holds \(storage) where its picture's bytes should be"), subject: nil)
            }
            // A type that is not text is an unknown format.
            let type = try? row[2] as String?
            return PictureReader(
                coffeeID: id, size: try row[1], format: type.flatMap(PictureFormat.init(mimeType:)),
                version: try row[3], database: database)
        }
    }
}

/// A coffee's picture, opened by ``CoffeeStore/openPicture(id:)`` to be
/// read in chunks: what a web server needs to answer a request for it
/// without holding it in memory.
///
/// ```swift
/// let picture = try await store.openPicture(id: 7)
/// // Content-Type: picture.mimeType, Content-Length: picture.size, ETag: picture.entityTag
/// var offset = 0
/// while offset < picture.size {
///     let chunk = try await picture.read(at: offset, count: PictureReader.chunkSize)
///     send(chunk)
///     offset += chunk.count
/// }
/// ```
///
/// Every chunk is of the picture that was opened, never of another: each
/// read checks, in the same read transaction as the bytes, that the
/// picture's version is still the one opened, and throws
/// ``PictureError/Reason/changed(coffeeID:)`` if the picture was replaced
/// or removed (or the coffee deleted) meanwhile. A reader holds no
/// connection between reads, so a slow client never keeps a reader
/// connection, or the writer, waiting.
public struct PictureReader: Sendable {
    /// A good number of bytes to read at a time: 256 KiB.
    public static let chunkSize = BlobHandle.defaultChunkSize

    /// The coffee whose picture it is (for a user's picture, opened by
    /// ``UsersStore/openPicture(userID:)``, the user).
    public let coffeeID: Int64
    /// The picture's size in bytes.
    public let size: Int
    /// Its format; nil when the stored type is not one the app knows.
    public let format: PictureFormat?
    /// The picture's version (see the `coffee.pictureVersions` migration):
    /// a number never given to another picture, in this database; nil only
    /// when another program deleted it.
    public let version: Int64?
    let database: AppDatabase
    /// Where the bytes are: a coffee's row, or a user's picture row.
    var owner: Owner = .coffee

    /// Whose picture a reader reads.
    enum Owner: Sendable {
        /// The `picture` column of the coffee's row; the version in
        /// `coffee_picture_version`.
        case coffee
        /// The row of `user_picture` whose ID is the version (see
        /// ``UserPictureSchema``).
        case user
    }

    /// The `Content-Type` to serve it with: its format's MIME type, or
    /// `application/octet-stream` for a type the app does not know.
    public var mimeType: String { format?.mimeType ?? "application/octet-stream" }

    /// A strong HTTP entity tag, quotes included (`"picture-42"`): a new
    /// one whenever the picture or its type changes, however it is changed;
    /// nil when it has no version.
    public var entityTag: String? { version.map { "\"picture-\($0)\"" } }

    /// Reads up to `count` bytes starting at `offset`, from one read
    /// transaction that also checks the picture is still the one opened.
    /// Fewer bytes come back only at the end of the picture; none from
    /// `size` on, or for a negative `offset` or `count`.
    ///
    /// - Throws: ``PictureError`` with ``PictureError/Reason/changed(coffeeID:)``
    ///   when the picture changed since it was opened; a database error.
    public func read(at offset: Int, count: Int) async throws -> Data {
        guard offset >= 0, count > 0, offset < size else { return Data() }
        let length = min(count, size - offset)
        let (id, size, version) = (coffeeID, self.size, self.version)
        let owner = self.owner
        return try await database.read(for: owner == .coffee ? .coffee : .users) { db in
            let changed: PictureError
            let current: Int64?
            let location: (table: String, column: String, rowID: Int64)
            switch owner {
            case .coffee:
                changed = PictureError(.changed(coffeeID: id), subject: nil)
                current = try db.fetchOne(
                    Int64.self, "SELECT version FROM coffee_picture_version WHERE coffeeID = ?", arguments: [id])
                location = (Coffee.tableName, Coffee.Columns.picture.rawValue, id)
            case .user:
                changed = PictureError(.changed(coffeeID: id), subject: "the picture of user \(id)")
                current = try UserPictureSchema.pictureID(db, userID: id)
                location = (UserPictureSchema.tableName, UserPictureSchema.pictureColumn, version ?? 0)
            }
            guard current == version else { throw changed }
            do {
                return try db.withBlob(table: location.table, column: location.column, rowID: location.rowID) {
                    blob in
                    guard blob.size == size else { throw changed }
                    return try blob.read(count: length, at: offset)
                }
            } catch let error as BlobError {
                switch error.reason {
                case .rowNotFound, .nullValue, .notABlob: throw changed
                default: throw error
                }
            }
        }
    }
}
