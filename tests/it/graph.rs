//! The knowledge graph through MCP: atoms and molecules with every rule of
//! docs/graph.md, path context (snapshots of a fixture graph), the matcher patched in
//! place, absolute paths. Search and the changelog are in `graph_search.rs`, the
//! agent's loop and the skills in `graph_agent.rs`.

use serde_json::{json, Value};

use crate::graph_search::shared;
use crate::harness::{id_of, Cairn};

/// A project with one task to attribute graph writes to.
pub(crate) struct Fixture {
    pub(crate) c: Cairn,
    pub(crate) project: String,
    pub(crate) task: String,
}

impl Fixture {
    pub(crate) async fn new() -> Fixture {
        let c = Cairn::start().await;
        let project = c.project("Shop").await;
        let task = id_of(
            &c.task(json!({"title":"Map the code","projectId":project}))
                .await,
        );
        Fixture { c, project, task }
    }

    pub(crate) async fn molecule(&self, name: &str, knowledge: &str) -> Value {
        self.c
            .ok(
                "manage_graph",
                json!({"operation":"create","entityType":"molecule","projectId":self.project,"name":name,
                       "knowledge":knowledge,"createdByTaskId":self.task}),
            )
            .await["molecule"]
            .clone()
    }

    pub(crate) async fn atom(
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
    pub(crate) async fn get_atom(&self, id: &str) -> Value {
        self.c
            .ok(
                "query_graph",
                json!({"operation":"get","entityType":"atom","id":id}),
            )
            .await["atom"]
            .clone()
    }

    pub(crate) async fn context(&self, paths: &str) -> Value {
        self.c
            .ok(
                "query_graph",
                json!({"operation":"context","projectId":self.project,"paths":paths}),
            )
            .await
    }

    pub(crate) fn create_atom_args(&self, paths: Value) -> Value {
        json!({"operation":"create","entityType":"atom","projectId":self.project,"name":"A",
               "paths":paths,"createdByTaskId":self.task})
    }
}

pub(crate) fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap().to_string())
        .collect()
}

/// The payments fixture (docs/graph.md): two molecules, overlapping atoms, an orphan.
pub(crate) async fn payments(f: &Fixture) -> (String, String, String, String, String) {
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
