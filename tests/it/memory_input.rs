//! What the memory toolset accepts, through MCP: bad input refused by field with nothing half written, an atom and its sources as JSON text, a lagging clock that never retires an atom before it was recorded.

use serde_json::{json, Value};

use crate::harness::Cairn;
use crate::memory::{assumption, release, remember, s};

#[tokio::test]
async fn bad_input_is_refused_by_field_and_nothing_is_half_written() {
    let c = Cairn::start().await;
    let param = |e: &Value| s(&e["details"]["parameter"]);
    // Per type: the missing required field is named.
    let cases = [
        (json!({"type":"Fact","statement":"x"}), "atom.factKind"),
        (
            json!({"type":"Assumption","statement":"x"}),
            "atom.validationMethod",
        ),
        (
            json!({"type":"Decision","statement":"x","rationale":"r"}),
            "atom.decidedAt",
        ),
        (json!({"type":"Rule","statement":"x"}), "atom.severity"),
        (json!({"type":"Convention","statement":"x"}), "atom.area"),
        (json!({"type":"Best-practice","statement":"x"}), "atom.goal"),
        (json!({"type":"Know-how","statement":"x"}), "atom.steps"),
        (
            json!({"type":"Pattern","statement":"x","solution":"s"}),
            "atom.problem",
        ),
        (
            json!({"type":"AntiPattern","statement":"x"}),
            "atom.symptoms",
        ),
        (
            json!({"type":"Trait","statement":"x","about":"Person:ana"}),
            "atom.polarity",
        ),
        (
            json!({"type":"Cause","statement":"x","causeKind":"root"}),
            "atom.effectAtom",
        ),
        (json!({"type":"Opinion","statement":"x"}), "atom.type"),
        (
            json!({"type":"Fact","factKind":"observed"}),
            "atom.statement",
        ),
        (
            json!({"type":"Fact","statement":"x","factKind":"observed","value":"1"}),
            "atom.predicate",
        ),
        (
            json!({"type":"Fact","statement":"x","factKind":"seen"}),
            "atom.factKind",
        ),
        (
            json!({"type":"Fact","statement":"x","factKind":"observed","confidence":1.5}),
            "atom.confidence",
        ),
        (
            json!({"type":"Fact","statement":"x","factKind":"observed","validFrom":"2025-02-01","validTo":"2025-01-01"}),
            "atom.validTo",
        ),
        (
            json!({"type":"Fact","statement":"x","factKind":"observed","colour":"red"}),
            "atom.colour",
        ),
        (
            json!({"type":"Decision","statement":"x","decidedAt":"2025-01-01","rationale":"r","decisionStatus":"accepted"}),
            "atom.decisionStatus",
        ),
        (
            json!({"type":"Fact","statement":"x".repeat(4097),"factKind":"observed"}),
            "atom.statement",
        ),
        (
            json!({"type":"Fact","statement":"x","factKind":"observed","tags":(0..51).map(|i| format!("t{i}")).collect::<Vec<_>>()}),
            "atom.tags",
        ),
        (
            json!({"type":"Trait","statement":"x","polarity":"strong","about":"Lib:serde"}),
            "atom.about",
        ),
    ];
    for (atom, field) in cases {
        let e = c
            .err(
                "manage_memory",
                json!({"operation":"remember","atom":atom,"sources":[]}),
                "VALIDATION_ERROR",
            )
            .await;
        assert_eq!(param(&e), field, "{atom}: {e}");
    }
    // Every error at once, each naming its field.
    let e = c
        .err(
            "manage_memory",
            json!({"operation":"remember","atom":{"type":"Decision","statement":"x"}}),
            "VALIDATION_ERROR",
        )
        .await;
    let m = s(&e["message"]);
    assert!(
        m.contains("atom.decidedAt") && m.contains("atom.rationale"),
        "{m}"
    );

    // Nothing half-written: the subject a failed remember named is not created, nor
    // its references.
    c.err(
        "manage_memory",
        json!({"operation":"remember","atom":{"type":"Fact","statement":"x","about":"Lib:brand-new"},"sources":[{"refType":"doc","uri":"https://x"}]}),
        "VALIDATION_ERROR",
    )
    .await;
    c.err(
        "manage_subject",
        json!({"operation":"get","id":"Lib:brand-new"}),
        "NOT_FOUND",
    )
    .await;
    let l = c
        .ok(
            "query_memory",
            json!({"operation":"list","includeHistory":true}),
        )
        .await;
    assert_eq!(l["total"], 0);

    // Unknown ids are NOT_FOUND; bad sources and times name themselves.
    let ghost = "0192f000-0000-7000-8000-00000000dead";
    let e = c
        .err("manage_memory", json!({"operation":"remember","atom":{"type":"Fact","statement":"x","factKind":"observed","about":ghost}}), "NOT_FOUND")
        .await;
    assert_eq!(e["details"]["entity"], "subject");
    let e = c
        .err("manage_memory", json!({"operation":"remember","atom":{"type":"Fact","statement":"x","factKind":"observed"},"sources":[{"refType":"blog","uri":"https://x"}]}), "VALIDATION_ERROR")
        .await;
    assert_eq!(param(&e), "sources[0].refType");
    let e = c
        .err("manage_memory", json!({"operation":"remember","atom":{"type":"Fact","statement":"x","factKind":"observed"},"sources":[{"refType":"doc"}]}), "VALIDATION_ERROR")
        .await;
    assert_eq!(param(&e), "sources[0].uri");
    c.err("manage_memory", json!({"operation":"remember","atom":{"type":"Fact","statement":"x","factKind":"observed"},"sources":[{"id":ghost}]}), "NOT_FOUND")
        .await;
    let e = c
        .err("manage_memory", json!({"operation":"remember","now":"yesterday","atom":{"type":"Fact","statement":"x","factKind":"observed"}}), "VALIDATION_ERROR")
        .await;
    assert_eq!(param(&e), "now");

    // Per operation: what it needs, and what does not apply.
    let bad = [
        (json!({"operation":"remember"}), "atom"),
        (
            json!({"operation":"remember","atom":{"type":"Fact"},"id":ghost}),
            "id",
        ),
        (json!({"operation":"validate","id":ghost}), "version"),
        (json!({"operation":"validate","version":1}), "id"),
        (
            json!({"operation":"validate","id":ghost,"version":1,"confidence":2}),
            "confidence",
        ),
        (json!({"operation":"deprecate","id":ghost}), "version"),
        (json!({"operation":"evidence","id":ghost}), "sources"),
        (json!({"operation":"link","id":ghost,"to":ghost}), "kind"),
        (
            json!({"operation":"link","id":ghost,"to":ghost,"kind":"SUPERSEDES"}),
            "kind",
        ),
        (json!({"operation":"forget","id":ghost}), "operation"),
        (json!({"operation":"remember","atom":"not json"}), "atom"),
    ];
    for (args, p) in bad {
        let e = c
            .err("manage_memory", args.clone(), "VALIDATION_ERROR")
            .await;
        assert_eq!(param(&e), p, "{args}: {e}");
    }
    c.err(
        "manage_memory",
        json!({"operation":"validate","id":ghost,"version":1}),
        "NOT_FOUND",
    )
    .await;
    let q = [
        (
            json!({"operation":"recall","query":"x".repeat(1025)}),
            "query",
        ),
        (json!({"operation":"recall","asOf":"last week"}), "asOf"),
        (json!({"operation":"recall","about":"zod"}), "about"),
        (json!({"operation":"recall","types":"Opinion"}), "types"),
        (json!({"operation":"list","status":"ALIVE"}), "status"),
        (json!({"operation":"get"}), "id"),
        (json!({"operation":"get","id":ghost,"query":"x"}), "query"),
    ];
    for (args, p) in q {
        let e = c
            .err("query_memory", args.clone(), "VALIDATION_ERROR")
            .await;
        assert_eq!(param(&e), p, "{args}: {e}");
    }
    c.err(
        "query_memory",
        json!({"operation":"recall","projectId":ghost}),
        "NOT_FOUND",
    )
    .await;
    let sub = [
        (
            json!({"operation":"create","subject":{"kind":"Lib"}}),
            "subject.name",
        ),
        (
            json!({"operation":"create","subject":{"kind":"Framework","name":"x"}}),
            "subject.kind",
        ),
        (
            json!({"operation":"create","subject":{"kind":"Lib","name":"x".repeat(256)}}),
            "subject.name",
        ),
        (
            json!({"operation":"create","subject":{"kind":"Lib","name":"x","aliases":["y".repeat(256)]}}),
            "subject.aliases[0]",
        ),
        (
            json!({"operation":"create","subject":{"kind":"Project","name":"x","orchestratorProject":"nope"}}),
            "subject.orchestratorProject",
        ),
        (json!({"operation":"uses","id":"Lib:x"}), "target"),
        (json!({"operation":"list","kind":"Gadget"}), "kind"),
    ];
    for (args, p) in sub {
        let e = c
            .err("manage_subject", args.clone(), "VALIDATION_ERROR")
            .await;
        assert_eq!(param(&e), p, "{args}: {e}");
    }
    let e = c
        .err("manage_subject", json!({"operation":"create","subject":{"kind":"Project","name":"x","orchestratorProject":ghost}}), "NOT_FOUND")
        .await;
    assert_eq!(e["details"]["entity"], "project");
    let dia = [
        (
            json!({"operation":"write","session":"s"}),
            "entry.learnings",
        ),
        (
            json!({"operation":"write","learnings":["x".repeat(4097)]}),
            "entry.learnings[0]",
        ),
        (json!({"operation":"ingest"}), "rules"),
        (json!({"operation":"ingest","rules":"{}"}), "rules"),
        (json!({"operation":"reflect","ids":"nope"}), "ids"),
    ];
    for (args, p) in dia {
        let e = c
            .err("manage_diary", args.clone(), "VALIDATION_ERROR")
            .await;
        assert_eq!(param(&e), p, "{args}: {e}");
    }
    c.err(
        "manage_diary",
        json!({"operation":"write","taskId":ghost,"learnings":"x"}),
        "NOT_FOUND",
    )
    .await;
    c.err("manage_diary", json!({"operation":"reflect"}), "NOT_FOUND")
        .await;
    c.err(
        "curate_memory",
        json!({"operation":"plan","fingerprint":"x"}),
        "VALIDATION_ERROR",
    )
    .await;
    c.stop().await;
}

/// A call's clock (`now`) may lag the one an atom was recorded with: retiring it
/// then still leaves the atom believed from its recording to its retirement, never a
/// retirement before it was known, and a superseded one the same.
#[tokio::test]
async fn a_lagging_clock_never_retires_an_atom_before_it_was_recorded() {
    let c = Cairn::start().await;
    let a = remember(
        &c,
        "2025-10-01T00:00:00Z",
        json!({"type":"Fact","statement":"The queue holds 10,000 messages","about":"Service:queue","factKind":"observed"}),
        json!([{"refType":"doc","uri":"docs/queue.md"}]),
    )
    .await;
    let d = c
        .ok("manage_memory", json!({"operation":"deprecate","id":a["atom"]["id"],"version":a["atom"]["version"],"now":"2025-01-01T00:00:00Z"}))
        .await;
    assert_eq!(d["atom"]["status"], "DEPRECATED", "{d:#}");
    assert_eq!(d["atom"]["retiredAt"], d["atom"]["recordedAt"], "{d:#}");
    // Supersession by a newcomer written with an earlier clock.
    let old = remember(
        &c,
        "2025-10-01T00:00:00Z",
        assumption("4.2", "2025-09-01"),
        release("4.2"),
    )
    .await;
    let new = remember(
        &c,
        "2025-03-01T00:00:00Z",
        assumption("4.3", "2025-09-20"),
        release("4.3"),
    )
    .await;
    let got = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":old["atom"]["id"]}),
        )
        .await;
    assert_eq!(got["atom"]["status"], "SUPERSEDED", "{got:#}");
    assert!(
        s(&got["atom"]["retiredAt"]) >= s(&got["atom"]["recordedAt"]),
        "{got:#}"
    );
    // The chain reads the replaced atom first, though its successor's clock was earlier.
    let chain: Vec<&Value> = got["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| &h["id"])
        .collect();
    assert_eq!(
        chain,
        vec![&old["atom"]["id"], &new["atom"]["id"]],
        "{got:#}"
    );
    c.stop().await;
}

/// Clients that send every argument as text: the atom's fields and the sources may
/// each come as a string holding their JSON.
#[tokio::test]
async fn an_atom_and_its_sources_may_come_as_json_text() {
    let c = Cairn::start().await;
    let atom = json!({"type":"Fact","statement":"Builds run on Debian 13","about":"Stack:ci","factKind":"observed"});
    let r = c
        .ok("manage_memory", json!({"operation":"remember","atom":atom.to_string(),
                                     "sources":json!([{"refType":"doc","uri":"docs/ci.md"}]).to_string()}))
        .await;
    assert_eq!(
        r["atom"]["status"], "ACTIVE",
        "a doc-grade source was read: {r:#}"
    );
    let bad = c
        .err(
            "manage_memory",
            json!({"operation":"remember","atom":atom,"sources":"[1, 2"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(bad.to_string().contains("sources"), "{bad}");
    c.stop().await;
}
