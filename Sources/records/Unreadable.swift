import RecordsApp

/// After a list has printed the rows it could read, names each row it
/// could not on standard error and ends the command with status 1, so
/// that one odd row neither hides the others nor goes unnoticed.
///
/// - Parameter noun: The rows' plural ("people").
func finishList<Record>(_ list: RecordList<Record>, noun: String) throws {
    guard !list.isComplete else { return }
    for row in list.unreadable { Console.error("records: warning: \(row)") }
    let count = list.unreadable.count
    throw CommandFailure(
        message: "\(count) of \(count + list.records.count) \(noun) could not be read (see above); "
            + "the others were listed")
}
