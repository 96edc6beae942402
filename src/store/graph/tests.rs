//! The graph repository's own tests: generations stamped by inserts and updates, and
//! the search index kept per project.

use super::*;
use crate::store::{Store, TestDir};

async fn scalar(c: &mut Conn, sql: &'static str, id: &str) -> i64 {
    sqlx::query_scalar(sql)
        .bind(id)
        .fetch_one(c.db())
        .await
        .unwrap()
}

/// A fresh store holding project `p` and its task `t`, and its directory.
async fn store() -> (TestDir, Store) {
    let dir = TestDir::new("graph-store");
    let store = dir.store().await;
    let mut c = store.read().await.unwrap();
    for sql in [
        "INSERT INTO projects (id, name, summary, version, created_at, updated_at) \
         VALUES ('p', 'p', '', 1, 'x', 'x')",
        "INSERT INTO tasks (id, project_id, title, summary, status, priority, complexity, \
         version, created_at, updated_at) VALUES ('t', 'p', 't', '', 'NEW', 2, 5, 1, 'x', 'x')",
    ] {
        sqlx::query(sql).execute(c.db()).await.unwrap();
    }
    drop(c);
    (dir, store)
}

fn atom(n: usize, knowledge: &str) -> Atom {
    Atom {
        id: format!("a{n}"),
        project_id: "p".into(),
        molecule_id: None,
        name: format!("atom {n}"),
        paths: vec![format!("src/m{n}/**")],
        knowledge: knowledge.into(),
        related: vec![],
        created_by_task_id: "t".into(),
        last_task_id: "t".into(),
        version: 1,
        created_at: "x".into(),
        updated_at: "x".into(),
    }
}

#[tokio::test]
async fn an_atom_is_stamped_with_the_generation_its_insert_reaches() {
    let (_dir, store) = store().await;
    let mut c = store.read().await.unwrap();
    let atom = |n: usize| atom(n, &"k".repeat(3000));
    const GEN: &str = "SELECT gen FROM graph_atoms WHERE id = ?";
    const NOW: &str = "SELECT generation FROM graph_generations WHERE project_id = ?";
    // The first atom of a project creates its counter; each insert bumps it once,
    // and the row holds the value the bump reached.
    // The row is written once: rewriting it to stamp it would fire the update
    // trigger and bump the counters a second time. The semantic layer's
    // generation follows the graph's, which atoms bump alone.
    for n in 1..=3 {
        insert_atom(&mut c, &atom(n)).await.unwrap();
        assert_eq!(scalar(&mut c, NOW, "p").await, n as i64);
        assert_eq!(scalar(&mut c, GEN, &format!("a{n}")).await, n as i64);
        assert_eq!(
            crate::store::semantic::generation(&mut c, "p")
                .await
                .unwrap(),
            n as i64
        );
    }
    let semantic: i64 =
        sqlx::query_scalar("SELECT count(*) FROM semantic_generations WHERE project_id = 'p'")
            .fetch_one(c.db())
            .await
            .unwrap();
    assert_eq!(semantic, 0, "an atom insert wrote the semantic counter");
    // A row written without a generation (not by Cairn, which always writes it)
    // still moves the counter; since migration 0012 it keeps the default 0.
    sqlx::query(
        "INSERT INTO graph_atoms (id, project_id, name, created_by_task_id, last_task_id, \
         created_at, updated_at) VALUES ('raw', 'p', 'raw', 't', 't', 'x', 'x')",
    )
    .execute(c.db())
    .await
    .unwrap();
    assert_eq!(scalar(&mut c, NOW, "p").await, 4);
    assert_eq!(scalar(&mut c, GEN, "raw").await, 0);
}

#[tokio::test]
async fn an_update_moves_the_generation_once_and_stamps_its_row() {
    let (_dir, store) = store().await;
    let mut c = store.read().await.unwrap();
    const GEN: &str = "SELECT gen FROM graph_atoms WHERE id = ?";
    const NOW: &str = "SELECT generation FROM graph_generations WHERE project_id = ?";
    insert_atom(&mut c, &atom(1, "k")).await.unwrap();
    insert_atom(&mut c, &atom(2, "k")).await.unwrap();
    let mut a = atom(1, "rewritten");
    a.updated_at = "y".into();
    assert_eq!(update_atom(&mut c, &a, 1).await.unwrap(), 2);
    assert_eq!(scalar(&mut c, NOW, "p").await, 3);
    assert_eq!(scalar(&mut c, GEN, "a1").await, 3);
    // A stale version writes nothing and moves nothing.
    assert!(update_atom(&mut c, &a, 1).await.is_err());
    assert_eq!(scalar(&mut c, NOW, "p").await, 3);
    // A write that leaves `gen` alone (a touch, a detach) is stamped by the trigger.
    crate::store::lock::touch(&mut c, crate::store::lock::ATOMS, "a2", "z")
        .await
        .unwrap();
    assert_eq!(scalar(&mut c, NOW, "p").await, 4);
    assert_eq!(scalar(&mut c, GEN, "a2").await, 4);
    let got = get_atom(&mut c, "a1").await.unwrap().unwrap();
    assert_eq!((got.knowledge.as_str(), got.version), ("rewritten", 2));
}

/// A catch-up removes only its own project's index rows: an atom deleted from one
/// project and written again under its id in another may take the same rowid.
#[tokio::test]
async fn a_search_leaves_another_projects_index_rows_alone() {
    use crate::store::semantic::{lexical, Fts};
    let (_dir, store) = store().await;
    let mut c = store.read().await.unwrap();
    sqlx::query(
        "INSERT INTO projects (id, name, summary, version, created_at, updated_at) \
         VALUES ('q', 'q', '', 1, 'x', 'x')",
    )
    .execute(c.db())
    .await
    .unwrap();
    async fn search(c: &mut Conn, project: &str) -> Vec<String> {
        lexical(c, Fts::Atoms, project, "ledger", 10)
            .await
            .unwrap()
            .into_iter()
            .map(|x| x.0)
            .collect()
    }
    async fn rowid(c: &mut Conn) -> i64 {
        sqlx::query_scalar("SELECT rowid FROM graph_atoms WHERE id = 'a1'")
            .fetch_one(c.db())
            .await
            .unwrap()
    }
    insert_atom(&mut c, &atom(1, "ledger")).await.unwrap();
    assert_eq!(search(&mut c, "p").await, ["a1"]);
    let was = rowid(&mut c).await;
    sqlx::query("DELETE FROM graph_atoms WHERE id = 'a1'")
        .execute(c.db())
        .await
        .unwrap();
    let moved = Atom {
        project_id: "q".into(),
        ..atom(1, "ledger")
    };
    insert_atom(&mut c, &moved).await.unwrap();
    assert_eq!(rowid(&mut c).await, was);
    assert_eq!(search(&mut c, "q").await, ["a1"]);
    assert!(search(&mut c, "p").await.is_empty());
    assert_eq!(search(&mut c, "q").await, ["a1"]);
    // A molecule write moves the generation but changes no atom: the search reads
    // and leaves its mark behind instead of taking the write lock.
    const MARK: &str = "SELECT gen FROM search_indexed WHERE project_id = 'q'";
    let before: i64 = sqlx::query_scalar(MARK).fetch_one(c.db()).await.unwrap();
    let m = Molecule {
        id: "m1".into(),
        project_id: "q".into(),
        name: "m".into(),
        knowledge: String::new(),
        related: vec![],
        created_by_task_id: "t".into(),
        last_task_id: "t".into(),
        version: 1,
        created_at: "x".into(),
        updated_at: "x".into(),
    };
    insert_molecule(&mut c, &m).await.unwrap();
    assert_eq!(search(&mut c, "q").await, ["a1"]);
    let after: i64 = sqlx::query_scalar(MARK).fetch_one(c.db()).await.unwrap();
    assert_eq!(after, before);
}

#[tokio::test]
async fn a_search_sees_every_atom_written_before_it() {
    use crate::store::semantic::{lexical, Fts};
    let (_dir, store) = store().await;
    let mut c = store.read().await.unwrap();
    async fn search(c: &mut Conn, word: &str) -> Vec<String> {
        let mut ids: Vec<String> = lexical(c, Fts::Atoms, "p", word, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|x| x.0)
            .collect();
        ids.sort();
        ids
    }
    async fn indexed(c: &mut Conn) -> i64 {
        sqlx::query_scalar("SELECT count(*) FROM graph_atoms_fts")
            .fetch_one(c.db())
            .await
            .unwrap()
    }
    for n in 1..=3 {
        insert_atom(&mut c, &atom(n, "ledger retries"))
            .await
            .unwrap();
    }
    // Writes leave the index alone; the search brings it up to date first.
    assert_eq!(indexed(&mut c).await, 0);
    assert_eq!(search(&mut c, "ledger").await, ["a1", "a2", "a3"]);
    assert_eq!(indexed(&mut c).await, 3);
    // An edit replaces the old text, a delete removes the row.
    sqlx::query("UPDATE graph_atoms SET knowledge = 'invoices' WHERE id = 'a2'")
        .execute(c.db())
        .await
        .unwrap();
    sqlx::query("DELETE FROM graph_atoms WHERE id = 'a3'")
        .execute(c.db())
        .await
        .unwrap();
    assert_eq!(search(&mut c, "ledger").await, ["a1"]);
    assert_eq!(search(&mut c, "invoices").await, ["a2"]);
    // An atom deleted and written again under its id (a new rowid) before a
    // search: its old text goes with its old index row.
    sqlx::query("DELETE FROM graph_atoms WHERE id = 'a1'")
        .execute(c.db())
        .await
        .unwrap();
    insert_atom(&mut c, &atom(1, "receipts")).await.unwrap();
    assert!(search(&mut c, "ledger").await.is_empty());
    assert_eq!(search(&mut c, "receipts").await, ["a1"]);
    assert_eq!(indexed(&mut c).await, 2);
    // The newest atom deleted, and another written, which takes its rowid: the
    // deleted atom's index row goes, the new one's is written in its place.
    let rowid = |id: &'static str| {
        sqlx::query_scalar::<_, i64>("SELECT rowid FROM graph_atoms WHERE id = ?").bind(id)
    };
    let newest = rowid("a1").fetch_one(c.db()).await.unwrap();
    sqlx::query("DELETE FROM graph_atoms WHERE id = 'a1'")
        .execute(c.db())
        .await
        .unwrap();
    insert_atom(&mut c, &atom(4, "ledger")).await.unwrap();
    assert_eq!(rowid("a4").fetch_one(c.db()).await.unwrap(), newest);
    assert!(search(&mut c, "receipts").await.is_empty());
    assert_eq!(search(&mut c, "ledger").await, ["a4"]);
    assert_eq!(indexed(&mut c).await, 2);
    // A deleted project takes its index rows and its mark along.
    sqlx::query("DELETE FROM projects WHERE id = 'p'")
        .execute(c.db())
        .await
        .unwrap();
    assert_eq!(indexed(&mut c).await, 0);
    let marks: i64 = sqlx::query_scalar("SELECT count(*) FROM search_indexed")
        .fetch_one(c.db())
        .await
        .unwrap();
    assert_eq!(marks, 0);
}
