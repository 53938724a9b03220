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
//
// Platform minimums: RecordsApp's view models use Observation's
// `@Observable` (macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1), and
// SwiftPM takes one set of minimums per package. SQLiteStore alone needs
// `Duration` and `Clock` (macOS 13, iOS 16); the Synchronization atomics
// it uses for signal-time cleanup are checked with `#available`.
let package = Package(
    name: "SQLiteStore",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "SQLiteStore", targets: ["SQLiteStore"]),
        .library(name: "SQLiteStoreAppSupport", targets: ["SQLiteStoreAppSupport"]),
        .library(name: "SQLiteStoreSync", targets: ["SQLiteStoreSync"]),
        .library(name: "PasswordHashing", targets: ["PasswordHashing"]),
        .library(name: "RecordsApp", targets: ["RecordsApp"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "RecordsWeb", targets: ["RecordsWeb"]),
        .library(name: "Thumbnails", targets: ["Thumbnails"]),
        .executable(name: "records", targets: ["records"]),
        .executable(name: "bench", targets: ["bench"]),
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
        // The HTTP server's engine: GNU libmicrohttpd (Debian:
        // libmicrohttpd-dev, installed by scripts/bootstrap.sh; macOS:
        // `brew install libmicrohttpd`), and the GnuTLS it serves HTTPS
        // with, which HTTPServer calls too (Debian: libgnutls28-dev, which
        // libmicrohttpd-dev brings).
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]
        ),
        // Thumbnails of pictures (the Coffee list's): libvips (Debian:
        // libvips-dev, installed by scripts/bootstrap.sh; macOS:
        // `brew install vips`), through fixed-argument wrappers in shim.h.
        // The compiler flags come from GObject's pkg-config file, not
        // vips': vips' brings `-pthread` (through gio and gmodule), which
        // SwiftPM refuses with a warning on every build, and its headers
        // need only GLib's include directories besides the system's (the
        // module map links libvips itself). On macOS, point
        // PKG_CONFIG_PATH and CPATH at Homebrew's.
        .systemLibrary(
            name: "CVips",
            pkgConfig: "gobject-2.0",
            providers: [.apt(["libvips-dev"]), .brew(["vips"])]
        ),
        // Bounded thumbnails with libvips: no app, no HTTP, no SQL.
        .target(
            name: "Thumbnails",
            dependencies: ["CVips"]
        ),
        .target(
            name: "PasswordHashing",
            dependencies: ["COpenSSL"]
        ),
        .target(
            name: "SQLiteStore",
            dependencies: sqliteDependency
        ),
        // The original tutorials' easy API (DBManager) and the app-file
        // helpers (data directory, atomic template install), above the core
        // library: SQLiteStore's public API plus a few `package` file
        // primitives, never the SQLite C API.
        .target(
            name: "SQLiteStoreAppSupport",
            dependencies: ["SQLiteStore"]
        ),
        // Sync between devices for the tables an app names: change capture
        // by triggers (portable: Apple's SDKs lack the session extension's
        // headers), column versions, merge rules, the conflict log, and the
        // push/pull messages a transport carries. SQLiteStore's public API
        // only, no transport of its own.
        .target(
            name: "SQLiteStoreSync",
            dependencies: ["SQLiteStore"]
        ),
        // The original tutorials' apps as UI-independent logic. The sample database is
        // built from Resources/sampledb.sql by scripts/make-sample-database.sh.
        .target(
            name: "RecordsApp",
            dependencies: ["SQLiteStore", "SQLiteStoreAppSupport", "SQLiteStoreSync", "PasswordHashing"],
            exclude: ["Resources/sampledb.sql"],
            resources: [.copy("Resources/sampledb.sqlite")]
        ),
        // A general HTTP server on libmicrohttpd: requests, routes,
        // middleware, forms and uploads, streamed answers, TLS, limits. It
        // knows nothing of the apps.
        .target(
            name: "HTTPServer",
            dependencies: ["CMicroHTTPD"]
        ),
        // Child processes started with posix_spawn, with only their
        // standard streams and default signal handling, in place of
        // Foundation's Process.run() (which can crash on Linux while it
        // lists the descriptors to close). No dependencies.
        .target(name: "Spawn"),
        // Continuous replication of the server's database through Litestream,
        // run as a managed child process: its configuration, supervision,
        // control socket and restores. Knows nothing of the apps.
        .target(name: "Replication", dependencies: ["SQLiteStore", "Spawn"]),
        // The apps' screens in a browser (`records serve`): pages rendered on
        // the server from the RecordsApp stores; no SQL here.
        .target(
            name: "RecordsWeb",
            dependencies: [
                "RecordsApp", "SQLiteStoreSync", "PasswordHashing", "HTTPServer", "Replication", "Thumbnails",
            ],
            resources: [.embedInCode("Resources/style.css"), .embedInCode("Resources/live.js")]
        ),
        .executableTarget(
            name: "records",
            dependencies: [
                "RecordsApp", "RecordsWeb", "SQLiteStore", "SQLiteStoreAppSupport", "SQLiteStoreSync", "Replication",
            ]
        ),
        // Development tool behind scripts/make-sample-database.sh.
        .executableTarget(
            name: "make-sample-database",
            dependencies: ["RecordsApp"]
        ),
        // The benchmark's baselines call the SQLite C API directly, so it
        // imports the C module itself (SQLiteStore does not re-export it).
        .executableTarget(
            name: "bench",
            dependencies: ["SQLiteStore", "SQLiteStoreSync", "RecordsApp"] + sqliteDependency
        ),
        .testTarget(
            name: "SQLiteStoreTests",
            dependencies: ["SQLiteStore", "TestSupport"]
        ),
        // The bench harness's arithmetic (medians, rates, rows read).
        .testTarget(
            name: "BenchTests",
            dependencies: ["bench"]
        ),
        .testTarget(
            name: "SQLiteStoreAppSupportTests",
            dependencies: ["SQLiteStoreAppSupport", "SQLiteStore", "TestSupport"]
        ),
        .testTarget(
            name: "SQLiteStoreSyncTests",
            dependencies: ["SQLiteStoreSync", "SQLiteStore", "TestSupport"],
            // SQL dumps of replicas made by earlier versions, read by path.
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "PasswordHashingTests",
            dependencies: ["PasswordHashing", "TestSupport"]
        ),
        // Test data and helpers shared by the test targets (no tests of its
        // own): temporary directories, special files, clocks, the cheap
        // password hasher, `eventually`, the `.concurrency` tag, the raw
        // socket client, a recording upload sink, patterned bytes, and child
        // processes (Spawn's) awaited without holding a cooperative thread.
        .target(
            name: "TestSupport", dependencies: ["PasswordHashing", "HTTPServer", "Spawn"], path: "Tests/TestSupport"),
        .testTarget(
            name: "RecordsAppTests",
            dependencies: [
                "RecordsApp", "SQLiteStore", "SQLiteStoreAppSupport", "SQLiteStoreSync", "PasswordHashing",
                "TestSupport",
            ]
        ),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["HTTPServer", "TestSupport"]
        ),
        .testTarget(
            name: "RecordsWebTests",
            dependencies: [
                "RecordsWeb", "HTTPServer", "RecordsApp", "SQLiteStore", "SQLiteStoreSync", "PasswordHashing",
                "Replication", "TestSupport",
                "Thumbnails", "CVips",
            ]
        ),
        .testTarget(
            name: "ReplicationTests",
            dependencies: ["Replication", "Spawn", "SQLiteStore", "TestSupport"]
        ),
        .testTarget(
            name: "RecordsCLITests",
            dependencies: ["records", "RecordsApp", "RecordsWeb", "SQLiteStore", "SQLiteStoreSync", "TestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
