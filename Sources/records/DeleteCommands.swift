import Foundation
import RecordsApp

// What every app's `delete` shares: several IDs at once, a question on
// the terminal before anything is deleted, `--yes` to skip it, and a
// refusal without `--yes` when there is no terminal to ask on (a script,
// a pipe), so that a mistyped ID in a script never deletes unasked.

extension Command.Option {
    /// `--yes`: delete without asking.
    static let yes = Command.Option.flag(
        "yes", "Delete without asking; needed when standard input is not a terminal")
}

extension Command.Positional {
    /// The IDs a `delete` takes: one or more.
    static func ids(of kind: String) -> Command.Positional {
        Command.Positional(
            name: "ID", help: "The \(kind)'s ID, as listed; give several to delete them all", takesRest: true)
    }
}

extension Invocation {
    /// The IDs given to `delete`, each a positive whole number, in order,
    /// each once.
    func recordIDs() throws -> [Int64] {
        var ids: [Int64] = []
        for word in (arguments.positionals.first ?? "").split(separator: " ") {
            let id = try ParsedArguments.recordID(String(word), path: path)
            if !ids.contains(id) { ids.append(id) }
        }
        return ids
    }

    /// Refuses, before the database is opened, to delete without `--yes`
    /// when standard input is no terminal: no one could answer the
    /// question.
    func requireConfirmationChannel() throws {
        guard !arguments.flag("yes"), isatty(STDIN_FILENO) == 0 else { return }
        throw UsageError(
            message: "standard input is not a terminal, so records cannot ask before deleting: "
                + "add --yes to delete without asking; nothing was deleted",
            helpPath: path)
    }

    /// Asks on the terminal whether to delete `descriptions` (unless
    /// `--yes` was given); anything but "y" or "yes" keeps them.
    ///
    /// - Throws: ``CommandFailure`` (status 1) when the answer is no.
    func confirmDeletion(of descriptions: [String], noun: String) throws {
        if arguments.flag("yes") { return }
        var question = "About to delete:\n" + descriptions.map { "  \($0)\n" }.joined()
        question += descriptions.count == 1 ? "Delete it? [y/N] " : "Delete these \(descriptions.count) \(noun)? [y/N] "
        _ = StandardStream.write(question, to: STDERR_FILENO)
        let answer = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard answer == "y" || answer == "yes" else {
            throw CommandFailure(message: "nothing was deleted, as the answer was not yes")
        }
    }

    /// The whole `delete` of an app: the IDs, the records they name (none
    /// is deleted if any is missing), the question, then the deletion of
    /// them all in one transaction (all or none, even if another program
    /// deletes one meanwhile), then each said ("Deleted “Ada Lovelace” (ID
    /// 1, age 36)."). JSON is the deleted record for one ID, an array of them for
    /// several.
    ///
    /// - Parameters:
    ///   - kind: "person", for messages.
    ///   - noun: "people", for the question.
    ///   - find: The record with an ID, if there is one.
    ///   - delete: Deletes the records with these IDs in one transaction
    ///     (all or none) and returns them as they were.
    ///   - describe: `“Ada Lovelace” (ID 1)`.
    ///   - deleted: The confirmation's text, `Deleted “Ada Lovelace” (ID
    ///     1).` unless given.
    func deleteRecords<Record: Encodable>(
        kind: String, noun: String, find: (Int64) async throws -> Record?,
        delete: ([Int64]) async throws -> [Record], describe: (Record) -> RecordMention,
        deleted: ((Record) -> String)? = nil
    ) async throws {
        let ids = try recordIDs()
        try requireConfirmationChannel()
        var found: [String] = []
        var missing: [Int64] = []
        for id in ids {
            do {
                if let record = try await find(id) {
                    found.append(describe(record).description)
                } else {
                    missing.append(id)
                }
            } catch is UnreadableRowError {
                // A row with a value it cannot read is there, and delete
                // is one way to be rid of it.
                found.append("\(kind) \(id), whose stored values cannot all be read")
            }
        }
        if !missing.isEmpty {
            if ids.count == 1 { throw RecordNotFoundError(kind: kind, id: ids[0]) }
            throw RecordsNotFoundError(kind: kind, missing: missing, given: ids.count)
        }
        try confirmDeletion(of: found, noun: noun)
        let done: [Record]
        do {
            done = try await delete(ids)
        } catch let error as RecordsNotFoundError where ids.count == 1 {
            throw RecordNotFoundError(kind: kind, id: error.missing.first ?? ids[0])
        }
        let change = "\(ids.count == 1 ? "\(kind) \(ids[0]) was" : "\(ids.count) \(noun) were") deleted"
        try afterChange(change) {
            if wantsJSON {
                if done.count == 1 { try Console.json(done[0]) } else { try Console.json(done) }
            } else {
                for record in done {
                    try Console.out(deleted?(record) ?? RecordOutcome.deleted.message(describe(record)))
                }
            }
        }
    }
}

/// The help of every app's `delete` but the Users app's.
let deleteDiscussion = """
    On a terminal, lists what will be deleted and asks first; --yes deletes
    without asking, and is needed when standard input is not a terminal (a
    script, a pipe), where records refuses rather than delete unasked. If any
    ID is not there, nothing is deleted, and the missing IDs are named.
    """
