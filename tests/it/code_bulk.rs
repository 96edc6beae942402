//! Bulk anchoring (`track_declarations`) through real language servers: a folder's
//! top-level declarations become entities in one call, tracked ones are skipped,
//! files no server reads are reported, a second call adds nothing.

use serde_json::{json, Value};

use crate::code::{id, Code, Repo};
use crate::code_lang::{spine, with_servers, ADAPTERS};
use crate::harness::Cairn;

const UTIL: &str = "\"\"\"Helpers.\"\"\"
import json

LIMIT = 10

SETTINGS = {
    \"retries\": 3,
    \"timeout\": 30,
}


def load(path):
    with open(path) as f:
        return json.load(f)


class Cache:
    def get(self, key):
        return None
";

/// A Domain entity "App" on the README, the parent of bulk-tracked Namespaces.
async fn app_domain(k: &Code) -> String {
    id(&k
        .entity(
            "App",
            "core",
            &[],
            json!([{"command":"add","kind":"text","documentPath":"README.md","startLine":1,"endLine":1}]),
        )
        .await)
}

fn names(r: &Value) -> Vec<String> {
    let mut v: Vec<String> = r["created"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["lspSymbol"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn a_folders_top_level_declarations_become_entities_in_one_call() {
    let repo = Repo::new();
    repo.write("pkg/adapters.py", ADAPTERS);
    repo.write("pkg/util.py", UTIL);
    repo.write("pkg/NOTES.txt", "not code\n");
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let (_dir, k) = with_servers(repo, "py = \"pylsp\"").await;
    // BaseAdapter is tracked already (the Namespace's own reference).
    let ns = spine(&k, "README.md", "pkg/adapters.py", "BaseAdapter").await;
    let args = json!({"projectId":k.pid,"path":"pkg","categoryIds":["class"],"parentIds":[ns]});
    let r = k.c.ok("track_declarations", args.clone()).await;
    // Classes, functions and the multi-line constant; not the one-line constants,
    // the import, the methods (not top level) or the tracked class.
    assert_eq!(
        names(&r),
        ["Cache", "HTTPAdapter", "SETTINGS", "load"],
        "{r:#}"
    );
    assert_eq!(r["alreadyTracked"], 1, "{r:#}");
    assert_eq!(r["files"], 2);
    assert_eq!(r["noServer"]["count"], 1, "{r:#}");
    assert_eq!(r["noServer"]["first"][0], "pkg/NOTES.txt");
    assert_eq!(r["failed"], json!([]));
    // Each is a real entity under the parent, anchored to the declaration's lines.
    let http = r["created"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "HTTPAdapter")
        .unwrap();
    assert_eq!(
        (http["startLine"].as_i64(), http["endLine"].as_i64()),
        (Some(12), Some(20))
    );
    let e =
        k.c.ok("get_entity", json!({"entityId": http["entityId"]}))
            .await;
    assert_eq!(e["entity"]["scope"], "Component", "{e:#}");
    assert!(
        e["entity"]["description"]
            .as_str()
            .unwrap()
            .contains("class HTTPAdapter(BaseAdapter):"),
        "{e:#}"
    );
    assert_eq!(e["parents"][0]["id"], json!(ns), "{e:#}");
    let a = k.analyze("pkg/util.py").await;
    for t in a["tracked"].as_array().unwrap() {
        assert_eq!(t["isStale"], false, "{t:#}");
    }
    // Again: everything is tracked, nothing is made twice.
    let again = k.c.ok("track_declarations", args.clone()).await;
    assert_eq!(again["created"], json!([]), "{again:#}");
    assert_eq!(again["alreadyTracked"], 5);
    // A limit leaves the rest for the next call, and says so.
    k.repo.write(
        "pkg/more.py",
        "def a():\n    pass\n\n\ndef b():\n    pass\n\n\ndef c():\n    pass\n",
    );
    k.repo.commit("more");
    let mut one = args.clone();
    one["limit"] = json!(1);
    let r = k.c.ok("track_declarations", one).await;
    assert_eq!(names(&r), ["a"], "{r:#}");
    assert_eq!(r["omitted"], 2);
    assert!(r["next"].as_str().unwrap().contains("call again"), "{r:#}");
    // One file by its path.
    let mut file = args.clone();
    file["path"] = json!("pkg/more.py");
    let r = k.c.ok("track_declarations", file).await;
    assert_eq!(names(&r), ["b", "c"], "{r:#}");
    k.c.stop().await;
}

#[tokio::test]
async fn bulk_anchoring_refuses_bad_classification_and_paths_before_writing() {
    let repo = Repo::new();
    repo.write("src/adapters.py", ADAPTERS);
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let (_dir, k) = with_servers(repo, "py = \"pylsp\"").await;
    let ns = spine(&k, "README.md", "src/adapters.py", "BaseAdapter").await;
    let call = |path: &str, cats: Value, parents: Value| json!({"projectId":k.pid,"path":path,"categoryIds":cats,"parentIds":parents});
    // A Component without a parent, an unknown category, a path outside.
    k.c.err(
        "track_declarations",
        call("src", json!(["class"]), json!([])),
        "VALIDATION_ERROR",
    )
    .await;
    k.c.err(
        "track_declarations",
        call("src", json!(["nope"]), json!([ns])),
        "NOT_FOUND",
    )
    .await;
    let e =
        k.c.err(
            "track_declarations",
            call("src", json!([]), json!([ns])),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "categoryIds", "{e:#}");
    k.c.err(
        "track_declarations",
        call("../x", json!(["class"]), json!([ns])),
        "VALIDATION_ERROR",
    )
    .await;
    k.c.err(
        "track_declarations",
        call("missing", json!(["class"]), json!([ns])),
        "NOT_FOUND",
    )
    .await;
    let n = k.c.ok("find_entities", json!({"projectId":k.pid})).await;
    assert_eq!(
        n["items"].as_array().map(Vec::len),
        Some(2),
        "only the spine: {n:#}"
    );
    k.c.stop().await;
}

/// TypeScript through typescript-language-server: exported classes and functions of
/// a file, the arrow function held by a constant too.
#[tokio::test]
async fn typescript_declarations_are_tracked_in_bulk() {
    crate::harness::need(
        "typescript-language-server",
        "typescript-language-server and typescript@5 from npm",
    );
    let repo = Repo::new();
    repo.write(
        "src/api.ts",
        "export class Client {\n  get(url: string): string {\n    return url;\n  }\n}\n\nexport function retry(n: number): number {\n  return n * 2;\n}\n\nexport const handler = (x: number): number => {\n  return x + 1;\n};\n\nexport const VERSION = \"1\";\n",
    );
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let k = Code::bind(Cairn::start().await, repo).await;
    let d = app_domain(&k).await;
    let r =
        k.c.ok(
            "track_declarations",
            json!({"projectId":k.pid,"path":"src/api.ts","categoryIds":["module"],"parentIds":[d]}),
        )
        .await;
    assert_eq!(names(&r), ["Client", "handler", "retry"], "{r:#}");
    k.c.stop().await;
}

/// C through clangd: a folder's functions and structs, the header's declarations too.
#[tokio::test]
async fn c_declarations_are_tracked_in_bulk_through_clangd() {
    crate::harness::need("clangd", "Debian's clangd");
    let repo = Repo::new();
    repo.write(
        "src/queue.h",
        "#ifndef QUEUE_H\n#define QUEUE_H\nstruct queue {\n  int head;\n  int tail;\n};\nint queue_push(struct queue *q, int v);\n#endif\n",
    );
    repo.write(
        "src/queue.c",
        "#include \"queue.h\"\n\nint queue_push(struct queue *q, int v) {\n  q->tail = v;\n  return 0;\n}\n\nstatic int helper(void) {\n  int local = 1;\n  return local;\n}\n",
    );
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let k = Code::bind(Cairn::start().await, repo).await;
    let d = app_domain(&k).await;
    let r = k
        .c
        .ok(
            "track_declarations",
            json!({"projectId":k.pid,"path":"src/queue.c","categoryIds":["module"],"parentIds":[d]}),
        )
        .await;
    assert_eq!(names(&r), ["helper", "queue_push"], "{r:#}");
    let made = &r["created"][0];
    assert_eq!(made["name"], "queue_push", "document order: {r:#}");
    assert_eq!(
        (made["startLine"].as_i64(), made["endLine"].as_i64()),
        (Some(3), Some(6)),
        "{r:#}"
    );
    k.c.stop().await;
}
