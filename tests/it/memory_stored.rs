//! The memory's stored form is the store's own: rows written by an older Cairn (no
//! `v` in their fields) read back through MCP, a row that today's input limits would
//! refuse still reads back as written, and a row that does not decode is an
//! `INTERNAL_ERROR` whose logged cause names the atom and the line and column, while
//! the server goes on. Each row is changed under the tools from the test's own
//! connection, on SQLite and on PostgreSQL alike.

use serde_json::{json, Value};
use sqlx::Connection;

use crate::harness::{cli, Cairn, TempDir};
use crate::memory::{s, subject};

/// Runs one statement with text parameters on the test database.
async fn exec(db: &std::path::Path, sql: &str, args: &[&str]) {
    let mut c = crate::harness::sql(db).await;
    let mut q = sqlx::query(sqlx::AssertSqlSafe(pg(sql)));
    for a in args {
        q = q.bind(a.to_string());
    }
    q.execute(&mut c).await.expect(sql);
    c.close().await.ok();
}

/// A column of one row, as text.
async fn column(db: &std::path::Path, sql: &str, id: &str) -> String {
    let mut c = crate::harness::sql(db).await;
    let (v,): (String,) = sqlx::query_as(sqlx::AssertSqlSafe(pg(sql)))
        .bind(id.to_string())
        .fetch_one(&mut c)
        .await
        .expect(sql);
    c.close().await.ok();
    v
}

/// `?` placeholders as `$n` on PostgreSQL.
pub(crate) fn pg(sql: &str) -> String {
    if crate::harness::postgres().is_none() {
        return sql.to_string();
    }
    let mut out = String::new();
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(ch);
        }
    }
    out
}

/// A Decision and the Person who made it, through the tools: (atom id, person id).
async fn decision(c: &Cairn) -> (String, String) {
    let ada = subject(c, json!({"kind":"Person","name":"ada","roles":["dev"]})).await;
    let pid = s(&ada["id"]);
    let r = c
        .ok(
            "manage_memory",
            json!({"operation":"remember","atom":{"type":"Decision","statement":"Zod validates every input",
                   "decidedAt":"2025-01-02","rationale":"typed schemas","decisionMakers":[pid]}}),
        )
        .await;
    (s(&r["atom"]["id"]), pid)
}

async fn get(c: &Cairn, id: &str) -> Value {
    c.ok("query_memory", json!({"operation":"get","id":id}))
        .await["atom"]
        .clone()
}

#[tokio::test]
async fn rows_an_older_cairn_wrote_read_back() {
    let dir = TempDir::new();
    let db = dir.path().join("c.db");
    let c = Cairn::on(&db, &[]).await;
    let (id, pid) = decision(&c).await;

    // Written in this Cairn's form: versioned, the status in its own column.
    let details = column(&db, "SELECT details FROM memory_atoms WHERE id = ?", &id).await;
    let v: Value = serde_json::from_str(&details).unwrap();
    assert_eq!(v["v"], 1, "{details}");
    assert!(v.get("decisionStatus").is_none(), "{details}");

    // The form rows had before it carried a version, exactly as that writer wrote it.
    let old = format!(
        "{{\"decidedAt\":\"2025-01-02T00:00:00.000Z\",\"decisionMakers\":[\"{pid}\"],\"rationale\":\"typed \\\"schemas\\\"\\nfor all\",\
         \"alternatives\":[\"yup\",\"joi\"],\"consequences\":[\"one schema library\"],\"enforcement\":\"lint\"}}"
    );
    exec(
        &db,
        "UPDATE memory_atoms SET details = ?, tags = ? WHERE id = ?",
        &[&old, "[\"validation\",\"zod\"]", &id],
    )
    .await;
    exec(
        &db,
        "UPDATE memory_subjects SET details = ? WHERE id = ?",
        &[
            "{\"roles\":[\"maintainer\"],\"timezone\":\"Europe/Paris\"}",
            &pid,
        ],
    )
    .await;
    let a = get(&c, &id).await;
    let f = &a["fields"];
    assert_eq!(f["rationale"], "typed \"schemas\"\nfor all", "{a:#}");
    assert_eq!(f["alternatives"], json!(["yup", "joi"]));
    assert_eq!(f["consequences"], json!(["one schema library"]));
    assert_eq!(f["enforcement"], "lint");
    assert_eq!(f["decisionMakers"], json!([pid]));
    assert_eq!(f["decisionStatus"], "proposed");
    assert_eq!(f["decidedAt"], "2025-01-02T00:00:00.000Z");
    assert_eq!(a["tags"], json!(["validation", "zod"]));
    let p = c
        .ok("manage_subject", json!({"operation":"get","id":pid}))
        .await;
    assert_eq!(
        p["subject"]["fields"],
        json!({"roles":["maintainer"],"timezone":"Europe/Paris"}),
        "{p:#}"
    );

    // A write on the old row goes through: its life moves, its fields stay.
    c.ok(
        "manage_memory",
        json!({"operation":"deprecate","id":id,"version":a["version"],"reason":"moved to valibot"}),
    )
    .await;
    let after = get(&c, &id).await;
    assert_eq!(after["status"], "DEPRECATED", "{after:#}");
    assert_eq!(after["fields"]["alternatives"], json!(["yup", "joi"]));
    c.stop().await;
}

#[tokio::test]
async fn a_row_past_todays_input_limits_still_reads_back() {
    let dir = TempDir::new();
    let db = dir.path().join("c.db");
    let c = Cairn::on(&db, &[]).await;
    let (id, pid) = decision(&c).await;

    // Input refuses a rationale over 32 KiB and more than 100 alternatives; a row
    // recorded under looser limits keeps them.
    let long = "r".repeat(40_000);
    let many: Vec<String> = (0..150).map(|i| format!("option {i}")).collect();
    let refused = c
        .call(
            "manage_memory",
            json!({"operation":"remember","atom":{"type":"Decision","statement":"Too long","decidedAt":"2025-01-02",
                   "rationale":long}}),
        )
        .await;
    assert_eq!(refused["success"], false, "{refused:#}");
    let row = json!({"v":1,"decidedAt":"2025-01-02T00:00:00.000Z","decisionMakers":[pid],
                     "rationale":long,"alternatives":many});
    let tags: Vec<String> = (0..80).map(|i| format!("tag-{i}")).collect();
    let statement = "s".repeat(5_000);
    exec(
        &db,
        "UPDATE memory_atoms SET details = ?, tags = ?, statement = ? WHERE id = ?",
        &[
            &row.to_string(),
            &serde_json::to_string(&tags).unwrap(),
            &statement,
            &id,
        ],
    )
    .await;
    let a = get(&c, &id).await;
    assert_eq!(
        a["fields"]["rationale"].as_str().map(str::len),
        Some(40_000)
    );
    assert_eq!(
        a["fields"]["alternatives"].as_array().map(Vec::len),
        Some(150)
    );
    assert_eq!(a["tags"].as_array().map(Vec::len), Some(80));
    assert_eq!(a["statement"].as_str().map(str::len), Some(5_000));
    c.stop().await;
}

#[tokio::test]
async fn a_row_that_does_not_decode_is_an_internal_error_saying_where() {
    let dir = TempDir::new();
    let db = dir.path().join("c.db");
    let c = Cairn::on(&db, &[]).await;
    let (id, _) = decision(&c).await;
    let (other, _) = {
        let r = c
            .ok(
                "manage_memory",
                json!({"operation":"remember","atom":{"type":"Fact","statement":"Zod is on npm","factKind":"observed"}}),
            )
            .await;
        (s(&r["atom"]["id"]), ())
    };
    for (details, cause) in [
        (
            "{\"decidedAt\":\"2025-01-02T00:00:00.000Z\",\n \"rationale\": 12}",
            "line 2 column",
        ),
        (
            "{\"decidedAt\":\"2025-01-02T00:00:00.000Z\"",
            "line 1 column",
        ),
        (
            "{\"decidedAt\":\"not a time\",\"rationale\":\"r\"}",
            "not a time",
        ),
        (
            "{\"v\":99,\"decidedAt\":\"2025-01-02T00:00:00.000Z\",\"rationale\":\"r\"}",
            "newer Cairn",
        ),
        (
            "{\"decidedAt\":\"2025-01-02T00:00:00.000Z\"}",
            "missing field `rationale`",
        ),
    ] {
        exec(
            &db,
            "UPDATE memory_atoms SET details = ? WHERE id = ?",
            &[details, &id],
        )
        .await;
        let e = c
            .err(
                "query_memory",
                json!({"operation":"get","id":id}),
                "INTERNAL_ERROR",
            )
            .await;
        assert!(!e.to_string().contains("decidedAt"), "{e:#}");
        // The server is still there, and reads the other atom.
        assert_eq!(get(&c, &other).await["statement"], "Zod is on npm");
        // The log's line names the atom and where its text broke.
        let out = cli(
            &db,
            &[
                "call",
                "query_memory",
                &json!({"operation":"get","id":id}).to_string(),
            ],
        );
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            log.contains(&format!("stored memory atom {id} cannot be read")) && log.contains(cause),
            "{details}: {log}"
        );
    }
    c.stop().await;
}
