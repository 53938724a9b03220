import SQLiteStore
import SQLiteStoreSync

extension PeopleSchema {
    /// Every column of a person syncs; a synced person passes
    /// ``PersonDraft/validated()`` on the server.
    static let sync = AppSync(
        table: SyncedTable(
            Person.tableName, primaryKey: Person.Columns.id.rawValue,
            columns: [Person.Columns.firstName, .lastName, .age].map(\.rawValue))
    ) { values in
        let columns = [
            PersonField.firstName.rawValue: Person.Columns.firstName.rawValue,
            PersonField.lastName.rawValue: Person.Columns.lastName.rawValue,
            PersonField.age.rawValue: Person.Columns.age.rawValue,
        ]
        var problems: [SyncValidationError.Problem] = []
        let first = AppSync.text(
            values[Person.Columns.firstName.rawValue], column: Person.Columns.firstName.rawValue,
            label: PersonField.firstName.label, into: &problems)
        let last = AppSync.text(
            values[Person.Columns.lastName.rawValue], column: Person.Columns.lastName.rawValue,
            label: PersonField.lastName.label, into: &problems)
        let age = AppSync.integer(
            values[Person.Columns.age.rawValue], column: Person.Columns.age.rawValue, label: PersonField.age.label,
            into: &problems)
        let ageProblem = age.map { Int(exactly: $0) == nil } ?? false
        if ageProblem {
            problems.append(.init(column: Person.Columns.age.rawValue, message: "Age is out of range."))
        }
        return problems
            + AppSync.problems(
                {
                    _ = try PersonDraft(firstName: first, lastName: last, age: age.flatMap { Int(exactly: $0) })
                        .validated()
                },
                columns: columns)
    }
}
