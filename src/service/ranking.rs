//! The ranking core every search with a text query goes through (code entities and
//! references, knowledge atoms and molecules, memory atoms, ontology classes): a
//! lexical list (BM25 over the query's words, FTS5 or PostgreSQL), a vector list (the
//! cosine to the embedded query, from a [`Snapshot`]), their fusion into one 0-to-1
//! score, and which rows the answer keeps. Callers add their own factors after it
//! (memory: status, scope, recency, confidence; the ontology: quality).
//!
//! - An entity whose name is the query scores 1 and comes first in every mode:
//!   compared case-insensitively as words (split at `_`, punctuation and camelCase
//!   humps, so `deflate_index_build`, `deflateIndexBuild` and `Deflate index build`
//!   are one name), after an optional leading keyword (`struct x`, `fn x`, …).
//! - The lexical list is the rows matching every query word (AND) or, when none does,
//!   those matching some word (OR); BM25 is taken relative to the query's best
//!   (`lexical`, 0 to 1).
//! - Hybrid fusion: see [`fuse`] (its weights and how they were chosen).
//! - Kept: every row that matched a word, every exact name, and the rows only the
//!   vector found whose cosine reaches `minScore`; the others are counted
//!   ([`Ranked::below_min_score`]), so an answer can say what a threshold hid.
//!
//! Nothing here knows MCP or SQL: rows come from `store`, vectors from the snapshot.

use std::collections::HashMap;

use crate::error::Result;
use crate::service::semantic::Snapshot;
use crate::service::App;
use crate::store::semantic::{self as sstore, Fts};

/// The highest score fusion gives a row whose name is not the query.
const BELOW_EXACT: f64 = 0.9999;
/// Candidates taken from each list before fusion.
pub(crate) const POOL: usize = 100;

/// Small words that say nothing about which row is meant; dropped from lexical
/// queries so "how do we retry" does not need "how", "do" and "we" to match.
const STOP: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "how", "i", "in",
    "is", "it", "its", "of", "on", "or", "so", "that", "the", "their", "them", "then", "there",
    "they", "this", "to", "up", "was", "we", "what", "when", "where", "which", "who", "why",
    "with", "you",
];

/// A prefix token's stem: an English inflection cut off (`handled` → `handl`,
/// `redirects` → `redirect`, `retries` → `retr`), so that a question's word finds the
/// row's other forms of it; a stem keeps at least four letters.
fn stem(t: &str) -> &str {
    for suffix in ["ies", "ing", "ed", "es", "s"] {
        if let Some(s) = t.strip_suffix(suffix) {
            if s.chars().count() >= 4 && s.chars().all(char::is_alphanumeric) {
                return s;
            }
        }
    }
    t
}

/// The query's words as FTS5 strings: each whitespace-separated token quoted (a quote
/// inside doubled), so `? * " - :` and FTS keywords (AND, NEAR) are plain text.
/// Tokens without a letter or digit and stop words are dropped. `prefix` makes each
/// token, stemmed, match as a prefix (`"stri"*`).
pub fn fts_tokens(query: &str, prefix: bool) -> Vec<String> {
    words_of(query)
        .map(|t| {
            if prefix {
                format!("\"{}\"*", prefix_term(t).replace('"', "\"\""))
            } else {
                format!("\"{}\"", t.replace('"', "\"\""))
            }
        })
        .collect()
}

/// The query's words that count: whitespace-separated, with a letter or digit, not
/// stop words, at most 32.
fn words_of(query: &str) -> impl Iterator<Item = &str> {
    query
        .split_whitespace()
        .filter(|t| t.chars().any(char::is_alphanumeric))
        .filter(|t| !STOP.contains(&t.to_lowercase().as_str()))
        .take(32)
}

fn prefix_term(t: &str) -> String {
    let t = t
        .trim_end_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    stem(&t).to_string()
}

/// The query's words as the prefixes [`fts_tokens`] makes of them, unquoted, for
/// lexical lists computed in memory (`service::bm25`): lower-case, stemmed, split
/// at what is neither letter nor digit as the indexes' tokenizer splits.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words_of(query) {
        for part in prefix_term(w).split(|c: char| !c.is_alphanumeric()) {
            if !part.is_empty() && !out.iter().any(|x| x == part) {
                out.push(part.to_string());
            }
        }
    }
    out
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

/// What fusion knows of one row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parts {
    /// Cosine to the query (0 without a vector).
    pub cosine: f32,
    /// BM25 relative to the query's best, 0 to 1 (0: no word matched).
    pub lexical: f64,
    /// The row matched every query word (the lexical list was an AND match and holds
    /// it).
    pub all_words: bool,
}

/// The cosine's weight in [`fuse`] when the row holds every query word, and when it
/// holds only some: a stray word of a paraphrase says little.
const VECTOR_WEIGHT_ALL: f64 = 0.6;
const VECTOR_WEIGHT_SOME: f64 = 0.9;

/// The fused score of a row that is not an exact name: a convex combination of the
/// cosine (negative counts as 0) and the relative BM25,
/// `w·cosine + (1 − w)·lexical`, with `w` 0.6 for a row matching every query word
/// and 0.9 for one matching only some. Capped below 1, which only an exact name
/// reaches.
///
/// Chosen by measurement on tuning queries only: `fixtures/retrieval/queries.txt`
/// and the odd-numbered queries of the bench's code, notes and conversation sets
/// (`benches/retrieval/fusion_lab.py` over the candidates `cargo bench --bench
/// retrieval` dumps with `CAIRN_BENCH_DUMP`). Against reciprocal rank fusion (k 10 to
/// 60, with and without a lexical weight, one weight per match kind), plain and
/// min-max convex combinations and the noisy-OR `1 − (1 − cosine)(1 − 0.4·lexical)`
/// this replaced, these weights kept recall@5 above the better single leg on every
/// tuning set: 0.95 for some-word rows did better on the bench's halves but fell below
/// the vector leg on the hand-written fixture, 0.85 below it on the conversation.
/// (`w` for every-word rows moved nothing between 0.5 and 0.7.) A convex combination also keeps the cosine's meaning in the score, which a
/// rank fusion loses (recall's relevance bands read it). Held out, see README.md.
pub fn fuse(p: Parts) -> f64 {
    let c = f64::from(p.cosine).clamp(0.0, 1.0);
    let l = p.lexical.clamp(0.0, 1.0);
    let w = if p.all_words {
        VECTOR_WEIGHT_ALL
    } else {
        VECTOR_WEIGHT_SOME
    };
    (w * c + (1.0 - w) * l).min(BELOW_EXACT)
}

/// How the lexical list matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// Every word matched (an AND query found rows).
    All,
    /// Some word matched (OR).
    Some,
}

/// Lexical candidates: AND first; OR when AND finds nothing.
pub(crate) async fn lexical(
    app: &App,
    index: Fts,
    project: &str,
    query: &str,
    prefix: bool,
    limit: usize,
) -> Result<(Vec<(String, f64)>, Match)> {
    let toks = fts_tokens(query, prefix);
    if toks.is_empty() {
        return Ok((Vec::new(), Match::Some));
    }
    let mut c = app.store.read().await?;
    let all = sstore::lexical(&mut c, index, project, &toks.join(" AND "), limit as i64).await?;
    if !all.is_empty() || toks.len() == 1 {
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
    /// BM25 relative to the list's best, 0 to 1: the lexical part [`fuse`] weighs.
    pub words: f64,
    /// The row held every query word (the weights of [`fuse`] depend on it).
    pub all_words: bool,
    /// The row is an entity named by the query (scored 1).
    pub exact: bool,
    /// The score the order follows, 0 to 1: the fusion of [`fuse`] (hybrid), the
    /// cosine (vector) or BM25 relative to the query's best (lexical); 1 for an exact
    /// name in every mode.
    pub fused: f64,
}

/// What one ranking pass needs.
pub struct Rank<'a> {
    pub source: &'static str,
    pub index: Fts,
    pub query: &'a str,
    pub qvec: &'a [f32],
    pub mode: Mode,
    /// The cosine a row only the vector found needs.
    pub min_score: f32,
    /// Lexical tokens match as stemmed prefixes (graph search keeps its substring feel).
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

/// A ranking's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ranked {
    /// Best first, at most the limit asked for.
    pub hits: Vec<Hit>,
    /// Candidates only the vector found whose cosine fell below `minScore`.
    pub below_min_score: usize,
}

/// Ranks one source of a project (see the module doc): best first, deterministic
/// (ties by cosine, then id). `limit` bounds the answer.
pub async fn rank(
    app: &App,
    snap: &Snapshot,
    project: &str,
    r: Rank<'_>,
    limit: usize,
) -> Result<Ranked> {
    let scanned = match (r.vectors, r.mode) {
        (Some(v), _) => v,
        (None, Mode::Lexical) => Vec::new(),
        (None, _) => snap.scan(r.source, r.qvec, POOL.max(limit), r.keep),
    };
    let (lex, how) = match (r.lexical, r.mode) {
        (_, Mode::Vector) => (Vec::new(), Match::Some),
        (Some(pre), _) => pre,
        (None, _) => lexical(app, r.index, project, r.query, r.prefix, POOL * 2).await?,
    };
    let lex: Vec<(String, f64)> = lex
        .into_iter()
        .filter(|(id, _)| (r.keep)(id))
        .take(POOL.max(limit))
        .collect();
    let exact: Vec<&str> = if r.source == "entity" {
        snap.entities_named(&query_name(r.query))
            .into_iter()
            .filter(|id| (r.keep)(id))
            .collect()
    } else {
        Vec::new()
    };
    let best = lex.iter().map(|x| x.1).fold(0.0f64, f64::max);
    let rel = |s: f64| if best > 0.0 { s / best } else { 0.0 };
    let cos = |id: &str| snap.cosine(r.source, id, r.qvec);
    // Every candidate once: (cosine, BM25).
    let mut cands: HashMap<&str, (f32, f64)> = HashMap::new();
    for &(i, c) in &scanned {
        cands.insert(snap.row_id(i), (c, 0.0));
    }
    for (id, s) in &lex {
        cands.entry(id.as_str()).or_insert_with(|| (cos(id), 0.0)).1 = *s;
    }
    for id in &exact {
        cands.entry(id).or_insert_with(|| (cos(id), 0.0));
    }
    let mut below = 0;
    let mut hits: Vec<Hit> = Vec::with_capacity(cands.len());
    for (id, (c, s)) in cands {
        let is_exact = exact.contains(&id);
        if !(is_exact || s > 0.0 || c >= r.min_score) {
            below += 1;
            continue;
        }
        // Per row: one only the vector found holds no word at all.
        let all_words = how == Match::All && s > 0.0;
        let fused = if is_exact {
            1.0
        } else {
            match r.mode {
                Mode::Vector => f64::from(c).clamp(0.0, BELOW_EXACT),
                Mode::Lexical => rel(s).min(BELOW_EXACT),
                Mode::Hybrid => fuse(Parts {
                    cosine: c,
                    lexical: rel(s),
                    all_words,
                }),
            }
        };
        hits.push(Hit {
            row_id: id.to_string(),
            vector: c,
            lexical: s,
            words: rel(s),
            all_words,
            exact: is_exact,
            fused,
        });
    }
    hits.sort_by(|a, b| {
        b.fused
            .total_cmp(&a.fused)
            .then(b.vector.total_cmp(&a.vector))
            .then(a.row_id.cmp(&b.row_id))
    });
    hits.truncate(limit);
    Ok(Ranked {
        hits,
        below_min_score: below,
    })
}

/// A query as every kind of a search ranks it: its text, its vector (embedded once)
/// and the cosine a row only the vector found needs.
#[derive(Clone, Copy)]
pub struct Ask<'a> {
    pub text: &'a str,
    pub qvec: &'a [f32],
    pub min_score: f32,
}

/// Ranks rows that have no full-text index (tasks, features, ontology classes) as
/// [`rank`] ranks the indexed ones: their lexical list is BM25 computed in memory over
/// `docs` (`service::bm25`), their vectors are the snapshot's rows of `source`, and
/// only rows of `docs` are answered (the caller's filters chose them).
pub async fn rank_docs(
    app: &App,
    snap: &Snapshot,
    tenant: &str,
    source: &'static str,
    docs: &[crate::service::bm25::Doc<'_>],
    ask: &Ask<'_>,
    limit: usize,
) -> Result<Ranked> {
    let Ask {
        text: query,
        qvec,
        min_score,
    } = *ask;
    let allowed: std::collections::HashSet<&str> = docs.iter().map(|d| d.id).collect();
    let keep = |id: &str| allowed.contains(id);
    let lexical = crate::service::bm25::rank(docs, query, POOL.max(limit));
    rank(
        app,
        snap,
        tenant,
        Rank {
            source,
            // Unused: the lexical list is given.
            index: Fts::Entities,
            query,
            qvec,
            mode: Mode::Hybrid,
            min_score,
            prefix: true,
            keep: &keep,
            lexical: Some(lexical),
            vectors: None,
        },
        limit,
    )
    .await
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
    fn prefix_tokens_are_stemmed_so_a_question_finds_other_forms() {
        assert_eq!(
            fts_tokens("how are Redirects handled?", true),
            vec![r#""redirect"*"#, r#""handl"*"#]
        );
        // Short words keep their ending: "uses" is not "us".
        assert_eq!(
            fts_tokens("uses retries", true),
            vec![r#""uses"*"#, r#""retr"*"#]
        );
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
        let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15);
        // Uniform in [-1, 1].
        let mut next = || rng.f64() * 2.0 - 1.0;
        for _ in 0..10_000 {
            let (c, l, d) = (next() as f32, next().abs(), next().abs() * 0.1);
            for all_words in [true, false] {
                let p = Parts {
                    cosine: c,
                    lexical: l,
                    all_words,
                };
                let f = fuse(p);
                assert!((0.0..1.0).contains(&f), "{c} {l} {f}");
                let up = |q: Parts| fuse(q) >= f;
                assert!(
                    up(Parts {
                        cosine: c + d as f32,
                        ..p
                    }),
                    "monotone in the cosine"
                );
                assert!(
                    up(Parts {
                        lexical: l + d,
                        ..p
                    }),
                    "monotone in the lexical score"
                );
            }
        }
        let p = |cosine, lexical, all_words| {
            fuse(Parts {
                cosine,
                lexical,
                all_words,
            })
        };
        // The words count for more when every one of them matched.
        assert!(p(0.5, 1.0, true) > p(0.5, 1.0, false));
        assert_eq!(p(1.0, 1.0, true), 1.0_f64.min(BELOW_EXACT));
    }
}
