import Foundation
import RecordsApp

/// Edit forms that lose no one's changes: every edit form carries the
/// version of the record it shows (``RecordVersion``) and, for each field,
/// the value it was opened with; saving is conditional on that version.
/// When someone else saved the record meanwhile, nothing is written and the
/// form comes back (409) with the value now stored ("theirs") beside the
/// value typed ("yours") for every field that differs, so the person can
/// keep theirs, take the stored values, or choose field by field, with no
/// script needed.
///
/// The form's fields:
///
/// | Field | What |
/// |---|---|
/// | `version` | the version the form was opened at (16 hexadecimal characters) |
/// | `was-NAME` | the value field `NAME` was opened with: a field only someone else changed defaults to their value |
/// | `take=yours` (a button) | save every typed value (`yours-NAME`), whatever the choices |
///
/// A form sent without `version` (a page saved before versions, a script
/// posting the form) saves nothing: it cannot tell what the person saw, so
/// it is answered as a conflict (409), the stored values beside the typed
/// ones, with the current version to save over. A malformed version is
/// refused (400) before anything is read.
enum EditConflict {
    /// One field of an edit form, as the conflict shows it.
    struct Value: Sendable, Equatable {
        /// The form field's name.
        var name: String
        /// The visible label.
        var label: String
        /// What the person typed.
        var yours: String
        /// What is stored now.
        var theirs: String
        /// What the form was opened with, when it said so.
        var original: String?

        /// Whether the field is shown as a choice: the values differ and
        /// the stored one is not simply the one the form was opened with
        /// (then only the person changed it, and the typed value stands).
        var isConflict: Bool { yours != theirs && (original == nil || theirs != original) }

        /// Whether the stored value is chosen at first: the person left the
        /// field as it was opened, so only someone else changed it.
        var prefersTheirs: Bool { original != nil && yours == original }
    }

    /// The hidden fields an edit form carries: the version and the value
    /// each field was opened with.
    static func hiddenFields(version: RecordVersion, originals: [(name: String, value: String)]) -> HTML {
        let was = originals.map { "<input type=\"hidden\" name=\"was-\($0.name)\" value=\"\($0.value)\">" as HTML }
        return """
            <input type="hidden" name="version" value="\(version.description)" id="field-version">\(was)
            """
    }

    /// The hidden fields of a form sent back (a validation error): the
    /// version and the opening values it came with, unchanged.
    static func carried(_ form: Form) -> HTML {
        let version: HTML? = form["version"].flatMap(RecordVersion.init).map {
            "<input type=\"hidden\" name=\"version\" value=\"\($0.description)\" id=\"field-version\">"
        }
        let was = form.fields.keys.filter { $0.hasPrefix("was-") }.sorted().map { name -> HTML in
            "<input type=\"hidden\" name=\"\(name)\" value=\"\(form.text(name))\">"
        }
        return "\(version)\(was)"
    }

    /// The attributes that tell the live script which record an open edit
    /// form shows: the app's topic and the page to read the stored version
    /// from (see `live.js`).
    static func liveAttributes(topic: String, source: String) -> HTML {
        " data-live-form=\"\(topic)\" data-live-source=\"\(source)\""
    }

    /// The version the form was opened at; nil when it sent none, which an
    /// edit answers as a conflict (``form(_:kind:formID:action:reload:topic:values:version:field:extra:)``
    /// says why), never by saving unconditionally.
    ///
    /// - Throws: ``HTTPError`` 400 when it is not a version this site
    ///   writes.
    static func submittedVersion(_ form: Form) throws -> RecordVersion? {
        guard let text = form["version"], !text.isEmpty else { return nil }
        guard let version = RecordVersion(text) else {
            throw HTTPError.badRequest(
                "The form's record version is not one this site writes. Open the form again and redo the change.")
        }
        return version
    }

    /// The form as the person resolved a conflict: after "Keep all of
    /// mine" (`take=yours`), each field holds the value typed before
    /// (`yours-NAME`) whatever its choice said; otherwise the form as sent.
    static func resolved(_ form: Form) -> Form {
        guard form["take"] == "yours" else { return form }
        var fields = form.fields
        for (name, value) in form.fields where name.hasPrefix("yours-") {
            fields[String(name.dropFirst("yours-".count))] = value
        }
        return Form(fields)
    }

    /// The fields of a conflict: for each `(name, label, stored value)`,
    /// the typed value and the one the form was opened with, from `form`.
    static func values(_ form: Form, stored: [(name: String, label: String, value: String)]) -> [Value] {
        stored.map {
            Value(
                name: $0.name, label: $0.label, yours: form.text($0.name), theirs: $0.value,
                original: form["was-" + $0.name])
        }
    }

    /// The conflict's form, in place of the edit form: the banner, every
    /// field (a choice for each that differs, `field` for the others,
    /// holding the typed value), the hidden fields for saving over
    /// `version`, and the three ways on.
    ///
    /// - Parameters:
    ///   - kind: What the record is, for the banner ("person").
    ///   - formID: The edit form's id, kept so the page is the same form.
    ///   - action: Where the form posts (the edit route).
    ///   - reload: The edit form's address, which shows the stored values.
    ///   - topic: The app's live topic.
    ///   - field: Renders a field that is not in conflict, with a value.
    ///   - extra: More of the form after the fields (the profile's
    ///     password).
    static func form(
        _ request: Request, kind: String, formID: String, action: String, reload: String, topic: String,
        values: [Value], version: RecordVersion,
        field: (Value, String) -> HTML = { Field.input($0.name, label: $0.label, value: $1) }, extra: HTML = ""
    ) -> HTML {
        let conflicts = values.filter(\.isConflict)
        let message: HTML =
            (request.form["version"] ?? "").isEmpty
            ? "This form was sent without the version of the \(kind) it was opened at, so it cannot tell whether someone else saved it since. Nothing was saved: check your values against the saved ones below, then save again, or reload the form."
            : conflicts.isEmpty
                ? "Someone else saved this \(kind) after you opened the form, but not in the fields you see. Nothing was saved: save again to keep your values."
                : "Someone else saved this \(kind) after you opened the form. Nothing was saved. For each field below, choose their value (saved now) or yours, then save; or keep all of yours, or take the saved values."
        let rows = values.map { value -> HTML in
            guard value.isConflict else { return field(value, value.yours) }
            return choice(value)
        }
        // Saving again is conditional on the stored version the person has
        // now seen; the values they typed travel along for "Keep all of
        // mine", and the stored ones become what the form was opened with.
        let yours = values.map {
            "<input type=\"hidden\" name=\"yours-\($0.name)\" value=\"\($0.yours)\">" as HTML
        }
        return """
            <div class="form-error conflict-banner" role="alert" id="conflict">\(message)</div>
            <form method="post" action="\(action)" class="card" id="\(formID)" novalidate\(liveAttributes(topic: topic, source: reload))>
            \(Layout.csrfField(request))
            \(hiddenFields(version: version, originals: values.map { ($0.name, $0.theirs) }))\(yours)
            \(rows)
            \(extra)
            <p class="actions"><button type="submit" id="conflict-save">Save the chosen values</button>
            <button type="submit" class="secondary" name="take" value="yours" id="conflict-keep-yours">Keep all of mine</button>
            <a class="button secondary" href="\(reload)" id="conflict-take-theirs">Take the saved values</a></p>
            </form>
            """
    }

    /// A field in conflict: the stored value and the typed one, one radio
    /// button each, named as the field so the chosen value is what the
    /// form sends.
    private static func choice(_ value: Value) -> HTML {
        let id = "field-" + value.name
        let theirsChecked: HTML = value.prefersTheirs ? " checked" : ""
        let yoursChecked: HTML = value.prefersTheirs ? "" : " checked"
        return """
            <fieldset class="field conflict" id="conflict-\(value.name)">
            <legend>\(value.label)</legend>
            <label class="choice"><input type="radio" name="\(value.name)" value="\(value.theirs)" id="\(id)-theirs"\(theirsChecked)> \
            Theirs, saved now: <span class="conflict-theirs" id="\(id)-theirs-value">\(shown(value.theirs))</span></label>
            <label class="choice"><input type="radio" name="\(value.name)" value="\(value.yours)" id="\(id)-yours"\(yoursChecked)> \
            Yours: <span class="conflict-yours" id="\(id)-yours-value">\(shown(value.yours))</span></label>
            </fieldset>
            """
    }

    /// A value to read: an empty one said so.
    private static func shown(_ text: String) -> HTML { text.isEmpty ? "<em>(empty)</em>" : "<bdi>\(text)</bdi>" }
}
