//! Small rewrites of a plan under construction: paths reversed, conditions split
//! into conjuncts and pushed down to the path that binds them, the slots an
//! expression reads.

use super::*;

pub(super) fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Node => "node",
        Kind::Rel => "relationship",
        Kind::RelList => "list of relationships",
        Kind::Map => "map",
        Kind::Any => "value",
    }
}

/// The text with its whitespace removed, to compare expressions as written.
pub(super) fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The same path matched from its other end.
pub(super) fn reverse(p: PPath) -> PPath {
    let mut nodes = p.nodes;
    nodes.reverse();
    let mut rels = p.rels;
    rels.reverse();
    for r in &mut rels {
        r.direction = match r.direction {
            Direction::Right => Direction::Left,
            Direction::Left => Direction::Right,
            Direction::Either => Direction::Either,
        };
    }
    PPath { nodes, rels }
}

/// The operands of a chain of ANDs.
pub(super) fn conjuncts(e: PExpr, out: &mut Vec<PExpr>) {
    match e {
        PExpr::Binary(BinaryOp::And, l, r, _) => {
            conjuncts(*l, out);
            conjuncts(*r, out);
        }
        other => out.push(other),
    }
}

pub(super) fn and_all(items: Vec<PExpr>) -> Option<PExpr> {
    items
        .into_iter()
        .reduce(|a, b| PExpr::Binary(BinaryOp::And, Box::new(a), Box::new(b), 0))
}

/// Moves each condition of a MATCH to the first node pattern after which every
/// variable it reads is bound, so that a failing condition prunes the search
/// there rather than after the whole pattern is matched. Returns what is left
/// (nothing, unless a condition reads a variable no node binds). A WHERE is part
/// of the match, OPTIONAL or not, so where it is checked changes no answer.
pub(super) fn push_down(
    paths: &mut [PPath],
    conditions: Vec<PExpr>,
    fresh: &[usize],
) -> Option<PExpr> {
    let mut reads: Vec<(PExpr, Vec<usize>)> = conditions
        .into_iter()
        .map(|c| {
            let mut slots = Vec::new();
            visit_slots(&c, &mut |s| {
                if fresh.contains(&s) && !slots.contains(&s) {
                    slots.push(s);
                }
            });
            (c, slots)
        })
        .collect();
    let mut bound: Vec<usize> = Vec::new();
    for path in paths.iter_mut() {
        for k in 0..path.nodes.len() {
            if let Some(n) = path.nodes.get(k) {
                bound.push(n.slot);
            }
            if let Some(r) = k.checked_sub(1).and_then(|j| path.rels.get(j)) {
                bound.push(r.slot);
            }
            let (here, later): (Vec<_>, Vec<_>) = reads
                .into_iter()
                .partition(|(_, slots)| slots.iter().all(|s| bound.contains(s)));
            reads = later;
            if here.is_empty() {
                continue;
            }
            if let Some(n) = path.nodes.get_mut(k) {
                let mut all: Vec<PExpr> = n.predicate.take().into_iter().collect();
                all.extend(here.into_iter().map(|(c, _)| c));
                n.predicate = and_all(all);
            }
        }
    }
    and_all(reads.into_iter().map(|(c, _)| c).collect())
}

/// True when `e` reads any of `slots`.
pub(super) fn reads_any(e: &PExpr, slots: &[usize]) -> bool {
    let mut found = false;
    visit_slots(e, &mut |s| found |= slots.contains(&s));
    found
}

/// The slots `e` reads outside its aggregates.
pub(super) fn slots_outside_aggs(e: &PExpr, out: &mut Vec<usize>) {
    visit_slots(e, &mut |s| out.push(s));
}

/// Calls `f` with every slot `e` reads; aggregates' arguments live apart from the
/// expression and are not visited.
pub(super) fn visit_slots(e: &PExpr, f: &mut dyn FnMut(usize)) {
    match e {
        PExpr::Const(_) | PExpr::Agg(_) => {}
        PExpr::Slot(s) => f(*s),
        PExpr::Prop { base, .. } => visit_slots(base, f),
        PExpr::List(items) | PExpr::Call(_, items, _) => {
            for i in items {
                visit_slots(i, f);
            }
        }
        PExpr::Map(entries) => {
            for (_, v) in entries {
                visit_slots(v, f);
            }
        }
        PExpr::Not(i, _)
        | PExpr::Neg(i, _)
        | PExpr::IsNull(i, _)
        | PExpr::HasLabels(i, _, _, _) => visit_slots(i, f),
        PExpr::Binary(_, l, r, _) => {
            visit_slots(l, f);
            visit_slots(r, f);
        }
    }
}
