"""The Contacts app's screen as in the original tutorial: save a contact
("Contact added"), find it by name ("Match found", the fields filled);
hostile text in every field shows as text."""

from conftest import BREAKOUT, RTL, SCRIPT, ZERO_WIDTH, unique


def field_values(browser):
    return {name: browser.find(f"#field-{name}").get_attribute("value") for name in ("name", "address", "contact")}


def test_save_a_contact_and_find_it_by_name(signed_in):
    browser = signed_in
    name = unique("Joan Clarke ")
    browser.get("/contacts")
    browser.screenshot("contacts", phone=True)

    # Nothing typed: the tutorial's failure line, the problems beside the fields.
    browser.submit("#save-contact")
    assert browser.text_of("#contact-status") == "Failed to add contact"
    assert browser.exists("#field-name-error")
    browser.screenshot("contacts-failed", phone=True)

    browser.fill({"name": name, "address": "Bletchley Park", "contact": "+44 1908 640404"})
    browser.submit("#save-contact")
    assert browser.path == "/contacts"
    assert "Contact added" in browser.status_line()
    assert field_values(browser) == {"name": "", "address": "", "contact": ""}
    rows = [tr.text for tr in browser.find_all("#contacts-list tbody tr")]
    assert any(name in row and "Bletchley Park" in row and "+44 1908 640404" in row for row in rows), rows
    # The phone number is a tel: link.
    assert browser.find_all('#contacts-list a[href="tel:+441908640404"]')

    # Find by name (ignoring case): the fields are filled with the match.
    browser.fill({"name": name.upper()})
    browser.submit("#find-contact")
    assert browser.text_of("#contact-status") == "Match found"
    assert field_values(browser) == {"name": name, "address": "Bletchley Park", "contact": "+44 1908 640404"}
    browser.screenshot("contacts-match-found", phone=True)

    browser.fill({"name": unique("Nobody "), "address": "", "contact": ""})
    browser.submit("#find-contact")
    assert browser.text_of("#contact-status") == "Match not found"

    # The list's search box finds it by a word of its name.
    browser.get("/contacts")
    browser.fill({"q": name.split()[-1]})
    browser.submit('#contacts-search button[type="submit"]')
    assert len(browser.find_all("#contacts-list tbody tr")) == 1


def test_hostile_text_in_every_contact_field_shows_as_text(signed_in):
    browser = signed_in
    marker = unique("c")
    values = {
        "name": SCRIPT + RTL + " " + marker,
        "address": BREAKOUT + ZERO_WIDTH,
        "contact": SCRIPT + BREAKOUT + RTL,
    }
    browser.get("/contacts")
    browser.fill(values)
    browser.submit("#save-contact")
    assert "Contact added" in browser.status_line()

    browser.get("/contacts?q=" + marker)
    rows = browser.find_all("#contacts-list tbody tr")
    assert len(rows) == 1
    cell = "return arguments[0].querySelector(arguments[1]).textContent"
    title = browser.driver.execute_script(cell, rows[0], ".title")
    address = browser.driver.execute_script(cell, rows[0], 'td[data-label="Address"]')
    contact = browser.driver.execute_script(cell, rows[0], 'td[data-label="Phone or email"]')
    assert title == values["name"]
    assert (address, contact) == (values["address"], values["contact"])
    browser.screenshot("contacts-hostile")

    browser.get("/contacts")
    browser.fill({"name": values["name"]})
    browser.submit("#find-contact")
    assert browser.text_of("#contact-status") == "Match found"
    assert field_values(browser) == values

    # The edit form, and a refused edit, keep it as typed.
    browser.get("/contacts?q=" + marker)
    browser.click_link("#contacts-list tbody td.row-actions a")
    assert field_values(browser) == values
    browser.fill({"address": ""})
    browser.submit("#save-contact")
    assert browser.exists("#field-address-error")
    assert browser.find("#field-name").get_attribute("value") == values["name"]
    assert browser.find("#field-contact").get_attribute("value") == values["contact"]
