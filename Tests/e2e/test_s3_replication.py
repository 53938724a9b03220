"""records serve --replicate, records restore and --read-replica against an
S3 store: moto_server (from the bootstrap's virtual environment) on a free
loopback port, reached over plain HTTP with dummy keys. No browser: these
drive the records command and the JSON API, each test on a database of its
own. A certificate bundle is set in the environment on purpose
(AWS_CA_BUNDLE), as on the build machines: Litestream 0.5.17's S3 client
refuses to start with one for a plain-HTTP endpoint, so records must leave
it out."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import boto3
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.dirname(sys.executable)
PASSWORD = "correct horse battery staple"
BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Moto:
    """A moto_server of its own: `extra` goes into its environment."""

    def __init__(self, extra=None):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [os.path.join(VENV_BIN, "moto_server"), "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, **(extra or {})))
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(self.endpoint, timeout=2).close()
                return
            except urllib.error.HTTPError:
                return  # it answers (refusing an unsigned request, when it checks keys)
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"moto_server did not start on port {self.port}")
                time.sleep(0.1)

    def environment(self, **extra):
        """What records needs to reach this store."""
        values = dict(os.environ, AWS_ENDPOINT_URL=self.endpoint, AWS_ACCESS_KEY_ID="testing",
                      AWS_SECRET_ACCESS_KEY="testing", AWS_REGION="us-east-1")
        values.pop("AWS_ENDPOINT_URL_S3", None)
        values.pop("LITESTREAM_REPLICA_URL", None)
        if os.path.exists(BUNDLE):
            values["AWS_CA_BUNDLE"] = BUNDLE
        values.update(extra)
        return values

    def make_bucket(self):
        name = f"records-{uuid.uuid4().hex[:12]}"
        boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id="testing",
                     aws_secret_access_key="testing", region_name="us-east-1").create_bucket(Bucket=name)
        return name

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture(scope="module")
def moto():
    server = Moto()
    yield server
    server.stop()


def records(environment, database, *arguments, stdin=None, check=True):
    command = [os.environ["RECORDS_BIN"], "--database", database, *arguments]
    result = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120, env=environment)
    if check:
        assert result.returncode == 0, f"{' '.join(arguments)} failed: {result.stderr}"
    return result


def make_token(environment, database):
    records(environment, database, "users", "register", "--first", "Grace", "--last", "Hopper",
            "--email", "grace@example.com", "--password-stdin", stdin=f"{PASSWORD}\n{PASSWORD}\n")
    return records(environment, database, "token", "create", "--email", "grace@example.com", "--name", "s3",
                   "--password-stdin", stdin=f"{PASSWORD}\n").stdout.strip()


class Serve:
    """records serve with `arguments`, its log in a file beside the database."""

    def __init__(self, environment, database, *arguments):
        self.log_path = database + f".{uuid.uuid4().hex[:6]}.log"
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [os.environ["RECORDS_BIN"], "--database", database, "serve", "--listen", "127.0.0.1:0", *arguments],
            stdout=subprocess.PIPE, stderr=self.log, text=True, env=environment)
        line = self.process.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        if not match:
            self.process.kill()
            self.process.wait()
            pytest.fail(f"records serve {' '.join(arguments)} did not start: {self.text()[-2000:]}")
        self.url = match.group(1)

    def text(self):
        with open(self.log_path) as log:
            return log.read()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=60)
        self.log.close()
        return status


def api(url, token, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Authorization": f"Bearer {token}",
                                                              "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, json.loads(answer.read())


def people(environment, database):
    listed = records(environment, database, "people", "list", "--json").stdout
    return {person["lastName"] for person in json.loads(listed)}


def test_replicates_to_s3_and_restores_from_it(moto, tmp_path):
    environment = moto.environment()
    database = str(tmp_path / "primary.sqlite")
    replica = f"s3://{moto.make_bucket()}/records"
    token = make_token(environment, database)
    server = Serve(environment, database, "--replicate", replica, "--durable")
    try:
        # Durable: each 201 means the store holds the create.
        for name in ("Noether", "Meitner", "Franklin"):
            status, created = api(server.url + "api/v1/people", token, {"firstName": "S3", "lastName": name})
            assert status == 201 and created["lastName"] == name
        status, state = api(server.url + "api/v1/status", token)
        assert state["replication"]["durable"] is True, state
        restored = str(tmp_path / "restored.sqlite")
        restore = records(environment, restored, "restore", replica, "--to", restored)
        assert "integrity check ok" in restore.stdout, restore
        assert {"Noether", "Meitner", "Franklin"} <= people(environment, restored)
        # Added through the CLI while serving: shipped on the way out.
        records(environment, database, "people", "add", "--first", "Last", "--last", "Lovelace")
    finally:
        assert server.stop() == 0, server.text()[-2000:]
    log = server.text()
    assert "the replica holds every commit" in log, log[-2000:]
    assert "AWS_CA_BUNDLE" not in log, log[-2000:]
    final = str(tmp_path / "final.sqlite")
    records(environment, final, "restore", replica, "--to", final)
    assert "Lovelace" in people(environment, final)


def test_a_read_replica_serves_and_follows_an_s3_replica(moto, tmp_path):
    environment = moto.environment()
    database = str(tmp_path / "primary.sqlite")
    replica = f"s3://{moto.make_bucket()}/records"
    token = make_token(environment, database)
    primary = Serve(environment, database, "--replicate", replica, "--durable")
    copy = None
    try:
        api(primary.url + "api/v1/people", token, {"firstName": "Before", "lastName": "Hypatia"})
        copy = Serve(environment, str(tmp_path / "unused.sqlite"), "--read-replica", replica)
        _, found = api(copy.url + "api/v1/people?q=Hypatia", token)
        assert found["total"] == 1, found
        api(primary.url + "api/v1/people", token, {"firstName": "After", "lastName": "Somerville"})
        deadline = time.monotonic() + 30
        while True:
            _, found = api(copy.url + "api/v1/people?q=Somerville", token)
            if found["total"] == 1:
                break
            assert time.monotonic() < deadline, "the read replica did not follow the S3 replica in 30 s"
            time.sleep(0.2)
    finally:
        if copy:
            assert copy.stop() == 0, copy.text()[-2000:]
        assert primary.stop() == 0, primary.text()[-2000:]
    assert not os.path.exists(tmp_path / "unused.sqlite")


def test_a_missing_bucket_is_a_clear_error_that_changes_nothing(moto, tmp_path):
    environment = moto.environment()
    database = str(tmp_path / "records.sqlite")
    missing = f"s3://no-such-bucket-{uuid.uuid4().hex[:8]}/records"
    run = records(environment, database, "serve", "--listen", "127.0.0.1:0", "--replicate", missing, check=False)
    assert run.returncode != 0 and "Serving" not in run.stdout, run
    assert "cannot reach the replica" in run.stderr and "NoSuchBucket" in run.stderr, run.stderr
    assert not os.path.exists(database)
    restore = records(environment, database, "restore", missing, check=False)
    assert restore.returncode != 0 and "cannot reach the replica" in restore.stderr, restore.stderr
    assert "NoSuchBucket" in restore.stderr, restore.stderr
    assert not os.path.exists(database)
    replica = records(environment, str(tmp_path / "unused.sqlite"), "serve", "--listen", "127.0.0.1:0",
                      "--read-replica", missing, check=False)
    assert replica.returncode != 0 and "NoSuchBucket" in replica.stderr, replica.stderr


def test_credentials_the_store_refuses_are_a_clear_error(tmp_path):
    # A store that checks every request's keys: these exist nowhere.
    strict = Moto({"INITIAL_NO_AUTH_ACTION_COUNT": "0"})
    try:
        environment = strict.environment(AWS_ACCESS_KEY_ID="AKIANOTAREALKEY00000", AWS_SECRET_ACCESS_KEY="wrong")
        database = str(tmp_path / "records.sqlite")
        run = records(environment, database, "serve", "--listen", "127.0.0.1:0", "--replicate", "s3://any/records",
                      check=False)
        assert run.returncode != 0 and "Serving" not in run.stdout, run
        assert "cannot reach the replica" in run.stderr and "InvalidAccessKeyId" in run.stderr, run.stderr
        restore = records(environment, database, "restore", "s3://any/records", check=False)
        assert restore.returncode != 0 and "InvalidAccessKeyId" in restore.stderr, restore.stderr
        assert not os.path.exists(database)
    finally:
        strict.stop()


def test_an_unreachable_endpoint_is_an_error_at_start_not_a_server_without_a_replica(moto, tmp_path):
    environment = moto.environment(AWS_ENDPOINT_URL=f"http://127.0.0.1:{free_port()}")
    database = str(tmp_path / "records.sqlite")
    run = records(environment, database, "serve", "--listen", "127.0.0.1:0", "--replicate", "s3://records/db",
                  check=False)
    assert run.returncode != 0 and "Serving" not in run.stdout, run
    assert "did not answer within 20 s" in run.stderr, run.stderr
    # A restore gives up as soon, rather than after Litestream's two minutes of retries.
    restore = records(environment, database, "restore", "s3://records/db", check=False)
    assert restore.returncode != 0 and "did not answer within 20 s" in restore.stderr, restore.stderr
    assert not os.path.exists(database)


def test_an_empty_s3_replica_restores_nothing_and_a_new_server_starts_fresh(moto, tmp_path):
    environment = moto.environment()
    replica = f"s3://{moto.make_bucket()}/records"
    database = str(tmp_path / "records.sqlite")
    restore = records(environment, database, "restore", replica, check=False)
    assert restore.returncode != 0 and "cannot restore from" in restore.stderr, restore.stderr
    assert not os.path.exists(database)
    server = Serve(environment, database, "--replicate", replica, "--restore-if-missing")
    assert server.stop() == 0
    assert "the replica holds no copy yet: starting with a new database" in server.text()


def test_the_disaster_test_loses_no_durable_create_with_an_s3_replica(moto):
    # scripts/disaster-test.sh's durable case, against the store: 300
    # creates, the server and Litestream killed, the data deleted, restored.
    bucket = moto.make_bucket()
    run = subprocess.run(
        [os.path.join(ROOT, "scripts/disaster-test.sh"), "--no-build", "--mode", "durable", "--creates", "300",
         "--replica", f"s3://{bucket}/disaster"],
        capture_output=True, text=True, timeout=300, env=moto.environment())
    print(run.stdout)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"restored: [1-9]\d* acknowledged creates, 0 lost", run.stdout), run.stdout
