import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TestServer {
    /// Stops the server and closes the database on a thread of its own,
    /// returning at once. `stop()` blocks while requests in flight finish,
    /// and their handlers run on Swift's concurrency threads (two on a
    /// two-core machine): tests running side by side that each block one
    /// of them in `stop()` can leave none for those handlers.
    func stopInBackground() {
        let thread = Thread { self.stop() }
        thread.name = "test-server-stop"
        thread.start()
    }
}
