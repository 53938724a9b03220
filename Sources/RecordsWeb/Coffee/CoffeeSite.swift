import RecordsApp

extension AppPages {
    /// The Coffee app's pages (``CoffeePages``).
    static let coffee = AppPages(
        app: .coffee, navigation: ("Coffee", "/coffee"),
        tile: Tile(title: "Coffee", summary: "Coffees, prices and pictures", path: "/coffee"), liveTopics: [.coffee],
        routes: CoffeePages.routes, api: .coffee)
}

extension WebContext {
    /// The Coffee app's store, taking pictures up to
    /// ``WebConfiguration/pictureSizeLimit``.
    public var coffee: CoffeeStore {
        CoffeeStore(database: database, pictureSizeLimit: max(configuration.pictureSizeLimit, 0))
    }
}
