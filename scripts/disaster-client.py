#!/usr/bin/env python3
"""The client of scripts/disaster-test.sh (stdlib only, with the HTTP client
of scripts/api-load-client.py).

  disaster-client.py load --url URL --server PID --creates N --connections C
                          --kill-after K --log FILE [--sequential S]
                          [--watch-replica DIR]
      Sends S creates one at a time (their latency), then N creates
      (POST /api/v1/people) over C kept-alive connections. When K creates
      have been answered, kills the server PID and its Litestream child
      with SIGKILL; the creates not yet sent are not sent. Writes one JSON
      line a create to FILE: its index, name, HTTP status (0: no answer),
      the ID it was given and when its answer came (time.monotonic()).
      With --watch-replica, a thread lists DIR/ltx/0 every 5 ms and writes
      FILE.replica: when each level-0 LTX file (one a Litestream sync) was
      first seen there.
  disaster-client.py lag --log FILE --replica DIR --litestream EXE
                         --records EXE --work DIR
      The replication lag of each acknowledged create of `load
      --watch-replica`: the time from its 201 until the first level-0 LTX
      file whose restore (litestream restore -txid, read with records
      people list) holds it was seen in the replica. Run it before anything
      else writes to the replica.
  disaster-client.py check --url URL --log FILE
      Lists every person through the API (the restored server), and counts
      the creates FILE says were acknowledged (201) and are missing or
      changed.

The token comes from API_LOAD_TOKEN, so that no command line shows it.
Results are printed as `RESULT key=value ...` lines; progress goes to
standard error.
"""

import argparse
import asyncio
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time

_spec = importlib.util.spec_from_file_location(
    "api_load_client", os.path.join(os.path.dirname(os.path.abspath(__file__)), "api-load-client.py")
)
client = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(client)


def log(message):
    print(f"disaster-client: {message}", file=sys.stderr, flush=True)


def litestream_children(parent):
    """The IDs of `parent`'s child processes named litestream (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        name = text[text.find("(") + 1 : text.rfind(")")]
        fields = text[text.rfind(")") + 2 :].split()
        if name == "litestream" and len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(entry))
    return found


class ReplicaWatcher(threading.Thread):
    """Notes when each level-0 LTX file first shows in a directory replica."""

    def __init__(self, replica):
        super().__init__(daemon=True)
        self.directory = os.path.join(replica, "ltx", "0")
        self.seen = {}
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            try:
                names = os.listdir(self.directory)
            except FileNotFoundError:
                names = []
            now = time.monotonic()
            for name in names:
                if name.endswith(".ltx") and name not in self.seen:
                    self.seen[name] = now
            self.stopping.wait(0.005)


def person(index):
    return {"firstName": "Disaster", "lastName": f"D{index:05d}", "age": 18 + index % 80}


async def load(args):
    host, port, base = client.split_url(args.url)
    path = f"{base}/api/v1/people"
    out = open(args.log, "w", buffering=1)
    watcher = ReplicaWatcher(args.watch_replica) if args.watch_replica else None
    if watcher:
        watcher.start()

    def record(index, status, identifier, answered):
        out.write(json.dumps({"index": index, "name": person(index)["lastName"], "status": status,
                              "id": identifier, "answered": answered}) + "\n")

    async def create(connection, index):
        try:
            status, _, data = await connection.request("POST", path, args.token, person(index), timeout=15)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, client.HTTPError, ValueError):
            # Cut off by the kill, or refused once the server is gone: not
            # acknowledged, so it need not be there.
            return 0, None, time.monotonic()
        answered = time.monotonic()
        identifier = None
        if status == 201:
            try:
                identifier = json.loads(data)["id"]
            except (ValueError, KeyError, TypeError):
                log(f"a create answered 201 without an id: {data[:200]!r}")
                status = -201
        elif status != 503:
            log(f"a create answered {status}: {data[:200]!r}")
        return status, identifier, answered

    # One at a time: the latency of one create.
    latencies = []
    single = client.Connection(host, port)
    for index in range(args.sequential):
        started = time.monotonic()
        status, identifier, answered = await create(single, index)
        record(index, status, identifier, answered)
        if status == 201:
            latencies.append((answered - started) * 1000)
    single.close()

    # Then the load, with the kill after the K-th answer.
    counts = {"answered": 0, "acknowledged": 0, "not_replicated": 0, "unanswered": 0, "other": 0}
    state = {"next": args.sequential, "killed": None}
    end = args.sequential + args.creates

    def kill():
        children = litestream_children(args.server)
        for pid in [args.server, *children]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        state["killed"] = time.monotonic()
        log(f"killed the server ({args.server}) and Litestream ({', '.join(map(str, children)) or 'none found'}) "
            f"after {counts['answered']} answers")

    async def worker():
        connection = client.Connection(host, port)
        while state["killed"] is None and state["next"] < end:
            index = state["next"]
            state["next"] += 1
            status, identifier, answered = await create(connection, index)
            record(index, status, identifier, answered)
            key = {201: "acknowledged", 503: "not_replicated", 0: "unanswered"}.get(status, "other")
            counts[key] += 1
            if status != 0:
                counts["answered"] += 1
                if counts["answered"] == args.kill_after and state["killed"] is None:
                    kill()
        connection.close()

    started = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(args.connections)))
    seconds = time.monotonic() - started
    if state["killed"] is None:
        kill()
    out.close()
    if watcher:
        # What reaches the replica in the moment after the kill (a sync
        # already writing) still counts; nothing later can.
        await asyncio.sleep(0.2)
        watcher.stopping.set()
        watcher.join()
        with open(args.log + ".replica", "w") as replica:
            json.dump(watcher.seen, replica)
    result = dict(counts, sent=state["next"] - args.sequential, seconds=f"{seconds:.2f}",
                  single_p50_ms=f"{client.percentile(latencies, 50):.1f}",
                  single_p99_ms=f"{client.percentile(latencies, 99):.1f}")
    print("RESULT " + " ".join(f"{k}={v}" for k, v in result.items()), flush=True)
    return 0


def everyone(args):
    """Every person the server lists: {id: lastName}."""
    host, port, base = client.split_url(args.url)

    async def pages():
        connection = client.Connection(host, port)
        found, offset = {}, 0
        while True:
            status, _, data = await connection.request(
                "GET", f"{base}/api/v1/people?limit=500&offset={offset}&sort=newest", args.token)
            if status != 200:
                raise SystemExit(f"disaster-client: listing people answered {status}: {data[:200]!r}")
            items = json.loads(data)["items"]
            for item in items:
                found[item["id"]] = item["lastName"]
            if len(items) < 500:
                break
            offset += 500
        connection.close()
        return found

    return asyncio.run(pages())


def replica_arrivals(args, creates):
    """When each create reached the replica: {name: time.monotonic()}."""
    with open(args.log + ".replica") as file:
        seen = json.load(file)
    arrivals = {}
    # In the order of their transactions: a create is in the first sync
    # whose restore holds it.
    for name in sorted(seen, key=lambda n: n.split("-")[1]):
        txid = name.split("-")[1].removesuffix(".ltx")
        copy = os.path.join(args.work, f"at-{txid}.sqlite")
        restore = subprocess.run(
            [args.litestream, "restore", "-no-expand-env", "-o", copy, "-txid", txid,
             "file://" + os.path.abspath(args.replica)],
            capture_output=True, text=True)
        if restore.returncode != 0:
            # Compacted away already, or written after the kill: skipped, so
            # its creates count from the next file that holds them.
            log(f"no restore at transaction {txid}: {restore.stderr.strip()[-200:]}")
            continue
        listed = subprocess.run([args.records, "--database", copy, "people", "list", "--json"],
                                capture_output=True, text=True, check=True)
        for entry in json.loads(listed.stdout):
            name_ = entry.get("lastName")
            if name_ in creates and name_ not in arrivals:
                arrivals[name_] = seen[name]
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(copy + suffix):
                os.remove(copy + suffix)
    return arrivals


def read_log(path):
    creates = {}
    with open(path) as file:
        for line in file:
            entry = json.loads(line)
            creates[entry["name"]] = entry
    return creates


def lag(args):
    creates = read_log(args.log)
    acknowledged = {name: c for name, c in creates.items() if c["status"] == 201}
    arrivals = replica_arrivals(args, creates)
    lags = [(arrivals[name] - c["answered"]) * 1000 for name, c in acknowledged.items() if name in arrivals]
    with open(args.log + ".replica") as file:
        syncs = len(json.load(file))
    result = {"measured": len(lags), "not_arrived": len(acknowledged) - len(lags), "syncs_seen": syncs,
              "p50_ms": f"{client.percentile(lags, 50):.0f}", "p99_ms": f"{client.percentile(lags, 99):.0f}",
              "max_ms": f"{max(lags, default=0):.0f}"}
    print("RESULT " + " ".join(f"{k}={v}" for k, v in result.items()), flush=True)
    return 0


def check(args):
    creates = read_log(args.log)
    acknowledged = {name: c for name, c in creates.items() if c["status"] == 201}
    present = everyone(args)
    names = set(present.values())
    lost = [c for c in acknowledged.values() if present.get(c["id"]) != c["name"]]
    unacknowledged_present = sum(1 for name, c in creates.items() if c["status"] != 201 and name in names)
    for entry in lost[:5]:
        log(f"lost: create {entry['index']} ({entry['name']}), answered 201 with id {entry['id']}")
    result = {"acknowledged": len(acknowledged), "lost": len(lost), "present": len(names & set(creates)),
              "unacknowledged_present": unacknowledged_present}
    print("RESULT " + " ".join(f"{k}={v}" for k, v in result.items()), flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("load")
    run.add_argument("--url", required=True)
    run.add_argument("--server", type=int, required=True)
    run.add_argument("--creates", type=int, default=1000)
    run.add_argument("--connections", type=int, default=16)
    run.add_argument("--sequential", type=int, default=0)
    run.add_argument("--kill-after", type=int, required=True)
    run.add_argument("--log", required=True)
    run.add_argument("--watch-replica")
    measure = commands.add_parser("lag")
    for option in ("--log", "--replica", "--litestream", "--records", "--work"):
        measure.add_argument(option, required=True)
    verify = commands.add_parser("check")
    verify.add_argument("--url", required=True)
    verify.add_argument("--log", required=True)
    for command in (run, verify):
        command.add_argument("--token", default=os.environ.get("API_LOAD_TOKEN"))
    args = parser.parse_args()
    if args.command == "lag":
        return lag(args)
    if not args.token:
        parser.error("give the token in API_LOAD_TOKEN (kept off the command line) or --token")
    if args.command == "load":
        return asyncio.run(load(args))
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
