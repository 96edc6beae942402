//! The knowledge graph through MCP: atoms and molecules with every rule of docs/graph.md,
//! the changelog, path context (snapshots of a fixture graph), the orchestrator
//! hooks, the cache across processes, and the skills served as prompts.

use serde_json::{json, Value};

use crate::harness::{id_of, Cairn, TempDir};

/// A project with one task to attribute graph writes to.
struct Fixture {
    c: Cairn,
    project: String,
    task: String,
}

impl Fixture {
    async fn new() -> Fixture {
        let c = Cairn::start().await;
        let project = c.project("Shop").await;
        let task = id_of(
            &c.task(json!({"title":"Map the code","projectId":project}))
                .await,
        );
        Fixture { c, project, task }
    }

    async fn molecule(&self, name: &str, knowledge: &str) -> Value {
        self.c
            .ok(
                "manage_graph",
                json!({"operation":"create","entityType":"molecule","projectId":self.project,"name":name,
                       "knowledge":knowledge,"createdByTaskId":self.task}),
            )
            .await["molecule"]
            .clone()
    }

    async fn atom(
        &self,
        name: &str,
        paths: &[&str],
        molecule: Option<&str>,
        knowledge: &str,
    ) -> Value {
        let mut a = json!({"operation":"create","entityType":"atom","projectId":self.project,"name":name,
                           "paths":json!(paths).to_string(),"knowledge":knowledge,"createdByTaskId":self.task});
        if let Some(m) = molecule {
            a["moleculeId"] = json!(m);
        }
        self.c.ok("manage_graph", a).await["atom"].clone()
    }

    /// The atom as `get` answers it (write answers carry no knowledge text).
    async fn get_atom(&self, id: &str) -> Value {
        self.c
            .ok(
                "query_graph",
                json!({"operation":"get","entityType":"atom","id":id}),
            )
            .await["atom"]
            .clone()
    }

    async fn context(&self, paths: &str) -> Value {
        self.c
            .ok(
                "query_graph",
                json!({"operation":"context","projectId":self.project,"paths":paths}),
            )
            .await
    }

    fn create_atom_args(&self, paths: Value) -> Value {
        json!({"operation":"create","entityType":"atom","projectId":self.project,"name":"A",
               "paths":paths,"createdByTaskId":self.task})
    }
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap().to_string())
        .collect()
}

/// The payments fixture (docs/graph.md): two molecules, overlapping atoms, an orphan.
async fn payments(f: &Fixture) -> (String, String, String, String, String) {
    let pay = id_of(
        &f.molecule(
            "Payment Domain",
            "Communicates with Stripe, idempotent webhooks",
        )
        .await,
    );
    let pages = id_of(
        &f.molecule("Pages", "Shared layout; route guards in middleware")
            .await,
    );
    let gateway = id_of(
        &f.atom(
            "Stripe Integration",
            &["src/payments/gateway/**", "src/payments/stripe-*.ts"],
            Some(&pay),
            "Gateway wraps the Stripe SDK; retries are the caller's job",
        )
        .await,
    );
    let hooks = f
        .atom(
            "Webhook Handlers",
            &["src/payments/webhook-*.ts", "src/payments/handlers/**"],
            Some(&pay),
            "8 handlers, all extend BaseWebhookHandler",
        )
        .await;
    let hooks_id = id_of(&hooks);
    f.c.ok(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":hooks_id,"version":1,"lastTaskId":f.task,
               "relatedAtoms":json!([{"atomId":gateway,"reason":"webhooks call gateway for processing"}]).to_string()}),
    )
    .await;
    let checkout = id_of(
        &f.atom(
            "Checkout Page",
            &["src/pages/checkout/**"],
            Some(&pages),
            "Uses the cart store",
        )
        .await,
    );
    let retry = id_of(
        &f.atom(
            "Retry Utilities",
            &["src/shared/retry-*.ts"],
            None,
            "Generic exponential backoff",
        )
        .await,
    );
    (pay, gateway, hooks_id, checkout, retry)
}

#[tokio::test]
async fn context_matches_globs_groups_by_molecule_and_reports_gaps() {
    let f = Fixture::new().await;
    payments(&f).await;
    let d = f
        .context(
            "src/payments/webhook-handler.ts, src/payments/stripe-gateway.ts,\nsrc/shared/retry-utils.ts, \
             src/payments/new-handler.ts, src/pages/checkout/cart/Cart.tsx, src/payments/gateway/deep/x.ts, \
             src/payments/sub/stripe-x.ts, ../outside.ts",
        )
        .await;
    insta::assert_json_snapshot!("graph_context_payments", d, {
        ".**.id" => "[id]", ".**.atomId" => "[id]", ".**.moleculeId" => "[id]", ".**.createdAt" => "[ts]",
        ".**.taskId" => "[id]"
    });
    // `*` stays inside one directory: stripe-*.ts does not reach into sub/.
    let un: Vec<&str> = d["unmatchedPaths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(un.contains(&"src/payments/sub/stripe-x.ts"));
    assert!(un.contains(&"src/payments/new-handler.ts"));
    assert!(un.contains(&"../outside.ts"));
    // `**` crosses directories.
    let pay = &d["molecules"][1];
    assert_eq!(pay["name"], json!("Payment Domain"));
    let stripe = &pay["atoms"][0];
    assert_eq!(stripe["name"], json!("Stripe Integration"));
    assert_eq!(
        stripe["matchedBy"]["src/payments/gateway/deep/x.ts"],
        json!(["src/payments/gateway/**"])
    );
    assert_eq!(
        pay["atoms"][1]["relatedAtoms"][0]["name"],
        json!("Stripe Integration")
    );
    assert_eq!(names(&d["orphanAtoms"]), vec!["Retry Utilities"]);
    f.c.stop().await;
}

#[tokio::test]
async fn a_file_matching_several_atoms_surfaces_all_of_them() {
    let f = Fixture::new().await;
    let m = id_of(&f.molecule("Shared", "").await);
    f.atom(
        "Auth",
        &["src/shared/email-client.ts", "src/auth/**"],
        Some(&m),
        "auth",
    )
    .await;
    f.atom("Payments", &["src/shared/*.ts"], Some(&m), "payments")
        .await;
    f.atom("Everything TS", &["**/*.ts"], None, "lint rules")
        .await;
    let d = f.context("src/shared/email-client.ts").await;
    assert_eq!(names(&d["molecules"][0]["atoms"]), vec!["Auth", "Payments"]);
    assert_eq!(names(&d["orphanAtoms"]), vec!["Everything TS"]);
    assert_eq!(d["unmatchedPaths"], json!([]));
    f.c.stop().await;
}

#[tokio::test]
async fn max_tokens_keeps_the_most_specific_atoms_and_says_what_it_left_out() {
    let f = Fixture::new().await;
    let m = id_of(&f.molecule("Area", &"molecule knowledge ".repeat(200)).await);
    let big = "x".repeat(4000);
    f.atom("Broad", &["src/**"], Some(&m), &big).await;
    f.atom("Narrow", &["src/a/b/**"], Some(&m), &big).await;
    f.atom("Middle", &["src/a/*.ts", "src/a/b/*.ts"], Some(&m), &big)
        .await;
    let full = f
        .c
        .ok(
            "query_graph",
            json!({"operation":"context","projectId":f.project,"paths":"src/a/b/c.ts","maxTokens":0}),
        )
        .await;
    assert_eq!(
        names(&full["molecules"][0]["atoms"]),
        vec!["Broad", "Middle", "Narrow"]
    );
    assert!(
        full.get("budget").is_none(),
        "maxTokens 0 asks for everything"
    );
    // Without maxTokens a default budget applies.
    let default = f.context("src/a/b/c.ts").await;
    assert_eq!(default["budget"]["maxTokens"], json!(4000), "{default}");
    let env = f
        .c
        .call(
            "query_graph",
            json!({"operation":"context","projectId":f.project,"paths":"src/a/b/c.ts","maxTokens":2600}),
        )
        .await;
    let d = &env["data"];
    // Specificity: Narrow 3 (src/a/b), Middle 3 (src/a/b/*.ts), Broad 1. Two fit.
    assert_eq!(names(&d["molecules"][0]["atoms"]), vec!["Middle", "Narrow"]);
    let b = &d["budget"];
    assert_eq!(names(&b["omittedAtoms"]), vec!["Broad"]);
    assert_eq!(b["omittedAtoms"][0]["specificity"], json!(1));
    assert_eq!(names(&b["omittedMoleculeKnowledge"]), vec!["Area"]);
    assert_eq!(d["molecules"][0]["knowledgeOmitted"], json!(true));
    assert_eq!(b["omittedCount"]["omittedAtoms"], json!(1));
    // The budget bounds the answer as served (characters / 4), and the estimate is
    // that size.
    let served = env.to_string().chars().count().div_ceil(4);
    assert!(served <= 2600, "answer is {served} tokens");
    assert_eq!(b["estimatedTokens"], json!(served));
    f.c.stop().await;
}

#[tokio::test]
async fn near_misses_show_the_pattern_that_almost_matched() {
    let f = Fixture::new().await;
    f.atom("Checkout", &["src/pages/checkout/*.tsx"], None, "")
        .await;
    let d = f.context("src/pages/checkout/hooks/useCart.ts").await;
    assert_eq!(
        d["unmatchedPaths"],
        json!(["src/pages/checkout/hooks/useCart.ts"])
    );
    assert_eq!(
        d["nearMisses"]["src/pages/checkout/hooks/useCart.ts"][0]["pattern"],
        json!("src/pages/checkout/*.tsx")
    );
    f.c.stop().await;
}

#[tokio::test]
async fn malformed_and_unsafe_patterns_are_refused_with_the_reason() {
    let f = Fixture::new().await;
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!("[\"src/**.rs\"]"),
            "VALIDATION_ERROR",
            "whole segment",
        ),
        (json!("[\"a**b\"]"), "VALIDATION_ERROR", "whole segment"),
        (json!("[\"/etc/**\"]"), "VALIDATION_ERROR", "absolute"),
        (json!("[\"../outside/**\"]"), "VALIDATION_ERROR", ".."),
        (json!("[\"src/../../x\"]"), "VALIDATION_ERROR", ".."),
        (json!("[\"src/[ab\"]"), "VALIDATION_ERROR", "unclosed"),
        (json!("[\"src/{a,b\"]"), "VALIDATION_ERROR", "unclosed"),
        (json!("[\"\"]"), "VALIDATION_ERROR", "empty"),
        (
            json!(format!("[\"{}\"]", "a".repeat(513))),
            "VALIDATION_ERROR",
            "512",
        ),
        (
            json!(json!((0..21).map(|i| format!("src/{i}/**")).collect::<Vec<_>>()).to_string()),
            "VALIDATION_ERROR",
            "at most 20",
        ),
        (json!("src/**"), "VALIDATION_ERROR", "JSON array"),
        (json!("[1, 2]"), "VALIDATION_ERROR", "not a string"),
        (json!("[]"), "INVARIANT_VIOLATION", "at least one path"),
    ];
    for (paths, code, words) in cases {
        let e =
            f.c.err("manage_graph", f.create_atom_args(paths.clone()), code)
                .await;
        let msg = e["message"].as_str().unwrap();
        assert!(msg.contains(words), "{paths}: '{msg}' should say '{words}'");
    }
    let mut no_paths = f.create_atom_args(json!("[]"));
    no_paths.as_object_mut().unwrap().remove("paths");
    f.c.err("manage_graph", no_paths, "VALIDATION_ERROR").await;
    // Nothing was written by any refused call.
    let s =
        f.c.ok(
            "query_graph",
            json!({"operation":"search","entityType":"atom","projectId":f.project}),
        )
        .await;
    assert_eq!(s["total"], json!(0));
    f.c.stop().await;
}

#[tokio::test]
async fn text_bounds_names_related_lists_and_tasks_are_checked() {
    let f = Fixture::new().await;
    let ok = |extra: Value| {
        let mut a = f.create_atom_args(json!("[\"src/**\"]"));
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    };
    f.c.err("manage_graph", ok(json!({"name":""})), "VALIDATION_ERROR")
        .await;
    f.c.err(
        "manage_graph",
        ok(json!({"name":"n".repeat(256)})),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.err(
        "manage_graph",
        ok(json!({"knowledge":"k".repeat(32 * 1024 + 1)})),
        "VALIDATION_ERROR",
    )
    .await;
    // Knowledge is trimmed and 32 KB fits.
    let a =
        f.c.ok(
            "manage_graph",
            ok(json!({"knowledge":format!("  {}  ", "k".repeat(32 * 1024 - 4))})),
        )
        .await;
    // The answer gives the stored size, not the text back.
    assert_eq!(a["atom"]["knowledgeBytes"], json!(32 * 1024 - 4));
    assert!(a["atom"].get("knowledge").is_none(), "{a}");
    let first = id_of(&a["atom"]);
    assert_eq!(
        f.get_atom(&first).await["knowledge"]
            .as_str()
            .unwrap()
            .len(),
        32 * 1024 - 4
    );
    f.c.err(
        "manage_graph",
        ok(json!({"relatedAtoms":"not json"})),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.err(
        "manage_graph",
        ok(json!({"relatedAtoms":"{\"atomId\":\"x\"}"})),
        "VALIDATION_ERROR",
    )
    .await;
    let many: Vec<Value> = (0..51).map(|_| json!({"atomId": first})).collect();
    f.c.err(
        "manage_graph",
        ok(json!({"relatedAtoms": json!(many).to_string()})),
        "VALIDATION_ERROR",
    )
    .await;
    let ghost = "0192f000-0000-7000-8000-00000000dead";
    f.c.err(
        "manage_graph",
        ok(json!({"relatedAtoms": json!([{"atomId":ghost}]).to_string()})),
        "NOT_FOUND",
    )
    .await;
    f.c.err(
        "manage_graph",
        ok(json!({"createdByTaskId": ghost})),
        "NOT_FOUND",
    )
    .await;
    f.c.err(
        "manage_graph",
        ok(json!({"moleculeId": ghost})),
        "NOT_FOUND",
    )
    .await;
    f.c.err("manage_graph", ok(json!({"projectId": ghost})), "NOT_FOUND")
        .await;
    let mut no_task = ok(json!({}));
    no_task.as_object_mut().unwrap().remove("createdByTaskId");
    f.c.err("manage_graph", no_task, "VALIDATION_ERROR").await;
    // Related ids given as an array value work too, and resolve to names on get.
    let b =
        f.c.ok(
            "manage_graph",
            ok(json!({"name":"B","relatedAtoms":[{"atomId":first,"reason":"uses"}]})),
        )
        .await;
    let g =
        f.c.ok(
            "query_graph",
            json!({"operation":"get","entityType":"atom","id":id_of(&b["atom"])}),
        )
        .await;
    assert_eq!(g["atom"]["relatedAtoms"][0]["name"], json!("A"));
    // A self-reference is refused.
    let bid = id_of(&b["atom"]);
    f.c.err(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":bid,"version":1,"lastTaskId":f.task,
               "relatedAtoms":json!([{"atomId":bid}]).to_string()}),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.stop().await;
}

#[tokio::test]
async fn cross_project_membership_is_an_invariant_violation() {
    let f = Fixture::new().await;
    let other = f.c.project("Other").await;
    let other_task = id_of(&f.c.task(json!({"title":"t","projectId":other})).await);
    let foreign_mol =
        f.c.ok(
            "manage_graph",
            json!({"operation":"create","entityType":"molecule","projectId":other,"name":"M",
                                   "createdByTaskId":other_task}),
        )
        .await["molecule"]
            .clone();
    let foreign_atom =
        f.c.ok(
            "manage_graph",
            json!({"operation":"create","entityType":"atom","projectId":other,"name":"X",
                                   "paths":"[\"x/**\"]","createdByTaskId":other_task}),
        )
        .await["atom"]
            .clone();
    let mut a = f.create_atom_args(json!("[\"src/**\"]"));
    a["moleculeId"] = json!(id_of(&foreign_mol));
    let e = f.c.err("manage_graph", a, "INVARIANT_VIOLATION").await;
    assert!(e["message"].as_str().unwrap().contains("share a project"));
    let mut a = f.create_atom_args(json!("[\"src/**\"]"));
    a["relatedAtoms"] = json!(json!([{"atomId": id_of(&foreign_atom), "reason": "r"}]).to_string());
    f.c.err("manage_graph", a, "INVARIANT_VIOLATION").await;
    let m = f.molecule("Mine", "").await;
    f.c.err(
        "manage_graph",
        json!({"operation":"update","entityType":"molecule","id":id_of(&m),"version":1,"lastTaskId":f.task,
               "relatedMolecules":json!([{"moleculeId":id_of(&foreign_mol)}]).to_string()}),
        "INVARIANT_VIOLATION",
    )
    .await;
    f.c.stop().await;
}

#[tokio::test]
async fn updates_and_deletes_need_the_version_and_conflict_with_the_current_one() {
    let f = Fixture::new().await;
    let a = f.atom("A", &["src/a/**"], None, "first").await;
    let id = id_of(&a);
    let up = |v: Option<i64>| {
        let mut x = json!({"operation":"update","entityType":"atom","id":id,"lastTaskId":f.task,"knowledge":"second"});
        if let Some(v) = v {
            x["version"] = json!(v);
        }
        x
    };
    let e = f.c.err("manage_graph", up(None), "VALIDATION_ERROR").await;
    assert_eq!(e["details"]["parameter"], json!("version"));
    let u = f.c.ok("manage_graph", up(Some(1))).await;
    assert_eq!(u["atom"]["version"], json!(2));
    assert_eq!(u["atom"]["knowledgeBytes"], json!(6));
    assert_eq!(f.get_atom(&id).await["knowledge"], json!("second"));
    let e = f.c.err("manage_graph", up(Some(1)), "CONFLICT").await;
    assert_eq!(e["details"]["currentVersion"], json!(2));
    assert_eq!(e["details"]["sentVersion"], json!(1));
    // update needs lastTaskId, and must change something.
    f.c.err(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":id,"version":2,"knowledge":"x"}),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.err(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":id,"version":2,"lastTaskId":f.task}),
        "VALIDATION_ERROR",
    )
    .await;
    // delete needs the version too.
    f.c.err(
        "manage_graph",
        json!({"operation":"delete","entityType":"atom","id":id}),
        "VALIDATION_ERROR",
    )
    .await;
    let e =
        f.c.err(
            "manage_graph",
            json!({"operation":"delete","entityType":"atom","id":id,"version":1}),
            "CONFLICT",
        )
        .await;
    assert_eq!(e["details"]["currentVersion"], json!(2));
    f.c.ok(
        "manage_graph",
        json!({"operation":"delete","entityType":"atom","id":id,"version":2}),
    )
    .await;
    f.c.err(
        "query_graph",
        json!({"operation":"get","entityType":"atom","id":id}),
        "NOT_FOUND",
    )
    .await;
    f.c.err(
        "manage_graph",
        json!({"operation":"delete","entityType":"atom","id":id,"version":2}),
        "NOT_FOUND",
    )
    .await;
    f.c.stop().await;
}

#[tokio::test]
async fn append_writes_a_dated_separator_naming_the_task() {
    let f = Fixture::new().await;
    let a = f.atom("A", &["src/a/**"], None, "Base knowledge.").await;
    let u = f
        .c
        .ok(
            "manage_graph",
            json!({"operation":"update","entityType":"atom","id":id_of(&a),"version":1,"lastTaskId":f.task,
                   "knowledge":"Handlers are idempotent.","knowledgeMode":"append"}),
        )
        .await;
    let stored = f.get_atom(&id_of(&a)).await;
    let k = stored["knowledge"].as_str().unwrap();
    assert_eq!(u["atom"]["knowledgeBytes"], json!(k.len()));
    let (head, tail) = k.split_once("\n\n---[").expect("separator");
    assert_eq!(head, "Base knowledge.");
    let (stamp, rest) = tail.split_once(" task:").unwrap();
    assert!(stamp.ends_with('Z') && stamp.contains('T'), "{stamp}");
    assert_eq!(rest, format!("{}]---\nHandlers are idempotent.", f.task));
    assert_eq!(u["atom"]["lastTaskId"], json!(f.task));
    // Append past 32 KB is refused, overwrite still works.
    f.c.err(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":id_of(&a),"version":2,"lastTaskId":f.task,
               "knowledge":"k".repeat(32 * 1024 - 10),"knowledgeMode":"append"}),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.stop().await;
}

#[tokio::test]
async fn deleting_a_molecule_orphans_or_cascades_its_atoms() {
    let f = Fixture::new().await;
    let later = id_of(
        &f.c.task(json!({"title":"Reorganise","projectId":f.project}))
            .await,
    );
    let m = id_of(&f.molecule("M", "").await);
    let a = id_of(&f.atom("A", &["a/**"], Some(&m), "").await);
    let b = id_of(&f.atom("B", &["b/**"], Some(&m), "").await);
    for (kind, id) in [("molecule", &m), ("atom", &a)] {
        f.c.ok("manage_changelog", json!({"operation":"append","parentType":kind,"parentId":id,"taskId":f.task,"summary":"made"})).await;
    }
    let d = f
        .c
        .ok("manage_graph", json!({"operation":"delete","entityType":"molecule","id":m,"version":1,"lastTaskId":later}))
        .await;
    assert_eq!(d["orphanedAtoms"], json!([a, b]));
    let ga =
        f.c.ok(
            "query_graph",
            json!({"operation":"get","entityType":"atom","id":a}),
        )
        .await;
    assert_eq!(ga["atom"]["moleculeId"], json!(null));
    assert_eq!(ga["atom"]["lastTaskId"], json!(later));
    assert_eq!(
        ga["atom"]["version"],
        json!(2),
        "orphaning touches the atom"
    );
    assert_eq!(
        ga["atom"]["changelog"].as_array().unwrap().len(),
        1,
        "the atom keeps its history"
    );
    f.c.err(
        "manage_changelog",
        json!({"operation":"search","parentType":"molecule","parentId":m}),
        "NOT_FOUND",
    )
    .await;
    let orphans = f
        .c
        .ok("query_graph", json!({"operation":"search","entityType":"atom","projectId":f.project,"orphansOnly":true}))
        .await;
    assert_eq!(orphans["total"], json!(2));

    let m2 = id_of(&f.molecule("M2", "").await);
    let c2 = id_of(&f.atom("C", &["c/**"], Some(&m2), "").await);
    f.c.ok("manage_changelog", json!({"operation":"append","parentType":"atom","parentId":c2,"taskId":f.task,"summary":"made"})).await;
    let d = f
        .c
        .ok("manage_graph", json!({"operation":"delete","entityType":"molecule","id":m2,"version":1,"cascade":true}))
        .await;
    assert_eq!(d["deletedAtoms"], json!([c2]));
    f.c.err(
        "query_graph",
        json!({"operation":"get","entityType":"atom","id":c2}),
        "NOT_FOUND",
    )
    .await;
    f.c.err(
        "manage_changelog",
        json!({"operation":"search","parentType":"atom","parentId":c2}),
        "NOT_FOUND",
    )
    .await;
    f.c.stop().await;
}

#[tokio::test]
async fn reassigning_and_detaching_an_atoms_molecule() {
    let f = Fixture::new().await;
    let m1 = id_of(&f.molecule("One", "").await);
    let m2 = id_of(&f.molecule("Two", "").await);
    let a = id_of(&f.atom("A", &["a/**"], Some(&m1), "").await);
    let u = f
        .c
        .ok("manage_graph", json!({"operation":"update","entityType":"atom","id":a,"version":1,"lastTaskId":f.task,"moleculeId":m2}))
        .await;
    assert_eq!(u["atom"]["moleculeId"], json!(m2));
    let g =
        f.c.ok(
            "query_graph",
            json!({"operation":"get","entityType":"molecule","id":m2}),
        )
        .await;
    assert_eq!(names(&g["molecule"]["atoms"]), vec!["A"]);
    let u = f
        .c
        .ok("manage_graph", json!({"operation":"update","entityType":"atom","id":a,"version":2,"lastTaskId":f.task,"moleculeId":""}))
        .await;
    assert_eq!(u["atom"]["moleculeId"], json!(null));
    f.c.err("manage_graph", json!({"operation":"update","entityType":"molecule","id":m1,"version":1,"lastTaskId":f.task,"paths":"[\"x\"]"}), "VALIDATION_ERROR").await;
    f.c.stop().await;
}

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

#[tokio::test]
async fn deleting_a_project_removes_its_graph() {
    let f = Fixture::new().await;
    let (pay, gateway, ..) = payments(&f).await;
    f.c.ok("manage_changelog", json!({"operation":"append","parentType":"atom","parentId":gateway,"taskId":f.task,"summary":"x"})).await;
    let v = f.c.version("project", &f.project).await;
    f.c.ok("manage_container", json!({"operation":"delete","containerType":"project","id":f.project,"version":v,"cascade":true}))
        .await;
    f.c.err(
        "query_graph",
        json!({"operation":"get","entityType":"molecule","id":pay}),
        "NOT_FOUND",
    )
    .await;
    f.c.err(
        "query_graph",
        json!({"operation":"get","entityType":"atom","id":gateway}),
        "NOT_FOUND",
    )
    .await;
    f.c.err(
        "query_graph",
        json!({"operation":"context","projectId":f.project,"paths":"src/a.ts"}),
        "NOT_FOUND",
    )
    .await;
    // No graph row survives its project, the changelog included.
    let mut conn = crate::harness::sql(&f.c.db).await;
    for t in [
        "graph_changelog",
        "graph_atoms",
        "graph_molecules",
        "graph_generations",
        "graph_tombstones",
    ] {
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {t}")))
            .fetch_one(&mut conn)
            .await
            .unwrap();
        assert_eq!(n, 0, "{t} keeps {n} row(s)");
    }
    f.c.stop().await;
}

/// Two servers, A and B, on one database file (which lives as long as the first
/// value), and a project with a task that A created.
async fn shared() -> (TempDir, Cairn, Cairn, String, String) {
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

#[tokio::test]
async fn whole_agent_loop_from_planning_to_graph_hints() {
    let c = Cairn::start().await;
    let project = c.project("Shop").await;
    let feature = c.feature(&project, "Refunds").await;
    let task = c
        .task(json!({"title":"Refund webhook","featureId":feature}))
        .await;
    let task_id = id_of(&task);
    // The built-in template gives the task a Context Files section.
    c.ok("apply_template", json!({"templateId":"0192f000-0000-7000-8000-000000000001","entityType":"TASK","entityId":task_id}))
        .await;
    let secs = c
        .ok(
            "query_sections",
            json!({"entityType":"TASK","entityId":task_id}),
        )
        .await;
    let files = secs["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"] == json!("Context Files"))
        .expect("Context Files section")
        .clone();
    c.ok(
        "manage_sections",
        json!({"operation":"updateText","sectionId":id_of(&files),"version":files["version"],
               "content":"- `src/payments/webhook-refund.ts` (new handler)\nsrc/payments/stripe-gateway.ts:120, docs/refunds.md\n# not a path"}),
    )
    .await;
    let m = c
        .ok("manage_graph", json!({"operation":"create","entityType":"molecule","projectId":project,"name":"Payments",
                                   "knowledge":"Stripe is the only gateway","createdByTaskId":task_id}))
        .await["molecule"]
        .clone();
    let atom = c
        .ok("manage_graph", json!({"operation":"create","entityType":"atom","projectId":project,"name":"Webhooks",
                                   "moleculeId":id_of(&m),"paths":"[\"src/payments/webhook-*.ts\",\"src/payments/stripe-*.ts\"]",
                                   "knowledge":"Handlers are idempotent","createdByTaskId":task_id}))
        .await["atom"]
        .clone();
    // Discovery: the task with its graph context.
    let g = c
        .ok("query_container", json!({"operation":"get","containerType":"task","id":task_id,"includeSections":true,"includeGraphContext":true}))
        .await;
    let gc = &g["graphContext"];
    assert_eq!(
        gc["paths"],
        json!([
            "src/payments/webhook-refund.ts",
            "src/payments/stripe-gateway.ts",
            "docs/refunds.md"
        ])
    );
    assert_eq!(gc["molecules"][0]["name"], json!("Payments"));
    assert_eq!(
        gc["molecules"][0]["atoms"][0]["matchedPaths"],
        json!([
            "src/payments/webhook-refund.ts",
            "src/payments/stripe-gateway.ts"
        ])
    );
    assert_eq!(gc["unmatchedPaths"], json!(["docs/refunds.md"]));
    // Its budget: the default 4,000 tokens holds this, one token leaves the atom out
    // and says so, 0 asks for everything; alone, maxTokens is refused.
    assert_eq!(gc["budget"]["maxTokens"], json!(4000), "{gc:#}");
    let tight = c
        .ok("query_container", json!({"operation":"get","containerType":"task","id":task_id,"includeGraphContext":true,"maxTokens":1}))
        .await;
    let omitted = &tight["graphContext"]["budget"]["omittedAtoms"];
    assert_eq!(omitted[0]["name"], json!("Webhooks"), "{tight:#}");
    let all = c
        .ok("query_container", json!({"operation":"get","containerType":"task","id":task_id,"includeGraphContext":true,"maxTokens":0}))
        .await;
    assert!(
        all["graphContext"].get("budget").is_none_or(Value::is_null),
        "{all:#}"
    );
    assert_eq!(
        all["graphContext"]["molecules"][0]["atoms"][0]["name"],
        json!("Webhooks")
    );
    c.err(
        "query_container",
        json!({"operation":"get","containerType":"task","id":task_id,"maxTokens":100}),
        "VALIDATION_ERROR",
    )
    .await;
    // Without the flag there is no graph context; on a feature the flag is refused.
    let plain = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":task_id}),
        )
        .await;
    assert!(plain.get("graphContext").is_none());
    c.err("query_container", json!({"operation":"get","containerType":"feature","id":feature,"includeGraphContext":true}), "VALIDATION_ERROR").await;
    // Execution: work, then advance to CLOSED and receive the hints.
    let started = c.advance("task", &task_id).await;
    assert!(
        started.get("graphHints").is_none(),
        "no hints before a terminal state"
    );
    let done = c.advance("task", &task_id).await;
    assert_eq!(done["newStatus"], json!("CLOSED"));
    let h = &done["graphHints"];
    assert_eq!(
        h["message"],
        json!("Task completed. Consider updating the knowledge graph.")
    );
    assert_eq!(h["suggestedActions"].as_array().unwrap().len(), 4);
    assert_eq!(h["matchedAtoms"][0]["id"], json!(id_of(&atom)));
    assert_eq!(h["unmatchedPaths"], json!(["docs/refunds.md"]));
    // Update the graph, append a changelog entry, and see it inline on the next get.
    c.ok("manage_changelog", json!({"operation":"append","parentType":"atom","parentId":id_of(&atom),"taskId":task_id,
                                    "summary":"Refund webhook added; refunds are idempotent by refund id"}))
        .await;
    let a = c
        .ok(
            "query_graph",
            json!({"operation":"get","entityType":"atom","id":id_of(&atom)}),
        )
        .await;
    assert_eq!(
        a["atom"]["changelog"][0]["summary"],
        json!("Refund webhook added; refunds are idempotent by refund id")
    );
    assert_eq!(a["atom"]["changelog"][0]["taskId"], json!(task_id));
    c.stop().await;
}

#[tokio::test]
async fn terminated_tasks_get_no_graph_hints_and_tasks_without_context_files_say_so() {
    let f = Fixture::new().await;
    let g = f
        .c
        .ok("query_container", json!({"operation":"get","containerType":"task","id":f.task,"includeGraphContext":true}))
        .await;
    assert!(g["graphContext"]["note"]
        .as_str()
        .unwrap()
        .contains("Context Files"));
    let v = f.c.version("task", &f.task).await;
    let t =
        f.c.ok(
            "terminate",
            json!({"containerType":"task","id":f.task,"version":v,"reason":"dropped"}),
        )
        .await;
    assert!(t.get("graphHints").is_none());
    // A task closed without a Context Files section still gets the port's hint.
    let t2 = id_of(&f.c.task(json!({"title":"two","projectId":f.project})).await);
    f.c.advance("task", &t2).await;
    let d = f.c.advance("task", &t2).await;
    assert!(d["graphHints"]["suggestedActions"].is_array());
    f.c.stop().await;
}

#[tokio::test]
async fn graph_hints_are_absent_when_the_graph_toolset_is_not_served() {
    let dir = TempDir::new();
    let c = Cairn::on(&dir.path().join("t.db"), &["--toolsets", "tasks"]).await;
    let t = id_of(&c.task(json!({"title":"t"})).await);
    c.advance("task", &t).await;
    let d = c.advance("task", &t).await;
    assert!(d.get("graphHints").is_none());
    c.stop().await;
}

#[tokio::test]
async fn context_rejects_bad_requests_clearly() {
    let f = Fixture::new().await;
    f.c.err(
        "query_graph",
        json!({"operation":"context","paths":"a.ts"}),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.err(
        "query_graph",
        json!({"operation":"context","projectId":f.project}),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.err(
        "query_graph",
        json!({"operation":"context","projectId":f.project,"paths":" , "}),
        "VALIDATION_ERROR",
    )
    .await;
    let many: Vec<String> = (0..501).map(|i| format!("src/{i}.ts")).collect();
    f.c.err(
        "query_graph",
        json!({"operation":"context","projectId":f.project,"paths":many.join(",")}),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.err(
        "query_graph",
        json!({"operation":"context","projectId":f.project,"paths":"a.ts","query":"x"}),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.err(
        "query_graph",
        json!({"operation":"get","entityType":"atom"}),
        "VALIDATION_ERROR",
    )
    .await;
    f.c.err(
        "query_graph",
        json!({"operation":"get","entityType":"atom","id":"0192f000-0000-7000-8000-00000000dead"}),
        "NOT_FOUND",
    )
    .await;
    f.c.stop().await;
}

/// Whether `v` is of the JSON type `spec` (a property's schema) declares.
fn fits_schema(spec: &Value, v: &Value) -> bool {
    if let Some(alts) = spec["anyOf"].as_array() {
        return alts.iter().any(|a| fits_schema(a, v));
    }
    match spec["type"].as_str() {
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("array") => v
            .as_array()
            .is_some_and(|a| a.iter().all(|x| fits_schema(&spec["items"], x))),
        Some("object") => v.is_object(),
        _ => true,
    }
}

/// A skill's examples run as they are written, with every `…` standing for an id
/// that does not exist: Cairn's own argument checks (command objects included) must
/// accept them, so the only failure allowed is `NOT_FOUND`.
const PLACEHOLDER: &str = "0192f000-0000-7000-8000-00000000e0e0";

#[tokio::test]
async fn skills_are_served_as_prompts_and_name_real_tools_and_parameters() {
    let c = Cairn::start().await;
    let prompts = c.client.list_all_prompts().await.expect("prompts/list");
    let mut names: Vec<String> = prompts.iter().map(|p| p.name.clone()).collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "cairn-curator",
            "cairn-discovery",
            "cairn-execution",
            "cairn-planning",
            "cairn-reflection"
        ]
    );
    // Each step's part of the code toolset, taught with an example.
    let code_tools = [
        (
            "cairn-discovery",
            &["project_overview", "search", "query"][..],
        ),
        ("cairn-planning", &["create_entity"][..]),
        (
            "cairn-execution",
            &[
                "get_changed_files",
                "analyze_document",
                "alter_references",
                "update_entity",
            ][..],
        ),
        // And each step's part of the ontology toolset.
        (
            "cairn-discovery",
            &["ontology_discover", "ontology_read", "ontology_query"][..],
        ),
        (
            "cairn-planning",
            &["ontology_validate", "ontology_propose"][..],
        ),
        (
            "cairn-execution",
            &["ontology_propose", "manage_ontology"][..],
        ),
    ];
    // Each step's part of the memory toolset, likewise.
    let memory_tools = [
        ("cairn-discovery", &["query_memory"][..]),
        ("cairn-planning", &["query_memory", "manage_memory"][..]),
        ("cairn-execution", &["manage_memory", "manage_diary"][..]),
        (
            "cairn-curator",
            &[
                "curate_memory",
                "manage_memory",
                "manage_subject",
                "manage_diary",
            ][..],
        ),
    ];
    let tools = c.tools().await;
    // The reflection prompt is rendered from the diary, not a skill (tests/it/memory.rs).
    for p in prompts.iter().filter(|p| p.name != "cairn-reflection") {
        let r = c
            .client
            .get_prompt(rmcp::model::GetPromptRequestParams::new(p.name.clone()))
            .await
            .expect("prompts/get");
        let text = serde_json::to_value(&r.messages[0]).unwrap()["content"]["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(text.len() > 500, "{} is a real skill", p.name);
        // Every `tool` `{json}` example names a served tool, its parameters with their
        // types and enums, and the parameters it requires.
        let mut examples: Vec<(String, Value)> = Vec::new();
        for (i, _) in text.match_indices("` `{") {
            let before = &text[..i];
            let tool = &before[before.rfind('`').unwrap() + 1..];
            let json_start = i + 3;
            let end = text[json_start..].find("}`").expect("closing") + json_start + 1;
            let raw = text[json_start..end]
                .replace('…', PLACEHOLDER)
                .replace("\n", " ");
            let args: Value =
                serde_json::from_str(&raw).unwrap_or_else(|e| panic!("{}: {raw}: {e}", p.name));
            let t = tools
                .iter()
                .find(|t| t.name == tool)
                .unwrap_or_else(|| panic!("{}: no tool {tool}", p.name));
            let schema = serde_json::to_value(t.input_schema.as_ref()).unwrap();
            for (k, v) in args.as_object().unwrap() {
                let spec = &schema["properties"][k];
                assert!(spec.is_object(), "{}: {tool} has no parameter {k}", p.name);
                if let Some(e) = spec["enum"].as_array() {
                    assert!(
                        e.contains(v),
                        "{}: {tool}.{k} = {v} is not an enum value",
                        p.name
                    );
                }
                assert!(
                    fits_schema(spec, v),
                    "{}: {tool}.{k} = {v} is not a {spec}",
                    p.name
                );
            }
            for k in schema["required"].as_array().into_iter().flatten() {
                let k = k.as_str().unwrap();
                assert!(
                    args.get(k).is_some(),
                    "{}: {tool} lacks required {k}",
                    p.name
                );
            }
            examples.push((tool.to_string(), args));
        }
        assert!(
            examples.len() >= 3,
            "{}: only {} examples",
            p.name,
            examples.len()
        );
        for (skill, wanted) in code_tools.iter().chain(memory_tools.iter()) {
            if p.name == *skill {
                for w in *wanted {
                    assert!(
                        examples.iter().any(|(t, _)| t == w),
                        "{skill} has no example of {w}"
                    );
                }
            }
        }
        for (tool, args) in examples {
            let env = c.call(&tool, args.clone()).await;
            assert!(
                env["success"] == json!(true) || env["error"]["code"] == json!("NOT_FOUND"),
                "{}: {tool} {args} is refused: {env:#}",
                p.name
            );
        }
    }
    let bad = c
        .client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("nope"))
        .await;
    assert!(bad.is_err());
    c.stop().await;
}

#[tokio::test]
async fn tasks_and_graph_tool_definitions_fit_the_token_budget() {
    let dir = TempDir::new();
    let c = Cairn::on(&dir.path().join("t.db"), &["--toolsets", "tasks,graph"]).await;
    let tools: Vec<Value> = c
        .tools()
        .await
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    let n = tools.len();
    let chars = serde_json::to_string(&tools).unwrap().len();
    // The port's tools/list for the same 26 tools is 22,931 characters.
    assert_eq!(n, 26);
    assert!(
        chars <= 20_000,
        "tools/list is {chars} characters for {n} tools"
    );
    c.stop().await;
}

#[tokio::test]
async fn a_patched_matcher_answers_like_a_freshly_built_one() {
    let (_dir, a, b, project, task) = shared().await;
    let paths: Vec<String> = (0..30)
        .map(|i| format!("src/m{}/f{}.ts", i % 6, i))
        .chain((0..6).map(|i| format!("docs/m{i}.md")))
        .collect();
    let args = json!({"operation":"context","projectId":project,"paths":paths.join(",")});
    let mol = b
        .ok("manage_graph", json!({"operation":"create","entityType":"molecule","projectId":project,"name":"M","createdByTaskId":task}))
        .await["molecule"]["id"]
        .clone();
    let mut atoms: Vec<(String, i64)> = Vec::new();
    // Rounds of creates, pattern changes, molecule moves and deletes by B, each
    // followed by a context call on A, which patches its cached matcher.
    for round in 0..6 {
        for k in 0..5 {
            let i = round * 5 + k;
            let d = b
                .ok("manage_graph", json!({"operation":"create","entityType":"atom","projectId":project,"name":format!("A{i:02}"),
                                           "paths":json!([format!("src/m{}/**", i % 6), format!("docs/m{}.md", i % 4)]).to_string(),
                                           "createdByTaskId":task}))
                .await;
            atoms.push((id_of(&d["atom"]), 1));
        }
        a.ok("query_graph", args.clone()).await;
        let (id, v) = atoms[round * 3].clone();
        let d = b
            .ok("manage_graph", json!({"operation":"update","entityType":"atom","id":id,"version":v,"lastTaskId":task,
                                       "paths":json!([format!("src/m{}/f1*.ts", round % 6)]).to_string(),"moleculeId":mol}))
            .await;
        atoms[round * 3].1 = d["atom"]["version"].as_i64().unwrap();
        let (id, v) = atoms.remove(round * 3 + 1);
        b.ok(
            "manage_graph",
            json!({"operation":"delete","entityType":"atom","id":id,"version":v}),
        )
        .await;
        a.ok("query_graph", args.clone()).await;
    }
    let patched = a.ok("query_graph", args.clone()).await;
    let fresh_server = Cairn::on(&a.db, &[]).await;
    let fresh = fresh_server.ok("query_graph", args.clone()).await;
    assert_eq!(patched, fresh);
    assert!(!patched["molecules"][0]["atoms"]
        .as_array()
        .unwrap()
        .is_empty());
    for c in [a, b, fresh_server] {
        c.stop().await;
    }
}

#[tokio::test]
async fn related_molecules_resolve_to_names_in_get_and_context() {
    let f = Fixture::new().await;
    let api = id_of(&f.molecule("API Layer", "REST endpoints").await);
    let pages = id_of(&f.molecule("Pages", "").await);
    f.c.ok(
        "manage_graph",
        json!({"operation":"update","entityType":"molecule","id":pages,"version":1,"lastTaskId":f.task,
               "relatedMolecules":[{"moleculeId":api,"reason":"pages consume API endpoints"}]}),
    )
    .await;
    f.atom("Checkout", &["src/pages/checkout/**"], Some(&pages), "")
        .await;
    let g =
        f.c.ok(
            "query_graph",
            json!({"operation":"get","entityType":"molecule","id":pages}),
        )
        .await;
    assert_eq!(
        g["molecule"]["relatedMolecules"],
        json!([{"moleculeId":api,"name":"API Layer","reason":"pages consume API endpoints"}])
    );
    let d = f.context("src/pages/checkout/index.tsx").await;
    assert_eq!(
        d["molecules"][0]["relatedMolecules"][0]["name"],
        json!("API Layer")
    );
    // A link to a molecule deleted since reads as missing rather than vanishing.
    f.c.ok(
        "manage_graph",
        json!({"operation":"delete","entityType":"molecule","id":api,"version":1}),
    )
    .await;
    let d = f.context("src/pages/checkout/index.tsx").await;
    assert_eq!(
        d["molecules"][0]["relatedMolecules"][0]["missing"],
        json!(true)
    );
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

/// Agents work with absolute paths: inside the project's repository they are made
/// relative, anywhere else they are refused with the reason; a Context Files section
/// names bare files (`Makefile`) as well as paths.
#[tokio::test]
async fn absolute_paths_are_placed_in_the_repository_or_refused() {
    let f = Fixture::new().await;
    f.atom("zran", &["src/zran.c"], None, "random access into gzip")
        .await;
    f.atom("build", &["Makefile"], None, "make targets").await;
    // No repository yet: an absolute path cannot be placed.
    let e =
        f.c.err(
            "query_graph",
            json!({"operation":"context","projectId":f.project,"paths":"/home/me/repo/src/zran.c"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "paths");
    assert!(
        e["message"].as_str().unwrap().contains("no repository"),
        "{e}"
    );
    let repo = crate::code::Repo::new();
    repo.write("src/zran.c", "int main;\n");
    repo.commit("init");
    f.c.ok(
        "init_project",
        json!({"name":"Shop","repoPath":repo.root(),"projectId":f.project}),
    )
    .await;
    let inside = format!("{}/src/zran.c", repo.root());
    let ctx = f.context(&inside).await;
    assert_eq!(names(&ctx["orphanAtoms"]), ["zran"], "{ctx}");
    // paths as a JSON array too.
    let ctx =
        f.c.ok(
            "query_graph",
            json!({"operation":"context","projectId":f.project,"paths":[inside, "Makefile"]}),
        )
        .await;
    assert_eq!(names(&ctx["orphanAtoms"]), ["build", "zran"], "{ctx}");
    assert_eq!(ctx["unmatchedPaths"], json!([]));
    let e =
        f.c.err(
            "query_graph",
            json!({"operation":"context","projectId":f.project,"paths":"/elsewhere/src/zran.c"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("outside the project's repository"),
        "{e}"
    );
    // A task's Context Files: an absolute path inside the repository, and a bare name.
    let t = id_of(
        &f.c.task(json!({"title":"Touch zran","projectId":f.project}))
            .await,
    );
    f.c.ok(
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":t,"title":"Context Files",
               "content":format!("- {inside}\n- Makefile\n- /etc/passwd\n")}),
    )
    .await;
    let got =
        f.c.ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":t,"includeGraphContext":true}),
        )
        .await;
    let gc = &got["graphContext"];
    assert_eq!(names(&gc["orphanAtoms"]), ["build", "zran"], "{gc}");
    assert_eq!(gc["refusedPaths"][0]["path"], "/etc/passwd", "{gc}");
    f.c.stop().await;
}
