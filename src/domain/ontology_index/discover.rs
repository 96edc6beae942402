//! The discovery (docs/ontology.md, discovery) over an [`Index`]: seeds (classes the
//! query's words, or its meaning, matched) expanded through the reasoner's taxonomy to
//! depth 3 up and down, fanned out along the five shared relationships, scored,
//! filtered by domain, deduplicated and cut to the limit.
//!
//! Score: `keyword × 0.4 + quality × 0.3 + authority × 0.2 + recency × 0.1`. A seed's
//! keyword match is its own; a class reached from a seed inherits the seed's, halved
//! per hop (so a match stays ahead of its neighbourhood). Recency is 1 for a page
//! updated today, falling linearly to 0 at a year. A result reached through the
//! taxonomy is `inferred_only` (the `whelk_inferred` flag) when no asserted path
//! joins it to its seed: no chain of stated named subclass links (`is-subclass-of`,
//! a named `owl:subClassOf`, an equivalence of two named classes) leads from the
//! lower of the two to the upper, so the reasoner, not the pages, put it there.

use std::collections::{HashMap, VecDeque};

use super::{domain_of, Index, SUBCLASS_OF};
use crate::domain::ontology::entity::keys;
use crate::domain::ontology_query::NodeId;

/// Hops the taxonomy is expanded, up and down.
pub const DEPTH: usize = 3;
/// The relationships followed from a seed (the fan-out, docs/ontology.md).
pub const FAN_OUT: [&str; 5] = [
    "HAS_PART",
    "REQUIRES",
    "ENABLES",
    "BRIDGES_TO",
    "RELATES_TO",
];
/// Seeds expanded at most (the best ones): a common word must not drag in the whole
/// ontology's neighbourhoods.
const MAX_SEEDS: usize = 50;

/// How a seed matched the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matched {
    Keyword,
    Semantic,
}

/// A class the query matched, and how well (0..1).
#[derive(Debug, Clone, PartialEq)]
pub struct Seed {
    pub iri: String,
    pub score: f32,
    pub matched: Matched,
}

/// How a result was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundBy {
    Keyword,
    Semantic,
    Hierarchy,
    Relationship,
}

impl FoundBy {
    pub fn as_str(self) -> &'static str {
        match self {
            FoundBy::Keyword => "keyword",
            FoundBy::Semantic => "semantic",
            FoundBy::Hierarchy => "hierarchy",
            FoundBy::Relationship => "relationship",
        }
    }
}

/// A discovered class.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub iri: String,
    pub relevance: f32,
    pub keyword: f32,
    pub quality: f32,
    pub authority: f32,
    pub recency: f32,
    pub domain: String,
    pub found_by: FoundBy,
    /// The seed it was reached from (itself for a seed), and in how many hops.
    pub via: String,
    pub hops: usize,
    /// Reached only across inferred subsumptions.
    pub inferred_only: bool,
}

/// What to discover.
#[derive(Debug, Clone)]
pub struct Options {
    pub limit: usize,
    /// Keep classes of this domain only.
    pub domain: Option<String>,
    /// Today, as days since 1970-01-01 (for recency).
    pub today: i64,
}

/// Days since 1970-01-01 of a `YYYY-MM-DD` date.
pub fn days(date: &str) -> Option<i64> {
    let d = date.trim().get(..10)?;
    let mut it = d.split('-');
    let (y, m, dd) = (
        it.next()?.parse::<i32>().ok()?,
        it.next()?.parse::<u8>().ok()?,
        it.next()?.parse::<u8>().ok()?,
    );
    let month = time::Month::try_from(m).ok()?;
    let date = time::Date::from_calendar_date(y, month, dd).ok()?;
    Some(
        i64::from(date.to_julian_day())
            - i64::from(
                time::Date::from_calendar_date(1970, time::Month::January, 1)
                    .ok()?
                    .to_julian_day(),
            ),
    )
}

/// A reached class's best way so far.
struct Reach {
    keyword: f32,
    by: FoundBy,
    via: String,
    hops: usize,
    asserted: bool,
}

/// The stated named subclass links, up (`sub → sups`) and down (`sup → subs`).
fn told_links(o: &crate::domain::ontology::Ontology) -> [HashMap<&str, Vec<&str>>; 2] {
    use crate::domain::ontology::{Axiom, ClassExpr};
    let mut up: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut down: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    for s in &o.axioms {
        match &s.axiom {
            Axiom::SubClassOf(ClassExpr::Class(a), ClassExpr::Class(b)) => pairs.push((a, b)),
            Axiom::EquivalentClasses(xs) => {
                let named: Vec<&str> = xs
                    .iter()
                    .filter_map(|x| x.as_class())
                    .map(|s| s.as_str())
                    .collect();
                for &a in &named {
                    for &b in &named {
                        if a != b {
                            pairs.push((a, b));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    for (a, b) in pairs {
        up.entry(a).or_default().push(b);
        down.entry(b).or_default().push(a);
    }
    [up, down]
}

/// Every class a chain of links from `start` reaches.
fn closure<'a>(
    links: &HashMap<&'a str, Vec<&'a str>>,
    start: &'a str,
) -> std::collections::HashSet<&'a str> {
    let mut seen = std::collections::HashSet::from([start]);
    let mut stack = vec![start];
    while let Some(x) = stack.pop() {
        for &y in links.get(x).map(|v| v.as_slice()).unwrap_or(&[]) {
            if seen.insert(y) {
                stack.push(y);
            }
        }
    }
    seen
}

/// Runs discovery from `seeds`.
pub fn discover(index: &Index, seeds: &[Seed], o: &Options) -> Vec<Found> {
    let told = told_links(&index.ontology);
    let mut seeds: Vec<&Seed> = seeds
        .iter()
        .filter(|s| index.node(&s.iri).is_some())
        .collect();
    seeds.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.iri.cmp(&b.iri)));
    seeds.dedup_by(|a, b| a.iri == b.iri);
    seeds.truncate(MAX_SEEDS);
    let mut reached: HashMap<NodeId, Reach> = HashMap::new();
    let mut note = |n: NodeId, r: Reach| match reached.get_mut(&n) {
        Some(cur) => {
            let asserted = cur.asserted || r.asserted;
            if r.keyword > cur.keyword || (r.keyword == cur.keyword && r.asserted && !cur.asserted)
            {
                *cur = r;
            }
            cur.asserted = asserted;
        }
        None => {
            reached.insert(n, r);
        }
    };
    let g = &index.graph;
    for s in &seeds {
        let Some(start) = index.node(&s.iri) else {
            continue;
        };
        let by = match s.matched {
            Matched::Keyword => FoundBy::Keyword,
            Matched::Semantic => FoundBy::Semantic,
        };
        note(
            start,
            Reach {
                keyword: s.score,
                by,
                via: s.iri.clone(),
                hops: 0,
                asserted: true,
            },
        );
        // The taxonomy, up (out-edges) and down (in-edges), breadth first; a node is
        // visited once per direction, asserted when stated links join it to the seed.
        for up in [true, false] {
            let stated = closure(&told[usize::from(!up)], s.iri.as_str());
            let mut seen: HashMap<NodeId, ()> = HashMap::new();
            let mut queue = VecDeque::from([(start, 0usize)]);
            while let Some((n, d)) = queue.pop_front() {
                if d >= DEPTH {
                    continue;
                }
                let edges = if up { g.out_edges(n) } else { g.in_edges(n) };
                for &e in edges {
                    if g.rel_type(e) != Some(SUBCLASS_OF) {
                        continue;
                    }
                    let Some((from, to)) = g.endpoints(e) else {
                        continue;
                    };
                    let next = if up { to } else { from };
                    if seen.insert(next, ()).is_some() {
                        continue;
                    }
                    let a = stated.contains(index.iri(next));
                    let k = s.score * 0.5f32.powi(d as i32 + 1);
                    note(
                        next,
                        Reach {
                            keyword: k,
                            by: FoundBy::Hierarchy,
                            via: s.iri.clone(),
                            hops: d + 1,
                            asserted: a,
                        },
                    );
                    queue.push_back((next, d + 1));
                }
            }
        }
        for &e in g.out_edges(start) {
            if !g.rel_type(e).is_some_and(|t| FAN_OUT.contains(&t)) {
                continue;
            }
            if let Some((_, to)) = g.endpoints(e) {
                note(
                    to,
                    Reach {
                        keyword: s.score * 0.5,
                        by: FoundBy::Relationship,
                        via: s.iri.clone(),
                        hops: 1,
                        asserted: true,
                    },
                );
            }
        }
    }
    let mut out: Vec<Found> = Vec::with_capacity(reached.len());
    for (n, r) in reached {
        let iri = index.iri(n).to_string();
        let Some(e) = index.ontology.entity(&iri) else {
            continue;
        };
        if e.kind != crate::domain::ontology::EntityKind::Class {
            continue;
        }
        let domain = domain_of(&index.ontology, &iri);
        if let Some(want) = &o.domain {
            if !domain.eq_ignore_ascii_case(want) {
                continue;
            }
        }
        let quality = e.meta.quality_score().unwrap_or(0.0).clamp(0.0, 1.0);
        let authority = e.meta.authority_score().unwrap_or(0.0).clamp(0.0, 1.0);
        let recency = e
            .meta
            .get(keys::LAST_UPDATED)
            .and_then(days)
            .map(|d| (1.0 - (o.today - d).max(0) as f32 / 365.0).clamp(0.0, 1.0))
            .unwrap_or(0.0);
        let relevance = r.keyword * 0.4 + quality * 0.3 + authority * 0.2 + recency * 0.1;
        out.push(Found {
            iri,
            relevance,
            keyword: r.keyword,
            quality,
            authority,
            recency,
            domain,
            found_by: r.by,
            via: r.via,
            hops: r.hops,
            inferred_only: !r.asserted,
        });
    }
    out.sort_by(|a, b| b.relevance.total_cmp(&a.relevance).then(a.iri.cmp(&b.iri)));
    out.truncate(o.limit);
    out
}
