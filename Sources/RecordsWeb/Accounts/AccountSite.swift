import RecordsApp

extension AppPages {
    /// The Users app's pages (``AccountPages``): the accounts, reached from
    /// the header's account menu rather than the navigation.
    static let account = AppPages(
        app: .users, navigation: nil,
        tile: Tile(title: "Your account", summary: "Profile and password", path: "/account"), liveTopics: [.users],
        routes: AccountPages.routes)
}

extension WebContext {
    /// The Users app's store, hashing with
    /// ``WebConfiguration/passwordHasher``, dating by
    /// ``WebConfiguration/now``, and taking profile pictures up to
    /// ``WebConfiguration/pictureSizeLimit``, as coffee pictures.
    public var users: UsersStore {
        let now = configuration.now
        return UsersStore(
            database: database, hasher: configuration.passwordHasher, today: { CalendarDate.today(now: now()) },
            pictureSizeLimit: configuration.pictureSizeLimit)
    }
}
