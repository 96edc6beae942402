"""Builds the importers' fixtures by running the real servers through their MCP tools.

tests/fixtures/import/task-orchestrator.db: the TypeScript task-orchestrator port's
database after a short session of its own tools. tests/fixtures/import/memory.json:
the official MCP memory server's file after the same. Run by
scripts/import-fixtures.sh, which installs both servers first.
"""

import asyncio
import json
import os
import shutil
import sqlite3
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = sys.argv[1]  # the npm prefix holding bun and both servers
OUT = sys.argv[2]  # tests/fixtures/import


class Port:
    def __init__(self, session):
        self.s = session

    async def call(self, tool, **args):
        r = await self.s.call_tool(tool, args)
        text = r.content[0].text
        env = json.loads(text)
        if os.environ.get("SHOW"): print(tool, json.dumps(env.get("data"))[:300], file=sys.stderr)
        if not env.get("success"):
            raise SystemExit(f"{tool} {args} failed: {text}")
        return env.get("data")


def one(data):
    """The port answers `{"task": {...}}` and the like: the object inside."""
    if isinstance(data, dict) and "id" not in data:
        for v in data.values():
            if isinstance(v, dict) and "id" in v:
                return v
    return data


async def orchestrator(home):
    bun = os.path.join(TOOLS, "node_modules", ".bin", "bun")
    server = os.path.join(TOOLS, "node_modules", "@allpepper", "task-orchestrator", "src", "server.ts")
    params = StdioServerParameters(
        command=bun,
        args=["run", server, "--stdio"],
        env={"TASK_ORCHESTRATOR_HOME": home, "HOME": home, "PATH": os.environ["PATH"]},
    )
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            p = Port(s)

            async def c(tool, **args):
                return one(await p.call(tool, **args))

            async def item(kind, **args):
                return await c("manage_container", operation="create", containerType=kind, **args)

            pay = await item("project", name="Payments", summary="Card payments and refunds",
                             description="The payment service and its ledger.", tags="backend,payments")
            docs = await item("project", name="Docs", summary="The user guide")
            pid = pay["id"]
            refunds = await item("feature", projectId=pid, name="Refunds",
                                 summary="Partial and full refunds", priority="HIGH", tags="refunds")
            ledger = await item("feature", projectId=pid, name="Ledger export",
                                summary="Export the ledger as CSV", priority="LOW")
            t1 = await item("task", projectId=pid, featureId=refunds["id"], title="Refund API endpoint",
                            summary="POST /refunds with idempotency keys", priority="HIGH", complexity=5,
                            tags="api,refunds")
            t2 = await item("task", projectId=pid, featureId=refunds["id"], title="Refund ledger entries",
                            summary="Write a reversing ledger entry per refund", priority="MEDIUM",
                            complexity=3, description="One entry per refund, never an update in place.")
            t3 = await item("task", projectId=pid, featureId=refunds["id"], title="Card network refund codes",
                            summary="Map the network's refund reason codes", priority="LOW", complexity=2)
            t4 = await item("task", projectId=pid, featureId=ledger["id"], title="Ledger CSV in Excel dialect",
                            summary="Quote like Excel does", priority="LOW", complexity=1)
            t5 = await item("task", projectId=pid, title="Rotate the webhook secret",
                            summary="Yearly rotation", priority="MEDIUM", complexity=2, tags="ops")
            await item("task", projectId=docs["id"], title="Write the refunds chapter",
                       summary="For the user guide", priority="MEDIUM", complexity=4)

            # Sections, one template of our own applied, and a reorder.
            await c("manage_sections", operation="add", entityType="TASK", entityId=t1["id"],
                    title="Requirements", usageDescription="What must hold",
                    content="- a repeated key answers the first refund", contentFormat="MARKDOWN", ordinal=0)
            await c("manage_sections", operation="add", entityType="TASK", entityId=t1["id"],
                    title="Context Files", usageDescription="Paths this task touches",
                    content="src/payments/refunds.ts\nsrc/payments/api.ts", contentFormat="PLAIN_TEXT",
                    ordinal=1, tags="files")
            await c("manage_sections", operation="add", entityType="FEATURE", entityId=refunds["id"],
                    title="Scope", usageDescription="In and out", content="- In: card refunds",
                    contentFormat="MARKDOWN", ordinal=0)
            tpl = await c("manage_template", operation="create", name="Bug Report",
                          description="What broke and how to see it", targetEntityType="TASK",
                          tags="bugs")
            await c("manage_template", operation="addSection", id=tpl["id"], title="Steps to reproduce",
                    usageDescription="Numbered steps", contentSample="1. ", contentFormat="MARKDOWN",
                    isRequired=True, ordinal=0)
            await c("manage_template", operation="addSection", id=tpl["id"], title="Expected",
                    usageDescription="What should happen", contentSample="It should", contentFormat="MARKDOWN",
                    ordinal=1)
            await c("apply_template", templateId=tpl["id"], entityType="TASK", entityId=t3["id"])

            # Dependencies: t5 blocks t2, t2 relates to t1, t3 waits on the card network.
            await c("manage_dependency", operation="create", fromId=t5["id"], toId=t2["id"],
                    containerType="task", type="BLOCKS")
            await c("manage_dependency", operation="create", fromId=t2["id"], toId=t1["id"],
                    containerType="task", type="RELATES_TO")
            t3 = await c("query_container", operation="get", containerType="task", id=t3["id"])
            await c("block", containerType="task", id=t3["id"], version=t3["version"], blockedBy="NO_OP",
                    blockedReason="waiting for the network's code list")

            # Work moves: t1 closed through the pipeline, t4 given up, t2 renamed.
            for _ in range(2):
                t1 = await c("query_container", operation="get", containerType="task", id=t1["id"])
                await c("advance", containerType="task", id=t1["id"], version=t1["version"])
            t4 = await c("query_container", operation="get", containerType="task", id=t4["id"])
            await c("terminate", containerType="task", id=t4["id"], version=t4["version"],
                    reason="the finance team reads JSON")
            t2 = await c("query_container", operation="get", containerType="task", id=t2["id"])
            await c("manage_container", operation="update", containerType="task", id=t2["id"],
                    version=t2["version"], title="Reversing ledger entries for refunds")

            # The knowledge graph: a molecule, its atoms, their changelog.
            mol = await c("manage_graph", operation="create", entityType="molecule", projectId=pid,
                          name="Payments core", knowledge="Money moves only through the ledger.",
                          createdByTaskId=t1["id"])
            a1 = await c("manage_graph", operation="create", entityType="atom", projectId=pid,
                         name="Refund handlers", paths=json.dumps(["src/payments/refunds*.ts"]),
                         knowledge="Refunds are idempotent by key; see the Requirements section.",
                         moleculeId=mol["id"], createdByTaskId=t1["id"])
            a2 = await c("manage_graph", operation="create", entityType="atom", projectId=pid,
                         name="Ledger", paths=json.dumps(["src/ledger/**", "docs/ledger.md"]),
                         knowledge="Entries are append-only.", moleculeId=mol["id"],
                         relatedAtoms=json.dumps([{"atomId": a1["id"], "reason": "refunds write entries"}]),
                         createdByTaskId=t2["id"])
            await c("manage_graph", operation="create", entityType="atom", projectId=pid,
                    name="Webhooks", paths=json.dumps(["src/webhooks/*.ts"]),
                    knowledge="Signed with a shared secret.", createdByTaskId=t5["id"])
            a1 = await c("query_graph", operation="get", entityType="atom", id=a1["id"])
            await c("manage_graph", operation="update", entityType="atom", id=a1["id"],
                    version=a1["version"], knowledge="A repeated key answers the first refund.",
                    knowledgeMode="append", lastTaskId=t1["id"])
            await c("manage_changelog", operation="append", parentType="atom", parentId=a1["id"],
                    taskId=t1["id"], summary="Idempotency keys documented")
            await c("manage_changelog", operation="append", parentType="molecule", parentId=mol["id"],
                    taskId=t2["id"], summary="Ledger joined the core")
            await c("manage_changelog", operation="append", parentType="atom", parentId=a2["id"],
                    taskId=t2["id"], summary="Entries made append-only")

            # What the port itself answers about every container and atom, for the test
            # to compare Cairn's answers with after the import.
            expected = {"projects": [], "features": [], "tasks": [], "atoms": [], "molecules": []}
            for proj in (pay, docs):
                expected["projects"].append(
                    await c("query_container", operation="get", containerType="project", id=proj["id"]))
            for f in (refunds, ledger):
                expected["features"].append(
                    await c("query_container", operation="get", containerType="feature", id=f["id"]))
            found = await p.call("query_container", operation="search", containerType="task", limit=100)
            for t in found["items"] if isinstance(found, dict) and "items" in found else found:
                expected["tasks"].append(
                    await c("query_container", operation="get", containerType="task", id=t["id"]))
            for a in (a1, a2):
                expected["atoms"].append(await c("query_graph", operation="get", entityType="atom", id=a["id"]))
            expected["molecules"].append(
                await c("query_graph", operation="get", entityType="molecule", id=mol["id"]))
            return expected


async def memory(path):
    node_bin = os.path.join(TOOLS, "node_modules", ".bin", "mcp-server-memory")
    params = StdioServerParameters(
        command=node_bin, args=[], env={"MEMORY_FILE_PATH": path, "PATH": os.environ["PATH"]}
    )
    async with stdio_client(params) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()

            async def c(tool, **args):
                res = await s.call_tool(tool, args)
                if getattr(res, "is_error", None) or getattr(res, "isError", None):
                    raise SystemExit(f"{tool} failed: {res.content[0].text}")

            await c("create_entities", entities=[
                {"name": "Ada Lovelace", "entityType": "person",
                 "observations": ["Prefers reviews in the morning", "Maintains the ledger service"]},
                {"name": "Acme Payments", "entityType": "organization",
                 "observations": ["Runs card refunds for three banks"]},
                {"name": "ledger-service", "entityType": "service",
                 "observations": ["Written in TypeScript", "Entries are append-only"]},
                {"name": "Refund idempotency", "entityType": "concept",
                 "observations": ["A repeated key answers the first refund"]},
            ])
            await c("add_observations", observations=[
                {"entityName": "Ada Lovelace", "contents": ["Speaks at the payments guild"]},
            ])
            await c("create_relations", relations=[
                {"from": "Ada Lovelace", "to": "Acme Payments", "relationType": "works_at"},
                {"from": "Ada Lovelace", "to": "ledger-service", "relationType": "maintains"},
                {"from": "ledger-service", "to": "Refund idempotency", "relationType": "implements"},
            ])
            await c("delete_observations", deletions=[
                {"entityName": "Ada Lovelace", "observations": ["Speaks at the payments guild"]},
            ])


async def main():
    os.makedirs(OUT, exist_ok=True)
    home = tempfile.mkdtemp(prefix="port-home-")
    expected = await orchestrator(home)
    # A consistent single-file copy (the port keeps its database in WAL mode).
    src = sqlite3.connect(os.path.join(home, "tasks.db"))
    dst_path = os.path.join(OUT, "task-orchestrator.db")
    if os.path.exists(dst_path):
        os.remove(dst_path)
    dst = sqlite3.connect(dst_path)
    src.backup(dst)
    dst.execute("PRAGMA journal_mode = DELETE")
    dst.execute("VACUUM")
    dst.close()
    src.close()
    with open(os.path.join(OUT, "task-orchestrator.expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    mem = os.path.join(OUT, "memory.json")
    if os.path.exists(mem):
        os.remove(mem)
    await memory(mem)
    shutil.rmtree(home)


asyncio.run(main())
