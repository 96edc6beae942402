//! An ontology larger than one statement's rows, through MCP: an import committed
//! beside everything the branch holds (in a pages folder whose name git quotes), and
//! the sync after its merge, page for page; then an import that changes hundreds of
//! those pages.

use crate::code::Repo;
use crate::harness::{Cairn, TempDir};
use serde_json::{json, Value};

/// Classes: more than one multi-row statement's pages (500) and entities.
const N: usize = 1_234;

/// A tree of `n` classes (ten children each), labelled, with an existential on every
/// fifth.
fn document(n: usize) -> String {
    let mut s = String::from(
        "Prefix(g:=<http://example.org/generated#>)\nPrefix(rdfs:=<http://www.w3.org/2000/01/rdf-schema#>)\n\
         Ontology(<http://example.org/generated>\nDeclaration(ObjectProperty(g:p))\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "Declaration(Class(g:C{i}))\nAnnotationAssertion(rdfs:label g:C{i} \"Class {i}\")\n"
        ));
        if i > 0 {
            s.push_str(&format!("SubClassOf(g:C{i} g:C{})\n", (i - 1) / 10));
        }
        if i > 10 && i % 5 == 0 {
            s.push_str(&format!(
                "SubClassOf(g:C{i} ObjectSomeValuesFrom(g:p g:C{}))\n",
                i / 7
            ));
        }
    }
    s.push_str(")\n");
    s
}

/// A `-z` listing's records, sorted.
fn records(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text
        .split('\0')
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

async fn call(c: &Cairn, project: &str, mut args: Value) -> Value {
    args["projectId"] = json!(project);
    c.ok("manage_ontology", args).await
}

#[tokio::test]
async fn a_large_import_keeps_the_branch_and_its_sync_reads_every_page() {
    let repo = Repo::new();
    let pages = "on\"to logy";
    repo.write("README.md", "The ontology.\n");
    repo.write("notes/kept.txt", "outside the pages\n");
    repo.write(&format!("{pages}/Plain page.md"), "- an ordinary note\n");
    repo.commit("the start");
    let dir = TempDir::new();
    let c = Cairn::on_env(&dir.path().join("cairn.db"), &[], &[]).await;
    let p = c.project("Scale").await;
    call(
        &c,
        &p,
        json!({"operation": "attach", "repoPath": repo.root(), "pagesDir": pages}),
    )
    .await;
    call(&c, &p, json!({"operation": "sync"})).await;
    let im = call(&c, &p, json!({"operation": "import", "ofn": document(N)})).await;
    assert_eq!(
        (im["newPages"].clone(), im["skipped"].clone()),
        // A page for each class and one for the property.
        (json!(N + 1), json!([])),
        "{im:#}"
    );
    let branch = im["branch"].as_str().unwrap().to_string();
    let base = im["baseCommit"].as_str().unwrap().to_string();
    assert_eq!(repo.git(&["rev-parse", "main"]).trim(), base);
    // One commit on the synced one, by Cairn, its message the proposal's.
    assert_eq!(
        repo.git(&["rev-list", "--parents", "-n", "1", &branch])
            .split_whitespace()
            .nth(1),
        Some(base.as_str())
    );
    let who = repo.git(&["log", "-1", "--format=%an <%ae>%n%cn <%ce>%n%s", &branch]);
    let who: Vec<&str> = who.lines().collect();
    assert!(who[0].starts_with("Cairn (") && who[0].ends_with(" <cairn@localhost>"));
    assert_eq!((who[1], who[2]), (who[0], "Ontology: import"));
    // Every file of the base branch is kept as it was; the pages are added to it.
    let before = records(&repo.git(&["ls-tree", "-r", "-z", "--full-tree", &base]));
    let after = records(&repo.git(&["ls-tree", "-r", "-z", "--full-tree", &branch]));
    assert!(before.iter().all(|l| after.contains(l)), "{before:#?}");
    // The new pages, and the prefix map's page that declares `g:`.
    let added: Vec<&String> = after.iter().filter(|l| !before.contains(l)).collect();
    assert_eq!(added.len(), N + 2);
    assert!(
        added.iter().all(|l| l.contains(&format!("\t{pages}/"))),
        "{added:#?}"
    );
    let page = |i: usize| format!("{pages}/Class {i}.md");
    assert!(repo
        .git(&["ls-tree", "-r", "--name-only", "-z", &branch])
        .split('\0')
        .any(|f| f == page(N - 1)));
    assert_eq!(
        repo.git(&["for-each-ref", "refs/cairn"]),
        "",
        "no scratch ref stays"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
    // Merged and synced: every page and entity, each page's text as committed.
    repo.git(&["merge", "-q", "--ff-only", &branch]);
    let s = call(&c, &p, json!({"operation": "sync"})).await;
    assert_eq!(s["pages"]["added"], json!(N + 2), "{s:#}");
    assert_eq!(s["entities"]["added"], json!(N + 1), "{s:#}");
    assert_eq!(
        (s["classes"].clone(), s["problemCount"].clone()),
        (json!(N), json!(0)),
        "{s:#}"
    );
    let axioms = s["axioms"].as_u64().unwrap();
    assert!(axioms >= (N - 1) as u64, "{s:#}");
    for i in [0, 1, 499, 500, 501, 999, N - 1] {
        let n = c
            .ok(
                "ontology_read",
                json!({"projectId": p, "iri": format!("Class {i}")}),
            )
            .await;
        assert_eq!(n["page"], json!(page(i)), "{n:#}");
        let text = repo.git(&["show", &format!("main:{}", page(i))]);
        assert_eq!(n["markdownContent"], json!(text), "Class {i}");
    }
    let all = c
        .ok(
            "ontology_query",
            json!({"projectId": p, "cypher": "MATCH (n:`g:C0`) RETURN count(n)"}),
        )
        .await;
    assert_eq!(all["rows"][0][0], json!(N), "{all:#}");
    // A second import gives 600 of those pages a second parent: their pages change
    // and their axioms are rewritten, over more than one statement.
    let mut more = String::from(
        "Prefix(g:=<http://example.org/generated#>)\nOntology(<http://example.org/generated>\n",
    );
    for i in 600..1_200 {
        more.push_str(&format!("SubClassOf(g:C{i} g:C{})\n", i % 10 + 1));
    }
    more.push_str(")\n");
    let im = call(&c, &p, json!({"operation": "import", "ofn": more})).await;
    assert_eq!(
        (im["newPages"].clone(), im["updatedPages"].clone()),
        (json!(0), json!(600)),
        "{im:#}"
    );
    repo.git(&["merge", "-q", "--ff-only", im["branch"].as_str().unwrap()]);
    let s = call(&c, &p, json!({"operation": "sync"})).await;
    assert_eq!(
        (
            s["pages"]["changed"].clone(),
            s["pages"]["unchanged"].clone()
        ),
        (json!(600), json!(N + 3 - 600)),
        "{s:#}"
    );
    assert_eq!(s["axioms"].as_u64(), Some(axioms + 600), "{s:#}");
    let n = c
        .ok(
            "ontology_read",
            json!({"projectId": p, "iri": "Class 1000"}),
        )
        .await;
    assert_eq!(
        n["markdownContent"],
        json!(repo.git(&["show", &format!("main:{}", page(1000))]))
    );
    c.stop().await;
}
