//! OWL 2 functional syntax (OFN): reading a document into an [`Ontology`] and writing
//! one out, for the EL subset Cairn reasons over.
//!
//! Read: `Prefix(...)` declarations, `Ontology(...)` with declarations, the EL axioms
//! of [`Axiom`] (an `EquivalentObjectProperties` becomes sub-property axioms both ways),
//! and annotation assertions for `rdfs:label` / `skos:prefLabel` (the preferred term),
//! `skos:altLabel` (alternative terms), `skos:definition`, `rdfs:comment`, and
//! `cairn:pageProperty` (`"key:: value"`: the other page properties Cairn writes).
//! Everything else (unions, universals, complements, cardinalities, nominals, inverse
//! properties, data properties, keys, other annotations, imports) is reported with its
//! line and skipped, axiom by axiom; the rest is imported. Axiom annotations are
//! metadata about an axiom and are not kept.
//!
//! Written: prefixes, declarations, labels and the other page properties as
//! annotations, then the axioms, in the syntax Protégé, ROBOT, ELK and horned-owl read.
//!
//! Depth: the tree reader counts how deep `Name(` nests and refuses a document past
//! [`MAX_NESTING`] with the line where it went too deep (a few thousand levels would
//! otherwise exhaust the stack); a class expression nested past [`MAX_CLASS_DEPTH`]
//! is reported and its axiom skipped, so that every expression read has a page form
//! the page reader takes back ([`super::expr::MAX_NESTING`]).
//!
//! This module knows text and axioms; no pages, files or reasoning.

use super::axiom::{Axiom, EntityKind, Origin};
use super::entity::keys;
use super::expr::{is_builtin_property, ClassExpr, NOTHING, THING};
use super::model::{Ontology, Problem, STANDARD_PREFIXES};
use super::prefixes::iri_excluded;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The annotation property that carries the page properties OWL has no name for.
pub const PAGE_PROPERTY: &str = "cairn:pageProperty";
/// The namespace of the `cairn:` prefix.
pub const CAIRN_NAMESPACE: &str = "urn:cairn:page:";

/// How deep `Name(...)` may nest in a document: enough for any class expression
/// Cairn writes, its axiom and annotations around it.
pub const MAX_NESTING: usize = 128;

/// How deep a class expression read from OFN may nest (`ObjectSomeValuesFrom` and
/// `ObjectIntersectionOf` inside each other): half of what a page's expression may,
/// since a page writes up to two levels (a parenthesis and a `some`) for each.
pub const MAX_CLASS_DEPTH: usize = super::expr::MAX_NESTING / 2;

/// The result of reading an OFN document.
#[derive(Debug, Clone)]
pub struct OfnImport {
    /// What was read.
    pub ontology: Ontology,
    /// What was skipped, with its line.
    pub problems: Vec<Problem>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open,
    Close,
    Eq,
    /// `<...>` without the brackets.
    Full(String),
    /// A keyword, prefixed name or number.
    Word(String),
    /// A literal's text (unescaped), with its language tag or datatype as written.
    Lit(String),
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    line: usize,
    col: usize,
}

/// An expression tree: `Name(args...)` or a single token.
#[derive(Debug, Clone)]
enum Node {
    Atom(Token),
    List(String, Vec<Node>, usize, usize),
}

impl Node {
    fn line(&self) -> usize {
        match self {
            Node::Atom(t) => t.line,
            Node::List(_, _, l, _) => *l,
        }
    }
    fn col(&self) -> usize {
        match self {
            Node::Atom(t) => t.col,
            Node::List(_, _, _, c) => *c,
        }
    }
}

struct Err1 {
    line: usize,
    col: usize,
    message: String,
}

fn err<T>(line: usize, col: usize, message: impl Into<String>) -> Result<T, Err1> {
    Err(Err1 {
        line,
        col,
        message: message.into(),
    })
}

fn tokenize(text: &str) -> Result<Vec<Token>, Err1> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut line_start) = (0usize, 1usize, 0usize);
    while let Some(&c) = chars.get(i) {
        let col = i - line_start + 1;
        match c {
            '\n' => {
                line += 1;
                i += 1;
                line_start = i;
            }
            c if c.is_whitespace() => i += 1,
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '(' => {
                out.push(Token {
                    tok: Tok::Open,
                    line,
                    col,
                });
                i += 1;
            }
            ')' => {
                out.push(Token {
                    tok: Tok::Close,
                    line,
                    col,
                });
                i += 1;
            }
            '=' => {
                out.push(Token {
                    tok: Tok::Eq,
                    line,
                    col,
                });
                i += 1;
            }
            '<' => {
                let start = i + 1;
                let mut j = start;
                while j < chars.len() && chars[j] != '>' && chars[j] != '\n' {
                    j += 1;
                }
                if chars.get(j) != Some(&'>') {
                    return err(line, col, "an IRI `<...>` is not closed on its line");
                }
                // What RFC 3987 excludes from an IRI: a page could not name it, so the
                // document is refused where it is, before anything is imported.
                if let Some(k) = (start..j).find(|&k| iri_excluded(chars[k])) {
                    let what = match chars[k] {
                        ' ' => "a space".to_string(),
                        c if c.is_whitespace() || c.is_control() => format!("U+{:04X}", c as u32),
                        c => format!("`{c}`"),
                    };
                    return err(
                        line,
                        k - line_start + 1,
                        format!(
                            "the IRI <{}> holds {what}, which an IRI cannot; write it percent-encoded",
                            chars[start..j].iter().collect::<String>()
                        ),
                    );
                }
                out.push(Token {
                    tok: Tok::Full(chars[start..j].iter().collect()),
                    line,
                    col,
                });
                i = j + 1;
            }
            '"' => {
                let mut s = String::new();
                let mut j = i + 1;
                let (l0, c0) = (line, col);
                loop {
                    match chars.get(j) {
                        None => return err(l0, c0, "a string literal is not closed"),
                        Some('\\') => {
                            if let Some(&n) = chars.get(j + 1) {
                                s.push(n);
                            }
                            j += 2;
                        }
                        Some('"') => {
                            j += 1;
                            break;
                        }
                        Some(&ch) => {
                            if ch == '\n' {
                                line += 1;
                                line_start = j + 1;
                            }
                            s.push(ch);
                            j += 1;
                        }
                    }
                }
                // A language tag or a datatype belongs to the literal.
                if chars.get(j) == Some(&'@') {
                    j += 1;
                    while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '-') {
                        j += 1;
                    }
                } else if chars.get(j) == Some(&'^') && chars.get(j + 1) == Some(&'^') {
                    j += 2;
                    if chars.get(j) == Some(&'<') {
                        while j < chars.len() && chars[j] != '>' {
                            j += 1;
                        }
                        j += 1;
                    } else {
                        while j < chars.len()
                            && !chars[j].is_whitespace()
                            && !"()".contains(chars[j])
                        {
                            j += 1;
                        }
                    }
                }
                out.push(Token {
                    tok: Tok::Lit(s),
                    line: l0,
                    col: c0,
                });
                i = j;
            }
            _ => {
                // At least one character, so a stray `>` cannot stall the lexer.
                let mut j = i + 1;
                while j < chars.len() && !chars[j].is_whitespace() && !"()<>\"=#".contains(chars[j])
                {
                    j += 1;
                }
                out.push(Token {
                    tok: Tok::Word(chars[i..j].iter().collect()),
                    line,
                    col,
                });
                i = j;
            }
        }
    }
    Ok(out)
}

/// Reads the tokens into trees: `Word ( ... )` is a list, anything else an atom.
/// Lists nest at most [`MAX_NESTING`] deep.
fn trees(toks: &[Token]) -> Result<Vec<Node>, Err1> {
    fn one(toks: &[Token], i: &mut usize, depth: usize) -> Result<Node, Err1> {
        let Some(t) = toks.get(*i) else {
            return err(0, 0, "unexpected end");
        };
        *i += 1;
        if let Tok::Word(w) = &t.tok {
            if toks.get(*i).map(|n| &n.tok) == Some(&Tok::Open) {
                if depth >= MAX_NESTING {
                    return err(
                        t.line,
                        t.col,
                        format!("`{w}(` nests more than {MAX_NESTING} levels deep; the document is not read"),
                    );
                }
                *i += 1;
                let mut args = Vec::new();
                loop {
                    match toks.get(*i).map(|n| &n.tok) {
                        None => return err(t.line, t.col, format!("`{w}(` is not closed")),
                        Some(Tok::Close) => {
                            *i += 1;
                            return Ok(Node::List(w.clone(), args, t.line, t.col));
                        }
                        Some(_) => args.push(one(toks, i, depth + 1)?),
                    }
                }
            }
        }
        if t.tok == Tok::Close {
            return err(t.line, t.col, "unexpected `)`");
        }
        if t.tok == Tok::Open {
            return err(t.line, t.col, "`(` without a name before it");
        }
        Ok(Node::Atom(t.clone()))
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        out.push(one(toks, &mut i, 0)?);
    }
    Ok(out)
}

/// Reading state: prefixes in force and the ontology being built.
struct Reader<'a> {
    file: &'a str,
    prefixes: Vec<(String, String)>,
    /// The prefixes names are written with: the caller's, then the document's whose
    /// names the caller's do not hold.
    names: Vec<(String, String)>,
    o: Ontology,
    problems: Vec<Problem>,
    /// Annotations met: (subject IRI, property, value, line), applied at the end.
    notes: Vec<(String, String, String, usize)>,
}

/// Constructs outside the subset, named in the report.
fn unsupported(name: &str) -> String {
    let why = match name {
        "ObjectUnionOf" | "ObjectComplementOf" | "ObjectAllValuesFrom" | "DisjointUnion" => "outside OWL 2 EL",
        "ObjectMinCardinality" | "ObjectMaxCardinality" | "ObjectExactCardinality" => "outside OWL 2 EL",
        "ObjectInverseOf" | "InverseObjectProperties" | "SymmetricObjectProperty" | "AsymmetricObjectProperty"
        | "FunctionalObjectProperty" | "InverseFunctionalObjectProperty" | "IrreflexiveObjectProperty"
        | "DisjointObjectProperties" => "outside OWL 2 EL",
        "ObjectOneOf" | "ObjectHasValue" | "ObjectHasSelf" | "SameIndividual" | "DifferentIndividuals"
        | "NegativeObjectPropertyAssertion" => "not supported by Cairn's reasoner (nominals, self restrictions and individual identity)",
        n if n.starts_with("Data") || n.contains("DataProperty") || n == "DatatypeDefinition" => {
            "not supported by Cairn's reasoner (data properties and datatypes)"
        }
        "HasKey" => "not supported by Cairn's reasoner (keys)",
        "Import" => "not followed (imports are not read)",
        _ => "not part of the subset Cairn reads",
    };
    format!("{name} is {why}")
}

impl Reader<'_> {
    fn problem(&mut self, line: usize, col: usize, message: String) {
        self.problems.push(Problem {
            file: self.file.to_string(),
            line,
            column: col,
            message,
        });
    }

    /// The full IRI of a name token.
    fn full(&self, t: &Token) -> Result<String, Err1> {
        match &t.tok {
            Tok::Full(s) => Ok(s.clone()),
            Tok::Word(w) => {
                let Some((p, local)) = w.split_once(':') else {
                    return err(t.line, t.col, format!("`{w}` is not an IRI"));
                };
                if let Some((_, ns)) = self.prefixes.iter().find(|(q, _)| q == p) {
                    return Ok(format!("{ns}{local}"));
                }
                if let Some((_, ns)) = STANDARD_PREFIXES.iter().find(|(q, _)| *q == p) {
                    return Ok(format!("{ns}{local}"));
                }
                if p == "cairn" {
                    return Ok(format!("{CAIRN_NAMESPACE}{local}"));
                }
                err(t.line, t.col, format!("the prefix `{p}:` is not declared"))
            }
            _ => err(t.line, t.col, "expected an IRI"),
        }
    }

    /// An IRI in Cairn's form: `prefix:Local` under the names in force, else `<full>`.
    fn short(&self, full: &str) -> String {
        super::prefixes::shorten(full, &self.names)
    }

    fn name(&self, n: &Node) -> Result<String, Err1> {
        match n {
            Node::Atom(t) => Ok(self.short(&self.full(t)?)),
            Node::List(name, _, l, c) => err(*l, *c, unsupported(name)),
        }
    }

    fn property(&self, n: &Node) -> Result<String, Err1> {
        self.name(n)
    }

    fn individual(&self, n: &Node) -> Result<String, Err1> {
        if let Node::Atom(Token {
            tok: Tok::Word(w),
            line,
            col,
        }) = n
        {
            if w.starts_with("_:") {
                return err(
                    *line,
                    *col,
                    "anonymous individuals are not supported by Cairn's reasoner",
                );
            }
        }
        self.name(n)
    }

    fn class(&self, n: &Node) -> Result<ClassExpr, Err1> {
        self.class_at(n, 1)
    }

    /// A class expression at `depth` (1 at the top of an axiom).
    fn class_at(&self, n: &Node, depth: usize) -> Result<ClassExpr, Err1> {
        if depth > MAX_CLASS_DEPTH {
            return err(
                n.line(),
                n.col(),
                format!(
                    "a class expression nested more than {MAX_CLASS_DEPTH} levels deep is not read"
                ),
            );
        }
        match n {
            Node::Atom(_) => {
                let iri = self.name(n)?;
                Ok(match iri.as_str() {
                    THING => ClassExpr::Thing,
                    NOTHING => ClassExpr::Nothing,
                    _ => ClassExpr::Class(iri),
                })
            }
            Node::List(name, args, l, c) => match name.as_str() {
                "ObjectIntersectionOf" => {
                    if args.len() < 2 {
                        return err(*l, *c, "ObjectIntersectionOf needs two or more classes");
                    }
                    Ok(ClassExpr::And(
                        args.iter()
                            .map(|a| self.class_at(a, depth + 1))
                            .collect::<Result<_, _>>()?,
                    ))
                }
                "ObjectSomeValuesFrom" => match args.as_slice() {
                    [p, f] => Ok(ClassExpr::Some(
                        self.property(p)?,
                        Box::new(self.class_at(f, depth + 1)?),
                    )),
                    _ => err(*l, *c, "ObjectSomeValuesFrom takes a property and a class"),
                },
                other => err(*l, *c, unsupported(other)),
            },
        }
    }

    /// The axiom's arguments without its leading `Annotation(...)`s.
    fn args<'n>(&self, args: &'n [Node]) -> &'n [Node] {
        let k = args
            .iter()
            .take_while(|a| matches!(a, Node::List(n, ..) if n == "Annotation"))
            .count();
        &args[k..]
    }

    fn add(&mut self, a: Axiom, line: usize, col: usize) {
        let origin = Origin::new(self.file, line);
        if let Err(m) = self.o.add(a, origin) {
            self.problem(line, col, format!("{m}; the axiom is skipped"));
        }
    }

    fn declare(&mut self, iri: String, kind: EntityKind, line: usize, col: usize) {
        if let Err(m) = self.o.declare(&iri, kind) {
            self.problem(line, col, m);
        }
    }

    fn axiom(&mut self, n: &Node) -> Result<(), Err1> {
        let Node::List(name, all, line, col) = n else {
            return err(n.line(), n.col(), "expected an axiom");
        };
        let (line, col) = (*line, *col);
        let args = self.args(all);
        let bad = || {
            err(
                line,
                col,
                format!("{name} has the wrong number of arguments"),
            )
        };
        match name.as_str() {
            "Declaration" => {
                let Some(Node::List(kind, inner, l, c)) = args.first() else {
                    return bad();
                };
                let Some(what) = inner.first() else {
                    return bad();
                };
                match kind.as_str() {
                    "Class" => {
                        let iri = self.name(what)?;
                        if iri != THING && iri != NOTHING {
                            self.declare(iri, EntityKind::Class, *l, *c);
                        }
                    }
                    "ObjectProperty" => {
                        let iri = self.name(what)?;
                        if !is_builtin_property(&iri) {
                            self.declare(iri, EntityKind::ObjectProperty, *l, *c);
                        }
                    }
                    "NamedIndividual" => {
                        let iri = self.name(what)?;
                        self.declare(iri, EntityKind::Individual, *l, *c);
                    }
                    "AnnotationProperty" => {}
                    other => {
                        return err(
                            *l,
                            *c,
                            format!("{} ({other} declaration)", unsupported("DataProperty")),
                        )
                    }
                }
            }
            "SubClassOf" => match args {
                [a, b] => {
                    let a = Axiom::SubClassOf(self.class(a)?, self.class(b)?);
                    self.add(a, line, col);
                }
                _ => return bad(),
            },
            "EquivalentClasses" | "DisjointClasses" => {
                if args.len() < 2 {
                    return bad();
                }
                let xs: Vec<ClassExpr> = args
                    .iter()
                    .map(|a| self.class(a))
                    .collect::<Result<_, _>>()?;
                let a = if name == "EquivalentClasses" {
                    Axiom::EquivalentClasses(xs)
                } else {
                    Axiom::DisjointClasses(xs)
                };
                self.add(a, line, col);
            }
            "SubObjectPropertyOf" => match args {
                [Node::List(ch, ps, l, c), sup] if ch == "ObjectPropertyChain" => {
                    if ps.len() < 2 {
                        return err(*l, *c, "ObjectPropertyChain needs two or more properties");
                    }
                    let chain = ps
                        .iter()
                        .map(|p| self.property(p))
                        .collect::<Result<_, _>>()?;
                    let a = Axiom::SubObjectPropertyOf(chain, self.property(sup)?);
                    self.add(a, line, col);
                }
                [sub, sup] => {
                    let a =
                        Axiom::SubObjectPropertyOf(vec![self.property(sub)?], self.property(sup)?);
                    self.add(a, line, col);
                }
                _ => return bad(),
            },
            "EquivalentObjectProperties" => {
                let ps: Vec<String> = args
                    .iter()
                    .map(|p| self.property(p))
                    .collect::<Result<_, _>>()?;
                for w in ps.windows(2) {
                    self.add(
                        Axiom::SubObjectPropertyOf(vec![w[0].clone()], w[1].clone()),
                        line,
                        col,
                    );
                    self.add(
                        Axiom::SubObjectPropertyOf(vec![w[1].clone()], w[0].clone()),
                        line,
                        col,
                    );
                }
            }
            "TransitiveObjectProperty" | "ReflexiveObjectProperty" => match args {
                [p] => {
                    let p = self.property(p)?;
                    let a = if name == "TransitiveObjectProperty" {
                        Axiom::TransitiveObjectProperty(p)
                    } else {
                        Axiom::ReflexiveObjectProperty(p)
                    };
                    self.add(a, line, col);
                }
                _ => return bad(),
            },
            "ObjectPropertyDomain" | "ObjectPropertyRange" => match args {
                [p, c] => {
                    let (p, c) = (self.property(p)?, self.class(c)?);
                    let a = if name == "ObjectPropertyDomain" {
                        Axiom::ObjectPropertyDomain(p, c)
                    } else {
                        Axiom::ObjectPropertyRange(p, c)
                    };
                    self.add(a, line, col);
                }
                _ => return bad(),
            },
            "ClassAssertion" => match args {
                [c, a] => {
                    let a = Axiom::ClassAssertion(self.class(c)?, self.individual(a)?);
                    self.add(a, line, col);
                }
                _ => return bad(),
            },
            "ObjectPropertyAssertion" => match args {
                [p, a, b] => {
                    let ax = Axiom::ObjectPropertyAssertion(
                        self.property(p)?,
                        self.individual(a)?,
                        self.individual(b)?,
                    );
                    self.add(ax, line, col);
                }
                _ => return bad(),
            },
            "AnnotationAssertion" => match args {
                [p, s, Node::Atom(Token {
                    tok: Tok::Lit(v), ..
                })] => {
                    let (p, s) = (self.name(p)?, self.name(s)?);
                    self.notes.push((s, p, v.clone(), line));
                }
                [_, _, _] => return err(line, col, "only literal annotation values are kept"),
                _ => return bad(),
            },
            "SubAnnotationPropertyOf" | "AnnotationPropertyDomain" | "AnnotationPropertyRange" => {}
            other => return err(line, col, unsupported(other)),
        }
        Ok(())
    }

    /// Applies the annotations to the entities they describe.
    fn apply_notes(&mut self) {
        for (s, p, v, line) in std::mem::take(&mut self.notes) {
            // A page holds a value on one line: a line break (LF or CR, as CommonMark
            // splits lines) would end the property and start another.
            if v.contains(['\n', '\r']) {
                self.problem(
                    line,
                    0,
                    format!(
                        "the {p} of {s} spans several lines, which a page property cannot; skipped"
                    ),
                );
                continue;
            }
            let Some(e) = self.o.entities.get_mut(&s) else {
                self.problem(
                    line,
                    0,
                    format!("an annotation of {s}, which nothing declares, is skipped"),
                );
                continue;
            };
            let meta = &mut e.meta;
            let key = match p.as_str() {
                "rdfs:label" | "skos:prefLabel" => keys::PREFERRED_TERM,
                "skos:definition" => keys::DEFINITION,
                "rdfs:comment" => keys::COMMENT,
                "skos:altLabel" => {
                    let mut terms = meta.alt_terms();
                    terms.push(v);
                    meta.set_alt_terms(&terms);
                    continue;
                }
                PAGE_PROPERTY => {
                    match v.split_once("::") {
                        Some((k, val)) if !k.trim().is_empty() => meta
                            .props
                            .push((k.trim().to_string(), val.trim().to_string())),
                        _ => self.problem(line, 0, format!("`{v}` is not `key:: value`; skipped")),
                    }
                    continue;
                }
                other => {
                    self.problem(
                        line,
                        0,
                        format!("the annotation property {other} is not kept"),
                    );
                    continue;
                }
            };
            match meta.get(key) {
                None => meta.props.push((key.to_string(), v)),
                Some(old) if old == v => {}
                Some(old) => {
                    let msg = format!("{s} already has {key} `{old}`; the {p} `{v}` is skipped");
                    self.problem(line, 0, msg);
                }
            }
        }
    }
}

/// Reads an OFN document (`file` names it in origins and problems). What cannot be
/// read is reported with its line; everything else is imported.
pub fn read_ofn(text: &str, file: &str) -> OfnImport {
    read_ofn_in(text, file, &[])
}

/// [`read_ofn`] for an ontology whose prefix map is `known`: names are written with
/// its prefixes, and a document's prefix of the same name but another namespace is
/// not used (its IRIs are written under another prefix, or in full). The ontology
/// read holds `known` and the document's other prefixes.
pub fn read_ofn_in(text: &str, file: &str, known: &[(String, String)]) -> OfnImport {
    let mut r = Reader {
        file,
        prefixes: Vec::new(),
        names: known.to_vec(),
        o: Ontology::new(),
        problems: Vec::new(),
        notes: Vec::new(),
    };
    let nodes = match tokenize(text).and_then(|t| trees(&t)) {
        Ok(n) => n,
        Err(e) => {
            r.problem(e.line, e.col, e.message);
            return OfnImport {
                ontology: r.o,
                problems: r.problems,
            };
        }
    };
    for n in &nodes {
        match n {
            Node::List(name, args, l, c) if name == "Prefix" => match args.as_slice() {
                [Node::Atom(Token {
                    tok: Tok::Word(p), ..
                }), Node::Atom(Token { tok: Tok::Eq, .. }), Node::Atom(Token {
                    tok: Tok::Full(ns), ..
                })] if p.ends_with(':') => {
                    let p = p.trim_end_matches(':').to_string();
                    r.prefixes.retain(|(q, _)| *q != p);
                    r.prefixes.push((p.clone(), ns.clone()));
                    if !known.iter().any(|(q, _)| *q == p) {
                        r.names.retain(|(q, _)| *q != p);
                        r.names.push((p, ns.clone()));
                    }
                }
                _ => r.problem(*l, *c, "a Prefix reads `Prefix(name:=<namespace>)`".into()),
            },
            Node::List(name, args, ..) if name == "Ontology" => {
                let mut rest = args.as_slice();
                if let Some(Node::Atom(Token {
                    tok: Tok::Full(iri),
                    ..
                })) = rest.first()
                {
                    r.o.iri = Some(iri.clone());
                    rest = &rest[1..];
                    // A version IRI may follow.
                    if let Some(Node::Atom(Token {
                        tok: Tok::Full(_), ..
                    })) = rest.first()
                    {
                        rest = &rest[1..];
                    }
                }
                for a in rest {
                    match a {
                        Node::List(n, ..) if n == "Annotation" => {}
                        _ => {
                            if let Err(e) = r.axiom(a) {
                                let msg = format!("{}; the axiom is skipped", e.message);
                                r.problem(e.line, e.col, msg);
                            }
                        }
                    }
                }
            }
            other => r.problem(
                other.line(),
                other.col(),
                "expected Prefix(...) or Ontology(...)".into(),
            ),
        }
    }
    r.apply_notes();
    r.o.prefixes = r.names.clone();
    OfnImport {
        ontology: r.o,
        problems: r.problems,
    }
}

/// True when `local` can follow `prefix:` in OFN (a plain local name).
fn plain_local(local: &str) -> bool {
    !local.is_empty()
        && !local.ends_with('.')
        && !local.starts_with(['.', '-'])
        && local
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == '.')
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Writes an ontology as an OFN document.
pub fn write_ofn(o: &Ontology) -> String {
    // Prefixes written: those the names use. A cell, because the namer is used
    // throughout while the annotation properties add theirs.
    let used: std::cell::RefCell<BTreeSet<String>> = std::cell::RefCell::new(BTreeSet::new());
    let mut name = |iri: &str| -> String {
        if iri.starts_with('<') {
            return iri.to_string();
        }
        match iri.split_once(':') {
            Some((p, local)) if plain_local(local) => {
                used.borrow_mut().insert(p.to_string());
                iri.to_string()
            }
            _ => format!("<{}>", o.expand(iri)),
        }
    };
    let mut body = String::new();
    let kinds = [
        (EntityKind::Class, "Class"),
        (EntityKind::ObjectProperty, "ObjectProperty"),
        (EntityKind::Individual, "NamedIndividual"),
    ];
    for (kind, word) in kinds {
        for iri in o.iris(kind) {
            let _ = writeln!(body, "Declaration({word}({}))", name(iri));
        }
    }
    let mut notes = String::new();
    let mut props: BTreeSet<&str> = BTreeSet::new();
    for (iri, e) in &o.entities {
        for (k, v) in &e.meta.props {
            let (p, vals): (&str, Vec<String>) = match k.as_str() {
                keys::PREFERRED_TERM => ("rdfs:label", vec![v.clone()]),
                keys::DEFINITION => ("skos:definition", vec![v.clone()]),
                keys::COMMENT => ("rdfs:comment", vec![v.clone()]),
                keys::ALT_TERMS => ("skos:altLabel", super::entity::split_terms(v)),
                _ => (PAGE_PROPERTY, vec![format!("{k}:: {v}")]),
            };
            props.insert(p);
            for v in vals {
                let _ = writeln!(
                    notes,
                    "AnnotationAssertion({p} {} \"{}\")",
                    name(iri),
                    escape(&v)
                );
            }
        }
    }
    for p in &props {
        if !p.starts_with("rdfs:") {
            let _ = writeln!(body, "Declaration(AnnotationProperty({p}))");
        }
        if let Some((pre, _)) = p.split_once(':') {
            used.borrow_mut().insert(pre.to_string());
        }
    }
    body.push_str(&notes);
    for s in &o.axioms {
        let _ = writeln!(body, "{}", axiom_text(&s.axiom, &mut name));
    }
    // The standard prefixes are always declared, so `owl:Thing` and the like need no
    // bookkeeping and strict readers find every prefix declared.
    let mut used = used.into_inner();
    used.extend(["owl", "rdf", "rdfs", "xsd"].map(String::from));
    let mut out = String::new();
    for p in used.iter() {
        let ns = if p == "cairn" {
            CAIRN_NAMESPACE.to_string()
        } else {
            o.namespace(p)
        };
        let _ = writeln!(out, "Prefix({p}:=<{ns}>)");
    }
    out.push('\n');
    match &o.iri {
        Some(iri) => {
            let _ = writeln!(out, "Ontology(<{iri}>");
        }
        None => out.push_str("Ontology(\n"),
    }
    out.push_str(&body);
    out.push_str(")\n");
    out
}

/// One axiom in OWL functional syntax, its names as Cairn writes IRIs
/// (`ai:VisionTransformer`, `<http://...>`): how a sync stores the axioms of a page
/// and how an explanation cites them.
pub fn write_axiom(a: &Axiom) -> String {
    axiom_text(a, &mut |iri: &str| iri.to_string())
}

fn class_text(x: &ClassExpr, name: &mut impl FnMut(&str) -> String) -> String {
    match x {
        ClassExpr::Thing => "owl:Thing".into(),
        ClassExpr::Nothing => "owl:Nothing".into(),
        ClassExpr::Class(c) => name(c),
        ClassExpr::And(xs) => {
            let parts: Vec<String> = xs.iter().map(|x| class_text(x, name)).collect();
            match parts.len() {
                0 => "owl:Thing".into(),
                1 => parts.into_iter().next().unwrap_or_default(),
                _ => format!("ObjectIntersectionOf({})", parts.join(" ")),
            }
        }
        ClassExpr::Some(p, f) => {
            format!("ObjectSomeValuesFrom({} {})", name(p), class_text(f, name))
        }
    }
}

fn axiom_text(a: &Axiom, name: &mut impl FnMut(&str) -> String) -> String {
    let list = |xs: &[ClassExpr], name: &mut dyn FnMut(&str) -> String| -> String {
        let mut f = |s: &str| name(s);
        xs.iter()
            .map(|x| class_text(x, &mut f))
            .collect::<Vec<_>>()
            .join(" ")
    };
    match a {
        Axiom::SubClassOf(l, r) => format!(
            "SubClassOf({} {})",
            class_text(l, name),
            class_text(r, name)
        ),
        Axiom::EquivalentClasses(xs) => format!("EquivalentClasses({})", list(xs, name)),
        Axiom::DisjointClasses(xs) => format!("DisjointClasses({})", list(xs, name)),
        Axiom::SubObjectPropertyOf(ch, s) if ch.len() == 1 => {
            format!("SubObjectPropertyOf({} {})", name(&ch[0]), name(s))
        }
        Axiom::SubObjectPropertyOf(ch, s) => {
            let ps: Vec<String> = ch.iter().map(|p| name(p)).collect();
            format!(
                "SubObjectPropertyOf(ObjectPropertyChain({}) {})",
                ps.join(" "),
                name(s)
            )
        }
        Axiom::TransitiveObjectProperty(p) => format!("TransitiveObjectProperty({})", name(p)),
        Axiom::ReflexiveObjectProperty(p) => format!("ReflexiveObjectProperty({})", name(p)),
        Axiom::ObjectPropertyDomain(p, c) => {
            let p = name(p);
            format!("ObjectPropertyDomain({p} {})", class_text(c, name))
        }
        Axiom::ObjectPropertyRange(p, c) => {
            let p = name(p);
            format!("ObjectPropertyRange({p} {})", class_text(c, name))
        }
        Axiom::ClassAssertion(c, i) => {
            let c = class_text(c, name);
            format!("ClassAssertion({c} {})", name(i))
        }
        Axiom::ObjectPropertyAssertion(p, a, b) => {
            format!(
                "ObjectPropertyAssertion({} {} {})",
                name(p),
                name(a),
                name(b)
            )
        }
    }
}

#[cfg(test)]
#[path = "ofn_tests.rs"]
mod tests;
