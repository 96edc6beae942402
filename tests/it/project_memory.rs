//! Memory that belongs to its project, through MCP: a project is born with its
//! `Project` subject, `Project:NAME` and `manage_subject create` find that subject
//! instead of making a second, older databases are linked by their migration, and a
//! reflected rule whose scope names no project is refused rather than stored as
//! Global.

use serde_json::{json, Value};

use crate::code::Repo;
use crate::harness::{Cairn, TempDir};

fn s(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_string()
}

async fn project_subject(c: &Cairn, name: &str) -> Value {
    c.ok(
        "manage_subject",
        json!({"operation":"get","id":format!("Project:{name}")}),
    )
    .await["subject"]
        .clone()
}

async fn recall(c: &Cairn, project: &str) -> Vec<String> {
    let r = c
        .ok(
            "query_memory",
            json!({"operation":"recall","projectId":project}),
        )
        .await;
    r["atoms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| s(&a["statement"]))
        .collect()
}

#[tokio::test]
async fn a_project_is_born_with_its_subject_and_project_name_lands_in_it() {
    let c = Cairn::start().await;
    let shop = c.project("Shop").await;
    let subj = project_subject(&c, "Shop").await;
    assert_eq!(
        subj["fields"]["orchestratorProject"],
        json!(shop),
        "{subj:#}"
    );

    // A memory scoped by the project's name is the project's memory.
    c.ok(
        "manage_memory",
        json!({"operation":"remember","now":"2025-09-01T00:00:00Z",
               "atom":{"type":"Convention","statement":"Handlers return problem+json","area":"naming","context":"Project:shop"},
               "sources":[{"refType":"doc","uri":"docs/errors.md"}]}),
    )
    .await;
    // And so is one scoped by the project's id.
    c.ok(
        "manage_memory",
        json!({"operation":"remember","now":"2025-09-01T00:00:00Z",
               "atom":{"type":"Convention","statement":"Money is integer cents","area":"naming","context":shop},
               "sources":[{"refType":"doc","uri":"docs/money.md"}]}),
    )
    .await;
    let got = recall(&c, &shop).await;
    assert!(
        got.contains(&"Handlers return problem+json".to_string())
            && got.contains(&"Money is integer cents".to_string()),
        "{got:?}"
    );
    let all = c
        .ok(
            "manage_subject",
            json!({"operation":"list","kind":"Project"}),
        )
        .await;
    assert_eq!(all["total"], 1, "{all:#}");

    // Creating the subject again links nothing new: it answers the project's, with
    // the fields it lacked set and none it had changed.
    let acme = c
        .ok(
            "manage_subject",
            json!({"operation":"create","subject":{"kind":"Org","name":"Acme"}}),
        )
        .await["subject"]
        .clone();
    let again = c
        .ok(
            "manage_subject",
            json!({"operation":"create","subject":{"kind":"Project","name":"Shop","org":acme["id"],"domain":"retail"}}),
        )
        .await;
    assert_eq!(again["created"], json!(false));
    assert_eq!(again["subject"]["id"], subj["id"]);
    assert_eq!(again["subject"]["fields"]["org"], acme["id"], "{again:#}");
    assert_eq!(again["subject"]["fields"]["domain"], "retail");
    assert_eq!(again["filled"], json!(["domain", "org"]));
    let kept = c
        .ok(
            "manage_subject",
            json!({"operation":"create","subject":{"kind":"Project","name":"shop","domain":"wholesale"}}),
        )
        .await;
    assert_eq!(kept["subject"]["fields"]["domain"], "retail", "{kept:#}");
    assert!(kept.get("filled").is_none(), "{kept:#}");

    // A subject for a project that exists but was remembered before it: linked.
    let early = c
        .ok(
            "manage_subject",
            json!({"operation":"create","subject":{"kind":"Project","name":"Billing"}}),
        )
        .await["subject"]
        .clone();
    assert!(early.get("fields").is_none(), "{early:#}");
    let billing = c.project("Billing").await;
    let linked = project_subject(&c, "Billing").await;
    assert_eq!(
        linked["id"], early["id"],
        "the early subject is the project's"
    );
    assert_eq!(linked["fields"]["orchestratorProject"], json!(billing));

    // Two projects of one name: the name is refused, listing both.
    let other = c.project("Billing").await;
    let e = c
        .err(
            "manage_memory",
            json!({"operation":"remember","now":"2025-09-01T00:00:00Z",
                   "atom":{"type":"Convention","statement":"Invoices are immutable","area":"naming","context":"Project:Billing"},
                   "sources":[{"refType":"doc","uri":"docs/invoices.md"}]}),
            "VALIDATION_ERROR",
        )
        .await;
    let m = s(&e["message"]);
    assert!(m.contains(&billing) && m.contains(&other), "{m}");
    c.stop().await;
}

#[tokio::test]
async fn init_project_creates_the_subject_and_attaching_a_repository_links_one() {
    let repo = Repo::new();
    repo.write("a.txt", "a\n");
    repo.commit("init");
    let c = Cairn::start().await;
    let d = c
        .ok("init_project", json!({"name":"Lib","repoPath":repo.root()}))
        .await;
    let subj = project_subject(&c, "Lib").await;
    assert_eq!(subj["fields"]["orchestratorProject"], d["projectId"]);

    // A database whose project has no subject (as before every project had one):
    // attaching a repository gives it one.
    let p = c.project("Tools").await;
    let mut sql = crate::harness::sql(&c.db).await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DELETE FROM memory_subjects WHERE orchestrator_project_id = '{p}'"
    )))
    .execute(&mut sql)
    .await
    .unwrap();
    let repo2 = Repo::new();
    repo2.write("b.txt", "b\n");
    repo2.commit("init");
    c.ok(
        "init_project",
        json!({"name":"Tools","repoPath":repo2.root(),"projectId":p}),
    )
    .await;
    assert_eq!(
        project_subject(&c, "Tools").await["fields"]["orchestratorProject"],
        json!(p)
    );
    c.stop().await;
}

/// The migration links what an older database holds: an unlinked Project subject
/// named as exactly one project, and nothing where the name is shared.
#[tokio::test]
async fn the_migration_links_unlinked_project_subjects_by_exact_name() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let c = Cairn::on(&db, &[]).await;
    let one = c.project("Payments").await;
    let twin_a = c.project("Twin").await;
    let twin_b = c.project("Twin").await;
    let payments = project_subject(&c, "Payments").await;
    c.stop().await;

    // Undo what the new code does, and forget the migration: an older database.
    let mut sql = crate::harness::sql(&db).await;
    sqlx::query("UPDATE memory_subjects SET orchestrator_project_id = NULL")
        .execute(&mut sql)
        .await
        .unwrap();
    sqlx::query("DELETE FROM _sqlx_migrations WHERE description = 'project subjects'")
        .execute(&mut sql)
        .await
        .unwrap();
    let linked: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT name, orchestrator_project_id FROM memory_subjects ORDER BY name, id",
    )
    .fetch_all(&mut sql)
    .await
    .unwrap();
    assert!(linked.iter().all(|(_, p)| p.is_none()), "{linked:?}");

    let c = Cairn::on(&db, &[]).await;
    let after = project_subject(&c, "Payments").await;
    assert_eq!(after["id"], payments["id"]);
    assert_eq!(after["fields"]["orchestratorProject"], json!(one));
    let rows: Vec<(String, Option<String>)> = sqlx::query_as(
        "SELECT name, orchestrator_project_id FROM memory_subjects WHERE name = 'Twin'",
    )
    .fetch_all(&mut sql)
    .await
    .unwrap();
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter().all(|(_, p)| p.is_none()),
        "a shared name is not guessed: {rows:?}"
    );
    let _ = (twin_a, twin_b);
    c.stop().await;
}

#[tokio::test]
async fn a_workspace_rule_needs_a_project_and_lands_in_it() {
    let c = Cairn::start().await;
    let p = c.project("Tooling").await;
    let e1 = c
        .ok(
            "manage_diary",
            json!({"operation":"write","session":"s1","projectId":p,"accomplishments":["shipped"],
                   "learnings":["pin the toolchain"]}),
        )
        .await["entry"]
        .clone();
    let rules = json!([
        {"rule":"Always pin the Rust toolchain version","category":"tooling","scope":"workspace",
         "reasoning":"reproducible builds","diaryEntryIds":[e1["id"]]}
    ]);
    let e = c
        .err(
            "manage_diary",
            json!({"operation":"ingest","rules":rules.to_string()}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "rules[0].scope", "{e:#}");
    assert!(s(&e["message"]).contains("projectId"), "{e:#}");

    // A project whose subject is gone (an older database) gets it back, and the rule
    // is scoped to it.
    let mut sql = crate::harness::sql(&c.db).await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DELETE FROM memory_subjects WHERE orchestrator_project_id = '{p}'"
    )))
    .execute(&mut sql)
    .await
    .unwrap();
    let r = c
        .ok(
            "manage_diary",
            json!({"operation":"ingest","rules":rules.to_string(),"projectId":p}),
        )
        .await;
    assert_eq!(r["rules"][0]["verdict"], "drafted", "{r:#}");
    let atom = s(&r["rules"][0]["atomId"]);
    let got = c
        .ok("query_memory", json!({"operation":"get","id":atom}))
        .await;
    let subj = project_subject(&c, "Tooling").await;
    assert_eq!(got["atom"]["context"]["id"], subj["id"], "{got:#}");
    c.stop().await;
}
