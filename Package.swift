// swift-tools-version:6.0
import PackageDescription

// On Apple platforms the SDK ships a `SQLite3` module, so the system-library
// target is only needed (and only built) on Linux.
let sqliteDependency: [Target.Dependency] = [
    .target(name: "CSQLite", condition: .when(platforms: [.linux, .android, .openbsd]))
]

// PasswordHashing uses scrypt from OpenSSL 3's libcrypto through the COpenSSL
// system-library target (Debian: libssl-dev, installed by scripts/bootstrap.sh).
// Apple's SDKs do not ship OpenSSL and CommonCrypto has no scrypt, so on macOS
// it needs OpenSSL 3 from Homebrew (`brew install openssl@3`, with
// PKG_CONFIG_PATH pointing at its lib/pkgconfig), and on iOS an OpenSSL 3
// build linked into the app. SQLiteStore itself never depends on it.
let package = Package(
    name: "SQLiteStore",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SQLiteStore", targets: ["SQLiteStore"]),
        .library(name: "PasswordHashing", targets: ["PasswordHashing"]),
        .executable(name: "sqlitestore-demo", targets: ["sqlitestore-demo"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]
        ),
        .target(
            name: "PasswordHashing",
            dependencies: ["COpenSSL"]
        ),
        .target(
            name: "SQLiteStore",
            dependencies: sqliteDependency
        ),
        .executableTarget(
            name: "sqlitestore-demo",
            dependencies: ["SQLiteStore"]
        ),
        .testTarget(
            name: "SQLiteStoreTests",
            dependencies: ["SQLiteStore"]
        ),
        .testTarget(
            name: "PasswordHashingTests",
            dependencies: ["PasswordHashing"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
