import Foundation

// records: the terminal front-end of RecordsApp. See Help.swift for the
// commands, Registry.swift for where apps are plugged in.
let status = runRecords(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
exit(status.rawValue)
