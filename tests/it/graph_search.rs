//! Knowledge-graph reads besides context, through MCP: search (text, molecule and
//! orphan filters with pages; edits and deletes followed, also after VACUUM; atoms
//! another server wrote, found by words and by meaning), the changelog, and context
//! seeing another server's writes on the same file.

use crate::graph::{names, payments, Fixture};
use crate::harness::{id_of, Cairn, TempDir};
use serde_json::{json, Value};

#[tokio::test]
async fn search_filters_by_text_molecule_and_orphans_with_pages() {
    let f = Fixture::new().await;
    let (pay, ..) = payments(&f).await;
    let s = |extra: Value| {
        let mut a = json!({"operation":"search","entityType":"atom","projectId":f.project});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    };
    let all = f.c.ok("query_graph", s(json!({}))).await;
    assert_eq!(all["total"], json!(4));
    assert_eq!(
        names(&all["items"]),
        vec![
            "Checkout Page",
            "Retry Utilities",
            "Stripe Integration",
            "Webhook Handlers"
        ]
    );
    let q =
        f.c.ok("query_graph", s(json!({"query":"stripe SDK"})))
            .await;
    assert_eq!(names(&q["items"]), vec!["Stripe Integration"]);
    let by_mol = f.c.ok("query_graph", s(json!({"moleculeId":pay}))).await;
    assert_eq!(by_mol["total"], json!(2));
    let orphans = f.c.ok("query_graph", s(json!({"orphansOnly":true}))).await;
    assert_eq!(names(&orphans["items"]), vec!["Retry Utilities"]);
    let page =
        f.c.ok("query_graph", s(json!({"limit":3,"offset":2})))
            .await;
    assert_eq!(
        names(&page["items"]),
        vec!["Stripe Integration", "Webhook Handlers"]
    );
    assert_eq!(page["hasMore"], json!(false));
    // LIKE wildcards in the query are literal.
    let none = f.c.ok("query_graph", s(json!({"query":"%"}))).await;
    assert_eq!(none["total"], json!(0));
    let mols = f
        .c
        .ok("query_graph", json!({"operation":"search","entityType":"molecule","projectId":f.project,"query":"stripe"}))
        .await;
    assert_eq!(names(&mols["items"]), vec!["Payment Domain"]);
    f.c.err(
        "query_graph",
        json!({"operation":"search","entityType":"atom"}),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.err(
        "query_graph",
        s(json!({"orphansOnly":true,"moleculeId":pay})),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.stop().await;
}

/// Full-text rows follow text edits and deletes exactly, also after the database file
/// was vacuumed behind the server's back (the index is keyed by the rows' rowids).
#[tokio::test]
async fn search_follows_edits_and_deletes_also_after_vacuum() {
    let f = Fixture::new().await;
    let words = [
        "aardvark", "bonobo", "capybara", "dingo", "echidna", "fennec",
    ];
    let mut atoms = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let a = f
            .atom(
                &format!("Area {i}"),
                &[&format!("src/area{i}/**")],
                None,
                &format!("Handles the {w} flows."),
            )
            .await;
        atoms.push(a);
    }
    let find =
        |q: &str| json!({"operation":"search","entityType":"atom","projectId":f.project,"query":q});
    let del = |a: &Value| json!({"operation":"delete","entityType":"atom","id":a["id"],"version":a["version"]});
    // A gap in the rowids, then VACUUM, which may renumber rows without an INTEGER key.
    f.c.ok("manage_graph", del(&atoms[1])).await;
    // (PostgreSQL's VACUUM keeps rows where they are; run it there too.)
    {
        let mut conn = crate::harness::sql(&f.c.db).await;
        sqlx::query("VACUUM").execute(&mut conn).await.unwrap();
    }
    f.c.ok(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":atoms[4]["id"],"version":atoms[4]["version"],
               "lastTaskId":f.task,"knowledge":"Handles the axolotl flows."}),
    )
    .await;
    f.c.ok("manage_graph", del(&atoms[3])).await;
    let expect = [
        ("aardvark", vec!["Area 0"]),
        ("bonobo", vec![]),
        ("capybara", vec!["Area 2"]),
        ("dingo", vec![]),
        ("echidna", vec![]),
        ("axolotl", vec!["Area 4"]),
        ("fennec", vec!["Area 5"]),
    ];
    for (w, want) in expect {
        let r = f.c.ok("query_graph", find(w)).await;
        assert_eq!(names(&r["items"]), want, "search {w}: {r}");
    }
    f.c.stop().await;
}

/// A search also finds atoms by meaning, from vectors a server keeps in memory while
/// the project's generation stands. An atom another server writes must be seen: its
/// create moves that generation (through the graph's counter, migration 0010), so the
/// next search embeds it. The query shares no word with the atom, so only its vector
/// can find it.
#[tokio::test]
async fn search_by_meaning_sees_an_atom_another_server_wrote() {
    let (_dir, a, b, project, task) = shared().await;
    let create = |name: &str, knowledge: &str| {
        json!({"operation":"create","entityType":"atom","projectId":project,"name":name,
               "paths":format!("[\"src/{}/**\"]", name.to_lowercase()),"knowledge":knowledge,"createdByTaskId":task})
    };
    a.ok(
        "manage_graph",
        create("Ledger", "Settles the ledger at night."),
    )
    .await;
    let find = json!({"operation":"search","entityType":"atom","projectId":project,
                      "query":"give money back to customers"});
    // A's vectors are read now, at this generation.
    assert_eq!(
        names(&a.ok("query_graph", find.clone()).await["items"]),
        Vec::<String>::new()
    );
    b.ok(
        "manage_graph",
        create("Refunds", "Pays customers back when they cancel an order."),
    )
    .await;
    assert_eq!(
        names(&a.ok("query_graph", find).await["items"]),
        vec!["Refunds"]
    );
    a.stop().await;
    b.stop().await;
}

/// Writes leave the atoms' full-text index alone; the search brings it up to date
/// first (migration 0011). A search must see what another server on the same file
/// wrote, edited and deleted. The searched words are ticket codes buried in unrelated
/// text, which only the full-text index finds (their vectors are not close enough to
/// the query's).
#[tokio::test]
async fn search_sees_atoms_another_server_wrote() {
    let (_dir, a, b, project, task) = shared().await;
    let find =
        |q: &str| json!({"operation":"search","entityType":"atom","projectId":project,"query":q});
    let text = |code: &str| {
        format!(
            "Retries card payments through the gateway after a timeout, then settles the \
             ledger at night and mails the receipts; see ticket {code}."
        )
    };
    let none = Vec::<String>::new();
    // A searches first, so its later searches catch up from an index it has read.
    assert_eq!(
        names(&a.ok("query_graph", find("qk7zx")).await["items"]),
        none
    );
    let atom = b
        .ok(
            "manage_graph",
            json!({"operation":"create","entityType":"atom","projectId":project,"name":"Q",
                   "paths":"[\"src/q/**\"]","knowledge":text("qk7zx"),"createdByTaskId":task}),
        )
        .await["atom"]
        .clone();
    assert_eq!(
        names(&a.ok("query_graph", find("qk7zx")).await["items"]),
        vec!["Q"]
    );
    b.ok(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":id_of(&atom),"version":1,
               "lastTaskId":task,"knowledge":text("wb4vm")}),
    )
    .await;
    assert_eq!(
        names(&a.ok("query_graph", find("qk7zx")).await["items"]),
        none
    );
    assert_eq!(
        names(&a.ok("query_graph", find("wb4vm")).await["items"]),
        vec!["Q"]
    );
    b.ok(
        "manage_graph",
        json!({"operation":"delete","entityType":"atom","id":id_of(&atom),"version":2}),
    )
    .await;
    assert_eq!(
        names(&a.ok("query_graph", find("wb4vm")).await["items"]),
        none
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn changelog_is_append_only_newest_first_and_paged() {
    let f = Fixture::new().await;
    let a = id_of(&f.atom("A", &["a/**"], None, "").await);
    for i in 0..7 {
        f.c.ok("manage_changelog", json!({"operation":"append","parentType":"atom","parentId":a,"taskId":f.task,"summary":format!("change {i}")}))
            .await;
    }
    let p =
        f.c.ok(
            "manage_changelog",
            json!({"operation":"search","parentType":"atom","parentId":a,"limit":3,"offset":1}),
        )
        .await;
    let s: Vec<&str> = p["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["summary"].as_str().unwrap())
        .collect();
    assert_eq!(s, vec!["change 5", "change 4", "change 3"]);
    assert_eq!(p["total"], json!(7));
    assert_eq!(p["hasMore"], json!(true));
    // Shallow: get shows the newest 5 by default, changelogLimit changes it, and
    // includeChangelog=false leaves it out.
    let g =
        f.c.ok(
            "query_graph",
            json!({"operation":"get","entityType":"atom","id":a}),
        )
        .await;
    assert_eq!(g["atom"]["changelog"].as_array().unwrap().len(), 5);
    assert_eq!(g["atom"]["changelog"][0]["summary"], json!("change 6"));
    let g =
        f.c.ok(
            "query_graph",
            json!({"operation":"get","entityType":"atom","id":a,"changelogLimit":2}),
        )
        .await;
    assert_eq!(g["atom"]["changelog"].as_array().unwrap().len(), 2);
    let g =
        f.c.ok(
            "query_graph",
            json!({"operation":"get","entityType":"atom","id":a,"includeChangelog":false}),
        )
        .await;
    assert_eq!(g["atom"]["changelog"], json!([]));
    // The rules: parent and task must exist, summary 1 byte..4 KB.
    let ghost = "0192f000-0000-7000-8000-00000000dead";
    let ap = |parent: &str, task: &str, summary: &str| json!({"operation":"append","parentType":"atom","parentId":parent,"taskId":task,"summary":summary});
    f.c.err("manage_changelog", ap(ghost, &f.task, "x"), "NOT_FOUND")
        .await;
    f.c.err("manage_changelog", ap(&a, ghost, "x"), "NOT_FOUND")
        .await;
    f.c.err(
        "manage_changelog",
        ap(&a, &f.task, "   "),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.err(
        "manage_changelog",
        ap(&a, &f.task, &"s".repeat(4097)),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.ok("manage_changelog", ap(&a, &f.task, &"s".repeat(4096)))
        .await;
    // Entries cannot be edited: there is no such operation.
    f.c.err(
        "manage_changelog",
        json!({"operation":"update","parentType":"atom","parentId":a}),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.stop().await;
}

/// Two servers, A and B, on one database file (which lives as long as the first
/// value), and a project with a task that A created.
pub(crate) async fn shared() -> (TempDir, Cairn, Cairn, String, String) {
    let dir = TempDir::new();
    let db = dir.path().join("shared.db");
    let a = Cairn::on(&db, &[]).await;
    let b = Cairn::on(&db, &[]).await;
    let project = a.project("P").await;
    let task = id_of(&a.task(json!({"title":"t","projectId":project})).await);
    (dir, a, b, project, task)
}

#[tokio::test]
async fn context_sees_writes_made_by_another_server_on_the_same_file() {
    let (_dir, a, b, project, task) = shared().await;
    let args = json!({"operation":"context","projectId":project,"paths":"src/x/y.ts"});
    async fn ctx_of(c: &Cairn, args: &Value) -> Value {
        c.ok("query_graph", args.clone()).await
    }
    let ctx = |c| ctx_of(c, &args);
    // A caches an empty graph; B writes; A must see B's atom.
    assert_eq!(ctx(&a).await["unmatchedPaths"], json!(["src/x/y.ts"]));
    let atom = b
        .ok(
            "manage_graph",
            json!({"operation":"create","entityType":"atom","projectId":project,"name":"X",
                                   "paths":"[\"src/x/**\"]","createdByTaskId":task}),
        )
        .await["atom"]
        .clone();
    assert_eq!(names(&ctx(&a).await["orphanAtoms"]), vec!["X"]);
    // B narrows the pattern; A's cached matcher must not keep the old one.
    b.ok(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":id_of(&atom),"version":1,
                                "lastTaskId":task,"paths":"[\"src/x/*.rs\"]"}),
    )
    .await;
    assert_eq!(ctx(&a).await["unmatchedPaths"], json!(["src/x/y.ts"]));
    // And a delete by B.
    b.ok(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":id_of(&atom),"version":2,
                                "lastTaskId":task,"paths":"[\"src/**\"]"}),
    )
    .await;
    assert_eq!(names(&ctx(&a).await["orphanAtoms"]), vec!["X"]);
    b.ok(
        "manage_graph",
        json!({"operation":"delete","entityType":"atom","id":id_of(&atom),"version":3}),
    )
    .await;
    assert_eq!(ctx(&a).await["orphanAtoms"], json!([]));
    a.stop().await;
    b.stop().await;
}

/// The matcher holds each atom's patterns and reads knowledge for the atoms a call
/// matches: the answer must be the whole atoms', from a warm matcher, a cold one and
/// one patched after another server's knowledge edits, and an edit must reach search.
#[tokio::test]
async fn context_answers_whole_atoms_read_for_the_matched_ones_and_follows_edits() {
    let (_dir, a, b, project, task) = shared().await;
    let mol = b
        .ok(
            "manage_graph",
            json!({"operation":"create","entityType":"molecule","projectId":project,"name":"M",
                                   "knowledge":"molecule text","createdByTaskId":task}),
        )
        .await["molecule"]["id"]
        .clone();
    let mut ids = Vec::new();
    for i in 0..120 {
        let d = b
            .ok("manage_graph", json!({"operation":"create","entityType":"atom","projectId":project,
                                       "name":format!("A{:03}", i % 40),"moleculeId":if i % 3 == 0 { Value::Null } else { mol.clone() },
                                       "paths":json!([format!("src/m{}/**", i % 10), format!("docs/a{i}.md")]).to_string(),
                                       "knowledge":format!("[atom {i}]").repeat(200),"createdByTaskId":task}))
            .await;
        ids.push(id_of(&d["atom"]));
    }
    let paths = "src/m1/x.ts,src/m4/y.ts,docs/a7.md,docs/none.md";
    let args = json!({"operation":"context","projectId":project,"paths":paths,"maxTokens":0});
    let cold = a.ok("query_graph", args.clone()).await;
    let warm = a.ok("query_graph", args.clone()).await;
    assert_eq!(cold, warm);
    let matched = |v: &Value| {
        let mut all: Vec<Value> = v["orphanAtoms"].as_array().unwrap().clone();
        for m in v["molecules"].as_array().unwrap() {
            all.extend(m["atoms"].as_array().unwrap().iter().cloned());
        }
        all
    };
    // Every atom of src/m1, src/m4 and docs/a7.md, each with its own knowledge.
    let got = matched(&cold);
    assert_eq!(got.len(), 25, "{cold}");
    for x in &got {
        let id = x["id"].as_str().unwrap();
        let i = ids.iter().position(|y| y == id).unwrap();
        assert_eq!(x["knowledge"], json!(format!("[atom {i}]").repeat(200)));
    }
    // B rewrites the knowledge of a matched atom and of one not matched yet; A's
    // patched matcher answers the new text, as a fresh server does.
    for (i, word) in [(1, "zanzibar"), (2, "quixotic")] {
        b.ok(
            "manage_graph",
            json!({"operation":"update","entityType":"atom","id":ids[i],"version":1,
                                    "lastTaskId":task,"knowledge":format!("now {word}")}),
        )
        .await;
    }
    let wide = json!({"operation":"context","projectId":project,"paths":format!("{paths},src/m2/z.ts"),"maxTokens":0});
    let patched = a.ok("query_graph", wide.clone()).await;
    let fresh_server = Cairn::on(&a.db, &[]).await;
    assert_eq!(patched, fresh_server.ok("query_graph", wide.clone()).await);
    let by_id = |v: &Value, id: &str| {
        matched(v)
            .into_iter()
            .find(|x| x["id"] == json!(id))
            .unwrap()
    };
    assert_eq!(by_id(&patched, &ids[1])["knowledge"], json!("now zanzibar"));
    assert_eq!(by_id(&patched, &ids[2])["knowledge"], json!("now quixotic"));
    assert_eq!(by_id(&patched, &ids[1])["version"], json!(2));
    let found = a
        .ok("query_graph", json!({"operation":"search","entityType":"atom","projectId":project,"query":"zanzibar"}))
        .await;
    assert_eq!(names(&found["items"]), vec!["A001"], "{found}");
    // An edit on A itself, then the same call on A and on the fresh server.
    a.ok(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":ids[1],"version":2,
                                "lastTaskId":task,"knowledge":"then marmalade"}),
    )
    .await;
    let again = a.ok("query_graph", wide.clone()).await;
    assert_eq!(by_id(&again, &ids[1])["knowledge"], json!("then marmalade"));
    assert_eq!(again, fresh_server.ok("query_graph", wide).await);
    for c in [a, b, fresh_server] {
        c.stop().await;
    }
}
