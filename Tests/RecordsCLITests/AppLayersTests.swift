import RecordsApp
import Testing

@testable import RecordsWeb
@testable import records

/// Every app is declared once in each layer: its ``AppDescriptor`` in
/// `RecordsApp`, its pages in `RecordsWeb`, its commands in `records`. An
/// app in one layer's list and missing from another's fails here, naming
/// both.
@Suite struct AppLayersTests {
    /// The apps `RecordsApp` declares, by name.
    static let apps = AppDatabase.apps.map(\.app.rawValue)

    /// What is wrong between the apps and one layer's list of them.
    static func mismatches(_ layer: String, _ names: [String]) -> [String] {
        var problems: [String] = []
        for app in apps where !names.contains(app) { problems.append("\(app) has no \(layer)") }
        for name in names where !apps.contains(name) {
            problems.append("\(layer) for \(name), which is not in AppDatabase.apps")
        }
        for name in Set(names) where names.filter({ $0 == name }).count > 1 {
            problems.append("\(name) has more than one \(layer)")
        }
        return problems
    }

    @Test func everyAppHasItsPagesOnTheWebAndNoPagesAreForAnotherApp() {
        #expect(Self.mismatches("pages in RecordsWeb (SiteApps.all)", SiteApps.all.map(\.app.rawValue)) == [])
    }

    @Test func everyAppHasItsCommandsAndNoCommandsAreForAnotherApp() {
        #expect(Self.mismatches("command family in records (Registry.swift)", appCommandFamilies.map(\.name)) == [])
    }

    @Test func theCommandLineListsTheAppsInTheirOrder() {
        #expect(appFamiliesInOrder.map(\.name) == Self.apps)
        // Families that are not an app's come after the apps', for no app.
        #expect(commandFamilies.map(\.name) == Self.apps + accountCommandFamilies.map(\.name))
        #expect(accountCommandFamilies.allSatisfy { !Self.apps.contains($0.name) })
    }

    @Test func everyLiveTopicThePagesFollowIsAnApp() {
        #expect(SiteApps.liveTopics.allSatisfy { AppDatabase.App.allCases.contains($0) })
        #expect(Set(SiteApps.liveTopics) == Set(AppDatabase.App.allCases))
    }
}
