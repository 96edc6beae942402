//! Normalisation of EL axioms into the normal forms the completion rules work on,
//! over dense integer ids, and the per-rule indexes the saturation looks them up by.
//!
//! Normal forms (`A`, `B`, `C` concept ids, `r`, `s`, `t` role ids):
//! `A ⊑ B`, `A ⊓ B ⊑ C`, `A ⊑ ∃r.B`, `∃r.A ⊑ B`, `r ⊑ s`, `r ∘ s ⊑ t`,
//! `range(r) ⊑ A`, `reflexive(r)`. A domain is `∃r.⊤ ⊑ A`; transitivity is
//! `r ∘ r ⊑ r`; an individual `a` is a concept `{a}` (no nominal semantics, as in
//! ELK), with `C(a)` as `{a} ⊑ C` and `r(a, b)` as `{a} ⊑ ∃r.{b}` plus `{b} ⊑ D` for
//! each range `D` of `r`. Complex subexpressions get fresh names, one per axiom (never
//! shared between axioms), so that every normal form comes from exactly one asserted
//! axiom: an explanation can then map what it used back to axioms, and a subset of
//! axioms normalises to the subset of normal forms.
//!
//! The built-in properties: `owl:topObjectProperty` (`T`, relating every pair of
//! things) is a super-role of every role, and `∃T.C` on a left-hand side becomes a
//! fresh `F` with `C ⊑ F` (T is reflexive), `∃T.F ⊑ F` (T is transitive) and
//! `F ⊑ D`; such an `F` marked "top filler" holds everywhere once it holds in a
//! context known to have an instance (`⊤`, or an individual: named individuals
//! exist), which the saturation applies. `owl:bottomObjectProperty` and every role
//! under it are empty: a link through one makes its source unsatisfiable. Each
//! axiom that names a built-in says so in its own normal forms (`Universal`,
//! `Empty`), so a subset of axioms, renumbered for an explanation, still knows them.
//!
//! This module knows axioms and ids; it knows nothing of pages or text.

use super::super::axiom::{Axiom, Iri};
use super::super::expr::{ClassExpr, BOTTOM_PROPERTY, NOTHING, THING, TOP_PROPERTY};
use super::idset::FxMap;
use std::collections::HashMap;

/// `owl:Thing`.
pub(crate) const TOP: u32 = 0;
/// `owl:Nothing`.
pub(crate) const BOTTOM: u32 = 1;

/// What a concept id stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Top,
    Bottom,
    Class,
    Individual,
    /// A name for a complex subexpression, or a range filler made by the saturation.
    Fresh,
}

/// One normal form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Nf {
    Sub(u32, u32),
    Conj(u32, u32, u32),
    ExR(u32, u32, u32),
    ExL(u32, u32, u32),
    RoleSub(u32, u32),
    Chain(u32, u32, u32),
    Range(u32, u32),
    Reflexive(u32),
    /// `r(a, b)`'s range part: `{b}` gets the ranges of `r` (fields: b, r).
    OpaRange(u32, u32),
    /// Role `r` is `owl:topObjectProperty`.
    Universal(u32),
    /// Role `r` is `owl:bottomObjectProperty`.
    Empty(u32),
    /// Concept `F` stands for `∃owl:topObjectProperty.C`: true of everything once
    /// true of anything known to exist.
    TopFill(u32),
    /// Concept `{a}` has an instance (a named individual).
    Nonempty(u32),
}

/// How a chain `s1 ∘ u1 ⊑ v` applies to a pair of link roles `(s, u)` with
/// `s ⊑* s1` and `u ⊑* u1`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Comp {
    pub v: u32,
    pub nf: u32,
    pub s1: u32,
    pub u1: u32,
    /// The chain is a transitivity axiom `v ∘ v ⊑ v`.
    pub trans: bool,
}

/// The compositions of one pair of link roles `(s, u)`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Comps {
    pub list: Vec<Comp>,
    /// Every result `v` absorbs `u` on the right (`v ∘ u ⊑ v` is among the
    /// compositions): then a `u`-link made by `u`'s own transitivity need not be
    /// composed with, because the shorter links it was made of give the same results.
    pub absorbing: bool,
}

/// Names of the entities behind ids.
#[derive(Clone, Debug, Default)]
pub(crate) struct Symbols {
    pub kind: Vec<Kind>,
    pub classes: HashMap<Iri, u32>,
    pub individuals: HashMap<Iri, u32>,
    pub roles: HashMap<Iri, u32>,
    /// Concept ids of named classes, in the order they were declared.
    pub class_ids: Vec<u32>,
    pub class_names: Vec<Iri>,
    pub individual_ids: Vec<u32>,
    pub individual_names: Vec<Iri>,
    pub role_names: Vec<Option<Iri>>,
}

impl Symbols {
    pub(crate) fn new() -> Symbols {
        Symbols {
            kind: vec![Kind::Top, Kind::Bottom],
            ..Symbols::default()
        }
    }

    pub(crate) fn class(&mut self, iri: &str) -> u32 {
        if iri == THING {
            return TOP;
        }
        if iri == NOTHING {
            return BOTTOM;
        }
        if let Some(&id) = self.classes.get(iri) {
            return id;
        }
        let id = self.kind.len() as u32;
        self.kind.push(Kind::Class);
        self.classes.insert(iri.to_string(), id);
        self.class_ids.push(id);
        self.class_names.push(iri.to_string());
        id
    }

    pub(crate) fn individual(&mut self, iri: &str) -> u32 {
        if let Some(&id) = self.individuals.get(iri) {
            return id;
        }
        let id = self.kind.len() as u32;
        self.kind.push(Kind::Individual);
        self.individuals.insert(iri.to_string(), id);
        self.individual_ids.push(id);
        self.individual_names.push(iri.to_string());
        id
    }

    pub(crate) fn role(&mut self, iri: &str) -> u32 {
        if let Some(&id) = self.roles.get(iri) {
            return id;
        }
        let id = self.role_names.len() as u32;
        self.role_names.push(Some(iri.to_string()));
        self.roles.insert(iri.to_string(), id);
        id
    }

    pub(crate) fn fresh_concept(&mut self) -> u32 {
        let id = self.kind.len() as u32;
        self.kind.push(Kind::Fresh);
        id
    }

    fn fresh_role(&mut self) -> u32 {
        let id = self.role_names.len() as u32;
        self.role_names.push(None);
        id
    }
}

fn set_flag(v: &mut Vec<bool>, i: u32) {
    let i = i as usize;
    if v.len() <= i {
        v.resize(i + 1, false);
    }
    v[i] = true;
}

fn at<T>(v: &[Vec<T>], i: u32) -> &[T] {
    v.get(i as usize).map(|x| x.as_slice()).unwrap_or(&[])
}

fn slot<T>(v: &mut Vec<Vec<T>>, i: u32) -> &mut Vec<T> {
    let i = i as usize;
    if v.len() <= i {
        v.resize_with(i + 1, Vec::new);
    }
    &mut v[i]
}

/// The normalised axioms with their origins and the indexes the rules use.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tbox {
    /// Every normal form, and the index of the asserted axiom it came from.
    pub nfs: Vec<Nf>,
    pub origin: Vec<u32>,
    /// By concept `A`: `(B, nf)` for `A ⊑ B`.
    pub told: Vec<Vec<(u32, u32)>>,
    /// By conjunct `A`: `(B, C, nf)` for `A ⊓ B ⊑ C` (entered under both conjuncts).
    pub conj: Vec<Vec<(u32, u32, u32)>>,
    /// By concept `A`: `(r, B, nf)` for `A ⊑ ∃r.B`.
    pub ex_rhs: Vec<Vec<(u32, u32, u32)>>,
    /// By filler `A`: `(r, B, nf)` for `∃r.A ⊑ B`.
    pub ex_lhs: Vec<Vec<(u32, u32, u32)>>,
    /// By individual concept `{b}`: `(r, nf)` for each `r(a, b)`.
    pub opa_in: Vec<Vec<(u32, u32)>>,
    /// Told role inclusions by sub-role: `(s, nf)`.
    pub role_sub: Vec<Vec<(u32, u32)>>,
    /// Binary chains `(r1, r2, v, nf)`.
    pub chains: Vec<(u32, u32, u32, u32)>,
    /// Told ranges by role: `(A, nf)`.
    pub range_told: Vec<Vec<(u32, u32)>>,
    /// Reflexive roles `(r, nf)`.
    pub reflexive: Vec<(u32, u32)>,
    // Derived from the role axioms by `finish_roles`.
    /// Super-roles of each role, itself included, sorted.
    pub supers: Vec<Vec<u32>>,
    /// Ranges of each role: `(A, nf, s)` for `range(s) ⊑ A` with `r ⊑* s`.
    pub ranges: Vec<Vec<(u32, u32, u32)>>,
    pub comps: FxMap<(u32, u32), Comps>,
    pub chain_left: Vec<bool>,
    pub chain_right: Vec<bool>,
    /// Start of each asserted axiom's normal forms in `nfs` (they are contiguous).
    pub axiom_start: Vec<u32>,
    /// By role: true for `owl:topObjectProperty`.
    pub universal: Vec<bool>,
    /// Told empty roles `(r, nf)`; derived: by role, the empty role above it and
    /// the normal form saying so.
    pub empty_told: Vec<(u32, u32)>,
    pub empty: Vec<Option<(u32, u32)>>,
    /// By concept: true for a top filler.
    pub top_fill: Vec<bool>,
    /// Concepts with an instance.
    pub nonempty: Vec<u32>,
    pub nonempty_set: Vec<bool>,
}

impl Tbox {
    #[inline]
    pub(crate) fn told(&self, a: u32) -> &[(u32, u32)] {
        at(&self.told, a)
    }
    #[inline]
    pub(crate) fn conj(&self, a: u32) -> &[(u32, u32, u32)] {
        at(&self.conj, a)
    }
    #[inline]
    pub(crate) fn ex_rhs(&self, a: u32) -> &[(u32, u32, u32)] {
        at(&self.ex_rhs, a)
    }
    #[inline]
    pub(crate) fn ex_lhs(&self, a: u32) -> &[(u32, u32, u32)] {
        at(&self.ex_lhs, a)
    }
    #[inline]
    pub(crate) fn opa_in(&self, b: u32) -> &[(u32, u32)] {
        at(&self.opa_in, b)
    }
    #[inline]
    pub(crate) fn ranges(&self, r: u32) -> &[(u32, u32, u32)] {
        at(&self.ranges, r)
    }
    /// True when `s ⊑* t`.
    #[inline]
    pub(crate) fn is_sub_role(&self, s: u32, t: u32) -> bool {
        s == t
            || self.universal.get(t as usize).copied().unwrap_or(false)
            || at(&self.supers, s).binary_search(&t).is_ok()
    }
    /// For an empty role: the told empty role above it and its normal form.
    #[inline]
    pub(crate) fn empty(&self, r: u32) -> Option<(u32, u32)> {
        self.empty.get(r as usize).copied().flatten()
    }
    #[inline]
    pub(crate) fn is_top_fill(&self, c: u32) -> bool {
        self.top_fill.get(c as usize).copied().unwrap_or(false)
    }
    /// True when the concept is known to have an instance (`⊤` always does).
    #[inline]
    pub(crate) fn is_nonempty(&self, c: u32) -> bool {
        c == TOP || self.nonempty_set.get(c as usize).copied().unwrap_or(false)
    }
    #[inline]
    pub(crate) fn comps(&self, s: u32, u: u32) -> Option<&Comps> {
        self.comps.get(&(s, u))
    }
    #[inline]
    pub(crate) fn chain_left(&self, r: u32) -> bool {
        self.chain_left.get(r as usize).copied().unwrap_or(false)
    }
    #[inline]
    pub(crate) fn chain_right(&self, r: u32) -> bool {
        self.chain_right.get(r as usize).copied().unwrap_or(false)
    }

    /// Adds one normal form to the list and its index.
    pub(crate) fn add(&mut self, nf: Nf, origin: u32) {
        let id = self.nfs.len() as u32;
        self.nfs.push(nf);
        self.origin.push(origin);
        self.index(nf, id);
    }

    fn index(&mut self, nf: Nf, id: u32) {
        match nf {
            Nf::Sub(a, b) => slot(&mut self.told, a).push((b, id)),
            Nf::Conj(a, b, c) => {
                slot(&mut self.conj, a).push((b, c, id));
                if a != b {
                    slot(&mut self.conj, b).push((a, c, id));
                }
            }
            Nf::ExR(a, r, b) => slot(&mut self.ex_rhs, a).push((r, b, id)),
            Nf::ExL(r, a, b) => slot(&mut self.ex_lhs, a).push((r, b, id)),
            Nf::RoleSub(r, s) => slot(&mut self.role_sub, r).push((s, id)),
            Nf::Chain(r, s, t) => self.chains.push((r, s, t, id)),
            Nf::Range(r, a) => slot(&mut self.range_told, r).push((a, id)),
            Nf::Reflexive(r) => self.reflexive.push((r, id)),
            Nf::OpaRange(b, r) => slot(&mut self.opa_in, b).push((r, id)),
            Nf::Universal(r) => set_flag(&mut self.universal, r),
            Nf::Empty(r) => self.empty_told.push((r, id)),
            Nf::TopFill(c) => set_flag(&mut self.top_fill, c),
            Nf::Nonempty(c) => {
                if !self.nonempty_set.get(c as usize).copied().unwrap_or(false) {
                    set_flag(&mut self.nonempty_set, c);
                    self.nonempty.push(c);
                }
            }
        }
    }

    /// Computes the role hierarchy's closure, the ranges each role inherits and the
    /// chain compositions, for `n_roles` roles.
    pub(crate) fn finish_roles(&mut self, n_roles: usize) {
        let mut supers = vec![Vec::new(); n_roles];
        for (r, sup) in supers.iter_mut().enumerate() {
            let mut seen = vec![false; n_roles];
            let mut stack = vec![r as u32];
            seen[r] = true;
            while let Some(x) = stack.pop() {
                sup.push(x);
                for &(s, _) in at(&self.role_sub, x) {
                    if let Some(f) = seen.get_mut(s as usize) {
                        if !*f {
                            *f = true;
                            stack.push(s);
                        }
                    }
                }
            }
            sup.sort_unstable();
        }
        let mut subs_of = vec![Vec::new(); n_roles];
        for (r, sup) in supers.iter().enumerate() {
            for &s in sup {
                if let Some(v) = subs_of.get_mut(s as usize) {
                    v.push(r as u32);
                }
            }
        }
        let mut ranges = vec![Vec::new(); n_roles];
        for (r, sup) in supers.iter().enumerate() {
            for &s in sup {
                for &(a, nf) in at(&self.range_told, s) {
                    ranges[r].push((a, nf, s));
                }
            }
        }
        let mut comps: FxMap<(u32, u32), Comps> = FxMap::default();
        let mut left = vec![false; n_roles];
        let mut right = vec![false; n_roles];
        for &(r1, r2, v, nf) in &self.chains {
            for &s in at(&subs_of, r1) {
                for &u in at(&subs_of, r2) {
                    let trans = r1 == r2 && r2 == v;
                    comps.entry((s, u)).or_default().list.push(Comp {
                        v,
                        nf,
                        s1: r1,
                        u1: r2,
                        trans,
                    });
                    left[s as usize] = true;
                    right[u as usize] = true;
                }
            }
        }
        let keys: Vec<(u32, u32)> = comps.keys().copied().collect();
        for (s, u) in keys {
            let absorbing = comps.get(&(s, u)).is_some_and(|c| {
                c.list.iter().all(|cp| {
                    comps
                        .get(&(cp.v, u))
                        .is_some_and(|d| d.list.iter().any(|x| x.v == cp.v))
                })
            });
            if let Some(c) = comps.get_mut(&(s, u)) {
                c.absorbing = absorbing;
            }
        }
        let mut empty = vec![None; n_roles];
        for (r, sup) in supers.iter().enumerate() {
            empty[r] = self
                .empty_told
                .iter()
                .find(|(b, _)| sup.binary_search(b).is_ok())
                .copied();
        }
        self.empty = empty;
        self.supers = supers;
        self.ranges = ranges;
        self.comps = comps;
        self.chain_left = left;
        self.chain_right = right;
    }

    /// Gives roles added since `finish_roles` (by axioms that say nothing about roles)
    /// their trivial closure.
    pub(crate) fn extend_roles(&mut self, n_roles: usize) {
        while self.supers.len() < n_roles {
            let r = self.supers.len() as u32;
            self.supers.push(vec![r]);
            self.ranges.push(Vec::new());
            self.empty.push(None);
            self.chain_left.push(false);
            self.chain_right.push(false);
        }
    }

    /// The told role inclusions (normal-form ids) on one path `s ⊑* t`, found by
    /// breadth-first search; empty when `s == t`.
    pub(crate) fn role_path(&self, s: u32, t: u32) -> Vec<u32> {
        if s == t {
            return Vec::new();
        }
        let mut prev: HashMap<u32, (u32, u32)> = HashMap::new();
        let mut queue = std::collections::VecDeque::from([s]);
        while let Some(x) = queue.pop_front() {
            for &(y, nf) in at(&self.role_sub, x) {
                if y != s && !prev.contains_key(&y) {
                    prev.insert(y, (x, nf));
                    if y == t {
                        let mut path = Vec::new();
                        let mut cur = t;
                        while let Some(&(p, nf)) = prev.get(&cur) {
                            path.push(nf);
                            if p == s {
                                break;
                            }
                            cur = p;
                        }
                        return path;
                    }
                    queue.push_back(y);
                }
            }
        }
        Vec::new()
    }
}

/// Turns axioms into normal forms, naming entities as it meets them.
pub(crate) struct Normalizer<'a> {
    pub sym: &'a mut Symbols,
    pub tbox: &'a mut Tbox,
    origin: u32,
    /// The ontology names `owl:topObjectProperty`: individuals are then marked as
    /// having instances (what makes a top filler hold everywhere).
    pub top: bool,
    /// Whether the current axiom has said which roles are built-in.
    said: (bool, bool),
}

impl<'a> Normalizer<'a> {
    pub(crate) fn new(sym: &'a mut Symbols, tbox: &'a mut Tbox) -> Self {
        Normalizer {
            sym,
            tbox,
            origin: 0,
            top: false,
            said: (false, false),
        }
    }

    /// A role's id; a built-in one is marked in the current axiom's normal forms.
    fn role(&mut self, iri: &str) -> u32 {
        let r = self.sym.role(iri);
        if iri == TOP_PROPERTY && !self.said.0 {
            self.said.0 = true;
            self.nf(Nf::Universal(r));
        } else if iri == BOTTOM_PROPERTY && !self.said.1 {
            self.said.1 = true;
            self.nf(Nf::Empty(r));
        }
        r
    }

    fn individual(&mut self, iri: &str) -> u32 {
        let a = self.sym.individual(iri);
        if self.top {
            self.nf(Nf::Nonempty(a));
        }
        a
    }

    fn nf(&mut self, nf: Nf) {
        self.tbox.add(nf, self.origin);
    }

    /// Normalises the asserted axiom number `origin`.
    pub(crate) fn axiom(&mut self, a: &Axiom, origin: u32) {
        self.origin = origin;
        self.said = (false, false);
        while self.tbox.axiom_start.len() <= origin as usize {
            self.tbox.axiom_start.push(self.tbox.nfs.len() as u32);
        }
        let top = TOP_PROPERTY;
        match a {
            // Tautologies about the universal property: every role is under it, it
            // is reflexive and transitive. Its domain and range are everything.
            Axiom::SubObjectPropertyOf(_, s) if s == top => {
                self.role(top);
            }
            Axiom::TransitiveObjectProperty(r) | Axiom::ReflexiveObjectProperty(r) if r == top => {
                self.role(top);
            }
            Axiom::ObjectPropertyDomain(r, c) | Axiom::ObjectPropertyRange(r, c) if r == top => {
                self.role(top);
                self.rhs(c, TOP);
            }
            // The universal property under the empty one: nothing can exist.
            Axiom::SubObjectPropertyOf(ch, s) if ch.len() == 1 && ch[0] == top => {
                self.role(top);
                self.role(s);
                if s == BOTTOM_PROPERTY {
                    self.nf(Nf::Sub(TOP, BOTTOM));
                }
            }
            Axiom::SubClassOf(l, r) => {
                let x = self.lhs(l);
                self.rhs(r, x);
            }
            Axiom::EquivalentClasses(xs) => {
                if let Some((first, rest)) = xs.split_first() {
                    for y in rest {
                        let a = self.lhs(first);
                        self.rhs(y, a);
                        let b = self.lhs(y);
                        self.rhs(first, b);
                    }
                }
            }
            Axiom::DisjointClasses(xs) => {
                for i in 0..xs.len() {
                    for j in i + 1..xs.len() {
                        let a = self.lhs(&xs[i]);
                        let b = self.lhs(&xs[j]);
                        if a == b {
                            self.nf(Nf::Sub(a, BOTTOM));
                        } else {
                            self.nf(Nf::Conj(a, b, BOTTOM));
                        }
                    }
                }
            }
            Axiom::SubObjectPropertyOf(chain, s) => {
                let s = self.role(s);
                let rs: Vec<u32> = chain.iter().map(|r| self.role(r)).collect();
                match rs.as_slice() {
                    [] => {}
                    [r] => self.nf(Nf::RoleSub(*r, s)),
                    [first, middle @ .., last] => {
                        let mut cur = *first;
                        for &m in middle {
                            let f = self.sym.fresh_role();
                            self.nf(Nf::Chain(cur, m, f));
                            cur = f;
                        }
                        self.nf(Nf::Chain(cur, *last, s));
                    }
                }
            }
            Axiom::TransitiveObjectProperty(r) => {
                let r = self.role(r);
                self.nf(Nf::Chain(r, r, r));
            }
            Axiom::ReflexiveObjectProperty(r) => {
                let r = self.role(r);
                self.nf(Nf::Reflexive(r));
            }
            Axiom::ObjectPropertyDomain(r, c) => {
                let r = self.role(r);
                let x = match self.atomic(c) {
                    Some(id) => id,
                    None => self.sym.fresh_concept(),
                };
                self.nf(Nf::ExL(r, TOP, x));
                if self.atomic(c).is_none() {
                    self.rhs(c, x);
                }
            }
            Axiom::ObjectPropertyRange(r, c) => {
                let r = self.role(r);
                match self.atomic(c) {
                    Some(id) => self.nf(Nf::Range(r, id)),
                    None => {
                        let w = self.sym.fresh_concept();
                        self.rhs(c, w);
                        self.nf(Nf::Range(r, w));
                    }
                }
            }
            Axiom::ClassAssertion(c, a) => {
                let a = self.individual(a);
                self.rhs(c, a);
            }
            Axiom::ObjectPropertyAssertion(r, a, b) => {
                let r = self.role(r);
                let a = self.individual(a);
                let b = self.individual(b);
                self.nf(Nf::ExR(a, r, b));
                self.nf(Nf::OpaRange(b, r));
            }
        }
    }

    fn atomic(&mut self, c: &ClassExpr) -> Option<u32> {
        match c {
            ClassExpr::Thing => Some(TOP),
            ClassExpr::Nothing => Some(BOTTOM),
            ClassExpr::Class(n) => Some(self.sym.class(n)),
            _ => None,
        }
    }

    /// A concept id `X` with `C ⊑ X` entailed by the normal forms added.
    fn lhs(&mut self, c: &ClassExpr) -> u32 {
        if let Some(id) = self.atomic(c) {
            return id;
        }
        match c {
            ClassExpr::And(xs) => {
                let ids: Vec<u32> = xs.iter().map(|x| self.lhs(x)).collect();
                let mut acc = match ids.first() {
                    Some(&a) => a,
                    None => return TOP,
                };
                for &y in &ids[1..] {
                    if y == acc || y == TOP {
                        continue;
                    }
                    if acc == TOP {
                        acc = y;
                        continue;
                    }
                    let f = self.sym.fresh_concept();
                    self.nf(Nf::Conj(acc, y, f));
                    acc = f;
                }
                acc
            }
            ClassExpr::Some(r, f) if r == TOP_PROPERTY => {
                let fid = self.lhs(f);
                let t = self.role(r);
                let x = self.sym.fresh_concept();
                self.nf(Nf::Sub(fid, x));
                self.nf(Nf::ExL(t, x, x));
                self.nf(Nf::TopFill(x));
                x
            }
            ClassExpr::Some(r, f) => {
                let fid = self.lhs(f);
                let r = self.role(r);
                let x = self.sym.fresh_concept();
                self.nf(Nf::ExL(r, fid, x));
                x
            }
            _ => TOP,
        }
    }

    /// Adds normal forms making `X ⊑ C`.
    fn rhs(&mut self, c: &ClassExpr, x: u32) {
        match c {
            ClassExpr::Thing => {}
            ClassExpr::Nothing => self.nf(Nf::Sub(x, BOTTOM)),
            ClassExpr::Class(n) => {
                let b = self.sym.class(n);
                if b != x && b != TOP {
                    self.nf(Nf::Sub(x, b));
                }
            }
            ClassExpr::And(ys) => ys.iter().for_each(|y| self.rhs(y, x)),
            ClassExpr::Some(r, f) => {
                let fid = match self.atomic(f) {
                    Some(id) => id,
                    None => {
                        let w = self.sym.fresh_concept();
                        self.rhs(f, w);
                        w
                    }
                };
                let r = self.role(r);
                self.nf(Nf::ExR(x, r, fid));
            }
        }
    }
}
