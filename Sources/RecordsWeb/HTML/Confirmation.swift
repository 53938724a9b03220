/// The page that asks before an action that cannot be undone (revoking a
/// token, removing a picture, ending a session): a heading that asks, what
/// will happen, and a POST form (with the CSRF field) whose red button
/// acts, beside a link that leaves everything as it is. The GET that shows
/// it changes nothing; only the form's POST acts.
///
/// Deleting a record asks the same way, with its own wording
/// (``ListControls/confirmDelete(_:shown:section:action:cancel:unreadable:version:changed:consequence:)``).
struct Confirmation: Sendable {
    /// The page's title, a question ("End this session?").
    var title: String
    /// The heading, the same question (with names isolated in `<bdi>`).
    var heading: HTML
    /// What will happen, and anything to know first.
    var details: HTML
    /// Where the form posts.
    var action: String
    /// The form's ID.
    var formID: String
    /// The button's label ("Remove") and ID.
    var button: (label: String, id: String)
    /// Where the link that keeps things as they are leads, and its label.
    var cancel: (href: String, label: String) = ("/account", "Keep it")
    /// Hidden fields the form carries besides the CSRF field (a version).
    var hidden: HTML? = nil
    /// The navigation section the page belongs to.
    var section: String? = nil

    /// The page, answered with `status`.
    func page(_ request: Request, status: Int = 200) -> Response {
        Layout.page(
            request, title: title, section: section, status: status,
            content: """
                <h1>\(heading)</h1>
                \(details)
                <form method="post" action="\(action)" class="card" id="\(formID)">
                \(Layout.csrfField(request))\(hidden)
                <p class="actions"><button type="submit" class="danger" id="\(button.id)">\(button.label)</button>
                <a href="\(cancel.href)">\(cancel.label)</a></p>
                </form>
                """)
    }
}
