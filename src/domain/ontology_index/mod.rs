//! A synced ontology as the ontology toolset serves it: the [`Ontology`] value, its
//! classification, the property graph queries and traversals run over (built as
//! `ontology_query`'s module documentation describes), the query schema, and the
//! keyword index discovery starts from. Built once per sync generation and shared
//! read-only by every call until the next sync.
//!
//! Reading order: [`Index::build`] (the mapping), [`terms`] (keyword matching),
//! [`discover`] (the discovery and its score, docs/ontology.md).
//!
//! Pure: no SQL, no MCP, no files, no clock (discovery is handed today's date).

pub mod discover;
pub mod terms;

use std::collections::{HashMap, HashSet};

use crate::domain::ontology::entity::keys;
use crate::domain::ontology::expr::ClassExpr;
use crate::domain::ontology::model::local_name;
use crate::domain::ontology::page::title_from_file;
use crate::domain::ontology::{classify, Axiom, Classification, EntityKind, Ontology};
use crate::domain::ontology_query::{NameKind, NodeId, PropertyGraph, Resolution, Schema, Value};

pub use terms::Terms;

/// The node labels of the three kinds of entity.
pub const CLASS_LABEL: &str = "OwlClass";
pub const INDIVIDUAL_LABEL: &str = "Individual";
pub const PROPERTY_LABEL: &str = "ObjectProperty";

/// Relationship types that are not object properties.
pub const SUBCLASS_OF: &str = "SUBCLASS_OF";
pub const EQUIVALENT_TO: &str = "EQUIVALENT_TO";
pub const INSTANCE_OF: &str = "INSTANCE_OF";
pub const SUB_PROPERTY_OF: &str = "SUB_PROPERTY_OF";

/// The property keys of the graph's nodes and relationships, as a Cypher query reads
/// them (`c.preferredTerm`): data of the graph, which a tool's parameter may share a
/// name with.
pub mod prop {
    pub const IRI: &str = "iri";
    pub const KIND: &str = "kind";
    pub const TERM_ID: &str = "termId";
    pub const PREFERRED_TERM: &str = "preferredTerm";
    pub const DOMAIN: &str = "domain";
    pub const STATUS: &str = "status";
    pub const DEFINITION: &str = "definition";
    pub const QUALITY_SCORE: &str = "qualityScore";
    pub const AUTHORITY_SCORE: &str = "authorityScore";
    pub const MATURITY: &str = "maturity";
    pub const PHYSICALITY: &str = "physicality";
    pub const ROLE: &str = "role";
    pub const ALT_TERMS: &str = "altTerms";
    pub const LAST_UPDATED: &str = "lastUpdated";
    pub const PAGE: &str = "page";
    pub const UNSATISFIABLE: &str = "unsatisfiable";
    pub const INFERRED: &str = "inferred";
}

/// The property keys of nodes (a node has those its page fills) and relationships.
pub const NODE_KEYS: [&str; 16] = [
    prop::IRI,
    prop::KIND,
    prop::TERM_ID,
    prop::PREFERRED_TERM,
    prop::DOMAIN,
    prop::STATUS,
    prop::DEFINITION,
    prop::QUALITY_SCORE,
    prop::AUTHORITY_SCORE,
    prop::MATURITY,
    prop::PHYSICALITY,
    prop::ROLE,
    prop::ALT_TERMS,
    prop::LAST_UPDATED,
    prop::PAGE,
    prop::UNSATISFIABLE,
];
pub const EDGE_KEYS: [&str; 1] = [prop::INFERRED];

/// The relationship type of an object property: its local name in UPPER_SNAKE
/// (`core:hasPart` → `HAS_PART`).
pub fn rel_type(property: &str) -> String {
    let local = local_name(property).unwrap_or_else(|| property.to_string());
    let mut out = String::with_capacity(local.len() + 4);
    let mut prev: Option<char> = None;
    for c in local.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_uppercase() && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) {
                out.push('_');
            }
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
        prev = Some(c);
    }
    let out = out.trim_end_matches('_').to_string();
    if out.is_empty() {
        "RELATED".into()
    } else {
        out
    }
}

/// An entity's domain: its page's `source-domain`, else its IRI's prefix.
pub fn domain_of(o: &Ontology, iri: &str) -> String {
    o.entity(iri)
        .and_then(|e| e.meta.get(keys::SOURCE_DOMAIN))
        .map(|d| d.trim().to_string())
        .filter(|d| !d.is_empty())
        .or_else(|| iri.split_once(':').map(|(p, _)| p.to_string()))
        .unwrap_or_default()
}

/// The served form of a synced ontology.
pub struct Index {
    pub ontology: Ontology,
    pub classification: Classification,
    pub graph: PropertyGraph,
    pub schema: Schema,
    pub terms: Terms,
    node_of: HashMap<String, NodeId>,
    /// Lower-cased term ids, preferred terms and page titles → IRI (first wins).
    names: HashMap<String, String>,
}

impl Index {
    /// Classifies the ontology and builds its graph, schema and keyword index.
    pub fn build(ontology: Ontology) -> Index {
        let classification = classify(&ontology);
        Index::with_classification(ontology, classification)
    }

    /// The index of an ontology already classified.
    pub fn with_classification(ontology: Ontology, classification: Classification) -> Index {
        let mut g = PropertyGraph::new();
        let mut node_of = HashMap::new();
        let mut rel_of = HashMap::new();
        for (iri, e) in &ontology.entities {
            if e.kind == EntityKind::ObjectProperty {
                rel_of.insert(iri.clone(), rel_type(iri));
            }
        }
        // Nodes, in IRI order.
        for (iri, e) in &ontology.entities {
            let mut labels: Vec<String> = Vec::new();
            let kind = match e.kind {
                EntityKind::Class => {
                    labels.push(CLASS_LABEL.into());
                    labels.push(iri.clone());
                    labels.extend(
                        classification
                            .superclasses(iri)
                            .iter()
                            .map(|s| s.sup.to_string()),
                    );
                    "class"
                }
                EntityKind::Individual => {
                    labels.push(INDIVIDUAL_LABEL.into());
                    labels.push(iri.clone());
                    labels.extend(classification.types(iri).iter().map(|s| s.to_string()));
                    "individual"
                }
                EntityKind::ObjectProperty => {
                    labels.push(PROPERTY_LABEL.into());
                    labels.push(iri.clone());
                    "property"
                }
            };
            let m = &e.meta;
            let text = |k: &str| -> Value {
                m.get(k)
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(Value::from)
                    .unwrap_or(Value::Null)
            };
            let num = |x: Option<f32>| {
                x.map(|v| Value::Float((f64::from(v) * 1000.0).round() / 1000.0))
                    .unwrap_or(Value::Null)
            };
            let alt = m.alt_terms();
            let mut props = vec![
                (prop::IRI, Value::from(iri.as_str())),
                (prop::KIND, Value::from(kind)),
                (prop::TERM_ID, text(keys::TERM_ID)),
                (prop::PREFERRED_TERM, text(keys::PREFERRED_TERM)),
                (prop::DOMAIN, Value::from(domain_of(&ontology, iri))),
                (prop::STATUS, text(keys::STATUS)),
                (prop::DEFINITION, text(keys::DEFINITION)),
                (prop::QUALITY_SCORE, num(m.quality_score())),
                (prop::AUTHORITY_SCORE, num(m.authority_score())),
                (prop::MATURITY, text(keys::MATURITY)),
                (prop::PHYSICALITY, text(keys::PHYSICALITY)),
                (prop::ROLE, text(keys::ROLE)),
                (
                    prop::ALT_TERMS,
                    if alt.is_empty() {
                        Value::Null
                    } else {
                        Value::List(alt.into_iter().map(Value::from).collect())
                    },
                ),
                (prop::LAST_UPDATED, text(keys::LAST_UPDATED)),
                (
                    prop::PAGE,
                    e.origin
                        .as_ref()
                        .map(|o| Value::from(o.file.as_str()))
                        .unwrap_or(Value::Null),
                ),
            ];
            if e.kind == EntityKind::Class && classification.is_satisfiable(iri) == Some(false) {
                props.push((prop::UNSATISFIABLE, Value::Bool(true)));
            }
            let n = g.add_node(labels, props);
            node_of.insert(iri.clone(), n);
        }
        let edge = |g: &mut PropertyGraph, a: &str, b: &str, t: &str, inferred: bool| {
            if let (Some(&x), Some(&y)) = (node_of.get(a), node_of.get(b)) {
                // Both ends are nodes of this graph: adding cannot fail.
                let _ = g.add_edge(x, y, t, [(prop::INFERRED, Value::Bool(inferred))]);
            }
        };
        // The taxonomy: direct parents, flagged when no axiom states them.
        for iri in ontology.iris(EntityKind::Class) {
            let told: HashSet<&str> = classification
                .superclasses(iri)
                .iter()
                .filter(|s| s.asserted)
                .map(|s| s.sup)
                .collect();
            for p in classification.direct_parents(iri) {
                if ontology.entity(p).is_some() {
                    edge(&mut g, iri, p, SUBCLASS_OF, !told.contains(p));
                }
            }
            for q in classification.equivalents(iri) {
                edge(&mut g, iri, q, EQUIVALENT_TO, !told.contains(q));
            }
        }
        for a in ontology.iris(EntityKind::Individual) {
            let told: HashSet<&str> = ontology
                .axioms
                .iter()
                .filter_map(|s| match &s.axiom {
                    Axiom::ClassAssertion(ClassExpr::Class(c), x) if x == a => Some(c.as_str()),
                    _ => None,
                })
                .collect();
            for t in classification.direct_types(a) {
                edge(&mut g, a, t, INSTANCE_OF, !told.contains(t));
            }
        }
        // Existential restrictions a class states, property assertions, and the
        // property hierarchy.
        let mut seen: HashSet<(String, String, String)> = HashSet::new();
        for s in &ontology.axioms {
            let (sub, sup) = match &s.axiom {
                Axiom::SubClassOf(ClassExpr::Class(c), x) => (c, x),
                Axiom::EquivalentClasses(v) if v.len() == 2 => match (&v[0], &v[1]) {
                    (ClassExpr::Class(c), x) => (c, x),
                    _ => continue,
                },
                Axiom::ObjectPropertyAssertion(p, a, b) => {
                    if let Some(t) = rel_of.get(p) {
                        if seen.insert((a.clone(), t.clone(), b.clone())) {
                            edge(&mut g, a, b, t, false);
                        }
                    }
                    continue;
                }
                Axiom::SubObjectPropertyOf(ch, q) if ch.len() == 1 => {
                    edge(&mut g, &ch[0], q, SUB_PROPERTY_OF, false);
                    continue;
                }
                _ => continue,
            };
            let parts: Vec<&ClassExpr> = match sup {
                ClassExpr::And(xs) => xs.iter().collect(),
                x => vec![x],
            };
            for part in parts {
                if let ClassExpr::Some(p, f) = part {
                    if let (Some(t), ClassExpr::Class(d)) = (rel_of.get(p), &**f) {
                        if seen.insert((sub.clone(), t.clone(), d.clone())) {
                            edge(&mut g, sub, d, t, false);
                        }
                    }
                }
            }
        }
        let mut schema = Schema::from_graph(&g);
        for l in [CLASS_LABEL, INDIVIDUAL_LABEL, PROPERTY_LABEL] {
            schema.add(NameKind::Label, l);
        }
        for t in [SUBCLASS_OF, EQUIVALENT_TO, INSTANCE_OF, SUB_PROPERTY_OF] {
            schema.add(NameKind::RelationshipType, t);
        }
        for k in NODE_KEYS.iter().chain(EDGE_KEYS.iter()) {
            schema.add(NameKind::PropertyKey, k);
        }
        for (p, t) in &rel_of {
            schema.add(NameKind::RelationshipType, t);
            schema.add_alias(NameKind::RelationshipType, p, t);
            if let Some(local) = local_name(p) {
                if local != *t {
                    schema.add_alias(NameKind::RelationshipType, &local, t);
                }
            }
        }
        schema.alias_local_names(NameKind::Label, ':');
        let mut names = HashMap::new();
        for (iri, e) in &ontology.entities {
            let mut add = |k: &str| {
                let k = k.trim().to_lowercase();
                if !k.is_empty() {
                    names.entry(k).or_insert_with(|| iri.clone());
                }
            };
            if let Some(t) = e.meta.get(keys::TERM_ID) {
                add(t);
            }
            if let Some(t) = e.meta.preferred_term() {
                add(t);
            }
            if let Some(o) = &e.origin {
                add(&title_from_file(&o.file));
            }
        }
        let terms = Terms::build(&ontology);
        Index {
            ontology,
            classification,
            graph: g,
            schema,
            terms,
            node_of,
            names,
        }
    }

    /// The node of an entity.
    pub fn node(&self, iri: &str) -> Option<NodeId> {
        self.node_of.get(iri).copied()
    }

    /// The IRI of a node.
    pub fn iri(&self, n: NodeId) -> &str {
        match self.graph.property(n, "iri") {
            Some(Value::String(s)) => s,
            _ => "",
        }
    }

    /// The entity a name given by an agent means: an IRI, a term id (`AI-0023`), a
    /// preferred term or a page title (both compared ignoring case), or a local name
    /// only one entity has.
    pub fn resolve(&self, name: &str) -> Option<&str> {
        let name = name.trim();
        let name = name
            .strip_prefix("[[")
            .and_then(|n| n.strip_suffix("]]"))
            .unwrap_or(name)
            .trim();
        if let Some((k, _)) = self.ontology.entities.get_key_value(name) {
            return Some(k.as_str());
        }
        if let Some(iri) = self.names.get(&name.to_lowercase()) {
            return Some(iri.as_str());
        }
        // No spelling suggestions: an import asks this of every new page's title.
        let iri = self.schema.alias_of(NameKind::Label, name)?;
        self.ontology
            .entities
            .get_key_value(iri)
            .map(|(k, _)| k.as_str())
    }

    /// The entities nearest in spelling to an unknown name (for a NOT_FOUND's hint).
    pub fn nearest(&self, name: &str) -> Vec<String> {
        match self.schema.resolve(NameKind::Label, name) {
            Resolution::Unknown(n) => n
                .suggestions
                .into_iter()
                .filter(|s| self.ontology.entity(s).is_some())
                .take(5)
                .collect(),
            Resolution::Ambiguous(all) => all,
            _ => Vec::new(),
        }
    }

    /// An entity's preferred term, else its page title, else its IRI.
    pub fn term(&self, iri: &str) -> String {
        let e = self.ontology.entity(iri);
        e.and_then(|e| e.meta.preferred_term().map(str::to_string))
            .or_else(|| {
                e.and_then(|e| e.origin.as_ref())
                    .map(|o| title_from_file(&o.file))
            })
            .unwrap_or_else(|| iri.to_string())
    }

    /// The page file an entity is declared on.
    pub fn page_of(&self, iri: &str) -> Option<&str> {
        self.ontology
            .entity(iri)?
            .origin
            .as_ref()
            .map(|o| o.file.as_str())
    }

    /// The outgoing relationships of a node that are object properties (not the
    /// taxonomy), as (type, target IRI).
    pub fn relationships(&self, n: NodeId) -> Vec<(&str, &str)> {
        self.graph
            .out_edges(n)
            .iter()
            .filter_map(|&e| {
                let t = self.graph.rel_type(e)?;
                if [SUBCLASS_OF, EQUIVALENT_TO, INSTANCE_OF, SUB_PROPERTY_OF].contains(&t) {
                    return None;
                }
                let (_, to) = self.graph.endpoints(e)?;
                Some((t, self.iri(to)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
