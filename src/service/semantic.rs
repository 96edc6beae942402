//! Hybrid retrieval: a project's vectors held in memory ([`Cache`]), the lexical side
//! (FTS5 BM25 over quoted tokens) and their fusion, for `search` (entities and
//! references) and `query_graph` search (atoms and molecules).
//!
//! Fusion gives every hit a score from 0 to 1 that the order follows:
//! - An entity whose name is the query scores 1 and comes first: compared
//!   case-insensitively as words (split at `_`, punctuation and camelCase humps, so
//!   `deflate_index_build`, `deflateIndexBuild` and `Deflate index build` are one
//!   name), after an optional leading keyword (`struct x`, `fn x`, …).
//! - Every other row scores `1 − (1 − cosine)(1 − 0.4 × lexical)`, a noisy-OR of
//!   meaning and words: the cosine (negative counts as 0), lifted by up to 40 % of what
//!   it lacks in proportion to the row's BM25 relative to the best BM25 of this query
//!   (`lexical`, 0 to 1). Capped below 1, which only an exact name reaches.
//! - The lexical list is the rows matching every query word (AND) or, when none does,
//!   those matching some word (OR). `minScore` filters on the cosine (DESIGN.md) but
//!   never hides an exact name or a row that matched every word: a query naming an
//!   identifier finds it even when its description says little (issue 18).
//!
//! Decided on `fixtures/retrieval` only (the zlib set of `tests/it/semantic_heldout.rs`
//! stays held out): this scored recall@5 0.93 against 0.91 for the reciprocal rank
//! fusion it replaces, whose score (about 0.016 for every hit) told a reader nothing;
//! weights from 0.3 to 0.6 scored 0.91 to 0.93, and boosting entities merely named
//! somewhere in a longer query, or weighting BM25 by the share of query words a row
//! holds, did not help.
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

/// How much of what its cosine lacks a row's words can add (see the module doc).
const LEXICAL_WEIGHT: f64 = 0.4;
/// The highest score fusion gives a row whose name is not the query.
const BELOW_EXACT: f64 = 0.9999;
/// Candidates taken from each list before fusion.
const POOL: usize = 100;

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

/// Small words that say nothing about which row is meant; dropped from lexical
/// queries so "how do we retry" does not need "how", "do" and "we" to match.
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "i", "in",
    "is", "it", "its", "of", "on", "or", "so", "that", "the", "their", "them", "then", "there",
    "they", "this", "to", "up", "was", "we", "what", "when", "where", "which", "who", "why",
    "with", "you",
];

/// The query's words as FTS5 strings: each whitespace-separated token quoted (a quote
/// inside doubled), so `? * " - :` and FTS keywords (AND, NEAR) are plain text.
/// Tokens without a letter or digit and stop words are dropped. `prefix` makes each
/// token match as a prefix (`"stri"*`).
pub fn fts_tokens(query: &str, prefix: bool) -> Vec<String> {
    query
        .split_whitespace()
        .filter(|t| t.chars().any(char::is_alphanumeric))
        .filter(|t| !STOP.contains(&t.to_lowercase().as_str()))
        .take(32)
        .map(|t| {
            let q = format!("\"{}\"", t.replace('"', "\"\""));
            if prefix {
                q + "*"
            } else {
                q
            }
        })
        .collect()
}

/// The words of a name, lower-case: split at every character that is neither letter
/// nor digit and where a lower-case letter or digit meets an upper-case one
/// (`inflateGetHeader` → inflate, get, header) or an acronym meets a word
/// (`HTTPServer` → http, server). Digits stay with their word (`crc32_combine` →
/// crc32, combine).
pub fn name_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev = None;
            continue;
        }
        if c.is_uppercase() && !cur.is_empty() {
            let next_lower = chars.peek().is_some_and(|n| n.is_lowercase());
            let hump = prev.is_some_and(|p| {
                p.is_lowercase() || p.is_numeric() || (p.is_uppercase() && next_lower)
            });
            if hump {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
        prev = Some(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Words that may lead a query naming one thing (`struct deflate_index`).
const KIND_WORDS: &[&str] = &[
    "class",
    "const",
    "constant",
    "def",
    "enum",
    "field",
    "fn",
    "func",
    "function",
    "impl",
    "interface",
    "macro",
    "method",
    "mod",
    "module",
    "static",
    "struct",
    "trait",
    "type",
    "typedef",
    "union",
    "var",
];

/// The name a query would be if it named one entity: its words (see [`name_words`])
/// joined by spaces, without a leading kind word (`struct x`, `fn x`).
pub fn query_name(query: &str) -> String {
    let q = query.trim();
    let rest = match q.split_once(char::is_whitespace) {
        Some((first, rest))
            if KIND_WORDS.contains(&first.to_lowercase().as_str()) && !rest.trim().is_empty() =>
        {
            rest
        }
        _ => q,
    };
    name_words(rest).join(" ")
}

/// The fused score of a row that is not an exact name: see the module doc.
pub fn fuse(cosine: f32, lexical: f64) -> f64 {
    let c = f64::from(cosine).clamp(0.0, 1.0);
    let l = lexical.clamp(0.0, 1.0);
    (1.0 - (1.0 - c) * (1.0 - LEXICAL_WEIGHT * l)).min(BELOW_EXACT)
}

/// How the lexical list matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// Every word matched (an AND query found rows).
    All,
    /// Some word matched (OR).
    Some,
}

/// Lexical candidates: AND first; OR when AND finds nothing and `loose` allows it.
async fn lexical(
    app: &App,
    index: Fts,
    project: &str,
    query: &str,
    prefix: bool,
    limit: usize,
    loose: bool,
) -> Result<(Vec<(String, f64)>, Match)> {
    let toks = fts_tokens(query, prefix);
    if toks.is_empty() {
        return Ok((Vec::new(), Match::Some));
    }
    let mut c = app.store.read().await?;
    let all = sstore::lexical(&mut c, index, project, &toks.join(" AND "), limit as i64).await?;
    if !all.is_empty() || toks.len() == 1 || !loose {
        return Ok((all, Match::All));
    }
    let some = sstore::lexical(&mut c, index, project, &toks.join(" OR "), limit as i64).await?;
    Ok((some, Match::Some))
}

/// Which rankings to use; `Hybrid` is the product, the others exist to measure it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Hybrid,
    Lexical,
    Vector,
}

impl Mode {
    pub const NAMES: &'static [&'static str] = &["hybrid", "lexical", "vector"];
    pub fn parse(s: &str) -> Option<Mode> {
        match s.to_ascii_lowercase().as_str() {
            "hybrid" => Some(Mode::Hybrid),
            "lexical" => Some(Mode::Lexical),
            "vector" => Some(Mode::Vector),
            _ => None,
        }
    }
}

/// One ranked row.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub row_id: String,
    /// Cosine similarity to the query.
    pub vector: f32,
    /// BM25 (bigger is better), 0 when the row did not match lexically.
    pub lexical: f64,
    /// The score the order follows, 0 to 1: the fusion of the module doc (hybrid), the
    /// cosine (vector) or BM25 relative to the query's best (lexical).
    pub fused: f64,
}

/// What one ranking pass needs.
pub struct Rank<'a> {
    pub source: &'static str,
    pub index: Fts,
    pub query: &'a str,
    pub qvec: &'a [f32],
    pub mode: Mode,
    pub min_score: f32,
    /// Lexical tokens match as prefixes (graph search keeps its substring feel).
    pub prefix: bool,
    /// Keep a row only if this says so (scope filter).
    pub keep: &'a (dyn Fn(&str) -> bool + Sync),
    /// The lexical list, when the caller fetched it already (`search` runs it while
    /// the query is embedded); `None` makes `rank` fetch it.
    pub lexical: Option<(Vec<(String, f64)>, Match)>,
    /// The vector list (row, cosine), when the caller scanned already (`search`
    /// scans entities and references on two threads); `None` makes `rank` scan.
    pub vectors: Option<Vec<(usize, f32)>>,
}

/// The best `k` rows of one source passing `keep` by cosine, ties to the lower id.
fn scan(
    snap: &Snapshot,
    source: &str,
    qvec: &[f32],
    k: usize,
    keep: &(dyn Fn(&str) -> bool + Sync),
) -> Vec<(usize, f32)> {
    snap.matrix
        .top_k_by(snap.rows(source), qvec, k, |i| keep(snap.ids.get(i)))
}

/// Ranks one source of a project: every row passing `keep` with cosine ≥ `min_score`
/// (in hybrid mode also exact names and rows matching every query word), best first,
/// deterministic (ties by cosine, then id). `limit` bounds the answer.
pub async fn rank(
    app: &App,
    snap: &Snapshot,
    project: &str,
    r: Rank<'_>,
    limit: usize,
) -> Result<Vec<Hit>> {
    // Vector list: the best rows passing `keep` by cosine, ties to the lower id (rows
    // of a source are in id order). One linear scan of the source's slab.
    let scanned = match r.vectors {
        Some(v) => v,
        None => scan(snap, r.source, r.qvec, POOL.max(limit), r.keep),
    };
    let vec_list: Vec<(&str, f32)> = scanned
        .into_iter()
        .map(|(i, c)| (snap.ids.get(i), c))
        .collect();
    let (lex, how) = if r.mode == Mode::Vector {
        (Vec::new(), Match::Some)
    } else if let Some(pre) = r.lexical {
        pre
    } else {
        // Prefix tokens (graph search) matched with OR would take most rows (a short
        // prefix matches many words), and graph search keeps only rows matching every
        // word or close in meaning anyway: it stays with AND.
        lexical(
            app,
            r.index,
            project,
            r.query,
            r.prefix,
            POOL * 2,
            r.mode == Mode::Lexical || !r.prefix,
        )
        .await?
    };
    let lex: Vec<(String, f64)> = lex
        .into_iter()
        .filter(|(id, _)| (r.keep)(id))
        .take(POOL)
        .collect();
    // BM25 relative to this query's best lexical hit: 0 to 1.
    let best = lex.iter().map(|x| x.1).fold(0.0f64, f64::max);
    let rel = |s: f64| if best > 0.0 { s / best } else { 0.0 };
    let cos = |id: &str| snap.cosine(r.source, id, r.qvec);
    let mut hits: Vec<Hit> = match r.mode {
        Mode::Vector => vec_list
            .iter()
            .filter(|(_, c)| *c >= r.min_score)
            .take(limit)
            .map(|(id, c)| Hit {
                row_id: id.to_string(),
                vector: *c,
                lexical: 0.0,
                fused: f64::from(*c).clamp(0.0, 1.0),
            })
            .collect(),
        Mode::Lexical => lex
            .iter()
            .map(|(id, s)| Hit {
                row_id: id.clone(),
                vector: cos(id),
                lexical: *s,
                fused: rel(*s),
            })
            .filter(|h| h.vector >= r.min_score)
            .collect(),
        Mode::Hybrid => {
            // Rows that matched every query word, and exact names, pass whatever
            // their cosine; the others need `min_score`.
            let all_words = how == Match::All;
            let exact: Vec<&str> = if r.source == "entity" {
                snap.entities_named(&query_name(r.query))
                    .into_iter()
                    .filter(|id| (r.keep)(id))
                    .collect()
            } else {
                Vec::new()
            };
            let mut fused: HashMap<&str, (Hit, bool)> = HashMap::new();
            for (id, c) in vec_list.iter().take(POOL) {
                let h = Hit {
                    row_id: id.to_string(),
                    vector: *c,
                    lexical: 0.0,
                    fused: 0.0,
                };
                fused.insert(*id, (h, false));
            }
            for (id, s) in &lex {
                let (h, strong) = fused.entry(id.as_str()).or_insert_with(|| {
                    let h = Hit {
                        row_id: id.clone(),
                        vector: cos(id),
                        lexical: 0.0,
                        fused: 0.0,
                    };
                    (h, false)
                });
                h.lexical = *s;
                *strong = all_words;
            }
            for id in &exact {
                fused.entry(id).or_insert_with(|| {
                    let h = Hit {
                        row_id: id.to_string(),
                        vector: cos(id),
                        lexical: 0.0,
                        fused: 0.0,
                    };
                    (h, false)
                });
            }
            fused
                .into_values()
                .filter_map(|(mut h, strong)| {
                    let is_exact = exact.contains(&h.row_id.as_str());
                    h.fused = if is_exact {
                        1.0
                    } else {
                        fuse(h.vector, rel(h.lexical))
                    };
                    (is_exact || strong || h.vector >= r.min_score).then_some(h)
                })
                .collect()
        }
    };
    hits.sort_by(|a, b| {
        b.fused
            .total_cmp(&a.fused)
            .then(b.vector.total_cmp(&a.vector))
            .then(a.row_id.cmp(&b.row_id))
    });
    hits.truncate(limit);
    Ok(hits)
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
            lexical(app, index, project, query, false, POOL * 2, true)
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
            let refs = t.spawn(|| scan(&snap, "reference", &qv.vector, k, &keep_reference));
            let ents = scan(&snap, "entity", &qv.vector, k, &keep_entity);
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
    };
    if r.target != Target::References {
        let hits = rank(
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
        let hits = rank(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts_tokens_quote_syntax_and_drop_noise() {
        assert_eq!(
            fts_tokens(r#"how does "retry" -work? a*b NEAR(x) - ?"#, false),
            vec![r#""""retry""""#, r#""-work?""#, r#""a*b""#, r#""NEAR(x)""#]
        );
        assert_eq!(fts_tokens("stripe", true), vec![r#""stripe"*"#]);
        assert!(fts_tokens("- ? * \"", false).is_empty());
    }

    #[test]
    fn names_split_into_words_at_underscores_humps_and_punctuation() {
        let w = |s: &str| name_words(s).join(" ");
        assert_eq!(w("deflate_index_build"), "deflate index build");
        assert_eq!(w("deflateIndexBuild"), "deflate index build");
        assert_eq!(w("DeflateIndexBuild()"), "deflate index build");
        assert_eq!(w("HTTPServer"), "http server");
        assert_eq!(w("crc32_combine"), "crc32 combine");
        assert_eq!(w("crc32Combine"), "crc32 combine");
        assert_eq!(w("Z_BEST_SPEED"), "z best speed");
        assert_eq!(w("ferry.retry"), "ferry retry");
        assert_eq!(w("Retries and Failures"), "retries and failures");
        assert_eq!(w("  --  "), "");
        assert_eq!(w("Ünïcode_Nämé"), "ünïcode nämé");
    }

    #[test]
    fn a_query_names_an_entity_after_an_optional_kind_word() {
        assert_eq!(query_name("struct deflate_index"), "deflate index");
        assert_eq!(query_name("fn parseCron"), "parse cron");
        assert_eq!(query_name("  deflate_index_build "), "deflate index build");
        // A kind word alone, or in the middle, is part of the name.
        assert_eq!(query_name("struct"), "struct");
        assert_eq!(
            query_name("the struct deflate_index"),
            "the struct deflate index"
        );
    }

    #[test]
    fn fused_scores_stay_below_an_exact_name_and_grow_with_both_signals() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            // SplitMix64, mapped to [-1, 1].
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) as f64 / u64::MAX as f64) * 2.0 - 1.0
        };
        for _ in 0..10_000 {
            let (c, l, d) = (next() as f32, next().abs(), next().abs() * 0.1);
            let f = fuse(c, l);
            assert!((0.0..1.0).contains(&f), "{c} {l} {f}");
            assert!(fuse(c + d as f32, l) >= f, "monotone in the cosine");
            assert!(fuse(c, l + d) >= f, "monotone in the lexical score");
            let floor = f64::from(c.max(0.0)).min(BELOW_EXACT);
            assert!(f >= floor - 1e-6, "never below the cosine");
        }
        assert_eq!(fuse(0.5, 0.0), 0.5);
        assert!((fuse(0.5, 1.0) - 0.7).abs() < 1e-9);
        assert_eq!(fuse(1.0, 1.0), BELOW_EXACT);
    }
}
