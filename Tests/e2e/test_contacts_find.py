"""Contacts by the original tutorial's purpose: Find lists the matches with
Edit beside each, so editing never makes a second contact; adding a name
that exists asks first. And what every page shares: the skip link as the
first Tab stop, the focus on the error summary after a failed submit, the
live connection's state in words."""

import json

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from conftest import BREAKOUT, SCRIPT, records, unique


def contacts_named(name):
    """The contacts with that name, through the records command."""
    return json.loads(records("contacts", "find", name, "--json"))


def active_id(browser):
    return browser.driver.execute_script("return document.activeElement && document.activeElement.id")


def banner(browser):
    return browser.text_of("#flash").replace("\u2068", "").replace("\u2069", "")


def test_find_then_edit_changes_the_contact_and_adds_none(signed_in):
    browser = signed_in
    name = unique("Joan Clarke ")
    records("contacts", "add", "--name", name, "--address", "Bletchley Park", "--contact", "+44 1908 640404")

    browser.get("/contacts")
    browser.click_link("#find-by-name")
    assert browser.path == "/contacts/find"
    browser.fill({"name": "  " + name.upper() + " "})
    browser.submit("#find-contact")
    assert banner(browser) == f"Match found: 1 contact named \u201c{name.upper()}\u201d."
    matches = browser.find_all("#matches li")
    assert len(matches) == 1
    assert "Bletchley Park | +44 1908 640404" in matches[0].text
    # The find page saves nothing: its only form is the search (GET).
    assert [form.get_attribute("method") for form in browser.find_all("main form")] == ["get"]
    browser.screenshot("contacts-find-match", phone=True)

    browser.click_link("#matches li .row-actions a")
    assert browser.path.endswith("/edit")
    assert browser.find("#field-name").get_attribute("value") == name
    browser.fill({"address": "Hanslope Park"})
    browser.submit("#save-contact")
    assert browser.path == "/contacts"
    assert banner(browser) == f"Updated \u201c{name}\u201d."

    stored = contacts_named(name)
    assert [contact["address"] for contact in stored] == ["Hanslope Park"], stored

    browser.fill({"q": name.split()[-1]})
    browser.submit('#contacts-search button[type="submit"]')
    assert len(browser.find_all("#contacts-list tbody tr")) == 1


def test_a_name_with_no_contact_says_no_match_and_offers_to_add_it(signed_in):
    browser = signed_in
    name = unique("Nobody ")
    browser.get("/contacts/find")
    browser.fill({"name": name})
    browser.submit("#find-contact")
    assert banner(browser) == f"No match: no contact is named \u201c{name}\u201d."
    assert not browser.exists("#matches")
    browser.screenshot("contacts-find-no-match", phone=True)
    browser.click_link("#add-found-name")
    assert browser.path.startswith("/contacts/new")
    assert browser.find("#field-name").get_attribute("value") == name


def test_adding_a_name_that_exists_asks_before_a_second_contact(signed_in):
    browser = signed_in
    name = unique("Alan Turing ")
    records("contacts", "add", "--name", name, "--address", "Wilmslow", "--contact", "+44 1625 000000")

    browser.get("/contacts")
    browser.click_link("#add-contact")
    browser.fill({"name": "  " + name.lower().replace(" ", "   ") + " ", "address": "King's College",
                  "contact": "alan@example.com"})
    browser.submit("#save-contact")
    assert browser.text_of("h1").startswith("Add a second")
    existing = browser.find_all("#existing li")
    assert len(existing) == 1 and "Wilmslow" in existing[0].text
    assert active_id(browser) == "form-error"
    assert len(contacts_named(name)) == 1
    browser.screenshot("contacts-duplicate", phone=True)

    browser.submit("#confirm-duplicate")
    assert browser.path == "/contacts"
    assert banner(browser).startswith("Added \u201c")
    assert sorted(contact["address"] for contact in contacts_named(name)) == ["King's College", "Wilmslow"]


def test_hostile_name_on_the_duplicate_page_shows_as_text(signed_in):
    browser = signed_in
    name = SCRIPT + BREAKOUT + unique(" ")
    records("contacts", "add", "--name", name, "--address", "a", "--contact", "c")
    browser.get("/contacts/new")
    browser.fill({"name": name, "address": BREAKOUT, "contact": SCRIPT})
    browser.submit("#save-contact")
    assert browser.text_of("#existing li .title") == name
    browser.submit("#confirm-duplicate")
    assert len(contacts_named(name)) == 2


def test_the_skip_link_is_the_first_tab_stop_and_leads_to_main(signed_in):
    browser = signed_in
    for path in ("/people", "/contacts/find", "/coffee"):
        browser.get(path)
        ActionChains(browser.driver).send_keys(Keys.TAB).perform()
        assert active_id(browser) == "skip-link", path
        top = browser.driver.execute_script("return document.activeElement.getBoundingClientRect().top")
        assert top >= 0, f"the focused skip link is off screen on {path}"
    browser.screenshot("skip-link-focused")
    ActionChains(browser.driver).send_keys(Keys.ENTER).perform()
    browser.wait.until(lambda _: active_id(browser) == "main")


def test_focus_lands_on_the_error_summary_after_a_failed_submit(signed_in):
    browser = signed_in
    for path, button in (("/contacts/new", "#save-contact"), ("/people/new", "#save-person")):
        browser.get(path)
        browser.submit(button)
        browser.wait.until(lambda _: active_id(browser) == "form-error")
        summary = browser.find("#form-error")
        assert summary.get_attribute("role") == "alert"
        assert summary.get_attribute("tabindex") == "-1"
        assert browser.driver.title.startswith("Error: ")
    browser.screenshot("error-summary-focused", phone=True)


def test_the_live_indicator_says_connected_in_words(signed_in):
    browser = signed_in
    browser.get("/contacts")
    browser.wait.until(lambda _: browser.exists("#live-status"))
    browser.wait.until(lambda _: browser.text_of("#live-status") == "Live: connected")
    indicator = browser.find("#live-status")
    assert indicator.get_attribute("aria-live") == "polite"
    assert indicator.get_attribute("data-state") == "connected"
    assert indicator.is_displayed()
    browser.screenshot("live-connected", phone=True)
