"""Speed probe for release-profile choices (Cargo.toml's [profile.release]): one raw stdio session per binary, phases
timed by wall and by the server's CPU (utime+stime from /proc). Usage:
scripts/release-probe.py ROUNDS BIN... (binaries alternate round by round; $MODEL a
model directory, else the hashing embedder). Prints per phase the median server CPU
and wall time, and idle memory."""
import json, os, subprocess, sys, tempfile, time
TICK = os.sysconf("SC_CLK_TCK")
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK
def rss(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return int(l.split()[1]) / 1024
class S:
    def __init__(s, b, db):
        env = dict(os.environ, CAIRN_MODEL_DIR=os.environ.get("MODEL", ""))
        s.p = subprocess.Popen([b, "--db", db, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        s.n = 0
        s.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "p", "version": "1"}})
        s.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'); s.p.stdin.flush()
    def rpc(s, m, params):
        s.n += 1
        s.p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": s.n, "method": m, "params": params}) + "\n").encode()); s.p.stdin.flush()
        return s.p.stdout.readline()
    def call(s, name, args):
        line = s.rpc("tools/call", {"name": name, "arguments": args})
        d = json.loads(line)["result"]["structuredContent"]
        assert d.get("success"), line[:300]
        return d["data"]
def run(b):
    d = tempfile.mkdtemp()
    s = S(b, d + "/p.db"); time.sleep(0.5)
    out = {"idle": rss(s.p.pid)}
    proj = s.call("manage_container", {"operation": "create", "containerType": "project", "name": "P"})["project"]["id"]
    task = s.call("manage_container", {"operation": "create", "containerType": "task", "projectId": proj, "title": "Map"})["task"]["id"]
    mols = [s.call("manage_graph", {"operation": "create", "entityType": "molecule", "projectId": proj, "name": f"M{i}", "knowledge": "m", "createdByTaskId": task})["molecule"]["id"] for i in range(20)]
    def phase(name, fn, n):
        c0, t0 = cpu(s.p.pid), time.perf_counter()
        for i in range(n): fn(i)
        out[name] = (time.perf_counter() - t0, cpu(s.p.pid) - c0)
    pr = ["HIGH", "MEDIUM", "LOW"]
    phase("tasks", lambda i: s.call("manage_container", {"operation": "create", "containerType": "task", "projectId": proj, "title": f"T {i}", "summary": "Benchmark task with a short summary", "priority": pr[i % 3], "complexity": 1 + i % 10}), 1500)
    words = "cache retry handler session token parser route index queue worker schema lock".split()
    def atom(i):
        a, m = i % 20, i // 20
        s.call("manage_graph", {"operation": "create", "entityType": "atom", "projectId": proj, "name": f"Area {a} module {m}",
            "paths": json.dumps([f"src/area{a}/mod{m}/**", f"src/area{a}/mod{m}-*.ts", f"docs/area{a}/mod{m}.md"]), "moleculeId": mols[a],
            "knowledge": " ".join(words[(i * 7 + k) % len(words)] for k in range(300)), "createdByTaskId": task})
    phase("atoms", atom, 1500)
    phase("context", lambda i: s.call("query_graph", {"operation": "context", "projectId": proj, "maxTokens": 1000000, "paths": ",".join(f"src/area{(i+k)%20}/mod{(i*k)%75}/x{k}.ts" for k in range(50))}), 40)
    phase("next", lambda i: s.call("get_next_task", {"projectId": proj}), 300)
    phase("find", lambda i: s.call("find", {"projectId": proj, "query": f"{words[i % 12]} {words[(i*5) % 12]} module handling"}), 100)
    out["peak"] = rss(s.p.pid)
    s.p.stdin.close(); s.p.wait()
    return out
rounds, bins = int(sys.argv[1]), sys.argv[2:]
res = {b: [] for b in bins}
for r in range(rounds):
    for b in (bins if r % 2 == 0 else bins[::-1]):
        o = run(b); res[b].append(o)
        print(r, b.split("/")[-4], {k: (tuple(round(x, 3) for x in v) if isinstance(v, tuple) else round(v, 1)) for k, v in o.items()}, "load", open("/proc/loadavg").read().split()[0], flush=True)
import statistics as st
for b in bins:
    rs = res[b]
    print(b.split("/")[-4], "idle", round(st.median(x["idle"] for x in rs), 1), "MiB;",
          "; ".join(f"{k} cpu {st.median(x[k][1] for x in rs):.2f}s wall {st.median(x[k][0] for x in rs):.2f}s" for k in ["tasks", "atoms", "context", "next", "find"]),
          "; total cpu", round(st.median(sum(x[k][1] for k in ["tasks", "atoms", "context", "next", "find"]) for x in rs), 2))
