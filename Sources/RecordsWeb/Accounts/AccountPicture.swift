import Foundation
import HTTPServer
import RecordsApp

/// The profile picture: shown and uploaded on the account page (beside
/// the profile it belongs to), checked as it
/// arrives by the Coffee app's picture rules (``PictureUpload``: PNG,
/// JPEG, GIF or WebP, within the size limit), kept in the database, and
/// served back in chunks with its version as a strong `ETag`, as a
/// coffee's picture is.
extension AccountPageHandlers {
    func pictureRoutes() -> [Route] {
        let users = self.users
        return [
            Route.get("/account/picture") { request in try await picture(request) },
            Route(
                "POST", "/account/picture",
                body: .upload(field: "picture", limit: users.pictureSizeLimit) { start in
                    users.makePictureUpload(name: start.fileName.isEmpty ? "the picture" : start.fileName)
                },
                invalidForm: { request, problem in
                    let refusal: any Error =
                        problem.kind == .tooLarge
                        ? PictureError(.tooLarge(size: nil, limit: users.pictureSizeLimit), subject: "the picture")
                        : problem
                    return try await pictureRefused(request, refusal)
                }
            ) { request in try await storePicture(request) },
            Route.get("/account/picture/remove") { request in try await confirmPictureRemoval(request) },
            Route.post("/account/picture/remove") { request in
                guard let session = request.session else { throw HTTPError.notFound }
                let removed = try await users.removePicture(userID: session.userID)
                return Layout.redirect(
                    to: "/account", flash: removed ? "Picture removed." : "You have no picture to remove.",
                    request: request)
            },
        ]
    }

    /// The page that asks before the picture is removed, showing it; with
    /// no picture (removed in another tab), back to the account page.
    private func confirmPictureRemoval(_ request: Request) async throws -> Response {
        guard let session = request.session else { throw HTTPError.notFound }
        guard try await users.pictureVersion(userID: session.userID) != nil else {
            return Layout.redirect(to: "/account", flash: "You have no picture to remove.", request: request)
        }
        return Confirmation(
            title: "Remove your profile picture?", heading: "Remove your profile picture?",
            details: """
                <p><img class="picture" id="profile-picture" src="/account/picture" alt="Your profile picture"></p>
                <p>This removes the picture from your profile. It cannot be undone.</p>
                """,
            action: "/account/picture/remove", formID: "remove-picture-form", button: ("Remove", "confirm-remove")
        ).page(request)
    }

    /// The signed-in user's picture, streamed from its row; `HEAD` and a
    /// matching `If-None-Match` are answered without reading the bytes.
    private func picture(_ request: Request) async throws -> Response {
        guard let session = request.session else { throw HTTPError.notFound }
        let picture: PictureReader
        do {
            picture = try await users.openPicture(userID: session.userID)
        } catch is PictureError {
            throw HTTPError.notFound
        }
        return CoffeePages.pictureResponse(request, picture)
    }

    private func storePicture(_ request: Request) async throws -> Response {
        guard let session = request.session else { throw HTTPError.notFound }
        if let refusal = request.uploadError { return try await pictureRefused(request, refusal) }
        guard let upload = request.upload as? PictureUpload else {
            return try await pictureRefused(request, HTTPError.badRequest("Choose a picture to upload."))
        }
        do {
            try await users.setPicture(userID: session.userID, from: .upload(upload))
        } catch let error as PictureError {
            return try await pictureRefused(request, error)
        }
        return Layout.redirect(to: "/account", flash: "Picture saved.", request: request)
    }

    /// The account page again, with why the picture was refused beside
    /// its field (413 over the limit, 400 not a picture).
    private func pictureRefused(_ request: Request, _ error: any Error) async throws -> Response {
        let (status, message) = try CoffeePages.pictureRefusal(error)
        // The app's message starts with the file's name, kept as it was sent.
        let sentence = error is PictureError ? "The picture was refused: \(message)." : Problem.sentence(message)
        return try await account(request, status: status, pictureError: sentence)
    }

    /// The picture section of the account page: the picture (if any)
    /// with a link to the page that asks before removing it, and the
    /// upload form.
    func pictureSection(_ request: Request, userID: Int64, error: String?) async throws -> HTML {
        let version = try await users.pictureVersion(userID: userID)
        let hasPicture = version != nil
        let limit = CoffeePicture.sizeText(users.pictureSizeLimit)
        // Live: a picture stored or removed elsewhere (another tab) shows
        // here, the address changing with the picture's version.
        let current: HTML =
            version.map { version in
                """
                <div id="picture-current" data-live-topics="users">
                <p><img class="picture" id="profile-picture" src="\(HTML.path(["account", "picture"], query: [("v", String(version))]))" alt="Your profile picture"></p>
                <p><a class="button secondary" href="/account/picture/remove" id="remove-picture">Remove the picture</a></p>
                </div>
                """
            }
            ?? "<div id=\"picture-current\" data-live-topics=\"users\"><p id=\"no-picture\">You have no picture.</p></div>"
        let fileError: HTML? = error.map { "<p class=\"error\" id=\"field-picture-error\">\($0)</p>" }
        let invalid: HTML = error == nil ? "" : " aria-invalid=\"true\" aria-describedby=\"field-picture-error\""
        return """
            <h2 id="picture-heading">Picture</h2>
            \(current)
            <form method="post" action="/account/picture" enctype="multipart/form-data" class="card" id="picture-form">
            \(Layout.csrfField(request))
            <div class="field\(error == nil ? "" : " invalid")">
            <label for="field-picture">\(hasPicture ? "Replace the picture" : "Add a picture")</label>
            <p class="hint" id="field-picture-hint">PNG, JPEG, GIF or WebP, up to \(limit).</p>
            <input id="field-picture" name="picture" type="file" accept="image/png,image/jpeg,image/gif,image/webp" required\(invalid)>
            \(fileError)
            </div>
            <div class="actions"><button type="submit" id="picture-submit">Upload</button></div>
            </form>
            """
    }
}
