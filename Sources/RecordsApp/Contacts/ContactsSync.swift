import SQLiteStore
import SQLiteStoreSync

extension ContactsSchema {
    /// Every column of a contact syncs; a synced contact passes
    /// ``ContactDraft/validated()`` on the server.
    static let sync = AppSync(
        table: SyncedTable(
            Contact.tableName, primaryKey: Contact.Columns.id.rawValue,
            columns: [Contact.Columns.name, .address, .contact].map(\.rawValue))
    ) { values in
        let fields: [(ContactField, Contact.Columns)] = [(.name, .name), (.address, .address), (.contact, .contact)]
        var problems: [SyncValidationError.Problem] = []
        let texts = fields.map { field, column in
            AppSync.text(values[column.rawValue], column: column.rawValue, label: field.label, into: &problems)
        }
        return problems
            + AppSync.problems(
                { _ = try ContactDraft(name: texts[0], address: texts[1], contact: texts[2]).validated() },
                columns: Dictionary(uniqueKeysWithValues: fields.map { ($0.0.rawValue, $0.1.rawValue) }))
    }
}
