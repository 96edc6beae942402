//! Named agents over HTTP: tokens minted with `cairn token add` into a tokens file
//! of hashes, a read agent's writing calls refused (`FORBIDDEN`), a write agent's
//! name recorded as the author of what it writes and shown on the page; the single
//! token as before; a malformed tokens file refused at start naming its line. Through
//! rmcp's streamable HTTP client and the Python SDK against the real binary.

use std::path::Path;

use serde_json::{json, Value};

use crate::harness::{cli, id_of, Cairn, HttpServer, TempDir};

/// `cairn token add NAME --role ROLE --file PATH`: the token it printed.
fn mint(db: &Path, file: &Path, name: &str, role: &str) -> String {
    let out = cli(
        db,
        &[
            "token",
            "add",
            name,
            "--role",
            role,
            "--file",
            file.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "token add {name}: {stderr}");
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(token.len() >= 64, "{token}");
    assert!(!stderr.contains(&token), "the token is on stderr: {stderr}");
    token
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

async fn get(url: &str, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, String) {
    let mut r = client().get(url);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let resp = r.send().await.expect("GET");
    let status = resp.status().as_u16();
    let h = resp.headers().clone();
    (status, h, resp.text().await.unwrap())
}

/// The page's cookie, traded for `token` at `/?token=…`.
async fn page_cookie(s: &HttpServer, token: &str) -> String {
    let (status, h, body) = get(&format!("{}/?token={token}", s.base), &[]).await;
    assert_eq!(status, 303, "{body}");
    let set = h["set-cookie"].to_str().unwrap();
    assert!(!set.contains(token), "{set}");
    set.split(';').next().unwrap().to_string()
}

async fn agent(s: &HttpServer, db: &Path, token: &str) -> Cairn {
    Cairn::from_client(s.client(Some(token)).await, db)
}

fn atom(statement: &str) -> Value {
    json!({"type":"Fact","statement":statement,"about":"Lib:zlib","factKind":"observed"})
}

const NOW: &str = "2025-09-01T10:00:00Z";

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

#[tokio::test]
async fn a_read_agent_reads_and_is_refused_writes_and_a_write_agent_signs_its_rows() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let file = dir.path().join("agents");
    let writer = mint(&db, &file, "ci-writer", "write");
    let reader = mint(&db, &file, "reviewer", "read");
    // The file holds hashes only, and only its owner may read it.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(&writer) && !text.contains(&reader), "{text}");
    assert!(text.contains("ci-writer write sha256:") && text.contains("reviewer read sha256:"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{mode:o}");
    }
    let s = HttpServer::start(
        &db,
        &[],
        &["--tokens-file", file.to_str().unwrap()],
        &[("CAIRN_LOG", "debug")],
    )
    .await;

    // The write agent writes; what it wrote names it.
    let w = agent(&s, &db, &writer).await;
    let p = w.project("Signed").await;
    let remembered = w
        .ok(
            "manage_memory",
            json!({"operation":"remember","now":NOW,"atom":atom("zlib's crc32 is table-driven")}),
        )
        .await;
    let atom_id = id_of(&remembered["atom"]);
    assert_eq!(remembered["atom"]["author"], "ci-writer", "{remembered:#}");
    let again = w
        .ok("query_memory", json!({"operation":"get","id":atom_id}))
        .await;
    assert_eq!(again["atom"]["author"], "ci-writer", "{again:#}");
    // Its name is the author, never another's.
    let mut claimed = atom("zlib is vendored");
    claimed["author"] = json!("someone-else");
    let e = w
        .err(
            "manage_memory",
            json!({"operation":"remember","now":NOW,"atom":claimed}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "atom.author", "{e:#}");
    let t = w
        .ok(
            "manage_template",
            json!({"operation":"create","name":"Signed template","targetEntityType":"TASK"}),
        )
        .await;
    assert_eq!(t["template"]["createdBy"], "ci-writer", "{t:#}");
    let e = w
        .err(
            "manage_template",
            json!({"operation":"create","name":"Forged","targetEntityType":"TASK","createdBy":"root"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "createdBy", "{e:#}");

    // The read agent lists and reads everything, and every writing call is refused
    // with the envelope's code, naming the agent, before anything runs.
    let r = agent(&s, &db, &reader).await;
    assert_eq!(r.tools().await.len(), w.tools().await.len());
    r.get("project", &p).await;
    let got = r
        .ok("query_memory", json!({"operation":"get","id":atom_id}))
        .await;
    assert_eq!(got["atom"]["author"], "ci-writer");
    r.ok("manage_subject", json!({"operation":"list"})).await;
    for (tool, args) in [
        (
            "manage_container",
            json!({"operation":"create","containerType":"project","name":"Not mine"}),
        ),
        (
            "manage_memory",
            json!({"operation":"remember","now":NOW,"atom":atom("readers write nothing")}),
        ),
        (
            "manage_subject",
            json!({"operation":"create","subject":{"kind":"Lib","name":"nope"}}),
        ),
        ("rename_tag", json!({"oldTag":"a","newTag":"b"})),
    ] {
        let e = r.err(tool, args, "FORBIDDEN").await;
        let msg = e["message"].as_str().unwrap();
        assert!(
            msg.contains("reviewer") && msg.contains("read token") && msg.contains("--role write"),
            "{msg}"
        );
        assert_eq!(e["details"]["agent"], "reviewer", "{e:#}");
        assert_eq!(e["details"]["retryable"], false);
    }
    let projects = r
        .ok(
            "query_container",
            json!({"operation":"overview","containerType":"project"}),
        )
        .await;
    assert!(
        !projects.to_string().contains("Not mine"),
        "a refused write wrote nothing: {projects}"
    );

    // Every tool tools/list marks read-only is served to the read agent, every other
    // one refused (called with no arguments: a read tool then answers what it lacks).
    for t in r.tools().await {
        let env = r.call(&t.name, json!({})).await;
        let read_only = t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
        let refused = env["error"]["code"] == "FORBIDDEN";
        assert_eq!(refused, !read_only, "{}: {env:#}", t.name);
    }

    // A wrong token, or none, is 401; so is the hash the file holds, presented as a token.
    let hash = text
        .lines()
        .find(|l| l.starts_with("reviewer "))
        .and_then(|l| l.split("sha256:").nth(1))
        .unwrap()
        .to_string();
    for bad in ["cairn_not-a-minted-token-at-all", hash.as_str()] {
        let resp = client()
            .post(s.mcp_url())
            .header("authorization", format!("Bearer {bad}"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(INIT)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 401, "{bad}");
    }
    assert!(s
        .try_client(Some("cairn_not-a-minted-token-at-all"))
        .await
        .is_err());
    assert!(s.try_client(None).await.is_err());
    let (status, _, _) = get(&format!("{}/?token=cairn_wrong-wrong-wrong", s.base), &[]).await;
    assert_eq!(status, 401);

    // The page: opened with the read token, it says whose view it is, and shows the
    // atom's author; the writer's cookie is another agent's.
    let cookie = page_cookie(&s, &reader).await;
    let (status, _, html) = get(&format!("{}/", s.base), &[("cookie", &cookie)]).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains("opened as reviewer (read)"), "{html}");
    let (status, _, html) = get(
        &format!("{}/p/{p}/memory?atom={atom_id}", s.base),
        &[("cookie", &cookie)],
    )
    .await;
    assert_eq!(status, 200, "{html}");
    assert!(
        html.contains("by <span class=\"author\">ci-writer</span>"),
        "{html}"
    );
    let wcookie = page_cookie(&s, &writer).await;
    assert_ne!(wcookie, cookie);
    let (_, _, html) = get(&format!("{}/", s.base), &[("cookie", &wcookie)]).await;
    assert!(html.contains("opened as ci-writer (write)"), "{html}");

    // Neither token is logged (at debug) or stored.
    let _ = w.client.cancel().await;
    let _ = r.client.cancel().await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let log = s.stderr.lock().unwrap().join("\n");
    for t in [&writer, &reader] {
        assert!(!log.contains(t.as_str()), "a token is in the log");
    }
    drop(s);
    for f in ["cairn.db", "cairn.db-wal"] {
        if let Ok(bytes) = std::fs::read(dir.path().join(f)) {
            for t in [&writer, &reader] {
                assert!(
                    !bytes.windows(t.len()).any(|x| x == t.as_bytes()),
                    "a token is in {f}"
                );
            }
        }
    }
}

#[tokio::test]
async fn the_single_token_works_as_before_and_stdio_writes_no_author() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let tf = dir.path().join("token");
    let token = "3f9c2a7d1e8b4c6f0a5d9e2b7c1f4a8d";
    std::fs::write(&tf, format!("{token}\n")).unwrap();
    let s = HttpServer::start(&db, &[], &["--token-file", tf.to_str().unwrap()], &[]).await;
    let c = agent(&s, &db, token).await;
    let a = c
        .ok(
            "manage_memory",
            json!({"operation":"remember","now":NOW,"atom":atom("one token, no name")}),
        )
        .await;
    assert!(a["atom"].get("author").is_none(), "{a:#}");
    let cookie = page_cookie(&s, token).await;
    let (status, _, html) = get(&format!("{}/", s.base), &[("cookie", &cookie)]).await;
    assert_eq!(status, 200);
    assert!(!html.contains("opened as"), "{html}");
    let _ = c.client.cancel().await;
    drop(s);
    // $CAIRN_TOKEN too.
    let s = HttpServer::start(&db, &[], &[], &[("CAIRN_TOKEN", token)]).await;
    assert!(s.try_client(None).await.is_err());
    let c = agent(&s, &db, token).await;
    c.ok("query_memory", json!({"operation":"list"})).await;
    let _ = c.client.cancel().await;
    drop(s);
    // Over stdio nothing changes: no author unless the atom names one.
    let c = Cairn::on(&db, &[]).await;
    let a = c
        .ok(
            "manage_memory",
            json!({"operation":"remember","now":NOW,"atom":atom("stdio has no agent")}),
        )
        .await;
    assert!(a["atom"].get("author").is_none(), "{a:#}");
    c.stop().await;
}

#[tokio::test]
async fn a_malformed_tokens_file_stops_the_server_at_start_naming_the_line() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let file = dir.path().join("agents");
    let good = format!("ok write sha256:{}", "a".repeat(64));
    let pasted = "cairn_0123456789abcdef0123456789abcdef";
    for (text, says) in [
        (
            format!("# agents\n{good}\nbot admin sha256:{}\n", "b".repeat(64)),
            "line 3: the role",
        ),
        (
            format!("{good}\n\n{pasted}\n"),
            "line 3: expected NAME ROLE sha256:HEX",
        ),
        (
            format!("{good}\nok read sha256:{}\n", "c".repeat(64)),
            "line 2: the name ok is listed twice",
        ),
        (
            format!("bot read sha256:{}\n", "Z".repeat(64)),
            "line 1: the hash",
        ),
        ("# nobody yet\n".to_string(), "lists no agent"),
    ] {
        std::fs::write(&file, &text).unwrap();
        let e = HttpServer::try_start(
            &db,
            &[],
            "127.0.0.1:0",
            &["--tokens-file", file.to_str().unwrap()],
            &[],
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("started with {text:?}"));
        assert!(e.contains(says), "{says}: {e}");
        assert!(!e.contains("0123456789abcdef"), "the line is quoted: {e}");
    }
    // One token, or named agents: not both.
    std::fs::write(&file, format!("{good}\n")).unwrap();
    let e = HttpServer::try_start(
        &db,
        &[],
        "127.0.0.1:0",
        &["--tokens-file", file.to_str().unwrap()],
        &[("CAIRN_TOKEN", "3f9c2a7d1e8b4c6f0a5d9e2b7c1f4a8d")],
    )
    .await
    .err()
    .expect("$CAIRN_TOKEN with --tokens-file");
    assert!(e.contains("exclude each other"), "{e}");
    // `token add` refuses what the server would, and a name taken.
    let f = file.to_str().unwrap();
    for (args, says) in [
        (
            vec!["token", "add", "ok", "--role", "read", "--file", f],
            "lists ok already",
        ),
        (
            vec!["token", "add", "bad name!", "--role", "read", "--file", f],
            "letters, digits",
        ),
        (
            vec!["token", "add", "x", "--role", "admin", "--file", f],
            "write or read",
        ),
        (vec!["token", "add", "x", "--file", f], "--role"),
    ] {
        let out = cli(&db, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: no token printed");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), format!("{good}\n"));
}

const PYTHON_AGENT: &str = r#"
import asyncio, json, sys
from mcp import ClientSession
from mcp.shared._httpx_utils import create_mcp_http_client
import mcp.client.streamable_http as sh
connect = getattr(sh, "streamable_http_client", None) or sh.streamablehttp_client

async def main(url, token):
    client = create_mcp_http_client(headers={"Authorization": "Bearer " + token})
    async with client:
        async with connect(url, http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                tools = await s.list_tools()
                print("tools", len(tools.tools), flush=True)
                r = await s.call_tool("query_memory", {"operation": "list"})
                print("read", json.loads(r.content[0].text)["success"], flush=True)
                r = await s.call_tool("manage_container", {"operation": "create", "containerType": "project", "name": "Py"})
                env = json.loads(r.content[0].text)
                print("write", r.isError if hasattr(r, "isError") else r.is_error, env["error"]["code"], flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"#;

#[tokio::test]
async fn the_python_sdk_with_a_read_token_reads_and_is_refused_its_write() {
    let Some(python) = crate::http::python_mcp() else {
        eprintln!("the Python MCP SDK is not installed (scripts/test.sh installs it); skipped");
        return;
    };
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let file = dir.path().join("agents");
    let reader = mint(&db, &file, "py-reader", "read");
    let s = HttpServer::start(
        &db,
        &["--toolsets", "tasks,memory"],
        &["--tokens-file", file.to_str().unwrap()],
        &[],
    )
    .await;
    let (stdout, _) =
        crate::http::run_python(&python, dir.path(), PYTHON_AGENT, &[&s.mcp_url(), &reader]).await;
    assert!(stdout.contains("read True"), "{stdout}");
    assert!(stdout.contains("write True FORBIDDEN"), "{stdout}");
}
