import RecordsApp

/// A profile option of `register` (the names and the email required, the
/// rest optional) and `edit` (any): where its value goes in each form.
private struct ProfileOption: Sendable {
    let name: String
    let registration: WritableKeyPath<RegistrationForm, String> & Sendable
    let change: WritableKeyPath<ProfileChanges, String?> & Sendable
    let valueName: String
    let help: String
    /// Whether `register` needs it: what an account needs.
    var isRequired = false
}

private let profileOptions: [ProfileOption] = [
    ProfileOption(
        name: "first", registration: \.firstName, change: \.firstName, valueName: "NAME",
        help: "first name (1-\(UserRules.maxNameLength) characters)", isRequired: true),
    ProfileOption(
        name: "last", registration: \.lastName, change: \.lastName, valueName: "NAME",
        help: "last name (1-\(UserRules.maxNameLength) characters)", isRequired: true),
    ProfileOption(
        name: "email", registration: \.email, change: \.email, valueName: "EMAIL",
        help: "email address, unique ignoring case", isRequired: true),
    ProfileOption(
        name: "mobile", registration: \.mobile, change: \.mobile, valueName: "NUMBER",
        help: "mobile number: 7-15 digits, optionally after a +"),
    ProfileOption(
        name: "state", registration: \.state, change: \.state, valueName: "STATE",
        help: "state (1-\(UserRules.maxPlaceLength) characters)"),
    ProfileOption(
        name: "city", registration: \.city, change: \.city, valueName: "CITY",
        help: "city (1-\(UserRules.maxPlaceLength) characters)"),
    ProfileOption(
        name: "pincode", registration: \.pincode, change: \.pincode, valueName: "CODE",
        help: "postal code: 3-10 digits"),
    ProfileOption(
        name: "address", registration: \.address, change: \.address, valueName: "ADDRESS",
        help: "address (1-\(UserRules.maxAddressLength) characters)"),
    ProfileOption(
        name: "gender", registration: \.gender, change: \.gender, valueName: Gender.names.joined(separator: "|"),
        help: "gender"),
    ProfileOption(
        name: "dob", registration: \.dateOfBirth, change: \.dateOfBirth, valueName: "YYYY-MM-DD",
        help: "date of birth (ISO: YYYY-MM-DD), in the past"),
    ProfileOption(
        name: "image", registration: \.imageName, change: \.imageName, valueName: "NAME",
        help: "profile picture's file name"),
]

private let registerPasswordStdin = Command.Option.flag(
    "password-stdin", "Read the password(s) from standard input, one per line, instead of the terminal")

/// `records users ...`: the original tutorial's registration app.
let usersCommands = CommandFamily(
    app: .users,
    summary: "registered users: sign-up, login, profiles; passwords stored as scrypt hashes",
    commands: [
        Command(
            name: "register", summary: "Register a user",
            options: profileOptions.map {
                Command.Option(
                    name: $0.name, valueName: $0.valueName,
                    help: $0.help.prefix(1).uppercased() + $0.help.dropFirst() + ($0.isRequired ? "" : " (optional)"),
                    isRequired: $0.isRequired)
            } + [registerPasswordStdin, .json],
            discussion: """
                The password (8-\(UserRules.maxPasswordLength) characters, no control characters) is never an \
                argument: it is asked for twice on the terminal, without echo, or read with --password-stdin \
                from the first two lines of standard input (password, then confirmation). An account needs \
                the names and the email; the other fields are optional and can be given later with \
                `records users edit`. Every invalid field is reported; nothing is saved unless all are valid.
                """,
            examples: [
                "records users register --first Grace --last Hopper --email grace@example.com",
                "records users register --first Ada --last Lovelace --email ada@example.com --mobile 9876543210 "
                    + "--state Surrey --city London --pincode 110001 --address \"12 St James's Sq\" "
                    + "--gender female --dob 1990-12-10 --image ada.png",
                "printf '%s\\n%s\\n' \"$PW\" \"$PW\" | records users register --first Alan --last Turing "
                    + "--email alan@example.com --mobile +447700900123 --state Cheshire --city Wilmslow "
                    + "--pincode 625 --address \"43 Adlington Rd\" --gender male --dob 1990-06-23 --image alan.png "
                    + "--password-stdin",
            ],
            run: { invocation in
                var form = RegistrationForm()
                for option in profileOptions {
                    form[keyPath: option.registration] = invocation.arguments.value(option.name) ?? ""
                }
                let today = CalendarDate.today()
                let fromStandardInput = invocation.arguments.flag("password-stdin")
                // Asking for a password only to reject the form would waste
                // the typing; input from a script is read and checked with it.
                if !fromStandardInput { _ = try form.validatedProfile(today: today) }
                let passwords = try PasswordInput.read(
                    ["password", "password confirmation"], fromStandardInput: fromStandardInput, path: invocation.path)
                form.password = passwords[0]
                form.passwordConfirmation = passwords[1]
                _ = try form.validated(today: today)
                let user = try await UsersStore(database: try invocation.database(), today: { today }).register(form)
                try invocation.afterChange("user \(user.id) was registered", lost: "its ID") {
                    try invocation.emit(user, text: "Registered \(describe(user)).")
                }
            }),
        Command(
            name: "login", summary: "Check a user's password",
            positionals: [Command.Positional(name: "EMAIL", help: "The email address, in any case")],
            options: [
                Command.Option.flag("password-stdin", "Read the password from the first line of standard input"),
                .json,
            ],
            discussion: """
                Exits with status 0 when the password is right, or 1 with "invalid email or password", the same \
                for an unknown email as for a wrong password (and as slow: an unknown email costs a dummy \
                password check).
                """,
            examples: [
                "records users login ada@example.com",
                "printf '%s\\n' \"$PW\" | records users login ada@example.com --password-stdin",
            ],
            run: { invocation in
                let email = invocation.arguments.positionals.first ?? ""
                let password = try PasswordInput.read(
                    ["password"], fromStandardInput: invocation.arguments.flag("password-stdin"),
                    path: invocation.path)[0]
                let user = try await UsersStore(database: invocation.database()).authenticate(
                    email: email, password: password)
                try invocation.emit(user, text: "Logged in as \(describe(user)).")
            }),
        Command(
            name: "list", summary: "List every user",
            options: [
                Command.Option(
                    name: "sort", valueName: "name|newest",
                    help: "Order by last and first name (default), or newest first"),
                .order, .limit, .offset, .json,
            ],
            examples: ["records users list", "records users list --sort newest --json"],
            run: { invocation in
                let sort = try invocation.choice("sort", default: UserSort.name)
                let direction = try invocation.direction(for: sort)
                let list = StreamingList<User>(
                    [
                        .init(title: "ID", alignment: .right), .init(title: "NAME"), .init(title: "EMAIL"),
                        .init(title: "MOBILE"), .init(title: "CITY"),
                    ], json: invocation.wantsJSON
                ) { user in [String(user.id), user.fullName, user.email, user.mobile, user.city] }
                let store = UsersStore(database: try invocation.database())
                try await store.forEach(sortedBy: sort, direction: direction, page: invocation.page()) {
                    try list.take($0)
                }
                try await invocation.finish(
                    list, empty: "No users yet. Register one: records users register --help", noun: "users",
                    count: { try await store.count() })
            }),
        Command(
            name: "show", summary: "Show one user's profile",
            positionals: [Command.Positional(name: "ID", help: "The user's ID, as listed")],
            options: [.json],
            examples: ["records users show 1"],
            run: { invocation in
                let id = try invocation.recordID()
                guard let user = try await UsersStore(database: invocation.database()).user(id: id) else {
                    throw RecordNotFoundError(kind: "user", id: id)
                }
                try invocation.emit(Versioned(record: user, version: user.version), text: userFields(user))
            }),
        Command(
            name: "edit", summary: "Change a user's profile, or password",
            positionals: [Command.Positional(name: "ID", help: "The user's ID, as listed")],
            options: profileOptions.map {
                Command.Option(name: $0.name, valueName: $0.valueName, help: "New " + $0.help)
            }
                + [
                    Command.Option.flag("change-password", "Change the password; the current one is asked for"),
                    Command.Option.flag(
                        "password-stdin",
                        "Read the user's password from the first line of standard input (with --change-password: "
                            + "the current password, the new one and its confirmation from the first three lines)"),
                    .ifVersion, .json,
                ],
            discussion: """
                Fields not given are left as they are; give at least one, or --change-password. An empty value \
                clears an optional field (--mobile ''); the names and the email cannot be cleared. As a logged-in \
                session would, the user's current password is needed, asked for on the terminal (with \
                --change-password, then the new one, twice) or read with --password-stdin. Every field is checked before anything is saved; the password is changed \
                first, so a wrong current password changes nothing.
                """,
            examples: [
                "printf '%s\\n' \"$PW\" | records users edit 1 --city Cambridge --password-stdin",
                "printf '%s\\n%s\\n%s\\n' \"$OLD\" \"$NEW\" \"$NEW\" | records users edit 1 --change-password --password-stdin",
            ],
            run: { invocation in
                let id = try invocation.recordID()
                var changes = ProfileChanges()
                for option in profileOptions {
                    changes[keyPath: option.change] = invocation.arguments.value(option.name)
                }
                let changesPassword = invocation.arguments.flag("change-password")
                let fromStandardInput = invocation.arguments.flag("password-stdin")
                if changes.isEmpty && !changesPassword {
                    throw UsageError(
                        message: "nothing to change: give a profile option such as --city, or --change-password",
                        helpPath: invocation.path)
                }
                let version = try invocation.ifVersion()
                let today = CalendarDate.today()
                if !changes.isEmpty { _ = try changes.validated(today: today) }
                let store = UsersStore(database: try invocation.database(), today: { today })
                if let version {
                    // Checked before the password is asked for or changed; the
                    // profile's write checks it again in its transaction.
                    guard let user = try await store.user(id: id) else {
                        throw RecordNotFoundError(kind: "user", id: id)
                    }
                    if user.version != version {
                        throw VersionConflictError(kind: "user", id: id, expected: version, current: user.version)
                    }
                }
                if changesPassword {
                    guard try await store.user(id: id) != nil else { throw RecordNotFoundError(kind: "user", id: id) }
                    if let email = changes.email, let owner = try await store.user(email: email), owner.id != id {
                        throw UsersStore.emailTaken
                    }
                    let passwords = try PasswordInput.read(
                        ["current password", "new password", "new password confirmation"],
                        fromStandardInput: fromStandardInput, path: invocation.path)
                    try await store.changePassword(
                        id: id, current: passwords[0], new: passwords[1], confirmation: passwords[2])
                }
                // The update reads the row after writing it, so that it can
                // mend a row with an unreadable value. Without a password
                // change, the user's password is checked first.
                // A row with a value it cannot read has no "before"; the edit mends it.
                let before = try? await store.user(id: id)
                let updated: User?
                if changes.isEmpty {
                    updated = try await store.user(id: id)
                } else if changesPassword {
                    updated = try await store.updateProfile(id: id, with: changes, ifVersion: version)
                } else {
                    let password = try PasswordInput.read(
                        ["password"], fromStandardInput: fromStandardInput, path: invocation.path)[0]
                    updated =
                        version == nil
                        ? try await store.updateProfile(id: id, password: password, with: changes)
                        : try await store.updateProfile(id: id, with: changes, password: password, ifVersion: version)
                }
                guard let user = updated else { throw RecordNotFoundError(kind: "user", id: id) }

                let change = changes.isEmpty ? "the password of user \(id) was changed" : "user \(id) was updated"
                try invocation.afterChange(change) {
                    let text =
                        changes.isEmpty
                        ? "Changed the password of \(describe(user))."
                        : updateMessage(describe(user), changed: changesPassword || before != user)
                    try invocation.emit(user, text: text)
                }
            }),
        Command(
            name: "delete", summary: "Delete a user, given their password",
            positionals: [Command.Positional(name: "ID", help: "The user's ID, as listed")],
            options: [
                .yes, .json,
                Command.Option.flag("password-stdin", "Read the user's password from the first line of standard input"),
            ],
            discussion: "As a logged-in session would, the user's password is needed, asked for on the terminal or "
                + "read with --password-stdin; a wrong one deletes nothing. One user at a time, as each has their "
                + "own password. As every delete does, it asks first on a terminal (--yes skips the question) and "
                + "needs --yes when standard input is not a terminal.",
            examples: [
                "records users delete 1", "printf '%s\\n' \"$PW\" | records users delete 1 --yes --password-stdin",
            ],
            run: { invocation in
                let id = try invocation.recordID()
                try invocation.requireConfirmationChannel()
                let store = UsersStore(database: try invocation.database())
                guard let stored = try await store.user(id: id) else { throw RecordNotFoundError(kind: "user", id: id) }
                try invocation.confirmDeletion(of: [describe(stored).description], noun: "users")
                let password = try PasswordInput.read(
                    ["password"], fromStandardInput: invocation.arguments.flag("password-stdin"), path: invocation.path)[
                        0]
                let user = try await store.delete(id: id, password: password)
                try invocation.afterChange("user \(id) was deleted") {
                    try invocation.emit(user, text: RecordOutcome.deleted.message(describe(user)))
                }
            }),
    ])

private func userFields(_ user: User) -> String {
    fieldList([
        ("ID", String(user.id)), ("First name", user.firstName), ("Last name", user.lastName), ("Email", user.email),
        ("Mobile", user.mobile), ("Address", user.address), ("City", user.city), ("State", user.state),
        ("Postal code", user.pincode), ("Gender", user.gender.name), ("Date of birth", user.dateOfBirth),
        ("Image", user.imageName), ("Version", user.version.description),
    ])
}

/// "Ada Lovelace <ada@example.com> (ID 1)"
/// `“Ada Lovelace” (ID 1, ada@example.com)`.
private func describe(_ user: User) -> RecordMention {
    RecordMention(Terminal.clean(user.fullName), details: "ID \(user.id), \(Terminal.clean(user.email))")
}
