import Testing

extension Tag {
    /// Suites whose tests race threads, tasks or processes against each
    /// other. CI runs every suite with this tag again under Thread
    /// Sanitizer (`.ci/run` selects them by the tag), so a new suite of
    /// that kind carries it.
    @Tag public static var concurrency: Self
}
