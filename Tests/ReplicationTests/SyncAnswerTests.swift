import Foundation
import TestSupport
import Testing

@testable import Replication

#if canImport(Glibc)
    import Glibc
#endif

/// Litestream's answer to a sync with `wait`, read by the supervisor: under
/// load its latest transaction may be newer than the replica's (a commit
/// made during the sync), which fails a last sync on stopping but not the
/// group commit of `--durable`, whose writers committed before the call.
@Suite("A sync's answer")
struct SyncAnswerTests {
    /// Answers one request on a Unix socket at `path` with `body` (JSON),
    /// on a thread of its own.
    private final class OneAnswer: @unchecked Sendable {
        private let descriptor: Int32

        init(path: String, body: String) throws {
            descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: Array(path.utf8))
                raw[path.utf8.count] = 0
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try #require(bound == 0 && listen(descriptor, 1) == 0, "cannot listen on \(path)")
            let answer = Array(
                ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
                    + "Connection: close\r\n\r\n" + body).utf8)
            let listening = descriptor
            Thread {
                let client = accept(listening, nil, nil)
                guard client >= 0 else { return }
                var buffer = [UInt8](repeating: 0, count: 4096)
                var received: [UInt8] = []
                // The request's head and its small JSON body.
                while !String(decoding: received, as: UTF8.self).contains("}") {
                    let count = read(client, &buffer, buffer.count)
                    if count <= 0 { break }
                    received += buffer[..<count]
                }
                _ = answer.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                close(client)
            }.start()
        }

        deinit { close(descriptor) }
    }

    private func supervisor() throws -> LitestreamSupervisor {
        try LitestreamSupervisor(
            executable: "/bin/false", database: "/data/records.sqlite", replica: .directory("/backup"), log: { _ in })
    }

    @Test("The replica behind the latest transaction fails a sync that must catch up")
    func behindFailsACatchUp() throws {
        let supervisor = try supervisor()
        let fake = try OneAnswer(
            path: supervisor.control.path, body: #"{"status":"ok","txid":1498,"replicated_txid":1497}"#)
        #expect(throws: ReplicationError("the replica holds transaction 1497 of 1498 after a sync")) {
            try supervisor.syncAndWait()
        }
        withExtendedLifetime(fake) {}
    }

    @Test("The group commit's sync succeeds when a newer commit came during it")
    func behindIsFineForTheGroupCommit() throws {
        let supervisor = try supervisor()
        let fake = try OneAnswer(
            path: supervisor.control.path, body: #"{"status":"ok","txid":1498,"replicated_txid":1497}"#)
        let result = try supervisor.syncAndWait(requireCaughtUp: false)
        #expect(result.replicatedTxid == 1497)
        withExtendedLifetime(fake) {}
    }
}
