//! The workflow pipelines in force, as last applied by `sync`.

use crate::domain::{ItemKind, Pipeline, Pipelines};
use crate::store::Conn;
use crate::store::{Error, Result};

pub async fn load(conn: &mut Conn) -> Result<Pipelines> {
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT kind, states FROM workflow_pipelines")
        .fetch_all(conn.db())
        .await?;
    let mut p = Pipelines::default();
    for (kind, states) in rows {
        let names: Vec<String> = states.split(',').map(str::to_string).collect();
        let k = if kind == "task" {
            ItemKind::Task
        } else {
            ItemKind::Feature
        };
        let pipeline = Pipeline::from_names(k, &names).map_err(|e| {
            Error::Internal(format!("stored {kind} pipeline '{states}' is invalid: {e}"))
        })?;
        match k {
            ItemKind::Task => p.task = pipeline,
            ItemKind::Feature => p.feature = pipeline,
        }
    }
    Ok(p)
}

pub async fn save(conn: &mut Conn, p: &Pipeline, now: &str) -> Result<()> {
    sqlx::query(
        "INSERT INTO workflow_pipelines (kind, states, version, updated_at) VALUES (?, ?, 1, ?) \
         ON CONFLICT(kind) DO UPDATE SET states = excluded.states, version = workflow_pipelines.version + 1, updated_at = excluded.updated_at",
    )
    .bind(p.kind.as_str())
    .bind(p.names().join(","))
    .bind(now)
    .execute(conn.db())
    .await?;
    Ok(())
}
