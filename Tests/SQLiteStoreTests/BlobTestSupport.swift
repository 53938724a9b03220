import Foundation
import SQLiteStore
import TestSupport

/// A file database with a `pictures` table whose blob column comes last, as
/// the incremental BLOB API recommends.
func makePictureDatabase(in directory: TemporaryDirectory, name: String = "pictures.sqlite") throws -> Database {
    let db = try Database(path: directory.path(name))
    try db.execute(
        """
        CREATE TABLE pictures (id INTEGER PRIMARY KEY, name TEXT, picture BLOB);
        INSERT INTO pictures (id, name, picture) VALUES (1, 'empty', NULL);
        """)
    return db
}

/// The picture of row `id`, read the ordinary way.
func storedPicture(_ db: Database, id: Int64 = 1) throws -> Data? {
    try db.fetchOne(Data.self, "SELECT picture FROM pictures WHERE id = ?", arguments: [id])
}

/// Runs `body` and returns the error of type `E` it throws; nil when it
/// throws nothing or an error of another type.
func thrownError<E: Error>(_ type: E.Type, _ body: () throws -> Void) -> E? {
    do {
        try body()
    } catch {
        return error as? E
    }
    return nil
}

/// The BlobError thrown by `body`, if any.
func blobError(_ body: () throws -> Void) -> BlobError? { thrownError(BlobError.self, body) }

/// The SQLiteError thrown by `body`, if any.
func sqliteError(_ body: () throws -> Void) -> SQLiteError? { thrownError(SQLiteError.self, body) }
