import Foundation

/// The fields of the Users app's forms, named as messages and
/// ``ValidationError/message(for:)`` name them.
public enum UserField: String, FormField, CaseIterable {
    /// ``RegistrationForm/firstName``.
    case firstName = "first name"
    /// ``RegistrationForm/lastName``.
    case lastName = "last name"
    /// ``RegistrationForm/email``.
    case email
    /// The new password.
    case password
    /// The new password typed again.
    case passwordConfirmation = "password confirmation"
    /// The current password, to change it.
    case currentPassword = "current password"
    /// ``RegistrationForm/mobile``.
    case mobile
    /// ``RegistrationForm/state``.
    case state
    /// ``RegistrationForm/city``.
    case city
    /// ``RegistrationForm/pincode``.
    case pincode
    /// ``RegistrationForm/address``.
    case address
    /// ``RegistrationForm/gender``.
    case gender
    /// ``RegistrationForm/dateOfBirth``.
    case dateOfBirth = "date of birth"
    /// ``RegistrationForm/imageName``.
    case imageName = "image name"
}

extension UserField {
    /// The field's name as forms show it, which messages start with:
    /// "Postal code", "Password again".
    public var label: String {
        switch self {
        case .firstName: "First name"
        case .lastName: "Last name"
        case .email: "Email"
        case .password: "Password"
        case .passwordConfirmation: "Password again"
        case .currentPassword: "Current password"
        case .mobile: "Mobile"
        case .state: "State"
        case .city: "City"
        case .pincode: "Postal code"
        case .address: "Address"
        case .gender: "Gender"
        case .dateOfBirth: "Date of birth"
        case .imageName: "Picture"
        }
    }

    /// The profile fields that identify the account or reach its owner:
    /// the email, which is the log-in name, and the mobile number. A
    /// signed-in session changes them only with the user's password (see
    /// ``UsersStore/updateProfile(id:with:password:)``); the name, the
    /// address and the rest describe the user and change without it.
    public static let identifying: Set<UserField> = [.email, .mobile]
}

/// The rules for a user's fields.
public enum UserRules {
    /// The longest first or last name, in characters (the original tutorial's `VARCHAR(30)`).
    public static let maxNameLength = 30
    /// The longest email address (RFC 5321's limit on a path).
    public static let maxEmailLength = 254
    /// The longest part of an email address before the `@` (RFC 5321).
    public static let maxEmailLocalLength = 64
    /// The shortest password, in characters.
    public static let minPasswordLength = 8
    /// The longest password, in characters: long enough for any passphrase,
    /// short enough that hashing cannot be made expensive on purpose. Like
    /// every text field, it also holds at most ``TextRules`` code points.
    public static let maxPasswordLength = 256
    /// How many digits a mobile number has (E.164 allows up to 15).
    public static let mobileDigits = 7...15
    /// How many digits a postal code has.
    public static let pincodeDigits = 3...10
    /// The longest state or city name.
    public static let maxPlaceLength = 100
    /// The longest address.
    public static let maxAddressLength = 200
    /// The longest image file name (the usual file-system limit).
    public static let maxImageNameLength = 255
    /// The oldest a date of birth can be, in years before today.
    public static let maxAge = 150
}

/// A user's profile as validated: every field but the password.
public struct UserProfile: Sendable, Equatable {
    /// The first name, trimmed.
    public var firstName: String
    /// The last name, trimmed.
    public var lastName: String
    /// The email address, trimmed.
    public var email: String
    /// The mobile number: digits, perhaps after a `+`.
    public var mobile: String
    /// The state, trimmed.
    public var state: String
    /// The city, trimmed.
    public var city: String
    /// The postal code: digits.
    public var pincode: String
    /// The address, trimmed.
    public var address: String
    /// The gender.
    public var gender: Gender
    /// The date of birth, in the past; nil when not given.
    public var dateOfBirth: CalendarDate?
    /// The profile picture's file name; empty when not given.
    public var imageName: String
}

/// The registration form's fields, as typed.
///
/// An account needs a name, an email and a password (typed twice); the
/// original tutorial's other fields (mobile, place, gender, date of birth,
/// picture) are optional: a blank one is stored empty, and they are
/// usually given later on the profile.
///
/// ```swift
/// var form = RegistrationForm()
/// form.firstName = "Ada"
/// ...
/// let user = try store.register(form)   // ValidationError lists every bad field
/// ```
public struct RegistrationForm: Sendable, Equatable {
    /// The first name, 1-30 characters.
    public var firstName: String
    /// The last name, 1-30 characters.
    public var lastName: String
    /// The email address; unique ignoring case.
    public var email: String
    /// The password: 8-256 characters, no control characters. Kept exactly
    /// as typed (spaces are part of it).
    public var password: String
    /// The password typed again.
    public var passwordConfirmation: String
    /// The mobile number: 7-15 digits, perhaps after a `+`. Optional.
    public var mobile: String
    /// The state. Optional.
    public var state: String
    /// The city. Optional.
    public var city: String
    /// The postal code: 3-10 digits. Optional.
    public var pincode: String
    /// The address. Optional.
    public var address: String
    /// One of ``Gender/names``; blank is unspecified.
    public var gender: String
    /// `YYYY-MM-DD`, a real day in the past. Optional.
    public var dateOfBirth: String
    /// The profile picture's file name. Optional.
    public var imageName: String

    /// Creates a form; every field is empty unless given.
    public init(
        firstName: String = "", lastName: String = "", email: String = "", password: String = "",
        passwordConfirmation: String = "", mobile: String = "", state: String = "", city: String = "",
        pincode: String = "", address: String = "", gender: String = "", dateOfBirth: String = "",
        imageName: String = ""
    ) {
        self.firstName = firstName
        self.lastName = lastName
        self.email = email
        self.password = password
        self.passwordConfirmation = passwordConfirmation
        self.mobile = mobile
        self.state = state
        self.city = city
        self.pincode = pincode
        self.address = address
        self.gender = gender
        self.dateOfBirth = dateOfBirth
        self.imageName = imageName
    }

    /// The profile, validated together with the password, or every field's
    /// problem at once.
    ///
    /// - Parameter today: The day dates of birth must be before.
    /// - Throws: ``ValidationError``, one message per field at fault.
    public func validated(today: CalendarDate) throws -> UserProfile {
        try validatedWithPassword(today: today).profile
    }

    /// The profile fields alone (not the password), for a front-end that
    /// checks them before asking for a password.
    ///
    /// - Throws: ``ValidationError``, one message per field at fault.
    public func validatedProfile(today: CalendarDate) throws -> UserProfile {
        var validator = Validator()
        let profile = validator.profile(self, today: today)
        try validator.check()
        return profile
    }

    func validatedWithPassword(today: CalendarDate) throws -> (profile: UserProfile, password: String) {
        var validator = Validator()
        let profile = validator.profile(self, today: today)
        validator.newPassword(password, confirmation: passwordConfirmation)
        try validator.check()
        return (profile, password)
    }
}

/// Changes to a user's profile, as typed; nil leaves a field as it is, and
/// blank text clears an optional field (all but the names and the email). The
/// password is changed separately, with the current one
/// (``UsersStore/changePassword(id:current:new:confirmation:)``).
public struct ProfileChanges: Sendable, Equatable {
    /// A new first name.
    public var firstName: String?
    /// A new last name.
    public var lastName: String?
    /// A new email address.
    public var email: String?
    /// A new mobile number.
    public var mobile: String?
    /// A new state.
    public var state: String?
    /// A new city.
    public var city: String?
    /// A new postal code.
    public var pincode: String?
    /// A new address.
    public var address: String?
    /// A new gender, one of ``Gender/names``.
    public var gender: String?
    /// A new date of birth, `YYYY-MM-DD`.
    public var dateOfBirth: String?
    /// A new image file name.
    public var imageName: String?

    /// Creates changes.
    public init(
        firstName: String? = nil, lastName: String? = nil, email: String? = nil, mobile: String? = nil,
        state: String? = nil, city: String? = nil, pincode: String? = nil, address: String? = nil,
        gender: String? = nil, dateOfBirth: String? = nil, imageName: String? = nil
    ) {
        self.firstName = firstName
        self.lastName = lastName
        self.email = email
        self.mobile = mobile
        self.state = state
        self.city = city
        self.pincode = pincode
        self.address = address
        self.gender = gender
        self.dateOfBirth = dateOfBirth
        self.imageName = imageName
    }

    /// Whether nothing would change.
    public var isEmpty: Bool {
        [firstName, lastName, email, mobile, state, city, pincode, address, gender, dateOfBirth, imageName]
            .allSatisfy { $0 == nil }
    }

    /// The changes checked by the registration rules, every field's problem
    /// at once; an empty change set is a problem too.
    public func validated(today: CalendarDate) throws -> ValidProfileChanges {
        if isEmpty {
            throw ValidationError(field: "changes", message: "Nothing to change: give at least one profile field.")
        }
        var v = Validator()
        let changes = ValidProfileChanges(
            firstName: firstName.map { v.userName($0, field: .firstName) },
            lastName: lastName.map { v.userName($0, field: .lastName) },
            email: email.map { v.email($0) },
            mobile: mobile.map { v.optional($0) { $0.mobile($1) } },
            state: state.map { v.optional($0) { $0.place($1, field: .state) } },
            city: city.map { v.optional($0) { $0.place($1, field: .city) } },
            pincode: pincode.map { v.optional($0) { $0.pincode($1) } },
            address: address.map { v.optional($0) { $0.address($1) } },
            gender: gender.map { Validator.isBlank($0) ? .unspecified : v.gender($0) },
            dateOfBirth: dateOfBirth.map {
                Validator.isBlank($0) ? "" : v.dateOfBirth($0, today: today).description
            },
            imageName: imageName.map { v.optional($0) { $0.imageName($1) } })
        try v.check()
        return changes
    }
}

/// ``ProfileChanges`` once validated: typed, trimmed, at least one given;
/// an optional field given blank is empty (cleared).
public struct ValidProfileChanges: Sendable, Equatable {
    /// A new first name, trimmed.
    public internal(set) var firstName: String?
    /// A new last name, trimmed.
    public internal(set) var lastName: String?
    /// A new email address, trimmed.
    public internal(set) var email: String?
    /// A new mobile number.
    public internal(set) var mobile: String?
    /// A new state, trimmed.
    public internal(set) var state: String?
    /// A new city, trimmed.
    public internal(set) var city: String?
    /// A new postal code.
    public internal(set) var pincode: String?
    /// A new address, trimmed.
    public internal(set) var address: String?
    /// A new gender.
    public internal(set) var gender: Gender?
    /// A new date of birth, in the past, as `YYYY-MM-DD`; empty to clear it.
    public internal(set) var dateOfBirth: String?
    /// A new image file name.
    public internal(set) var imageName: String?
}

/// Checks a new password and its confirmation by the registration rules.
///
/// - Throws: ``ValidationError`` for the password and the confirmation.
func validateNewPassword(_ password: String, confirmation: String) throws {
    var validator = Validator()
    validator.newPassword(password, confirmation: confirmation)
    try validator.check()
}

extension Validator {
    mutating func profile(_ form: RegistrationForm, today: CalendarDate) -> UserProfile {
        UserProfile(
            firstName: userName(form.firstName, field: .firstName),
            lastName: userName(form.lastName, field: .lastName),
            email: email(form.email),
            mobile: optional(form.mobile) { $0.mobile($1) },
            state: optional(form.state) { $0.place($1, field: .state) },
            city: optional(form.city) { $0.place($1, field: .city) },
            pincode: optional(form.pincode) { $0.pincode($1) },
            address: optional(form.address) { $0.address($1) },
            gender: Self.isBlank(form.gender) ? .unspecified : gender(form.gender),
            dateOfBirth: Self.isBlank(form.dateOfBirth) ? nil : dateOfBirth(form.dateOfBirth, today: today),
            imageName: optional(form.imageName) { $0.imageName($1) })
    }

    /// An optional field: empty when `value` is blank, else `check`'s
    /// result.
    mutating func optional(_ value: String, _ check: (inout Validator, String) -> String) -> String {
        if Self.isBlank(value) { return "" }
        return check(&self, value)
    }

    mutating func place(_ value: String, field: UserField) -> String {
        text(value, field: field, maxLength: UserRules.maxPlaceLength)
    }

    mutating func address(_ value: String) -> String {
        text(value, field: UserField.address, maxLength: UserRules.maxAddressLength)
    }

    mutating func userName(_ value: String, field: UserField) -> String {
        text(value, field: field, maxLength: UserRules.maxNameLength)
    }

    /// A well-formed address: RFC 5322's dot-atom local part, `@`, and a
    /// domain of at least two DNS labels (letters, digits, inner hyphens),
    /// all ASCII, the WHATWG form rules minus their dotless domains. Since
    /// it is ASCII, SQLite's `NOCASE` compares such addresses fully.
    mutating func email(_ value: String) -> String {
        let email = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if Self.isBlank(email) {
            fail(UserField.email, "is required")
        } else if email.count > UserRules.maxEmailLength {
            fail(UserField.email, "must be at most \(UserRules.maxEmailLength) characters (it has \(email.count))")
        } else if !Self.isWellFormedEmail(email) {
            fail(UserField.email, "must be a well-formed address such as name@example.com")
        }
        return email
    }

    static func isWellFormedEmail(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let local = parts[0].unicodeScalars
        let domain = parts[1]
        let atext = Set("!#$%&'*+/=?^_`{|}~-".unicodeScalars)
        let localIsDotAtom =
            !local.isEmpty && local.count <= UserRules.maxEmailLocalLength && local.first != "."
            && local.last != "." && !parts[0].contains("..")
            && local.allSatisfy { isASCIIAlphanumeric($0) || atext.contains($0) || $0 == "." }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        let domainIsHostName =
            labels.count >= 2
            && labels.allSatisfy { label in
                let scalars = label.unicodeScalars
                return (1...63).contains(scalars.count) && scalars.first != "-" && scalars.last != "-"
                    && scalars.allSatisfy { isASCIIAlphanumeric($0) || $0 == "-" }
            }
        return localIsDotAtom && domainIsHostName
    }

    private static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }

    private static func isASCIIDigits(_ text: Substring) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { ("0"..."9").contains($0) }
    }

    /// A new password and its confirmation. The password is not trimmed.
    /// Control characters are refused: they cannot be typed reliably, and
    /// scrypt treats trailing NULs as absent ("" and "\0" hash alike).
    mutating func newPassword(_ password: String, confirmation: String) {
        let length = password.count
        if password.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            fail(UserField.password, "must not contain control characters (tabs, line breaks, ...)")
        } else if length < UserRules.minPasswordLength {
            fail(UserField.password, "must be at least \(UserRules.minPasswordLength) characters (it has \(length))")
        } else if length > UserRules.maxPasswordLength {
            fail(UserField.password, "must be at most \(UserRules.maxPasswordLength) characters (it has \(length))")
        } else if let message = Self.codePointProblem(password, maxLength: UserRules.maxPasswordLength) {
            fail(UserField.password, message)
        }
        if confirmation != password {
            fail(UserField.passwordConfirmation, "does not match the password")
        }
    }

    /// Digits, perhaps after a `+`; returned trimmed.
    mutating func mobile(_ value: String) -> String {
        let mobile = value.trimmingCharacters(in: .whitespaces)
        let digits = mobile.hasPrefix("+") ? mobile.dropFirst() : Substring(mobile)
        if Self.isBlank(mobile) {
            fail(UserField.mobile, "is required")
        } else if !Self.isASCIIDigits(digits) || !UserRules.mobileDigits.contains(digits.count) {
            let range = UserRules.mobileDigits
            fail(
                UserField.mobile,
                "must be \(range.lowerBound) to \(range.upperBound) digits, optionally after a leading +")
        }
        return mobile
    }

    /// Digits only; returned trimmed.
    mutating func pincode(_ value: String) -> String {
        let pincode = value.trimmingCharacters(in: .whitespaces)
        if Self.isBlank(pincode) {
            fail(UserField.pincode, "is required")
        } else if !Self.isASCIIDigits(Substring(pincode)) || !UserRules.pincodeDigits.contains(pincode.count) {
            let range = UserRules.pincodeDigits
            fail(UserField.pincode, "must be \(range.lowerBound) to \(range.upperBound) digits")
        }
        return pincode
    }

    /// One of the gender names; `.unspecified` when it has a problem.
    mutating func gender(_ value: String) -> Gender {
        guard let gender = Gender(name: value) else {
            fail(UserField.gender, "must be one of \(Gender.names.joined(separator: ", "))")
            return .unspecified
        }
        return gender
    }

    /// A real `YYYY-MM-DD` day before `today`, at most ``UserRules/maxAge``
    /// years before it; `today` when it has a problem.
    mutating func dateOfBirth(_ value: String, today: CalendarDate) -> CalendarDate {
        guard let date = CalendarDate(iso: value.trimmingCharacters(in: .whitespaces)) else {
            fail(UserField.dateOfBirth, "must be a real date written YYYY-MM-DD, such as 1990-12-31")
            return today
        }
        if date >= today {
            fail(UserField.dateOfBirth, "must be in the past")
        } else if date < today.subtracting(years: UserRules.maxAge) {
            fail(UserField.dateOfBirth, "must be at most \(UserRules.maxAge) years ago")
        }
        return date
    }

    /// A file name: no folders, not `.` or `..`.
    mutating func imageName(_ value: String) -> String {
        let name = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if name.contains("/") || name.contains("\\") || name == "." || name == ".." {
            fail(UserField.imageName, "must be a file name, without / or \\")
            return name
        }
        return text(value, field: UserField.imageName, maxLength: UserRules.maxImageNameLength)
    }
}
