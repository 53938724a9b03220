/// Every app of the `records` command, in the order help lists them. A new
/// app adds a file with its `CommandFamily` and one line here.
let commandFamilies: [CommandFamily] = [
    peopleCommands,
    contactsCommands,
    coffeeCommands,
    usersCommands,
]

/// Commands for the whole database rather than one app (`records backup
/// FILE`), in the order help lists them.
let topLevelCommands: [Command] = [backupCommand, serveCommand, completionCommand, manCommand]
