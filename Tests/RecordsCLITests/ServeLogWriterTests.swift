import Foundation
import TestSupport
import Testing

@testable import records

#if canImport(Glibc)
    import Glibc
#endif

/// The server's log writer: lines out in order from a thread of its own;
/// a reader that does not keep up stops no caller, and is told what it
/// missed.
@Suite("records serve: the log writer")
struct ServeLogWriterTests {
    /// A pipe: the writer's end and the test's.
    struct Pipe {
        let read: Int32
        let write: Int32
        init() throws {
            var ends: [Int32] = [0, 0]
            try #require(pipe(&ends) == 0)
            read = ends[0]
            write = ends[1]
        }

        /// Reads until `marker` has come, or until the end (the writer's
        /// end closed).
        func read(until marker: String? = nil) -> String {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while marker.map({ !String(decoding: received, as: UTF8.self).contains($0) }) ?? true {
                let count = Glibc.read(read, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                received.append(contentsOf: chunk[0..<count])
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    @Test("Lines come out whole and in order; flush returns once they are written")
    func inOrder() async throws {
        let pipe = try Pipe()
        defer {
            close(pipe.read)
            close(pipe.write)
        }
        let writer = ServeLogWriter(
            descriptor: pipe.write,
            lead: { date, bytes in bytes.append(contentsOf: "\(Int(date.timeIntervalSince1970)) records serve: ".utf8) }
        )
        // Whole lines, and messages after the lead of their time.
        for number in 0..<500 {
            if number.isMultiple(of: 2) {
                writer.write("line \(number)")
            } else {
                writer.write("message \(number)", at: Date(timeIntervalSince1970: TimeInterval(number)))
            }
        }
        #expect(await onOwnThread { writer.flush(timeout: 60) })
        writer.write("end")
        let text = await onOwnThread { pipe.read(until: "end\n") }
        let expected =
            (0..<500).map { $0.isMultiple(of: 2) ? "line \($0)\n" : "\($0) records serve: message \($0)\n" }.joined()
            + "end\n"
        #expect(text == expected)
    }

    /// Text a reading thread hands back (written before its semaphore is
    /// signalled, read after it is waited for).
    final class Received: @unchecked Sendable {
        var text = ""
    }

    @Test("A reader that does not read stops no writer: lines beyond the room are dropped, then counted")
    func unreadPipe() async throws {
        let pipe = try Pipe()
        defer { close(pipe.read) }
        let writer = ServeLogWriter(
            descriptor: pipe.write, capacity: 4096,
            lead: { _, bytes in bytes.append(contentsOf: "T records serve: ".utf8) })
        // What blocks (flushes, the reader) runs on threads of its own, never
        // on one of the suite's few cooperative threads, which other tests
        // need meanwhile.
        let outcome = await onOwnThread {
            () -> (stuck: Bool, total: Int, droppedBefore: Int, flushed: Bool, text: String) in
            let line = String(repeating: "x", count: 90)
            var total = 0
            // Until the pipe (64 KiB) is full and the writer's thread waits
            // for a reader: then even a flush cannot finish.
            var stuck = false
            for _ in 0..<2_000 where !stuck {
                for _ in 0..<100 {
                    writer.write("\(total) \(line)")
                    total += 1
                }
                stuck = !writer.flush(timeout: 0.05)
            }
            guard stuck else { return (false, total, 0, false, "") }
            // Many more: every call returns although nothing reads.
            for _ in 0..<1_000 {
                writer.write("\(total) \(line)")
                total += 1
            }
            let droppedBefore = writer.droppedCount
            // Once read, what waited comes out, and how many lines were lost.
            let received = Received()
            let done = DispatchSemaphore(value: 0)
            let reader = Thread {
                received.text = pipe.read()
                done.signal()
            }
            reader.start()
            let flushed = writer.flush(timeout: 600)
            // The end of the pipe for the reader.
            close(pipe.write)
            done.wait()
            return (true, total, droppedBefore, flushed, received.text)
        }
        try #require(outcome.stuck)
        #expect(outcome.droppedBefore > 0)
        #expect(outcome.flushed)
        let lines = outcome.text.split(separator: "\n")
        let reports = lines.filter { $0.hasPrefix("T records serve: ") }
        let written = lines.filter { !$0.hasPrefix("T ") }.map { Int($0.split(separator: " ")[0]) ?? -1 }
        #expect(!reports.isEmpty)
        #expect(written.first == 0 && zip(written, written.dropFirst()).allSatisfy { $0 < $1 })
        let dropped = reports.compactMap { report in
            report.firstMatch(
                of: /^T records serve: ([0-9]+) log lines? dropped: standard error was not read fast enough$/
            )
            .flatMap { Int($0.1) }
        }
        #expect(dropped.count == reports.count, "\(reports)")
        #expect(written.count + dropped.reduce(0, +) == outcome.total)
        #expect(writer.droppedCount == 0)
    }
}
