//! The EL axioms Cairn reasons over, each able to say where it was asserted.
//!
//! This module knows no syntax: pages (`model`) and OWL functional syntax (`ofn`)
//! both read into and write from these values. Names are IRIs (`prefix:Local` or
//! `<full>`).

use super::expr::{is_builtin_property, ClassExpr, BOTTOM_PROPERTY, TOP_PROPERTY};
use std::fmt;

/// An IRI as Cairn writes it: `ai:VisionTransformer`, or `<http://...>` when no prefix
/// covers it.
pub type Iri = String;

/// One asserted axiom of the OWL 2 EL subset.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Axiom {
    /// `SubClassOf(sub sup)`.
    SubClassOf(ClassExpr, ClassExpr),
    /// `EquivalentClasses(a b ...)`; an [`super::Ontology`] holds them as pairs.
    EquivalentClasses(Vec<ClassExpr>),
    /// `DisjointClasses(a b ...)`; an [`super::Ontology`] holds them as pairs.
    DisjointClasses(Vec<ClassExpr>),
    /// `SubObjectPropertyOf(p q)` when the chain has one property, else
    /// `SubObjectPropertyOf(ObjectPropertyChain(p1 ... pn) q)`.
    SubObjectPropertyOf(Vec<Iri>, Iri),
    /// `TransitiveObjectProperty(p)`.
    TransitiveObjectProperty(Iri),
    /// `ReflexiveObjectProperty(p)`.
    ReflexiveObjectProperty(Iri),
    /// `ObjectPropertyDomain(p C)`.
    ObjectPropertyDomain(Iri, ClassExpr),
    /// `ObjectPropertyRange(p C)`.
    ObjectPropertyRange(Iri, ClassExpr),
    /// `ClassAssertion(C a)`: individual `a` is a `C`.
    ClassAssertion(ClassExpr, Iri),
    /// `ObjectPropertyAssertion(p a b)`: `a` has `p` to `b`.
    ObjectPropertyAssertion(Iri, Iri, Iri),
}

/// Where an axiom or entity was read: a page file (relative path) or an OFN document,
/// and the 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Origin {
    /// The file as the caller named it (a page's path in the repository).
    pub file: String,
    /// 1-based line; 0 when unknown.
    pub line: usize,
}

impl Origin {
    /// An origin at `file:line`.
    pub fn new(file: impl Into<String>, line: usize) -> Self {
        Origin {
            file: file.into(),
            line,
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// An axiom with the place it was asserted, so an explanation can cite its page.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sourced {
    /// The axiom.
    pub axiom: Axiom,
    /// Where it was asserted.
    pub origin: Origin,
}

impl Axiom {
    /// The axiom in Cairn's canonical shape: an n-ary equivalence or disjointness
    /// becomes binary ones, with a named class first when there is one (that is the
    /// page it is written on), so every axiom has one page and reads back equal.
    pub fn canonical(self) -> Vec<Axiom> {
        fn pairs(xs: Vec<ClassExpr>, all_pairs: bool) -> Vec<Vec<ClassExpr>> {
            let mut xs = xs;
            // A named class first, so the axiom lives on its page.
            if let Some(i) = xs.iter().position(|x| x.as_class().is_some()) {
                let x = xs.remove(i);
                xs.insert(0, x);
            }
            let mut out = Vec::new();
            if all_pairs {
                for i in 0..xs.len() {
                    for j in i + 1..xs.len() {
                        out.push(order(vec![xs[i].clone(), xs[j].clone()]));
                    }
                }
            } else if let Some(first) = xs.first() {
                for x in xs.iter().skip(1) {
                    out.push(order(vec![first.clone(), x.clone()]));
                }
            }
            out
        }
        // In a pair, the named class goes first; two named classes keep their order.
        fn order(mut p: Vec<ClassExpr>) -> Vec<ClassExpr> {
            if p.len() == 2 && p[0].as_class().is_none() && p[1].as_class().is_some() {
                p.swap(0, 1);
            }
            p
        }
        match self {
            Axiom::EquivalentClasses(xs) if xs.len() > 2 || needs_order(&xs) => pairs(xs, false)
                .into_iter()
                .map(Axiom::EquivalentClasses)
                .collect(),
            Axiom::DisjointClasses(xs) if xs.len() > 2 || needs_order(&xs) => pairs(xs, true)
                .into_iter()
                .map(Axiom::DisjointClasses)
                .collect(),
            a => vec![a],
        }
    }

    /// Every IRI the axiom mentions, with the kind of entity it names there (not the
    /// built-in properties, which are no one's entities).
    pub fn signature(&self) -> Vec<(Iri, EntityKind)> {
        let mut out = self.names();
        out.retain(|(n, k)| !(*k == EntityKind::ObjectProperty && is_builtin_property(n)));
        out
    }

    /// Refuses what the reasoner cannot take: `owl:topObjectProperty` below another
    /// property or inside a chain (it would make that property universal too).
    pub fn check_supported(&self) -> Result<(), String> {
        if let Axiom::SubObjectPropertyOf(ch, s) = self {
            let top_below = ch.iter().any(|p| p == TOP_PROPERTY)
                && s != TOP_PROPERTY
                && !(ch.len() == 1 && s == BOTTOM_PROPERTY);
            if top_below {
                return Err(format!(
                    "{TOP_PROPERTY} as a sub-property of {s} or in a property chain is not supported by Cairn's reasoner"
                ));
            }
        }
        Ok(())
    }

    fn names(&self) -> Vec<(Iri, EntityKind)> {
        let mut out = Vec::new();
        let expr = |x: &ClassExpr, out: &mut Vec<(Iri, EntityKind)>| {
            x.for_each_name(&mut |n, role| {
                let k = match role {
                    super::expr::NameRole::Class => EntityKind::Class,
                    super::expr::NameRole::Property => EntityKind::ObjectProperty,
                };
                out.push((n.clone(), k));
            })
        };
        match self {
            Axiom::SubClassOf(a, b) => {
                expr(a, &mut out);
                expr(b, &mut out);
            }
            Axiom::EquivalentClasses(xs) | Axiom::DisjointClasses(xs) => {
                xs.iter().for_each(|x| expr(x, &mut out))
            }
            Axiom::SubObjectPropertyOf(ps, q) => {
                out.extend(ps.iter().map(|p| (p.clone(), EntityKind::ObjectProperty)));
                out.push((q.clone(), EntityKind::ObjectProperty));
            }
            Axiom::TransitiveObjectProperty(p) | Axiom::ReflexiveObjectProperty(p) => {
                out.push((p.clone(), EntityKind::ObjectProperty))
            }
            Axiom::ObjectPropertyDomain(p, c) | Axiom::ObjectPropertyRange(p, c) => {
                out.push((p.clone(), EntityKind::ObjectProperty));
                expr(c, &mut out);
            }
            Axiom::ClassAssertion(c, a) => {
                expr(c, &mut out);
                out.push((a.clone(), EntityKind::Individual));
            }
            Axiom::ObjectPropertyAssertion(p, a, b) => {
                out.push((p.clone(), EntityKind::ObjectProperty));
                out.push((a.clone(), EntityKind::Individual));
                out.push((b.clone(), EntityKind::Individual));
            }
        }
        out
    }

    /// True for axioms about properties only (the role box); a change to these makes
    /// an incremental check reclassify from scratch.
    pub fn is_property_axiom(&self) -> bool {
        matches!(
            self,
            Axiom::SubObjectPropertyOf(..)
                | Axiom::TransitiveObjectProperty(_)
                | Axiom::ReflexiveObjectProperty(_)
                | Axiom::ObjectPropertyRange(..)
        )
    }
}

fn needs_order(xs: &[ClassExpr]) -> bool {
    xs.len() == 2 && xs[0].as_class().is_none() && xs[1].as_class().is_some()
}

/// The three kinds of entity an ontology names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityKind {
    /// An OWL class.
    Class,
    /// An object property.
    ObjectProperty,
    /// A named individual.
    Individual,
}

impl fmt::Display for EntityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EntityKind::Class => "class",
            EntityKind::ObjectProperty => "object property",
            EntityKind::Individual => "individual",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> ClassExpr {
        ClassExpr::Class(s.into())
    }

    #[test]
    fn nary_axioms_become_pairs_with_a_named_class_first() {
        let some = ClassExpr::some("p:r", c("p:B"));
        let eq = Axiom::EquivalentClasses(vec![some.clone(), c("p:A")]).canonical();
        assert_eq!(
            eq,
            vec![Axiom::EquivalentClasses(vec![c("p:A"), some.clone()])]
        );
        let eq3 = Axiom::EquivalentClasses(vec![c("p:A"), c("p:B"), c("p:C")]).canonical();
        assert_eq!(eq3.len(), 2);
        let d = Axiom::DisjointClasses(vec![c("p:A"), c("p:B"), c("p:C")]).canonical();
        assert_eq!(
            d,
            vec![
                Axiom::DisjointClasses(vec![c("p:A"), c("p:B")]),
                Axiom::DisjointClasses(vec![c("p:A"), c("p:C")]),
                Axiom::DisjointClasses(vec![c("p:B"), c("p:C")]),
            ]
        );
        let same = Axiom::SubClassOf(c("p:A"), some);
        assert_eq!(same.clone().canonical(), vec![same]);
    }
}
