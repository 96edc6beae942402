//! The namespaces behind `prefix:Local` names: the well-known ones, the repository's
//! prefix map, and the default a prefix gets when nothing declares it.
//!
//! The map lives in the pages, where an ontologist sees and edits it: a line
//! `prefix:: ex: <http://example.org/bakery#>` in any page's block declares `ex:`
//! (`prefix:: : <...>` the empty prefix of `:Rye`). An import writes the prefixes its
//! document declares to the page `Prefixes` of the pages folder, so that a class read
//! as `http://example.org/bakery#Rye` is exported as that again; a prefix nothing
//! declares keeps [`default_namespace`]. A page holding only prefix lines names no
//! entity and is not an error.

use super::expr::looks_like_iri;
use super::model::{Ontology, Problem};
use super::page::Page;

/// The property key of a prefix declaration.
pub const KEY: &str = "prefix";

/// The page an import writes new prefixes to, when no page declares any yet.
pub const PAGE_TITLE: &str = "Prefixes";

/// Well-known prefixes every ontology understands.
pub const STANDARD_PREFIXES: [(&str, &str); 6] = [
    ("owl", "http://www.w3.org/2002/07/owl#"),
    ("rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"),
    ("rdfs", "http://www.w3.org/2000/01/rdf-schema#"),
    ("xsd", "http://www.w3.org/2001/XMLSchema#"),
    ("xml", "http://www.w3.org/XML/1998/namespace"),
    ("skos", "http://www.w3.org/2004/02/skos/core#"),
];

/// The namespace a prefix gets when nothing declares it: `urn:cairn:ai:` for `ai`, a
/// name no one else owns.
pub fn default_namespace(prefix: &str) -> String {
    format!("urn:cairn:{prefix}:")
}

/// Characters no IRI may hold (RFC 3987): whitespace, controls, `<>"{}|\^` and `` ` ``.
pub fn iri_excluded(c: char) -> bool {
    c.is_whitespace() || c.is_control() || "<>\"{}|\\^`".contains(c)
}

/// A declaration's value, `ex: <http://example.org/bakery#>`, as (prefix, namespace).
pub fn parse(value: &str) -> Result<(String, String), String> {
    let shape = "a prefix line reads `prefix:: ex: <http://example.org/ns#>`";
    let Some((name, rest)) = value.trim().split_once(':') else {
        return Err(shape.into());
    };
    let name = name.trim();
    let Some(ns) = rest
        .trim()
        .strip_prefix('<')
        .and_then(|r| r.strip_suffix('>'))
    else {
        return Err(shape.into());
    };
    if !name.is_empty() && !looks_like_iri(&format!("{name}:x")) {
        return Err(format!("`{name}` is not a prefix name; {shape}"));
    }
    if ns.is_empty() || ns.contains(iri_excluded) {
        return Err(format!("<{ns}> is not an IRI; {shape}"));
    }
    if name == "cairn" {
        return Err("the prefix cairn: is Cairn's own and cannot be declared".into());
    }
    if let Some((_, std)) = STANDARD_PREFIXES.iter().find(|(p, _)| *p == name) {
        if *std != ns {
            return Err(format!("{name}: is always <{std}>"));
        }
    }
    Ok((name.to_string(), ns.to_string()))
}

/// The line value that declares `name` as `ns`.
pub fn line(name: &str, ns: &str) -> String {
    format!("{name}: <{ns}>")
}

/// The prefix declarations of a page: `(line, value)` of each `prefix::` line.
pub fn declared(page: &Page) -> impl Iterator<Item = (usize, &str)> {
    page.props
        .iter()
        .filter(|p| p.key == KEY)
        .map(|p| (p.line, p.value.as_str()))
}

/// The prefix map of a set of pages from their declarations `(file, line, value)`:
/// in file then line order, the first declaration of a prefix wins; one that does
/// not read, or gives a declared prefix another namespace, is a problem.
pub fn collect(mut decls: Vec<(String, usize, String)>) -> (Vec<(String, String)>, Vec<Problem>) {
    decls.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    let mut map: Vec<(String, String, String, usize)> = Vec::new();
    let mut problems = Vec::new();
    for (file, line, value) in decls {
        let problem = |message: String| Problem {
            file: file.clone(),
            line,
            column: 0,
            message: format!("{message}; the line is skipped"),
        };
        match parse(&value) {
            Err(m) => problems.push(problem(m)),
            Ok((name, ns)) => match map.iter().find(|m| m.0 == name) {
                Some(m) if m.1 != ns => problems.push(problem(format!(
                    "{name}: is <{}> already ({}:{})",
                    m.1, m.2, m.3
                ))),
                Some(_) => {}
                None => map.push((name, ns, file.clone(), line)),
            },
        }
    }
    (map.into_iter().map(|m| (m.0, m.1)).collect(), problems)
}

/// `prefix:Local` for a full IRI under the longest of `prefixes` (then the standard
/// ones) that leaves a plain local name, the earlier of equals; else `<full>`.
pub fn shorten(full: &str, prefixes: &[(String, String)]) -> String {
    let mut best: Option<(&str, &str)> = None;
    let all = prefixes
        .iter()
        .map(|(p, n)| (p.as_str(), n.as_str()))
        .chain(STANDARD_PREFIXES.iter().copied());
    for (p, ns) in all {
        if let Some(local) = full.strip_prefix(ns) {
            let candidate = format!("{p}:{local}");
            if looks_like_iri(&candidate) && best.is_none_or(|(_, n)| ns.len() > n.len()) {
                best = Some((p, ns));
            }
        }
    }
    match best {
        Some((p, ns)) => format!("{p}:{}", &full[ns.len()..]),
        None => format!("<{full}>"),
    }
}

impl Ontology {
    /// The namespace of a prefix: declared, standard, or [`default_namespace`].
    pub fn namespace(&self, prefix: &str) -> String {
        if let Some((_, ns)) = self.prefixes.iter().find(|(p, _)| p == prefix) {
            return ns.clone();
        }
        if let Some((_, ns)) = STANDARD_PREFIXES.iter().find(|(p, _)| *p == prefix) {
            return ns.to_string();
        }
        default_namespace(prefix)
    }

    /// The full IRI of `prefix:Local` or `<full>`.
    pub fn expand(&self, iri: &str) -> String {
        if let Some(full) = iri.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
            return full.to_string();
        }
        match iri.split_once(':') {
            Some((p, local)) => format!("{}{local}", self.namespace(p)),
            None => iri.to_string(),
        }
    }

    /// Every prefix the ontology means something by: the declared ones, then those
    /// its entities' IRIs use without a declaration, with [`default_namespace`]. A
    /// document read against this map cannot give one of them another namespace.
    pub fn prefix_map(&self) -> Vec<(String, String)> {
        let mut map = self.prefixes.clone();
        for iri in self.entities.keys() {
            let Some((p, _)) = iri.split_once(':').filter(|_| !iri.starts_with('<')) else {
                continue;
            };
            let standard = STANDARD_PREFIXES.iter().any(|(s, _)| *s == p);
            if !standard && !map.iter().any(|(q, _)| q == p) {
                map.push((p.to_string(), default_namespace(p)));
            }
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use crate::load_pages;
    use crate::ofn::read_ofn_in;

    #[test]
    fn pages_declare_the_map_and_the_first_declaration_wins() {
        let map = "- Prefixes\n  - ### OntologyBlock\n    - prefix:: ex: <http://example.org/b#>\n    - prefix:: : <http://example.org/e#>\n";
        let rye = "- Rye\n  - ### OntologyBlock\n    - owl:class:: ex:Rye\n    - prefix:: ex: <http://elsewhere.example/#>\n    - prefix:: rdfs: <http://x.example/>\n    - prefix:: bad\n";
        let l = load_pages([("a/Prefixes.md", map), ("b/Rye.md", rye)]);
        assert_eq!(l.skipped, vec!["a/Prefixes.md".to_string()]);
        assert_eq!(
            l.ontology.prefixes,
            vec![
                ("ex".to_string(), "http://example.org/b#".to_string()),
                (String::new(), "http://example.org/e#".to_string())
            ]
        );
        let lines: Vec<usize> = l.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![4, 5, 6], "{:?}", l.problems);
        assert_eq!(l.ontology.expand("ex:Rye"), "http://example.org/b#Rye");
        assert_eq!(l.ontology.expand(":Crumb"), "http://example.org/e#Crumb");
        assert_eq!(l.ontology.expand("ai:X"), "urn:cairn:ai:X");
        assert!(l.ontology.entity("ex:Rye").unwrap().meta.props.is_empty());
    }

    #[test]
    fn a_document_is_read_with_the_known_prefixes_first() {
        let known = vec![("ex".to_string(), "http://example.org/b#".to_string())];
        let doc = "Prefix(ex:=<http://other.example/#>)\nPrefix(bk:=<http://example.org/b#>)\nOntology(\nDeclaration(Class(ex:Oat))\nDeclaration(Class(bk:Wheat))\n)\n";
        let r = read_ofn_in(doc, "d.ofn", &known);
        let names: Vec<&String> = r.ontology.entities.keys().collect();
        assert_eq!(names, ["<http://other.example/#Oat>", "ex:Wheat"]);
        assert_eq!(r.ontology.prefixes[0], known[0]);
    }
}
