//! Keeping vectors in step with texts: embedding the rows that need it, for one project
//! before a search ([`ensure_embedded`], within a bounded wait), in the background while
//! the server is idle ([`Background`], [`schedule`]), or for the whole database (`cairn
//! reindex`, [`reindex`]), and embedding a search query ([`embed_query`]).
//!
//! The model runs on tokio's blocking pool, never on the thread that serves tool calls,
//! and is loaded on first use, so a server that never searches never loads it. Vectors
//! are written one batch per transaction: a long re-index never holds the write lock
//! for more than one batch.
//!
//! Decisions (docs/code.md, embedding in the background):
//! - Writes never wait for the model. A write call of the `code`, `graph`, `ontology`
//!   or `memory` toolset schedules a background pass (`mcp::dispatch`); so does a
//!   search that answered with texts left unembedded. The pass runs once the server has
//!   had no call in flight for `embed_idle_ms` (1 s), a batch at a time (8 long texts,
//!   up to 32 short ones: about a tenth of a second on two cores),
//!   checking again between batches, so a call that arrives waits for one batch at
//!   most. Before the model is loaded the pass first asks, without it, whether any row
//!   has no vector at all: a server whose writes left nothing to embed (or that never
//!   writes an embeddable row) never loads it. Only `cairn serve` runs the background
//!   (`cairn call` is one call, then gone).
//! - A search (or `query`, or `query_graph` search) embeds its project's rows still
//!   missing, read 512 at a time and embedded sorted by length, up to 32 short texts
//!   a batch ([`by_length`]), for at most `embed_wait_ms` (2 s), and not at all once the rate measured
//!   so far says they cannot all be done in that time (a search right after a large
//!   import then answers after one batch, and the next ones at once, instead of each
//!   paying the whole wait for a small part of the backlog). It answers with what has
//!   vectors and says how many texts have none yet; those are found by their words
//!   only until the background embeds them, which later searches see. One pass embeds
//!   at a time in a process (the search takes its turn after the background's batch).
//! - Two processes may embed the same row: the `embeddings` table is keyed by
//!   (source, row id), so the second write replaces the first with the same vector. A
//!   vector is written only while its row still has the text embedded
//!   ([`store::upsert_current`]), so an edit made meanwhile is never paired with the
//!   old text's vector.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::domain::now;
use crate::embed::{self, vector, Embedder, Embedding};
use crate::error::{Error, Result};
use crate::service::App;
use crate::store::embedding::{self as store, Check, NewEmbedding, Pending, Source, SOURCES};

/// Texts embedded per transaction by `cairn reindex`.
const BATCH: usize = 64;
/// Texts per batch of long texts when a search waits or the background runs (short
/// ones go more to a batch, [`BATCH_CHARS`]): small, so a search keeps its deadline to
/// within one batch, and a call that arrives while the background embeds waits for
/// one batch at most (a few tenths of a second on this machine's two cores).
const SMALL_BATCH: usize = 8;
/// Rows a search reads at a time, to embed sorted by length ([`by_length`]).
const SEARCH_READ: usize = 512;
/// Texts per batch at most when a search embeds: 32 statements of a line or two take
/// about a tenth of a second on two cores, and each of the model's two threads then
/// runs a forward pass of 16, where eight texts (four a thread) spent an eighth of
/// their time repacking weights (profiled).
const SEARCH_BATCH: usize = 32;
/// A search's batch is cut where its count times its longest text would pass this
/// many bytes (32 texts of 128), so long texts go [`SMALL_BATCH`] at a time and
/// the wait past a deadline stays one small batch's.
const BATCH_CHARS: usize = 4096;

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
/// embedder, a batch of similar lengths at a time ([`by_length`]), until none is left, `embed_wait` has passed, or
/// the rate measured so far says the rest cannot be done before it passes (then
/// waiting longer would only delay the answer); call before ranking. Answers how many
/// it embedded; what is left is the background's (scheduled here). A backlog is
/// reported to `app.progress` as `done` of the rows missing when it started, the last
/// report completing it when none is left.
pub async fn ensure_embedded(app: &App, project: &str, sources: &[Source]) -> Result<u64> {
    let e = embedder(app).await?;
    let deadline = Instant::now() + app.config.embed_wait;
    let mut total = 0;
    {
        let mut c = app.store.read().await?;
        for src in sources {
            total += store::count_pending(&mut c, src, e.id(), project).await?;
        }
    }
    if total == 0 {
        return Ok(0);
    }
    app.progress
        .report(0, Some(total), || format!("embedding {total} texts"));
    let mut done = 0u64;
    let mut left = false;
    {
        // One pass at a time in this process: the background finishes its batch first.
        let _turn = app.background.turn.lock().await;
        'sources: for src in sources {
            // Past the last row this pass embedded: rows are read in id order.
            let mut after: Option<String> = None;
            loop {
                if out_of_time(app, deadline, total.saturating_sub(done)) {
                    left = true;
                    break 'sources;
                }
                let rows = {
                    let mut c = app.store.read().await?;
                    let (p, a) = (Some(project), after.as_deref());
                    store::pending_some(&mut c, src, e.id(), p, a, SEARCH_READ).await?
                };
                let Some(last) = rows.last() else {
                    break;
                };
                after = Some(last.row_id.clone());
                for batch in by_length(rows) {
                    if out_of_time(app, deadline, total.saturating_sub(done)) {
                        left = true;
                        break 'sources;
                    }
                    let n = batch.len() as u64;
                    timed_batch(app, &e, src, batch).await?;
                    done += n;
                    let shown = done.min(total.saturating_sub(1));
                    app.progress.report(shown, Some(total), || {
                        format!("embedded {shown} of {total} texts")
                    });
                }
            }
        }
    }
    if left {
        schedule(app);
    } else {
        app.progress.report(total, Some(total), || {
            format!("embedded {total} of {total} texts")
        });
    }
    Ok(done)
}

/// Whether a search should stop embedding: its deadline has passed, or the rate
/// measured so far says the `rest` cannot be done before it does.
fn out_of_time(app: &App, deadline: Instant, rest: u64) -> bool {
    let now = Instant::now();
    if now >= deadline {
        return true;
    }
    app.background.rate().is_some_and(|rate| {
        now + Duration::from_secs_f64((rest as f64 / rate).min(3600.0)) > deadline
    })
}

/// Rows sorted by the length of their text, cut into batches of at most
/// [`SEARCH_BATCH`] texts whose count times the longest text's length stays within
/// [`BATCH_CHARS`] (a batch of fewer than [`SMALL_BATCH`] only at the end): a batch is
/// padded to its longest text, so similar lengths share one, and short texts go many
/// to a batch, where the model's products amortise their setup.
fn by_length(mut rows: Vec<Pending>) -> Vec<Vec<Pending>> {
    rows.sort_by_key(|r| r.text.len());
    let mut out = Vec::new();
    let mut batch: Vec<Pending> = Vec::new();
    for r in rows {
        // Sorted: the text to add is the batch's longest.
        if batch_full(batch.len(), r.text.len()) {
            out.push(std::mem::take(&mut batch));
        }
        batch.push(r);
    }
    if !batch.is_empty() {
        out.push(batch);
    }
    out
}

/// Whether a batch of `n` texts is full before one more, `longest` being the longest
/// text with that one: [`SEARCH_BATCH`] texts, or past [`BATCH_CHARS`] of padded text
/// once it holds [`SMALL_BATCH`].
fn batch_full(n: usize, longest: usize) -> bool {
    n >= SEARCH_BATCH || (n >= SMALL_BATCH && (n + 1) * longest > BATCH_CHARS)
}

/// The longest prefix of `rows` (in id order, as the background reads them) that
/// [`by_length`] would keep in one batch: a backlog of short texts goes up to
/// [`SEARCH_BATCH`] at a time, long ones [`SMALL_BATCH`], so a call that arrives
/// meanwhile waits about as long either way.
fn first_batch(mut rows: Vec<Pending>) -> Vec<Pending> {
    let mut longest = 0;
    let mut n = 0;
    for r in &rows {
        longest = longest.max(r.text.len());
        if batch_full(n, longest) {
            break;
        }
        n += 1;
    }
    rows.truncate(n);
    rows
}

/// The background embedder of one server (see the module doc): which calls are in
/// flight, when the last one ended, and the turn every embedding pass takes.
#[derive(Default)]
pub struct Background {
    enabled: AtomicBool,
    started: AtomicBool,
    stopped: AtomicBool,
    calls: AtomicUsize,
    last_call: Mutex<Option<Instant>>,
    wake: tokio::sync::Notify,
    /// Held by whichever pass is embedding (a search's or the background's).
    turn: tokio::sync::Mutex<()>,
    /// Texts per second over the last batches (a moving average), once measured.
    rate: Mutex<Option<f64>>,
    /// Per source, the last row id the background embedded.
    cursors: Mutex<std::collections::HashMap<&'static str, String>>,
}

/// A tool call in flight, counted by [`Background::call`] until dropped.
pub struct CallGuard<'a>(&'a Background);

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        if let Ok(mut t) = self.0.last_call.lock() {
            *t = Some(Instant::now());
        }
        self.0.calls.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Background {
    /// Lets [`schedule`] run passes (`cairn serve` only).
    pub fn enable(&self) {
        self.enabled.store(true, Ordering::SeqCst);
    }

    /// Ends the background at its next check (the server is stopping).
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.wake.notify_one();
    }

    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    fn cursor(&self, source: &str) -> Option<String> {
        self.cursors.lock().ok()?.get(source).cloned()
    }

    fn set_cursor(&self, source: &'static str, last: Option<String>) {
        if let Ok(mut m) = self.cursors.lock() {
            match last {
                Some(id) => m.insert(source, id),
                None => m.remove(source),
            };
        }
    }

    /// Texts per second embedded lately, if any batch was timed.
    fn rate(&self) -> Option<f64> {
        self.rate.lock().ok().and_then(|r| *r)
    }

    fn measured(&self, texts: usize, took: Duration) {
        let now = texts as f64 / took.as_secs_f64().max(1e-3);
        if let Ok(mut r) = self.rate.lock() {
            *r = Some(r.map_or(now, |old| 0.7 * old + 0.3 * now));
        }
    }

    /// Counts a tool call in flight until the guard is dropped: the background waits
    /// for none to be in flight, and none to have ended for `embed_idle`.
    pub fn call(&self) -> CallGuard<'_> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        CallGuard(self)
    }

    /// Waits until no call is in flight and none ended within `idle`, or the stop.
    async fn idle(&self, idle: Duration) {
        loop {
            if self.stopped() {
                return;
            }
            let since = self
                .last_call
                .lock()
                .ok()
                .and_then(|t| t.map(|t| t.elapsed()))
                .unwrap_or(idle);
            let wait = if self.calls.load(Ordering::SeqCst) > 0 {
                idle
            } else if since >= idle {
                return;
            } else {
                idle - since
            };
            tokio::time::sleep(wait.max(Duration::from_millis(10))).await;
        }
    }
}

/// The texts of every project waiting for a vector (from the loaded model; before
/// one is loaded, those with none at all): the background's backlog, for `/metrics`.
pub async fn backlog(app: &App) -> Result<u64> {
    let model = app.embedder.loaded();
    let mut c = app.store.read().await?;
    let mut n = 0;
    for src in SOURCES {
        n += store::count_waiting(&mut c, src, model).await?;
    }
    Ok(n)
}

/// Asks the background for a pass once the server is idle, starting it on first use;
/// nothing unless the server enabled it.
pub fn schedule(app: &App) {
    let bg = &app.background;
    if !bg.enabled.load(Ordering::SeqCst) || bg.stopped() {
        return;
    }
    if !bg.started.swap(true, Ordering::SeqCst) {
        // Its reports go nowhere: no caller asked for them.
        tokio::spawn(run(app.with_progress(Default::default())));
    }
    bg.wake.notify_one();
}

/// The background task: waits to be asked, then embeds batch by batch while the
/// server is idle until nothing is left.
async fn run(app: App) {
    let bg = app.background.clone();
    loop {
        bg.wake.notified().await;
        loop {
            bg.idle(app.config.embed_idle).await;
            if bg.stopped() {
                return;
            }
            match background_batch(&app).await {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "background embedding paused until the next write or search");
                    break;
                }
            }
        }
    }
}

/// One background batch: up to [`SEARCH_BATCH`] rows ([`first_batch`]) of the first source that has rows
/// without a vector from the running embedder, in any project. Answers false when
/// there was nothing to embed.
async fn background_batch(app: &App) -> Result<bool> {
    if app.embedder.loaded().is_none() {
        // Asked without the model, so that nothing to embed means no model loaded.
        let mut c = app.store.read().await?;
        let mut any = false;
        for src in SOURCES {
            if store::any_without_vector(&mut c, src).await? {
                any = true;
                break;
            }
        }
        if !any {
            return Ok(false);
        }
    }
    let e = embedder(app).await?;
    let _turn = app.background.turn.lock().await;
    for src in SOURCES {
        // Past the last row of this source's previous batch; once nothing is left
        // there, from the start again (rows whose text changed since, or written by
        // a process whose ids sort lower).
        let after = app.background.cursor(src.name);
        let mut rows = {
            let mut c = app.store.read().await?;
            store::pending_some(&mut c, src, e.id(), None, after.as_deref(), SEARCH_BATCH).await?
        };
        if rows.is_empty() && after.is_some() {
            let mut c = app.store.read().await?;
            rows = store::pending_some(&mut c, src, e.id(), None, None, SEARCH_BATCH).await?;
        }
        let rows = first_batch(rows);
        app.background
            .set_cursor(src.name, rows.last().map(|r| r.row_id.clone()));
        if !rows.is_empty() {
            timed_batch(app, &e, src, rows).await?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// Embeds and writes one small batch, timing it for the rate a search's wait uses.
async fn timed_batch(
    app: &App,
    e: &Arc<dyn Embedder>,
    src: &Source,
    rows: Vec<Pending>,
) -> Result<()> {
    let (n, t) = (rows.len(), Instant::now());
    write_batches(app, e, src, rows, &mut |_| {}).await?;
    app.background.measured(n, t.elapsed());
    Ok(())
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
            let e = NewEmbedding {
                source: src.name,
                row_id: &r.row_id,
                project_id: &r.project_id,
                model: e.id(),
                dim: v.vector.len(),
                vector: &blob,
                text_hash: &hash,
                truncated: v.truncated,
                embedded_at: &ts,
            };
            // A row whose text changed since it was read keeps no vector: the next
            // pass embeds its new text.
            if store::upsert_current(&mut tx, src, &e, &r.text).await? {
                truncated += u64::from(v.truncated);
            }
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
            embed_wait: std::time::Duration::from_secs(60),
            embed_idle: std::time::Duration::from_secs(1),
            ontology: Default::default(),
            http: Default::default(),
        };
        let store = Store::open(&cfg.db_path, &Default::default())
            .await
            .unwrap();
        App::new(store, cfg)
    }

    fn rows(lens: &[usize]) -> Vec<Pending> {
        lens.iter()
            .enumerate()
            .map(|(i, &n)| Pending {
                row_id: format!("r{i:03}"),
                project_id: "p".into(),
                text: "x".repeat(n),
            })
            .collect()
    }

    /// Short texts go 32 to a batch, long ones 8, sorted by length; the background's
    /// batch is a prefix in id order within the same bounds.
    #[test]
    fn batches_follow_the_texts_lengths() {
        let mut lens = vec![40; 70];
        lens.extend([900; 10]);
        lens[3] = 10;
        let batches = by_length(rows(&lens));
        let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![32, 32, 8, 8]);
        assert_eq!(batches[0][0].text.len(), 10);
        assert!(batches[3].iter().all(|r| r.text.len() == 900));
        assert_eq!(first_batch(rows(&lens)).len(), 32);
        assert_eq!(first_batch(rows(&[900; 20])).len(), 8);
        assert_eq!(first_batch(rows(&[5000])).len(), 1);
        assert!(first_batch(Vec::new()).is_empty());
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

        // A vector of a text that changed since it was read is not written: the row
        // keeps needing one.
        let e = embedder(&app).await.unwrap();
        let stale = Pending {
            row_id: ids[1].clone(),
            project_id: ids[1].clone(),
            text: "Search service, as it was".into(),
        };
        containers::update(
            &app,
            ContainerType::Project,
            &ids[1],
            1,
            NewContainer {
                description: Some("ranking".into()),
                ..NewContainer::default()
            },
        )
        .await
        .unwrap();
        let mut c = app.store.write().await.unwrap();
        crate::store::embedding::remove(&mut c, "project", &ids[1])
            .await
            .unwrap();
        c.commit().await.unwrap();
        write_batches(&app, &e, &PROJECTS, vec![stale], &mut |_| {})
            .await
            .unwrap();
        let mut c = app.store.read().await.unwrap();
        let missing = crate::store::embedding::count_pending(&mut c, &PROJECTS, e.id(), &ids[1])
            .await
            .unwrap();
        drop(c);
        assert_eq!(missing, 1, "the old text's vector was written");
        let r = reindex(&app, &[PROJECTS], false, &mut |_, _| {})
            .await
            .unwrap();
        assert_eq!(r.embedded, 1);
        let r = reindex(&app, &[PROJECTS], false, &mut |_, _| {})
            .await
            .unwrap();
        assert_eq!(r.embedded, 0);

        // Deleting the project removes its vectors.
        containers::delete(&app, ContainerType::Project, &ids[2], None, false)
            .await
            .ok();
        let (keys, _) = load_vectors(&app, &ids[2], &[]).await.unwrap();
        assert!(keys.is_empty());
    }
}
