//! Tests: a transaction that fails at any point (its BEGIN, a statement, its COMMIT,
//! its ROLLBACK, a nested catch-up write) leaves no connection that the pool lends
//! again inside a transaction. The store writes on one connection it holds
//! (`store::writer`), so every test's next write would meet a connection left
//! behind. SQLite's faults are made with its own
//! means: a trigger's `RAISE(ROLLBACK)` ends the whole transaction under sqlx (as a
//! full disk may), a deferred foreign key fails the COMMIT, another connection's
//! write lock fails the BEGIN. (The same faults on PostgreSQL, and a real full disk,
//! are tested through MCP: tests/it/full_disk.rs and tests/it/errors.rs.)

use std::time::Duration;

use super::{Error, Options, Store, TestDir, Tx};

const SETUP: &[&str] = &[
    "CREATE TABLE f_rows (x TEXT NOT NULL)",
    "CREATE TRIGGER f_rollback BEFORE INSERT ON f_rows WHEN NEW.x = 'rollback' \
     BEGIN SELECT RAISE(ROLLBACK, 'rolled back by a trigger'); END",
    "CREATE TABLE f_parent (id INTEGER PRIMARY KEY)",
    "CREATE TABLE f_child (p INTEGER NOT NULL REFERENCES f_parent (id) DEFERRABLE INITIALLY DEFERRED)",
];

/// A store on a new file with one pooled connection and a short busy timeout.
async fn store(dir: &TestDir) -> Store {
    let o = Options {
        busy_timeout: Duration::from_millis(100),
        connections: Some(1),
        ..Options::default()
    };
    let s = Store::open(&dir.0.join("f.db"), &o).await.unwrap();
    let mut tx = s.write().await.unwrap();
    for sql in SETUP {
        sqlx::query(*sql).execute(tx.db()).await.unwrap();
    }
    tx.commit().await.unwrap();
    s
}

async fn insert(tx: &mut Tx, x: &str) -> super::Result<()> {
    sqlx::query("INSERT INTO f_rows (x) VALUES (?)")
        .bind(x)
        .execute(tx.db())
        .await?;
    Ok(())
}

async fn rows(s: &Store) -> Vec<String> {
    let mut c = s.read().await.unwrap();
    sqlx::query_scalar("SELECT x FROM f_rows ORDER BY rowid")
        .fetch_all(c.db())
        .await
        .unwrap()
}

/// Three writes in a row commit: the pool's connection (or the one replacing it)
/// is outside any transaction.
async fn writes_again(s: &Store, tag: &str) {
    for i in 0..3 {
        let mut tx = s
            .write()
            .await
            .unwrap_or_else(|e| panic!("{tag}: write {i}: {e}"));
        insert(&mut tx, &format!("{tag}{i}")).await.unwrap();
        tx.commit().await.unwrap();
    }
    let got = rows(s).await;
    for i in 0..3 {
        assert!(got.contains(&format!("{tag}{i}")), "{tag}: {got:?}");
    }
}

#[tokio::test]
async fn a_statement_that_ended_the_transaction_leaves_no_connection_inside_it() {
    let d = TestDir::new("fault-stmt");
    let s = store(&d).await;
    let mut tx = s.write().await.unwrap();
    insert(&mut tx, "before").await.unwrap();
    assert!(insert(&mut tx, "rollback").await.is_err());
    drop(tx);
    writes_again(&s, "after").await;
    assert!(!rows(&s).await.contains(&"before".to_string()));
}

#[tokio::test]
async fn a_write_dropped_uncommitted_keeps_nothing_and_the_next_writes_run() {
    let d = TestDir::new("fault-drop");
    let s = store(&d).await;
    let mut tx = s.write().await.unwrap();
    insert(&mut tx, "dropped").await.unwrap();
    drop(tx);
    // A write of one statement runs outside any transaction: it commits alone.
    let mut one = s.write_one().await.unwrap();
    insert(&mut one, "alone").await.unwrap();
    drop(one);
    writes_again(&s, "after").await;
    let got = rows(&s).await;
    assert!(!got.contains(&"dropped".to_string()), "{got:?}");
    assert!(got.contains(&"alone".to_string()), "{got:?}");
}

#[tokio::test]
async fn a_commit_that_fails_leaves_no_connection_inside_the_transaction() {
    let d = TestDir::new("fault-commit");
    let s = store(&d).await;
    // The transaction is still open when its COMMIT fails (a deferred foreign key).
    let mut tx = s.write().await.unwrap();
    insert(&mut tx, "dangling").await.unwrap();
    sqlx::query("INSERT INTO f_child (p) VALUES (42)")
        .execute(tx.db())
        .await
        .unwrap();
    assert!(tx.commit().await.is_err());
    writes_again(&s, "a").await;
    // The transaction is gone when its COMMIT is sent (SQLite rolled it back).
    let mut tx = s.write().await.unwrap();
    assert!(insert(&mut tx, "rollback").await.is_err());
    assert!(tx.commit().await.is_err());
    writes_again(&s, "b").await;
    assert!(!rows(&s).await.contains(&"dangling".to_string()));
}

#[tokio::test]
async fn a_rollback_that_fails_keeps_nothing_and_no_connection_inside_it() {
    let d = TestDir::new("fault-rollback");
    let s = store(&d).await;
    let mut tx = s.write().await.unwrap();
    insert(&mut tx, "before").await.unwrap();
    assert!(insert(&mut tx, "rollback").await.is_err());
    // Nothing is left to roll back: what the caller asked for holds.
    tx.rollback().await.unwrap();
    writes_again(&s, "after").await;
    assert!(!rows(&s).await.contains(&"before".to_string()));
}

#[tokio::test]
async fn a_begin_that_fails_leaves_the_pool_usable() {
    let d = TestDir::new("fault-begin");
    let s = store(&d).await;
    // Another pool on the file holds the write lock past the busy timeout.
    let other = Store::open(&d.0.join("f.db"), &Options::default())
        .await
        .unwrap();
    let mut held = other.write().await.unwrap();
    insert(&mut held, "other").await.unwrap();
    assert!(matches!(s.write().await.err(), Some(Error::Busy)));
    held.commit().await.unwrap();
    writes_again(&s, "after").await;
}

#[tokio::test]
async fn a_nested_write_that_fails_leaves_no_connection_inside_it() {
    let d = TestDir::new("fault-nested");
    let s = store(&d).await;
    let mut conn = s.read().await.unwrap();
    {
        let mut n = conn.begin_write().await.unwrap();
        let failed = sqlx::query("INSERT INTO f_rows (x) VALUES ('rollback')")
            .execute(n.db())
            .await;
        assert!(failed.is_err());
    }
    // The connection still reads for the rest of its call.
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM f_rows")
        .fetch_one(conn.db())
        .await
        .unwrap();
    assert_eq!(n, 0);
    drop(conn);
    writes_again(&s, "after").await;
}
