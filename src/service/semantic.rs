//! The semantic layer: a project's vectors held in memory ([`Snapshot`], [`Cache`])
//! and `search` over code entities and references. Ranking itself, for every
//! search, is `service::ranking` (re-exported here).
//!
//! Nothing here knows MCP or SQL: rows come from `store`, vectors from `embed`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::domain::code::Scope;
use crate::embed::vector::Matrix;
use crate::error::{Error, Result};
use crate::service::embedding;
use crate::service::App;
use crate::store::embedding::{self as estore, SOURCES};
use crate::store::semantic::{self as sstore, Fts};

pub use crate::service::ranking::{
    fts_tokens, fuse, name_words, query_name, rank, Hit, Match, Mode, Parts, Rank, Ranked,
};
use crate::service::ranking::{lexical, POOL};

/// Strings in one buffer, in the order pushed: what a snapshot keeps per row instead
/// of a `String` each (40,000 ids as separate allocations, twice over for a hash index,
/// cost more than ten megabytes and a pointer chase per lookup).
#[derive(Default)]
struct Ids {
    buf: String,
    ends: Vec<u32>,
}

impl Ids {
    fn push(&mut self, s: &str) {
        self.buf.push_str(s);
        self.ends.push(self.buf.len() as u32);
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.buf[start..self.ends[i] as usize]
    }

    /// Index of `id` among rows `range`, which must be in ascending byte order (SQLite's
    /// BINARY collation, which `ORDER BY` used when loading).
    fn find(&self, range: std::ops::Range<usize>, id: &str) -> Option<usize> {
        let (mut lo, mut hi) = (range.start, range.end);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.get(mid).cmp(id) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    fn shrink(&mut self) {
        self.buf.shrink_to_fit();
        self.ends.shrink_to_fit();
    }
}

/// A project's vectors as one search sees them: one slab of every source's rows, read
/// in (source, row id) order so that each source is a contiguous run of rows with its
/// ids ascending (ranking one source scans one run; finding a row is a binary search),
/// and the generation they were read at.
pub struct Snapshot {
    pub generation: i64,
    /// The project's texts (every source) with no vector from `model` when read: they
    /// take part by their words only until embedded.
    pub not_embedded: u64,
    pub model: &'static str,
    matrix: Matrix,
    /// Row `i`'s id.
    ids: Ids,
    /// Each source's run of rows.
    sources: Vec<(String, std::ops::Range<usize>)>,
    /// Every entity's id (ascending) and, at the same index, its scope (for the scope
    /// filter, which also applies to lexical hits without a vector) and its name as
    /// [`name_words`] joined by spaces (for exact-name hits).
    scope_ids: Ids,
    scope_of: Vec<Option<Scope>>,
    names: Ids,
}

impl Snapshot {
    fn rows(&self, source: &str) -> std::ops::Range<usize> {
        self.sources
            .iter()
            .find(|(s, _)| s == source)
            .map(|(_, r)| r.clone())
            .unwrap_or(0..0)
    }

    /// The stored vector of one row, if it has one.
    pub fn vector(&self, source: &str, row_id: &str) -> Option<Vec<f32>> {
        let i = self.ids.find(self.rows(source), row_id)?;
        self.matrix.row(i)
    }

    /// Cosine similarity of one row to `q`, if the row has a vector.
    pub fn similarity(&self, source: &str, row_id: &str, q: &[f32]) -> Option<f32> {
        let i = self.ids.find(self.rows(source), row_id)?;
        self.matrix.dot_row(i, q)
    }

    /// Cosine similarity of one row to `q` (0 when the row has no vector).
    pub fn cosine(&self, source: &str, row_id: &str, q: &[f32]) -> f32 {
        self.similarity(source, row_id, q).unwrap_or(0.0)
    }

    /// An entity's scope (`None` for an id that is not an entity of the project).
    pub fn scope(&self, entity_id: &str) -> Option<Scope> {
        let i = self.scope_ids.find(0..self.scope_ids.len(), entity_id)?;
        self.scope_of[i]
    }

    /// The entities whose name, as words joined by spaces, is `words` (ascending id).
    pub fn entities_named(&self, words: &str) -> Vec<&str> {
        if words.is_empty() {
            return Vec::new();
        }
        (0..self.names.len())
            .filter(|&i| self.names.get(i) == words)
            .map(|i| self.scope_ids.get(i))
            .collect()
    }

    /// The best `k` rows of one source passing `keep` by cosine, ties to the lower id
    /// (rows of a source are in id order): one linear scan of the source's slab.
    pub(crate) fn scan(
        &self,
        source: &str,
        qvec: &[f32],
        k: usize,
        keep: &(dyn Fn(&str) -> bool + Sync),
    ) -> Vec<(usize, f32)> {
        self.matrix
            .top_k_by(self.rows(source), qvec, k, |i| keep(self.ids.get(i)))
    }

    /// The id of row `i` (an index [`Snapshot::scan`] answered).
    pub(crate) fn row_id(&self, i: usize) -> &str {
        self.ids.get(i)
    }

    /// How many vectors are held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.len() == 0
    }
}

/// Per-process cache of project snapshots, checked against the project's generation
/// before every reuse (a write by any process bumps it), so it is never trusted blindly.
#[derive(Default)]
pub struct Cache {
    snapshots: Mutex<HashMap<(String, &'static str), Arc<Snapshot>>>,
    graphs: Mutex<HashMap<String, Arc<crate::service::code_graph::Graph>>>,
}

impl Cache {
    pub(crate) fn graph(
        &self,
        project: &str,
        generation: i64,
    ) -> Option<Arc<crate::service::code_graph::Graph>> {
        let g = self.graphs.lock().ok()?;
        g.get(project)
            .filter(|x| x.generation == generation)
            .cloned()
    }

    pub(crate) fn put_graph(&self, project: &str, g: Arc<crate::service::code_graph::Graph>) {
        if let Ok(mut m) = self.graphs.lock() {
            m.insert(project.to_string(), g);
        }
    }
}

/// The project's vectors, embedding what is missing first within the bounded wait
/// of `embedding::ensure_embedded`. Reuses the cached snapshot while the project's
/// generation is unchanged and it lacked nothing; otherwise embeds pending rows and
/// reads the generation, the count of rows still without a vector and the vectors in
/// one read transaction, so the snapshot is exactly the state at that generation.
pub async fn snapshot(app: &App, project: &str) -> Result<Arc<Snapshot>> {
    let e = embedding::embedder(app).await?;
    let model = e.id();
    let key = (project.to_string(), model);
    let generation_now = || async {
        let mut c = app.store.read().await?;
        Ok::<_, Error>(sstore::generation(&mut c, project).await?)
    };
    let cached = || {
        app.semantic
            .snapshots
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
    };
    let current = generation_now().await?;
    if let Some(s) = cached() {
        if s.generation == current && s.not_embedded == 0 {
            return Ok(s);
        }
    }
    let embedded = embedding::ensure_embedded(app, project, SOURCES).await?;
    if embedded == 0 {
        // Nothing embedded here (no time to wait, or nothing left): the cached
        // snapshot still holds if nothing else changed.
        if let Some(s) = cached() {
            if s.generation == generation_now().await? {
                return Ok(s);
            }
        }
    }
    let mut tx = app.store.snapshot().await?;
    let generation = sstore::generation(&mut tx, project).await?;
    let mut not_embedded = 0;
    for src in SOURCES {
        not_embedded += estore::count_pending(&mut tx, src, model, project).await?;
    }
    let count = sstore::count_vectors(&mut tx, project, model).await?;
    let mut matrix = Matrix::with_capacity(e.dim(), count);
    let mut ids = Ids::default();
    let mut sources: Vec<(String, std::ops::Range<usize>)> = Vec::new();
    sstore::each_vector(&mut tx, project, model, |source, row_id, blob| {
        let Some(i) = matrix.push_blob(blob) else {
            tracing::warn!(source = %source, row = %row_id, "stored vector has the wrong size; skipped");
            return;
        };
        ids.push(row_id);
        match sources.last_mut() {
            Some((s, r)) if s == source => r.end = i + 1,
            _ => sources.push((source.to_string(), i..i + 1)),
        }
    })
    .await?;
    let mut scope_ids = Ids::default();
    let mut scope_of = Vec::new();
    let mut names = Ids::default();
    sstore::each_entity(&mut tx, project, |id, scope, name| {
        scope_ids.push(id);
        scope_of.push(Scope::parse(scope));
        names.push(&name_words(name).join(" "));
    })
    .await?;
    tx.commit().await?;
    matrix.shrink();
    ids.shrink();
    scope_ids.shrink();
    scope_of.shrink_to_fit();
    names.shrink();
    let s = Arc::new(Snapshot {
        generation,
        not_embedded,
        model,
        matrix,
        ids,
        sources,
        scope_ids,
        scope_of,
        names,
    });
    if let Ok(mut m) = app.semantic.snapshots.lock() {
        m.insert(key.clone(), s.clone());
    }
    Ok(s)
}

/// A query embedded for search: its vector, the embedder's id and whether it was cut
/// to the model's window.
pub struct QueryVec {
    pub vector: Vec<f32>,
    pub embedder: &'static str,
    pub truncated: bool,
    pub fallback_reason: Option<String>,
}

pub async fn embed_query(app: &App, query: &str) -> Result<QueryVec> {
    let (e, id) = embedding::embed_query(app, query).await?;
    Ok(QueryVec {
        vector: e.vector,
        embedder: id,
        truncated: e.truncated,
        fallback_reason: app.embedder.fallback_reason().map(str::to_string),
    })
}

/// What `search` may look in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Entities,
    References,
    All,
}

impl Target {
    pub const NAMES: &'static [&'static str] = &["entities", "references", "all"];
    pub fn parse(s: &str) -> Option<Target> {
        match s.to_ascii_lowercase().as_str() {
            "entities" => Some(Target::Entities),
            "references" => Some(Target::References),
            "all" => Some(Target::All),
            _ => None,
        }
    }
}

pub struct SearchReq {
    pub project_id: String,
    pub query: String,
    pub target: Target,
    pub limit: usize,
    pub min_score: f32,
    pub scope: Option<crate::domain::code::Scope>,
    pub mode: Mode,
}

pub struct EntityHit {
    pub hit: Hit,
    pub entity: crate::domain::code::Entity,
    pub categories: Vec<String>,
}

pub struct ReferenceHit {
    pub hit: Hit,
    pub reference: crate::domain::code::Reference,
    /// The first entity (by name) holding the reference: (id, name).
    pub entity: Option<(String, String)>,
}

pub struct SearchOut {
    pub entities: Vec<EntityHit>,
    pub references: Vec<ReferenceHit>,
    pub embedder: &'static str,
    pub fallback_reason: Option<String>,
    pub query_truncated: bool,
    /// Rows embedded for this search (they had no vector yet).
    pub vectors: usize,
    /// The project's texts still without a vector: ranked by their words only.
    pub not_embedded: u64,
    /// Candidates only their meaning found, below `minScore` (entities and references).
    pub below_min_score: usize,
}

/// `search`: hybrid ranking of a project's entities and/or references.
pub async fn search(app: &App, r: SearchReq) -> Result<SearchOut> {
    {
        let mut c = app.store.read().await?;
        if !crate::store::project::exists(&mut c, &r.project_id).await? {
            return Err(Error::not_found("project", r.project_id.clone()));
        }
    }
    // Embedding the query is most of a search; the full-text lookups run meanwhile
    // (on the connections' threads, while the model runs on a blocking thread).
    let (project, query, mode) = (r.project_id.as_str(), r.query.as_str(), r.mode);
    let lex = |on: bool, index: Fts| async move {
        if on && mode != Mode::Vector {
            lexical(app, index, project, query, false, POOL * 2)
                .await
                .map(Some)
        } else {
            Ok(None)
        }
    };
    let (qv, lex_entities, lex_references) = tokio::try_join!(
        embed_query(app, &r.query),
        lex(r.target != Target::References, Fts::Entities),
        lex(r.target != Target::Entities, Fts::References),
    )?;
    let snap = snapshot(app, &r.project_id).await?;
    let keep_entity = |id: &str| match r.scope {
        None => true,
        Some(s) => snap.scope(id) == Some(s),
    };
    let keep_reference = |_: &str| true;
    // Both sources wanted: their slab scans, bound by memory bandwidth, run on two
    // threads at once.
    let (vec_entities, vec_references) = if r.target == Target::All && r.mode != Mode::Lexical {
        let k = POOL.max(r.limit);
        std::thread::scope(|t| {
            let refs = t.spawn(|| snap.scan("reference", &qv.vector, k, &keep_reference));
            let ents = snap.scan("entity", &qv.vector, k, &keep_entity);
            (Some(ents), refs.join().ok())
        })
    } else {
        (None, None)
    };
    let mut out = SearchOut {
        entities: Vec::new(),
        references: Vec::new(),
        embedder: qv.embedder,
        fallback_reason: qv.fallback_reason.clone(),
        query_truncated: qv.truncated,
        vectors: snap.len(),
        not_embedded: snap.not_embedded,
        below_min_score: 0,
    };
    if r.target != Target::References {
        let ranked = rank(
            app,
            &snap,
            &r.project_id,
            Rank {
                source: "entity",
                index: Fts::Entities,
                query: &r.query,
                qvec: &qv.vector,
                mode: r.mode,
                min_score: r.min_score,
                prefix: false,
                keep: &keep_entity,
                lexical: lex_entities,
                vectors: vec_entities,
            },
            r.limit,
        )
        .await?;
        out.below_min_score += ranked.below_min_score;
        let hits = ranked.hits;
        let ids: Vec<String> = hits.iter().map(|h| h.row_id.clone()).collect();
        let mut c = app.store.read().await?;
        let mut rows: HashMap<String, crate::domain::code::Entity> =
            crate::store::code::entities_by_ids(&mut c, &ids)
                .await?
                .into_iter()
                .map(|e| (e.id.clone(), e))
                .collect();
        let mut categories: HashMap<String, Vec<String>> = HashMap::new();
        for (id, name) in crate::store::code::category_names_of(&mut c, &ids).await? {
            categories.entry(id).or_default().push(name);
        }
        for h in hits {
            if let Some(entity) = rows.remove(&h.row_id) {
                out.entities.push(EntityHit {
                    categories: categories.remove(&entity.id).unwrap_or_default(),
                    hit: h,
                    entity,
                });
            }
        }
    }
    if r.target != Target::Entities {
        let ranked = rank(
            app,
            &snap,
            &r.project_id,
            Rank {
                source: "reference",
                index: Fts::References,
                query: &r.query,
                qvec: &qv.vector,
                mode: r.mode,
                min_score: r.min_score,
                prefix: false,
                keep: &keep_reference,
                lexical: lex_references,
                vectors: vec_references,
            },
            r.limit,
        )
        .await?;
        out.below_min_score += ranked.below_min_score;
        let hits = ranked.hits;
        let ids: Vec<String> = hits.iter().map(|h| h.row_id.clone()).collect();
        let mut c = app.store.read().await?;
        let rows = crate::store::code::references_by_ids(&mut c, &ids).await?;
        let holders = sstore::holders(&mut c, &ids).await?;
        for h in hits {
            if let Some(x) = rows.iter().find(|x| x.id == h.row_id) {
                let entity = holders
                    .iter()
                    .find(|(rid, _, _)| *rid == x.id)
                    .map(|(_, id, name)| (id.clone(), name.clone()));
                out.references.push(ReferenceHit {
                    hit: h,
                    reference: x.clone(),
                    entity,
                });
            }
        }
    }
    Ok(out)
}
