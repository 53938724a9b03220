#!/usr/bin/env python3
"""One change from device A to device B through `records serve`, with
`records sync --watch` on both: the time from A's commit to the row being
readable in B's database, over N changes (default 100), as p50, p99 and max.

    scripts/sync-latency.py [--changes N] [--records PATH]

The change is written into A's file by this script with plain SQL, as any
program on the device would; A's watcher sees it (it looks at the file's data
version every 5 ms), pushes it, the server's event stream wakes B's watcher,
and B pulls it (A does not: the event names a position it has pulled past). Everything runs on loopback in a temporary
directory, which is removed afterwards. Use a release build for figures
(swift build -c release --product records; --records .build/release/records)."""

import argparse
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

PASSWORD = "latency tester password"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--records", default=os.environ.get("RECORDS_BIN", ".build/debug/records"))
    parser.add_argument("--synchronous", default="full", help="The server's --synchronous mode (full or normal)")
    parser.add_argument("--server-log", help="Write the server's log (each request with its time) to this file")
    arguments = parser.parse_args()
    binary = os.path.abspath(arguments.records)

    def records(database, *words, stdin=None):
        run = subprocess.run([binary, "--database", database, *words], input=stdin, capture_output=True,
                             text=True, timeout=120)
        if run.returncode != 0:
            sys.exit(f"records {' '.join(words)} failed: {run.stderr}")
        return run.stdout

    with tempfile.TemporaryDirectory(prefix="sync-latency-") as directory:
        server_db = os.path.join(directory, "server.sqlite")
        records(server_db, "users", "register", "--first", "Lat", "--last", "Ency", "--email", "lat@example.com",
                "--mobile", "9876543210", "--state", "Surrey", "--city", "London", "--pincode", "110001",
                "--address", "1 Test Street", "--gender", "other", "--dob", "1990-01-01", "--image", "l.png",
                "--password-stdin", stdin=f"{PASSWORD}\n{PASSWORD}\n")
        token_file = os.path.join(directory, "token")
        with open(token_file, "w") as file:
            file.write(records(server_db, "token", "create", "--email", "lat@example.com", "--name", "latency",
                               "--password-stdin", stdin=f"{PASSWORD}\n"))
        processes = []
        try:
            server = subprocess.Popen([binary, "--database", server_db, "serve", "--listen", "127.0.0.1:0",
                                       "--synchronous", arguments.synchronous],
                                      stdout=subprocess.PIPE, text=True,
                                      stderr=open(arguments.server_log, "w") if arguments.server_log else subprocess.DEVNULL)
            processes.append(server)
            url = re.search(r"(http://127\.0\.0\.1:\d+)/", server.stdout.readline()).group(1)
            devices = {}
            for name in ["a", "b"]:
                database = os.path.join(directory, f"{name}.sqlite")
                records(database, "remote", "set", url, "--token-file", token_file)
                records(database, "sync")
                devices[name] = database
            records(devices["a"], "sync")
            for name in ["a", "b"]:
                processes.append(subprocess.Popen([binary, "--database", devices[name], "sync", "--watch"],
                                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(2)

            writer = sqlite3.connect(devices["a"], isolation_level=None)
            reader = sqlite3.connect(devices["b"], isolation_level=None)
            latencies = []
            for index in range(arguments.changes):
                name = f"Latency{index}"
                writer.execute("INSERT INTO peopleInfo (firstname, lastname, age) VALUES (?, 'Probe', 1)", (name,))
                start = time.monotonic()
                while reader.execute("SELECT 1 FROM peopleInfo WHERE firstname = ?", (name,)).fetchone() is None:
                    if time.monotonic() - start > 30:
                        sys.exit(f"change {index} did not reach B in 30 s")
                    time.sleep(0.0005)
                latencies.append((time.monotonic() - start) * 1000)
                time.sleep(0.05)
        finally:
            for process in processes:
                process.send_signal(signal.SIGTERM)
            for process in processes:
                process.wait(timeout=30)

    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(f"{len(latencies)} changes A -> server -> B: p50 {statistics.median(latencies):.1f} ms, "
          f"p99 {p99:.1f} ms, max {latencies[-1]:.1f} ms, mean {statistics.mean(latencies):.1f} ms; "
          f"slowest: {', '.join(f'{value:.0f}' for value in latencies[-5:])} ms")


if __name__ == "__main__":
    main()
