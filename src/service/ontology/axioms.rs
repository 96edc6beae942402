//! Axioms as `ontology_validate` and `ontology_propose` take them: one shape
//! ([`AxiomInput`]: a type, a subject, an object, a property), checked field by
//! field, written as the one page line that states it (docs/ontology.md) and resolved
//! against the synced ontology. A hypothesis is checked by the reasoner and changes
//! nothing; a proposal writes the same lines on its page.

use super::propose::{checked_in_pool, one_line, problems_error, rel_key, Checked};
use super::served;
use crate::domain::ontology::entity::{keys, read_entry};
use crate::domain::ontology::expr::{looks_like_iri, parse_chain, parse_expr};
use crate::domain::ontology::{EntityKind, Page, Sourced};
use crate::domain::ontology_index::Index;
use crate::error::{Error, Result};
use crate::service::App;

/// One hypothetical axiom (`AxiomInput`, docs/ontology.md, hypothetical axioms):
/// its type, its subject, and its object (absent for the property characteristics)
/// and property (a property assertion's).
#[derive(Debug, Clone, Default)]
pub struct AxiomInput {
    pub axiom_type: String,
    pub subject: String,
    pub object: Option<String>,
    pub property: Option<String>,
}

/// The axiom types `ontology_validate` takes (the relationship keys besides), each
/// with the page form that states it: the subject's entity key and the property
/// key the object goes to.
pub const AXIOM_TYPES: &[(&str, &str, &str)] = &[
    ("SubClassOf", keys::OWL_CLASS, keys::SUB_CLASS_OF),
    ("EquivalentClasses", keys::OWL_CLASS, keys::EQUIVALENT_CLASS),
    ("DisjointClasses", keys::OWL_CLASS, keys::DISJOINT_WITH),
    (
        "SubObjectPropertyOf",
        keys::OWL_OBJECT_PROPERTY,
        keys::SUB_PROPERTY_OF,
    ),
    (
        "ObjectPropertyDomain",
        keys::OWL_OBJECT_PROPERTY,
        keys::DOMAIN,
    ),
    (
        "ObjectPropertyRange",
        keys::OWL_OBJECT_PROPERTY,
        keys::RANGE,
    ),
    (
        "TransitiveObjectProperty",
        keys::OWL_OBJECT_PROPERTY,
        keys::TRANSITIVE,
    ),
    (
        "ReflexiveObjectProperty",
        keys::OWL_OBJECT_PROPERTY,
        keys::REFLEXIVE,
    ),
    ("ClassAssertion", keys::OWL_INDIVIDUAL, keys::RDF_TYPE),
    ("ObjectPropertyAssertion", keys::OWL_INDIVIDUAL, keys::FACTS),
];

/// The subject a general class axiom is stated under on a page of its own (its left
/// side is an expression, not a named class).
const HYPOTHESIS: &str = "cairn:Hypothesis";

/// One axiom as the page line that states it: the entity it is about (its kind and
/// IRI), the property key, and the value.
struct Line {
    kind: EntityKind,
    subject: String,
    key: &'static str,
    value: String,
}

/// The page line that states one axiom, or what is wrong with it.
fn line_of(ix: &Index, a: &AxiomInput) -> std::result::Result<Line, String> {
    let t = a.axiom_type.trim();
    let subject = as_expr(ix, &a.subject);
    let object = a.object.as_deref().map(|o| as_expr(ix, o));
    let named = looks_like_iri(&subject) && !subject.contains(' ');
    let need = |o: Option<String>| o.ok_or_else(|| format!("{t} needs an object"));
    let line = |kind, subject: &str, key, value| Line {
        kind,
        subject: subject.to_string(),
        key,
        value,
    };
    let Some(&(name, ident, key)) = AXIOM_TYPES.iter().find(|(n, ..)| n.eq_ignore_ascii_case(t))
    else {
        // A relationship key: an existential on a class, an assertion between
        // individuals.
        let key =
            rel_key(t, false).ok_or_else(|| format!("'{t}' is not an axiom type Cairn checks"))?;
        if !named {
            return Err(format!("{key} needs a named subject"));
        }
        let individual = ix
            .ontology
            .entity(&subject)
            .is_some_and(|e| e.kind == EntityKind::Individual);
        let kind = if individual {
            EntityKind::Individual
        } else {
            EntityKind::Class
        };
        return Ok(line(kind, &subject, key, need(object)?));
    };
    let kind = match ident {
        keys::OWL_CLASS => EntityKind::Class,
        keys::OWL_OBJECT_PROPERTY => EntityKind::ObjectProperty,
        _ => EntityKind::Individual,
    };
    if kind == EntityKind::Class && !named {
        // A general axiom: its left side is an expression.
        let kw = match name {
            "SubClassOf" => "SubClassOf",
            "EquivalentClasses" => "EquivalentTo",
            _ => "DisjointWith",
        };
        let o = need(object)?;
        return Ok(line(
            kind,
            HYPOTHESIS,
            keys::AXIOM,
            format!("{subject} {kw} {o}"),
        ));
    }
    let chain = name == "SubObjectPropertyOf" && subject.contains(" o ");
    if !named && !chain {
        return Err(format!(
            "'{}' is not an IRI or a known name",
            a.subject.trim()
        ));
    }
    let value = match key {
        keys::TRANSITIVE | keys::REFLEXIVE if object.is_some() => {
            return Err(format!(
                "{name} takes its property as the subject, and no object"
            ))
        }
        keys::TRANSITIVE | keys::REFLEXIVE => "true".to_string(),
        keys::FACTS => {
            let p = a.property.as_deref().map(|p| as_expr(ix, p));
            let p = p.ok_or_else(|| format!("{name} needs a property"))?;
            format!("{p} {}", need(object)?)
        }
        _ => need(object)?,
    };
    if chain {
        // `p o q SubObjectPropertyOf r` is stated on r's page.
        return Ok(line(kind, &value, keys::PROPERTY_CHAIN, subject));
    }
    Ok(line(kind, &subject, key, value))
}

/// The key that names a page's entity of this kind.
fn ident_key(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Class => keys::OWL_CLASS,
        EntityKind::ObjectProperty => keys::OWL_OBJECT_PROPERTY,
        EntityKind::Individual => keys::OWL_INDIVIDUAL,
    }
}

impl Line {
    /// The line as an `owl:axiom::` on another entity's page (`p Domain C`,
    /// `a Facts p b`, `X SubClassOf Y`, ...).
    fn general(&self, ix: &Index) -> String {
        let (s, v) = (&self.subject, &self.value);
        let rel = crate::domain::ontology::entity::RELATIONSHIPS
            .iter()
            .find(|(k, _)| *k == self.key)
            .map(|(_, iri)| *iri);
        match (self.kind, self.key) {
            (_, keys::AXIOM) => v.clone(),
            (EntityKind::Class, keys::EQUIVALENT_CLASS) => format!("{s} EquivalentTo {v}"),
            (EntityKind::Class, keys::DISJOINT_WITH) => format!("{s} DisjointWith {v}"),
            (EntityKind::Class, _) => match rel {
                Some(p) => format!("{s} SubClassOf {p} some ({v})"),
                None => format!("{s} SubClassOf {v}"),
            },
            (EntityKind::ObjectProperty, keys::PROPERTY_CHAIN) => format!("{v} SubPropertyOf {s}"),
            (EntityKind::ObjectProperty, keys::DOMAIN) => format!("{s} Domain {v}"),
            (EntityKind::ObjectProperty, keys::RANGE) => format!("{s} Range {v}"),
            (EntityKind::ObjectProperty, keys::TRANSITIVE) => {
                format!("{s} Characteristics Transitive")
            }
            (EntityKind::ObjectProperty, keys::REFLEXIVE) => {
                format!("{s} Characteristics Reflexive")
            }
            (EntityKind::ObjectProperty, _) => format!("{s} SubPropertyOf {v}"),
            (EntityKind::Individual, keys::RDF_TYPE) => format!("{s} Types {v}"),
            (EntityKind::Individual, keys::FACTS) => format!("{s} Facts {v}"),
            (EntityKind::Individual, _) => {
                let p = rel.unwrap_or_default();
                let to_individual = ix
                    .ontology
                    .entity(v)
                    .is_some_and(|e| e.kind == EntityKind::Individual);
                if to_individual {
                    format!("{s} Facts {p} {v}")
                } else {
                    format!("{s} Types {p} some ({v})")
                }
            }
        }
    }
}

/// The page an axiom is written on when it is part of a proposal: the proposal's
/// entity, its page file and title.
pub(super) struct OnPage<'a> {
    pub kind: EntityKind,
    pub iri: &'a str,
    pub path: &'a str,
    pub title: &'a str,
}

/// One axiom as a page states it: the key and value of its line, and the axioms the
/// line resolves to.
pub(super) struct Stated {
    pub key: &'static str,
    pub value: String,
    pub axioms: Vec<Sourced>,
}

/// Refuses an expression that does not parse, naming the input field and column.
fn parses(field: &str, text: &str, chain: bool) -> Result<()> {
    let r = if chain {
        parse_chain(text).map(|_| ())
    } else {
        parse_expr(text).map(|_| ())
    };
    r.map_err(|e| Error::validation(field, format!("column {}: {}", e.column, e.message)))
}

/// The one shape of an axiom `ontology_validate` and `ontology_propose` take: checked
/// field by field (`axioms[i].subject`, ...), stated as one page line (on its own
/// entity's page for a hypothesis; on the proposal's page for a proposal: the page's
/// own property when the axiom is about its entity, else an `owl:axiom::`), and
/// resolved against the synced ontology.
pub(super) fn stated(ix: &Index, i: usize, a: &AxiomInput, on: Option<&OnPage>) -> Result<Stated> {
    let field = format!("axioms[{i}]");
    // Each value is checked under its own name, so a refusal says which one.
    for (name, v) in [
        ("subject", Some(&a.subject)),
        ("object", a.object.as_ref()),
        ("property", a.property.as_ref()),
    ] {
        if let Some(v) = v {
            one_line(format!("{field}.{name}"), v)?;
        }
    }
    let property_chain = a
        .axiom_type
        .trim()
        .eq_ignore_ascii_case("SubObjectPropertyOf");
    // A known name (a term, a title) stands for its IRI; the rest must parse.
    parses(
        &format!("{field}.subject"),
        &as_expr(ix, &a.subject),
        property_chain,
    )?;
    for (name, v) in [("object", &a.object), ("property", &a.property)] {
        if let Some(v) = v {
            parses(&format!("{field}.{name}"), &as_expr(ix, v), false)?;
        }
    }
    let l = line_of(ix, a).map_err(|m| Error::validation(&field, m))?;
    let (file, title, ident, key, value) = match on {
        Some(p) if p.kind == l.kind && p.iri == l.subject => {
            (p.path.to_string(), p.title, p.iri, l.key, l.value.clone())
        }
        Some(p) => (
            p.path.to_string(),
            p.title,
            p.iri,
            keys::AXIOM,
            l.general(ix),
        ),
        None => (
            field.clone(),
            field.as_str(),
            l.subject.as_str(),
            l.key,
            l.value.clone(),
        ),
    };
    let kind = on.map_or(l.kind, |p| p.kind);
    let text = format!(
        "- {title}\n  - ### OntologyBlock\n    - {}:: {ident}\n    - {key}:: {value}\n",
        ident_key(kind)
    );
    let page = Page::parse(&text).map_err(|e| Error::validation(&field, e.to_string()))?;
    let entry = read_entry(&page).map_err(|e| Error::validation(&field, e.message))?;
    let (axioms, problems) = ix.ontology.page_axioms(&file, &entry);
    if !problems.is_empty() {
        return Err(problems_error(&field, problems));
    }
    Ok(Stated { key, value, axioms })
}

/// What hypothetical axioms would do.
pub struct Validated {
    pub checked: Checked,
    pub axioms: Vec<Sourced>,
    /// Gained subsumptions with the asserted axioms each follows from (the first few).
    pub explained: Vec<((String, String), Vec<Sourced>)>,
}

/// Gained subsumptions explained at most. Only inferred direct parents are explained
/// (the others follow from them and from what is asserted), those of classes that
/// exist already first, being what a hypothesis changes: an explanation is a traced
/// saturation that can reach much of the ontology (hundreds of milliseconds at
/// 10,000 classes).
const VALIDATE_EXPLAINED: usize = 3;

/// A name written in a page expression: a known entity's IRI, else as given.
fn as_expr(ix: &Index, s: &str) -> String {
    match ix.resolve(s) {
        Some(iri) => iri.to_string(),
        None => s.trim().to_string(),
    }
}

/// `ontology_validate`: hypothetical axioms checked against the synced ontology.
pub async fn validate(app: &App, project_id: &str, input: Vec<AxiomInput>) -> Result<Validated> {
    let (_, s) = served(app, project_id).await?;
    let ix = &s.index;
    let mut all = Vec::new();
    for (i, a) in input.iter().enumerate() {
        all.extend(stated(ix, i, a, None)?.axioms);
    }
    let checked = checked_in_pool(&s, Vec::new(), all.clone()).await?;
    let s2 = s.clone();
    let (checked, explained) = tokio::task::spawn_blocking(move || {
        let after = &checked.after;
        let known = |c: &str| s2.index.ontology.entity(c).is_some();
        let inferred_direct = |(a, b): &&(String, String)| {
            after.direct_parents(a).contains(&b.as_str())
                && after
                    .superclasses(a)
                    .iter()
                    .any(|x| x.sup == b.as_str() && !x.asserted)
        };
        let mut pairs: Vec<&(String, String)> = checked
            .gained
            .iter()
            .filter(inferred_direct)
            .filter(|(a, _)| known(a))
            .collect();
        pairs.extend(
            checked
                .gained
                .iter()
                .filter(inferred_direct)
                .filter(|(a, _)| !known(a)),
        );
        let explained = pairs
            .into_iter()
            .take(VALIDATE_EXPLAINED)
            .map(|(a, b)| {
                let why = checked
                    .after
                    .explain_subsumption(a, b)
                    .map(|j| j.axioms)
                    .unwrap_or_default();
                ((a.clone(), b.clone()), why)
            })
            .collect();
        (checked, explained)
    })
    .await
    .map_err(|e| Error::Internal(format!("explaining subsumptions: {e}")))?;
    Ok(Validated {
        checked,
        axioms: all,
        explained,
    })
}
