//! The reasoner's twin for tests: a naive fixpoint over class expressions, written to
//! be obviously right rather than fast. No normalisation and no fresh names: nodes of
//! the canonical model are sets of subexpressions (a filler together with the ranges
//! of its property), every rule is retried over everything until nothing changes, and
//! property edges are closed explicitly under the hierarchy and every chain, walked
//! step by step.

use super::super::axiom::{Axiom, EntityKind};
use super::super::expr::ClassExpr;
use super::super::model::Ontology;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum E {
    Top,
    Bot,
    Class(String),
    Ind(String),
    And(Vec<usize>),
    Some(String, usize),
}

/// What the twin concludes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Answer {
    /// `(sub, sup)` between distinct satisfiable named classes.
    pub subs: BTreeSet<(String, String)>,
    pub unsat: BTreeSet<String>,
    pub consistent: bool,
    /// `(individual, class)` for satisfiable individuals.
    pub types: BTreeSet<(String, String)>,
}

struct Twin {
    exprs: Vec<E>,
    ids: BTreeMap<E, usize>,
    told: Vec<(usize, usize)>,
}

impl Twin {
    fn intern(&mut self, e: E) -> usize {
        if let Some(&i) = self.ids.get(&e) {
            return i;
        }
        self.exprs.push(e.clone());
        self.ids.insert(e, self.exprs.len() - 1);
        self.exprs.len() - 1
    }

    fn expr(&mut self, c: &ClassExpr) -> usize {
        let e = match c {
            ClassExpr::Thing => E::Top,
            ClassExpr::Nothing => E::Bot,
            ClassExpr::Class(n) => E::Class(n.clone()),
            ClassExpr::And(xs) => {
                let v = xs.iter().map(|x| self.expr(x)).collect();
                E::And(v)
            }
            ClassExpr::Some(r, f) => {
                let f = self.expr(f);
                E::Some(r.clone(), f)
            }
        };
        self.intern(e)
    }
}

pub(crate) fn answer(o: &Ontology) -> Answer {
    let mut t = Twin {
        exprs: Vec::new(),
        ids: BTreeMap::new(),
        told: Vec::new(),
    };
    let top = t.intern(E::Top);
    let bot = t.intern(E::Bot);
    let mut role_sub: BTreeSet<(String, String)> = BTreeSet::new();
    let mut chains: Vec<(Vec<String>, String)> = Vec::new();
    let mut reflexive: BTreeSet<String> = BTreeSet::new();
    let mut domains: Vec<(String, usize)> = Vec::new();
    let mut ranges: Vec<(String, usize)> = Vec::new();
    let mut opas: Vec<(String, String)> = Vec::new();
    let mut roles: BTreeSet<String> = o.iris(EntityKind::ObjectProperty).cloned().collect();
    for s in &o.axioms {
        match &s.axiom {
            Axiom::SubClassOf(a, b) => {
                let (a, b) = (t.expr(a), t.expr(b));
                t.told.push((a, b));
            }
            Axiom::EquivalentClasses(xs) => {
                for x in xs {
                    for y in xs {
                        let (a, b) = (t.expr(x), t.expr(y));
                        t.told.push((a, b));
                    }
                }
            }
            Axiom::DisjointClasses(xs) => {
                for (i, x) in xs.iter().enumerate() {
                    for y in &xs[i + 1..] {
                        let (a, b) = (t.expr(x), t.expr(y));
                        let both = t.intern(E::And(vec![a, b]));
                        t.told.push((both, bot));
                    }
                }
            }
            Axiom::SubObjectPropertyOf(ch, s) => {
                if ch.len() == 1 {
                    role_sub.insert((ch[0].clone(), s.clone()));
                } else {
                    chains.push((ch.clone(), s.clone()));
                }
            }
            Axiom::TransitiveObjectProperty(r) => {
                chains.push((vec![r.clone(), r.clone()], r.clone()))
            }
            Axiom::ReflexiveObjectProperty(r) => {
                reflexive.insert(r.clone());
            }
            Axiom::ObjectPropertyDomain(r, c) => {
                let c = t.expr(c);
                domains.push((r.clone(), c));
            }
            Axiom::ObjectPropertyRange(r, c) => {
                let c = t.expr(c);
                ranges.push((r.clone(), c));
            }
            Axiom::ClassAssertion(c, a) => {
                let (c, a) = (t.expr(c), t.intern(E::Ind(a.clone())));
                t.told.push((a, c));
            }
            Axiom::ObjectPropertyAssertion(r, a, b) => {
                let (ia, ib) = (t.intern(E::Ind(a.clone())), t.intern(E::Ind(b.clone())));
                let ex = t.intern(E::Some(r.clone(), ib));
                t.told.push((ia, ex));
                opas.push((r.clone(), b.clone()));
            }
        }
        for (iri, k) in s.axiom.signature() {
            if k == EntityKind::ObjectProperty {
                roles.insert(iri);
            }
        }
    }
    // The role hierarchy, closed reflexively and transitively by brute force.
    let mut sup: BTreeSet<(String, String)> =
        roles.iter().map(|r| (r.clone(), r.clone())).collect();
    sup.extend(role_sub.iter().cloned());
    loop {
        let mut more = Vec::new();
        for (a, b) in &sup {
            for (c, d) in &sup {
                if b == c && !sup.contains(&(a.clone(), d.clone())) {
                    more.push((a.clone(), d.clone()));
                }
            }
        }
        if more.is_empty() {
            break;
        }
        sup.extend(more);
    }
    let is_sub = |r: &str, s: &str| sup.contains(&(r.to_string(), s.to_string()));
    let ranges_of = |r: &str| -> BTreeSet<usize> {
        ranges
            .iter()
            .filter(|(s, _)| is_sub(r, s))
            .map(|(_, d)| *d)
            .collect()
    };
    // `r(a, b)` makes `b` an instance of every range of `r`.
    for (r, b) in &opas {
        let ib = t.intern(E::Ind(b.clone()));
        for d in ranges_of(r) {
            t.told.push((ib, d));
        }
    }
    let mut nodes: Vec<BTreeSet<usize>> = Vec::new();
    let mut node_ids: BTreeMap<BTreeSet<usize>, usize> = BTreeMap::new();
    let mut node_for = |set: BTreeSet<usize>, nodes: &mut Vec<BTreeSet<usize>>| -> usize {
        if let Some(&i) = node_ids.get(&set) {
            return i;
        }
        nodes.push(set.clone());
        node_ids.insert(set, nodes.len() - 1);
        nodes.len() - 1
    };
    let classes: Vec<String> = o.iris(EntityKind::Class).cloned().collect();
    let mut named_nodes: Vec<(String, usize)> = Vec::new();
    for c in &classes {
        let e = t.intern(E::Class(c.clone()));
        named_nodes.push((c.clone(), node_for(BTreeSet::from([e]), &mut nodes)));
    }
    let mut individuals: BTreeSet<String> = o.iris(EntityKind::Individual).cloned().collect();
    for e in &t.exprs {
        if let E::Ind(a) = e {
            individuals.insert(a.clone());
        }
    }
    let mut ind_nodes: Vec<(String, usize)> = Vec::new();
    for a in &individuals {
        let e = t.intern(E::Ind(a.clone()));
        ind_nodes.push((a.clone(), node_for(BTreeSet::from([e]), &mut nodes)));
    }
    let top_node = node_for(BTreeSet::from([top]), &mut nodes);
    let mut s: Vec<BTreeSet<usize>> = Vec::new();
    let mut edges: BTreeSet<(usize, String, usize)> = BTreeSet::new();
    loop {
        let mut changed = false;
        while s.len() < nodes.len() {
            s.push(BTreeSet::new());
        }
        for n in 0..nodes.len() {
            let mut add: Vec<usize> = nodes[n].iter().copied().collect();
            add.push(top);
            for &(a, b) in &t.told {
                if s[n].contains(&a) {
                    add.push(b);
                }
            }
            for (k, e) in t.exprs.iter().enumerate() {
                if let E::And(xs) = e {
                    if s[n].contains(&k) {
                        add.extend(xs.iter().copied());
                    }
                    if xs.iter().all(|x| s[n].contains(x)) {
                        add.push(k);
                    }
                }
            }
            for r in &reflexive {
                edges.insert((n, r.clone(), n));
                add.extend(ranges_of(r));
            }
            for x in add {
                changed |= s[n].insert(x);
            }
            let somes: Vec<(String, usize)> = s[n]
                .iter()
                .filter_map(|&k| match &t.exprs[k] {
                    E::Some(r, f) => Some((r.clone(), *f)),
                    _ => None,
                })
                .collect();
            for (r, f) in somes {
                let mut set = ranges_of(&r);
                set.insert(f);
                let m = node_for(set, &mut nodes);
                changed |= edges.insert((n, r, m));
            }
        }
        // Close the edges under the hierarchy and the chains.
        let mut more: Vec<(usize, String, usize)> = Vec::new();
        for (n, r, m) in &edges {
            for (a, b) in &sup {
                if a == r {
                    more.push((*n, b.clone(), *m));
                }
            }
        }
        for (ch, v) in &chains {
            for n in 0..nodes.len() {
                let mut frontier: BTreeSet<usize> = BTreeSet::from([n]);
                for r in ch {
                    frontier = edges
                        .iter()
                        .filter(|(x, q, _)| q == r && frontier.contains(x))
                        .map(|e| e.2)
                        .collect();
                }
                for m in frontier {
                    more.push((n, v.clone(), m));
                }
            }
        }
        for e in more {
            changed |= edges.insert(e);
        }
        while s.len() < nodes.len() {
            s.push(BTreeSet::new());
        }
        for (n, r, m) in edges.clone() {
            let mut add = Vec::new();
            if s[m].contains(&bot) {
                add.push(bot);
            }
            for (k, e) in t.exprs.iter().enumerate() {
                if let E::Some(q, f) = e {
                    if *q == r && s[m].contains(f) {
                        add.push(k);
                    }
                }
            }
            for (q, d) in &domains {
                if *q == r {
                    add.push(*d);
                }
            }
            for x in add {
                changed |= s[n].insert(x);
            }
        }
        if !changed {
            break;
        }
    }
    let top_unsat = s[top_node].contains(&bot);
    let mut ans = Answer {
        consistent: !top_unsat,
        ..Answer::default()
    };
    let class_of: BTreeMap<usize, &String> = classes
        .iter()
        .map(|c| (t.ids[&E::Class(c.clone())], c))
        .collect();
    for (c, n) in &named_nodes {
        if top_unsat || s[*n].contains(&bot) {
            ans.unsat.insert(c.clone());
        }
    }
    for (c, n) in &named_nodes {
        if ans.unsat.contains(c) {
            continue;
        }
        for k in &s[*n] {
            if let Some(d) = class_of.get(k) {
                if *d != c && !ans.unsat.contains(*d) {
                    ans.subs.insert((c.clone(), (*d).clone()));
                }
            }
        }
    }
    for (a, n) in &ind_nodes {
        if s[*n].contains(&bot) {
            ans.consistent = false;
            continue;
        }
        for k in &s[*n] {
            if let Some(d) = class_of.get(k) {
                if !ans.unsat.contains(*d) {
                    ans.types.insert((a.clone(), (*d).clone()));
                }
            }
        }
    }
    ans
}
