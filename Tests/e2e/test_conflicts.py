"""No lost updates: two browsers edit the same person and the records
command edits it with --if-version; nothing anyone saved is overwritten
unseen."""

import json
import os
import subprocess

from selenium.webdriver.support.ui import WebDriverWait

from conftest import records, sign_up, unique
from test_live import LIVE_WAIT, wait_until_following


def test_two_browsers_and_the_command_lose_no_update(signed_in, open_browser):
    first = signed_in
    second = open_browser("second")
    sign_up(second)
    marker = unique("Race")
    added = json.loads(records("people", "add", "--first", marker, "--last", "Lovelace", "--age", "36", "--json"))
    person = added["id"]
    opened = json.loads(records("people", "show", str(person), "--json"))["version"]

    first.get(f"/people/{person}/edit")
    second.get(f"/people/{person}/edit")
    wait_until_following(first)
    first.fill({"age": "37"})

    # The second browser saves a new last name while the first is typing.
    second.fill({"lastName": "King"})
    second.submit("#save-person")
    WebDriverWait(first.driver, LIVE_WAIT, poll_frequency=0.05).until(
        lambda d: "Changed by someone else a moment ago" in d.execute_script(
            "return document.querySelector('main').textContent"),
        "the open form never said that its person changed",
    )
    # Nothing the first browser typed or shows was replaced.
    assert first.find('[name="age"]').get_attribute("value") == "37"
    assert first.find('[name="lastName"]').get_attribute("value") == "Lovelace"
    first.screenshot("conflict-notice")

    # Review: the server shows theirs beside yours and writes nothing.
    first.submit("#person-form-review")
    assert first.exists("#conflict")
    assert first.text_of("#field-lastName-theirs-value") == "King"
    assert first.find("#field-lastName-theirs").is_selected(), "their last name is not offered first"
    assert first.find('[name="age"]').get_attribute("value") == "37"
    first.screenshot("conflict-review")
    first.screenshot("conflict-review", phone=True)
    first.submit("#conflict-save")
    saved = json.loads(records("people", "show", str(person), "--json"))
    assert (saved["lastName"], saved["age"]) == ("King", 37)

    # A script holding the version from before both saves changes nothing.
    command = [os.environ["RECORDS_BIN"], "--database", os.environ["RECORDS_E2E_DATABASE"],
               "people", "edit", str(person), "--age", "99", "--if-version", opened]
    stale = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert stale.returncode == 1, stale
    assert f"now at version {saved['version']}" in stale.stderr
    assert json.loads(records("people", "show", str(person), "--json"))["age"] == 37
