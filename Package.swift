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
        .library(name: "RecordsApp", targets: ["RecordsApp"]),
        .executable(name: "records", targets: ["records"]),
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
        // The seeds' apps as UI-independent logic. The sample database is
        // built from Resources/sampledb.sql by scripts/make-sample-database.sh.
        .target(
            name: "RecordsApp",
            dependencies: ["SQLiteStore"],
            exclude: ["Resources/sampledb.sql"],
            resources: [.copy("Resources/sampledb.sqlite")]
        ),
        .executableTarget(
            name: "records",
            dependencies: ["RecordsApp", "SQLiteStore"]
        ),
        // Development tool behind scripts/make-sample-database.sh.
        .executableTarget(
            name: "make-sample-database",
            dependencies: ["RecordsApp"]
        ),
        .testTarget(
            name: "SQLiteStoreTests",
            dependencies: ["SQLiteStore"]
        ),
        .testTarget(
            name: "RecordsAppTests",
            dependencies: ["RecordsApp", "SQLiteStore"]
        ),
        .testTarget(
            name: "RecordsCLITests",
            dependencies: ["records", "RecordsApp", "SQLiteStore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
