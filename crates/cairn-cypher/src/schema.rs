//! The names a query may use: labels, relationship types and property keys, each
//! with aliases (another spelling that stands for one or more names, such as a
//! local name for the IRIs that end in it). Built by the caller or derived from a
//! graph; knows nothing of what the names mean.

use std::collections::{BTreeMap, BTreeSet};

use super::error::NameKind;
use super::graph::PropertyGraph;
use super::suggest::{self, Nearest};

#[derive(Clone, Debug, Default)]
struct Names {
    known: BTreeSet<String>,
    aliases: BTreeMap<String, BTreeSet<String>>,
}

/// Known labels, relationship types and property keys, with their aliases.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    labels: Names,
    rel_types: Names,
    keys: Names,
}

/// What a name written in a query stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolution {
    /// A known name, as written.
    Known,
    /// An alias for exactly one known name.
    Alias(String),
    /// An alias for several known names, listed: the author must choose.
    Ambiguous(Vec<String>),
    /// Neither known nor an alias.
    Unknown(Nearest),
}

impl Schema {
    /// A schema that knows no names.
    pub fn new() -> Schema {
        Schema::default()
    }

    /// Every label, relationship type and property key that occurs in `graph`.
    pub fn from_graph(graph: &PropertyGraph) -> Schema {
        let mut s = Schema::new();
        for l in graph.label_names() {
            s.add(NameKind::Label, l);
        }
        for t in graph.rel_type_names() {
            s.add(NameKind::RelationshipType, t);
        }
        for k in graph.property_keys() {
            s.add(NameKind::PropertyKey, k);
        }
        s
    }

    fn names(&self, kind: NameKind) -> &Names {
        match kind {
            NameKind::Label => &self.labels,
            NameKind::RelationshipType => &self.rel_types,
            NameKind::PropertyKey => &self.keys,
        }
    }

    fn names_mut(&mut self, kind: NameKind) -> &mut Names {
        match kind {
            NameKind::Label => &mut self.labels,
            NameKind::RelationshipType => &mut self.rel_types,
            NameKind::PropertyKey => &mut self.keys,
        }
    }

    /// Adds a known name.
    pub fn add(&mut self, kind: NameKind, name: &str) {
        self.names_mut(kind).known.insert(name.to_string());
    }

    /// Makes `alias` stand for `name` (which is added if unknown). An alias given
    /// for several names is ambiguous and resolves to none of them.
    pub fn add_alias(&mut self, kind: NameKind, alias: &str, name: &str) {
        let names = self.names_mut(kind);
        names.known.insert(name.to_string());
        names
            .aliases
            .entry(alias.to_string())
            .or_default()
            .insert(name.to_string());
    }

    /// For every known name of `kind` containing `separator`, makes the text after
    /// its last separator an alias (`ai:VisionTransformer` gets `VisionTransformer`).
    pub fn alias_local_names(&mut self, kind: NameKind, separator: char) {
        let pairs: Vec<(String, String)> = self
            .names(kind)
            .known
            .iter()
            .filter_map(|n| {
                let (_, local) = n.rsplit_once(separator)?;
                (!local.is_empty()).then(|| (local.to_string(), n.clone()))
            })
            .collect();
        for (alias, name) in pairs {
            self.add_alias(kind, &alias, &name);
        }
    }

    /// True when `name` is a known name of `kind` (aliases are not names).
    pub fn contains(&self, kind: NameKind, name: &str) -> bool {
        self.names(kind).known.contains(name)
    }

    /// The known names of `kind`, sorted.
    pub fn known(&self, kind: NameKind) -> impl Iterator<Item = &str> {
        self.names(kind).known.iter().map(String::as_str)
    }

    /// The one name `name` is an alias of, when it is no known name itself and the
    /// alias is not ambiguous: [`Schema::resolve`]'s `Alias`, without the spelling
    /// suggestions it works out for an unknown name (which read every name).
    pub fn alias_of(&self, kind: NameKind, name: &str) -> Option<&str> {
        let names = self.names(kind);
        if names.known.contains(name) {
            return None;
        }
        let mut it = names.aliases.get(name)?.iter();
        match (it.next(), it.next()) {
            (Some(one), None) => Some(one.as_str()),
            _ => None,
        }
    }

    /// What `name` stands for. A known name wins over an alias of the same spelling.
    pub fn resolve(&self, kind: NameKind, name: &str) -> Resolution {
        let names = self.names(kind);
        if names.known.contains(name) {
            return Resolution::Known;
        }
        if let Some(targets) = names.aliases.get(name) {
            let mut it = targets.iter();
            return match (it.next(), it.next()) {
                (Some(one), None) => Resolution::Alias(one.clone()),
                _ => Resolution::Ambiguous(targets.iter().cloned().collect()),
            };
        }
        let known = names.known.iter().map(|n| (n.as_str(), vec![n.as_str()]));
        let aliases = names.aliases.iter().map(|(a, ts)| {
            (
                a.as_str(),
                ts.iter().map(String::as_str).collect::<Vec<_>>(),
            )
        });
        Resolution::Unknown(suggest::nearest(name, known.chain(aliases)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Schema {
        let mut s = Schema::new();
        for l in [
            "OwlClass",
            "ai:VisionTransformer",
            "ai:Agent",
            "mv:Agent",
            "bc:Block",
        ] {
            s.add(NameKind::Label, l);
        }
        s.alias_local_names(NameKind::Label, ':');
        s
    }

    #[test]
    fn local_names_resolve_when_unambiguous() {
        let s = schema();
        assert_eq!(s.resolve(NameKind::Label, "OwlClass"), Resolution::Known);
        assert_eq!(
            s.resolve(NameKind::Label, "VisionTransformer"),
            Resolution::Alias("ai:VisionTransformer".into())
        );
        assert_eq!(
            s.resolve(NameKind::Label, "Agent"),
            Resolution::Ambiguous(vec!["ai:Agent".into(), "mv:Agent".into()])
        );
        // The same answers without suggestions.
        assert_eq!(s.alias_of(NameKind::Label, "OwlClass"), None);
        assert_eq!(
            s.alias_of(NameKind::Label, "VisionTransformer"),
            Some("ai:VisionTransformer")
        );
        assert_eq!(s.alias_of(NameKind::Label, "Agent"), None);
        assert_eq!(s.alias_of(NameKind::Label, "VisionTransfomer"), None);
    }

    #[test]
    fn a_misspelled_local_name_repairs_to_its_iri() {
        let s = schema();
        match s.resolve(NameKind::Label, "VisionTransfomer") {
            Resolution::Unknown(n) => assert_eq!(n.repair.as_deref(), Some("ai:VisionTransformer")),
            other => panic!("{other:?}"),
        }
        match s.resolve(NameKind::Label, "owlclass") {
            Resolution::Unknown(n) => assert_eq!(n.repair.as_deref(), Some("OwlClass")),
            other => panic!("{other:?}"),
        }
    }
}
