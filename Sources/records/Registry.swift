import RecordsApp

/// Every app's commands, one line per app (its `<App>Commands.swift`
/// declares them).
let appCommandFamilies: [CommandFamily] = [peopleCommands, contactsCommands, coffeeCommands, usersCommands]

/// Families for the users' accounts rather than an app's records (`records
/// token`), listed after the apps'.
let accountCommandFamilies: [CommandFamily] = [tokenCommands, remoteCommands]

/// The apps' command families in the order of `AppDatabase.apps`, the order
/// help, completion and the manual page list them. A test checks that
/// every app has one.
let appFamiliesInOrder: [CommandFamily] = AppDatabase.App.allCases.compactMap { app in
    appCommandFamilies.first { $0.app == app }
}

/// Every family, the apps' first: what help, completion and the manual
/// page list, and what the first word after `records` selects.
let commandFamilies: [CommandFamily] = appFamiliesInOrder + accountCommandFamilies

/// Commands for the whole database rather than one app (`records backup
/// FILE`), in the order help lists them.
let topLevelCommands: [Command] = [
    backupCommand, restoreCommand, serveCommand, syncCommand, conflictsCommand, completionCommand, manCommand,
    versionCommand,
]
