import Testing

extension Tag {
    /// Suites whose tests race threads, tasks or processes against each
    /// other. CI runs every suite with this tag again under Thread
    /// Sanitizer (`.ci/run` selects them by the tag), so a new suite of
    /// that kind carries it.
    @Tag public static var concurrency: Self
    /// Tests that only run when file permissions bind the test process:
    /// skipped as root, who reads and writes any file. CI runs the tests
    /// with this tag again as an unprivileged user (`.ci/run` selects them
    /// by the tag), so a new test of that kind carries it.
    @Tag public static var unprivileged: Self
}
