"""Control-plane benchmarks: credential resolution cost and /admin request rates per store.

Run: ``python tools/bench/matchmaker-control/bench_control.py`` (PostgreSQL at
127.0.0.1:5432, database ``test``, is used when reachable). Writes
``docs/benchmarks/matchmaker-control.md``. Loopback only, bounded counts.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
import httpx

from matchmaker.directory import ProjectDirectory
from matchmaker.model import MatchmakingPolicy, Project, ProjectKey
from matchmaker.store import ProjectStore, open_store

ROOT = Path(__file__).parents[3]
OUT = ROOT / "docs" / "benchmarks" / "matchmaker-control.md"
POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
RUNS = 5
PROJECTS = 500
LOOKUPS = 2000
HTTP_REQUESTS = 200
KEY = "bench-key"


def project(i: int) -> Project:
    return Project(
        id=f"project-{i:05d}",
        keys=(ProjectKey(type="shared-secret", secret=f"secret-{i}"),),
        policies=(MatchmakingPolicy(name="duel", mode="auto", group_size=2, default=True),),
    )


async def timed(action: Callable[[], Awaitable[None]]) -> float:
    started = time.perf_counter()
    await action()
    return time.perf_counter() - started


async def lookup_costs(urls: dict[str, str]) -> dict[str, float]:
    """Median microseconds to resolve a Project by id: directory vs each store's get."""
    projects = [project(i) for i in range(PROJECTS)]
    directory = ProjectDirectory(projects)
    ids = [projects[i % PROJECTS].id for i in range(LOOKUPS)]
    secrets = [f"secret-{i % PROJECTS}" for i in range(LOOKUPS)]

    async def directory_pass() -> None:
        for secret in secrets:
            assert directory.project_for_secret(secret) is not None

    results = {"directory (secret -> Project)": await median_us(directory_pass, LOOKUPS)}
    for name, url in urls.items():
        store = await open_store(url)
        try:
            for p in projects:
                await store.create(p)

            async def store_pass(store: ProjectStore = store) -> None:
                for project_id in ids:
                    assert await store.get(project_id) is not None

            results[f"{name} store get"] = await median_us(store_pass, LOOKUPS)
        finally:
            await store.close()
    return results


async def median_us(action: Callable[[], Awaitable[None]], count: int) -> float:
    return statistics.median([await timed(action) for _ in range(RUNS)]) / count * 1e6


def http_rates(urls: dict[str, str]) -> dict[str, tuple[float, float]]:
    """Median requests/s of sequential POSTs and GETs against the real executable."""
    script = shutil.which("matchmaker", path=str(Path(sys.executable).parent))
    assert script
    rates: dict[str, tuple[float, float]] = {}
    for name, url in urls.items():
        posts, gets = [], []
        for run in range(RUNS):
            with tempfile.TemporaryDirectory() as tmp:
                store = url.replace("{tmp}", tmp)
                proc = subprocess.Popen(
                    [script, "--port", "0", "--management-port", "0", "--management-key", KEY,
                     "--store", store, "--log-level", "info"],
                    stderr=subprocess.PIPE, text=True,
                )  # fmt: skip
                try:
                    port = control_port(proc)
                    auth = {"Authorization": f"Bearer {KEY}"}
                    base = f"http://127.0.0.1:{port}/admin/projects"
                    with httpx.Client(headers=auth) as client:
                        started = time.perf_counter()
                        for i in range(HTTP_REQUESTS):
                            body = {
                                "id": f"r{run}-{i}",
                                "policies": [{"name": "d", "mode": "auto", "groupSize": 2}],
                            }
                            assert client.post(base, json=body).status_code == 201
                        posts.append(HTTP_REQUESTS / (time.perf_counter() - started))
                        started = time.perf_counter()
                        for i in range(HTTP_REQUESTS):
                            assert client.get(f"{base}/r{run}-{i}").status_code == 200
                        gets.append(HTTP_REQUESTS / (time.perf_counter() - started))
                finally:
                    proc.terminate()
                    proc.wait(10)
        rates[name] = (statistics.median(posts), statistics.median(gets))
    return rates


def control_port(proc: subprocess.Popen[str]) -> int:
    assert proc.stderr is not None
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if match := re.search(r"control plane listening on http://[^:]+:(\d+)", line):
            return int(match[1])
    raise TimeoutError("matchmaker did not start")


async def postgres_schema(action: str, schema: str) -> bool:
    try:
        conn = await asyncpg.connect(POSTGRES)
    except OSError:
        return False
    try:
        await conn.execute(f'{action} SCHEMA "{schema}"' + (" CASCADE" if action == "DROP" else ""))
    finally:
        await conn.close()
    return True


def main() -> None:
    schema = f"mm_bench_{uuid.uuid4().hex[:8]}"
    have_pg = asyncio.run(postgres_schema("CREATE", schema))
    with tempfile.TemporaryDirectory() as tmp:
        urls = {"memory": "memory://", "sqlite": f"sqlite:///{tmp}/bench.db"}
        if have_pg:
            urls["postgresql"] = f"{POSTGRES}?search_path={schema}"
        try:
            lookups = asyncio.run(lookup_costs(urls))
        finally:
            if have_pg:
                asyncio.run(postgres_schema("DROP", schema))
    http_urls = {"memory": "memory://", "sqlite": "sqlite:///{tmp}/bench.db"}
    if have_pg:
        asyncio.run(postgres_schema("CREATE", schema))
        http_urls["postgresql"] = f"{POSTGRES}?search_path={schema}"
    try:
        rates = http_rates(http_urls)
    finally:
        if have_pg:
            asyncio.run(postgres_schema("DROP", schema))
    write_report(lookups, rates)


def write_report(lookups: dict[str, float], rates: dict[str, tuple[float, float]]) -> None:
    base_lookup = next(iter(lookups.values()))
    base_post, base_get = rates["memory"]
    lines = [
        "# matchmaker control plane benchmarks",
        "",
        f"Produced by `tools/bench/matchmaker-control/bench_control.py`; medians of {RUNS} runs,",
        "loopback only, on the shared 2-core development machine (absolute numbers are noisy,",
        "ratios against the baseline measured in the same run are the point).",
        f"1-minute load average when the report was written: {os.getloadavg()[0]:.1f}.",
        "",
        "## Resolving a Project at handshake",
        "",
        f"{PROJECTS} Projects, {LOOKUPS} lookups per run. The data plane reads the in-memory",
        "directory; a store round trip is what it would cost without it.",
        "",
        "| lookup | µs per lookup (median) | ratio to the directory |",
        "|---|---:|---:|",
    ]
    for name, micros in lookups.items():
        lines.append(f"| {name} | {micros:.2f} | {micros / base_lookup:.1f}x |")
    lines += [
        "",
        "## /admin over HTTP, one client, sequential requests",
        "",
        f"The real `matchmaker` executable; {HTTP_REQUESTS} creates then {HTTP_REQUESTS} reads",
        "per run on a keep-alive connection.",
        "",
        "| store | POST /admin/projects req/s | ratio to memory | GET /admin/projects/{id} req/s | ratio to memory |",  # noqa: E501
        "|---|---:|---:|---:|---:|",
    ]
    for name, (post, get) in rates.items():
        lines.append(
            f"| {name} | {post:.0f} | {post / base_post:.2f} | {get:.0f} | {get / base_get:.2f} |"
        )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(OUT.read_text())


if __name__ == "__main__":
    main()
