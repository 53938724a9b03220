"""The JSON API over a real socket, as a program uses it: a token made with
the `records` command, records created, read, changed and deleted with
versions, an account registered, a picture sent and read back in ranges, a refused oversized body,
a live event, and the OpenAPI description checked by openapi-spec-validator."""

import http.client
import json
import os
import socket
import struct
import subprocess
import urllib.parse
import zlib

import pytest

from conftest import base_url, profile

PASSWORD = "api tester password"


def records(*arguments, stdin=None):
    return subprocess.run(
        [os.environ["RECORDS_BIN"], "--database", os.environ["RECORDS_E2E_DATABASE"], *arguments],
        input=stdin, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def token():
    registered = records(
        "users", "register", "--first", "Api", "--last", "Tester", "--email", "api-e2e@example.com",
        "--mobile", "9876543210", "--state", "Surrey", "--city", "London", "--pincode", "110001",
        "--address", "1 Test Street", "--gender", "other", "--dob", "1990-01-01", "--image", "api.png",
        "--password-stdin", stdin=f"{PASSWORD}\n{PASSWORD}\n")
    assert registered.returncode == 0, registered.stderr
    made = records("token", "create", "--email", "api-e2e@example.com", "--name", "e2e", "--password-stdin",
                   stdin=f"{PASSWORD}\n")
    assert made.returncode == 0, made.stderr
    secret = made.stdout.splitlines()[0].strip()
    assert secret.startswith("rst_")
    return secret


def connection():
    url = urllib.parse.urlparse(base_url())
    return http.client.HTTPConnection(url.hostname, url.port, timeout=30)


def call(token, method, path, body=None, headers=None):
    conn = connection()
    all_headers = {"Authorization": f"Bearer {token}"} if token else {}
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        all_headers["Content-Type"] = "application/json"
    all_headers.update(headers or {})
    conn.request(method, path, body=body, headers=all_headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response, data


def test_the_description_is_valid_openapi():
    from openapi_spec_validator import validate

    response, data = call(None, "GET", "/api/v1/openapi.json")
    assert response.status == 200
    document = json.loads(data)
    validate(document)
    assert "/api/v1/people/{id}" in document["paths"]


def test_records_with_versions_over_a_socket(token):
    response, data = call(token, "POST", "/api/v1/people", {"firstName": "Ada", "lastName": "Lovelace", "age": 36})
    assert response.status == 201, data
    person = json.loads(data)
    location = response.getheader("Location")
    tag = response.getheader("ETag")
    assert tag == f'"{person["version"]}"'

    response, data = call(token, "GET", location, headers={"If-None-Match": tag})
    assert response.status == 304

    response, data = call(token, "PATCH", location, {"age": 37}, headers={"If-Match": tag})
    assert response.status == 200, data
    assert json.loads(data)["age"] == 37

    # The old version no longer matches: nothing is overwritten.
    response, data = call(token, "PATCH", location, {"lastName": "Byron"}, headers={"If-Match": tag})
    assert response.status == 412
    assert response.getheader("Content-Type") == "application/problem+json"
    assert json.loads(data)["current"]["lastName"] == "Lovelace"

    response, data = call(token, "DELETE", location)
    assert response.status == 204
    response, data = call(token, "GET", location)
    assert response.status == 404


def test_no_token_and_cookies_are_refused(token):
    response, data = call(None, "GET", "/api/v1/people")
    assert response.status == 401
    assert json.loads(data)["code"] == "unauthorized"
    response, data = call(None, "GET", "/api/v1/people", headers={"Cookie": "records_session=anything"})
    assert response.status == 401


def test_a_program_registers_an_account(token):
    values = dict(profile(), password=PASSWORD, passwordConfirmation=PASSWORD)
    response, data = call(None, "POST", "/api/v1/users", values)
    assert response.status == 201, data
    created = json.loads(data)
    assert created["email"] == values["email"]
    assert "password" not in created and "passwordHash" not in created
    assert response.getheader("Location") == "/api/v1/me"

    # The same email again: refused as the registration page refuses it.
    response, data = call(None, "POST", "/api/v1/users", values)
    assert response.status == 422
    assert json.loads(data)["errors"] == {"email": "Email is already registered."}

    response, data = call(None, "POST", "/api/v1/users", dict(values, email="not an address", pincode="x"))
    assert response.status == 422
    assert set(json.loads(data)["errors"]) == {"email", "pincode"}


def png(width, height):
    def chunk(kind, payload):
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))
    rows = b"".join(b"\x00" + bytes((x * 7 + y * 3) % 256 for x in range(width * 3)) for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def test_a_picture_is_sent_and_read_back_in_ranges(token):
    response, data = call(token, "POST", "/api/v1/coffee", {"name": "Cortado", "price": "3.50"})
    assert response.status == 201, data
    coffee = json.loads(data)
    picture = png(64, 64)
    path = f"/api/v1/coffee/{coffee['id']}/picture"
    response, data = call(token, "PUT", path, picture, headers={"Content-Type": "image/png"})
    assert response.status == 200, data
    assert json.loads(data)["picture"]["size"] == len(picture)

    response, data = call(token, "GET", path)
    assert response.status == 200 and data == picture
    tag = response.getheader("ETag")
    response, data = call(token, "GET", path, headers={"Range": "bytes=100-", "If-Range": tag})
    assert response.status == 206
    assert data == picture[100:]
    assert response.getheader("Content-Range") == f"bytes 100-{len(picture) - 1}/{len(picture)}"
    response, data = call(token, "GET", path, headers={"Range": f"bytes={len(picture)}-"})
    assert response.status == 416

    response, data = call(token, "PUT", path, b"not a picture at all", headers={"Content-Type": "image/png"})
    assert response.status == 415


def test_a_body_announced_past_the_limit_is_refused_unread(token):
    url = urllib.parse.urlparse(base_url())
    with socket.create_connection((url.hostname, url.port), timeout=10) as raw:
        raw.sendall((
            "POST /api/v1/people HTTP/1.1\r\n"
            f"Host: {url.hostname}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nContent-Length: 104857600\r\nExpect: 100-continue\r\n\r\n").encode())
        answer = raw.recv(4096).decode("latin-1")
    assert answer.startswith("HTTP/1.1 413"), answer
    assert "100 Continue" not in answer


def test_a_registration_announced_past_the_limit_is_refused_unread():
    url = urllib.parse.urlparse(base_url())
    with socket.create_connection((url.hostname, url.port), timeout=10) as raw:
        raw.sendall((
            "POST /api/v1/users HTTP/1.1\r\n"
            f"Host: {url.hostname}\r\n"
            "Content-Type: application/json\r\nContent-Length: 104857600\r\nExpect: 100-continue\r\n\r\n").encode())
        answer = raw.recv(4096).decode("latin-1")
    assert answer.startswith("HTTP/1.1 413"), answer
    assert "100 Continue" not in answer


def test_a_change_reaches_an_open_event_stream(token):
    url = urllib.parse.urlparse(base_url())
    with socket.create_connection((url.hostname, url.port), timeout=20) as raw:
        raw.sendall((
            "GET /api/v1/events?apps=people HTTP/1.1\r\n"
            f"Host: {url.hostname}\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n").encode())
        received = b""
        while b": open" not in received:
            received += raw.recv(4096)
        response, data = call(token, "POST", "/api/v1/people", {"firstName": "Grace", "lastName": "Hopper"})
        assert response.status == 201
        created = json.loads(data)
        while f'"id":{created["id"]}'.encode() not in received:
            chunk = raw.recv(4096)
            assert chunk, "the stream ended"
            received += chunk
    assert b'"kind":"created"' in received
