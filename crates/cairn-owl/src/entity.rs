//! What the properties of an `### OntologyBlock` mean: which entity a page
//! describes (`owl:class::`, `owl:objectProperty::` or `owl:individual::`), its
//! metadata, and the statements it makes about the entity, with names still as
//! written. Resolving names against the other pages is `model`'s work.
//!
//! This module knows the page vocabulary (documented in the module `ontology`), not
//! files, prefixes or the reasoner.

use super::axiom::EntityKind;
use super::expr::{
    parse_chain, parse_expr, parse_expr_list, parse_name_pairs, ClassExpr, ExprError, Name,
};
use super::page::{Page, PageError};

/// Property keys of the block, as written in pages.
pub mod keys {
    /// `ontology:: true` marks a page as part of the ontology.
    pub const ONTOLOGY: &str = "ontology";
    /// The term id, `AI-0851`.
    pub const TERM_ID: &str = "term-id";
    /// The preferred term (the page's name in Cairn's layout).
    pub const PREFERRED_TERM: &str = "preferred-term";
    /// The domain prefix (`ai`, `bc`, `mv`).
    pub const SOURCE_DOMAIN: &str = "source-domain";
    /// `agent-proposed`, `draft`, `approved`, ...
    pub const STATUS: &str = "status";
    /// `true` or `false`.
    pub const PUBLIC_ACCESS: &str = "public-access";
    /// A date, `2026-02-11`.
    pub const LAST_UPDATED: &str = "last-updated";
    /// The definition text.
    pub const DEFINITION: &str = "definition";
    /// A free comment (rdfs:comment in OFN).
    pub const COMMENT: &str = "rdfs:comment";
    /// The IRI of the class a class page describes.
    pub const OWL_CLASS: &str = "owl:class";
    /// The IRI of the object property a property page describes.
    pub const OWL_OBJECT_PROPERTY: &str = "owl:objectProperty";
    /// The IRI of the individual an individual page describes.
    pub const OWL_INDIVIDUAL: &str = "owl:individual";
    /// `PhysicalEntity`, `VirtualEntity`, ...
    pub const PHYSICALITY: &str = "owl:physicality";
    /// `Process`, `Artifact`, `Concept`, ...
    pub const ROLE: &str = "owl:role";
    /// Named superclasses, as wiki links.
    pub const IS_SUBCLASS_OF: &str = "is-subclass-of";
    /// A 0..1 score.
    pub const QUALITY_SCORE: &str = "quality-score";
    /// A 0..1 score.
    pub const AUTHORITY_SCORE: &str = "authority-score";
    /// `draft`, `stable`, ...
    pub const MATURITY: &str = "maturity";
    /// Other names of the term, comma separated.
    pub const ALT_TERMS: &str = "alt-terms";
    /// Complex superclasses (Manchester expressions).
    pub const SUB_CLASS_OF: &str = "owl:subClassOf";
    /// Equivalent class expressions.
    pub const EQUIVALENT_CLASS: &str = "owl:equivalentClass";
    /// Disjoint class expressions.
    pub const DISJOINT_WITH: &str = "owl:disjointWith";
    /// A general axiom, one per line: `X SubClassOf Y`, `X EquivalentTo Y`,
    /// `X DisjointWith Y` between class expressions, or one about a property or an
    /// individual ([`super::AXIOM_KEYWORDS`]).
    pub const AXIOM: &str = "owl:axiom";
    /// Super-properties of a property.
    pub const SUB_PROPERTY_OF: &str = "sub-property-of";
    /// `true` when the property is transitive.
    pub const TRANSITIVE: &str = "transitive";
    /// `true` when the property is reflexive.
    pub const REFLEXIVE: &str = "reflexive";
    /// Domain class expressions.
    pub const DOMAIN: &str = "domain";
    /// Range class expressions.
    pub const RANGE: &str = "range";
    /// Chains `p o q` that imply the property.
    pub const PROPERTY_CHAIN: &str = "property-chain";
    /// Classes an individual belongs to.
    pub const RDF_TYPE: &str = "rdf:type";
    /// Property assertions `property individual, ...`.
    pub const FACTS: &str = "owl:facts";
}

/// The five relationship keys of class pages and the shared object properties they
/// stand for: `has-part:: [[X]]` on the page of `C` means `C SubClassOf core:hasPart
/// some X`.
pub const RELATIONSHIPS: [(&str, &str); 5] = [
    ("has-part", "core:hasPart"),
    ("requires", "core:requires"),
    ("enables", "core:enables"),
    ("bridges-to", "core:bridgesTo"),
    ("relates-to", "core:relatesTo"),
];

/// The relationship key for a shared property IRI, or the IRI for a key.
pub fn relationship_key(iri: &str) -> Option<&'static str> {
    RELATIONSHIPS
        .iter()
        .find(|(_, i)| *i == iri)
        .map(|(k, _)| *k)
}

fn relationship_iri(key: &str) -> Option<&'static str> {
    RELATIONSHIPS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, i)| *i)
}

/// The order keys are written in (the page template order of docs/ontology.md, then the
/// EL extensions);
/// unknown keys rank last and keep their own order.
pub fn key_rank(key: &str) -> usize {
    use keys::*;
    const ORDER: [&str; 36] = [
        ONTOLOGY,
        TERM_ID,
        PREFERRED_TERM,
        SOURCE_DOMAIN,
        STATUS,
        PUBLIC_ACCESS,
        LAST_UPDATED,
        DEFINITION,
        COMMENT,
        OWL_CLASS,
        OWL_OBJECT_PROPERTY,
        OWL_INDIVIDUAL,
        PHYSICALITY,
        ROLE,
        RDF_TYPE,
        IS_SUBCLASS_OF,
        SUB_PROPERTY_OF,
        TRANSITIVE,
        REFLEXIVE,
        DOMAIN,
        RANGE,
        PROPERTY_CHAIN,
        QUALITY_SCORE,
        AUTHORITY_SCORE,
        MATURITY,
        "has-part",
        "requires",
        "enables",
        "bridges-to",
        "relates-to",
        FACTS,
        ALT_TERMS,
        SUB_CLASS_OF,
        EQUIVALENT_CLASS,
        DISJOINT_WITH,
        AXIOM,
    ];
    ORDER.iter().position(|k| *k == key).unwrap_or(usize::MAX)
}

/// The non-logical properties of an entity's block, in page order: the class page's
/// metadata (term id, definition, scores, ...) and any unknown property, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Meta {
    /// `(key, value)` in order.
    pub props: Vec<(String, String)>,
}

impl Meta {
    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.props
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` (the first occurrence in place; a new key is appended).
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        let value = value.into();
        match self.props.iter_mut().find(|(k, _)| k == key) {
            Some(p) => p.1 = value,
            None => self.props.push((key.to_string(), value)),
        }
    }

    /// The preferred term, when given.
    pub fn preferred_term(&self) -> Option<&str> {
        self.get(keys::PREFERRED_TERM).filter(|s| !s.is_empty())
    }

    /// The definition, when given.
    pub fn definition(&self) -> Option<&str> {
        self.get(keys::DEFINITION).filter(|s| !s.is_empty())
    }

    /// The alternative terms (comma separated in the page; wiki-link brackets removed).
    pub fn alt_terms(&self) -> Vec<String> {
        split_terms(self.get(keys::ALT_TERMS).unwrap_or(""))
    }

    /// Sets the alternative terms.
    pub fn set_alt_terms(&mut self, terms: &[String]) {
        self.set(keys::ALT_TERMS, terms.join(", "));
    }

    /// A 0..1 score of the page (`quality-score`), when it reads as a number.
    pub fn quality_score(&self) -> Option<f32> {
        self.get(keys::QUALITY_SCORE)
            .and_then(|s| s.trim().parse().ok())
    }

    /// `authority-score` as a number.
    pub fn authority_score(&self) -> Option<f32> {
        self.get(keys::AUTHORITY_SCORE)
            .and_then(|s| s.trim().parse().ok())
    }
}

/// Splits `a, [[b]], c` into terms, dropping wiki-link brackets.
pub fn split_terms(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '[' && chars.peek() == Some(&'[') {
            chars.next();
            depth += 1;
        } else if c == ']' && chars.peek() == Some(&']') && depth > 0 {
            chars.next();
            depth -= 1;
        } else if c == ',' && depth == 0 {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The kind of a general axiom written with `owl:axiom::`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GciKind {
    /// `X SubClassOf Y`.
    SubClassOf,
    /// `X EquivalentTo Y`.
    EquivalentTo,
    /// `X DisjointWith Y`.
    DisjointWith,
}

impl GciKind {
    /// The keyword in the page.
    pub fn keyword(self) -> &'static str {
        match self {
            GciKind::SubClassOf => "SubClassOf",
            GciKind::EquivalentTo => "EquivalentTo",
            GciKind::DisjointWith => "DisjointWith",
        }
    }
}

/// What one value of a logical property says about the page's entity ("this"), with
/// names unresolved.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `this SubClassOf X` (is-subclass-of, owl:subClassOf).
    SubClassOf(ClassExpr<Name>),
    /// A relationship key: `this SubClassOf p some X` on a class page; on an individual
    /// page a property assertion when X names an individual, else a class assertion.
    Related(String, ClassExpr<Name>),
    /// `EquivalentClasses(this X)`.
    EquivalentTo(ClassExpr<Name>),
    /// `DisjointClasses(this X)`.
    DisjointWith(ClassExpr<Name>),
    /// A general axiom between two expressions.
    General(GciKind, ClassExpr<Name>, ClassExpr<Name>),
    /// `SubObjectPropertyOf(this P)`.
    SubPropertyOf(Name),
    /// `SubObjectPropertyOf(ObjectPropertyChain(p q ...) this)`.
    Chain(Vec<Name>),
    /// `TransitiveObjectProperty(this)`.
    Transitive,
    /// `ReflexiveObjectProperty(this)`.
    Reflexive,
    /// `ObjectPropertyDomain(this X)`.
    Domain(ClassExpr<Name>),
    /// `ObjectPropertyRange(this X)`.
    Range(ClassExpr<Name>),
    /// `ClassAssertion(X this)`.
    Type(ClassExpr<Name>),
    /// `ObjectPropertyAssertion(p this b)`.
    Fact(Name, Name),
    /// A statement about another entity than the page's, of this kind (an
    /// `owl:axiom::` about a property or an individual).
    About(EntityKind, Name, Box<Stmt>),
}

/// A statement with the line (and key) it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    /// 1-based line of the property.
    pub line: usize,
    /// The key it was written under.
    pub key: String,
    /// What it says.
    pub stmt: Stmt,
}

/// A page read for its meaning: the entity it describes, its metadata, and its
/// statements with names unresolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Class, object property or individual.
    pub kind: EntityKind,
    /// The entity's IRI as written.
    pub iri: String,
    /// 1-based line of the IRI property.
    pub line: usize,
    /// The page's top bullet (its title in Cairn's layout).
    pub title: Option<String>,
    /// The metadata.
    pub meta: Meta,
    /// The statements, in page order.
    pub statements: Vec<Statement>,
}

fn allowed(kind: EntityKind, key: &str) -> bool {
    use keys::*;
    let rel = relationship_iri(key).is_some();
    match kind {
        EntityKind::Class => {
            rel || [
                IS_SUBCLASS_OF,
                SUB_CLASS_OF,
                EQUIVALENT_CLASS,
                DISJOINT_WITH,
                AXIOM,
            ]
            .contains(&key)
        }
        EntityKind::ObjectProperty => [
            SUB_PROPERTY_OF,
            PROPERTY_CHAIN,
            TRANSITIVE,
            REFLEXIVE,
            DOMAIN,
            RANGE,
            AXIOM,
        ]
        .contains(&key),
        EntityKind::Individual => rel || [RDF_TYPE, FACTS, AXIOM].contains(&key),
    }
}

fn is_logical(key: &str) -> bool {
    [
        EntityKind::Class,
        EntityKind::ObjectProperty,
        EntityKind::Individual,
    ]
    .iter()
    .any(|k| allowed(*k, key))
}

/// The keywords of `owl:axiom::`: the class axioms between two expressions, then
/// those about a named property (`p SubPropertyOf q`, `p o q SubPropertyOf r`,
/// `p Domain C`, `p Range C`, `p Characteristics Transitive`) or individual
/// (`a Types C`, `a Facts p b`).
pub const AXIOM_KEYWORDS: [&str; 9] = [
    "SubClassOf",
    "EquivalentTo",
    "DisjointWith",
    "SubPropertyOf",
    "Domain",
    "Range",
    "Characteristics",
    "Types",
    "Facts",
];

/// Splits `X SubClassOf Y` at its keyword (outside parentheses and wiki links).
fn split_general(text: &str) -> Option<(&'static str, &str, &str)> {
    let bytes = text.as_bytes();
    let mut depth = 0i32;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"[[") || bytes[i] == b'(' {
            depth += 1;
        } else if bytes[i..].starts_with(b"]]") || bytes[i] == b')' {
            depth -= 1;
        } else if depth == 0 && bytes[i] == b' ' {
            for k in AXIOM_KEYWORDS {
                let kw = format!(" {k} ");
                if bytes[i..].starts_with(kw.as_bytes()) {
                    return Some((k, &text[..i], &text[i + kw.len()..]));
                }
            }
        }
        i += if bytes[i..].starts_with(b"[[") || bytes[i..].starts_with(b"]]") {
            2
        } else {
            1
        };
    }
    None
}

/// The statements one `owl:axiom::` line makes, `rcol` being the 1-based column of
/// its right side on the page (`at` places an error of the left side).
fn general_axiom(
    kw: &str,
    l: &str,
    r: &str,
    at: &dyn Fn(ExprError) -> PageError,
    at_right: &dyn Fn(ExprError) -> PageError,
) -> Result<Vec<Stmt>, PageError> {
    let one_name =
        |text: &str, what: &str, at: &dyn Fn(ExprError) -> PageError| match parse_expr(text)
            .map_err(at)?
        {
            ClassExpr::Class(n) => Ok(n),
            _ => Err(at(ExprError {
                column: 1,
                message: format!("{what} is one name before `{kw}`"),
            })),
        };
    let about = |kind: EntityKind, n: Name, st: Stmt| Stmt::About(kind, n, Box::new(st));
    let p = EntityKind::ObjectProperty;
    Ok(match kw {
        "SubClassOf" | "EquivalentTo" | "DisjointWith" => {
            let k = match kw {
                "SubClassOf" => GciKind::SubClassOf,
                "EquivalentTo" => GciKind::EquivalentTo,
                _ => GciKind::DisjointWith,
            };
            vec![Stmt::General(
                k,
                parse_expr(l).map_err(at)?,
                parse_expr(r).map_err(at_right)?,
            )]
        }
        "SubPropertyOf" => {
            let sup = match parse_expr(r).map_err(at_right)? {
                ClassExpr::Class(n) => n,
                _ => {
                    return Err(at_right(ExprError {
                        column: 1,
                        message: "a super-property is one property name".into(),
                    }))
                }
            };
            let chain = parse_chain(l).map_err(at)?;
            if chain.len() > 1 {
                vec![about(p, sup, Stmt::Chain(chain))]
            } else {
                let sub = one_name(l, "the sub-property", at)?;
                vec![about(p, sub, Stmt::SubPropertyOf(sup))]
            }
        }
        "Domain" | "Range" => {
            let n = one_name(l, "the property", at)?;
            let x = parse_expr(r).map_err(at_right)?;
            vec![about(
                p,
                n,
                if kw == "Domain" {
                    Stmt::Domain(x)
                } else {
                    Stmt::Range(x)
                },
            )]
        }
        "Characteristics" => {
            let n = one_name(l, "the property", at)?;
            let st = match r.trim() {
                "Transitive" => Stmt::Transitive,
                "Reflexive" => Stmt::Reflexive,
                v => {
                    return Err(at_right(ExprError {
                        column: 1,
                        message: format!("`{v}`: expected Transitive or Reflexive"),
                    }))
                }
            };
            vec![about(p, n, st)]
        }
        "Types" => {
            let n = one_name(l, "the individual", at)?;
            vec![about(
                EntityKind::Individual,
                n,
                Stmt::Type(parse_expr(r).map_err(at_right)?),
            )]
        }
        _ => {
            let n = one_name(l, "the individual", at)?;
            let pairs = parse_name_pairs(r).map_err(at_right)?;
            if pairs.is_empty() {
                return Err(at_right(ExprError {
                    column: 1,
                    message: "expected a property and an individual".into(),
                }));
            }
            pairs
                .into_iter()
                .map(|(q, b)| about(EntityKind::Individual, n.clone(), Stmt::Fact(q, b)))
                .collect()
        }
    })
}

/// Reads a page's block for its meaning. Errors name the line (and the column of an
/// expression error).
pub fn read_entry(page: &Page) -> Result<Entry, PageError> {
    use keys::*;
    let mut ident: Option<(EntityKind, String, usize)> = None;
    for p in &page.props {
        let kind = match p.key.as_str() {
            OWL_CLASS => EntityKind::Class,
            OWL_OBJECT_PROPERTY => EntityKind::ObjectProperty,
            OWL_INDIVIDUAL => EntityKind::Individual,
            _ => continue,
        };
        if let Some((_, _, first)) = &ident {
            return Err(err(p.line, 0, format!(
                "`{}::` again: the page already names its entity on line {first}; a page describes one entity",
                p.key
            )));
        }
        if !super::expr::looks_like_iri(&p.value) {
            return Err(err(
                p.line,
                value_column(p),
                format!(
                    "`{}` is not an IRI; write it as prefix:LocalName (e.g. ai:VisionTransformer)",
                    p.value
                ),
            ));
        }
        ident = Some((kind, p.value.clone(), p.line));
    }
    let Some((kind, iri, line)) = ident else {
        return Err(err(
            page.heading_line().max(1),
            0,
            "the block names no entity: add `owl:class::`, `owl:objectProperty::` or `owl:individual::`".into(),
        ));
    };
    let mut meta = Meta::default();
    let mut statements = Vec::new();
    for p in &page.props {
        let key = p.key.as_str();
        if [OWL_CLASS, OWL_OBJECT_PROPERTY, OWL_INDIVIDUAL].contains(&key) {
            continue;
        }
        // `ontology:: true` marks the page; Cairn writes it on every page it generates.
        if key == ONTOLOGY && p.value == "true" {
            continue;
        }
        // A prefix line belongs to the repository's prefix map (`prefixes`), not to
        // the entity.
        if key == super::prefixes::KEY {
            continue;
        }
        if !is_logical(key) {
            meta.props.push((p.key.clone(), p.value.clone()));
            continue;
        }
        if !allowed(kind, key) {
            return Err(err(
                p.line,
                0,
                format!("`{key}::` does not apply to an {kind} page"),
            ));
        }
        let col = value_column(p);
        let at = |e: ExprError| err(p.line, col + e.column - 1, e.message);
        let mut push = |stmt: Stmt| {
            statements.push(Statement {
                line: p.line,
                key: p.key.clone(),
                stmt,
            })
        };
        match key {
            IS_SUBCLASS_OF | SUB_CLASS_OF => parse_expr_list(&p.value)
                .map_err(at)?
                .into_iter()
                .for_each(|x| push(Stmt::SubClassOf(x))),
            EQUIVALENT_CLASS => parse_expr_list(&p.value)
                .map_err(at)?
                .into_iter()
                .for_each(|x| push(Stmt::EquivalentTo(x))),
            DISJOINT_WITH => parse_expr_list(&p.value)
                .map_err(at)?
                .into_iter()
                .for_each(|x| push(Stmt::DisjointWith(x))),
            DOMAIN => parse_expr_list(&p.value)
                .map_err(at)?
                .into_iter()
                .for_each(|x| push(Stmt::Domain(x))),
            RANGE => parse_expr_list(&p.value)
                .map_err(at)?
                .into_iter()
                .for_each(|x| push(Stmt::Range(x))),
            RDF_TYPE => parse_expr_list(&p.value)
                .map_err(at)?
                .into_iter()
                .for_each(|x| push(Stmt::Type(x))),
            SUB_PROPERTY_OF => {
                for x in parse_expr_list(&p.value).map_err(at)? {
                    match x {
                        ClassExpr::Class(n) => push(Stmt::SubPropertyOf(n)),
                        _ => {
                            return Err(err(
                                p.line,
                                col,
                                "a super-property is one property name".into(),
                            ))
                        }
                    }
                }
            }
            PROPERTY_CHAIN => {
                for part in split_terms_keep(&p.value) {
                    let chain = parse_chain(part).map_err(at)?;
                    if chain.len() < 2 {
                        return Err(err(
                            p.line,
                            col,
                            "a chain joins two or more properties with ` o `".into(),
                        ));
                    }
                    push(Stmt::Chain(chain));
                }
            }
            TRANSITIVE | REFLEXIVE => match p.value.trim() {
                "true" => push(if key == TRANSITIVE {
                    Stmt::Transitive
                } else {
                    Stmt::Reflexive
                }),
                "false" | "" => {}
                v => return Err(err(p.line, col, format!("`{v}`: expected true or false"))),
            },
            FACTS => parse_name_pairs(&p.value)
                .map_err(at)?
                .into_iter()
                .for_each(|(a, b)| push(Stmt::Fact(a, b))),
            AXIOM => {
                let Some((k, l, r)) = split_general(&p.value) else {
                    return Err(err(
                        p.line,
                        col,
                        format!(
                            "expected `X keyword Y` with a keyword among {}",
                            AXIOM_KEYWORDS.join(", ")
                        ),
                    ));
                };
                let rcol = col + p.value[..p.value.len() - r.len()].chars().count();
                let at_right = |e: ExprError| err(p.line, rcol + e.column - 1, e.message);
                for st in general_axiom(k, l, r, &at, &at_right)? {
                    push(st);
                }
            }
            rel => {
                let iri = relationship_iri(rel).unwrap_or_default().to_string();
                parse_expr_list(&p.value)
                    .map_err(at)?
                    .into_iter()
                    .for_each(|x| push(Stmt::Related(iri.clone(), x)))
            }
        }
    }
    Ok(Entry {
        kind,
        iri,
        line,
        title: page.title().map(str::to_string),
        meta,
        statements,
    })
}

/// Splits chains at top-level commas (no parentheses in chains).
fn split_terms_keep(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let bytes = s.as_bytes();
    let (mut depth, mut start, mut i) = (0usize, 0usize, 0usize);
    while i < bytes.len() {
        if bytes[i..].starts_with(b"[[") {
            depth += 1;
            i += 2;
            continue;
        }
        if bytes[i..].starts_with(b"]]") {
            depth = depth.saturating_sub(1);
            i += 2;
            continue;
        }
        if bytes[i] == b',' && depth == 0 {
            parts.push(&s[start..i]);
            start = i + 1;
        }
        i += 1;
    }
    parts.push(&s[start..]);
    parts.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// The 1-based column where a property's value starts on its line.
fn value_column(p: &super::page::Prop) -> usize {
    p.indent.chars().count() + 2 + p.key.chars().count() + 3 + 1
}

fn err(line: usize, column: usize, message: String) -> PageError {
    PageError {
        line,
        column,
        message,
        no_block: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> Result<Entry, PageError> {
        read_entry(&Page::parse(text).unwrap())
    }

    #[test]
    fn a_class_page_reads_into_metadata_and_statements() {
        let e = entry(
            "- Vision Transformer\n  - ### OntologyBlock\n    - ontology:: true\n    - term-id:: AI-0851\n    - owl:class:: ai:VisionTransformer\n    - is-subclass-of:: [[Transformer]], [[Image Model]]\n    - has-part:: [[Patch Embedding]]\n    - owl:equivalentClass:: ai:Transformer and (ai:processes some ai:Image)\n    - owl:axiom:: ai:A and ai:B SubClassOf ai:C\n    - custom:: x\n    - alt-terms:: ViT, [[Visual Transformer]]\n",
        )
        .unwrap();
        assert_eq!(e.kind, EntityKind::Class);
        assert_eq!(e.iri, "ai:VisionTransformer");
        assert_eq!(e.line, 5);
        assert_eq!(e.meta.get("term-id"), Some("AI-0851"));
        assert_eq!(e.meta.get("custom"), Some("x"));
        assert_eq!(e.meta.alt_terms(), vec!["ViT", "Visual Transformer"]);
        assert_eq!(e.statements.len(), 5);
        assert_eq!(
            e.statements[2].stmt,
            Stmt::Related(
                "core:hasPart".into(),
                ClassExpr::Class(Name::Link("Patch Embedding".into()))
            )
        );
        assert!(matches!(
            e.statements[4].stmt,
            Stmt::General(GciKind::SubClassOf, ClassExpr::And(_), ClassExpr::Class(_))
        ));
        assert_eq!(e.statements[4].line, 9);
    }

    #[test]
    fn property_pages() {
        let e = entry("- part of\n  - ### OntologyBlock\n    - owl:objectProperty:: core:partOf\n    - transitive:: true\n    - reflexive:: false\n    - property-chain:: [[located in]] o core:partOf, ai:a o ai:b o ai:c\n    - domain:: owl:Thing\n").unwrap();
        assert_eq!(e.kind, EntityKind::ObjectProperty);
        let s: Vec<&Stmt> = e.statements.iter().map(|s| &s.stmt).collect();
        assert_eq!(s.len(), 4);
        assert_eq!(*s[0], Stmt::Transitive);
        assert!(matches!(s[2], Stmt::Chain(c) if c.len() == 3));
    }

    #[test]
    fn a_general_axiom_may_be_about_a_property_or_an_individual() {
        let e = entry("- A\n  - ### OntologyBlock\n    - owl:class:: ai:A\n    - owl:axiom:: ai:p SubPropertyOf ai:q\n    - owl:axiom:: ai:p o ai:q SubPropertyOf ai:r\n    - owl:axiom:: ai:p Domain ai:A and (ai:q some ai:B)\n    - owl:axiom:: ai:p Characteristics Transitive\n    - owl:axiom:: ai:x Types ai:A\n    - owl:axiom:: ai:x Facts ai:p ai:y, ai:q ai:z\n").unwrap();
        let s: Vec<&Stmt> = e.statements.iter().map(|s| &s.stmt).collect();
        assert_eq!(s.len(), 7);
        let p = |n: &str| Name::Iri(n.into());
        let about = |k, n: &str, st| Stmt::About(k, p(n), Box::new(st));
        use EntityKind::{Individual, ObjectProperty};
        assert_eq!(
            *s[0],
            about(ObjectProperty, "ai:p", Stmt::SubPropertyOf(p("ai:q")))
        );
        assert_eq!(
            *s[1],
            about(
                ObjectProperty,
                "ai:r",
                Stmt::Chain(vec![p("ai:p"), p("ai:q")])
            )
        );
        assert!(
            matches!(s[2], Stmt::About(ObjectProperty, _, d) if matches!(**d, Stmt::Domain(ClassExpr::And(_))))
        );
        assert_eq!(*s[3], about(ObjectProperty, "ai:p", Stmt::Transitive));
        assert_eq!(
            *s[4],
            about(Individual, "ai:x", Stmt::Type(ClassExpr::Class(p("ai:A"))))
        );
        assert_eq!(
            *s[6],
            about(Individual, "ai:x", Stmt::Fact(p("ai:q"), p("ai:z")))
        );
        // A bad right side is placed at its column.
        let e = entry("- A\n  - ### OntologyBlock\n    - owl:class:: ai:A\n    - owl:axiom:: ai:p Characteristics Sticky\n").unwrap_err();
        assert_eq!((e.line, e.column), (4, 40));
        let e = entry("- A\n  - ### OntologyBlock\n    - owl:class:: ai:A\n    - owl:axiom:: ai:p and ai:q Domain ai:A\n").unwrap_err();
        assert_eq!(e.line, 4);
    }

    #[test]
    fn errors_point_at_the_line_and_column() {
        let e = entry("- A\n  - ### OntologyBlock\n    - owl:class:: ai:A\n    - is-subclass-of:: [[B]] or [[C]]\n").unwrap_err();
        assert_eq!((e.line, e.column), (4, 30));
        let e = entry("- A\n  - ### OntologyBlock\n    - owl:class:: Vision Transformer\n")
            .unwrap_err();
        assert_eq!((e.line, e.column), (3, 19));
        let e = entry("- A\n  - ### OntologyBlock\n    - definition:: x\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e =
            entry("- A\n  - ### OntologyBlock\n    - owl:class:: ai:A\n    - transitive:: true\n")
                .unwrap_err();
        assert_eq!(e.line, 4);
        let e = entry(
            "- A\n  - ### OntologyBlock\n    - owl:class:: ai:A\n    - owl:individual:: ai:B\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 4);
        let e = entry(
            "- A\n  - ### OntologyBlock\n    - owl:objectProperty:: ai:p\n    - transitive:: yes\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.column), (4, 20));
    }

    #[test]
    fn ranks_follow_the_template() {
        assert!(key_rank("term-id") < key_rank("owl:class"));
        assert!(key_rank("is-subclass-of") < key_rank("has-part"));
        assert_eq!(key_rank("whatever"), usize::MAX);
    }
}
