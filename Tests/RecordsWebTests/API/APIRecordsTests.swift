import Foundation
import RecordsApp
import RecordsWeb
import TestSupport
import Testing

/// The JSON API's records: list, get, create, update, delete, versions,
/// idempotent retries and problem documents, answered in process.
@Suite struct APIRecordsTests {
    @discardableResult
    func addPerson(_ site: APISite, _ first: String, _ last: String, age: Int? = nil) async throws -> [String:
        Any]
    {
        let ageJSON = age.map(String.init) ?? "null"
        let answer = await site.send(
            "POST", "/api/v1/people", json: #"{"firstName":"\#(first)","lastName":"\#(last)","age":\#(ageJSON)}"#)
        #expect(answer.status == 201, "\(answer.text)")
        return answer.json
    }

    @Test func aCreatedPersonComesBackWithItsLocationAndVersion() async throws {
        let site = try await APISite()
        let answer = await site.send(
            "POST", "/api/v1/people", json: #"{"firstName":"Ada","lastName":"Lovelace","age":36}"#)
        #expect(answer.status == 201)
        let id = try #require(answer.json["id"] as? Int)
        #expect(answer.header("Location") == "/api/v1/people/\(id)")
        let version = try #require(answer.json["version"] as? String)
        #expect(answer.header("ETag") == "\"\(version)\"")
        #expect(answer.json["firstName"] as? String == "Ada")
        #expect(answer.json["age"] as? Int == 36)
        let stored = try await PeopleStore(database: site.database).person(id: Int64(id))
        #expect(stored?.lastName == "Lovelace")
    }

    @Test func theListGivesAWindowTheTotalAndTheOrderAskedFor() async throws {
        let site = try await APISite()
        try await addPerson(site, "Grace", "Hopper", age: 85)
        try await addPerson(site, "Ada", "Lovelace", age: 36)
        try await addPerson(site, "Alan", "Turing", age: 41)
        let byName = await site.send("GET", "/api/v1/people?limit=2")
        #expect(byName.status == 200)
        #expect(byName.json["total"] as? Int == 3)
        let names = (byName.json["items"] as? [[String: Any]] ?? []).compactMap { $0["lastName"] as? String }
        #expect(names == ["Hopper", "Lovelace"])
        let rest = await site.send("GET", "/api/v1/people?limit=2&offset=1&sort=age")
        let ages = (rest.json["items"] as? [[String: Any]] ?? []).compactMap { $0["age"] as? Int }
        #expect(ages == [41, 85])
        #expect(rest.json["offset"] as? Int == 1)
    }

    @Test func orderReversesEachSortAndItsPagesNeitherSkipNorRepeat() async throws {
        let site = try await APISite()
        try await addPerson(site, "Grace", "Hopper", age: 85)
        try await addPerson(site, "Ada", "Lovelace", age: 36)
        try await addPerson(site, "Alan", "Turing", age: 41)
        try await addPerson(site, "Edsger", "Dijkstra")
        func lastNames(_ query: String) async -> [String] {
            let answer = await site.send("GET", "/api/v1/people?\(query)")
            return (answer.json["items"] as? [[String: Any]] ?? []).compactMap { $0["lastName"] as? String }
        }
        for sort in ["name", "age", "newest"] {
            let up = await lastNames("sort=\(sort)&order=asc")
            let down = await lastNames("sort=\(sort)&order=desc")
            #expect(up.count == 4, "\(sort)")
            if sort == "age" {
                // An unknown age stays last both ways.
                #expect(up == ["Lovelace", "Turing", "Hopper", "Dijkstra"])
                #expect(down == ["Hopper", "Turing", "Lovelace", "Dijkstra"])
            } else {
                #expect(down == up.reversed(), "\(sort)")
            }
            let paged =
                await lastNames("sort=\(sort)&order=desc&limit=2")
                + lastNames("sort=\(sort)&order=desc&limit=2&offset=2")
            #expect(paged == down, "\(sort)")
        }
        // Without order, each sort runs its own way: newest first.
        #expect(await lastNames("sort=newest") == ["Dijkstra", "Turing", "Lovelace", "Hopper"])
        let contacts = await site.send("GET", "/api/v1/contacts?order=desc")
        #expect(contacts.status == 200)
    }

    @Test func theListSearchesTheFullTextIndex() async throws {
        let site = try await APISite()
        try await addPerson(site, "Ada", "Lovelace")
        try await addPerson(site, "Zoë", "Straße")
        let answer = await site.send("GET", "/api/v1/people?q=zoe")
        #expect(answer.json["total"] as? Int == 1)
        let found = (answer.json["items"] as? [[String: Any]])?.first?["firstName"] as? String
        #expect(found == "Zoë")
    }

    @Test func aListQueryOutOfRangeIsAProblemNamingTheParameter() async throws {
        let site = try await APISite()
        for query in ["limit=0", "limit=501", "limit=x", "offset=-1", "sort=height", "order=down", "order=DESC"] {
            let answer = await site.send("GET", "/api/v1/people?\(query)")
            #expect(answer.status == 422, "\(query)")
            #expect(answer.isProblem)
            let name = String(query.split(separator: "=")[0])
            #expect(answer.errors[name] != nil, "\(query): \(answer.text)")
        }
        let contacts = await site.send("GET", "/api/v1/contacts?q=x")
        #expect(contacts.status == 422)
    }

    @Test func getAnswersNotModifiedWhileTheVersionIsCurrent() async throws {
        let site = try await APISite()
        let person = try await addPerson(site, "Ada", "Lovelace")
        let id = try #require(person["id"] as? Int)
        let first = await site.send("GET", "/api/v1/people/\(id)")
        let tag = try #require(first.header("ETag"))
        let again = await site.send("GET", "/api/v1/people/\(id)", headers: ["if-none-match": tag])
        #expect(again.status == 304)
        _ = await site.send("PATCH", "/api/v1/people/\(id)", json: #"{"age":37}"#)
        let changed = await site.send("GET", "/api/v1/people/\(id)", headers: ["if-none-match": tag])
        #expect(changed.status == 200)
        #expect(changed.header("ETag") != tag)
    }

    @Test func patchChangesOnlyTheMembersSentAndNullClears() async throws {
        let site = try await APISite()
        let person = try await addPerson(site, "Ada", "Lovelace", age: 36)
        let id = try #require(person["id"] as? Int)
        let renamed = await site.send("PATCH", "/api/v1/people/\(id)", json: #"{"lastName":"King"}"#)
        #expect(renamed.status == 200)
        #expect(renamed.json["lastName"] as? String == "King")
        #expect(renamed.json["age"] as? Int == 36)
        let cleared = await site.send("PATCH", "/api/v1/people/\(id)", json: #"{"age":null}"#)
        #expect(cleared.status == 200)
        #expect(cleared.json["age"] is NSNull)
        #expect(cleared.json["firstName"] as? String == "Ada")
    }

    @Test func aStaleIfMatchIsRefusedWithTheCurrentRecordAndLosesNothing() async throws {
        let site = try await APISite()
        let person = try await addPerson(site, "Ada", "Lovelace", age: 36)
        let id = try #require(person["id"] as? Int)
        let read = try #require(person["version"] as? String)
        // Two programs read version `read`; the first saves.
        let first = await site.send(
            "PATCH", "/api/v1/people/\(id)", json: #"{"lastName":"King"}"#, headers: ["if-match": "\"\(read)\""])
        #expect(first.status == 200)
        let second = await site.send(
            "PATCH", "/api/v1/people/\(id)", json: #"{"age":40}"#, headers: ["if-match": "\"\(read)\""])
        #expect(second.status == 412)
        #expect(second.json["code"] as? String == "version-mismatch")
        let current = try #require(second.json["current"] as? [String: Any])
        #expect(current["lastName"] as? String == "King")
        #expect(second.header("ETag") == "\"\(current["version"] as? String ?? "")\"")
        let stored = try await PeopleStore(database: site.database).person(id: Int64(id))
        #expect(stored?.lastName == "King")
        #expect(stored?.age == 36)
        let delete = await site.send("DELETE", "/api/v1/people/\(id)", headers: ["if-match": "\"\(read)\""])
        #expect(delete.status == 412)
        #expect(try await PeopleStore(database: site.database).person(id: Int64(id)) != nil)
    }

    @Test func aMalformedIfMatchIsRefused() async throws {
        let site = try await APISite()
        let person = try await addPerson(site, "Ada", "Lovelace")
        let id = try #require(person["id"] as? Int)
        for header in ["*", "W/\"0123456789abcdef\"", "0123456789abcdef", "\"nope\"", "\"a\", \"b\""] {
            let answer = await site.send(
                "PATCH", "/api/v1/people/\(id)", json: #"{"age":1}"#, headers: ["if-match": header])
            #expect(answer.status == 400, "\(header)")
            #expect(answer.json["code"] as? String == "malformed-version")
        }
        #expect(try await PeopleStore(database: site.database).person(id: Int64(id))?.age == nil)
    }

    @Test func deleteAnswers204ThenTheRecordIsGone() async throws {
        let site = try await APISite()
        let person = try await addPerson(site, "Ada", "Lovelace")
        let id = try #require(person["id"] as? Int)
        let version = try #require(person["version"] as? String)
        let answer = await site.send("DELETE", "/api/v1/people/\(id)", headers: ["if-match": "\"\(version)\""])
        #expect(answer.status == 204)
        let gone = await site.send("GET", "/api/v1/people/\(id)")
        #expect(gone.status == 404)
        #expect(gone.isProblem)
        let again = await site.send("DELETE", "/api/v1/people/\(id)")
        #expect(again.status == 404)
    }

    @Test func badBodiesAreProblemsNamingTheMemberAndChangeNothing() async throws {
        let site = try await APISite()
        let cases: [(body: String, status: Int, member: String?)] = [
            (#"{"firstName":"Ada"}"#, 422, "lastName"),
            (#"{"firstName":"Ada","lastName":"L","age":"36"}"#, 422, "age"),
            (#"{"firstName":"Ada","lastName":"L","height":3}"#, 422, "height"),
            (#"{"firstName":"Ada","lastName":"L","id":3}"#, 422, "id"),
            (#"{"firstName":"","lastName":"L"}"#, 422, "firstName"),
            (#"{"firstName":"Ada","lastName":"L","age":151}"#, 422, "age"),
            (#"{"firstName":null,"lastName":"L"}"#, 422, "firstName"),
            (#"{"firstName":"Ada","lastName":"L","age":36.5}"#, 422, "age"),
            (#"{"firstName":"Ada","firstName":"Eve","lastName":"L"}"#, 400, nil),
            (#"{"firstName":"Ada","lastName":"L",}"#, 400, nil),
            (#"["Ada"]"#, 400, nil),
            ("", 400, nil),
            (String(repeating: "[", count: 40) + String(repeating: "]", count: 40), 400, nil),
        ]
        for (body, status, member) in cases {
            let answer = await site.send("POST", "/api/v1/people", json: body)
            #expect(answer.status == status, "\(body): \(answer.text)")
            #expect(answer.isProblem, "\(body)")
            if let member { #expect(answer.errors[member] != nil, "\(body): \(answer.text)") }
        }
        #expect(try await PeopleStore(database: site.database).count() == 0)
    }

    @Test func validationMessagesAreTheAppsOwnAsSentences() async throws {
        let site = try await APISite()
        let answer = await site.send("POST", "/api/v1/people", json: #"{"firstName":" ","lastName":"L"}"#)
        #expect(answer.errors["firstName"] == "First name is required.")
    }

    @Test func problemsStayKeyedByTheJSONMembersWithTheFormsLabelsInTheirTexts() async throws {
        let site = try await APISite()
        let person = await site.send("POST", "/api/v1/people", json: #"{"firstName":" ","lastName":"","age":151}"#)
        #expect(person.status == 422)
        #expect(
            person.errors == [
                "firstName": "First name is required.", "lastName": "Last name is required.",
                "age": "Age must be a whole number from 0 to 150.",
            ])
        #expect(
            person.json["detail"] as? String
                == "First name is required. Last name is required. Age must be a whole number from 0 to 150.")
        let contact = await site.send("POST", "/api/v1/contacts", json: #"{"name":"N","address":"A","contact":" "}"#)
        #expect(contact.errors == ["contact": "Phone, email or web address is required."])
        let coffee = await site.send("POST", "/api/v1/coffee", json: #"{"name":"","price":"3,50"}"#)
        #expect(
            coffee.errors == [
                "name": "Name is required.",
                "price": "Price must be a number such as 3.50, with a point for the decimals, not a comma.",
            ])
        let missing = await site.send("POST", "/api/v1/contacts", json: #"{"name":"N","address":"A"}"#)
        #expect(missing.errors == ["contact": "Phone, email or web address is required."])
    }

    @Test func anIdempotentRetryGetsTheFirstAnswerAndMakesNoSecondRecord() async throws {
        let site = try await APISite()
        let body = #"{"firstName":"Ada","lastName":"Lovelace"}"#
        let first = await site.send("POST", "/api/v1/people", json: body, headers: ["idempotency-key": "k-1"])
        let retry = await site.send("POST", "/api/v1/people", json: body, headers: ["idempotency-key": "k-1"])
        #expect(first.status == 201)
        #expect(retry.status == 201)
        #expect(retry.text == first.text)
        #expect(retry.header("Idempotent-Replayed") == "true")
        #expect(try await PeopleStore(database: site.database).count() == 1)
        let other = await site.send(
            "POST", "/api/v1/people", json: #"{"firstName":"Eve","lastName":"L"}"#, headers: ["idempotency-key": "k-1"])
        #expect(other.status == 422)
        #expect(other.json["code"] as? String == "idempotency-key-reused")
        #expect(try await PeopleStore(database: site.database).count() == 1)
    }

    @Test func aFailedRequestKeepsNoIdempotentAnswer() async throws {
        let site = try await APISite()
        let bad = await site.send(
            "POST", "/api/v1/people", json: #"{"firstName":"Ada"}"#, headers: ["idempotency-key": "k-2"])
        #expect(bad.status == 422)
        let again = await site.send(
            "POST", "/api/v1/people", json: #"{"firstName":"Ada"}"#, headers: ["idempotency-key": "k-2"])
        #expect(again.status == 422)
        #expect(again.header("Idempotent-Replayed") == nil)
    }

    @Test func unknownPathsAndMethodsAreProblems() async throws {
        let site = try await APISite()
        let missing = await site.send("GET", "/api/v1/nothing")
        #expect(missing.status == 404)
        #expect(missing.isProblem)
        let method = await site.send("PUT", "/api/v1/people")
        #expect(method.status == 405)
        #expect(method.isProblem)
        #expect(method.header("Allow")?.contains("POST") == true)
        let badID = await site.send("GET", "/api/v1/people/abc")
        #expect(badID.status == 404)
    }

    @Test func contactsAndCoffeeHaveTheirCollections() async throws {
        let site = try await APISite()
        let contact = await site.send(
            "POST", "/api/v1/contacts", json: #"{"name":"Jane Doe","address":"1 Main St","contact":"jane@example.com"}"#
        )
        #expect(contact.status == 201, "\(contact.text)")
        let coffee = await site.send("POST", "/api/v1/coffee", json: #"{"name":"Cortado","price":"3.50"}"#)
        #expect(coffee.status == 201, "\(coffee.text)")
        #expect(coffee.json["price"] as? String == "3.5" || coffee.json["price"] as? String == "3.50")
        #expect(coffee.json["picture"] is NSNull)
        let number = await site.send("POST", "/api/v1/coffee", json: #"{"name":"Flat white","price":3.5}"#)
        #expect(number.status == 422)
        #expect(number.errors["price"] != nil)
        let readOnly = await site.send("POST", "/api/v1/coffee", json: #"{"name":"Mocha","price":"4","picture":null}"#)
        #expect(readOnly.status == 422)
        #expect(readOnly.errors["picture"] != nil)
        let list = await site.send("GET", "/api/v1/coffee?sort=price")
        #expect(list.json["total"] as? Int == 1)
    }
}

extension APIRecordsTests {
    @Test func theListSearchFindsLettersTypedWithoutTheirAccent() async throws {
        let site = try await APISite()
        try await addPerson(site, "Marie", "Skłodowska-Curie")
        try await addPerson(site, "Søren", "Kierkegaard")
        for (query, last) in [("skl", "Skłodowska-Curie"), ("soren", "Kierkegaard")] {
            let answer = await site.send("GET", "/api/v1/people?q=\(query)")
            #expect(answer.json["total"] as? Int == 1, "\(query)")
            let found = (answer.json["items"] as? [[String: Any]])?.first?["lastName"] as? String
            #expect(found == last)
        }
    }
}

extension APIRecordsTests {
    /// The pages and the command ask before a second contact of a name;
    /// the API creates what it is sent, as for every other collection
    /// (a program that wants one contact per name finds by name first).
    @Test func aContactWhoseNameExistsIsCreatedByTheAPI() async throws {
        let site = try await APISite()
        let body = #"{"name":"Jane Doe","address":"1 Main St","contact":"jane@example.com"}"#
        let first = await site.send("POST", "/api/v1/contacts", json: body)
        #expect(first.status == 201, "\(first.text)")
        let second = await site.send(
            "POST", "/api/v1/contacts", json: body.replacingOccurrences(of: "Jane", with: "jane"))
        #expect(second.status == 201, "\(second.text)")
        #expect(second.json["id"] as? Int != first.json["id"] as? Int)
        let list = await site.send("GET", "/api/v1/contacts")
        #expect(list.json["total"] as? Int == 2)
    }
}
