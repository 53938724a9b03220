import Foundation
import SQLiteStore

// records: the terminal front-end of RecordsApp. See Help.swift for the
// commands, Registry.swift for where apps are plugged in.
// Ctrl-C (or SIGTERM, SIGHUP) during a copy leaves no temporary file.
TemporaryFileCleanup.installSignalHandlers()
let status = await runRecords(
    Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
// A log line that something still wrote after the command (a thread of
// the server's) is not lost at exit.
serveLogWriter.flush()
exit(status.rawValue)
