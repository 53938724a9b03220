import Foundation
import SQLiteStore
import SQLiteStoreSync

extension CoffeeSchema {
    /// A coffee's name and price sync; a synced coffee passes
    /// ``CoffeeDraft/validated()`` on the server.
    ///
    /// Its picture (and the picture's type) does not travel yet: sent
    /// inline, a large picture would be resent whole with every sync of its
    /// row. It is to travel in chunks of its own, once the engine sends
    /// large values that way; until then a coffee's picture stays on the
    /// replica where it was set.
    static let sync = AppSync(
        table: SyncedTable(
            Coffee.tableName, primaryKey: Coffee.Columns.id.rawValue,
            columns: [Coffee.Columns.name, .priceMicros].map(\.rawValue))
    ) { values in
        var problems: [SyncValidationError.Problem] = []
        let name = AppSync.text(
            values[Coffee.Columns.name.rawValue], column: Coffee.Columns.name.rawValue, label: CoffeeField.name.label,
            into: &problems)
        let micros = AppSync.integer(
            values[Coffee.Columns.priceMicros.rawValue], column: Coffee.Columns.priceMicros.rawValue,
            label: CoffeeField.price.label, into: &problems)
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
