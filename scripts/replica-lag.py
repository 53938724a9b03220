#!/usr/bin/env python3
"""How far a read replica (records serve --read-replica) is behind its
primary (records serve --replicate): starts both on a fresh database in a
temporary directory, creates people one at a time through the primary's
JSON API, and times how long each takes to be found on the replica's API.
Prints p50, p99 and the largest lag, in seconds.

    scripts/replica-lag.py [COUNT]      (default 50; RECORDS_BIN picks the
                                         binary, default .build/release/records;
                                         LAG_LIMIT the seconds it waits for one
                                         create, default 30, then it fails and
                                         shows both servers' last log lines)
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
records = os.environ.get("RECORDS_BIN", os.path.join(root, ".build/release/records"))
count = int(sys.argv[1]) if len(sys.argv) > 1 else 50
work = tempfile.mkdtemp(prefix="replica-lag-")
database = os.path.join(work, "primary.sqlite")
replica = os.path.join(work, "replica")
environment = dict(os.environ, RECORDS_DATABASE=database)
environment.pop("LITESTREAM_REPLICA_URL", None)
password = "correct horse battery staple"
logs = []
limit = float(os.environ.get("LAG_LIMIT", "30"))


def run(*arguments, text=None):
    return subprocess.run([records, *arguments], input=text, capture_output=True, text=True, check=True,
                          env=environment).stdout


def serve(*arguments, database_path=database):
    log = open(os.path.join(work, f"serve-{len(logs)}.log"), "w")
    logs.append(log.name)
    process = subprocess.Popen([records, "--database", database_path, "serve", "--listen", "127.0.0.1:0",
                                *arguments], stdout=subprocess.PIPE, stderr=log, text=True, env=environment)
    # The address is the first line of records' own; Litestream's VFS may
    # log before it (LITESTREAM_LOG_LEVEL=DEBUG).
    for _ in range(1000):
        line = process.stdout.readline()
        match = re.search(r"(http://\S+/)", line)
        if match or not line:
            break
        log.write(line)
    if not match:
        process.kill()
        sys.exit(f"replica-lag: records serve {' '.join(arguments)} did not start: {line!r}")
    # The rest of standard output (Litestream's VFS logs there) goes to the
    # log, so that a full pipe never blocks the server.
    def drain():
        for rest in process.stdout:
            log.write(rest)
            log.flush()
    threading.Thread(target=drain, daemon=True).start()
    return process, match.group(1)


def request(url, token, body=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=10) as answer:
        return json.loads(answer.read())


run("users", "register", "--first", "Ada", "--last", "Lovelace", "--email", "ada@example.com",
    "--password-stdin", text=f"{password}\n{password}\n")
token = run("token", "create", "--email", "ada@example.com", "--name", "lag", "--password-stdin",
            text=f"{password}\n").strip()
primary, primary_url = serve("--replicate", replica)
servers = [primary]
failed = False
try:
    deadline = time.monotonic() + 30
    while not any(name.endswith(".ltx") for _, _, names in os.walk(replica) for name in names):
        if time.monotonic() > deadline:
            sys.exit("replica-lag: Litestream made no first copy in 30 s")
        time.sleep(0.1)
    copy, copy_url = serve("--read-replica", replica, database_path=os.path.join(work, "unused.sqlite"))
    servers.append(copy)
    lags = []
    moments = []
    for index in range(count):
        name = f"Lag{index:05d}"
        request(primary_url + "api/v1/people", token, {"firstName": "Replica", "lastName": name})
        acknowledged = time.monotonic()
        while True:
            found = request(copy_url + f"api/v1/people?q={name}", token)
            if found.get("total", len(found.get("items", []))) > 0:
                break
            if time.monotonic() - acknowledged > limit:
                for log in logs:
                    with open(log) as text:
                        sys.stderr.write(f"--- {os.path.basename(log)}, last lines:\n")
                        sys.stderr.writelines(text.readlines()[-15:])
                failed = True
                sys.exit(f"replica-lag: {name} (create {index + 1}) did not reach the replica in {limit:g} s; "
                         f"the logs are kept in {work}")
            time.sleep(0.02)
        lags.append(time.monotonic() - acknowledged)
        moments.append((lags[-1], time.strftime("%H:%M:%S", time.gmtime()), name))
    slowest = sorted(moments, reverse=True)[:5]
    print("slowest: " + ", ".join(f"{name} {lag:.2f} s (found {at} UTC)" for lag, at, name in slowest))
    lags.sort()
    p50 = lags[len(lags) // 2]
    p99 = lags[min(len(lags) - 1, int(len(lags) * 0.99))]
    print(f"replica lag over {count} creates: p50 {p50:.2f} s, p99 {p99:.2f} s, max {lags[-1]:.2f} s")
finally:
    for server in servers:
        server.terminate()
    for server in servers:
        server.wait(timeout=30)
    if not failed:
        subprocess.run(["rm", "-rf", work])
