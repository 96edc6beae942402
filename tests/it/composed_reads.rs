//! A composed read answers one state of the database. While the test's own
//! connection rewrites, in one transaction each time, a task's summary and status,
//! its section's content and its feature's and project's summaries to the same
//! counter, every composed read (a task get with its sections, the briefing, a
//! feature or project get with its task counts, the overviews) must answer parts
//! that agree: the summary the task row shows is the content its section shows, and
//! a container's summary's parity is the status its task counts show. Reads made
//! part by part, each its own transaction, could pair one write's task with the
//! next write's section. On SQLite and PostgreSQL alike.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};
use sqlx::Connection;

use crate::harness::{id_of, Cairn, TempDir};
use crate::memory_stored::pg;

/// The status the writer gives the task with counter `n`.
fn status_of(n: u64) -> &'static str {
    if n.is_multiple_of(2) {
        "NEW"
    } else {
        "ACTIVE"
    }
}

/// The counter a summary holds.
fn n_of(v: &Value) -> u64 {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not a counter: {v}"))
}

/// Checks that `counts` (a `taskCounts`) is one task, in the status of counter `n`.
fn agree(counts: &Value, n: u64, what: &str) {
    assert_eq!(
        counts[status_of(n)],
        1,
        "{what}: summary {n} with task counts {counts}"
    );
    assert_eq!(counts["total"], 1, "{what}: {counts}");
}

#[tokio::test]
async fn a_composed_read_sees_one_state_under_a_concurrent_writer() {
    let dir = TempDir::new();
    let db = dir.path().join("c.db");
    let c = Cairn::on(&db, &[]).await;
    let p = c.project("composed").await;
    let f = c.feature(&p, "F").await;
    let t = id_of(
        &c.task(json!({"title":"T","projectId":p,"featureId":f,"summary":"0"}))
            .await,
    );
    c.ok(
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":t,"title":"Notes","content":"0"}),
    )
    .await;

    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicU64::new(0));
    let writer = {
        let (stop, writes, db) = (stop.clone(), writes.clone(), db.clone());
        let (t, f, p) = (t.clone(), f.clone(), p.clone());
        tokio::spawn(async move {
            let mut conn = crate::harness::sql(&db).await;
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let v = n.to_string();
                let mut tx = conn.begin().await.expect("begin");
                for (sql, id) in [
                    ("UPDATE tasks SET summary = ?, status = ? WHERE id = ?", &t),
                    ("UPDATE sections SET content = ? WHERE entity_id = ?", &t),
                    ("UPDATE features SET summary = ? WHERE id = ?", &f),
                    ("UPDATE projects SET summary = ? WHERE id = ?", &p),
                ] {
                    let mut q = sqlx::query(sqlx::AssertSqlSafe(pg(sql))).bind(v.clone());
                    if sql.contains("status") {
                        q = q.bind(status_of(n));
                    }
                    q.bind(id.clone()).execute(&mut *tx).await.expect(sql);
                }
                tx.commit().await.expect("commit");
                writes.store(n, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
            conn.close().await.ok();
        })
    };

    for round in 0..30 {
        let g = c
            .ok(
                "query_container",
                json!({"operation":"get","containerType":"task","id":t,"includeSections":true,
                       "includeGraphContext":true,"includeMemory":true}),
            )
            .await;
        assert_eq!(
            g["task"]["summary"], g["sections"][0]["content"],
            "round {round}: {g:#}"
        );
        let b = c
            .ok(
                "query_container",
                json!({"operation":"get","containerType":"task","id":t,"brief":true}),
            )
            .await;
        assert_eq!(
            b["task"]["summary"], b["sections"][0]["content"],
            "round {round}: {b:#}"
        );
        let g = c
            .ok(
                "query_container",
                json!({"operation":"get","containerType":"feature","id":f}),
            )
            .await;
        agree(
            &g["taskCounts"],
            n_of(&g["feature"]["summary"]),
            "feature get",
        );
        let g = c
            .ok(
                "query_container",
                json!({"operation":"get","containerType":"project","id":p}),
            )
            .await;
        agree(
            &g["taskCounts"],
            n_of(&g["project"]["summary"]),
            "project get",
        );
        let o = c
            .ok(
                "query_container",
                json!({"operation":"overview","containerType":"project"}),
            )
            .await;
        let row = &o["projects"][0];
        agree(
            &row["taskCounts"],
            n_of(&row["summary"]),
            "projects overview",
        );
        let o = c
            .ok(
                "query_container",
                json!({"operation":"overview","containerType":"project","id":p}),
            )
            .await;
        let n = n_of(&o["project"]["summary"]);
        agree(&o["taskCounts"], n, "project overview");
        agree(
            &o["features"][0]["taskCounts"],
            n,
            "project overview's feature",
        );
    }
    stop.store(true, Ordering::Relaxed);
    writer.await.expect("the writer");
    // The reads ran while the writer wrote, not before or after it.
    assert!(
        writes.load(Ordering::Relaxed) >= 30,
        "only {} writes",
        writes.load(Ordering::Relaxed)
    );
    c.stop().await;
}
