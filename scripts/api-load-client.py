#!/usr/bin/env python3
"""The clients scripts/api-load-test.sh needs besides wrk (stdlib only).

The token (a bearer token, or PocketBase's superuser token for
pocketbase-fill) comes from the environment's API_LOAD_TOKEN, so that no
command line shows it; --token T is for trying by hand.

  api-load-client.py pocketbase-fill --url URL --people N
      Adds N people to PocketBase's `people` collection through its batch API.
  api-load-client.py streams --kind ours|pocketbase --url URL --streams N --pid PID
      Opens N event streams, makes one change, and reports the server's
      resident memory and how long the change took to reach the streams.
  api-load-client.py creates --kind ours|pocketbase --url URL --seconds S --log FILE
      Creates people for S seconds, through restarts of the server, and
      writes the ID of every acknowledged create to FILE, one a line.

Every connection goes to the loopback address. Results are printed as one
line `RESULT key=value ...` for the shell script to read; progress goes to
standard error.
"""

import argparse
import asyncio
import json
import os
import resource
import sys
import time
import urllib.parse
import urllib.request

# --- HTTP/1.1 over asyncio streams ------------------------------------------
# A small client of our own: urllib opens one connection a request and has no
# streaming reads with timeouts, and both servers speak plain HTTP/1.1.


class HTTPError(Exception):
    pass


def split_url(url):
    parts = urllib.parse.urlsplit(url)
    return parts.hostname, parts.port or 80, parts.path.rstrip("/")


async def read_head(reader):
    """Reads a response's status line and headers: (status, {name: value})."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split(" ", 2)[1])
    except (IndexError, ValueError):
        raise HTTPError(f"not an HTTP response: {lines[0]!r}")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return status, headers


async def read_body(reader, headers):
    if "content-length" in headers:
        return await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readline()  # the blank line after the last chunk (no trailers sent)
                return body
            body += await reader.readexactly(size)
            await reader.readline()
    return b""


def request_bytes(method, host, port, path, token, body=None):
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{port}", f"Authorization: Bearer {token}", "Accept: */*"]
    data = b""
    if body is not None:
        data = json.dumps(body).encode()
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    elif method in ("POST", "PUT", "PATCH"):
        lines.append("Content-Length: 0")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


class Connection:
    """One kept-alive connection, reopened after any failure."""

    def __init__(self, host, port, local=None):
        self.host, self.port, self.local = host, port, local
        self.reader = self.writer = None

    async def request(self, method, path, token, body=None, timeout=30):
        if self.writer is None:
            self.reader, self.writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, local_addr=self.local), timeout
            )
        try:
            self.writer.write(request_bytes(method, self.host, self.port, path, token, body))
            await self.writer.drain()
            status, headers = await asyncio.wait_for(read_head(self.reader), timeout)
            data = await asyncio.wait_for(read_body(self.reader, headers), timeout)
            if headers.get("connection", "").lower() == "close":
                self.close()
            return status, headers, data
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def raise_open_file_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def resident_kib(pid):
    """The process's resident set size (VmRSS) in KiB, or -1 when it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def percentile(values, p):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def log(message):
    print(f"api-load-client: {message}", file=sys.stderr, flush=True)


# --- The two servers' shapes -----------------------------------------------


def person_body(kind, first, last, age):
    if kind == "ours":
        return {"firstName": first, "lastName": last, "age": age}
    return {"first": first, "last": last, "age": age}


def create_path(kind, base):
    return f"{base}/api/v1/people" if kind == "ours" else f"{base}/api/collections/people/records"


def created(kind, status):
    # Our API answers a create with 201, PocketBase with 200.
    return status == 201 if kind == "ours" else status == 200


# --- pocketbase-fill ----------------------------------------------------------


def pocketbase_fill(args):
    """Batches of 500 creates, each batch one transaction in PocketBase."""
    per = 500
    for start in range(1, args.people + 1, per):
        requests = [
            {
                "method": "POST",
                "url": "/api/collections/people/records",
                "body": {"first": f"Person{i}", "last": f"Surname{i * 7919 % args.people}", "age": 18 + i % 80},
            }
            for i in range(start, min(args.people, start + per - 1) + 1)
        ]
        request = urllib.request.Request(
            args.url.rstrip("/") + "/api/batch",
            data=json.dumps({"requests": requests}).encode(),
            headers={"Authorization": args.token, "Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=120) as response:
            answers = json.load(response)
        bad = [a for a in answers if a.get("status") != 200]
        if len(answers) != len(requests) or bad:
            log(f"PocketBase refused part of a batch: {bad[:1]}")
            return 1
    print(f"RESULT added={args.people}")
    return 0


# --- streams ------------------------------------------------------------------

HEARTBEATS = {"ping", "heartbeat", "keepalive", "keep-alive"}


class Stream:
    """One open event stream: its parsed events, and when the change arrived."""

    def __init__(self):
        self.client_id = None  # PocketBase's, from PB_CONNECT
        self.connected = asyncio.Event()
        self.arrived = None  # monotonic time of the first event after the change
        self.task = None

    async def run(self, kind, host, port, path, token, local, state):
        reader, writer = await asyncio.open_connection(host, port, local_addr=local)
        try:
            lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Accept: text/event-stream", "Cache-Control: no-cache"]
            if kind == "ours":
                lines.append(f"Authorization: Bearer {token}")
            writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
            await writer.drain()
            status, headers = await read_head(reader)
            if status != 200:
                raise HTTPError(f"status {status}")
            chunked = headers.get("transfer-encoding", "").lower() == "chunked"
            if kind == "ours":
                self.connected.set()
            buffer = b""
            event, data = "", []
            while True:
                if chunked:
                    size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        return
                    chunk = await reader.readexactly(size)
                    await reader.readline()
                else:
                    chunk = await reader.read(65536)
                    if not chunk:
                        return
                buffer += chunk
                while b"\n" in buffer:
                    raw, buffer = buffer.split(b"\n", 1)
                    line = raw.rstrip(b"\r").decode("utf-8", "replace")
                    if line == "":
                        self.event(kind, event, "\n".join(data), state)
                        event, data = "", []
                    elif line.startswith(":"):
                        continue
                    elif line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip())
        finally:
            writer.close()

    def event(self, kind, name, data, state):
        if kind == "pocketbase" and name == "PB_CONNECT":
            self.client_id = json.loads(data)["clientId"]
            return
        if not data or name.lower() in HEARTBEATS:
            return
        if state["armed"] is not None and self.arrived is None:
            # PocketBase sends each subscribed collection's changes; ours the
            # apps asked for: the first event after the change is the change.
            if kind == "pocketbase" and state["marker"] not in data:
                return
            self.arrived = time.monotonic()
            state["arrivals"] += 1
            if state["arrivals"] == state["open"]:
                state["all"].set()


async def streams(args):
    limit = raise_open_file_limit()
    if limit < args.streams + 64:
        log(f"the open-file limit is {limit}, fewer than {args.streams} streams need")
    host, port, base = split_url(args.url)
    path = f"{base}/api/v1/events?apps=people" if args.kind == "ours" else f"{base}/api/realtime"
    state = {"armed": None, "marker": "", "arrivals": 0, "open": 0, "all": asyncio.Event()}
    rss_before = resident_kib(args.pid)
    # At most --per-address connections from one source address (127.0.0.2,
    # 127.0.0.3, ...: all loopback): our server limits what one client
    # address holds, as a reverse proxy's many clients would not be.
    locals_ = [(f"127.0.0.{2 + i // args.per_address}", 0) for i in range(args.streams)]
    opened = [Stream() for _ in range(args.streams)]
    failures = {}
    started = time.monotonic()
    gate = asyncio.Semaphore(args.parallel)

    async def open_one(stream, local):
        async with gate:
            task = stream.task = asyncio.ensure_future(stream.run(args.kind, host, port, path, args.token, local, state))
            waiter = asyncio.ensure_future(stream.connected.wait())
            done, _ = await asyncio.wait({task, waiter}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
            if waiter not in done:
                waiter.cancel()
                if task in done and task.exception() is not None:
                    error = task.exception()
                    key = type(error).__name__ + (f" {error}" if isinstance(error, HTTPError) else "")
                else:
                    key = "no answer in 30 s"
                    task.cancel()
                failures[key] = failures.get(key, 0) + 1

    async def open_pocketbase(stream, local):
        # PocketBase: the stream's PB_CONNECT event names the client, which a
        # POST /api/realtime (with the token) subscribes to the collection.
        async with gate:
            task = stream.task = asyncio.ensure_future(stream.run(args.kind, host, port, path, args.token, local, state))
            for _ in range(3000):
                if stream.client_id or task.done():
                    break
                await asyncio.sleep(0.01)
            if not stream.client_id:
                failures["no PB_CONNECT"] = failures.get("no PB_CONNECT", 0) + 1
                task.cancel()
                return
            pool = subscribers[local]
            connection = await pool.get()
            try:
                status, _, body = await connection.request(
                    "POST", f"{base}/api/realtime", args.token, {"clientId": stream.client_id, "subscriptions": ["people"]}
                )
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, HTTPError) as error:
                status, body = 0, str(error).encode()
            finally:
                pool.put_nowait(connection)
            if status != 204:
                key = f"subscribe status {status}"
                if key not in failures:
                    log(f"a subscription answered {status}: {body[:200]!r}")
                failures[key] = failures.get(key, 0) + 1
                task.cancel()
                return
            stream.connected.set()

    # The subscriptions go over a few kept-alive connections, one request
    # at a time on each, from the stream's own source address (PocketBase
    # refuses a subscription from another address than its stream's).
    subscribers = {}
    for local in set(locals_):
        subscribers[local] = asyncio.Queue()
        for _ in range(4):
            subscribers[local].put_nowait(Connection(host, port, local))
    opener = open_one if args.kind == "ours" else open_pocketbase
    await asyncio.gather(*(opener(s, l) for s, l in zip(opened, locals_)))
    for pool in subscribers.values():
        while not pool.empty():
            pool.get_nowait().close()
    tasks = [s.task for s in opened if s.task is not None]
    live = [s for s in opened if s.connected.is_set()]
    state["open"] = len(live)
    open_seconds = time.monotonic() - started
    log(f"{len(live)} of {args.streams} streams open in {open_seconds:.1f} s; failures: {failures or 'none'}")
    # Let the server settle (and count what it holds) before the change.
    await asyncio.sleep(args.settle)
    rss_open = resident_kib(args.pid)
    dropped = sum(1 for s in live if s.task.done())
    live = [s for s in live if not s.task.done()]
    still = len(live)
    result = {
        "streams": args.streams,
        "open": still,
        "open_seconds": f"{open_seconds:.1f}",
        "rss_before_kib": rss_before,
        "rss_open_kib": rss_open,
        "failures": sum(failures.values()) + dropped,
    }
    if still == 0:
        print("RESULT " + " ".join(f"{k}={v}" for k, v in result.items()) + " delivered=0")
        return 1
    state["open"] = still
    marker = f"Stream{os.getpid()}x{int(time.time())}"
    state["marker"] = marker
    change = Connection(host, port)
    state["armed"] = time.monotonic()
    status, _, body = await change.request(
        "POST", create_path(args.kind, base), args.token, person_body(args.kind, marker, "Change", 42)
    )
    change.close()
    answered = time.monotonic() - state["armed"]
    if not created(args.kind, status):
        log(f"the change was refused with status {status}: {body[:200]!r}")
    try:
        await asyncio.wait_for(state["all"].wait(), args.wait)
    except asyncio.TimeoutError:
        pass
    latencies = [(s.arrived - state["armed"]) * 1000 for s in live if s.arrived is not None]
    rss_after = resident_kib(args.pid)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    result.update(
        {
            "create_status": status,
            "create_ms": f"{answered * 1000:.1f}",
            "delivered": len(latencies),
            "p50_ms": f"{percentile(latencies, 50):.1f}",
            "p99_ms": f"{percentile(latencies, 99):.1f}",
            "max_ms": f"{max(latencies, default=0):.1f}",
            "rss_after_kib": rss_after,
        }
    )
    print("RESULT " + " ".join(f"{k}={v}" for k, v in result.items()), flush=True)
    return 0 if len(latencies) == still and created(args.kind, status) else 1


# --- creates --------------------------------------------------------------------


async def creates(args):
    host, port, base = split_url(args.url)
    path = create_path(args.kind, base)
    deadline = time.monotonic() + args.seconds
    counts = {"acknowledged": 0, "refused": 0, "unanswered": 0}
    out = open(args.log, "w", buffering=1)

    async def worker(number):
        connection = Connection(host, port)
        sent = 0
        while time.monotonic() < deadline:
            sent += 1
            body = person_body(args.kind, f"Kill{number}", f"C{sent}", 30)
            try:
                status, _, data = await connection.request("POST", path, args.token, body, timeout=10)
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, HTTPError, ValueError):
                # Refused while the server is down, or cut off when it was
                # killed: not acknowledged, so it need not be there.
                counts["unanswered"] += 1
                await asyncio.sleep(0.02)
                continue
            if created(args.kind, status):
                try:
                    identifier = json.loads(data)["id"]
                except (ValueError, KeyError, TypeError):
                    log(f"a create answered {status} without an id: {data[:200]!r}")
                    counts["refused"] += 1
                    continue
                out.write(f"{identifier}\n")
                counts["acknowledged"] += 1
            else:
                counts["refused"] += 1
                if counts["refused"] <= 3:
                    log(f"a create answered {status}: {data[:200]!r}")
        connection.close()

    await asyncio.gather(*(worker(n) for n in range(args.workers)))
    out.close()
    print("RESULT " + " ".join(f"{k}={v}" for k, v in counts.items()), flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    fill = commands.add_parser("pocketbase-fill")
    fill.add_argument("--url", required=True)
    fill.add_argument("--token", default=os.environ.get("API_LOAD_TOKEN"))
    fill.add_argument("--people", type=int, default=10000)
    watch = commands.add_parser("streams")
    watch.add_argument("--kind", choices=["ours", "pocketbase"], required=True)
    watch.add_argument("--url", required=True)
    watch.add_argument("--token", default=os.environ.get("API_LOAD_TOKEN"))
    watch.add_argument("--streams", type=int, default=10000)
    watch.add_argument("--pid", type=int, required=True, help="the server's process, for its resident memory")
    watch.add_argument("--per-address", type=int, default=1000)
    watch.add_argument("--parallel", type=int, default=200, help="streams being opened at once")
    watch.add_argument("--settle", type=float, default=2.0)
    watch.add_argument("--wait", type=float, default=30.0, help="seconds to wait for the change to arrive")
    make = commands.add_parser("creates")
    make.add_argument("--kind", choices=["ours", "pocketbase"], required=True)
    make.add_argument("--url", required=True)
    make.add_argument("--token", default=os.environ.get("API_LOAD_TOKEN"))
    make.add_argument("--seconds", type=float, default=10)
    make.add_argument("--workers", type=int, default=16)
    make.add_argument("--log", required=True)
    args = parser.parse_args()
    if not args.token:
        parser.error("give the token in API_LOAD_TOKEN (kept off the command line) or --token")
    if args.command == "pocketbase-fill":
        return pocketbase_fill(args)
    if args.command == "streams":
        return asyncio.run(streams(args))
    return asyncio.run(creates(args))


if __name__ == "__main__":
    sys.exit(main())
