import Foundation
import Testing

@testable import RecordsWeb

/// Reading the token out of an `Authorization` header: its quick path for
/// a header with nothing to trim must give what trimming gives.
@Suite struct APIBearerHeaderTests {
    @Test(
        "The secret is the header's second word, trimmed of spaces, when the first is Bearer",
        arguments: [
            "Bearer abc", "bearer abc", "BEARER abc", "Bearer  abc", "Bearer abc ", "Bearer \tabc\t",
            "Bearer \u{00A0}abc\u{2003}", "Bearer a b", "Bearer é", "Bearer abc\u{00A0}", "Bearer", "Bearer ",
            "Basic abc", "abc", "", "Bearer \t", "Bearer " + String(repeating: "x", count: 200),
            "Bearer " + String(repeating: "x", count: 201),
        ])
    func secretOfHeader(_ header: String) {
        #expect(BearerAuthentication.bearerSecret(header) == Self.reference(header))
    }

    /// The header's secret as the rule states it, with Foundation's trimming.
    private static func reference(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let secret = parts[1].trimmingCharacters(in: .whitespaces)
        return secret.isEmpty || secret.utf8.count > 200 ? nil : secret
    }
}
