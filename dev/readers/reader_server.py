"""The readers of the integration tests as one long-lived process (Spark takes seconds to
start, so a test file starts this once and sends it every query).

Protocol: one JSON request per line on stdin, one JSON response per line on stdout. Each
engine answers its requests in order, on a thread of its own, so that a test asking DuckDB,
PyIceberg and Spark for the same table waits for the slowest of them, not for their sum;
responses of different engines may come in any order (the id pairs them). Requests: {"id", "op": "start", "engines", "options"} warms engines up;
{"id", "op": "rows", "engine", "table", "columns"?, "orderBy"?} reads a whole table;
{"id", "op": "sql", "engine", "query", "catalog"?} runs a statement. Responses:
{"id", "ok": true, "result"} or {"id", "ok": false, "error", "traceback"}.
The process ends at the end of stdin.
"""

import json
import os
import queue
import sys
import threading
import time
import traceback

from arrow_json import rows_of
from engines import ENGINES


def main() -> None:
    # The JVM that Spark starts inherits file descriptor 1 and logs to it; keep the protocol on
    # a private copy and send everything else that writes to stdout to stderr.
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    server = Server()
    lock = threading.Lock()
    lanes: dict[str, queue.Queue] = {}
    threads: list[threading.Thread] = []

    def answer(request: dict) -> None:
        response = _answer(server, request)
        with lock:
            protocol.write(response + "\n")

    def lane(requests: queue.Queue) -> None:
        while (request := requests.get()) is not None:
            answer(request)

    try:
        for line in sys.stdin:
            request = json.loads(line)
            engine = request.get("engine")
            if engine is None:
                # start warms the engines up before any of them is asked anything.
                answer(request)
                continue
            if engine not in lanes:
                lanes[engine] = queue.Queue()
                threads.append(threading.Thread(target=lane, args=(lanes[engine],), daemon=True))
                threads[-1].start()
            lanes[engine].put(request)
    finally:
        for requests in lanes.values():
            requests.put(None)
        for thread in threads:
            thread.join()
        server.close()


def _answer(server: "Server", request: dict) -> str:
    try:
        result = server.handle(request)
        return json.dumps({"id": request["id"], "ok": True, "result": result}, allow_nan=False, separators=(",", ":"))
    except Exception as error:  # every failure goes back to the test that asked
        response = {"id": request["id"], "ok": False, "error": _describe(error), "traceback": traceback.format_exc()}
        return json.dumps(response)


class Server:
    def __init__(self):
        self._options: dict = {}
        self._engines: dict = {}

    def handle(self, request: dict):
        op = request["op"]
        if op == "start":
            self._options = request.get("options", {})
            return {name: self._timed_start(name) for name in request["engines"]}
        engine = self._engine(request["engine"])
        if op == "rows":
            table = engine.table(request["table"], request.get("columns"))
            return rows_of(table, request.get("orderBy"))
        if op == "sql":
            # SQL answers keep the order the query asked for.
            return rows_of(engine.sql(request["query"], request.get("catalog")), [])
        raise ValueError(f"unknown op {op!r}")

    def _timed_start(self, name: str) -> float:
        started = time.perf_counter()
        self._engine(name)
        return round(time.perf_counter() - started, 3)

    def _engine(self, name: str):
        if name not in self._engines:
            if name not in ENGINES:
                raise ValueError(f"unknown engine {name!r}; known: {sorted(ENGINES)}")
            self._engines[name] = ENGINES[name](self._options)
        return self._engines[name]

    def close(self) -> None:
        for engine in self._engines.values():
            engine.close()


def _describe(error: Exception) -> str:
    # Py4J errors carry the whole Java stack trace; its first line names the Java exception.
    java = getattr(error, "java_exception", None)
    if java is not None:
        return f"{type(error).__name__}: {java.toString()}"
    return f"{type(error).__name__}: {error}"


if __name__ == "__main__":
    main()
