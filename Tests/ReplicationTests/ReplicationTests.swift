import Foundation
import Testing

@testable import Replication

@Suite("Replica locations")
struct ReplicaLocationTests {
    @Test("A directory, relative or absolute, or a file URL is a directory replica")
    func directories() throws {
        #expect(try ReplicaLocation(parsing: "/mnt/backup/records") == .directory("/mnt/backup/records"))
        #expect(try ReplicaLocation(parsing: "backup", workingDirectory: "/srv") == .directory("/srv/backup"))
        #expect(try ReplicaLocation(parsing: "../b/./c", workingDirectory: "/srv/a") == .directory("/srv/b/c"))
        #expect(try ReplicaLocation(parsing: "file:///var/replica") == .directory("/var/replica"))
        #expect(try ReplicaLocation(parsing: "/a b/c").url == "file:///a%20b/c")
    }

    @Test("An S3 URL takes its endpoint from the AWS variables, and plain HTTP is told apart")
    func s3() throws {
        let amazon = try ReplicaLocation(parsing: "s3://bucket/path/db", environment: [:])
        #expect(amazon == .s3(bucket: "bucket", path: "path/db", endpoint: nil))
        #expect(amazon.url == "s3://bucket/path/db")
        #expect(!amazon.isPlainHTTP)
        let local = try ReplicaLocation(
            parsing: "s3://bucket/db", environment: ["AWS_ENDPOINT_URL": "http://127.0.0.1:9000"])
        #expect(local.isPlainHTTP)
        #expect(local.description == "s3://bucket/db at http://127.0.0.1:9000")
        let specific = try ReplicaLocation(
            parsing: "s3://bucket/db",
            environment: ["AWS_ENDPOINT_URL": "http://a:1", "AWS_ENDPOINT_URL_S3": "https://b:2"])
        #expect(specific == .s3(bucket: "bucket", path: "db", endpoint: URL(string: "https://b:2")))
        #expect(!specific.isPlainHTTP)
    }

    @Test(
        "Locations that cannot be replicas are refused with the reason",
        arguments: [
            ("", "is empty"), ("   ", "is empty"), ("ftp://host/x", "replicas to ftp:// are not supported"),
            ("s3://", "names no bucket"), ("s3:///path", "names no bucket"), ("s3://bad_bucket!/x", "names no bucket"),
        ])
    func refused(text: String, message: String) {
        #expect {
            try ReplicaLocation(parsing: text, environment: [:])
        } throws: { error in
            (error as? ReplicationError)?.message.contains(message) == true
        }
    }

    @Test("An endpoint that is not an http(s) URL is refused")
    func badEndpoint() {
        #expect(throws: ReplicationError.self) {
            try ReplicaLocation(parsing: "s3://b/p", environment: ["AWS_ENDPOINT_URL": "ftp://x"])
        }
    }
}

@Suite("Litestream's configuration and messages")
struct LitestreamConfigurationTests {
    @Test("Paths are quoted so that no file name can add a key, and S3 gets its endpoint and path style")
    func yaml() throws {
        let hostile = "/tmp/a\"b\\c\nsocket: evil $HOME"
        let configuration = LitestreamConfiguration(
            database: hostile, replica: .directory("/r"), socket: "/s.sock", environment: [:])
        let text = configuration.yaml
        #expect(text.contains(#"  - path: "/tmp/a\"b\\c\nsocket: evil $HOME""#))
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("socket:") }.count == 1)
        #expect(text.contains(#"url: "file:///r""#))
        #expect(!text.contains("endpoint"))
        let s3 = LitestreamConfiguration(
            database: "/d", replica: .s3(bucket: "b", path: "p", endpoint: URL(string: "http://127.0.0.1:5000")),
            socket: "/s", environment: ["AWS_REGION": "eu-west-1"])
        #expect(s3.yaml.contains(#"endpoint: "http://127.0.0.1:5000""#))
        #expect(s3.yaml.contains(#"region: "eu-west-1""#))
        #expect(s3.yaml.contains("force-path-style: true"))
    }

    @Test("Control characters are escaped in quoted values")
    func controlCharacters() {
        #expect(LitestreamConfiguration.quoted("a\u{1}b\u{7F}") == #""a\x01b\x7F""#)
    }

    @Test("Litestream's structured log lines give their message and error")
    func messages() {
        #expect(
            LitestreamRestore.message(#"time=x level=ERROR msg="cannot restore" error="no \"backup\" found""#)
                == #"cannot restore: no "backup" found"#)
        #expect(LitestreamRestore.message("Error: timestamp does not exist") == "Error: timestamp does not exist")
        #expect(LitestreamRestore.message("time=x level=INFO msg=done") == "done")
    }

    @Test("Go's times with nanoseconds are read")
    func dates() throws {
        let date = try #require(ControlSocket.parseDate("2026-12-02T18:27:07.492551213Z"))
        #expect(abs(date.timeIntervalSince1970 - 1_796_236_027.492) < 0.001)
        #expect(ControlSocket.parseDate("2026-12-02T18:27:07Z") != nil)
        #expect(ControlSocket.parseDate("yesterday") == nil)
    }

    @Test("A chunked answer is put back together")
    func chunked() {
        let body = Data("4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n".utf8)
        #expect(String(decoding: ControlSocket.dechunked(body), as: UTF8.self) == "Wikipedia")
    }

    @Test("A certificate bundle in the environment is named when Litestream's S3 client refuses it")
    func caBundleHint() {
        let line = "level=ERROR msg=\"unable to add custom RootCAs HTTPClient\""
        #expect(LitestreamSupervisor.hint(line, environment: ["AWS_CA_BUNDLE": "/x.pem"]).contains("AWS_CA_BUNDLE"))
        #expect(LitestreamSupervisor.hint(line, environment: [:]).isEmpty)
    }

    @Test("The read-replica VFS gets an S3 store's endpoint in its URL, and no certificate bundle over plain HTTP")
    func vfsEnvironment() throws {
        let directory = ReplicaLocation.directory("/srv/replica")
        let plain = ReplicaLocation.s3(bucket: "b", path: "p/db", endpoint: URL(string: "http://127.0.0.1:5000"))
        let secure = ReplicaLocation.s3(bucket: "b", path: "p/db", endpoint: URL(string: "https://store.example"))
        #expect(LitestreamVFS.replicaURL(for: directory) == "file:///srv/replica")
        #expect(LitestreamVFS.replicaURL(for: .s3(bucket: "b", path: "db", endpoint: nil)) == "s3://b/db")
        #expect(
            LitestreamVFS.replicaURL(for: plain) == "s3://b/p/db?endpoint=http://127.0.0.1:5000&forcePathStyle=true")
        let base = ["AWS_CA_BUNDLE": "/ca.pem", "AWS_ACCESS_KEY_ID": "key", "HOME": "/root"]
        let overHTTP = LitestreamVFS.environment(for: plain, from: base)
        #expect(overHTTP["AWS_CA_BUNDLE"] == nil)
        #expect(overHTTP["AWS_ACCESS_KEY_ID"] == "key" && overHTTP["HOME"] == "/root")
        #expect(overHTTP[LitestreamVFS.replicaVariable] == LitestreamVFS.replicaURL(for: plain))
        let overHTTPS = LitestreamVFS.environment(for: secure, from: base)
        #expect(overHTTPS["AWS_CA_BUNDLE"] == "/ca.pem")
        // Once set, nothing changes: the restarted process does not restart again.
        #expect(LitestreamVFS.environment(for: plain, from: overHTTP) == overHTTP)
    }
}
