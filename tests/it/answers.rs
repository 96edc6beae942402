//! Answers carry nothing the agent just sent or can derive, through MCP: a failure's
//! text once (in `message`, beside the code and details), a proposal's diff without
//! its page unless asked, and bulk answers (an OFN import, a sync, a status) as
//! counts and the first few items, with what was left out counted.

use serde_json::{json, Value};

use crate::code::Repo;
use crate::harness::{Cairn, TempDir};
use crate::ontology::agent;

/// Items a bulk answer shows of each list (`SHOWN` in `src/mcp/ontology/view.rs`).
const SHOWN: usize = 10;

#[tokio::test]
async fn a_failure_says_its_text_once_with_its_code_details_and_what_to_do() {
    let c = Cairn::start().await;
    let p = c.project("Once").await;
    let t = c
        .ok(
            "manage_container",
            json!({"operation":"create","containerType":"task","title":"Write it","projectId":p}),
        )
        .await;
    let id = t["task"]["id"].as_str().unwrap().to_string();
    // A stale version, a bad parameter, a missing row: three codes, one shape.
    let stale = c
        .call(
            "advance",
            json!({"containerType":"task","id":id,"version":7}),
        )
        .await;
    let bad = c
        .call(
            "manage_container",
            json!({"operation":"create","containerType":"task","title":"x","complexity":"high"}),
        )
        .await;
    let missing = c
        .call(
            "query_container",
            json!({"operation":"get","containerType":"task","id":"00000000-0000-7000-8000-000000000000"}),
        )
        .await;
    for (env, code) in [
        (&stale, "CONFLICT"),
        (&bad, "VALIDATION_ERROR"),
        (&missing, "NOT_FOUND"),
    ] {
        assert_eq!(env["success"], json!(false), "{env:#}");
        assert_eq!(env["error"]["code"], json!(code), "{env:#}");
        let keys: Vec<&str> = env["error"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert!(
            keys.iter().all(|k| ["code", "details"].contains(k)),
            "{env:#}"
        );
        let m = env["message"].as_str().unwrap();
        let text = env.to_string();
        assert_eq!(text.matches(&json!(m).to_string()).count(), 1, "{text}");
    }
    // What to do next stays in the one text.
    assert!(
        stale["message"].as_str().unwrap().contains("re-read"),
        "{stale:#}"
    );
    assert_eq!(stale["error"]["details"]["currentVersion"], json!(1));
    assert_eq!(bad["error"]["details"]["parameter"], json!("complexity"));
    c.stop().await;
}

/// An empty ontology repository, attached to a new project and synced.
async fn empty_ontology() -> (Cairn, Repo, String, TempDir) {
    let repo = Repo::new();
    repo.write("pages/.keep", "");
    repo.commit("empty");
    let dir = TempDir::new();
    let c = Cairn::on(&dir.path().join("bulk.db"), &[]).await;
    let p = c.project("Bulk").await;
    c.ok(
        "manage_ontology",
        json!({"projectId": p, "operation": "attach", "repoPath": repo.root()}),
    )
    .await;
    c.ok(
        "manage_ontology",
        json!({"projectId": p, "operation": "sync"}),
    )
    .await;
    (c, repo, p, dir)
}

#[tokio::test]
async fn an_import_answers_counts_and_the_first_files_and_skips() {
    let (c, repo, p, _dir) = empty_ontology().await;
    // 600 classes under one root, and 25 constructs outside EL.
    let mut ofn = String::from(
        "Prefix(bk:=<urn:cairn:bk:>)\nPrefix(rdfs:=<http://www.w3.org/2000/01/rdf-schema#>)\nOntology(\n\
         Declaration(Class(bk:Root))\n",
    );
    for i in 0..600 {
        ofn.push_str(&format!(
            "Declaration(Class(bk:Part{i}))\nAnnotationAssertion(rdfs:label bk:Part{i} \"Part {i}\")\nSubClassOf(bk:Part{i} bk:Root)\n"
        ));
    }
    for i in 0..25 {
        ofn.push_str(&format!(
            "SubClassOf(bk:Part{i} ObjectUnionOf(bk:Part{} bk:Part{}))\n",
            i + 100,
            i + 200
        ));
    }
    ofn.push_str(")\n");
    let env = c
        .call(
            "manage_ontology",
            json!({"projectId": p, "operation": "import", "ofn": ofn, "agentContext": agent()}),
        )
        .await;
    assert_eq!(env["success"], json!(true), "{env:#}");
    let im = &env["data"];
    assert_eq!(im["newPages"], json!(601), "{im:#}");
    assert_eq!(im["skippedCount"], json!(25));
    assert_eq!(im["skipped"].as_array().unwrap().len(), SHOWN);
    assert!(im["skipped"][0]["message"]
        .as_str()
        .unwrap()
        .contains("ObjectUnionOf"));
    assert_eq!(im["files"].as_array().unwrap().len(), SHOWN);
    assert_eq!(im["consistency"]["newSubsumptions"], json!(600));
    assert_eq!(im["consistency"]["gained"].as_array().unwrap().len(), SHOWN);
    assert_eq!(
        im["omitted"],
        // The 601 class pages and Prefixes.md, the document's prefixes.
        json!({"files": 602 - SHOWN, "skipped": 25 - SHOWN, "gained": 600 - SHOWN}),
        "{im:#}"
    );
    // The diff of 601 pages is the branch's, not the answer's.
    assert!(im.get("diff").is_none() && im.get("markdown").is_none());
    let size = env.to_string().len();
    assert!(size < 12_000, "the import answered {size} characters");
    let branch = im["branch"].as_str().unwrap();
    let files = repo.git(&["diff", "--name-only", "main", branch]);
    assert_eq!(files.lines().count(), 602);
    assert!(files.lines().any(|f| f.ends_with("Prefixes.md")), "{files}");
    c.stop().await;
}

#[tokio::test]
async fn a_sync_and_a_status_answer_the_first_problems_and_count_the_rest() {
    let (c, repo, p, _dir) = empty_ontology().await;
    for i in 0..14 {
        repo.write(
            &format!("pages/Broken {i}.md"),
            &format!("- Broken {i}\n  - ### OntologyBlock\n    - owl:class:: not an iri {i}\n"),
        );
    }
    repo.write(
        "pages/Fine.md",
        "- Fine\n  - ### OntologyBlock\n    - ontology:: true\n    - term-id:: BK-0001\n    - preferred-term:: Fine\n    - source-domain:: bk\n    - definition:: A page that reads.\n    - owl:class:: bk:Fine\n",
    );
    repo.commit("broken pages");
    let s = c
        .ok(
            "manage_ontology",
            json!({"projectId": p, "operation": "sync"}),
        )
        .await;
    assert_eq!(s["problemCount"], json!(14), "{s:#}");
    assert_eq!(s["problems"].as_array().unwrap().len(), SHOWN);
    assert_eq!(s["omitted"], json!({"problems": 14 - SHOWN}), "{s:#}");
    assert_eq!(s["pages"]["added"], json!(15));
    let st = c
        .ok(
            "manage_ontology",
            json!({"projectId": p, "operation": "status"}),
        )
        .await;
    assert_eq!(st["problemCount"], json!(14), "{st:#}");
    assert_eq!(st["problems"].as_array().unwrap().len(), SHOWN);
    assert_eq!(st["omitted"], json!({"problems": 14 - SHOWN}));
    // Nothing left out: no `omitted`.
    for i in 0..14 {
        repo.git(&["rm", "-q", &format!("pages/Broken {i}.md")]);
    }
    repo.commit("fixed");
    let s = c
        .ok(
            "manage_ontology",
            json!({"projectId": p, "operation": "sync"}),
        )
        .await;
    assert_eq!(s["problemCount"], json!(0), "{s:#}");
    assert!(s.get("omitted").is_none(), "{s:#}");
    c.stop().await;
}

#[tokio::test]
async fn a_proposal_answers_its_diff_and_its_page_on_request() {
    let (c, repo, p, _dir) = empty_ontology().await;
    let mut args: Value = json!({
        "projectId": p, "operation": "create", "agentContext": agent(),
        "preferredTerm": "Gear Train", "domain": "bk",
        "definition": "A set of meshed gears that transmits rotation from one shaft to another.",
        "physicality": "PhysicalEntity", "role": "Artifact",
    });
    let a = c.ok("ontology_propose", args.clone()).await;
    assert!(a.get("markdown").is_none(), "{a:#}");
    let diff = a["diff"].as_str().unwrap();
    assert!(diff.contains("+++ b/pages/Gear Train.md"), "{diff}");
    assert!(diff.contains("meshed gears"), "{diff}");
    args["preferredTerm"] = json!("Worm Drive");
    args["definition"] = json!("A gear arrangement in which a worm meshes with a worm wheel.");
    args["includePage"] = json!(true);
    let b = c.ok("ontology_propose", args).await;
    let branch = b["branch"].as_str().unwrap();
    let page = repo.git(&["show", &format!("{branch}:pages/Worm Drive.md")]);
    assert_eq!(b["markdown"].as_str().unwrap(), page);
    c.stop().await;
}
