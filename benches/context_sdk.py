"""The context call's latency as the Python MCP SDK's client sees it, Cairn beside the port.

The bench (`cargo bench --bench bench -- graph`) times the same calls over a raw pipe,
reading each answer as one line without parsing it; this times them through the SDK,
which parses every answer into its models (text and `structuredContent` both), so the
two together show where a tail comes from: the server and the pipe, or the client.

    target/py-mcp/bin/python benches/context_sdk.py cairn target/release/cairn
    target/py-mcp/bin/python benches/context_sdk.py port target/port-tools  # scripts/port.sh

Creates 2,000 atoms (three patterns each, 3,500 characters of knowledge, in 20
molecules) as the bench does, printing the creates per second and the server's CPU per
create, then 200 context calls of 50 paths at the default budget
and 200 whole (maxTokens 0; the port has no budget). Prints p50/p95 of each, of the
server's CPU per call and of its wait for a CPU (so a tail shows whose it is), the SDK's
own time parsing the answer lines, and the time Python's collector paused the client.
"""

import asyncio
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client import session as session_mod
from mcp.client import stdio
from mcp.client.stdio import stdio_client

WORDS = ("handlers extend the base class idempotent retries gateway locale registry events "
         "are published after commit never call directly timeout 30s").split()


def knowledge(i, n):
    s, k = f"Area {i}: ", i
    while len(s) < n:
        k = (k * 31 + 7) & 0xFFFFFFFFFFFFFFFF
        s += WORDS[k % len(WORDS)] + " "
    return s


# The SDK's parse of each line it reads (mcp 2's stdio client), timed: part of the
# client's share of a round trip (it then validates the result twice more).
PARSE = []
_parse_line = stdio._parse_line


def _timed_parse(line):
    t = time.perf_counter()
    try:
        return _parse_line(line)
    finally:
        PARSE.append(time.perf_counter() - t)


stdio._parse_line = _timed_parse

# Its check of each result against the protocol's schema (a validation and a dump of
# the whole result, `structuredContent` included), timed the same way.
CHECK = []
_check = session_mod._methods.validate_server_result


def _timed_check(*a, **k):
    t = time.perf_counter()
    try:
        return _check(*a, **k)
    finally:
        CHECK.append(time.perf_counter() - t)


session_mod._methods.validate_server_result = _timed_check

# The collector's pauses, summed while the timed calls run.
GC = {"start": 0.0, "paused": 0.0}


def _gc(phase, info):
    if phase == "start":
        GC["start"] = time.perf_counter()
    else:
        GC["paused"] += time.perf_counter() - GC["start"]


gc.callbacks.append(_gc)


def server_pid():
    """The server's process: this client's one child (the SDK does not name it)."""
    kids = []
    for t in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{t}/children") as f:
            kids += f.read().split()
    return int(kids[0]) if len(kids) == 1 else None


def sched(pid):
    """The server's time on a CPU and its wait in the run queue, in seconds, summed over
    its threads (/proc/PID/task/*/schedstat): a tail the wait has and the CPU has not is
    the machine's load, not the server's."""
    run = wait = 0
    if pid is None:
        return 0.0, 0.0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                a, b, _ = f.read().split()
            run, wait = run + int(a), wait + int(b)
        except (OSError, ValueError):
            pass  # a thread that has just exited
    return run / 1e9, wait / 1e9


def params(kind, where, home):
    if kind == "cairn":
        return StdioServerParameters(
            command=where, args=["--db", os.path.join(home, "c.db"), "--toolsets", "tasks,graph", "serve"],
            env={"PATH": os.environ["PATH"], "XDG_CONFIG_HOME": "/nonexistent-cairn"})
    bun = os.path.join(where, "node_modules", ".bin", "bun")
    server = os.path.join(where, "node_modules", "@allpepper", "task-orchestrator", "src", "server.ts")
    return StdioServerParameters(
        command=bun, args=["run", server, "--stdio"],
        env={"TASK_ORCHESTRATOR_HOME": home, "HOME": home, "PATH": os.environ["PATH"]})


def structured(r):
    return getattr(r, "structured_content", None) or getattr(r, "structuredContent", None)


def envelope(r):
    """The answer's envelope: `structuredContent` when sent, else the text parsed."""
    return structured(r) or json.loads(r.content[0].text)


async def main():
    kind, where = sys.argv[1], sys.argv[2]
    home = tempfile.mkdtemp(prefix=f"ctx-sdk-{kind}-")
    async with stdio_client(params(kind, where, home)) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            spid = server_pid()

            async def call(tool, **args):
                res = await s.call_tool(tool, args)
                env = envelope(res)
                assert env["success"], (tool, env)
                return env.get("data")

            pid = (await call("manage_container", operation="create", containerType="project",
                              name="Graph", summary="Benchmark project"))["project"]["id"]
            task = (await call("manage_container", operation="create", containerType="task", projectId=pid,
                               title="Map", summary="Map the code", priority="MEDIUM",
                               complexity=3))["task"]["id"]
            mols = []
            for m in range(20):
                v = await call("manage_graph", operation="create", entityType="molecule", projectId=pid,
                               name=f"Area {m}", knowledge=knowledge(m, 1200), createdByTaskId=task)
                mols.append(v["molecule"]["id"])
            c0, _ = sched(spid)
            t0 = time.perf_counter()
            for i in range(2000):
                area, module = i % 20, i // 20
                paths = [f"src/area{area}/mod{module}/**", f"src/area{area}/mod{module}-*.ts",
                         f"docs/area{area}/mod{module}.md"]
                await call("manage_graph", operation="create", entityType="atom", projectId=pid,
                           name=f"Area {area} module {module}", paths=json.dumps(paths),
                           moleculeId=mols[area], knowledge=knowledge(i, 3500), createdByTaskId=task)
            took = time.perf_counter() - t0
            c1, _ = sched(spid)
            print(f"{kind:5} 2,000 atom creates: {2000 / took:6.0f} atoms/s through the SDK, "
                  f"server CPU {(c1 - c0) / 2000 * 1e6:4.0f} µs per create")

            def paths(rng):
                out = []
                for k in range(50):
                    area, module = rng.randrange(20), rng.randrange(100)
                    out.append([f"src/area{area}/mod{module}-handler.ts", f"docs/area{area}/mod{module}.md",
                                f"lib/vendor/x{k}.js", f"src/area{area}/mod{module}/sub/file{k}.ts",
                                f"src/area{area}/mod{module}/sub/file{k}.ts"][k % 5])
                return ",".join(out)

            # The port knows no maxTokens: its one answer is whole.
            budgets = ([("default budget", None), ("whole (maxTokens 0)", 0)] if kind == "cairn"
                       else [("whole (no budget)", None)])
            await call("query_graph", operation="context", projectId=pid, paths=paths(random.Random(1)))
            for name, max_tokens in budgets:
                rng = random.Random(42)
                times, sizes, cpus, waits = [], [], [], []
                PARSE.clear()
                CHECK.clear()
                GC["paused"] = 0.0
                for _ in range(200):
                    args = {"operation": "context", "projectId": pid, "paths": paths(rng)}
                    if max_tokens is not None:
                        args["maxTokens"] = max_tokens
                    c0, w0 = sched(spid)
                    t = time.perf_counter()
                    res = await s.call_tool("query_graph", args)
                    times.append(time.perf_counter() - t)
                    c1, w1 = sched(spid)
                    cpus.append(c1 - c0)
                    waits.append(w1 - w0)
                    sizes.append(sum(len(c.text) for c in res.content)
                                 + (len(json.dumps(structured(res))) if structured(res) else 0))
                q = statistics.quantiles(times, n=20)
                def p(v, q):
                    return statistics.quantiles(v, n=20)[18] * 1e3 if q else statistics.median(v) * 1e3

                print(f"{kind:5} {name:20} p50 {p(times, 0):7.2f} ms p95 {p(times, 1):7.2f} ms | server CPU "
                      f"p50 {p(cpus, 0):5.2f} p95 {p(cpus, 1):5.2f}, its wait for a CPU p50 {p(waits, 0):5.2f} "
                      f"p95 {p(waits, 1):5.2f} ms | SDK: "
                      f"line parse p50 {p(PARSE, 0):5.2f} p95 {p(PARSE, 1):5.2f} ms, result check "
                      f"p50 {p(CHECK, 0):5.2f} p95 {p(CHECK, 1):5.2f} ms, GC paused "
                      f"{GC['paused'] * 1e3 / 200:5.2f} ms/call | answer {max(sizes) / 1024:.0f} KiB")


asyncio.run(main())
