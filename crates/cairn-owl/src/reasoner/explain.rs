//! Justifications: the asserted axioms an entailment follows from. The few contexts
//! the entailment needs are saturated again with tracing on; the first derivation of
//! the goal is followed back to the normal forms it used (and the role inclusions
//! its role steps relied on), which map to asserted axioms; then each axiom is
//! dropped in turn and kept out when the rest still entails the goal, so every axiom
//! left is needed.
//!
//! Knows ids and normal forms; the caller maps axiom indices to axioms.

use super::engine::{Engine, Fact, NoTrace, Trace, Why};
use super::idset::FxMap;
use super::normalize::{Tbox, BOTTOM, TOP};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

/// The indices of a minimal set of asserted axioms from which `x ∈ S(c)` (or `c`'s
/// unsatisfiability) follows, or `None` when it does not follow at all.
///
/// With `also`, the goal that must keep holding while axioms are dropped is wider:
/// `x ∈ S(d)` or `d ⊑ ⊥` for `c` or any of `also` (an inconsistency is any individual
/// being unsatisfiable, whichever it is), while the first trace starts from `c`.
pub(crate) fn justify(
    tbox: &Arc<Tbox>,
    n_concepts: usize,
    c: u32,
    x: u32,
    also: &[u32],
) -> Option<Vec<u32>> {
    let mut eng: Engine<Trace> = Engine::new(Arc::clone(tbox), n_concepts);
    eng.activate(c);
    eng.run();
    let goal = if eng.has(c, x) {
        Fact::Sub(c, x)
    } else if eng.unsat(c) {
        Fact::Sub(c, BOTTOM)
    } else {
        return None;
    };
    let (nfs, paths) = trace_back(&eng.tracer.reasons, goal);
    let mut used: BTreeSet<u32> = nfs.into_iter().collect();
    for (s, t) in paths {
        used.extend(tbox.role_path(s, t));
    }
    let mut axioms: Vec<u32> = used
        .iter()
        .filter_map(|&nf| tbox.origin.get(nf as usize).copied())
        .collect::<BTreeSet<u32>>()
        .into_iter()
        .collect();
    let mut starts = vec![c];
    starts.extend(also.iter().copied().filter(|&d| d != c));
    if !entails(tbox, &axioms, &starts, x) {
        // The trace should always suffice; if it does not, answer it unshrunk rather
        // than something that does not entail the goal.
        return Some(axioms);
    }
    let mut i = 0;
    while i < axioms.len() {
        let mut trial = axioms.clone();
        trial.remove(i);
        if entails(tbox, &trial, &starts, x) {
            axioms = trial;
        } else {
            i += 1;
        }
    }
    Some(axioms)
}

/// The normal forms and role steps `s ⊑* t` the first derivation of `goal` used.
fn trace_back(reasons: &FxMap<Fact, Why>, goal: Fact) -> (Vec<u32>, Vec<(u32, u32)>) {
    let mut nfs = Vec::new();
    let mut paths = Vec::new();
    let mut seen: HashSet<Fact> = HashSet::new();
    let mut stack = vec![goal];
    while let Some(f) = stack.pop() {
        if !seen.insert(f) {
            continue;
        }
        let Some(why) = reasons.get(&f) else { continue };
        match *why {
            Why::Init => {}
            Why::Told { nf, c, x } | Why::ExR { nf, c, x } => {
                nfs.push(nf);
                stack.push(Fact::Sub(c, x));
            }
            Why::Conj { nf, c, x, z } => {
                nfs.push(nf);
                stack.push(Fact::Sub(c, x));
                stack.push(Fact::Sub(c, z));
            }
            Why::Range { nf, r, s } => {
                nfs.push(nf);
                paths.push((r, s));
            }
            Why::ExL { nf, e, s, c, x, t } => {
                nfs.push(nf);
                stack.push(Fact::Link(e, s, c));
                stack.push(Fact::Sub(c, x));
                paths.push((s, t));
            }
            Why::Bottom { e, s, c } => {
                stack.push(Fact::Link(e, s, c));
                stack.push(Fact::Sub(c, BOTTOM));
            }
            Why::Chain {
                nf,
                e,
                s,
                c,
                u,
                d,
                s1,
                u1,
            } => {
                nfs.push(nf);
                stack.push(Fact::Link(e, s, c));
                stack.push(Fact::Link(c, u, d));
                paths.push((s, s1));
                paths.push((u, u1));
            }
            Why::Reflexive { nf } => nfs.push(nf),
            Why::Global { a, f } => stack.push(Fact::Sub(a, f)),
            Why::EmptyRole { e, r, c, b, nf } => {
                nfs.push(nf);
                stack.push(Fact::Link(e, r, c));
                paths.push((r, b));
            }
            Why::ReflexiveRange { refl, range, r, s }
            | Why::OpaRange {
                opa: refl,
                range,
                r,
                s,
            } => {
                nfs.push(refl);
                nfs.push(range);
                paths.push((r, s));
            }
        }
    }
    (nfs, paths)
}

/// True when the normal forms of the axioms `subset` alone entail `x ∈ S(c)` (or
/// `c ⊑ ⊥`) for some `c` of `starts`. The subset is renumbered densely so the check
/// costs what the subset costs, not what the whole ontology does; a start the subset
/// never mentions is only tried when it is the first (it can entail nothing else).
pub(crate) fn entails(tbox: &Tbox, subset: &[u32], starts: &[u32], x: u32) -> bool {
    let mut concepts: FxMap<u32, u32> = FxMap::default();
    concepts.insert(TOP, TOP);
    concepts.insert(BOTTOM, BOTTOM);
    let mut roles: FxMap<u32, u32> = FxMap::default();
    fn id(v: u32, m: &mut FxMap<u32, u32>) -> u32 {
        let n = m.len() as u32;
        *m.entry(v).or_insert(n)
    }
    let (cid, rid) = (id, id);
    let Some(&first) = starts.first() else {
        return false;
    };
    let c2 = cid(first, &mut concepts);
    let x2 = cid(x, &mut concepts);
    let mut small = Tbox::default();
    for &a in subset {
        let start = tbox.axiom_start.get(a as usize).copied().unwrap_or(0) as usize;
        let end = tbox
            .axiom_start
            .get(a as usize + 1)
            .map(|&e| e as usize)
            .unwrap_or(tbox.nfs.len());
        for nf in tbox.nfs.get(start..end).unwrap_or(&[]) {
            use super::normalize::Nf::*;
            let m = &mut concepts;
            let n = match *nf {
                Sub(p, q) => Sub(cid(p, m), cid(q, m)),
                Conj(p, q, r) => Conj(cid(p, m), cid(q, m), cid(r, m)),
                ExR(p, r, q) => ExR(cid(p, m), rid(r, &mut roles), cid(q, m)),
                ExL(r, p, q) => ExL(rid(r, &mut roles), cid(p, m), cid(q, m)),
                RoleSub(r, s) => RoleSub(rid(r, &mut roles), rid(s, &mut roles)),
                Chain(r, s, t) => Chain(rid(r, &mut roles), rid(s, &mut roles), rid(t, &mut roles)),
                Range(r, p) => Range(rid(r, &mut roles), cid(p, m)),
                Reflexive(r) => Reflexive(rid(r, &mut roles)),
                OpaRange(b, r) => OpaRange(cid(b, m), rid(r, &mut roles)),
                Universal(r) => Universal(rid(r, &mut roles)),
                Empty(r) => Empty(rid(r, &mut roles)),
                TopFill(p) => TopFill(cid(p, m)),
                Nonempty(p) => Nonempty(cid(p, m)),
            };
            small.add(n, a);
        }
    }
    small.finish_roles(roles.len());
    let starts: Vec<u32> = std::iter::once(c2)
        .chain(
            starts
                .iter()
                .skip(1)
                .filter_map(|d| concepts.get(d).copied()),
        )
        .collect();
    let mut eng: Engine<NoTrace> = Engine::new(Arc::new(small), concepts.len());
    for &d in &starts {
        eng.activate(d);
    }
    eng.run();
    starts.iter().any(|&d| eng.has(d, x2) || eng.unsat(d))
}
