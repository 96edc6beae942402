//! The published tool list: names and parameters compatible with the port, one schema
//! snapshot per tool, and the meta rules every tool keeps.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::harness::Cairn;

fn port_tools() -> Vec<Value> {
    let text = include_str!("../../fixtures/port-interface.json");
    serde_json::from_str::<Vec<Value>>(text).expect("port interface JSON")
}

/// The port's tools Cairn serves in the `tasks` toolset (the graph tools come with `graph`).
const GRAPH_TOOLS: [&str; 3] = ["query_graph", "manage_graph", "manage_changelog"];

/// Parameters the port requires and Cairn does not, because Cairn has a documented
/// default for them. Requiring less never breaks a client written for the port.
const RELAXED: [(&str, &str); 1] = [("query_templates", "operation")];

#[tokio::test]
async fn tools_match_port_names_parameters_and_enums() {
    let c = Cairn::start().await;
    let tools = c.tools().await;
    let served: Vec<Value> = tools
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    for port in port_tools() {
        let name = port["name"].as_str().unwrap();
        let Some(ours) = served.iter().find(|t| t["name"] == json!(name)) else {
            assert!(
                GRAPH_TOOLS.contains(&name),
                "port tool {name} is not served"
            );
            continue;
        };
        let props = &ours["inputSchema"]["properties"];
        for (param, spec) in port["inputSchema"]["properties"].as_object().unwrap() {
            let mine = &props[param];
            assert!(mine.is_object(), "{name}: parameter {param} missing");
            if let Some(values) = spec["enum"].as_array() {
                let ours: Vec<&Value> = mine["enum"]
                    .as_array()
                    .map(|a| a.iter().collect())
                    .unwrap_or_default();
                for v in values {
                    assert!(ours.contains(&v), "{name}.{param}: enum value {v} missing");
                }
            } else if let Some(types) = mine["type"].as_array() {
                // Cairn may accept more than the port (a list as an array as well as
                // a string), never less.
                let port: Vec<&Value> = match spec["anyOf"].as_array() {
                    Some(any) => any.iter().map(|t| &t["type"]).collect(),
                    None => vec![&spec["type"]],
                };
                for t in port {
                    assert!(
                        types.contains(t),
                        "{name}.{param}: {types:?} lacks the port's {t}"
                    );
                }
            } else {
                // An enum goes without its type: its values are strings.
                let ty = match mine.get("type") {
                    None if mine["enum"].is_array() => &json!("string"),
                    _ => &mine["type"],
                };
                assert_eq!(ty, &spec["type"], "{name}.{param}: type differs");
            }
        }
        let ours_req: HashSet<&str> = ours["inputSchema"]["required"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let port_req: HashSet<&str> = port["inputSchema"]["required"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter(|p| !RELAXED.contains(&(name, *p)))
            .collect();
        assert_eq!(
            ours_req, port_req,
            "{name}: required parameters differ from the port"
        );
    }
    c.stop().await;
}

#[tokio::test]
async fn every_tool_has_unique_name_description_and_annotations() {
    let c = Cairn::start().await;
    let tools = c.tools().await;
    assert!(tools.len() >= 23, "only {} tools", tools.len());
    let (mut names, mut titles) = (HashSet::new(), HashSet::new());
    for t in &tools {
        assert!(
            names.insert(t.name.to_string()),
            "duplicate tool {}",
            t.name
        );
        assert!(
            t.description.as_deref().is_some_and(|d| d.len() > 20),
            "{} lacks a description",
            t.name
        );
        // A title for people, short, no two alike; the envelope's schema as the
        // output schema (tests/it/sdk_output.rs has the SDKs check answers against it).
        let title = t.title.as_deref().unwrap_or_default();
        assert!(
            (4..=24).contains(&title.len()),
            "{}: title {title:?}",
            t.name
        );
        assert!(titles.insert(title.to_string()), "duplicate title {title}");
        let out = t
            .output_schema
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no outputSchema", t.name));
        assert_eq!(out.get("type"), Some(&json!("object")), "{}", t.name);
        // Only `readOnlyHint` is said, and only when true: the other hints would be
        // paid for in every agent's context for what clients do not act on.
        let a = t.annotations.clone().unwrap_or_default();
        let hints = (a.read_only_hint, a.destructive_hint, a.idempotent_hint);
        assert!(
            hints == (Some(true), None, None) || t.annotations.is_none(),
            "{}: hints {hints:?}",
            t.name
        );
        match t.name.as_ref() {
            "advance" | "delete_entity" | "sync" | "init_project" | "manage_memory" => {
                assert!(t.annotations.is_none(), "{}", t.name)
            }
            "query_graph" | "query_memory" | "find" => {
                assert_eq!(hints, (Some(true), None, None), "{}", t.name)
            }
            _ => {}
        }
        if a.read_only_hint == Some(true) {
            // Four read-only code tools and five ontology tools keep their original
            // names without such a prefix (docs/code.md, docs/ontology.md).
            assert!(
                t.name.starts_with("query_")
                    || t.name.starts_with("get_")
                    || t.name.starts_with("list_")
                    || [
                        "find_entities",
                        "analyze_document",
                        "search",
                        "query",
                        "find"
                    ]
                    .contains(&t.name.as_ref())
                    || [
                        "ontology_discover",
                        "ontology_read",
                        "ontology_query",
                        "ontology_validate"
                    ]
                    .contains(&t.name.as_ref()),
                "{}",
                t.name
            );
        }
    }
    c.stop().await;
}

#[tokio::test]
async fn tool_schemas_snapshot() {
    let c = Cairn::start().await;
    for t in c.tools().await {
        let v = serde_json::to_value(&t).unwrap();
        insta::assert_json_snapshot!(format!("tool_{}", t.name), v);
    }
    c.stop().await;
}

/// A toolset's tools/list as a client receives it: the number of tools, and the
/// characters of the answer's `result` (the compact JSON the server wrote, whatever
/// a client library would drop or add), read off the raw stdio line.
async fn served_chars(toolsets: &str) -> (usize, usize) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let dir = crate::harness::TempDir::new();
    let mut child = crate::harness::serve_command(&dir.path().join("t.db"))
        .args(["--toolsets", toolsets])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    for l in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bill","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ] {
        stdin.write_all(format!("{l}\n").as_bytes()).await.unwrap();
    }
    let answer = loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("tools/list within 30 s")
            .unwrap()
            .expect("an answer line");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == json!(2) {
            break v;
        }
    };
    child.kill().await.unwrap();
    let result = &answer["result"];
    assert!(result["nextCursor"].is_null(), "one page: {answer}");
    (
        result["tools"].as_array().unwrap().len(),
        serde_json::to_string(result).unwrap().chars().count(),
    )
}

/// Per toolset, and with every toolset: tools/list is read by the agent on every
/// turn, so its size is a budget.
#[tokio::test]
async fn tools_list_fits_its_budget_per_toolset_and_with_every_toolset() {
    let (n, chars) = served_chars("ontology").await;
    // The ontology's six tools and `find`, served with any toolset.
    assert_eq!(n, 7);
    assert!(
        chars <= 5_000,
        "the ontology toolset's tools/list is {chars} characters"
    );
    // Titles and output schemas included (about 3,000 characters over 52 tools), won
    // back from the wording, the hints clients do not act on, and Cairn's own lists
    // published as arrays.
    let (_, all) = served_chars("all").await;
    assert!(
        all <= 30_000,
        "tools/list with every toolset is {all} characters"
    );
}

#[tokio::test]
async fn server_info_names_cairn_and_instructions_cover_toolsets() {
    let c = Cairn::start().await;
    let info = c.client.peer_info().expect("server info");
    let server = info.server_info.clone().expect("serverInfo");
    assert_eq!(server.name, "cairn");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    let ins = info.instructions.clone().unwrap_or_default();
    assert!(ins.contains("tasks:"), "instructions: {ins}");
    assert!(
        ins.lines().count() <= 12,
        "instructions should be a few lines: {ins}"
    );
    c.stop().await;
}

#[tokio::test]
async fn toolsets_flag_selects_tools_and_rejects_unknown() {
    let dir = crate::harness::TempDir::new();
    let db = dir.path().join("c.db");
    let c = Cairn::on(&db, &["--toolsets", "tasks"]).await;
    assert!(c.tools().await.iter().any(|t| t.name == "advance"));
    c.stop().await;
    let out = std::process::Command::new(crate::harness::BIN)
        .args(["--db", db.to_str().unwrap(), "--toolsets", "nope", "tools"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown toolset 'nope'"));
}

#[tokio::test]
async fn unknown_tool_is_an_error_envelope_naming_the_nearest_tools() {
    let c = Cairn::start().await;
    let e = c.err("get_next_tsk", json!({}), "NOT_FOUND").await;
    assert_eq!(e["details"]["nearest"][0], "get_next_task", "{e:#}");
    assert!(e["details"]["nearest"].as_array().unwrap().len() <= 5);
    assert!(e["message"].as_str().unwrap().contains("get_next_task"));
    let e = c.err("zzzzzzzzzzzzzzzz", json!({}), "NOT_FOUND").await;
    assert_eq!(e["details"]["nearest"], json!([]), "{e:#}");
    assert!(e["message"].as_str().unwrap().contains("tools/list"));
    c.stop().await;
}

#[test]
fn cli_call_prints_envelope_and_exits_1_on_failure() {
    let dir = crate::harness::TempDir::new();
    let db = dir.path().join("cli.db");
    let run = |args: &[&str]| crate::harness::cli(&db, args);
    let env = crate::harness::cli_ok(
        &db,
        "manage_container",
        r#"{"operation":"create","containerType":"project","name":"CLI"}"#,
    );
    assert_eq!(env["success"], json!(true));
    assert_eq!(env["data"]["project"]["name"], json!("CLI"));
    let bad = run(&[
        "call",
        "query_container",
        r#"{"operation":"get","containerType":"project","id":"00000000-0000-7000-8000-000000000000"}"#,
    ]);
    assert_eq!(bad.status.code(), Some(1));
    let env: Value = serde_json::from_slice(&bad.stdout).unwrap();
    assert_eq!(env["error"]["code"], json!("NOT_FOUND"));
    let tools = run(&["tools"]);
    let text = String::from_utf8_lossy(&tools.stdout);
    assert!(
        text.contains("get_next_task") && text.contains("[tasks]"),
        "{text}"
    );
    // The database file was created and migrated on first start.
    assert!(db.exists() || crate::harness::postgres().is_some());
}

/// The stdio transport on raw lines, as a client with bugs might write them: what is
/// not JSON gets a parse error, JSON that is no request gets Invalid Request (with its
/// id when it has one), a blank line nothing, and the session goes on; a tool answer's
/// two copies are the same JSON.
#[tokio::test]
async fn stdio_answers_noise_and_malformed_requests_and_keeps_serving() {
    use tokio::io::AsyncWriteExt;

    let dir = crate::harness::TempDir::new();
    let (mut child, mut stdin, mut lines) = crate::harness::serve_piped(&dir.path().join("raw.db"));
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let rest = [
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "this is not JSON",
        "",
        r#"{"jsonrpc":"2.0","x":1}"#,
        r#"{"jsonrpc":"2.0","id":7,"x":1}"#,
        // Split across two writes below, and with a carriage return.
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"manage_container\",\
         \"arguments\":{\"operation\":\"create\",\"containerType\":\"project\",\"name\":\"Raw \\\"q\\\" \\u00e9 \\\\ x\"}}}\r",
    ];
    stdin
        .write_all(format!("{init}\n").as_bytes())
        .await
        .unwrap();
    let first: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(first["id"], json!(0), "{first}");
    for l in &rest[..5] {
        stdin.write_all(format!("{l}\n").as_bytes()).await.unwrap();
    }
    let call = format!("{}\n", rest[5]);
    let (a, b) = call.split_at(40);
    stdin.write_all(a.as_bytes()).await.unwrap();
    stdin.flush().await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    stdin.write_all(b.as_bytes()).await.unwrap();

    let mut seen = Vec::new();
    while seen.len() < 4 {
        let next = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line());
        let line = next
            .await
            .expect("four answers within 10 s")
            .unwrap()
            .expect("the server stays up");
        seen.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    let mut codes: Vec<(Value, Value)> = seen
        .iter()
        .filter(|m| m.get("error").is_some())
        .map(|m| {
            (
                m["error"]["code"].clone(),
                m.get("id").cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    codes.sort_by_key(|c| format!("{} {}", c.0, c.1));
    assert_eq!(
        codes,
        [
            (json!(-32600), json!(7)),
            (json!(-32600), Value::Null),
            (json!(-32700), Value::Null)
        ],
        "{seen:#?}"
    );
    let answer = seen
        .iter()
        .find(|m| m["id"] == json!(8))
        .expect("the call's answer");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    let structured = &answer["result"]["structuredContent"];
    assert_eq!(&serde_json::from_str::<Value>(text).unwrap(), structured);
    assert_eq!(
        structured["data"]["project"]["name"],
        json!("Raw \"q\" é \\ x")
    );
    assert_eq!(answer["result"]["isError"], json!(false));
    child.kill().await.unwrap();
}

/// A server whose stdin is a pipe and whose stdout is a file (`cairn serve > log`):
/// each end takes its own path, and the pipe end is read as a pipe.
#[tokio::test]
async fn stdio_serves_a_pipe_in_and_a_file_out() {
    use tokio::io::AsyncWriteExt;

    let dir = crate::harness::TempDir::new();
    let out = dir.path().join("answers.jsonl");
    let mut child = crate::harness::serve_command(&dir.path().join("file.db"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::fs::File::create(&out).unwrap())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The first line arrives after the server has opened its store and waits on an
    // empty pipe (on PostgreSQL there is no file to see: the start is not awaited).
    let db = dir.path().join("file.db");
    if crate::harness::postgres().is_none() {
        crate::harness::eventually("the server opens its store", 60, || db.exists()).await;
    }
    for l in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"file","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    ] {
        stdin.write_all(format!("{l}\n").as_bytes()).await.unwrap();
    }
    // Answered before the end of input closes the session.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let answers = loop {
        let text = std::fs::read_to_string(&out).unwrap();
        if text.lines().count() >= 2 || std::time::Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    drop(stdin);
    assert!(child.wait().await.unwrap().success());
    let ids: Vec<Value> = answers
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
        .collect();
    assert_eq!(ids, [json!(1), json!(2)], "{answers}");
}

/// A session that ends (its input closes) closes the database: SQLite folds the WAL
/// into the file and removes it, so the next start has no WAL to read through and
/// the disk holds the database alone. `cairn call` closes it the same way. What
/// was written is there on the next start.
#[tokio::test]
async fn an_ended_session_leaves_the_database_without_a_wal() {
    use tokio::io::AsyncWriteExt;
    if !crate::harness::sqlite_only("SQLite's WAL file") {
        return;
    }

    let dir = crate::harness::TempDir::new();
    let db = dir.path().join("end.db");
    let wal = dir.path().join("end.db-wal");
    let (mut child, mut stdin, mut lines) = crate::harness::serve_piped(&db);
    let mut text = String::new();
    for l in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"end","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    ] {
        text.push_str(l);
        text.push('\n');
    }
    // Projects are written in a transaction, tasks by the direct connection: both
    // kinds of connection are open when the session ends.
    for i in 0..50 {
        text.push_str(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"manage_container","arguments":{{"operation":"create","containerType":"project","name":"Ended {i}"}}}}}}"#,
            2 * i + 2
        ));
        text.push('\n');
        text.push_str(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"manage_container","arguments":{{"operation":"create","containerType":"task","title":"Ended {i}"}}}}}}"#,
            2 * i + 3
        ));
        text.push('\n');
    }
    stdin.write_all(text.as_bytes()).await.unwrap();
    for _ in 0..101 {
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line())
            .await
            .expect("every answer within 10 s")
            .unwrap()
            .expect("an answer line");
        assert!(!line.contains(r#""isError":true"#), "{line}");
    }
    // The writes went through the WAL, which is still there while the session lasts.
    assert!(wal.exists(), "no WAL while the session runs");
    drop(stdin);
    let status = tokio::time::timeout(std::time::Duration::from_secs(10), child.wait())
        .await
        .expect("the server exits once its input ends")
        .unwrap();
    assert!(status.success());
    assert!(!wal.exists(), "the ended session left its WAL behind");

    let env = crate::harness::cli_ok(
        &db,
        "query_container",
        r#"{"operation":"search","containerType":"project","query":"Ended"}"#,
    );
    assert_eq!(env["data"]["total"], json!(50), "{env}");
    let env = crate::harness::cli_ok(
        &db,
        "query_container",
        r#"{"operation":"search","containerType":"task","query":"Ended"}"#,
    );
    assert_eq!(env["data"]["total"], json!(50), "{env}");
    assert!(!wal.exists(), "cairn call left a WAL behind");
}

#[tokio::test]
async fn the_memory_toolset_fits_its_budget() {
    let dir = crate::harness::TempDir::new();
    let c = Cairn::on(&dir.path().join("m.db"), &["--toolsets", "memory"]).await;
    let names: Vec<String> = c.tools().await.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        names,
        [
            "manage_memory",
            "query_memory",
            "manage_subject",
            "curate_memory",
            "manage_diary",
            "find"
        ]
    );
    c.stop().await;
    let (_, chars) = served_chars("memory").await;
    assert!(
        chars <= 5_500,
        "the memory toolset's tools/list is {chars} characters"
    );
}
