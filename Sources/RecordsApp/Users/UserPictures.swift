import Foundation
import SQLiteStore

/// The table of users' profile pictures: one row per user who has one,
/// beside `User_Master` rather than in it, so that storing a picture does
/// not change the profile's version (an open profile form stays valid),
/// and the original tutorial's table keeps its columns.
///
/// ```sql
/// CREATE TABLE user_picture (
///     pictureID INTEGER PRIMARY KEY AUTOINCREMENT, -- a new one per picture stored: its ETag
///     userID INTEGER NOT NULL UNIQUE,
///     pictureType TEXT NOT NULL,                    -- 'image/png', ...
///     picture BLOB)                                 -- last, written in chunks
/// ```
///
/// Replacing a picture deletes its row and inserts another, so the
/// `pictureID` (which `AUTOINCREMENT` never hands out twice) is the
/// picture's version, as `coffee_picture_version` is a coffee's. A trigger
/// deletes a user's picture with the user, whichever program deletes it.
enum UserPictureSchema {
    /// The table's name.
    static let tableName = "user_picture"
    /// The column of the bytes.
    static let pictureColumn = "picture"

    /// The migration that makes the table; appended to the Users app's.
    static let migration = Migrator.migration("users.pictures") { db in
        try db.execute(
            sql: """
                CREATE TABLE user_picture (
                    pictureID INTEGER PRIMARY KEY AUTOINCREMENT,
                    userID INTEGER NOT NULL UNIQUE,
                    pictureType TEXT NOT NULL,
                    picture BLOB)
                """)
        try db.execute(
            sql: """
                CREATE TRIGGER user_picture_user_delete AFTER DELETE ON User_Master BEGIN
                    DELETE FROM user_picture WHERE userID = OLD.UID;
                END
                """)
    }

    /// The ID (the version) of the user's picture, or nil when there is none.
    static func pictureID(_ db: Database, userID: Int64) throws -> Int64? {
        try db.fetchOne(Int64.self, "SELECT pictureID FROM user_picture WHERE userID = \(userID)")
    }
}

extension UsersStore {
    /// Starts an upload of a profile picture that arrives in chunks (a web
    /// request's body), checked as it arrives by the same rules as a
    /// coffee's picture (PNG, JPEG, GIF or WebP, at most
    /// ``pictureSizeLimit``); store it with ``setPicture(userID:from:)``.
    public func makePictureUpload(
        name: String = "the uploaded picture", directory: URL = FileManager.default.temporaryDirectory
    ) -> PictureUpload {
        PictureUpload(name: name, limit: pictureSizeLimit, directory: directory)
    }

    /// Stores (or replaces) a user's profile picture, streamed into its
    /// row in chunks on the writer's thread; if anything fails, the user
    /// keeps the picture they had.
    ///
    /// - Throws: ``RecordNotFoundError`` for an unknown user;
    ///   ``PictureError`` (not a picture, over the limit, unreadable); a
    ///   database error.
    @discardableResult
    public func setPicture(userID: Int64, from source: PictureSource) async throws -> CoffeePicture {
        let input = try PictureInput.open(source, limit: pictureSizeLimit)
        defer { input.close() }
        let limit = pictureSizeLimit
        do {
            return try await database.write(for: .users) { db in
                guard try User.exists(db, id: userID) else { throw RecordNotFoundError(kind: "user", id: userID) }
                try db.execute("DELETE FROM user_picture WHERE userID = \(userID)")
                try db.execute(
                    "INSERT INTO user_picture (userID, pictureType) VALUES (\(userID), \(input.format.mimeType))")
                let size = try db.writeBlob(
                    from: input.blobSource(), table: UserPictureSchema.tableName,
                    column: UserPictureSchema.pictureColumn, rowID: db.lastInsertedRowID, maximumSize: limit)
                return CoffeePicture(size: size, format: input.format)
            }
        } catch let error as BlobError {
            switch error.reason {
            case .tooLarge(let size, let limit):
                throw PictureError(.tooLarge(size: size, limit: limit), subject: input.name)
            case .unreadableSource(let why): throw PictureError(.unreadable(why), subject: input.name)
            default: throw error
            }
        }
    }

    /// Removes a user's profile picture.
    ///
    /// - Returns: Whether there was one.
    /// - Throws: ``RecordNotFoundError`` for an unknown user; a database
    ///   error.
    @discardableResult
    public func removePicture(userID: Int64) async throws -> Bool {
        try await database.write(for: .users) { db in
            guard try User.exists(db, id: userID) else { throw RecordNotFoundError(kind: "user", id: userID) }
            try db.execute("DELETE FROM user_picture WHERE userID = \(userID)")
            return db.changesCount > 0
        }
    }

    /// Opens a user's profile picture to be read in chunks, as
    /// ``CoffeeStore/openPicture(id:)`` opens a coffee's: its size, type
    /// and version (``PictureReader/entityTag``) come from the row's
    /// header, never its bytes.
    ///
    /// - Throws: ``PictureError`` with ``PictureError/Reason/noPicture(coffeeID:)``
    ///   when the user has none (or there is no such user); a database
    ///   error.
    public func openPicture(userID: Int64) async throws -> PictureReader {
        let database = self.database
        return try await database.read(for: .users) { db in
            guard
                let row = try db.fetchOne(
                    """
                    SELECT pictureID, typeof(picture), length(picture), pictureType
                    FROM user_picture WHERE userID = \(userID)
                    """), try row[1] as String == "blob"
            else { throw PictureError(.noPicture(coffeeID: userID), subject: "user \(userID)") }
            let type = try? row[3] as String?
            var reader = PictureReader(
                coffeeID: userID, size: try row[2], format: type.flatMap(PictureFormat.init(mimeType:)),
                version: try row[0], database: database)
            reader.owner = .user
            return reader
        }
    }

    /// Whether the user has a profile picture, and its version (the
    /// `ETag`'s number), reading no bytes.
    public func pictureVersion(userID: Int64) async throws -> Int64? {
        try await database.read(for: .users) { db in try UserPictureSchema.pictureID(db, userID: userID) }
    }
}
