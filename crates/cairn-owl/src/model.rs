//! The `Ontology` value: its entities (classes, object properties, individuals) with
//! their page metadata, and its axioms, each remembering the page and line it came
//! from. Built from a set of pages (resolving wiki links and IRIs across the set,
//! reporting what does not resolve with its file and line) and written back as pages.
//!
//! This module knows pages and axioms; it reads no files (callers hand it text) and
//! knows nothing of the reasoner or OWL functional syntax.

use super::axiom::{Axiom, EntityKind, Iri, Origin, Sourced};
use super::entity::{self, keys, relationship_key, Entry, GciKind, Meta, Stmt, RELATIONSHIPS};
use super::expr::{is_builtin_property, looks_like_iri, write_expr, ClassExpr, Name, NameRole};
use super::page::{file_name, title_from_file, Page};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

/// A class, object property or individual with its page metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    /// What it is.
    pub kind: EntityKind,
    /// Its non-logical page properties (term id, definition, scores, unknown ones).
    pub meta: Meta,
    /// The page (and line of its IRI) that declared it; `None` when it was declared
    /// by use (the shared relationship properties) or by an OFN document.
    pub origin: Option<Origin>,
}

/// Something in a page or document that was skipped, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file as the caller named it.
    pub file: String,
    /// 1-based line (0 when the whole file is meant).
    pub line: usize,
    /// 1-based column, 0 when the whole line is meant.
    pub column: usize,
    /// What is wrong and what was skipped.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.column > 0 {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        }
    }
}

pub use super::load::{load_pages, Loaded, LoadedPage};
pub use super::prefixes::{default_namespace, STANDARD_PREFIXES};

/// A set of entities and axioms.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ontology {
    /// The ontology's IRI, when an OFN document named one.
    pub iri: Option<String>,
    /// Declared prefixes (name without colon → namespace IRI), in declaration order.
    pub prefixes: Vec<(String, String)>,
    /// Entities by IRI.
    pub entities: BTreeMap<Iri, Entity>,
    /// The axioms in the order they were added, in canonical shape
    /// ([`Axiom::canonical`]).
    pub axioms: Vec<Sourced>,
}

/// Page names that lead to entities: exact IRIs first, then page names (file names,
/// case-insensitively, as Logseq compares them), then preferred terms and titles.
struct Names {
    by_page: HashMap<String, Vec<Iri>>,
    by_term: HashMap<String, Vec<Iri>>,
    /// An entity not (yet) in the ontology: the page being resolved on its own.
    extra: Option<(Iri, EntityKind)>,
}

impl Names {
    fn add(map: &mut HashMap<String, Vec<Iri>>, name: &str, iri: &str) {
        let v = map.entry(name.trim().to_lowercase()).or_default();
        if !v.iter().any(|i| i == iri) {
            v.push(iri.to_string());
        }
    }
}

impl Ontology {
    /// An empty ontology.
    pub fn new() -> Ontology {
        Ontology::default()
    }

    /// Declares an entity (keeping metadata already there); an IRI already declared as
    /// another kind is refused with a message.
    pub fn declare(&mut self, iri: &str, kind: EntityKind) -> Result<&mut Entity, String> {
        let e = self.entities.entry(iri.to_string()).or_insert(Entity {
            kind,
            meta: Meta::default(),
            origin: None,
        });
        if e.kind != kind {
            return Err(format!("{iri} is a {}, not a {kind}", e.kind));
        }
        Ok(e)
    }

    /// Adds an axiom in canonical shape, declaring any entity it names that is not
    /// declared yet; refuses (adding nothing) when a name is declared as another kind.
    pub fn add(&mut self, axiom: Axiom, origin: Origin) -> Result<(), String> {
        axiom.check_supported()?;
        let sig = axiom.signature();
        for (iri, kind) in &sig {
            if let Some(e) = self.entities.get(iri) {
                if e.kind != *kind {
                    return Err(format!("{iri} is a {}, not a {kind}", e.kind));
                }
            }
        }
        for (iri, kind) in sig {
            self.declare(&iri, kind)?;
        }
        for a in axiom.canonical() {
            self.axioms.push(Sourced {
                axiom: a,
                origin: origin.clone(),
            });
        }
        Ok(())
    }

    /// The entity with this IRI.
    pub fn entity(&self, iri: &str) -> Option<&Entity> {
        self.entities.get(iri)
    }

    /// IRIs of entities of one kind, sorted.
    pub fn iris(&self, kind: EntityKind) -> impl Iterator<Item = &Iri> {
        self.entities
            .iter()
            .filter(move |(_, e)| e.kind == kind)
            .map(|(i, _)| i)
    }

    /// True when both hold the same entities (kind and metadata, its properties in
    /// any order: a document states them in its own, a page in the template's) and
    /// the same axioms (as a multiset), whatever their order and origins.
    pub fn same_content(&self, o: &Ontology) -> bool {
        type Props = Vec<(String, String)>;
        let ents = |x: &Ontology| -> Vec<(Iri, EntityKind, Props)> {
            x.entities
                .iter()
                .map(|(i, e)| {
                    let mut props = e.meta.props.clone();
                    props.sort();
                    (i.clone(), e.kind, props)
                })
                .collect()
        };
        fn axs(x: &Ontology) -> Vec<&Axiom> {
            let mut v: Vec<&Axiom> = x.axioms.iter().map(|s| &s.axiom).collect();
            v.sort();
            v
        }
        ents(self) == ents(o) && axs(self) == axs(o)
    }

    /// Resolves the entries read from pages (`(file, entry)`) into an ontology. Names
    /// resolve as documented in the module `ontology`; what does not resolve is
    /// reported with file and line, and that statement is skipped.
    pub fn resolve(entries: Vec<(&str, &Entry)>) -> (Ontology, Vec<Problem>) {
        let mut o = Ontology::new();
        let mut problems = Vec::new();
        // Sized for every entry at once: growing maps of 100,000 names rehash them
        // again and again.
        let mut names = Names {
            by_page: HashMap::with_capacity(entries.len()),
            by_term: HashMap::with_capacity(entries.len()),
            extra: None,
        };
        let mut kept = Vec::with_capacity(entries.len());
        for (file, entry) in entries {
            if let Some(e) = o.entities.get(&entry.iri) {
                let first = e.origin.as_ref().map(|o| o.to_string()).unwrap_or_default();
                problems.push(Problem {
                    file: file.to_string(),
                    line: entry.line,
                    column: 0,
                    message: format!(
                        "{} is already described by {first}; this page is skipped",
                        entry.iri
                    ),
                });
                continue;
            }
            Names::add(&mut names.by_page, &title_from_file(file), &entry.iri);
            if let Some(t) = &entry.title {
                Names::add(&mut names.by_term, t, &entry.iri);
            }
            if let Some(t) = entry.meta.preferred_term() {
                Names::add(&mut names.by_term, t, &entry.iri);
            }
            o.entities.insert(
                entry.iri.clone(),
                Entity {
                    kind: entry.kind,
                    meta: entry.meta.clone(),
                    origin: Some(Origin::new(file, entry.line)),
                },
            );
            kept.push((file, entry));
        }
        // The shared relationship properties exist without pages.
        let used_rel = |e: &Entry| {
            e.statements
                .iter()
                .any(|s| matches!(s.stmt, Stmt::Related(..)))
        };
        if kept.iter().any(|(_, e)| used_rel(e)) {
            for (_, iri) in RELATIONSHIPS {
                if !o.entities.contains_key(iri) {
                    o.entities.insert(
                        iri.to_string(),
                        Entity {
                            kind: EntityKind::ObjectProperty,
                            meta: Meta::default(),
                            origin: None,
                        },
                    );
                }
            }
        }
        for &(file, entry) in &kept {
            for st in &entry.statements {
                let origin = Origin::new(file, st.line);
                match o.statement_axiom(&names, &entry.iri, entry.kind, &st.stmt) {
                    Ok(ax) => {
                        if let Err(m) = o.add(ax, origin) {
                            problems.push(Problem {
                                file: file.to_string(),
                                line: st.line,
                                column: 0,
                                message: m,
                            });
                        }
                    }
                    Err(m) => problems.push(Problem {
                        file: file.to_string(),
                        line: st.line,
                        column: 0,
                        message: format!("{m}; this `{}::` value is skipped", st.key),
                    }),
                }
            }
        }
        // Relationship properties that ended up unused are not kept.
        for (_, iri) in RELATIONSHIPS {
            let unused = o.entities.get(iri).is_some_and(|e| e.origin.is_none())
                && !o
                    .axioms
                    .iter()
                    .any(|a| a.axiom.signature().iter().any(|(i, _)| i == iri));
            if unused {
                o.entities.remove(iri);
            }
        }
        (o, problems)
    }

    fn lookup(&self, names: &Names, n: &Name, want: EntityKind) -> Result<Iri, String> {
        let text = match n {
            Name::Iri(s) | Name::Link(s) => s.as_str(),
        };
        let kind_of = |iri: &str| -> Option<EntityKind> {
            // The built-in properties and the shared relationship ones need no page.
            if is_builtin_property(iri) || RELATIONSHIPS.iter().any(|(_, r)| *r == iri) {
                return Some(EntityKind::ObjectProperty);
            }
            self.entities.get(iri).map(|e| e.kind).or_else(|| {
                names
                    .extra
                    .as_ref()
                    .filter(|(i, _)| i == iri)
                    .map(|(_, k)| *k)
            })
        };
        let found = if let Some(k) = kind_of(text) {
            Some((text.to_string(), k))
        } else if let Name::Link(t) = n {
            let key = t.trim().to_lowercase();
            let hits = names
                .by_page
                .get(&key)
                .filter(|v| !v.is_empty())
                .or_else(|| names.by_term.get(&key));
            match hits.map(|v| v.as_slice()) {
                Some([one]) => kind_of(one).map(|k| (one.clone(), k)),
                Some(many) if many.len() > 1 => {
                    return Err(format!(
                        "{n} names {} pages ({}); write the IRI instead",
                        many.len(),
                        many.join(", ")
                    ))
                }
                _ => None,
            }
        } else {
            None
        };
        match found {
            Some((iri, kind)) if kind == want => Ok(iri),
            Some((iri, kind)) => Err(format!(
                "{n} is {iri}, an {kind}, where an {want} is expected"
            )),
            None if looks_like_iri(text) => Err(format!("{n}: no page declares the IRI {text}")),
            None => Err(format!("{n} names no page")),
        }
    }

    fn expr(&self, names: &Names, x: &ClassExpr<Name>) -> Result<ClassExpr, String> {
        x.try_map(&mut |n, role| {
            let want = match role {
                NameRole::Class => EntityKind::Class,
                NameRole::Property => EntityKind::ObjectProperty,
            };
            self.lookup(names, n, want)
        })
    }

    /// The axiom one statement of the page of `this` makes.
    fn statement_axiom(
        &self,
        names: &Names,
        this: &str,
        kind: EntityKind,
        st: &Stmt,
    ) -> Result<Axiom, String> {
        let me = || ClassExpr::Class(this.to_string());
        Ok(match st {
            Stmt::SubClassOf(x) => Axiom::SubClassOf(me(), self.expr(names, x)?),
            Stmt::EquivalentTo(x) => Axiom::EquivalentClasses(vec![me(), self.expr(names, x)?]),
            Stmt::DisjointWith(x) => Axiom::DisjointClasses(vec![me(), self.expr(names, x)?]),
            Stmt::General(k, l, r) => {
                let (l, r) = (self.expr(names, l)?, self.expr(names, r)?);
                match k {
                    GciKind::SubClassOf => Axiom::SubClassOf(l, r),
                    GciKind::EquivalentTo => Axiom::EquivalentClasses(vec![l, r]),
                    GciKind::DisjointWith => Axiom::DisjointClasses(vec![l, r]),
                }
            }
            Stmt::Related(p, x) if kind == EntityKind::Individual => {
                if let ClassExpr::Class(n) = x {
                    if let Ok(b) = self.lookup(names, n, EntityKind::Individual) {
                        return Ok(Axiom::ObjectPropertyAssertion(
                            p.clone(),
                            this.to_string(),
                            b,
                        ));
                    }
                }
                Axiom::ClassAssertion(
                    ClassExpr::Some(p.clone(), Box::new(self.expr(names, x)?)),
                    this.to_string(),
                )
            }
            Stmt::Related(p, x) => Axiom::SubClassOf(
                me(),
                ClassExpr::Some(p.clone(), Box::new(self.expr(names, x)?)),
            ),
            Stmt::SubPropertyOf(n) => Axiom::SubObjectPropertyOf(
                vec![this.to_string()],
                self.lookup(names, n, EntityKind::ObjectProperty)?,
            ),
            Stmt::Chain(ns) => Axiom::SubObjectPropertyOf(
                ns.iter()
                    .map(|n| self.lookup(names, n, EntityKind::ObjectProperty))
                    .collect::<Result<_, _>>()?,
                this.to_string(),
            ),
            Stmt::Transitive => Axiom::TransitiveObjectProperty(this.to_string()),
            Stmt::Reflexive => Axiom::ReflexiveObjectProperty(this.to_string()),
            Stmt::Domain(x) => Axiom::ObjectPropertyDomain(this.to_string(), self.expr(names, x)?),
            Stmt::Range(x) => Axiom::ObjectPropertyRange(this.to_string(), self.expr(names, x)?),
            Stmt::Type(x) => Axiom::ClassAssertion(self.expr(names, x)?, this.to_string()),
            Stmt::About(k, n, st) => {
                let that = self.lookup(names, n, *k)?;
                return self.statement_axiom(names, &that, *k, st);
            }
            Stmt::Fact(p, b) => Axiom::ObjectPropertyAssertion(
                self.lookup(names, p, EntityKind::ObjectProperty)?,
                this.to_string(),
                self.lookup(names, b, EntityKind::Individual)?,
            ),
        })
    }

    /// The axioms one page states, resolved against this ontology without reading the
    /// other pages again (the page's own entity may be new): how a proposal's page
    /// becomes the axioms to check. Names resolve as in [`load_pages`], from the
    /// entities' page files and preferred terms; a statement that does not resolve is
    /// reported and the others still give axioms.
    pub fn page_axioms(&self, file: &str, entry: &Entry) -> (Vec<Sourced>, Vec<Problem>) {
        let mut names = Names {
            by_page: HashMap::new(),
            by_term: HashMap::new(),
            extra: None,
        };
        for (iri, e) in &self.entities {
            if let Some(o) = &e.origin {
                Names::add(&mut names.by_page, &title_from_file(&o.file), iri);
            }
            if let Some(t) = e.meta.preferred_term() {
                Names::add(&mut names.by_term, t, iri);
            }
        }
        let mut problems = Vec::new();
        match self.entities.get(&entry.iri) {
            Some(e) if e.kind != entry.kind => {
                let message = format!("{} is a {}, not a {}", entry.iri, e.kind, entry.kind);
                problems.push(Problem {
                    file: file.to_string(),
                    line: entry.line,
                    column: 0,
                    message,
                });
                return (Vec::new(), problems);
            }
            Some(_) => {}
            None => names.extra = Some((entry.iri.clone(), entry.kind)),
        }
        // The page's own names lead to its entity first.
        for key in [Some(title_from_file(file)), entry.title.clone()]
            .into_iter()
            .flatten()
        {
            names
                .by_page
                .insert(key.trim().to_lowercase(), vec![entry.iri.clone()]);
        }
        if let Some(t) = entry.meta.preferred_term() {
            names
                .by_term
                .insert(t.trim().to_lowercase(), vec![entry.iri.clone()]);
        }
        let mut out = Vec::new();
        for st in &entry.statements {
            match self.statement_axiom(&names, &entry.iri, entry.kind, &st.stmt) {
                Ok(ax) => out.extend(ax.canonical().into_iter().map(|axiom| Sourced {
                    axiom,
                    origin: Origin::new(file, st.line),
                })),
                Err(m) => problems.push(Problem {
                    file: file.to_string(),
                    line: st.line,
                    column: 0,
                    message: format!("{m}; this `{}::` value is skipped", st.key),
                }),
            }
        }
        (out, problems)
    }

    /// A unique page title per entity: its preferred term, else its local name, else
    /// its IRI (so that two entities never share a page name, compared as Logseq does,
    /// ignoring case).
    pub fn page_titles(&self) -> BTreeMap<Iri, String> {
        let mut taken: HashSet<String> = HashSet::with_capacity(self.entities.len());
        // By the entity's place in `entities` (no map lookup per entity and pass).
        let mut titles: Vec<Option<String>> = vec![None; self.entities.len()];
        let usable = |t: &str| {
            !t.trim().is_empty()
                && t.trim() == t
                && !t.contains("[[")
                && !t.contains("]]")
                && !t.contains('\n')
        };
        // Preferred terms first, so a term never loses its page to another's local name.
        for pass in 0..3 {
            for ((iri, e), title) in self.entities.iter().zip(titles.iter_mut()) {
                if title.is_some() {
                    continue;
                }
                let cand = match pass {
                    0 => e.meta.preferred_term().map(str::to_string),
                    1 => local_name(iri),
                    _ => Some(iri.clone()),
                };
                if let Some(t) = cand.filter(|t| usable(t)) {
                    let lower = t.to_lowercase();
                    if pass == 2 || !taken.contains(&lower) {
                        taken.insert(lower);
                        *title = Some(t);
                    }
                }
            }
        }
        self.entities
            .keys()
            .zip(titles)
            .filter_map(|(iri, t)| Some((iri.clone(), t?)))
            .collect()
    }

    /// The ontology as pages (`(file name, page)`), one per entity, in Cairn's layout:
    /// reading them back ([`load_pages`]) gives an ontology with the same content.
    /// Axioms about no entity at all (such as `owl:Thing SubClassOf owl:Nothing`) go on
    /// the first page as `owl:axiom::`; an ontology without entities writes no page.
    pub fn to_pages(&self) -> Vec<(String, Page)> {
        let titles = self.page_titles();
        let name = |iri: &String| -> String {
            match self.entities.get(iri) {
                Some(e) if e.kind == EntityKind::ObjectProperty => iri.clone(),
                _ => match titles.get(iri) {
                    Some(t) => format!("[[{t}]]"),
                    None => iri.clone(),
                },
            }
        };
        let x = |c: &ClassExpr| write_expr(c, &name);
        // (home IRI) → [(key, value)], in axiom order.
        let mut placed: BTreeMap<&Iri, Vec<(&'static str, String)>> = BTreeMap::new();
        let first = self.entities.keys().next();
        for s in &self.axioms {
            let (home, key, value): (Option<&Iri>, &'static str, String) = match &s.axiom {
                Axiom::SubClassOf(ClassExpr::Class(a), ClassExpr::Class(b)) => {
                    (Some(a), keys::IS_SUBCLASS_OF, name(b))
                }
                Axiom::SubClassOf(ClassExpr::Class(a), ClassExpr::Some(p, f))
                    if relationship_key(p).is_some() && matches!(**f, ClassExpr::Class(_)) =>
                {
                    (
                        Some(a),
                        relationship_key(p).unwrap_or(keys::SUB_CLASS_OF),
                        x(f),
                    )
                }
                Axiom::SubClassOf(ClassExpr::Class(a), sup) => {
                    (Some(a), keys::SUB_CLASS_OF, x(sup))
                }
                Axiom::EquivalentClasses(v) if v.len() == 2 && v[0].as_class().is_some() => {
                    (v[0].as_class(), keys::EQUIVALENT_CLASS, x(&v[1]))
                }
                Axiom::DisjointClasses(v) if v.len() == 2 && v[0].as_class().is_some() => {
                    (v[0].as_class(), keys::DISJOINT_WITH, x(&v[1]))
                }
                Axiom::SubClassOf(l, r) => (
                    self.home(&s.axiom).or(first),
                    keys::AXIOM,
                    format!("{} SubClassOf {}", x(l), x(r)),
                ),
                Axiom::EquivalentClasses(v) | Axiom::DisjointClasses(v) => {
                    let kw = if matches!(s.axiom, Axiom::EquivalentClasses(_)) {
                        "EquivalentTo"
                    } else {
                        "DisjointWith"
                    };
                    // Canonical axioms are pairs; a longer one is written pair by pair.
                    for w in v.windows(2).skip(1) {
                        if let Some(h) = self.home(&s.axiom).or(first) {
                            placed
                                .entry(h)
                                .or_default()
                                .push((keys::AXIOM, format!("{} {kw} {}", x(&w[0]), x(&w[1]))));
                        }
                    }
                    match v.as_slice() {
                        [a, b, ..] => (
                            self.home(&s.axiom).or(first),
                            keys::AXIOM,
                            format!("{} {kw} {}", x(a), x(b)),
                        ),
                        _ => continue,
                    }
                }
                Axiom::SubObjectPropertyOf(ch, q) if ch.len() == 1 => {
                    (ch.first(), keys::SUB_PROPERTY_OF, name(q))
                }
                Axiom::SubObjectPropertyOf(ch, q) => (
                    Some(q),
                    keys::PROPERTY_CHAIN,
                    ch.iter().map(&name).collect::<Vec<_>>().join(" o "),
                ),
                Axiom::TransitiveObjectProperty(p) => (Some(p), keys::TRANSITIVE, "true".into()),
                Axiom::ReflexiveObjectProperty(p) => (Some(p), keys::REFLEXIVE, "true".into()),
                Axiom::ObjectPropertyDomain(p, c) => (Some(p), keys::DOMAIN, x(c)),
                Axiom::ObjectPropertyRange(p, c) => (Some(p), keys::RANGE, x(c)),
                Axiom::ClassAssertion(c, a) => (Some(a), keys::RDF_TYPE, x(c)),
                Axiom::ObjectPropertyAssertion(p, a, b) => match relationship_key(p) {
                    Some(k) => (Some(a), k, name(b)),
                    None => (Some(a), keys::FACTS, format!("{} {}", name(p), name(b))),
                },
            };
            if let Some(h) = home {
                placed.entry(h).or_default().push((key, value));
            }
        }
        let mut out = Vec::new();
        for (iri, e) in &self.entities {
            let title = titles.get(iri).cloned().unwrap_or_else(|| iri.clone());
            let mut page = Page::new(&title);
            let id_key = match e.kind {
                EntityKind::Class => keys::OWL_CLASS,
                EntityKind::ObjectProperty => keys::OWL_OBJECT_PROPERTY,
                EntityKind::Individual => keys::OWL_INDIVIDUAL,
            };
            // (rank, key, value): values of one key are joined on one line, except
            // `owl:axiom::` (one axiom per line); unknown keys keep their order last.
            let mut lines: Vec<(usize, String, String)> = vec![
                (
                    entity::key_rank(keys::ONTOLOGY),
                    keys::ONTOLOGY.into(),
                    "true".into(),
                ),
                (entity::key_rank(id_key), id_key.into(), iri.clone()),
            ];
            for (k, v) in &e.meta.props {
                lines.push((entity::key_rank(k), k.clone(), v.clone()));
            }
            let mut grouped: Vec<(&'static str, Vec<String>)> = Vec::new();
            for (k, v) in placed.get(iri).map(|v| v.as_slice()).unwrap_or(&[]) {
                match grouped
                    .iter_mut()
                    .find(|(g, _)| g == k && *k != keys::AXIOM)
                {
                    Some((_, vs)) => vs.push(v.clone()),
                    None => grouped.push((k, vec![v.clone()])),
                }
            }
            for (k, vs) in grouped {
                let v = if k == keys::TRANSITIVE || k == keys::REFLEXIVE {
                    "true".to_string()
                } else {
                    vs.join(", ")
                };
                lines.push((entity::key_rank(k), k.to_string(), v));
            }
            lines.sort_by_key(|l| l.0);
            for (_, k, v) in lines {
                page.push(&k, &v);
            }
            out.push((file_name(&title), page));
        }
        out
    }

    /// The page an axiom that is not about one named class goes on: the first class
    /// it names, else the first entity.
    fn home(&self, a: &Axiom) -> Option<&Iri> {
        let sig = a.signature();
        let pick = sig
            .iter()
            .find(|(_, k)| *k == EntityKind::Class)
            .or_else(|| sig.first())
            .map(|(i, _)| i)?;
        self.entities.get_key_value(pick).map(|(k, _)| k)
    }
}

/// The part of an IRI after its prefix (or after `#` / `/` of a full IRI).
pub fn local_name(iri: &str) -> Option<String> {
    let s = if let Some(full) = iri.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
        full.rsplit(['#', '/', ':']).next()?
    } else {
        iri.split_once(':').map(|(_, l)| l)?
    };
    (!s.is_empty()).then(|| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(pages: &[(&str, &str)]) -> Loaded {
        load_pages(pages.iter().copied())
    }

    const TRANSFORMER: &str = "- Transformer\n  - ### OntologyBlock\n    - ontology:: true\n    - preferred-term:: Transformer\n    - owl:class:: ai:Transformer\n    - has-part:: [[Attention Mechanism]]\n";
    const ATTENTION: &str = "- Attention Mechanism\n  - ### OntologyBlock\n    - ontology:: true\n    - owl:class:: ai:AttentionMechanism\n";

    #[test]
    fn links_resolve_by_page_name_term_or_iri() {
        let vit = "- Vision Transformer\n  - ### OntologyBlock\n    - ontology:: true\n    - owl:class:: ai:VisionTransformer\n    - is-subclass-of:: [[transformer]], [[ai:AttentionMechanism]]\n    - owl:subClassOf:: [[has part]] some [[Attention Mechanism]]\n";
        let prop = "- has part\n  - ### OntologyBlock\n    - owl:objectProperty:: core:hasPart\n    - transitive:: true\n";
        let l = load(&[
            ("pages/Transformer.md", TRANSFORMER),
            ("pages/Attention Mechanism.md", ATTENTION),
            ("pages/Vision Transformer.md", vit),
            ("pages/has part.md", prop),
        ]);
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        let axs: Vec<&Axiom> = l.ontology.axioms.iter().map(|s| &s.axiom).collect();
        let c = |s: &str| ClassExpr::Class(s.to_string());
        assert!(axs.contains(&&Axiom::SubClassOf(
            c("ai:Transformer"),
            ClassExpr::some("core:hasPart", c("ai:AttentionMechanism"))
        )));
        assert!(axs.contains(&&Axiom::SubClassOf(
            c("ai:VisionTransformer"),
            c("ai:Transformer")
        )));
        assert!(axs.contains(&&Axiom::SubClassOf(
            c("ai:VisionTransformer"),
            c("ai:AttentionMechanism")
        )));
        assert!(axs.contains(&&Axiom::TransitiveObjectProperty("core:hasPart".into())));
        let sub = l
            .ontology
            .axioms
            .iter()
            .find(|s| s.axiom == Axiom::SubClassOf(c("ai:VisionTransformer"), c("ai:Transformer")))
            .unwrap();
        assert_eq!(sub.origin, Origin::new("pages/Vision Transformer.md", 5));
        assert!(l.ontology.entity("core:hasPart").unwrap().origin.is_some());
        assert!(l.ontology.entity("core:requires").is_none());
    }

    #[test]
    fn unknown_names_are_reported_with_file_and_line() {
        let bad = "- X\n  - ### OntologyBlock\n    - owl:class:: ai:X\n    - is-subclass-of:: [[Transformer]], [[Nonexistent Thing]]\n    - requires:: ai:Nope\n";
        let l = load(&[
            ("Transformer.md", TRANSFORMER),
            ("X.md", bad),
            (
                "Broken.md",
                "- B\n  - ### OntologyBlock\n    - owl:class:: not an iri\n",
            ),
            ("Plain.md", "- hello\n"),
        ]);
        let msgs: Vec<String> = l.problems.iter().map(|p| p.to_string()).collect();
        assert!(
            msgs.iter()
                .any(|m| m.starts_with("X.md:4: [[Nonexistent Thing]] names no page")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter()
                .any(|m| m.starts_with("X.md:5: ai:Nope: no page declares")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|m| m.starts_with("Broken.md:3:")),
            "{msgs:?}"
        );
        // The unknown link on Transformer's page is reported too (its target page is absent).
        assert!(
            msgs.iter().any(|m| m.starts_with("Transformer.md:6:")),
            "{msgs:?}"
        );
        assert_eq!(l.skipped, vec!["Plain.md"]);
        // The good part of X's page is imported.
        assert!(l.ontology.axioms.iter().any(|s| s.axiom
            == Axiom::SubClassOf(ClassExpr::class("ai:X"), ClassExpr::class("ai:Transformer"))));
    }

    #[test]
    fn kinds_are_checked_and_individual_relationships_become_assertions() {
        let gpt = "- GPT-4\n  - ### OntologyBlock\n    - owl:individual:: ai:GPT4\n    - rdf:type:: [[Transformer]]\n    - has-part:: [[Attention Mechanism]], [[Some Head]]\n    - relates-to:: [[Transformer]] and [[GPT-4]]\n";
        let head = "- Some Head\n  - ### OntologyBlock\n    - owl:individual:: ai:SomeHead\n";
        let l = load(&[
            ("Transformer.md", TRANSFORMER),
            ("Attention Mechanism.md", ATTENTION),
            ("GPT-4.md", gpt),
            ("Some Head.md", head),
        ]);
        let axs: Vec<&Axiom> = l.ontology.axioms.iter().map(|s| &s.axiom).collect();
        assert!(axs.contains(&&Axiom::ObjectPropertyAssertion(
            "core:hasPart".into(),
            "ai:GPT4".into(),
            "ai:SomeHead".into()
        )));
        assert!(axs.contains(&&Axiom::ClassAssertion(
            ClassExpr::some("core:hasPart", ClassExpr::class("ai:AttentionMechanism")),
            "ai:GPT4".into()
        )));
        assert_eq!(l.problems.len(), 1, "{:?}", l.problems);
        assert!(
            l.problems[0]
                .message
                .contains("an individual, where an class is expected")
                || l.problems[0].message.contains("individual"),
            "{:?}",
            l.problems
        );
    }

    #[test]
    fn duplicate_iris_and_ambiguous_names() {
        let a2 = "- Attention\n  - ### OntologyBlock\n    - owl:class:: ai:AttentionMechanism\n";
        let t1 = "- Token\n  - ### OntologyBlock\n    - preferred-term:: Token\n    - owl:class:: ai:Token\n";
        let t2 = "- Token\n  - ### OntologyBlock\n    - preferred-term:: Token\n    - owl:class:: bc:Token\n";
        let user = "- U\n  - ### OntologyBlock\n    - owl:class:: ai:U\n    - is-subclass-of:: [[Token]]\n";
        let l = load(&[
            ("Attention Mechanism.md", ATTENTION),
            ("Attention.md", a2),
            ("AI Token.md", t1),
            ("BC Token.md", t2),
            ("U.md", user),
        ]);
        let msgs: Vec<String> = l.problems.iter().map(|p| p.to_string()).collect();
        assert!(msgs.iter().any(|m| m.starts_with("Attention.md:3: ai:AttentionMechanism is already described by Attention Mechanism.md:4")), "{msgs:?}");
        assert!(
            msgs.iter().any(|m| m.contains("[[Token]] names 2 pages")),
            "{msgs:?}"
        );
    }

    #[test]
    fn an_ontology_written_as_pages_reads_back_the_same() {
        let mut o = Ontology::new();
        let c = |s: &str| ClassExpr::Class(s.to_string());
        o.declare("ai:A", EntityKind::Class)
            .unwrap()
            .meta
            .set("preferred-term", "Alpha");
        o.declare("ai:B", EntityKind::Class)
            .unwrap()
            .meta
            .set("definition", "A b, with a comma.");
        o.declare("bc:A", EntityKind::Class)
            .unwrap()
            .meta
            .set("preferred-term", "alpha");
        o.declare("ai:p", EntityKind::ObjectProperty).unwrap();
        let axioms = vec![
            Axiom::SubClassOf(c("ai:A"), c("ai:B")),
            Axiom::SubClassOf(c("ai:A"), ClassExpr::some("core:hasPart", c("bc:A"))),
            Axiom::SubClassOf(
                c("ai:B"),
                ClassExpr::some("ai:p", ClassExpr::And(vec![c("bc:A"), ClassExpr::Thing])),
            ),
            Axiom::SubClassOf(
                ClassExpr::And(vec![c("ai:A"), c("bc:A")]),
                ClassExpr::Nothing,
            ),
            Axiom::SubClassOf(ClassExpr::Thing, ClassExpr::Nothing),
            Axiom::EquivalentClasses(vec![ClassExpr::some("ai:p", c("ai:A")), c("ai:B")]),
            Axiom::DisjointClasses(vec![c("ai:A"), c("ai:B"), c("bc:A")]),
            Axiom::EquivalentClasses(vec![
                ClassExpr::some("ai:p", c("ai:A")),
                ClassExpr::some("ai:p", c("ai:B")),
            ]),
            Axiom::SubObjectPropertyOf(vec!["ai:p".into()], "core:hasPart".into()),
            Axiom::SubObjectPropertyOf(
                vec!["ai:p".into(), "core:hasPart".into(), "ai:p".into()],
                "ai:p".into(),
            ),
            Axiom::TransitiveObjectProperty("core:hasPart".into()),
            Axiom::ReflexiveObjectProperty("ai:p".into()),
            Axiom::ObjectPropertyDomain("ai:p".into(), c("ai:A")),
            Axiom::ObjectPropertyRange("ai:p".into(), ClassExpr::some("ai:p", ClassExpr::Thing)),
            Axiom::ClassAssertion(c("ai:A"), "ai:x".into()),
            Axiom::ClassAssertion(ClassExpr::some("core:hasPart", c("ai:A")), "ai:x".into()),
            Axiom::ObjectPropertyAssertion("ai:p".into(), "ai:x".into(), "ai:y".into()),
            Axiom::ObjectPropertyAssertion("core:hasPart".into(), "ai:x".into(), "ai:y".into()),
        ];
        for a in axioms {
            o.add(a, Origin::default()).unwrap();
        }
        let pages = o.to_pages();
        let texts: Vec<(String, String)> =
            pages.iter().map(|(f, p)| (f.clone(), p.write())).collect();
        for ((_, p), (_, t)) in pages.iter().zip(&texts) {
            assert_eq!(&Page::parse(t).unwrap(), p);
        }
        let back = load_pages(texts.iter().map(|(f, t)| (f.as_str(), t.as_str())));
        assert!(
            back.problems.is_empty(),
            "{:?}\n{}",
            back.problems,
            texts.iter().map(|t| t.1.clone()).collect::<String>()
        );
        assert!(
            back.ontology.same_content(&o),
            "{:#?}\nvs\n{:#?}",
            back.ontology.axioms,
            o.axioms
        );
        let alpha = texts.iter().find(|(f, _)| f == "Alpha.md").unwrap();
        assert!(alpha.1.contains("is-subclass-of:: [[B]]"), "{}", alpha.1);
        assert!(alpha.1.contains("has-part:: [[A]]"), "{}", alpha.1);
    }
}
