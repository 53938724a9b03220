"""The People app as a person uses it: add, look at, edit and delete
someone; search the list; hostile text in every field shows as text."""

from conftest import BREAKOUT, RTL, SCRIPT, ZERO_WIDTH, unique


def add_person(browser, first, last, age):
    browser.get("/people")
    browser.click_link("#add-person")
    assert browser.path == "/people/new"
    browser.fill({"firstName": first, "lastName": last, "age": age})
    browser.submit("#save-person")


def test_add_edit_and_delete_a_person(signed_in):
    browser = signed_in
    first = unique("Ada")
    browser.get("/people")
    browser.screenshot("people-list", phone=True)
    browser.click_link("#add-person")
    browser.screenshot("people-add", phone=True)
    browser.fill({"firstName": first, "lastName": "Lovelace", "age": "36"})
    browser.submit("#save-person")

    # The person's page, with the status line.
    assert browser.path.startswith("/people/")
    assert f"Added \u201c{first} Lovelace\u201d." in browser.status_line()
    assert browser.text_of("#person-first-name") == first
    assert browser.text_of("#person-age") == "36"
    person_path = browser.path
    browser.screenshot("people-detail", phone=True)

    # Found by the list's search box.
    browser.get("/people")
    browser.fill({"q": first})
    browser.submit('#people-search button[type="submit"]')
    assert [a.text for a in browser.find_all("#people-list tbody a.title")] == [f"{first} Lovelace"]
    browser.screenshot("people-search")

    # Edit: a wrong age is refused beside the field, the input kept.
    browser.get(person_path)
    browser.click_link("#edit-person")
    browser.fill({"lastName": "Byron", "age": "two hundred"})
    browser.submit("#save-person")
    assert browser.text_of("#field-age-error") == "Age must be a whole number from 0 to 150."
    assert browser.find("#field-lastName").get_attribute("value") == "Byron"
    assert browser.find("#field-age").get_attribute("value") == "two hundred"
    browser.screenshot("people-edit-invalid", phone=True)
    browser.fill({"age": "37"})
    browser.submit("#save-person")
    assert browser.path == person_path
    assert f"Updated \u201c{first} Byron\u201d." in browser.status_line()
    assert browser.text_of("#person-last-name") == "Byron"

    # Delete, after the confirmation page.
    browser.click_link("#delete-person")
    assert browser.find("h1").text == f"Delete {first} Byron?"
    browser.screenshot("people-delete", phone=True)
    browser.submit("#confirm-delete")
    assert browser.path == "/people"
    assert f"Deleted \u201c{first} Byron\u201d." in browser.status_line()
    browser.get(person_path)
    assert browser.find("h1").text == "Page not found"


def test_hostile_text_in_every_person_field_shows_as_text(signed_in):
    browser = signed_in
    marker = unique("x")
    first = SCRIPT + RTL
    last = marker + " " + BREAKOUT + ZERO_WIDTH
    add_person(browser, first, last, "40")
    assert browser.text_of("#person-first-name") == first
    assert browser.text_of("#person-last-name") == last
    assert browser.text_of("#person-name") == f"{first} {last}"
    browser.screenshot("people-hostile")

    # On the list and in a search's matches too.
    browser.get("/people?q=" + marker)
    titles = [browser.driver.execute_script("return arguments[0].textContent", a)
              for a in browser.find_all("#people-list tbody a.title")]
    assert titles == [f"{first} {last}"]
    browser.check_no_script_ran()

    # The age field: refused, and the text kept in the field as typed.
    browser.click_link("#people-list tbody a.title")
    browser.click_link("#edit-person")
    browser.fill({"age": SCRIPT})
    browser.submit("#save-person")
    assert browser.exists("#field-age-error")
    assert browser.find("#field-age").get_attribute("value") == SCRIPT
    assert browser.find("#field-firstName").get_attribute("value") == first
    assert browser.find("#field-lastName").get_attribute("value") == last
