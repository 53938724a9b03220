import Foundation
import RecordsApp
import Testing

@testable import RecordsWeb

/// The list pages' shared parts, apart from a page: the counts' wording,
/// the number of pages, and the links a contact's phone or email makes.
@Suite("List controls")
struct ListControlsTests {
    @Test("Counts say one in the singular, anything else in the plural, thousands grouped")
    func counts() {
        let people = ListNoun(one: "person", many: "people")
        #expect(people.count(0) == "0 people")
        #expect(people.count(1) == "1 person")
        #expect(people.count(2) == "2 people")
        #expect(people.count(1234) == "1,234 people")
        #expect(ListNoun(one: "match", many: "matches").count(1_000_000) == "1,000,000 matches")
    }

    @Test("A page knows how many pages its list makes, at least one, and keeps it when mapped")
    func pageCount() {
        func count(total: Int?, size: Int) -> Int? {
            RecordPage<Int>(items: [], number: 1, size: size, hasNext: false, total: total).pageCount
        }
        #expect(count(total: nil, size: 20) == nil)
        #expect(count(total: 0, size: 20) == 1)
        #expect(count(total: 20, size: 20) == 1)
        #expect(count(total: 21, size: 20) == 2)
        #expect(count(total: 10_000, size: 100) == 100)
        let page = RecordPage(items: [1, 2], number: 3, size: 2, hasNext: true, total: 9)
        let mapped = page.map { String($0) }
        #expect(mapped.items == ["1", "2"] && mapped.total == 9 && mapped.number == 3 && mapped.hasNext)
    }

    @Test("Phone numbers become tel: links of their digits; emails mailto: links, encoded; anything else none")
    func reachLinks() {
        #expect(ContactsViews.reachLink("+1 (555) 010-0199") == "tel:+15550100199")
        #expect(ContactsViews.reachLink("555.0100") == "tel:5550100")
        #expect(ContactsViews.reachLink("ada@example.com") == "mailto:ada@example.com")
        #expect(ContactsViews.reachLink("a b@example.com") == nil)
        #expect(ContactsViews.reachLink("é@exämple.com") == "mailto:%C3%A9@ex%C3%A4mple.com")
        #expect(ContactsViews.reachLink("x@y.org?cc=z@w.org") == nil)
        for text in [
            "12", "1+2", "+", "@example.com", "ada@", "ada@example", "ada@.com", "ada@com.", "https://example.org",
            "javascript:alert(1)", "555 0100 ext. 5",
        ] {
            #expect(ContactsViews.reachLink(text) == nil, "\(text)")
        }
    }
}
