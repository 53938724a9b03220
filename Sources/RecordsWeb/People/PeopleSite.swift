import RecordsApp

extension AppPages {
    /// The People app's pages (``PeoplePages``).
    static let people = AppPages(
        app: .people, navigation: ("People", "/people"),
        tile: Tile(title: "People", summary: "Names and ages", path: "/people"), liveTopics: [.people],
        routes: PeoplePages.routes, api: .people)
}

extension WebContext {
    /// The People app's store.
    public var people: PeopleStore { PeopleStore(database: database) }
}
