import RecordsApp

extension AppPages {
    /// The Contacts app's pages (``ContactsPages``).
    static let contacts = AppPages(
        app: .contacts, navigation: ("Contacts", "/contacts"),
        tile: Tile(title: "Contacts", summary: "Addresses and phone numbers", path: "/contacts"),
        liveTopics: [.contacts], routes: ContactsPages.routes, api: .contacts)
}

extension WebContext {
    /// The Contacts app's store.
    public var contacts: ContactsStore { ContactsStore(database: database) }
}
