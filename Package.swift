// swift-tools-version:6.0
import PackageDescription

// On Apple platforms the SDK ships a `SQLite3` module, so the system-library
// target is only needed (and only built) on Linux.
let sqliteDependency: [Target.Dependency] = [
    .target(name: "CSQLite", condition: .when(platforms: [.linux, .android, .openbsd]))
]

let package = Package(
    name: "SQLiteStore",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SQLiteStore", targets: ["SQLiteStore"]),
        .executable(name: "sqlitestore-demo", targets: ["sqlitestore-demo"]),
        .executable(name: "bench", targets: ["bench"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .target(
            name: "SQLiteStore",
            dependencies: sqliteDependency
        ),
        .executableTarget(
            name: "sqlitestore-demo",
            dependencies: ["SQLiteStore"]
        ),
        .executableTarget(
            name: "bench",
            dependencies: ["SQLiteStore"]
        ),
        .testTarget(
            name: "SQLiteStoreTests",
            dependencies: ["SQLiteStore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
