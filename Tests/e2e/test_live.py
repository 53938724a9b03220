"""Live screens: a page open in one browser shows a change made in another
browser or tab, or by the records command in another process, by itself
(the page is not reloaded); after the server restarts it reconnects and
shows what changed meanwhile."""

import json
import os
import re
import signal
import subprocess
import time

from selenium.webdriver.support.ui import WebDriverWait

from conftest import records, sign_up, unique

# A change is expected on the page within 1 s; the wait allows for a loaded
# CI machine, and each test prints how long the change really took.
LIVE_WAIT = 10


def stay_on_page(browser):
    """Marks the document, so a later check can tell it was updated in
    place rather than loaded again."""
    browser.driver.execute_script("window.e2eSamePage = true")


def wait_for_main_text(browser, text, present=True, since=None):
    def shown(driver):
        return (text in driver.execute_script("return document.querySelector('main').textContent")) == present

    WebDriverWait(browser.driver, LIVE_WAIT, poll_frequency=0.05).until(
        shown, f"{browser.name}: {text!r} never {'appeared' if present else 'went away'}"
    )
    if since is not None:
        print(f"live: {text!r} {'shown' if present else 'gone'} {1000 * (time.monotonic() - since):.0f} ms after the change")
    assert browser.driver.execute_script("return window.e2eSamePage === true"), "the page was loaded again"
    browser.check_no_script_ran()


def wait_for_live_state(browser, state, message):
    """Waits until the live script reports `state` on <html data-live>."""
    WebDriverWait(browser.driver, LIVE_WAIT, poll_frequency=0.05).until(
        lambda d: d.execute_script("return document.documentElement.getAttribute('data-live')") == state,
        f"{browser.name}: {message}",
    )


def wait_until_following(browser):
    """Waits until the page's event stream is open, so no change made
    before it listens is expected to show."""
    wait_for_live_state(browser, "open", "the page never opened its event stream")


def test_a_person_added_in_one_browser_appears_in_the_other(signed_in, open_browser):
    watcher = signed_in
    editor = open_browser("editor")
    sign_up(editor)
    marker = unique("Live")

    watcher.get("/people?q=" + marker)
    assert watcher.exists("[data-live-topics]"), "the People list is not a live region"
    stay_on_page(watcher)
    wait_until_following(watcher)

    editor.get("/people/new")
    editor.fill({"firstName": marker, "lastName": "Browser", "age": "30"})
    editor.submit("#save-person")
    wait_for_main_text(watcher, f"{marker} Browser", since=time.monotonic())
    watcher.screenshot("live-people-added")


def test_a_person_added_by_the_records_command_appears(signed_in):
    watcher = signed_in
    marker = unique("Cli")
    watcher.get("/people?q=" + marker)
    stay_on_page(watcher)
    wait_until_following(watcher)

    records("people", "add", "--first", marker, "--last", "Command", "--age", "50")
    wait_for_main_text(watcher, f"{marker} Command", since=time.monotonic())


def test_a_person_deleted_elsewhere_is_shown_as_deleted(signed_in):
    watcher = signed_in
    marker = unique("Gone")
    added = json.loads(records("people", "add", "--first", marker, "--last", "Soon", "--json"))
    watcher.get(f"/people/{added['id']}")
    assert watcher.text_of("#person-first-name") == marker
    stay_on_page(watcher)
    wait_until_following(watcher)

    records("people", "delete", str(added["id"]), "--yes")
    wait_for_main_text(watcher, marker, present=False, since=time.monotonic())
    assert watcher.exists(".live-deleted")
    watcher.screenshot("live-people-deleted")


def test_a_change_in_another_tab_appears(signed_in):
    """Two tabs of one browser (one session): an edit saved in the second
    shows on the person's page in the first."""
    browser = signed_in
    marker = unique("Tab")
    added = json.loads(records("people", "add", "--first", marker, "--last", "Tabs", "--age", "20", "--json"))
    browser.get(f"/people/{added['id']}")
    first_tab = browser.driver.current_window_handle
    stay_on_page(browser)
    wait_until_following(browser)

    browser.driver.switch_to.new_window("tab")
    browser.get(f"/people/{added['id']}/edit")
    browser.fill({"age": "21"})
    browser.submit("#save-person")
    changed = time.monotonic()
    browser.driver.close()
    browser.driver.switch_to.window(first_tab)
    WebDriverWait(browser.driver, LIVE_WAIT, poll_frequency=0.05).until(
        lambda d: d.find_element("css selector", "#person-age").text == "21", "the first tab never showed the new age"
    )
    print(f"live: the other tab's edit shown {1000 * (time.monotonic() - changed):.0f} ms after it was saved")
    assert browser.driver.execute_script("return window.e2eSamePage === true"), "the page was loaded again"


def test_contacts_and_coffee_follow_the_records_command(signed_in):
    watcher = signed_in
    marker = unique("Live")
    watcher.get("/contacts?q=" + marker)
    stay_on_page(watcher)
    wait_until_following(watcher)
    records("contacts", "add", "--name", marker, "--address", "1 Live Street", "--contact", "live@example.com")
    # The search shows only this contact: its row, with the email as a link.
    wait_for_main_text(watcher, "live@example.com", since=time.monotonic())
    assert watcher.find_all('#contacts-list a[href="mailto:live@example.com"]')

    coffee = json.loads(records("coffee", "add", "--name", marker, "--price", "2.50", "--json"))
    watcher.get(f"/coffee/{coffee['id']}")
    stay_on_page(watcher)
    wait_until_following(watcher)
    records("coffee", "edit", str(coffee["id"]), "--price", "3.75")
    wait_for_main_text(watcher, "3.75", since=time.monotonic())
    watcher.screenshot("live-coffee-price")


def test_a_form_being_typed_in_is_not_replaced(signed_in):
    """The contacts find page's form is outside the live matches; what is
    typed in it survives a refresh of the matches."""
    watcher = signed_in
    marker = unique("Typing")
    watcher.get("/contacts/find?name=" + marker)
    stay_on_page(watcher)
    wait_until_following(watcher)
    watcher.fill({"name": "half typed"})
    records("contacts", "add", "--name", marker, "--address", "2 Live Street", "--contact", "555 0100")
    wait_for_main_text(watcher, "2 Live Street")
    assert watcher.find("#field-name").get_attribute("value") == "half typed"


class OwnServer:
    """A records serve of this test's own, on its own database, so it can
    be stopped and started again on the same port."""

    def __init__(self, directory):
        self.database = os.path.join(directory, "restart.sqlite")
        self.port = 0
        self.process = None

    def start(self):
        command = [os.environ["RECORDS_BIN"], "--database", self.database, "serve", "--registration", "open",
                   "--listen", f"127.0.0.1:{self.port}"]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, f"records serve did not start: {line!r}"
        self.port = int(match.group(1))
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=30) == 0

    def records(self, *arguments):
        command = [os.environ["RECORDS_BIN"], "--database", self.database, *arguments]
        subprocess.run(command, check=True, capture_output=True, timeout=60)


def test_a_page_reconnects_after_the_server_restarts_and_catches_up(open_browser, tmp_path):
    server = OwnServer(str(tmp_path))
    browser = open_browser("restart")
    browser.base = server.start()
    try:
        sign_up(browser)
        browser.get("/people")
        stay_on_page(browser)
        wait_until_following(browser)

        server.stop()
        wait_for_live_state(browser, "reconnecting", "the page did not notice the server went away")
        # Changed while the server was down: nothing announces it.
        server.records("people", "add", "--first", "Whiledown", "--last", "Restart")
        server.start()
        restarted = time.monotonic()
        wait_until_following(browser)
        wait_for_main_text(browser, "Whiledown", since=restarted)
        # And it follows again.
        server.records("people", "add", "--first", "Afterwards", "--last", "Restart")
        wait_for_main_text(browser, "Afterwards", since=time.monotonic())
    finally:
        if server.process and server.process.poll() is None:
            server.stop()
