import Foundation
import SQLiteStore
import SQLiteStoreSync

extension CoffeeSchema {
    /// A coffee's name, price and picture sync; a synced coffee passes
    /// ``CoffeeDraft/validated()`` on the server, and its picture type is
    /// one the app shows (or none).
    ///
    /// The picture is a large value: it travels by reference (its SHA-256
    /// and size) in the change batches and its bytes in resumable chunks of
    /// their own, only when it changed, so a name edit never resends it. A
    /// replica shows a picture that arrives by sync only once all of it
    /// has. The picture and its type are set together on every write the
    /// apps make, so they carry the same version and win or lose together.
    static let sync = AppSync(
        table: SyncedTable(
            Coffee.tableName, primaryKey: Coffee.Columns.id.rawValue,
            columns: [Coffee.Columns.name, .priceMicros, .pictureType, .picture].map(\.rawValue),
            largeColumns: [Coffee.Columns.picture.rawValue])
    ) { values in
        var problems: [SyncValidationError.Problem] = []
        let name = AppSync.text(
            values[Coffee.Columns.name.rawValue], column: Coffee.Columns.name.rawValue, label: CoffeeField.name.label,
            into: &problems)
        let micros = AppSync.integer(
            values[Coffee.Columns.priceMicros.rawValue], column: Coffee.Columns.priceMicros.rawValue,
            label: CoffeeField.price.label, into: &problems)
        let type = AppSync.text(
            values[Coffee.Columns.pictureType.rawValue], column: Coffee.Columns.pictureType.rawValue,
            label: "Picture type", into: &problems)
        if !type.isEmpty, PictureFormat(mimeType: type) == nil {
            problems.append(
                .init(
                    column: Coffee.Columns.pictureType.rawValue,
                    message: "Picture type must be one of "
                        + PictureFormat.allCases.map(\.mimeType).joined(separator: ", ") + "."))
        }
        return problems
            + AppSync.problems(
                {
                    _ = try CoffeeDraft(name: name, price: micros.map { CoffeePrice.decimal(micros: $0) } ?? 0)
                        .validated()
                },
                columns: [
                    CoffeeField.name.rawValue: Coffee.Columns.name.rawValue,
                    CoffeeField.price.rawValue: Coffee.Columns.priceMicros.rawValue,
                ])
    }
}
