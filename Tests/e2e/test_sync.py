"""Devices that sync through `records serve`, as real processes: two device
databases make records offline, `records sync` on both converges them with
the server, a same-field edit on both shows in `records conflicts`, and a
`records sync` killed with SIGKILL in the middle of a large push resumes
with no record lost and none twice."""

import json
import os
import re
import signal
import sqlite3
import subprocess
import time

import pytest

PASSWORD = "sync tester password"


def records(database, *arguments, stdin=None, check=True):
    run = subprocess.run([os.environ["RECORDS_BIN"], "--database", str(database), *arguments],
                         input=stdin, capture_output=True, text=True, timeout=300)
    if check:
        assert run.returncode == 0, f"records {' '.join(arguments)}: {run.stderr}"
    return run


class Server:
    """records serve on a database of its own, with a user and a read-write token."""

    def __init__(self, directory):
        self.database = directory / "server.sqlite"
        records(self.database, "users", "register", "--first", "Sync", "--last", "Tester", "--email",
                "sync-e2e@example.com", "--mobile", "9876543210", "--state", "Surrey", "--city", "London",
                "--pincode", "110001", "--address", "1 Test Street", "--gender", "other", "--dob", "1990-01-01",
                "--image", "sync.png", "--password-stdin", stdin=f"{PASSWORD}\n{PASSWORD}\n")
        token = records(self.database, "token", "create", "--email", "sync-e2e@example.com", "--name", "devices",
                        "--password-stdin", stdin=f"{PASSWORD}\n").stdout.strip()
        self.token_file = directory / "sync.token"
        self.token_file.write_text(token + "\n")
        self.log_path = directory / "serve.log"
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [os.environ["RECORDS_BIN"], "--database", str(self.database), "serve", "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        if not match:
            self.process.kill()
            pytest.fail(f"records serve did not start: {line} {self.log_path.read_text()[-2000:]}")
        self.url = match.group(1)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)
        self.log.close()


@pytest.fixture
def server(tmp_path):
    server = Server(tmp_path)
    yield server
    server.stop()


def device(server, directory, name):
    database = directory / f"{name}.sqlite"
    records(database, "remote", "set", server.url, "--token-file", str(server.token_file))
    return database


def sync(database):
    return json.loads(records(database, "--json", "sync").stdout)


def dump(database):
    """Every synced value, keyed by the values themselves (local IDs differ
    between replicas): people, contacts, and coffees' names and prices."""
    people = json.loads(records(database, "--json", "people", "list").stdout)
    contacts = json.loads(records(database, "--json", "contacts", "list").stdout)
    coffee = json.loads(records(database, "--json", "coffee", "list").stdout)
    return (sorted((p["firstName"], p["lastName"], p["age"] or -1) for p in people),
            sorted((c["name"], c["address"], c["contact"]) for c in contacts),
            sorted((c["name"], str(c["price"])) for c in coffee))


def person_id(database, first, last):
    people = json.loads(records(database, "--json", "people", "list").stdout)
    return [p["id"] for p in people if p["firstName"] == first and p["lastName"] == last]


def test_two_devices_converge_and_a_same_field_edit_is_a_listed_conflict(server, tmp_path):
    laptop = device(server, tmp_path, "laptop")
    phone = device(server, tmp_path, "phone")
    # Offline on both.
    records(laptop, "people", "add", "--first", "Ada", "--last", "Byron", "--age", "36")
    records(laptop, "contacts", "add", "--name", "Bletchley Park", "--address", "Sherwood Drive",
            "--contact", "+44 1908 640404")
    records(phone, "people", "add", "--first", "Grace", "--last", "Brewster", "--age", "85")
    records(phone, "coffee", "add", "--name", "Flat white", "--price", "3.20")

    sent = sync(laptop)
    assert sent["sent"] > 0
    sync(phone)
    sync(laptop)
    assert dump(laptop) == dump(phone) == dump(server.database)
    assert len(person_id(phone, "Ada", "Byron")) == 1
    assert len(person_id(laptop, "Grace", "Brewster")) == 1
    # The sample's records, on all three from the start, are there once each.
    assert len(person_id(phone, "Ada", "Lovelace")) == 1

    # The same field, offline on both: the later edit wins everywhere, the other is logged.
    records(laptop, "people", "edit", str(person_id(laptop, "Ada", "Byron")[0]), "--age", "37")
    time.sleep(0.01)
    records(phone, "people", "edit", str(person_id(phone, "Ada", "Byron")[0]), "--age", "38")
    sync(laptop)
    answer = sync(phone)
    assert answer["conflicts"] == 1
    sync(laptop)
    assert dump(laptop) == dump(phone) == dump(server.database)
    ada = [p for p in json.loads(records(laptop, "--json", "people", "list").stdout) if p["lastName"] == "Byron"]
    assert [p["age"] for p in ada] == [38]

    conflicts = json.loads(records(server.database, "--json", "conflicts").stdout)
    assert [(c["app"], c["column"], c["lost"], c["won"]) for c in conflicts] == [("people", "age", "37", "38")]
    listed = records(server.database, "conflicts").stdout
    assert "people" in listed and "37" in listed and "38" in listed


def add_people_directly(database, count):
    """Another program writes the device's file with plain SQL: the engine's
    triggers capture it as they capture records' own writes."""
    records(database, "people", "list")  # made from the sample and migrated
    connection = sqlite3.connect(database)
    with connection:
        connection.executemany("INSERT INTO peopleInfo (firstname, lastname, age) VALUES (?, ?, ?)",
                               ((f"Bulk{i}", "Loader", i % 150) for i in range(count)))
    connection.close()


def bulk_names(database):
    connection = sqlite3.connect(database)
    names = [row[0] for row in connection.execute("SELECT firstname FROM peopleInfo WHERE lastname = 'Loader'")]
    connection.close()
    return names


def test_a_sync_killed_during_a_large_push_resumes_with_nothing_lost_or_twice(server, tmp_path):
    loader = device(server, tmp_path, "loader")
    count = 20_000
    add_people_directly(loader, count)
    pushes = lambda: server.log_path.read_text().count("POST /api/v1/sync/push 200")
    process = subprocess.Popen([os.environ["RECORDS_BIN"], "--database", str(loader), "sync"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while pushes() < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert process.poll() is None, "the sync ended before it could be killed mid-push"
    process.send_signal(signal.SIGKILL)
    process.wait()
    halfway = len(bulk_names(server.database))
    assert 0 < halfway < count, halfway

    answer = sync(loader)
    assert answer["sent"] > 0
    on_server = bulk_names(server.database)
    assert len(on_server) == count
    assert len(set(on_server)) == count, "no record twice"

    # A second device gets every one of them, once.
    other = device(server, tmp_path, "other")
    sync(other)
    received = bulk_names(other)
    assert sorted(received) == sorted(on_server)


def coffee_id(database, name):
    coffees = json.loads(records(database, "--json", "coffee", "list").stdout)
    return [c["id"] for c in coffees if c["name"] == name]


def test_a_sync_killed_during_a_30_mib_picture_resumes_where_the_upload_stood(server, tmp_path):
    camera = device(server, tmp_path, "camera")
    picture = tmp_path / "big.png"
    # A PNG signature and 30 MiB that no compression or dedup shortcut could shrink.
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(30 * 1024 * 1024))
    records(camera, "coffee", "add", "--name", "Panorama", "--price", "4.50")
    records(camera, "coffee", "picture", "set", str(coffee_id(camera, "Panorama")[0]), str(picture))
    uploads = lambda: server.log_path.read_text().count("POST /api/v1/sync/chunks/upload 200")
    process = subprocess.Popen([os.environ["RECORDS_BIN"], "--database", str(camera), "sync"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    # The first asks where to start; then pieces of 1 MiB.
    while uploads() < 6 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert process.poll() is None, "the sync ended before it could be killed mid-picture"
    process.send_signal(signal.SIGKILL)
    process.wait()
    # Nothing of the coffee reached the server: its push goes after its picture.
    assert coffee_id(server.database, "Panorama") == []

    answer = sync(camera)
    size = picture.stat().st_size
    assert 0 < answer["pictureBytesSent"] < size, "resumed where the server's copy stood, not from the start"
    # Another device gets the whole picture, byte for byte.
    viewer = device(server, tmp_path, "viewer")
    got = sync(viewer)
    assert got["pictureBytesReceived"] == size
    copy = tmp_path / "copy.png"
    records(viewer, "coffee", "picture", "get", str(coffee_id(viewer, "Panorama")[0]), str(copy))
    assert copy.read_bytes() == picture.read_bytes()
