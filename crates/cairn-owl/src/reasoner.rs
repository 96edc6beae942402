//! The EL reasoner: classification of an [`Ontology`] by saturation (in the manner of
//! ELK), its taxonomy, consistency, individuals' types, proposals checked against a
//! copy of the saturated state, and justifications for what it infers.
//!
//! Supported (OWL 2 EL as ELK classifies it, without nominals, datatypes or keys):
//! named classes, `owl:Thing`, `owl:Nothing`, intersections and existential
//! restrictions anywhere in class axioms; equivalence and disjointness; property
//! hierarchies, chains (any length), transitivity, reflexivity, domains and ranges;
//! class and property assertions, with individuals treated as singleton-like concepts
//! (an individual's concept is not merged with another's, as in ELK). Ranges are
//! handled as ELK does: an existential's filler is met together with the ranges of
//! its property and that property's super-properties. This is complete when every
//! chain `r1 ∘ … ∘ rn ⊑ s` has the ranges of `s` implied by those of `rn` (the
//! syntactic restriction of EL with range restrictions); otherwise it stays sound.
//!
//! This module knows axioms and IRIs, not pages or files.

mod engine;
mod explain;
mod idset;
#[cfg(test)]
mod naive;
mod normalize;
mod taxonomy;
#[cfg(test)]
mod tests;

use super::axiom::EntityKind;
use super::axiom::{Axiom, Sourced};
use super::expr::{ClassExpr, NameRole, BOTTOM_PROPERTY, THING, TOP_PROPERTY};
use super::model::Ontology;
use engine::{Engine, NoTrace};
use idset::Fx;
use normalize::{Kind, Normalizer, Symbols, Tbox, BOTTOM, TOP};
use std::collections::{BTreeSet, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::Arc;
use taxonomy::{Taxonomy, BOTTOM_NODE, TOP_NODE};

type FxSet<T> = HashSet<T, BuildHasherDefault<Fx>>;

/// A subsumption between two named classes: `sub ⊑ sup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Subsumption<'a> {
    /// The subclass.
    pub sub: &'a str,
    /// The superclass.
    pub sup: &'a str,
    /// True when an axiom asserts it directly (`SubClassOf(sub sup)` or an equivalence
    /// of the two); false when it is inferred.
    pub asserted: bool,
}

/// A set of asserted axioms from which an entailment follows, each with the page and
/// line it was asserted on; removing any one of them loses the entailment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Justification {
    /// The axioms, in the order they were asserted.
    pub axioms: Vec<Sourced>,
}

/// What changed between two classifications (a proposal's effect).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassificationDiff {
    /// Subsumptions `(sub, sup)` that hold after but not before.
    pub gained: Vec<(String, String)>,
    /// Subsumptions that held before but not after.
    pub lost: Vec<(String, String)>,
    /// Classes unsatisfiable after but not before.
    pub newly_unsatisfiable: Vec<String>,
    /// Classes unsatisfiable before but not after.
    pub no_longer_unsatisfiable: Vec<String>,
    /// Consistency before and after.
    pub consistent: (bool, bool),
}

/// The reasoner's result for one ontology: a value that can be asked about the
/// taxonomy, and extended with more axioms without changing it.
#[derive(Debug, Clone)]
pub struct Classification {
    sym: Arc<Symbols>,
    engine: Engine<NoTrace>,
    /// The asserted axioms, in segments (a proposal adds one segment), numbered in
    /// order: axiom `i` of the normal forms' origins.
    axioms: Vec<Arc<Vec<Sourced>>>,
    /// Asserted named subsumptions `(sub, sup)` as concept ids.
    told: Arc<FxSet<(u32, u32)>>,
    tax: Taxonomy,
    consistent: bool,
    /// This classification's number, and that of the one it continued from (by
    /// [`Classification::with_axioms`] without starting over): a continuation only
    /// grows each context's subsumers, which lets [`diff`] skip unchanged classes.
    id: u64,
    parent: Option<u64>,
}

/// Numbers classifications (for [`diff`]'s shortcut); only equality matters.
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Classifies an ontology.
pub fn classify(o: &Ontology) -> Classification {
    let mut sym = Symbols::new();
    // Entities first, in IRI order, so class indices follow the ontology's order.
    for (iri, e) in &o.entities {
        match e.kind {
            EntityKind::Class => {
                sym.class(iri);
            }
            EntityKind::Individual => {
                sym.individual(iri);
            }
            EntityKind::ObjectProperty => {
                sym.role(iri);
            }
        }
    }
    build(sym, vec![Arc::new(o.axioms.clone())])
}

fn build(mut sym: Symbols, axioms: Vec<Arc<Vec<Sourced>>>) -> Classification {
    let mut tbox = Tbox::default();
    let mut told = FxSet::default();
    {
        let mut n = Normalizer::new(&mut sym, &mut tbox);
        n.top = axioms
            .iter()
            .flat_map(|seg| seg.iter())
            .any(|s| names_builtin(&s.axiom, TOP_PROPERTY));
        for (i, s) in axioms.iter().flat_map(|seg| seg.iter()).enumerate() {
            n.axiom(&s.axiom, i as u32);
        }
    }
    for s in axioms.iter().flat_map(|seg| seg.iter()) {
        note_told(&mut sym, &mut told, &s.axiom);
    }
    tbox.finish_roles(sym.role_names.len());
    let mut engine: Engine<NoTrace> = Engine::new(Arc::new(tbox), sym.kind.len());
    engine.saturate_all(&sym);
    finish(sym, engine, axioms, told, None)
}

fn finish(
    mut sym: Symbols,
    engine: Engine<NoTrace>,
    axioms: Vec<Arc<Vec<Sourced>>>,
    told: FxSet<(u32, u32)>,
    parent: Option<u64>,
) -> Classification {
    // Range fillers made by the saturation take concept ids after the symbols'; the
    // symbols learn of them so names added later get ids after them.
    while sym.kind.len() < engine.ctx.len() {
        sym.kind.push(Kind::Fresh);
    }
    let tax = Taxonomy::build(&engine, &sym);
    let consistent = !engine.unsat(TOP) && sym.individual_ids.iter().all(|&a| !engine.unsat(a));
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Classification {
        sym: Arc::new(sym),
        engine,
        axioms,
        told: Arc::new(told),
        tax,
        consistent,
        id,
        parent,
    }
}

/// True when the axiom names the built-in property `p`.
fn names_builtin(a: &Axiom, p: &str) -> bool {
    let mut found = false;
    let mut look = |x: &ClassExpr| {
        x.for_each_name(&mut |n, role| found |= role == NameRole::Property && n == p)
    };
    match a {
        Axiom::SubClassOf(x, y) => {
            look(x);
            look(y);
        }
        Axiom::EquivalentClasses(xs) | Axiom::DisjointClasses(xs) => xs.iter().for_each(look),
        Axiom::ObjectPropertyDomain(r, x) | Axiom::ObjectPropertyRange(r, x) => {
            look(x);
            found |= r == p;
        }
        Axiom::ClassAssertion(x, _) => look(x),
        Axiom::SubObjectPropertyOf(ch, s) => found |= s == p || ch.iter().any(|r| r == p),
        Axiom::TransitiveObjectProperty(r)
        | Axiom::ReflexiveObjectProperty(r)
        | Axiom::ObjectPropertyAssertion(r, _, _) => found |= r == p,
    }
    found
}

fn note_told(sym: &mut Symbols, told: &mut FxSet<(u32, u32)>, a: &Axiom) {
    match a {
        Axiom::SubClassOf(ClassExpr::Class(x), ClassExpr::Class(y)) => {
            let (x, y) = (sym.class(x), sym.class(y));
            told.insert((x, y));
        }
        Axiom::EquivalentClasses(xs) => {
            let named: Vec<u32> = xs
                .iter()
                .filter_map(|x| x.as_class())
                .map(|n| sym.class(n))
                .collect();
            for &x in &named {
                for &y in &named {
                    if x != y {
                        told.insert((x, y));
                    }
                }
            }
        }
        _ => {}
    }
}

impl Classification {
    /// True unless `owl:Thing` is unsatisfiable or an individual belongs to an
    /// unsatisfiable class.
    pub fn is_consistent(&self) -> bool {
        self.consistent
    }

    fn class_id(&self, iri: &str) -> Option<u32> {
        if iri == THING {
            return Some(TOP);
        }
        self.sym.classes.get(iri).copied()
    }

    fn class_name(&self, idx: u32) -> &str {
        self.sym
            .class_names
            .get(idx as usize)
            .map(|s| s.as_str())
            .unwrap_or("")
    }

    fn node_names(&self, nd: u32) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        if nd == TOP_NODE {
            v.push(THING);
        }
        if let Some(n) = self.tax.nodes.get(nd as usize) {
            v.extend(n.members.iter().map(|&i| self.class_name(i)));
        }
        v
    }

    fn node(&self, iri: &str) -> Option<u32> {
        if iri == THING {
            return Some(TOP_NODE);
        }
        let c = *self.sym.classes.get(iri)?;
        let idx = *self.tax.class_of.get(c as usize)?;
        self.tax.node_of.get(idx as usize).copied()
    }

    /// The named classes, in the order the ontology declared them.
    pub fn classes(&self) -> impl Iterator<Item = &str> {
        self.sym.class_names.iter().map(|s| s.as_str())
    }

    /// The unsatisfiable named classes (all of them when the ontology is inconsistent
    /// because `owl:Thing` is), in IRI order.
    pub fn unsatisfiable(&self) -> Vec<&str> {
        let mut v = self.node_names(BOTTOM_NODE);
        v.sort_unstable();
        v
    }

    /// Whether the class can have instances; `None` for an unknown IRI.
    pub fn is_satisfiable(&self, iri: &str) -> Option<bool> {
        self.node(iri).map(|n| n != BOTTOM_NODE)
    }

    /// True when `sub ⊑ sup` is entailed (always, for an unsatisfiable `sub`).
    pub fn subsumes(&self, sup: &str, sub: &str) -> bool {
        let (Some(a), Some(b)) = (self.class_id(sub), self.class_id(sup)) else {
            return false;
        };
        a == b || b == TOP || self.engine.has(a, b) || self.engine.unsat(a)
    }

    /// The classes in the direct parent nodes of a class (`owl:Thing` for a top-level
    /// class), sorted; empty for an unknown or unsatisfiable class.
    pub fn direct_parents(&self, iri: &str) -> Vec<&str> {
        let Some(nd) = self.node(iri).filter(|&n| n != BOTTOM_NODE) else {
            return Vec::new();
        };
        let mut v: Vec<&str> = self
            .tax
            .nodes
            .get(nd as usize)
            .map(|n| n.parents.iter().flat_map(|&p| self.node_names(p)).collect())
            .unwrap_or_default();
        v.sort_unstable();
        v
    }

    /// The classes in the direct child nodes of a class (or of `owl:Thing`), sorted.
    pub fn direct_children(&self, iri: &str) -> Vec<&str> {
        let Some(nd) = self.node(iri).filter(|&n| n != BOTTOM_NODE) else {
            return Vec::new();
        };
        let mut v: Vec<&str> = self
            .tax
            .nodes
            .get(nd as usize)
            .map(|n| {
                n.children
                    .iter()
                    .flat_map(|&p| self.node_names(p))
                    .collect()
            })
            .unwrap_or_default();
        v.sort_unstable();
        v
    }

    /// The other classes equivalent to this one, sorted.
    pub fn equivalents(&self, iri: &str) -> Vec<&str> {
        let Some(nd) = self.node(iri) else {
            return Vec::new();
        };
        let mut v: Vec<&str> = self
            .node_names(nd)
            .into_iter()
            .filter(|n| *n != iri)
            .collect();
        v.sort_unstable();
        v
    }

    /// Every named superclass of a satisfiable class other than itself and
    /// `owl:Thing` (equivalent classes included), each flagged asserted or inferred,
    /// sorted by superclass.
    pub fn superclasses(&self, iri: &str) -> Vec<Subsumption<'_>> {
        let Some(c) = self.class_id(iri) else {
            return Vec::new();
        };
        if self.engine.unsat(c) || c == TOP {
            return Vec::new();
        }
        let idx = self
            .tax
            .class_of
            .get(c as usize)
            .copied()
            .unwrap_or(u32::MAX);
        let sub = self.class_name(idx);
        let mut v: Vec<Subsumption<'_>> = self
            .sups_of(c)
            .map(|(d, sup)| Subsumption {
                sub,
                sup,
                asserted: self.told.contains(&(c, d)),
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// Named satisfiable superclasses of concept `c` (not itself): `(id, name)`.
    fn sups_of(&self, c: u32) -> impl Iterator<Item = (u32, &str)> + '_ {
        self.engine
            .ctx
            .get(c as usize)
            .into_iter()
            .flat_map(|k| k.subs.iter())
            .filter(move |&d| d != c)
            .filter_map(move |d| {
                let idx = *self.tax.class_of.get(d as usize)?;
                (idx != u32::MAX && !self.engine.unsat(d)).then(|| (d, self.class_name(idx)))
            })
    }

    /// Every subsumption between distinct satisfiable named classes (without
    /// `owl:Thing`), flagged asserted or inferred, in no particular order.
    pub fn subsumptions(&self) -> Vec<Subsumption<'_>> {
        let mut out = Vec::new();
        for (i, &c) in self.sym.class_ids.iter().enumerate() {
            if self.engine.unsat(c) {
                continue;
            }
            let sub = self.class_name(i as u32);
            out.extend(self.sups_of(c).map(|(d, sup)| Subsumption {
                sub,
                sup,
                asserted: self.told.contains(&(c, d)),
            }));
        }
        out
    }

    /// The named individuals.
    pub fn individuals(&self) -> impl Iterator<Item = &str> {
        self.sym.individual_names.iter().map(|s| s.as_str())
    }

    /// The named classes an individual belongs to (satisfiable ones), sorted.
    pub fn types(&self, individual: &str) -> Vec<&str> {
        let Some(&a) = self.sym.individuals.get(individual) else {
            return Vec::new();
        };
        let mut v: Vec<&str> = self.sups_of(a).map(|(_, n)| n).collect();
        v.sort_unstable();
        v
    }

    /// The most specific named classes an individual belongs to, sorted.
    pub fn direct_types(&self, individual: &str) -> Vec<&str> {
        let Some(&a) = self.sym.individuals.get(individual) else {
            return Vec::new();
        };
        let Some(k) = self.engine.ctx.get(a as usize) else {
            return Vec::new();
        };
        let mut marks = taxonomy::Marks::new(self.tax.nodes.len());
        let nodes = self.tax.reduce(&self.engine, &k.subs, u32::MAX, &mut marks);
        let mut v: Vec<&str> = nodes.into_iter().flat_map(|n| self.node_names(n)).collect();
        v.sort_unstable();
        v
    }

    /// The individuals whose concept is unsatisfiable (each makes the ontology
    /// inconsistent).
    pub fn inconsistent_individuals(&self) -> Vec<&str> {
        self.sym
            .individual_ids
            .iter()
            .zip(&self.sym.individual_names)
            .filter(|(&a, _)| self.engine.unsat(a))
            .map(|(_, n)| n.as_str())
            .collect()
    }

    /// The number of asserted axioms reasoned over.
    pub fn axiom_count(&self) -> usize {
        self.axioms.iter().map(|s| s.len()).sum()
    }

    fn axiom(&self, mut i: usize) -> Option<&Sourced> {
        for seg in &self.axioms {
            if i < seg.len() {
                return seg.get(i);
            }
            i -= seg.len();
        }
        None
    }

    fn justification(&self, c: u32, x: u32, also: &[u32]) -> Option<Justification> {
        let ids = explain::justify(&self.engine.tbox, self.sym.kind.len(), c, x, also)?;
        let axioms = ids
            .into_iter()
            .filter_map(|i| self.axiom(i as usize).cloned())
            .collect();
        Some(Justification { axioms })
    }

    /// A justification of `sub ⊑ sup` (empty when it is trivial: `sup` is `sub` or
    /// `owl:Thing`); `None` when it does not hold or a name is unknown.
    pub fn explain_subsumption(&self, sub: &str, sup: &str) -> Option<Justification> {
        let (a, b) = (self.class_id(sub)?, self.class_id(sup)?);
        if a == b || b == TOP {
            return Some(Justification { axioms: Vec::new() });
        }
        if !self.subsumes(sup, sub) {
            return None;
        }
        self.justification(a, b, &[])
    }

    /// A justification of a class's unsatisfiability; `None` when it is satisfiable.
    pub fn explain_unsatisfiable(&self, class: &str) -> Option<Justification> {
        let a = self.class_id(class)?;
        if !self.engine.unsat(a) {
            return None;
        }
        self.justification(a, BOTTOM, &[])
    }

    /// A justification of the ontology's inconsistency (`owl:Thing` unsatisfiable, or
    /// the first individual in an unsatisfiable class); `None` when consistent.
    pub fn explain_inconsistency(&self) -> Option<Justification> {
        // Any unsatisfiable individual (or `owl:Thing`) makes the ontology
        // inconsistent, so the shrinking keeps whichever still is.
        let mut all = vec![TOP];
        all.extend(self.sym.individual_ids.iter().copied());
        if self.engine.unsat(TOP) {
            return self.justification(TOP, BOTTOM, &all);
        }
        let a = self
            .sym
            .individual_ids
            .iter()
            .copied()
            .find(|&a| self.engine.unsat(a))?;
        self.justification(a, BOTTOM, &all)
    }

    /// The classification of this ontology plus `extra` axioms; `self` is unchanged.
    /// Class axioms and assertions continue the saturation from a copy of this state
    /// (EL is monotone); an axiom about properties (sub-property, chain, transitivity,
    /// reflexivity, range) changes what every link means, so then the whole is
    /// classified again; so does one naming a built-in property, or any axiom when
    /// the ontology names `owl:topObjectProperty` (its individuals are then marked).
    pub fn with_axioms(&self, extra: &[Sourced]) -> Classification {
        let mut axioms = self.axioms.clone();
        axioms.push(Arc::new(extra.to_vec()));
        let builtin =
            |a: &Axiom| names_builtin(a, TOP_PROPERTY) || names_builtin(a, BOTTOM_PROPERTY);
        if self.sym.roles.contains_key(TOP_PROPERTY)
            || extra
                .iter()
                .any(|s| s.axiom.is_property_axiom() || builtin(&s.axiom))
        {
            return build(self.base_symbols(), axioms);
        }
        let mut sym = (*self.sym).clone();
        let mut engine = self.engine.clone();
        let mut told = (*self.told).clone();
        let first = self.axiom_count();
        let first_nf = engine.tbox.nfs.len();
        {
            let tbox = Arc::make_mut(&mut engine.tbox);
            let mut n = Normalizer::new(&mut sym, tbox);
            for (i, s) in extra.iter().enumerate() {
                n.axiom(&s.axiom, (first + i) as u32);
            }
            let roles = n.sym.role_names.len();
            tbox.extend_roles(roles);
        }
        for s in extra {
            note_told(&mut sym, &mut told, &s.axiom);
        }
        engine.continue_with(&sym, first_nf);
        finish(sym, engine, axioms, told, Some(self.id))
    }

    /// The classification without the given axioms (every asserted copy of each):
    /// removals are not monotone, so this classifies the rest from scratch.
    pub fn without_axioms(&self, removed: &[Axiom]) -> Classification {
        let gone: HashSet<&Axiom> = removed.iter().collect();
        let kept: Vec<Sourced> = self
            .axioms
            .iter()
            .flat_map(|s| s.iter())
            .filter(|s| !gone.contains(&s.axiom))
            .cloned()
            .collect();
        build(self.base_symbols(), vec![Arc::new(kept)])
    }

    /// The declared names, without fresh ones, for classifying again.
    fn base_symbols(&self) -> Symbols {
        let mut sym = Symbols::new();
        for n in &self.sym.class_names {
            sym.class(n);
        }
        for n in &self.sym.individual_names {
            sym.individual(n);
        }
        for n in self.sym.role_names.iter().flatten() {
            sym.role(n);
        }
        sym
    }
}

/// The subsumptions gained and lost from `a` to `b` (and the change in
/// unsatisfiable classes and consistency), each list sorted. Classes are matched by
/// IRI; a classification made by [`Classification::with_axioms`] shares its base's
/// ids, which makes this a walk over the two saturated states without string work
/// except for what changed.
pub fn diff(a: &Classification, b: &Classification) -> ClassificationDiff {
    let mut gained = one_way(a, b);
    let mut lost = one_way(b, a);
    gained.sort_unstable();
    lost.sort_unstable();
    let unsat = |c: &Classification| -> BTreeSet<String> {
        c.unsatisfiable().into_iter().map(str::to_string).collect()
    };
    let (ua, ub) = (unsat(a), unsat(b));
    ClassificationDiff {
        gained,
        lost,
        newly_unsatisfiable: ub.difference(&ua).cloned().collect(),
        no_longer_unsatisfiable: ua.difference(&ub).cloned().collect(),
        consistent: (a.consistent, b.consistent),
    }
}

/// Subsumptions of `b` (between satisfiable named classes) that `a` lacks.
fn one_way(a: &Classification, b: &Classification) -> Vec<(String, String)> {
    // When one continued the other, a class whose context kept its size and its
    // satisfiability kept its subsumers (contexts only grow), so it is skipped.
    let related = b.parent == Some(a.id) || a.parent == Some(b.id);
    let same = |c: u32| {
        related
            && a.engine.ctx.get(c as usize).map(|k| k.subs.len())
                == b.engine.ctx.get(c as usize).map(|k| k.subs.len())
            && a.engine.unsat(c) == b.engine.unsat(c)
    };
    // The concept id in `a` of each class of `b`, by position when the names line up.
    let ids: Vec<Option<u32>> = b
        .sym
        .class_names
        .iter()
        .enumerate()
        .map(|(i, n)| match a.sym.class_names.get(i) {
            Some(m) if m == n => a.sym.class_ids.get(i).copied(),
            _ => a.sym.classes.get(n).copied(),
        })
        .collect();
    let in_a = |idx: u32| ids.get(idx as usize).copied().flatten();
    let mut out = Vec::new();
    for (i, &c) in b.sym.class_ids.iter().enumerate() {
        if b.engine.unsat(c) {
            continue;
        }
        let ca = in_a(i as u32).filter(|&x| !a.engine.unsat(x));
        if ca == Some(c) && same(c) {
            continue;
        }
        for (d, name) in b.sups_of(c) {
            let Some(j) = b.tax.class_of.get(d as usize).copied() else {
                continue;
            };
            let held = match (ca, in_a(j)) {
                (Some(x), Some(y)) => !a.engine.unsat(y) && a.engine.has(x, y),
                _ => false,
            };
            if !held {
                out.push((b.class_name(i as u32).to_string(), name.to_string()));
            }
        }
    }
    out
}
