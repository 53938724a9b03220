import Foundation

/// Form fields in the site's markup: a label for every field, the error
/// beside it (linked with `aria-describedby`), the value kept.
public enum Field {
    /// A one-line input.
    ///
    /// - Parameters:
    ///   - name: The field's name (its id is `field-NAME`).
    ///   - label: The visible label.
    ///   - value: The value to show (kept after a failed submit).
    ///   - error: The message beside the field, if it is wrong.
    ///   - type: The input type (`text`, `email`, `password`, `number`,
    ///     `date`, `search`, `tel`).
    ///   - required: Whether the browser should require it.
    ///   - autocomplete: The autocomplete hint (`name`, `email`,
    ///     `current-password`, `new-password`, …).
    ///   - hint: A line of help under the label.
    ///   - attributes: More attributes, such as `inputmode="decimal"`.
    public static func input(
        _ name: String, label: String, value: String? = nil, error: String? = nil, type: String = "text",
        required: Bool = false, autocomplete: String? = nil, hint: String? = nil, attributes: HTML = ""
    ) -> HTML {
        let id = "field-" + name
        let described = [hint.map { _ in id + "-hint" }, error.map { _ in id + "-error" }].compactMap { $0 }
        let describedBy: HTML? =
            described.isEmpty ? nil : " aria-describedby=\"\(described.joined(separator: " "))\""
        let invalid: HTML? = error == nil ? nil : " aria-invalid=\"true\""
        let requiredAttribute: HTML? = required ? " required" : nil
        let autocompleteAttribute: HTML? = autocomplete.map { " autocomplete=\"\($0)\"" }
        // Passwords are never sent back to the browser.
        let shown = type == "password" ? nil : value
        let valueAttribute: HTML? = shown.map { " value=\"\($0)\"" }
        let extra: HTML? = attributes.isEmpty ? nil : " " + attributes
        return """
            <div class="field\(error == nil ? "" : " invalid")">
            <label for="\(id)">\(label)</label>
            \(hint.map { "<p class=\"hint\" id=\"\(id)-hint\">\($0)</p>" as HTML })
            <input id="\(id)" name="\(name)" type="\(type)"\(valueAttribute)\(requiredAttribute)\(autocompleteAttribute)\(invalid)\(describedBy)\(extra)>
            \(error.map { "<p class=\"error\" id=\"\(id)-error\">\($0)</p>" as HTML })
            </div>
            """
    }

    /// A summary of a form's problems at its top, for a failed submit.
    ///
    /// It is an alert, and focusable by script only (`tabindex="-1"`):
    /// the site's script moves the focus to it when the page loads, so a
    /// keyboard or screen reader starts at the problems, not at the top of
    /// the page (see ``StaticFiles/scriptTags(for:)``).
    public static func errorSummary(_ message: String?) -> HTML {
        guard let message else { return "" }
        return "<p class=\"form-error\" role=\"alert\" id=\"form-error\" tabindex=\"-1\">\(message)</p>"
    }
}
