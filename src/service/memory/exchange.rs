//! Recall's exchange context: an atom is read with the atoms recorded just before
//! and just after it in its context (the previous and next turn of one exchange, an
//! answer beside its question). A statement that answers a question seldom repeats
//! its words: "Which Rust version do we build with?" finds the question, and the
//! turn after it ("The toolchain file pins 1.84") holds the answer.
//!
//! For each of the [`SEEDS`] best-found atoms, its neighbours recorded within
//! [`WINDOW`] of it that the query found less relevant move [`LIFT`] of the way up
//! to its relevance: `relevance = own + LIFT·(neighbour's − own)`, an own of 0 for
//! a neighbour the query did not find (no word, cosine under `minScore`: an answer
//! seldom shares its question's words). A lifted atom stays below the atom that
//! lifted it, so the best match keeps its place.
//!
//! Chosen on the odd questions of the bench's conversation (`cargo bench --bench
//! retrieval -- conversation dialogue`): LIFT 0.2 to 0.7 all lifted recall@10 on both
//! halves, 0.5 in the middle; on the chatterbot dialogues it moved nothing by more
//! than 0.01. Recall@10 on the whole conversation went from 0.79 to 0.83 with found
//! neighbours only, which left out answers under `minScore`.

use std::collections::HashMap;

use time::Duration;

use crate::domain::memory::wire::{format_time, parse_time};
use crate::error::Result;
use crate::store::memory::{self as store, AtomRow};
use crate::store::Conn;

/// The share of the way to a better neighbour's relevance an atom is lifted.
pub const LIFT: f64 = 0.5;
/// How far apart in recording two atoms of one exchange can be.
pub const WINDOW: Duration = Duration::minutes(30);
/// How many of the best-found atoms lift their neighbours.
pub const SEEDS: usize = 20;

/// Lifts `relevance` (atom id → fused score) of the found `rows` by their exchange
/// context, adding the neighbours the query did not find; answers, per lifted atom,
/// the atom that lifted it. The caller reads the added atoms' rows (its filters may
/// still drop them).
pub async fn lift(
    c: &mut Conn,
    rows: &[AtomRow],
    relevance: &mut HashMap<String, f64>,
) -> Result<HashMap<String, String>> {
    let own = relevance.clone();
    let mut seeds: Vec<&AtomRow> = rows.iter().filter(|r| own.contains_key(&r.id)).collect();
    seeds.sort_by(|a, b| own[&b.id].total_cmp(&own[&a.id]).then(a.id.cmp(&b.id)));
    let mut by: HashMap<String, String> = HashMap::new();
    // A stored time that does not parse has no exchange to read.
    let found: Vec<(&AtomRow, String, String)> = seeds
        .into_iter()
        .take(SEEDS)
        .filter_map(|s| {
            let at = parse_time(&s.recorded_at).ok()?;
            Some((s, format_time(at - WINDOW), format_time(at + WINDOW)))
        })
        .collect();
    let asked: Vec<store::Seed> = found
        .iter()
        .map(|(s, lo, hi)| store::Seed {
            context: s.context_id.as_deref(),
            id: &s.id,
            at: &s.recorded_at,
            lo,
            hi,
        })
        .collect();
    let beside = store::recorded_beside(c, &asked).await?;
    for ((s, _, _), (prev, next)) in found.iter().zip(beside) {
        let top = own[&s.id];
        for n in prev.into_iter().chain(next) {
            let mine = own.get(&n).copied().unwrap_or(0.0);
            let lifted = mine + LIFT * (top - mine);
            if relevance.get(&n).is_none_or(|&r| lifted > r) {
                relevance.insert(n.clone(), lifted);
                by.insert(n, s.id.clone());
            }
        }
    }
    Ok(by)
}
