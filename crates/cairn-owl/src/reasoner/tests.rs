//! Property tests of the reasoner against its naive twin on random EL ontologies, of
//! proposals (incremental checks) against classifying from scratch, and of
//! justifications for minimality; and a few hand-checked cases.

use super::super::axiom::Origin;
use super::naive::{answer, Answer};
use super::*;

/// The tests' one seeded generator (fastrand's), so failures reproduce; the draws
/// these tests use on top of it.
pub(crate) struct Rng(fastrand::Rng);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0.u64(..)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

struct Gen {
    classes: Vec<String>,
    roles: Vec<String>,
    inds: Vec<String>,
}

impl Gen {
    fn new(rng: &mut Rng) -> Gen {
        Gen {
            classes: (0..3 + rng.below(8)).map(|i| format!("t:C{i}")).collect(),
            roles: (0..1 + rng.below(3)).map(|i| format!("t:r{i}")).collect(),
            inds: (0..rng.below(4)).map(|i| format!("t:a{i}")).collect(),
        }
    }

    fn class(&self, rng: &mut Rng) -> ClassExpr {
        ClassExpr::Class(self.classes[rng.below(self.classes.len())].clone())
    }

    fn role(&self, rng: &mut Rng) -> String {
        self.roles[rng.below(self.roles.len())].clone()
    }

    fn expr(&self, rng: &mut Rng, depth: usize) -> ClassExpr {
        let roll = rng.below(100);
        if depth == 0 || roll < 55 {
            self.class(rng)
        } else if roll < 59 {
            ClassExpr::Thing
        } else if roll < 61 {
            ClassExpr::Nothing
        } else if roll < 78 {
            ClassExpr::And(
                (0..2 + rng.below(2))
                    .map(|_| self.expr(rng, depth - 1))
                    .collect(),
            )
        } else {
            ClassExpr::some(self.role(rng), self.expr(rng, depth - 1))
        }
    }

    fn axiom(&self, rng: &mut Rng) -> Axiom {
        loop {
            let roll = rng.below(100);
            let a = match roll {
                0..=39 => {
                    let l = if rng.below(10) < 7 {
                        self.class(rng)
                    } else {
                        self.expr(rng, 2)
                    };
                    Axiom::SubClassOf(l, self.expr(rng, 2))
                }
                40..=47 => Axiom::EquivalentClasses(vec![self.class(rng), self.expr(rng, 2)]),
                48..=52 => Axiom::DisjointClasses(vec![self.expr(rng, 1), self.expr(rng, 1)]),
                53..=60 => Axiom::SubObjectPropertyOf(vec![self.role(rng)], self.role(rng)),
                61..=65 => {
                    let n = 2 + rng.below(2);
                    Axiom::SubObjectPropertyOf(
                        (0..n).map(|_| self.role(rng)).collect(),
                        self.role(rng),
                    )
                }
                66..=69 => Axiom::TransitiveObjectProperty(self.role(rng)),
                70..=71 => Axiom::ReflexiveObjectProperty(self.role(rng)),
                72..=76 => Axiom::ObjectPropertyDomain(self.role(rng), self.expr(rng, 1)),
                77..=81 => Axiom::ObjectPropertyRange(self.role(rng), self.expr(rng, 1)),
                82..=90 if !self.inds.is_empty() => Axiom::ClassAssertion(
                    self.expr(rng, 1),
                    self.inds[rng.below(self.inds.len())].clone(),
                ),
                91..=99 if !self.inds.is_empty() => Axiom::ObjectPropertyAssertion(
                    self.role(rng),
                    self.inds[rng.below(self.inds.len())].clone(),
                    self.inds[rng.below(self.inds.len())].clone(),
                ),
                _ => continue,
            };
            return a;
        }
    }

    fn declare(&self, o: &mut Ontology) {
        for c in &self.classes {
            o.declare(c, EntityKind::Class).unwrap();
        }
        for r in &self.roles {
            o.declare(r, EntityKind::ObjectProperty).unwrap();
        }
        for a in &self.inds {
            o.declare(a, EntityKind::Individual).unwrap();
        }
    }
}

/// Adds, for every chain `… ∘ rn ⊑ s`, the ranges of `s` (and of its super-roles) to
/// `rn`: the syntactic restriction under which the reasoner's treatment of ranges is
/// complete, so that reasoner and twin answer the real entailments.
fn restrict_ranges(o: &mut Ontology) {
    loop {
        let axioms: Vec<Axiom> = o.axioms.iter().map(|s| s.axiom.clone()).collect();
        let mut sup: BTreeSet<(String, String)> = BTreeSet::new();
        for a in &axioms {
            if let Axiom::SubObjectPropertyOf(ch, s) = a {
                if ch.len() == 1 {
                    sup.insert((ch[0].clone(), s.clone()));
                }
            }
        }
        let reaches = |r: &str, t: &str| -> bool {
            let mut seen = BTreeSet::from([r.to_string()]);
            let mut stack = vec![r.to_string()];
            while let Some(x) = stack.pop() {
                if x == t {
                    return true;
                }
                for (a, b) in &sup {
                    if *a == x && seen.insert(b.clone()) {
                        stack.push(b.clone());
                    }
                }
            }
            false
        };
        let mut more = Vec::new();
        for a in &axioms {
            let (last, s) = match a {
                Axiom::SubObjectPropertyOf(ch, s) if ch.len() > 1 => {
                    (ch[ch.len() - 1].clone(), s.clone())
                }
                Axiom::TransitiveObjectProperty(r) => (r.clone(), r.clone()),
                _ => continue,
            };
            for b in &axioms {
                if let Axiom::ObjectPropertyRange(t, d) = b {
                    if reaches(&s, t) {
                        let want = Axiom::ObjectPropertyRange(last.clone(), d.clone());
                        let implied = axioms.iter().any(|c| match c {
                            Axiom::ObjectPropertyRange(u, e) => e == d && reaches(&last, u),
                            _ => false,
                        });
                        if !implied && !more.contains(&want) {
                            more.push(want);
                        }
                    }
                }
            }
        }
        if more.is_empty() {
            return;
        }
        for a in more {
            o.add(a, Origin::default()).unwrap();
        }
    }
}

fn random_ontology(rng: &mut Rng) -> (Ontology, Gen) {
    let g = Gen::new(rng);
    let mut o = Ontology::new();
    g.declare(&mut o);
    for i in 0..4 + rng.below(16) {
        o.add(g.axiom(rng), Origin::new("random", i + 1)).unwrap();
    }
    restrict_ranges(&mut o);
    (o, g)
}

fn reasoner_answer(c: &Classification) -> Answer {
    let bad: BTreeSet<&str> = c.inconsistent_individuals().into_iter().collect();
    Answer {
        subs: c
            .subsumptions()
            .into_iter()
            .map(|s| (s.sub.to_string(), s.sup.to_string()))
            .collect(),
        unsat: c.unsatisfiable().into_iter().map(str::to_string).collect(),
        consistent: c.is_consistent(),
        types: c
            .individuals()
            .filter(|a| !bad.contains(a))
            .flat_map(|a| {
                c.types(a)
                    .into_iter()
                    .map(move |t| (a.to_string(), t.to_string()))
            })
            .collect(),
    }
}

fn show(o: &Ontology) -> String {
    o.axioms
        .iter()
        .map(|s| format!("  {:?}\n", s.axiom))
        .collect()
}

#[test]
fn agrees_with_the_naive_twin_on_random_ontologies() {
    let mut rng = Rng::new(0x5EED_0001);
    let (mut inconsistent, mut unsat, mut inferred) = (0, 0, 0);
    for case in 0..600 {
        let (o, _) = random_ontology(&mut rng);
        let got = reasoner_answer(&classify(&o));
        let want = answer(&o);
        assert_eq!(got, want, "case {case}:\n{}", show(&o));
        inconsistent += usize::from(!want.consistent);
        unsat += usize::from(!want.unsat.is_empty());
        inferred += usize::from(want.subs.len() > o.axioms.len() / 2);
    }
    // The generator must exercise every outcome, or the comparison proves little.
    assert!(
        inconsistent > 20 && unsat > 60 && inferred > 60,
        "{inconsistent} {unsat} {inferred}"
    );
}

#[test]
fn a_proposal_equals_classifying_the_union_and_leaves_the_base_alone() {
    let mut rng = Rng::new(0x5EED_0002);
    for case in 0..300 {
        let (o, g) = random_ontology(&mut rng);
        let base = classify(&o);
        let before = reasoner_answer(&base);
        let mut union = o.clone();
        let mut extra = Vec::new();
        for i in 0..1 + rng.below(4) {
            let mut a = g.axiom(&mut rng);
            // Mostly class axioms (the incremental path); now and then a property axiom.
            while a.is_property_axiom() && rng.below(4) > 0 {
                a = g.axiom(&mut rng);
            }
            union.add(a.clone(), Origin::new("extra", i + 1)).unwrap();
            extra.extend(a.canonical().into_iter().map(|axiom| Sourced {
                axiom,
                origin: Origin::new("extra", i + 1),
            }));
        }
        // A new class too, sometimes, to grow the symbol tables.
        if rng.below(3) == 0 {
            let a = Axiom::SubClassOf(ClassExpr::class("t:New"), g.expr(&mut rng, 2));
            union.add(a.clone(), Origin::new("extra", 9)).unwrap();
            extra.push(Sourced {
                axiom: a,
                origin: Origin::new("extra", 9),
            });
        }
        let inc = base.with_axioms(&extra);
        let scratch = classify(&union);
        assert_eq!(
            reasoner_answer(&inc),
            reasoner_answer(&scratch),
            "case {case}:\n{}extra: {extra:?}",
            show(&o)
        );
        assert_eq!(
            reasoner_answer(&base),
            before,
            "case {case}: the base changed"
        );
        let d = diff(&base, &inc);
        let (a, b) = (reasoner_answer(&base), reasoner_answer(&inc));
        let gained: BTreeSet<(String, String)> = b.subs.difference(&a.subs).cloned().collect();
        let lost: BTreeSet<(String, String)> = a.subs.difference(&b.subs).cloned().collect();
        assert_eq!(
            d.gained.iter().cloned().collect::<BTreeSet<_>>(),
            gained,
            "case {case}"
        );
        assert_eq!(
            d.lost.iter().cloned().collect::<BTreeSet<_>>(),
            lost,
            "case {case}"
        );
    }
}

/// The ontology with only `axioms` (same entities).
fn only(o: &Ontology, axioms: &[Sourced]) -> Ontology {
    let mut p = Ontology {
        axioms: Vec::new(),
        ..o.clone()
    };
    for s in axioms {
        p.add(s.axiom.clone(), s.origin.clone()).unwrap();
    }
    p
}

#[test]
fn justifications_are_minimal_on_random_ontologies() {
    let mut rng = Rng::new(0x5EED_0003);
    let mut checked = 0;
    for case in 0..250 {
        let (o, _) = random_ontology(&mut rng);
        let c = classify(&o);
        type Goal = Box<dyn Fn(&Answer) -> bool>;
        let mut goals: Vec<(String, Justification, Goal)> = Vec::new();
        if !c.is_consistent() {
            let j = c
                .explain_inconsistency()
                .expect("an inconsistent ontology has a justification");
            goals.push((
                "inconsistency".into(),
                j,
                Box::new(|a: &Answer| !a.consistent),
            ));
        } else {
            for u in c.unsatisfiable().into_iter().take(2) {
                let j = c.explain_unsatisfiable(u).unwrap();
                let u = u.to_string();
                goals.push((
                    format!("{u} unsat"),
                    j,
                    Box::new(move |a: &Answer| a.unsat.contains(&u)),
                ));
            }
            for s in c.subsumptions().into_iter().filter(|s| !s.asserted).take(3) {
                let j = c.explain_subsumption(s.sub, s.sup).unwrap();
                let (sub, sup) = (s.sub.to_string(), s.sup.to_string());
                goals.push((
                    format!("{sub} ⊑ {sup}"),
                    j,
                    Box::new(move |a: &Answer| {
                        a.subs.contains(&(sub.clone(), sup.clone())) || a.unsat.contains(&sub)
                    }),
                ));
            }
        }
        for (what, j, holds) in goals {
            assert!(
                !j.axioms.is_empty(),
                "case {case}: {what} has an empty justification"
            );
            assert!(
                holds(&answer(&only(&o, &j.axioms))),
                "case {case}: {what} does not follow from {:?}\n{}",
                j.axioms,
                show(&o)
            );
            for i in 0..j.axioms.len() {
                let mut fewer = j.axioms.clone();
                fewer.remove(i);
                assert!(
                    !holds(&answer(&only(&o, &fewer))),
                    "case {case}: {what}: {:?} is not needed in {:?}",
                    j.axioms[i],
                    j.axioms
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 200, "only {checked} justifications checked");
}

fn c(s: &str) -> ClassExpr {
    ClassExpr::class(s)
}

fn onto(axioms: Vec<Axiom>) -> Ontology {
    let mut o = Ontology::new();
    for (i, a) in axioms.into_iter().enumerate() {
        o.add(a, Origin::new("t.md", i + 1)).unwrap();
    }
    o
}

#[test]
fn taxonomy_of_a_small_hierarchy() {
    let o = onto(vec![
        Axiom::SubClassOf(c("x:B"), c("x:A")),
        Axiom::SubClassOf(c("x:C"), c("x:B")),
        Axiom::SubClassOf(c("x:C"), c("x:A")),
        Axiom::EquivalentClasses(vec![c("x:D"), c("x:C")]),
        Axiom::SubClassOf(c("x:E"), ClassExpr::some("x:p", c("x:C"))),
        Axiom::EquivalentClasses(vec![c("x:F"), ClassExpr::some("x:p", c("x:A"))]),
        Axiom::DisjointClasses(vec![c("x:A"), c("x:G")]),
        Axiom::SubClassOf(c("x:H"), ClassExpr::And(vec![c("x:G"), c("x:B")])),
    ]);
    let cl = classify(&o);
    assert!(cl.is_consistent());
    assert_eq!(cl.direct_parents("x:C"), vec!["x:B"]);
    assert_eq!(cl.equivalents("x:C"), vec!["x:D"]);
    assert_eq!(cl.direct_parents("x:E"), vec!["x:F"]);
    assert_eq!(cl.direct_parents("x:A"), vec!["owl:Thing"]);
    assert_eq!(cl.direct_children("x:B"), vec!["x:C", "x:D"]);
    assert_eq!(cl.unsatisfiable(), vec!["x:H"]);
    let sups = cl.superclasses("x:C");
    let flags: Vec<(&str, bool)> = sups.iter().map(|s| (s.sup, s.asserted)).collect();
    assert_eq!(flags, vec![("x:A", true), ("x:B", true), ("x:D", true)]);
    let e = cl.superclasses("x:E");
    assert_eq!(
        e.iter().map(|s| (s.sup, s.asserted)).collect::<Vec<_>>(),
        vec![("x:F", false)]
    );
    let j = cl.explain_subsumption("x:E", "x:F").unwrap();
    let lines: Vec<usize> = j.axioms.iter().map(|s| s.origin.line).collect();
    // E ⊑ ∃p.C, C ⊑ B, B ⊑ A (or C ⊑ A directly), F ≡ ∃p.A: the shrink keeps one path.
    assert!(
        lines == vec![3, 5, 6] || lines == vec![1, 2, 5, 6],
        "{lines:?}"
    );
    let u = cl.explain_unsatisfiable("x:H").unwrap();
    assert_eq!(
        u.axioms.iter().map(|s| s.origin.line).collect::<Vec<_>>(),
        vec![1, 7, 8]
    );
}

#[test]
fn chains_transitivity_ranges_and_individuals() {
    let o = onto(vec![
        Axiom::TransitiveObjectProperty("x:partOf".into()),
        Axiom::SubObjectPropertyOf(
            vec!["x:locatedIn".into(), "x:partOf".into()],
            "x:locatedIn".into(),
        ),
        Axiom::SubClassOf(c("x:Engine"), ClassExpr::some("x:partOf", c("x:Car"))),
        Axiom::SubClassOf(c("x:Car"), ClassExpr::some("x:partOf", c("x:Fleet"))),
        Axiom::EquivalentClasses(vec![
            c("x:FleetPart"),
            ClassExpr::some("x:partOf", c("x:Fleet")),
        ]),
        Axiom::ObjectPropertyRange("x:locatedIn".into(), c("x:Place")),
        Axiom::EquivalentClasses(vec![
            c("x:Located"),
            ClassExpr::some("x:locatedIn", c("x:Place")),
        ]),
        Axiom::SubClassOf(c("x:Bolt"), ClassExpr::some("x:locatedIn", c("x:Engine"))),
        Axiom::ObjectPropertyAssertion("x:partOf".into(), "x:e1".into(), "x:c1".into()),
        Axiom::ClassAssertion(c("x:Car"), "x:c1".into()),
        Axiom::ObjectPropertyDomain("x:partOf".into(), c("x:Part")),
    ]);
    let cl = classify(&o);
    assert!(cl.subsumes("x:FleetPart", "x:Engine"), "transitivity");
    assert!(cl.subsumes("x:Located", "x:Bolt"), "range on the filler");
    assert!(cl.subsumes("x:Part", "x:Engine"), "domain");
    assert_eq!(cl.types("x:e1"), vec!["x:FleetPart", "x:Part"]);
    assert_eq!(cl.direct_types("x:c1"), vec!["x:Car"]);
    let j = cl.explain_subsumption("x:Engine", "x:FleetPart").unwrap();
    assert_eq!(
        j.axioms.iter().map(|s| s.origin.line).collect::<Vec<_>>(),
        vec![1, 3, 4, 5]
    );
}

#[test]
fn an_inconsistency_and_its_explanation() {
    let o = onto(vec![
        Axiom::SubClassOf(c("x:Twin"), c("x:Virtual")),
        Axiom::DisjointClasses(vec![c("x:Virtual"), c("x:Physical")]),
        Axiom::SubClassOf(c("x:Asset"), c("x:Physical")),
        Axiom::SubClassOf(c("x:Other"), c("x:Virtual")),
        Axiom::ClassAssertion(c("x:Twin"), "x:t1".into()),
        Axiom::ClassAssertion(c("x:Asset"), "x:t1".into()),
    ]);
    let cl = classify(&o);
    assert!(!cl.is_consistent());
    assert!(cl.unsatisfiable().is_empty());
    let j = cl.explain_inconsistency().unwrap();
    assert_eq!(
        j.axioms.iter().map(|s| s.origin.line).collect::<Vec<_>>(),
        vec![1, 2, 3, 5, 6]
    );
    let top = onto(vec![Axiom::SubClassOf(
        ClassExpr::Thing,
        ClassExpr::some("x:p", ClassExpr::Nothing),
    )]);
    let cl = classify(&top);
    assert!(!cl.is_consistent());
    assert_eq!(cl.explain_inconsistency().unwrap().axioms.len(), 1);
}

#[test]
fn removing_axioms_equals_classifying_the_rest() {
    let mut rng = Rng::new(0x5EED_0004);
    for case in 0..150 {
        let (o, _) = random_ontology(&mut rng);
        if o.axioms.is_empty() {
            continue;
        }
        let base = classify(&o);
        let gone: Vec<Axiom> = (0..1 + rng.below(3))
            .map(|_| o.axioms[rng.below(o.axioms.len())].axiom.clone())
            .collect();
        let mut rest = o.clone();
        rest.axioms.retain(|s| !gone.contains(&s.axiom));
        assert_eq!(
            reasoner_answer(&base.without_axioms(&gone)),
            reasoner_answer(&classify(&rest)),
            "case {case}"
        );
        assert_eq!(
            reasoner_answer(&base.without_axioms(&gone)),
            answer(&rest),
            "case {case}"
        );
    }
}

#[test]
fn no_explanation_for_what_does_not_follow() {
    let o = onto(vec![
        Axiom::SubClassOf(c("x:A"), c("x:B")),
        Axiom::SubClassOf(c("x:C"), c("x:B")),
    ]);
    let cl = classify(&o);
    assert!(cl.explain_subsumption("x:A", "x:C").is_none());
    assert!(cl.explain_subsumption("x:A", "x:Nope").is_none());
    assert!(cl.explain_unsatisfiable("x:A").is_none());
    assert!(cl.explain_inconsistency().is_none());
    assert_eq!(
        cl.explain_subsumption("x:A", "owl:Thing").unwrap().axioms,
        vec![]
    );
    assert_eq!(
        cl.explain_subsumption("x:A", "x:B").unwrap().axioms.len(),
        1
    );
}

/// The service layer keeps classifications across threads (a cache behind a lock).
#[test]
fn classifications_and_ontologies_cross_threads() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<Classification>();
    send_sync::<Ontology>();
    send_sync::<super::super::page::Page>();
}

#[test]
fn the_universal_and_the_empty_property() {
    let doc = "Prefix(k:=<http://example.org/k#>)\nOntology(\n\
        SubClassOf(ObjectSomeValuesFrom(owl:topObjectProperty k:Flour) k:Bakery)\n\
        ClassAssertion(k:Flour k:sack1)\n\
        SubClassOf(ObjectSomeValuesFrom(owl:topObjectProperty k:Oven) k:Hot)\n\
        SubClassOf(k:Loaf ObjectSomeValuesFrom(k:bakedIn k:Oven))\n\
        SubClassOf(ObjectSomeValuesFrom(owl:topObjectProperty k:Ghost) k:Haunted)\n\
        SubClassOf(k:Ghost owl:Nothing)\n\
        SubClassOf(k:Crumb ObjectSomeValuesFrom(owl:bottomObjectProperty k:Loaf))\n\
        SubObjectPropertyOf(k:never owl:bottomObjectProperty)\n\
        SubClassOf(k:Stale ObjectSomeValuesFrom(k:never k:Loaf))\n\
        SubClassOf(k:Rye k:Loaf)\n)\n";
    let im = super::super::ofn::read_ofn(doc, "k.ofn");
    assert!(im.problems.is_empty(), "{:?}", im.problems);
    let k = |s: &str| format!("k:{s}");
    let cl = classify(&im.ontology);
    // Some flour exists (sack1), so everything has the universal property to flour.
    assert!(cl.subsumes(&k("Bakery"), THING) && cl.subsumes(&k("Bakery"), &k("Rye")));
    // An oven exists wherever a loaf does; nothing forces one elsewhere.
    assert!(cl.subsumes(&k("Hot"), &k("Oven")) && cl.subsumes(&k("Hot"), &k("Loaf")));
    assert!(!cl.subsumes(&k("Hot"), &k("Flour")));
    // No ghost exists, so nothing is haunted by the rule.
    assert!(!cl.subsumes(&k("Haunted"), &k("Oven")));
    assert_eq!(
        cl.unsatisfiable(),
        vec![
            k("Crumb").as_str(),
            k("Ghost").as_str(),
            k("Stale").as_str()
        ]
    );
    assert!(cl.is_consistent());
    let j = cl.explain_subsumption(&k("Rye"), &k("Bakery")).unwrap();
    assert_eq!(j.axioms.len(), 2, "{j:?}");
    let j = cl.explain_unsatisfiable(&k("Stale")).unwrap();
    assert_eq!(j.axioms.len(), 2, "{j:?}");
    // A proposal on top of it equals classifying the union.
    let extra = Sourced {
        axiom: Axiom::SubClassOf(c(&k("Dough")), c(&k("Oven"))),
        origin: Origin::new("p", 1),
    };
    let more = cl.with_axioms(&[extra]);
    assert!(more.subsumes(&k("Hot"), &k("Dough")));
}
