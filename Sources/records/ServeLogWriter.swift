import Foundation

/// Writes the server's log lines to a descriptor (standard error) from a
/// thread of its own, so that the threads serving requests never wait for
/// it: each request's line was a `write` on the event loop's thread, about
/// 3% of a small request's time, and a reader of standard error that did
/// not keep up (a full pipe, a stopped terminal) would have stopped every
/// connection of that thread until it read again.
///
/// Lines are written in the order they came, at most ``gathering`` after
/// they came: the thread, woken by a first line, lets more gather for that
/// long (or until half the room is taken) and writes them all at once, so
/// that a busy server's log costs a wake-up and a `write` for many lines,
/// not for each. ``flush()`` returns once every line given before it is
/// written: `records serve` calls it before it ends, so nothing logged is
/// left unwritten by a clean exit.
///
/// What waits is bounded (``capacity`` bytes): while the reader does not
/// read, further lines are dropped, counted, and a line saying how many
/// were dropped is written once it reads again. A server must not run out
/// of memory, nor stop serving, for its log.
final class ServeLogWriter: @unchecked Sendable {
    /// The most bytes waiting to be written; lines beyond are dropped.
    let capacity: Int
    /// How long lines may gather before they are written.
    let gathering: TimeInterval
    private let descriptor: Int32
    private let lead: @Sendable (Date, inout [UInt8]) -> Void
    /// How long the lead is (measured once: its time has a fixed width).
    private let leadLength: Int
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var waiting: [UInt8] = []
    /// The buffer the thread last wrote, emptied: ``waiting`` takes it
    /// when the thread takes its lines, so that no buffer grows anew.
    private var spare: [UInt8] = []
    private var dropped = 0
    /// Whether the thread is writing what it took (``flush()`` waits for it).
    private var writing = false
    private var started = false
    /// Whether the thread waits for a first line (it is woken for it).
    private var idle = false
    /// How many ``flush()`` calls wait (the thread then writes at once).
    private var flushing = 0

    /// A writer to `descriptor`; `lead` writes what begins a line of
    /// ``write(_:at:)`` (its time), and the line that counts dropped lines.
    init(
        descriptor: Int32, capacity: Int = 1 << 20, gathering: TimeInterval = 0.01,
        lead: @escaping @Sendable (Date, inout [UInt8]) -> Void
    ) {
        self.descriptor = descriptor
        self.capacity = capacity
        self.gathering = gathering
        self.lead = lead
        var sample: [UInt8] = []
        lead(Date(), &sample)
        leadLength = sample.count
    }

    /// Queues `message` as a line that begins with the writer's lead for
    /// `date`, and returns at once. The line is put together in the
    /// writer's buffer: no text is made for it on the way.
    func write(_ message: String, at date: Date) {
        condition.lock()
        defer { condition.unlock() }
        startIfNeeded()
        let before = waiting.count
        // Dropped before it is written, so that the buffer never grows past its room.
        guard before + leadLength + message.utf8.count + 1 <= capacity else {
            dropped += 1
            return
        }
        lead(date, &waiting)
        waiting.append(contentsOf: message.utf8)
        waiting.append(UInt8(ascii: "\n"))
        queued(after: before)
    }

    /// Queues `line` (a newline is added) and returns at once.
    func write(_ line: String) {
        condition.lock()
        defer { condition.unlock() }
        startIfNeeded()
        let before = waiting.count
        guard before + line.utf8.count + 1 <= capacity else {
            dropped += 1
            return
        }
        waiting.append(contentsOf: line.utf8)
        waiting.append(UInt8(ascii: "\n"))
        queued(after: before)
    }

    /// A line was added to ``waiting``, which held `before` bytes: the
    /// thread is woken for the first line, and once half the room is
    /// taken. Called with the lock held.
    private func queued(after before: Int) {
        if idle || (before < capacity / 2 && waiting.count >= capacity / 2) { condition.broadcast() }
    }

    /// Returns once every line queued before the call is written (or its
    /// write failed), or after `timeout` if the descriptor takes nothing
    /// (a pipe nobody reads): ending must not hang on the log.
    ///
    /// - Returns: Whether everything was written.
    @discardableResult
    func flush(timeout: TimeInterval = 5) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        flushing += 1
        defer { flushing -= 1 }
        condition.broadcast()
        while !waiting.isEmpty || writing || (dropped > 0 && started) {
            guard condition.wait(until: deadline) else { return false }
        }
        return true
    }

    /// Lines dropped so far and not yet reported.
    var droppedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return dropped
    }

    // Called with the lock held.
    private func startIfNeeded() {
        guard !started else { return }
        started = true
        let thread = Thread { [self] in run() }
        thread.name = "records-log"
        thread.stackSize = 128 * 1024
        thread.start()
    }

    private func run() {
        while true {
            condition.lock()
            while waiting.isEmpty && dropped == 0 {
                idle = true
                condition.wait()
                idle = false
            }
            let gathered = Date(timeIntervalSinceNow: gathering)
            while flushing == 0 && waiting.count < capacity / 2 && condition.wait(until: gathered) {}
            var batch = spare
            spare = []
            swap(&batch, &waiting)
            let lost = dropped
            dropped = 0
            writing = true
            condition.unlock()
            // A failed write (a closed pipe) loses the log; the server goes on.
            if !batch.isEmpty { _ = batch.withUnsafeBytes { StandardStream.write($0, to: descriptor) } }
            if lost > 0 {
                var line: [UInt8] = []
                lead(Date(), &line)
                line.append(
                    contentsOf:
                        "\(lost) log line\(lost == 1 ? "" : "s") dropped: standard error was not read fast enough\n"
                        .utf8)
                _ = line.withUnsafeBytes { StandardStream.write($0, to: descriptor) }
            }
            batch.removeAll(keepingCapacity: true)
            condition.lock()
            spare = batch
            writing = false
            condition.broadcast()
            condition.unlock()
        }
    }
}
