import Foundation
import RecordsApp
import RecordsWeb
import TestSupport
import Testing

/// Registration with only what an account needs, the optional profile
/// fields on the profile page, the profile picture, and the messages.
@Suite("Accounts: short registration, optional profile, picture")
struct AccountsProfileFormsTests {
    static let minimal: [(String, String)] = [
        ("firstName", "Grace"), ("lastName", "Hopper"), ("email", "grace@example.com"),
        ("password", "correct horse"), ("passwordConfirmation", "correct horse"),
    ]

    @Test func registeringWithOnlyTheNamesEmailAndPasswordWorks() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        let registered = try await client.register(Self.minimal)
        #expect(registered.status == 303)
        let account = try await client.get("/account")
        #expect(account.body.contains("<dd>Grace Hopper</dd>"))
        #expect(account.body.contains("<dt>Postal code</dt><dd>Not given</dd>"))
        #expect(account.body.contains("<dt>Date of birth</dt><dd>Not given</dd>"))
        #expect(account.body.contains("id=\"no-picture\""))
        let user = try #require(try await UsersStore(database: server.database).user(email: "grace@example.com"))
        #expect(user.mobile == "" && user.pincode == "" && user.dateOfBirth == "" && user.gender == .unspecified)
    }

    @Test func aRegistrationMissingRequiredFieldsNamesEachByItsLabel() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        let refused = try await client.register([
            ("firstName", ""), ("lastName", "<b>Hopper</b>"), ("email", ""), ("password", "correct horse"),
            ("passwordConfirmation", "correct horse"),
        ])
        #expect(refused.status == 422)
        #expect(refused.body.contains("id=\"field-firstName-error\">First name is required.</p>"))
        #expect(refused.body.contains("id=\"field-email-error\">Email is required.</p>"))
        #expect(refused.body.contains("value=\"&lt;b&gt;Hopper&lt;/b&gt;\""))
        #expect(!refused.body.contains("<b>Hopper</b>"))
        #expect(try await UsersStore(database: server.database).count() == 0)
    }

    @Test func theProfilePageAddsOptionalFieldsWithAnISODate() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        _ = try await client.register(Self.minimal)
        let form = try await client.get("/account/edit")
        // The picker shows and sends ISO dates; no hint names another format.
        #expect(form.body.contains("id=\"field-dateOfBirth\" name=\"dateOfBirth\" type=\"date\""))
        #expect(!form.body.contains("field-dateOfBirth-hint"))
        #expect(!form.body.contains("name=\"imageName\""))
        #expect(!form.body.contains("id=\"field-pincode\" name=\"pincode\" type=\"text\" value=\"\" required"))
        let fields: [(String, String)] = [
            ("firstName", "Grace"), ("lastName", "Hopper"), ("email", "grace@example.com"), ("city", "Arlington"),
            ("pincode", "22201"), ("dateOfBirth", "1906-12-09"), ("gender", "female"),
        ]
        let saved = try await client.postEdit("/account/edit", fields)
        #expect(saved.status == 303)
        let account = try await client.get("/account")
        #expect(account.body.contains("<dt>Postal code</dt><dd>22201</dd>"))
        #expect(account.body.contains("<dt>Date of birth</dt><dd>1906-12-09</dd>"))
        #expect(account.body.contains("<dt>Mobile</dt><dd>Not given</dd>"))
    }

    @Test(arguments: ["09/12/1906", "1906-12-9", "9 December 1906", "1906-02-30"])
    func aDateNotWrittenISOIsRefusedByItsLabel(_ date: String) async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        _ = try await client.register(Self.minimal)
        let refused = try await client.postEdit(
            "/account/edit", [("firstName", "Grace"), ("pincode", "12"), ("dateOfBirth", date)])
        #expect(refused.status == 422)
        #expect(
            refused.body.contains(
                "id=\"field-dateOfBirth-error\">Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31.</p>"
            ))
        #expect(refused.body.contains("id=\"field-pincode-error\">Postal code must be 3 to 10 digits.</p>"))
        #expect(try await UsersStore(database: server.database).user(email: "grace@example.com")?.dateOfBirth == "")
    }

    @Test func aProfileSavedWithoutItsVersionIsAConflictAndSavesNothing() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        _ = try await client.register(Self.minimal)
        _ = try await client.get("/account/edit")
        let refused = try await client.post("/account/edit", [("firstName", "Grace"), ("city", "Arlington")])
        #expect(refused.status == 409)
        #expect(refused.body.contains("sent without the version of the profile"))
        #expect(refused.body.contains("name=\"version\" value=\""))
        #expect(try await UsersStore(database: server.database).user(email: "grace@example.com")?.city == "")
    }

    // MARK: - The picture

    static func pictureServer() throws -> TestServer {
        try accountsServer(configure: { $0.pictureSizeLimit = 64 * 1024 })
    }

    static func upload(_ client: WebClient, name: String = "me.png", type: String = "image/png", _ data: Data)
        async throws -> WebResponse
    {
        _ = try await client.get("/account")
        return try await client.postMultipart(
            "/account/picture", fields: [], file: ("picture", name, type, data))
    }

    @Test func aPictureUploadedIsServedWithAnETagAndRemoved() async throws {
        let server = try Self.pictureServer()
        defer { server.stop() }
        let client = server.client()
        _ = try await client.register(Self.minimal)
        let picture = WebPictures.make(count: 5000)
        let saved = try await Self.upload(client, picture)
        #expect(saved.status == 303)
        #expect(saved.location == "/account")
        let account = try await client.get("/account")
        #expect(account.body.contains("Picture saved."))
        #expect(account.body.contains("id=\"profile-picture\" src=\"/account/picture?v="))
        let served = try await client.get("/account/picture")
        #expect(served.status == 200)
        #expect(served.header("content-type") == "image/png")
        #expect(served.data == picture)
        let tag = try #require(served.header("etag"))
        #expect(try await client.get("/account/picture", headers: ["If-None-Match": tag]).status == 304)
        // A new picture is a new tag.
        _ = try await Self.upload(
            client, name: "me.jpg", type: "image/jpeg", WebPictures.make(WebPictures.jpeg, count: 900))
        let replaced = try await client.get("/account/picture")
        #expect(replaced.header("content-type") == "image/jpeg")
        #expect(replaced.header("etag") != tag)
        // Another account does not see it.
        let other = server.client()
        _ = try await other.register(registrationFields(email: "bob@example.com", first: "Bob"))
        #expect(try await other.get("/account/picture").status == 404)
        _ = try await client.get("/account")
        let removed = try await client.post("/account/picture/remove", [])
        #expect(removed.status == 303)
        #expect(try await client.get("/account/picture").status == 404)
    }

    @Test func removingThePictureAsksFirstAndOnlyThePostWithItsTokenRemovesIt() async throws {
        let server = try Self.pictureServer()
        defer { server.stop() }
        let client = server.client()
        _ = try await client.register(Self.minimal)
        _ = try await Self.upload(client, WebPictures.make(count: 2000))
        let account = try await client.get("/account")
        // The account page leads to the question; it has no form that removes at once.
        #expect(account.body.contains("href=\"/account/picture/remove\" id=\"remove-picture\""))
        #expect(!account.body.contains("action=\"/account/picture/remove\""))
        let confirm = try await client.get("/account/picture/remove")
        #expect(confirm.status == 200)
        #expect(confirm.body.contains("<h1>Remove your profile picture?</h1>"))
        #expect(confirm.body.contains("This removes the picture from your profile. It cannot be undone."))
        #expect(confirm.body.contains("action=\"/account/picture/remove\" class=\"card\" id=\"remove-picture-form\""))
        #expect(confirm.body.contains("<input type=\"hidden\" name=\"csrf\""))
        #expect(confirm.body.contains("<a href=\"/account\">Keep it</a>"))
        // Asking removed nothing; a POST without the form's token is refused and removes nothing.
        #expect(try await client.get("/account/picture").status == 200)
        #expect(try await client.post("/account/picture/remove", [], addCSRF: false).status == 403)
        #expect(try await client.get("/account/picture").status == 200)
        let removed = try await client.post("/account/picture/remove", [])
        #expect(removed.status == 303 && removed.location == "/account")
        #expect(try await client.get("/account/picture").status == 404)
        // Asked again with no picture left (another tab): back to the account page, saying so.
        let again = try await client.get("/account/picture/remove")
        #expect(again.status == 303 && again.location == "/account")
        #expect(try await client.get("/account").body.contains("You have no picture to remove."))
    }

    @Test func aPictureTooLargeOrNotAPictureIsRefusedAndTheOldOneKept() async throws {
        let server = try Self.pictureServer()
        defer { server.stop() }
        let client = server.client()
        _ = try await client.register(Self.minimal)
        let picture = WebPictures.make(count: 3000)
        _ = try await Self.upload(client, picture)
        let tooLarge = try await Self.upload(client, WebPictures.make(count: 64 * 1024 + 1))
        #expect(tooLarge.status == 413)
        #expect(tooLarge.body.contains("id=\"field-picture-error\""))
        #expect(
            tooLarge.body.contains(
                "The picture was refused: me.png holds more than the picture limit of 64.0 KiB (65,536 bytes); nothing was stored."
            ))
        let script = try await Self.upload(
            client, name: "<img src=x onerror=alert(1)>.png", type: "image/png",
            Data("<script>alert(1)</script>".utf8))
        #expect(script.status == 400)
        #expect(script.body.contains("is not a PNG, JPEG, GIF or WebP picture"))
        #expect(!script.body.contains("<img src=x"))
        #expect(try await client.get("/account/picture").data == picture)
    }
}
