//! The retrieval benchmark's instrument (`benches/retrieval.rs`): its held-out sets
//! load from what this machine's registries installed and name only ids their corpus
//! holds, its scores and its BM25 mean what the README says, and a subset of the code
//! set loaded through MCP answers its exact-name queries. The quality figures
//! themselves belong to the bench.

use std::collections::HashMap;

use serde_json::json;

use crate::code::{id, Repo};
use crate::harness::{Cairn, TempDir, TEST_CONFIG};

#[path = "../../benches/retrieval/corpus.rs"]
mod corpus;

use corpus::{Kind, Query, Set};

fn count(set: &Set, k: Kind) -> usize {
    set.queries.iter().filter(|q| q.kind == k).count()
}

fn assert_sound(set: &Set, min_items: usize) {
    assert!(
        set.items.len() >= min_items,
        "{}: {} items from {}",
        set.name,
        set.items.len(),
        set.source
    );
    let mut ids: Vec<&str> = set.items.iter().map(|i| i.id.as_str()).collect();
    ids.sort();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "{}: ids repeat", set.name);
    assert!(
        set.items.iter().all(|i| !i.text.trim().is_empty()),
        "{}: an empty text",
        set.name
    );
    assert_eq!(
        set.missing(),
        Vec::<String>::new(),
        "{}: queries name ids the corpus lacks",
        set.name
    );
}

#[test]
fn heldout_sets_load_and_name_only_ids_their_corpus_holds() {
    let code = corpus::stdlib();
    assert_sound(&code, 1_000);
    assert!(code.source.contains("CPython 3.11"), "{}", code.source);
    let notes = corpus::debian();
    assert_sound(&notes, 600);
    let dialogue = corpus::chatterbot();
    assert_sound(&dialogue, 800);
    for s in [&code, &notes, &dialogue] {
        assert!(
            count(s, Kind::Paraphrase) >= 50 && count(s, Kind::Exact) >= 40,
            "{}: {} paraphrased and {} exact queries",
            s.name,
            count(s, Kind::Paraphrase),
            count(s, Kind::Exact)
        );
    }
    // Notes keep their paragraphs; a dialogue joins its statements.
    let bash = notes.items.iter().find(|i| i.id == "bash").expect("bash");
    assert!(
        bash.text.starts_with("GNU Bourne Again SHell\n"),
        "{}",
        bash.text
    );
    let webcam = dialogue
        .items
        .iter()
        .find(|i| i.id == "tech_support/6")
        .expect("tech_support/6");
    assert!(webcam.text.contains(" — "), "{}", webcam.text);

    let conv = corpus::conversation();
    assert_sound(&conv, 100);
    assert_eq!(conv.items.len(), 100);
    assert_eq!(count(&conv, Kind::Question), 30);
    assert!(conv
        .items
        .iter()
        .all(|t| t.kind == "developer" || t.kind == "agent"));
    assert!(conv
        .items
        .iter()
        .all(|t| t.text.split_whitespace().count() < 40));
}

/// The corpus's YAML subset: quoted scalars over several lines, literal blocks, and
/// statements added to the conversation they follow.
#[test]
fn dialogues_parse_quotes_blocks_and_continuations() {
    let yaml = "categories:\n- tests\nconversations:\n- - Is it 'quoted'?\n  - 'It''s quoted,\n    over two lines.'\n\
                - - \"Say \\\"hi\\\"\"\n  - |\n    line one\n\n    line two\n  - plain\n    continued\n";
    let c = corpus::parse_dialogues(yaml);
    assert_eq!(
        c,
        vec![
            vec![
                "Is it 'quoted'?".to_string(),
                "It's quoted, over two lines.".to_string()
            ],
            vec![
                "Say \"hi\"".to_string(),
                "line one line two".to_string(),
                "plain continued".to_string()
            ],
        ]
    );
}

#[test]
fn scores_count_any_answer_at_1_and_every_evidence_turn_at_10() {
    let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let q = |rel: &[&str]| Query {
        kind: Kind::Question,
        text: "q".into(),
        relevant: ids(rel),
    };
    let mut s = corpus::Scores::default();
    // Two equally good answers: one at rank 2 is recall@1 0, recall@5 1.
    s.add(&q(&["a", "b"]), &ids(&["x", "b", "y"]));
    assert_eq!((s.recall1(), s.recall5(), s.mrr()), (0.0, 0.5, 0.5));
    let mut s = corpus::Scores::default();
    // Three evidence turns, two in the top 10.
    s.add(&q(&["t1", "t2", "t3"]), &ids(&["t2", "x", "t3"]));
    assert_eq!(s.recall1(), 1.0);
    assert!((s.recall10() - 2.0 / 3.0).abs() < 1e-9);
    let mut s = corpus::Scores::default();
    s.add(&q(&["a"]), &[]);
    assert_eq!((s.recall10(), s.mrr(), s.misses.len()), (0.0, 0.0, 1));

    let bm = corpus::Bm25::new([
        "the cat sat on the mat",
        "a dog chased the cat around the yard",
        "parsers turn text into trees",
    ]);
    assert_eq!(bm.rank("cat mat", 3), vec![0, 1]);
    assert_eq!(bm.rank("Trees!", 3), vec![2]);
    assert!(bm.rank("nothing here", 3).is_empty());
    let st = corpus::statements(&[&corpus::conversation()], 150);
    assert_eq!(st.len(), 150);
    assert!(st.iter().all(|s| s.split_whitespace().count() < 40));
}

/// A third of the code set's one-word exact-name queries and their answers, loaded
/// as the bench loads them (Domain, a Namespace per module, a Unit per item with a
/// code reference to its file): hybrid search, and lexical search without the cosine
/// floor, rank every answer in the top 10. The other legs are printed, not asserted:
/// today `mode: lexical` with its default floor, and `mode: vector`, miss some.
#[tokio::test]
async fn exact_names_of_the_code_set_are_found_by_hybrid_and_lexical_search() {
    let set = corpus::stdlib();
    let queries: Vec<&Query> = set
        .queries
        .iter()
        .filter(|q| q.kind == Kind::Exact && !q.text.contains(' '))
        .collect();
    assert!(
        queries.len() >= 30,
        "{} one-word exact queries",
        queries.len()
    );
    // Every third: enough for the check, few texts for the model to embed.
    let queries: Vec<&Query> = queries.into_iter().step_by(3).collect();
    // The answers, under their modules (which compete with them).
    let mut keep: Vec<usize> = Vec::new();
    for q in &queries {
        let i = set
            .items
            .iter()
            .position(|it| it.id == q.relevant[0])
            .expect("answer in corpus");
        keep.push(i);
    }
    keep.sort();
    keep.dedup();
    let repo = Repo::new();
    for &i in &keep {
        let it = &set.items[i];
        repo.write(
            &format!("{}.py", it.id),
            &format!("# {}\n{}\n", it.id, it.text),
        );
    }
    repo.write("README.md", "The code set's subset.\n");
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-qm", "subset"]);
    let tmp = TempDir::new();
    let cfg = tmp.path().join("config.toml");
    std::fs::write(&cfg, format!("{TEST_CONFIG}[lsp]\npy = \"\"\n")).unwrap();
    let c = Cairn::on(
        &tmp.path().join("cairn.db"),
        &["--config", cfg.to_str().unwrap()],
    )
    .await;
    let d = c
        .ok(
            "init_project",
            json!({"name":"stdlib","repoPath":repo.root()}),
        )
        .await;
    let pid = d["projectId"].as_str().unwrap().to_string();
    let cat = |n: &str| crate::code::category(&d, n);
    // A Domain, a Namespace per module, a Unit per item: the bench's hierarchy.
    let domain = c
        .ok(
            "create_entity",
            json!({"projectId":pid,"name":"Python standard library","description":"The modules measured.",
                   "categoryIds":[cat("core")],"commands":[{"command":"add","kind":"text",
                   "documentPath":"README.md","startLine":1,"endLine":1,"description":"the corpus"}]}),
        )
        .await;
    let mut module: HashMap<String, String> = HashMap::new();
    let mut name_of: HashMap<String, String> = HashMap::new();
    name_of.insert(id(&domain["entity"]), "Python standard library".into());
    for &i in &keep {
        let it = &set.items[i];
        if !module.contains_key(&it.group) {
            let m = c
                .ok(
                    "create_entity",
                    json!({"projectId":pid,"name":it.group,"description":format!("The {} module.", it.group),
                           "categoryIds":[cat("module")],"parentIds":[id(&domain["entity"])],
                           "commands":[{"command":"add","kind":"code","documentPath":"README.md",
                                        "startLine":1,"endLine":1,"description":it.group}]}),
                )
                .await;
            module.insert(it.group.clone(), id(&m["entity"]));
            name_of.insert(id(&m["entity"]), it.group.clone());
        }
        let lines = it.text.lines().count() + 1;
        let e = c
            .ok(
                "create_entity",
                json!({"projectId":pid,"name":it.id,"description":it.text,"categoryIds":[cat("function")],
                       "parentIds":[module[&it.group]],
                       "commands":[{"command":"add","kind":"code","documentPath":format!("{}.py", it.id),
                                    "startLine":1,"endLine":lines,"description":it.id}]}),
            )
            .await;
        name_of.insert(id(&e["entity"]), it.id.clone());
    }
    // Hybrid as an agent calls it, and lexical without the cosine floor (which
    // `mode: lexical` applies too), must find every name; the other legs are reported.
    let mut missed = Vec::new();
    let mut reported = Vec::new();
    for (mode, floor, must) in [
        ("hybrid", None, true),
        ("lexical", Some(-1), true),
        ("lexical", None, false),
        ("vector", None, false),
        ("vector", Some(-1), false),
    ] {
        let mut found = 0;
        for q in &queries {
            let mut a =
                json!({"projectId":pid,"query":q.text,"target":"entities","limit":10,"mode":mode});
            if let Some(f) = floor {
                a["minScore"] = json!(f);
            }
            let r = c.ok("search", a).await;
            assert_eq!(r["notEmbedded"].as_u64().unwrap_or(0), 0, "{r}");
            let got: Vec<String> = r["entities"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| name_of[e["id"].as_str().unwrap()].clone())
                .collect();
            if q.relevant.iter().any(|a| got.contains(a)) {
                found += 1;
            } else if must {
                missed.push(format!("{mode} {floor:?}: {} → {got:?}", q.text));
            }
        }
        reported.push(format!(
            "{mode} (minScore {floor:?}): {found} of {}",
            queries.len()
        ));
    }
    println!(
        "exact names in the top 10 of {} entities: {}",
        name_of.len(),
        reported.join("; ")
    );
    assert!(missed.is_empty(), "missed:\n{}", missed.join("\n"));
    c.stop().await;
}
