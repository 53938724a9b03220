import SQLiteStore

extension AppDescriptor {
    /// The Users app: the original tutorial's `User_Master`, and the
    /// sessions, tokens for programs and profile pictures of its accounts.
    static let users = AppDescriptor(
        app: .users, table: User.tableName,
        otherTables: [SessionSchema.tableName, APITokenSchema.tableName, UserPictureSchema.tableName],
        topicTables: [UserPictureSchema.tableName], migrations: UsersSchema.migrations)
}

extension AppDatabase.App {
    /// Users (`User_Master`).
    public static let users = Self(named: "users")
}

extension UserSort: RecordSort {
    /// Only the newest first goes down by default.
    public var defaultDirection: SortDirection { self == .newest ? .descending : .ascending }
}
