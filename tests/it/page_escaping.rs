//! Every view of the page shows what agents wrote, and what the request itself
//! carries (pasted paths, filters, ids), as text: one marker of markup, written into
//! every free-text field of all five toolsets and into every query parameter a view
//! reads, never comes back as markup on any view.

use serde_json::json;

use crate::code::{Code, Repo};
use crate::harness::{id_of, Cairn, Transport};

/// Markup an unescaped view would render: an element with an attribute, and the
/// characters every escape must handle.
const MARK: &str = "<i id=cairn-mark title='x\"y'>&amp;</i>";
/// The marker's start as the page must show it, escaped for a text node.
const SHOWN: &str = "&lt;i id=cairn-mark";

/// A query value: the marker percent-encoded.
fn q(v: &str) -> String {
    v.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

async fn html(url: &str) -> String {
    let r = reqwest::get(url).await.expect("GET");
    let status = r.status().as_u16();
    let body = r.text().await.unwrap();
    assert!(status < 500, "{url}: {status} {body}");
    body
}

#[tokio::test]
async fn no_view_renders_agent_text_or_request_values_as_markup() {
    let repo = Repo::new();
    repo.write(
        "docs/design.md",
        &format!("# Design {MARK}\n\nThe shop sells.\nIt sells well.\n"),
    );
    repo.commit("init");
    let code = Code::bind(Cairn::start_on(Transport::Http).await, repo).await;
    let (c, p) = (&code.c, code.pid.clone());

    // Tasks: a project, a feature, a task and its section, a blocker.
    let other = c.project(&format!("Project {MARK}")).await;
    let f = c.feature(&p, &format!("Feature {MARK}")).await;
    let t = c
        .task(
            json!({"title":format!("Task {MARK}"),"summary":format!("Summary {MARK}"),
                     "projectId":p,"featureId":f}),
        )
        .await;
    let blocker = c
        .task(json!({"title":format!("Blocker {MARK}"),"projectId":p}))
        .await;
    c.ok(
        "block",
        json!({"containerType":"task","id":id_of(&t),"version":1,"blockedBy":[id_of(&blocker)]}),
    )
    .await;

    // Knowledge: a molecule and an atom.
    let m = c
        .ok("manage_graph", json!({"operation":"create","entityType":"molecule","projectId":p,
            "name":format!("Molecule {MARK}"),"knowledge":format!("Knowledge {MARK}"),"createdByTaskId":id_of(&t)}))
        .await["molecule"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok("manage_graph", json!({"operation":"create","entityType":"atom","projectId":p,"moleculeId":m,
        "name":format!("Atom {MARK}"),"paths":["docs/**"],"knowledge":format!("Atom knowledge {MARK}"),
        "createdByTaskId":id_of(&t)}))
        .await;

    // Code: an entity on the document's lines.
    code.entity(
        &format!("Entity {MARK}"),
        "core",
        &[],
        json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":1,"endLine":3}]),
    )
    .await;

    // Memory: an atom about the project.
    c.ok("manage_memory", json!({"operation":"remember","now":"2025-10-01T00:00:00Z",
        "atom":{"type":"Fact","statement":format!("Statement {MARK}"),"about":"Lib:marker","factKind":"observed","confidence":0.7},
        "sources":[{"refType":"doc","uri":"https://example.org/marker"}]}))
        .await;

    // The ontology: the fixture and one class whose texts hold the marker.
    let onto = Repo::new();
    for (file, text) in crate::ontology::fixture_pages() {
        onto.write(&format!("pages/{file}"), &text);
    }
    onto.write(
        "pages/Marker.md",
        &format!(
            "- Marker\n  - ### OntologyBlock\n    - ontology:: true\n    - term-id:: AI-0999\n    \
             - preferred-term:: Marker\n    - definition:: A class described by {MARK}.\n    \
             - alt-terms:: [[Alt {MARK}]]\n    - owl:class:: ai:Marker\n    \
             - is-subclass-of:: [[Transformer]]\n"
        ),
    );
    onto.commit("the fixture and a marked class");
    c.ok(
        "manage_ontology",
        json!({"projectId":p,"operation":"attach","repoPath":onto.root()}),
    )
    .await;
    c.ok("manage_ontology", json!({"projectId":p,"operation":"sync"}))
        .await;

    let b = c.http.as_ref().unwrap().base.clone();
    let m = q(MARK);
    let views: Vec<(String, bool)> = vec![
        // (URL, whether agent text with the marker is expected on it)
        (format!("{b}/"), true),
        (format!("{b}/p/{other}/board"), true),
        (format!("{b}/p/{p}/board"), true),
        (format!("{b}/p/{p}/knowledge"), true),
        (
            format!("{b}/p/{p}/knowledge?paths=docs%2Fdesign.md%0A{m}"),
            true,
        ),
        (format!("{b}/p/{p}/knowledge?molecule={m}"), false),
        (format!("{b}/p/{p}/code"), true),
        (format!("{b}/p/{p}/code?analyze=docs%2Fdesign.md"), true),
        (format!("{b}/p/{p}/code?analyze={m}"), false),
        (format!("{b}/p/{p}/code?changes=1"), false),
        (format!("{b}/p/{p}/ontology"), false),
        (format!("{b}/p/{p}/ontology?q=Marker"), false),
        (format!("{b}/p/{p}/ontology?q={m}"), false),
        (format!("{b}/p/{p}/ontology?iri=ai%3AMarker"), true),
        (format!("{b}/p/{p}/ontology?iri={m}"), false),
        (format!("{b}/p/{p}/memory"), true),
        (format!("{b}/p/{p}/memory?history=1"), true),
        (format!("{b}/p/{p}/memory?atom={m}"), false),
        (format!("{b}/p/{m}/board"), false),
        (format!("{b}/p/{p}/{m}"), false),
        (format!("{b}/{m}"), false),
    ];
    for (url, shows) in &views {
        let page = html(url).await;
        assert!(
            !page.contains("<i id=cairn-mark") && !page.contains("title='x\"y'"),
            "{url} renders the marker as markup: {page}"
        );
        if *shows {
            assert!(
                page.contains(SHOWN),
                "{url} does not show the marker as text: {page}"
            );
        }
    }
    code.c.stop().await;
}
