//! Keeping vectors in step with texts: embedding the rows that need it, for one project
//! before a search ([`ensure_embedded`]) or for the whole database (`cairn reindex`,
//! [`reindex`]), and embedding a search query ([`embed_query`]).
//!
//! The model runs on tokio's blocking pool, never on the thread that serves tool calls,
//! and is loaded on first use, so a server that never searches never loads it. Vectors
//! are written one batch per transaction: a long re-index never holds the write lock
//! for more than one batch.

use std::sync::Arc;

use crate::domain::now;
use crate::embed::{self, vector, Embedder, Embedding};
use crate::error::{Error, Result};
use crate::service::App;
use crate::store::embedding::{self as store, Check, NewEmbedding, Pending, Source};

/// Texts embedded per transaction.
const BATCH: usize = 64;

/// What a pass did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// The embedder that ran (`all-minilm-l6-v2`, `hashing-v1`).
    pub embedder: &'static str,
    /// Why the fallback ran instead of the model, when it did.
    pub fallback_reason: Option<String>,
    pub embedded: u64,
    /// Of those, how many were longer than the model's window.
    pub truncated: u64,
    /// Vectors removed because their row or its text is gone.
    pub pruned: u64,
}

/// The embedder, loaded on first use (off the async thread). Loading reads about
/// 90 MB and takes a noticeable moment, so a caller listening for progress hears of it.
pub async fn embedder(app: &App) -> Result<Arc<dyn Embedder>> {
    if app.embedder.loaded().is_none() {
        app.progress
            .report(0, None, || "loading the embedding model".into());
    }
    let lazy = app.embedder.clone();
    tokio::task::spawn_blocking(move || lazy.get())
        .await
        .map_err(|e| Error::Internal(format!("loading the embedder: {e}")))
}

/// Embeds texts on the blocking pool.
pub async fn embed_texts(e: Arc<dyn Embedder>, texts: Vec<String>) -> Result<Vec<Embedding>> {
    tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        e.embed(&refs)
    })
    .await
    .map_err(|e| Error::Internal(format!("embedding: {e}")))?
    .map_err(|e| Error::Internal(e.to_string()))
}

/// A search query's vector (unpadded, cut to the window; `truncated` says so), and the
/// embedder that made it.
pub async fn embed_query(app: &App, query: &str) -> Result<(Embedding, &'static str)> {
    let e = embedder(app).await?;
    let id = e.id();
    let mut v = embed_texts(e, vec![query.to_string()]).await?;
    let one = v
        .pop()
        .ok_or_else(|| Error::Internal("the embedder returned no vector".into()))?;
    Ok((one, id))
}

/// Embeds the rows of `sources` in `project` that have no vector from the running
/// embedder; call before ranking. Answers how many were embedded. A backlog (a first
/// search, a model change) can take minutes, so every batch is reported to
/// `app.progress` as `done` of the whole backlog.
pub async fn ensure_embedded(app: &App, project: &str, sources: &[Source]) -> Result<u64> {
    let e = embedder(app).await?;
    let mut work = Vec::new();
    {
        let mut c = app.store.read().await?;
        for src in sources {
            let rows = store::pending(
                &mut c,
                src,
                e.id(),
                Some(project),
                Check::Missing,
                embed::text_hash,
            )
            .await?;
            work.push((src, rows));
        }
    }
    let total: u64 = work.iter().map(|(_, r)| r.len() as u64).sum();
    if total > 0 {
        app.progress
            .report(0, Some(total), || format!("embedding {total} texts"));
    }
    let mut done = 0;
    for (src, rows) in work {
        let base = done;
        let p = &app.progress;
        done += write_batches(app, &e, src, rows, &mut |k| {
            p.report(base + k, Some(total), || {
                format!("embedded {} of {total} texts", base + k)
            })
        })
        .await?
        .0;
    }
    Ok(done)
}

/// Re-embeds a database: every row of `sources` whose vector is missing, from another
/// embedder, or of an older text (`all`: every row). `progress(done, total)` is called
/// after each batch.
pub async fn reindex(
    app: &App,
    sources: &[Source],
    all: bool,
    progress: &mut (dyn FnMut(u64, u64) + Send),
) -> Result<Report> {
    let e = embedder(app).await?;
    let check = if all { Check::All } else { Check::Thorough };
    let mut work = Vec::new();
    let mut pruned = 0;
    for src in sources {
        let mut tx = app.store.write().await?;
        pruned += store::prune(&mut tx, src).await?;
        tx.commit().await?;
        let mut c = app.store.read().await?;
        let rows = store::pending(&mut c, src, e.id(), None, check, embed::text_hash).await?;
        work.push((src, rows));
    }
    let total: u64 = work.iter().map(|(_, r)| r.len() as u64).sum();
    progress(0, total);
    let mut done = 0;
    let mut truncated = 0;
    for (src, rows) in work {
        let base = done;
        let (n, t) = write_batches(app, &e, src, rows, &mut |k| progress(base + k, total)).await?;
        done += n;
        truncated += t;
    }
    Ok(Report {
        embedder: e.id(),
        fallback_reason: app.embedder.fallback_reason().map(str::to_string),
        embedded: done,
        truncated,
        pruned,
    })
}

/// Embeds `rows` in batches, one transaction each; answers (embedded, truncated).
async fn write_batches(
    app: &App,
    e: &Arc<dyn Embedder>,
    src: &Source,
    rows: Vec<Pending>,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<(u64, u64)> {
    let (mut done, mut truncated) = (0u64, 0u64);
    for chunk in rows.chunks(BATCH) {
        let texts: Vec<String> = chunk.iter().map(|r| r.text.clone()).collect();
        let vecs = embed_texts(e.clone(), texts).await?;
        let ts = now();
        let mut tx = app.store.write().await?;
        for (r, v) in chunk.iter().zip(&vecs) {
            let blob = vector::to_blob(&v.vector);
            let hash = embed::text_hash(&r.text);
            store::upsert(
                &mut tx,
                &NewEmbedding {
                    source: src.name,
                    row_id: &r.row_id,
                    project_id: &r.project_id,
                    model: e.id(),
                    dim: v.vector.len(),
                    vector: &blob,
                    text_hash: &hash,
                    truncated: v.truncated,
                    embedded_at: &ts,
                },
            )
            .await?;
            truncated += u64::from(v.truncated);
        }
        tx.commit().await?;
        done += chunk.len() as u64;
        progress(done);
    }
    Ok((done, truncated))
}

/// A project's stored vectors from the running embedder, decoded; rows whose BLOB does
/// not decode (damaged) are skipped with a warning and will be re-embedded by reindex.
pub async fn load_vectors(
    app: &App,
    project: &str,
    sources: &[&str],
) -> Result<(Vec<(String, String)>, vector::Matrix)> {
    let e = embedder(app).await?;
    let rows = {
        let mut c = app.store.read().await?;
        store::of_project(&mut c, project, e.id(), sources).await?
    };
    let mut keys = Vec::with_capacity(rows.len());
    let mut m = vector::Matrix::new(e.dim());
    for r in rows {
        match m.push_blob(&r.vector) {
            Some(_) => keys.push((r.source, r.row_id)),
            None => {
                tracing::warn!(source = %r.source, row = %r.row_id, "stored vector has the wrong size; skipped")
            }
        }
    }
    Ok((keys, m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::domain::{ContainerType, Pipelines};
    use crate::service::containers::{self, NewContainer};
    use crate::store::Store;

    /// Projects stand in for the graph's tables, which are not on this branch: the
    /// pass only needs a table with an id, a text and a project.
    const PROJECTS: Source = Source {
        name: "project",
        table: "projects",
        id: "id",
        text: "s.name || ' ' || COALESCE(s.description, '')",
        project: "s.id",
    };

    async fn app(dir: &std::path::Path) -> App {
        let cfg = Config {
            db_path: dir.join("t.db"),
            db_source: crate::config::DbSource::Flag,
            toolsets: vec!["tasks".into()],
            pipelines: Pipelines::default(),
            file: None,
            model_dir: dir.join("no-model"),
            lsp: Default::default(),
            lsp_timeout: std::time::Duration::from_secs(5),
            busy_timeout: std::time::Duration::from_secs(5),
            max_db_bytes: None,
            ontology: Default::default(),
        };
        let store = Store::open(&cfg.db_path, &Default::default()).await.unwrap();
        App::new(store, cfg)
    }

    #[tokio::test]
    async fn reindex_embeds_changed_and_missing_rows_only() {
        let dir = crate::store::TestDir::new("reindex");
        let app = app(&dir.0).await;
        let mut ids = Vec::new();
        for name in ["Payments", "Search", "Billing"] {
            let c = containers::create(
                &app,
                ContainerType::Project,
                NewContainer {
                    name: name.into(),
                    description: Some(format!("{name} service")),
                    ..NewContainer::default()
                },
            )
            .await
            .unwrap();
            if let containers::Container::Project(p) = c {
                ids.push(p.id);
            }
        }
        let mut seen = Vec::new();
        let r = reindex(&app, &[PROJECTS], false, &mut |d, t| seen.push((d, t)))
            .await
            .unwrap();
        assert_eq!(r.embedder, embed::hashing::ID);
        assert!(r.fallback_reason.is_some());
        assert_eq!(r.embedded, 3);
        assert_eq!(seen.last(), Some(&(3, 3)));

        // Nothing changed: nothing to do.
        let r = reindex(&app, &[PROJECTS], false, &mut |_, _| {})
            .await
            .unwrap();
        assert_eq!(r.embedded, 0);

        // A changed text (no trigger here) is caught by the hash; --all redoes all.
        containers::update(
            &app,
            ContainerType::Project,
            &ids[0],
            1,
            NewContainer {
                description: Some("ledger".into()),
                ..NewContainer::default()
            },
        )
        .await
        .unwrap();
        let r = reindex(&app, &[PROJECTS], false, &mut |_, _| {})
            .await
            .unwrap();
        assert_eq!(r.embedded, 1);
        assert_eq!(
            ensure_embedded(&app, &ids[1], &[PROJECTS]).await.unwrap(),
            0
        );
        let r = reindex(&app, &[PROJECTS], true, &mut |_, _| {})
            .await
            .unwrap();
        assert_eq!(r.embedded, 3);

        let (keys, m) = load_vectors(&app, &ids[2], &["project"]).await.unwrap();
        assert_eq!(keys, vec![("project".to_string(), ids[2].clone())]);
        let (q, _) = embed_query(&app, "Billing service").await.unwrap();
        assert!(m.top_k(&q.vector, 1, 0.0)[0].1 > 0.9);

        // Deleting the project removes its vectors.
        containers::delete(&app, ContainerType::Project, &ids[2], None, false)
            .await
            .ok();
        let (keys, _) = load_vectors(&app, &ids[2], &[]).await.unwrap();
        assert!(keys.is_empty());
    }
}
