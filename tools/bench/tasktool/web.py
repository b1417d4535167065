"""Dashboard request latency on a generated task set, against the load it always does.

Usage: ``python -m tools.bench.tasktool.web [--count 10000] [--runs 9] [--out FILE]``

Generates ``--count`` tasks (``tools.bench.tasktool.generate``), starts the real
dashboard (``tasktool.web.server.run``) on a free loopback port in a thread,
warms the parse cache, then times ``--runs`` sequential requests per endpoint
over one keep-alive connection. Baseline, measured in the same run: the
in-process load of the repository (``loader()()``), which every request
performs; the report gives medians and each endpoint's ratio to it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tasktool.config import Overrides
from tasktool.planning.repository import loader
from tasktool.web.app import WebConfig
from tasktool.web.server import Bound, listen, run
from tools.bench.tasktool.generate import generate_tasks, write_tasks

REQUESTS: dict[str, tuple[str, str]] = {
    "GET /api/tasks": ("GET", "/api/tasks"),
    "GET /api/tasks/{id}": ("GET", "/api/tasks/{id}"),
    "GET /api/next": ("GET", "/api/next"),
    "GET /api/stats": ("GET", "/api/stats"),
    "GET / (table page)": ("GET", "/"),
    "GET /tasks/{id} (page)": ("GET", "/tasks/{id}"),
    "PUT /api/tasks/{id}": ("PUT", "/api/tasks/{id}"),
}


def _median(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench(count: int, runs: int) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".git").mkdir()
        task_dir = write_tasks(generate_tasks(count), root)
        load = loader(Overrides(config=str(root / ".tasktool.yaml")))
        repo = load()
        task_id = repo.tasks[len(repo.tasks) // 2].id
        ready = threading.Event()
        holder: dict[str, object] = {}

        async def main() -> None:
            shutdown = asyncio.Event()
            loop = asyncio.get_running_loop()
            holder["stop"] = lambda: loop.call_soon_threadsafe(shutdown.set)

            def on_ready(bound: Bound) -> None:
                holder["url"] = bound.url.rstrip("/")
                ready.set()

            await run(WebConfig(load=load, task_dir=task_dir), listen("127.0.0.1", 0),
                      shutdown=shutdown, ready=on_ready)  # fmt: skip

        thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
        thread.start()
        ready.wait(30)
        baseline = _median(load, runs)
        rows = []
        with httpx.Client(base_url=str(holder["url"]), timeout=60) as client:
            flip = iter(["high", "low"] * runs * 2)
            for name, (method, path) in REQUESTS.items():
                target = path.format(id=task_id)

                def call(method: str = method, target: str = target) -> object:
                    if method == "PUT":
                        answer = client.put(target, json={"priority": next(flip)})
                    else:
                        answer = client.get(target)
                    answer.raise_for_status()
                    return answer

                call()  # warm
                median = _median(call, runs)
                rows.append(f"| {name} | {median * 1000:.0f} ms | {median / baseline:.2f} |")
        holder["stop"]()  # type: ignore[operator]
        thread.join(30)
    return "\n".join(
        [
            f"{count} tasks, {runs} runs each, medians; baseline (in-process load of the "
            f"repository, done by every request): {baseline * 1000:.0f} ms",
            "",
            "| request | median | ratio to the load |",
            "|---|---:|---:|",
            *rows,
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    report = bench(args.count, args.runs)
    print(report)
    if args.out:
        args.out.write_text(report + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
