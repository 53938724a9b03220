import Foundation
import Testing

@testable import RecordsApp

/// One field of the registration form set to one value.
struct FieldValue: Sendable, CustomTestStringConvertible {
    let keyPath: WritableKeyPath<RegistrationForm, String> & Sendable
    let value: String
    /// The field whose message is expected (nil: the form is valid).
    let field: UserField?
    /// The whole message expected for that field.
    let message: String?

    init(_ keyPath: WritableKeyPath<RegistrationForm, String> & Sendable, _ value: String) {
        self.keyPath = keyPath
        self.value = value
        self.field = nil
        self.message = nil
    }

    init(
        _ keyPath: WritableKeyPath<RegistrationForm, String> & Sendable, _ value: String, _ field: UserField,
        _ message: String
    ) {
        self.keyPath = keyPath
        self.value = value
        self.field = field
        self.message = message
    }

    var form: RegistrationForm {
        var form = validForm()
        form[keyPath: keyPath] = value
        // The confirmation follows the password unless it is the field tested.
        if keyPath == \RegistrationForm.password { form.passwordConfirmation = value }
        return form
    }

    var testDescription: String {
        let shown = value.count > 40 ? String(value.prefix(20)) + "…(\(value.count))" : value
        return "\(field?.rawValue ?? "valid"): \(shown.debugDescription)"
    }
}

private let longName = String(repeating: "a", count: 31)
private let longEmail =
    String(repeating: "a", count: 64) + "@" + String(repeating: "b", count: 63) + "."
    + String(repeating: "c", count: 63) + "." + String(repeating: "d", count: 62)

@Suite("Users: validation")
struct UsersValidationTests {
    @Test("A valid form gives the profile, trimmed and typed")
    func validForm() throws {
        var form = RecordsAppTests.validForm()
        form.firstName = "  Ada "
        form.email = " ada@example.com\n"
        form.gender = " Female "
        let profile = try form.validated(today: testToday)
        #expect(profile.firstName == "Ada")
        #expect(profile.email == "ada@example.com")
        #expect(profile.gender == .female)
        #expect(profile.dateOfBirth == CalendarDate(year: 1990, month: 12, day: 10))
    }

    @Test(
        "Good values pass",
        arguments: [
            FieldValue(\.firstName, "A"), FieldValue(\.firstName, String(repeating: "é", count: 30)),
            FieldValue(\.lastName, "O'Brien-Smith"), FieldValue(\.lastName, "Åkesson"),
            FieldValue(\.email, "o'brien+tag@mail.example.co.uk"), FieldValue(\.email, "A.B@EXAMPLE.COM"),
            FieldValue(\.email, "x@a-b.io"),
            FieldValue(\.password, "12345678"), FieldValue(\.password, "pässwörd with spaces "),
            FieldValue(\.password, String(repeating: "p", count: 256)), FieldValue(\.password, "😀😀😀😀😀😀😀😀"),
            FieldValue(\.mobile, "1234567"), FieldValue(\.mobile, "+919876543210"),
            FieldValue(\.mobile, "123456789012345"), FieldValue(\.mobile, " 9876543210 "),
            FieldValue(\.pincode, "123"), FieldValue(\.pincode, "0123456789"),
            FieldValue(\.state, "Tamil Nadu"), FieldValue(\.city, "São Paulo"),
            FieldValue(\.address, "Flat 2; \"B\" wing"),
            FieldValue(\.gender, "male"), FieldValue(\.gender, "OTHER"), FieldValue(\.gender, "unspecified"),
            FieldValue(\.dateOfBirth, "2026-03-14"), FieldValue(\.dateOfBirth, "2024-02-29"),
            FieldValue(\.dateOfBirth, "1876-03-15"), FieldValue(\.dateOfBirth, "2000-02-29"),
            FieldValue(\.imageName, "ada lovelace.png"), FieldValue(\.imageName, ".hidden"),
            FieldValue(\.imageName, String(repeating: "i", count: 255)),
            // The optional fields may be left blank.
            FieldValue(\.mobile, ""), FieldValue(\.state, " "), FieldValue(\.city, ""), FieldValue(\.pincode, ""),
            FieldValue(\.address, ""), FieldValue(\.gender, ""), FieldValue(\.dateOfBirth, ""),
            FieldValue(\.imageName, ""),
        ])
    func goodValue(_ value: FieldValue) throws {
        _ = try value.form.validated(today: testToday)
    }

    @Test(
        "Each bad value gets its field's message, and only that one",
        arguments: [
            FieldValue(\.firstName, "", .firstName, "First name is required."),
            FieldValue(\.firstName, "   ", .firstName, "First name is required."),
            FieldValue(\.firstName, longName, .firstName, "First name must be at most 30 characters (it has 31)."),
            FieldValue(
                \.firstName, "A\u{7}da", .firstName, "First name must be a single line without control characters."),
            FieldValue(\.lastName, "", .lastName, "Last name is required."),
            FieldValue(\.lastName, longName, .lastName, "Last name must be at most 30 characters (it has 31)."),
            FieldValue(\.email, "", .email, "Email is required."),
            FieldValue(\.email, "ada", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(\.email, "ada@", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "@example.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(\.email, "ada@example", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "ada@@example.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "a@b@example.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, ".ada@example.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "ada.@example.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "a..da@example.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "ada@-example.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "ada@example..com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "ada@exa_mple.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "ada @example.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "adä@example.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, "ada\"@example.com", .email, "Email must be a well-formed address such as name@example.com."),
            FieldValue(
                \.email, String(repeating: "a", count: 65) + "@example.com", .email,
                "Email must be a well-formed address such as name@example.com."),
            FieldValue(\.email, longEmail, .email, "Email must be at most 254 characters (it has 255)."),
            FieldValue(\.password, "", .password, "Password must be at least 8 characters (it has 0)."),
            FieldValue(\.password, "1234567", .password, "Password must be at least 8 characters (it has 7)."),
            FieldValue(
                \.password, String(repeating: "p", count: 257), .password,
                "Password must be at most 256 characters (it has 257)."),
            FieldValue(
                \.password, "pass\tword", .password,
                "Password must not contain control characters (tabs, line breaks, ...)."),
            FieldValue(
                \.password, "password\0", .password,
                "Password must not contain control characters (tabs, line breaks, ...)."),
            FieldValue(
                \.password, "password\n", .password,
                "Password must not contain control characters (tabs, line breaks, ...)."),
            FieldValue(
                \.passwordConfirmation, "correct horsE", .passwordConfirmation,
                "Password again does not match the password."),
            FieldValue(
                \.passwordConfirmation, "", .passwordConfirmation, "Password again does not match the password."),
            FieldValue(\.mobile, "123456", .mobile, "Mobile must be 7 to 15 digits, optionally after a leading +."),
            FieldValue(
                \.mobile, "1234567890123456", .mobile, "Mobile must be 7 to 15 digits, optionally after a leading +."),
            FieldValue(
                \.mobile, "98765-43210", .mobile, "Mobile must be 7 to 15 digits, optionally after a leading +."),
            FieldValue(\.mobile, "+", .mobile, "Mobile must be 7 to 15 digits, optionally after a leading +."),
            FieldValue(\.mobile, "++98765432", .mobile, "Mobile must be 7 to 15 digits, optionally after a leading +."),
            FieldValue(\.mobile, "98765432+", .mobile, "Mobile must be 7 to 15 digits, optionally after a leading +."),
            FieldValue(
                \.mobile, "９８７６５４３２１０", .mobile, "Mobile must be 7 to 15 digits, optionally after a leading +."),
            FieldValue(\.pincode, "12", .pincode, "Postal code must be 3 to 10 digits."),
            FieldValue(\.pincode, "12345678901", .pincode, "Postal code must be 3 to 10 digits."),
            FieldValue(\.pincode, "11000A", .pincode, "Postal code must be 3 to 10 digits."),
            FieldValue(\.pincode, "110 001", .pincode, "Postal code must be 3 to 10 digits."),
            FieldValue(\.pincode, "-110001", .pincode, "Postal code must be 3 to 10 digits."),
            FieldValue(
                \.state, String(repeating: "s", count: 101), .state,
                "State must be at most 100 characters (it has 101)."
            ),
            FieldValue(\.city, "Pune\nMumbai", .city, "City must be a single line without control characters."),
            FieldValue(
                \.address, String(repeating: "x", count: 201), .address,
                "Address must be at most 200 characters (it has 201)."),
            FieldValue(\.gender, "f", .gender, "Gender must be one of unspecified, male, female, other."),
            FieldValue(\.gender, "2", .gender, "Gender must be one of unspecified, male, female, other."),
            FieldValue(
                \.dateOfBirth, "1990-13-01", .dateOfBirth,
                "Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31."),
            FieldValue(
                \.dateOfBirth, "1990-04-31", .dateOfBirth,
                "Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31."),
            FieldValue(
                \.dateOfBirth, "2023-02-29", .dateOfBirth,
                "Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31."),
            FieldValue(
                \.dateOfBirth, "1900-02-29", .dateOfBirth,
                "Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31."),
            FieldValue(
                \.dateOfBirth, "1990-1-1", .dateOfBirth,
                "Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31."),
            FieldValue(
                \.dateOfBirth, "10/12/1990", .dateOfBirth,
                "Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31."),
            FieldValue(
                \.dateOfBirth, "1990-12-10T00:00", .dateOfBirth,
                "Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31."),
            FieldValue(
                \.dateOfBirth, "+990-12-10", .dateOfBirth,
                "Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31."),
            FieldValue(
                \.dateOfBirth, "0000-01-01", .dateOfBirth,
                "Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31."),
            FieldValue(\.dateOfBirth, "2026-03-15", .dateOfBirth, "Date of birth must be in the past."),
            FieldValue(\.dateOfBirth, "2026-03-16", .dateOfBirth, "Date of birth must be in the past."),
            FieldValue(\.dateOfBirth, "9999-12-31", .dateOfBirth, "Date of birth must be in the past."),
            FieldValue(\.dateOfBirth, "1876-03-14", .dateOfBirth, "Date of birth must be at most 150 years ago."),
            FieldValue(\.imageName, "../ada.png", .imageName, "Picture must be a file name, without / or \\."),
            FieldValue(\.imageName, "pics/ada.png", .imageName, "Picture must be a file name, without / or \\."),
            FieldValue(\.imageName, "C:\\ada.png", .imageName, "Picture must be a file name, without / or \\."),
            FieldValue(\.imageName, "..", .imageName, "Picture must be a file name, without / or \\."),
            FieldValue(\.imageName, ".", .imageName, "Picture must be a file name, without / or \\."),
            FieldValue(
                \.imageName, String(repeating: "i", count: 256), .imageName,
                "Picture must be at most 255 characters (it has 256)."),
        ])
    func badValue(_ value: FieldValue) throws {
        let error = try #require(throws: ValidationError.self) { try value.form.validated(today: testToday) }
        #expect(error.problems.map(\.field) == [value.field?.rawValue])
        #expect(error.message(for: value.field?.rawValue ?? "") == value.message)
    }

    @Test("Every bad field is reported at once, in form order")
    func everyProblemAtOnce() throws {
        let form = RegistrationForm(
            firstName: "", lastName: longName, email: "nope", password: "short", passwordConfirmation: "other",
            mobile: "12", state: "", city: "", pincode: "x", address: "", gender: "robot", dateOfBirth: "2030-01-01",
            imageName: "a/b")
        let error = try #require(throws: ValidationError.self) { try form.validated(today: testToday) }
        #expect(
            error.problems.map(\.field) == [
                "first name", "last name", "email", "mobile", "pincode", "gender", "date of birth", "image name",
                "password", "password confirmation",
            ])
        #expect(Set(error.problems.map(\.field)).count == error.problems.count, "one message per field")
    }

    @Test("The profile alone can be checked before a password is asked for")
    func profileOnly() throws {
        var form = RecordsAppTests.validForm()
        form.password = ""
        form.passwordConfirmation = "x"
        _ = try form.validatedProfile(today: testToday)
        form.city = "Pune\nMumbai"
        let error = try #require(throws: ValidationError.self) { try form.validatedProfile(today: testToday) }
        #expect(error.problems.map(\.field) == ["city"])
    }

    @Test("Profile changes: given fields are checked like registration; none is an error")
    func profileChanges() throws {
        let valid = try ProfileChanges(email: " NEW@example.com ", gender: "male", dateOfBirth: "2000-01-01")
            .validated(today: testToday)
        #expect(valid.email == "NEW@example.com")
        #expect(valid.gender == .male)
        #expect(valid.dateOfBirth == "2000-01-01")
        #expect(valid.firstName == nil && valid.city == nil)

        let bad = try #require(throws: ValidationError.self) {
            try ProfileChanges(firstName: "", mobile: "1", pincode: "1", dateOfBirth: "2027-01-01", imageName: "/")
                .validated(today: testToday)
        }
        #expect(bad.problems.map(\.field) == ["first name", "mobile", "pincode", "date of birth", "image name"])

        let none = try #require(throws: ValidationError.self) { try ProfileChanges().validated(today: testToday) }
        #expect(none.description == "Nothing to change: give at least one profile field.")
    }

    @Test("A registration needs only the names, the email and the password; the rest is stored empty")
    func minimalRegistration() throws {
        let form = RegistrationForm(
            firstName: "Grace", lastName: "Hopper", email: "grace@example.com", password: "long enough",
            passwordConfirmation: "long enough")
        let profile = try form.validated(today: testToday)
        #expect(profile.mobile == "" && profile.city == "" && profile.pincode == "" && profile.imageName == "")
        #expect(profile.gender == .unspecified)
        #expect(profile.dateOfBirth == nil)
        let missing = try #require(throws: ValidationError.self) {
            try RegistrationForm(password: "long enough", passwordConfirmation: "long enough")
                .validated(today: testToday)
        }
        #expect(missing.problems.map(\.field) == ["first name", "last name", "email"])
        #expect(
            missing.description
                == "First name is required. Last name is required. Email is required.")
    }

    @Test("Messages are sentences that name the field by its label, hostile text and all")
    func labelledSentences() throws {
        let error = try #require(throws: ValidationError.self) {
            try ProfileChanges(pincode: "<b>12</b>", dateOfBirth: "10/12/1990").validated(today: testToday)
        }
        #expect(error.message(for: "pincode") == "Postal code must be 3 to 10 digits.")
        #expect(
            error.message(for: "date of birth")
                == "Date of birth must be a real date written YYYY-MM-DD, such as 1990-12-31.")
        for problem in error.problems {
            #expect(problem.message.first?.isUppercase == true && problem.message.hasSuffix("."))
            #expect(!problem.message.contains("<b>"), "the value typed is not repeated in the message")
        }
    }

    @Test("Profile changes: a blank optional field clears it; a blank name or email is refused")
    func clearingOptionalFields() throws {
        let valid = try ProfileChanges(mobile: "", city: " ", gender: "", dateOfBirth: "").validated(today: testToday)
        #expect(valid.mobile == "" && valid.city == "" && valid.dateOfBirth == "")
        #expect(valid.gender == .unspecified)
        let error = try #require(throws: ValidationError.self) {
            try ProfileChanges(lastName: " ", email: "").validated(today: testToday)
        }
        #expect(error.problems.map(\.field) == ["last name", "email"])
    }

    @Test("New passwords: the same rules without a form")
    func newPasswordRules() throws {
        try validateNewPassword("long enough", confirmation: "long enough")
        let error = try #require(throws: ValidationError.self) {
            try validateNewPassword("short", confirmation: "shorter")
        }
        #expect(error.problems.map(\.field) == ["password", "password confirmation"])
    }
}

@Suite("Users: dates and genders")
struct CalendarDateAndGenderTests {
    @Test("ISO dates parse only as YYYY-MM-DD naming a real day")
    func parsing() {
        #expect(CalendarDate(iso: "2024-02-29") == CalendarDate(year: 2024, month: 2, day: 29))
        #expect(CalendarDate(iso: "2000-02-29") != nil)
        #expect(CalendarDate(iso: "1900-02-29") == nil)
        #expect(CalendarDate(iso: "2023-02-29") == nil)
        #expect(CalendarDate(iso: "2023-06-31") == nil)
        #expect(CalendarDate(iso: "2023-00-10") == nil)
        #expect(CalendarDate(iso: "2023-01-00") == nil)
        #expect(CalendarDate(iso: "２０２３-01-01") == nil)
        #expect(CalendarDate(iso: "2023-01-01 ") == nil)
        #expect(CalendarDate(iso: "") == nil)
        #expect(CalendarDate(year: 10000, month: 1, day: 1) == nil)
    }

    @Test("Dates print as YYYY-MM-DD and compare by day")
    func printingAndOrder() throws {
        let early = try #require(CalendarDate(year: 33, month: 4, day: 3))
        #expect(early.description == "0033-04-03")
        let later = try #require(CalendarDate(year: 2024, month: 1, day: 1))
        #expect(early < later)
        #expect(try #require(CalendarDate(year: 2023, month: 12, day: 31)) < later)
    }

    @Test("Subtracting years keeps the day, or 28 February for 29 February")
    func subtractingYears() throws {
        let leapDay = try #require(CalendarDate(year: 2024, month: 2, day: 29))
        #expect(leapDay.subtracting(years: 1) == CalendarDate(year: 2023, month: 2, day: 28))
        #expect(leapDay.subtracting(years: 4) == CalendarDate(year: 2020, month: 2, day: 29))
        #expect(testToday.subtracting(years: 150) == CalendarDate(year: 1876, month: 3, day: 15))
    }

    @Test("Today is the Gregorian date in the given time zone")
    func today() throws {
        let epoch = Date(timeIntervalSince1970: 0)
        #expect(
            CalendarDate.today(timeZone: try #require(TimeZone(identifier: "UTC")), now: epoch).description
                == "1970-01-01")
        #expect(
            CalendarDate.today(timeZone: try #require(TimeZone(identifier: "America/Los_Angeles")), now: epoch)
                .description == "1969-12-31")
        #expect(
            CalendarDate.today(timeZone: try #require(TimeZone(identifier: "Asia/Kolkata")), now: epoch).description
                == "1970-01-01")
    }

    @Test("Genders: a fixed set of names and one-digit codes; JSON uses the name")
    func genders() throws {
        #expect(Gender.names == ["unspecified", "male", "female", "other"])
        #expect(Gender.allCases.map(\.rawValue) == [0, 1, 2, 3])
        #expect(Gender(name: " FEMALE ") == .female)
        #expect(Gender(name: "femme") == nil)
        #expect(Gender(name: "") == nil)
        let json = try JSONEncoder().encode([Gender.other])
        #expect(String(decoding: json, as: UTF8.self) == "[\"other\"]")
        #expect(try JSONDecoder().decode([Gender].self, from: json) == [.other])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([Gender].self, from: Data("[\"x\"]".utf8)) }
    }
}
