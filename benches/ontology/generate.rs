//! The generated EL ontology the ontology benches classify (`benches/ontology.rs`,
//! `benches/elk.rs`): the same axioms for the same size and seed, every run.

use cairn::domain::ontology::axiom::{Axiom, EntityKind, Origin};
use cairn::domain::ontology::expr::ClassExpr;
use cairn::domain::ontology::model::Ontology;

/// The tests' and benches' one seeded generator: the same data every run.
fn seeded(seed: u64) -> fastrand::Rng {
    fastrand::Rng::with_seed(seed)
}

pub const PROPS: [&str; 5] = [
    "g:partOf",
    "g:locatedIn",
    "g:dependsOn",
    "g:uses",
    "g:relatedTo",
];

pub fn class(i: usize) -> String {
    format!("g:C{i}")
}

/// A tree of fan-out 10 with two more parents near the tree parent (so ancestors stay
/// few, as in real ontologies), one existential per class (`partOf` towards the
/// parent's neighbourhood, the others anywhere), a definition for one class in
/// twenty, `partOf` transitive, `locatedIn ∘ partOf ⊑ locatedIn`, `dependsOn ⊑
/// relatedTo`, and a domain and a range.
pub fn generate(n: usize, seed: u64) -> Ontology {
    let mut rng = seeded(seed);
    let mut o = Ontology::new();
    for i in 0..n {
        o.declare(&class(i), EntityKind::Class).unwrap();
    }
    let c = |i: usize| ClassExpr::Class(class(i));
    let add = |o: &mut Ontology, a: Axiom| o.add(a, Origin::default()).unwrap();
    add(&mut o, Axiom::TransitiveObjectProperty("g:partOf".into()));
    add(
        &mut o,
        Axiom::SubObjectPropertyOf(
            vec!["g:locatedIn".into(), "g:partOf".into()],
            "g:locatedIn".into(),
        ),
    );
    add(
        &mut o,
        Axiom::SubObjectPropertyOf(vec!["g:dependsOn".into()], "g:relatedTo".into()),
    );
    add(&mut o, Axiom::ObjectPropertyDomain("g:uses".into(), c(1)));
    add(
        &mut o,
        Axiom::ObjectPropertyRange("g:locatedIn".into(), c(2)),
    );
    for i in 1..n {
        let p0 = (i - 1) / 10;
        let mut parents = vec![p0];
        for _ in 0..2 {
            let lo = p0.saturating_sub(16);
            let hi = (p0 + 16).min(i - 1);
            let p = lo + rng.usize(..=hi - lo);
            if !parents.contains(&p) {
                parents.push(p);
            }
        }
        for &p in &parents {
            add(&mut o, Axiom::SubClassOf(c(i), c(p)));
        }
        let k = rng.usize(..PROPS.len());
        let target = if k == 0 {
            let lo = p0.saturating_sub(8);
            lo + rng.usize(..=p0 + 8 - lo).min(i - 1 - lo)
        } else {
            rng.usize(..n.max(1))
        };
        add(
            &mut o,
            Axiom::SubClassOf(c(i), ClassExpr::some(PROPS[k], c(target))),
        );
        if i % 20 == 0 {
            let r = PROPS[rng.usize(..PROPS.len())];
            let def = ClassExpr::And(vec![c(p0), ClassExpr::some(r, c(rng.usize(..n.max(1))))]);
            add(&mut o, Axiom::EquivalentClasses(vec![c(i), def]));
        }
    }
    o
}
