//! Class expressions of the EL profile (named classes, `owl:Thing`, `owl:Nothing`,
//! intersections and existential restrictions) and their Manchester-style text form as
//! written in a page (`ai:A and (core:hasPart some [[Attention Mechanism]])`).
//!
//! This module knows no pages, files or axioms: it parses and writes one expression,
//! with names left as written (an IRI or a wiki link) until the caller resolves them.
//!
//! The parser recurses once per parenthesis and per `some`, so it counts them:
//! an expression nesting more than [`MAX_NESTING`] of them is refused at the column
//! where it went too deep, long before the stack could run out (a page is text
//! anyone with a pull request can commit). Everything downstream that walks a class
//! expression (names, the reasoner's normal forms, the writers) recurses no deeper.

use std::fmt;

/// The IRI of `owl:Thing`, as written in pages and OFN.
pub const THING: &str = "owl:Thing";
/// The IRI of `owl:Nothing`.
pub const NOTHING: &str = "owl:Nothing";
/// The universal object property, relating every pair of things.
pub const TOP_PROPERTY: &str = "owl:topObjectProperty";
/// The empty object property, relating nothing.
pub const BOTTOM_PROPERTY: &str = "owl:bottomObjectProperty";

/// True for the two built-in object properties: they need no page or declaration.
pub fn is_builtin_property(iri: &str) -> bool {
    iri == TOP_PROPERTY || iri == BOTTOM_PROPERTY
}

/// The most parentheses and `some` restrictions an expression in a page may nest.
/// [`write_expr`] writes at most two per level of a class expression, so any
/// expression of half this depth (what the OFN reader accepts) reads back.
pub const MAX_NESTING: usize = 64;

/// A class expression over names of type `N` (IRIs once resolved, [`Name`]s as read
/// from a page).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ClassExpr<N = String> {
    /// `owl:Thing`, the class of everything.
    Thing,
    /// `owl:Nothing`, the empty class.
    Nothing,
    /// A named class.
    Class(N),
    /// `A and B and ...` (ObjectIntersectionOf).
    And(Vec<ClassExpr<N>>),
    /// `p some C` (ObjectSomeValuesFrom): the things with a `p` to some `C`.
    Some(N, Box<ClassExpr<N>>),
}

impl<N> ClassExpr<N> {
    /// A named class.
    pub fn class(n: impl Into<N>) -> Self {
        ClassExpr::Class(n.into())
    }

    /// `p some filler`.
    pub fn some(p: impl Into<N>, filler: ClassExpr<N>) -> Self {
        ClassExpr::Some(p.into(), Box::new(filler))
    }

    /// The name when this is a named class.
    pub fn as_class(&self) -> Option<&N> {
        match self {
            ClassExpr::Class(n) => Some(n),
            _ => None,
        }
    }

    /// True for a named class, `owl:Thing` and `owl:Nothing`.
    pub fn is_atomic(&self) -> bool {
        matches!(
            self,
            ClassExpr::Class(_) | ClassExpr::Thing | ClassExpr::Nothing
        )
    }

    /// The same expression with every name (class or property) mapped by `f`; the
    /// first error stops the mapping.
    pub fn try_map<M, E>(
        &self,
        f: &mut impl FnMut(&N, NameRole) -> Result<M, E>,
    ) -> Result<ClassExpr<M>, E> {
        Ok(match self {
            ClassExpr::Thing => ClassExpr::Thing,
            ClassExpr::Nothing => ClassExpr::Nothing,
            ClassExpr::Class(n) => ClassExpr::Class(f(n, NameRole::Class)?),
            ClassExpr::And(xs) => {
                ClassExpr::And(xs.iter().map(|x| x.try_map(f)).collect::<Result<_, _>>()?)
            }
            ClassExpr::Some(p, x) => {
                ClassExpr::Some(f(p, NameRole::Property)?, Box::new(x.try_map(f)?))
            }
        })
    }

    /// Calls `f` on every name in the expression, in reading order.
    pub fn for_each_name(&self, f: &mut impl FnMut(&N, NameRole)) {
        match self {
            ClassExpr::Thing | ClassExpr::Nothing => {}
            ClassExpr::Class(n) => f(n, NameRole::Class),
            ClassExpr::And(xs) => xs.iter().for_each(|x| x.for_each_name(f)),
            ClassExpr::Some(p, x) => {
                f(p, NameRole::Property);
                x.for_each_name(f);
            }
        }
    }
}

/// Where a name stands in an expression: as a class or as an object property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRole {
    /// In class position.
    Class,
    /// As the property of a `some` restriction.
    Property,
}

/// A name as written in a page, before resolution against the set of pages.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Name {
    /// An IRI written directly: `ai:VisionTransformer` or `<http://...>`.
    Iri(String),
    /// A wiki link `[[...]]`, holding the text between the brackets: a page name (the
    /// preferred term) or an IRI.
    Link(String),
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Name::Iri(s) => f.write_str(s),
            Name::Link(s) => write!(f, "[[{s}]]"),
        }
    }
}

/// A syntax error in an expression, with the 1-based column (in characters) where it
/// was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    /// 1-based character column within the expression text.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

/// True when `s` has the shape of an IRI as Cairn writes them: `prefix:Local`,
/// `:Local` or `<full IRI>`, without spaces.
pub fn looks_like_iri(s: &str) -> bool {
    if s.len() > 2 && s.starts_with('<') && s.ends_with('>') {
        return !s.contains(char::is_whitespace);
    }
    let Some((prefix, local)) = s.split_once(':') else {
        return false;
    };
    let prefix_ok = prefix
        .chars()
        .enumerate()
        .all(|(i, c)| c.is_alphanumeric() || c == '_' || (i > 0 && (c == '-' || c == '.')));
    let prefix_ok = prefix_ok && !prefix.starts_with(|c: char| c.is_ascii_digit());
    prefix_ok
        && !local.is_empty()
        && !local.contains(|c: char| c.is_whitespace() || "()[],<>\"{}".contains(c))
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Open,
    Close,
    Comma,
    And,
    Some,
    Name(Name),
}

/// True when the character at `j` continues a word (an IRI or keyword): not a space,
/// a parenthesis, a comma, or the start of a wiki link.
fn word_char(chars: &[char], j: usize) -> bool {
    match chars.get(j) {
        None => false,
        Some(c) if c.is_whitespace() || matches!(c, '(' | ')' | ',') => false,
        Some('[') => chars.get(j + 1) != Some(&'['),
        Some(_) => true,
    }
}

/// Splits an expression into tokens with their 1-based columns.
fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>, ExprError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let col = i + 1;
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' {
            out.push((Tok::Open, col));
            i += 1;
        } else if c == ')' {
            out.push((Tok::Close, col));
            i += 1;
        } else if c == ',' {
            out.push((Tok::Comma, col));
            i += 1;
        } else if c == '[' && chars.get(i + 1) == Some(&'[') {
            let start = i + 2;
            let mut j = start;
            while j + 1 < chars.len() && !(chars[j] == ']' && chars[j + 1] == ']') {
                j += 1;
            }
            if j + 1 >= chars.len() {
                return Err(ExprError {
                    column: col,
                    message: "unclosed [[wiki link]]".into(),
                });
            }
            let inner: String = chars[start..j].iter().collect();
            let inner = inner.trim().to_string();
            if inner.is_empty() {
                return Err(ExprError {
                    column: col,
                    message: "empty [[wiki link]]".into(),
                });
            }
            out.push((Tok::Name(Name::Link(inner)), col));
            i = j + 2;
        } else if c == '<' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '>' {
                j += 1;
            }
            if j >= chars.len() {
                return Err(ExprError {
                    column: col,
                    message: "unclosed <IRI>".into(),
                });
            }
            let iri: String = chars[i..=j].iter().collect();
            if iri.contains(char::is_whitespace) || iri.len() < 3 {
                return Err(ExprError {
                    column: col,
                    message: format!("malformed IRI {iri}"),
                });
            }
            out.push((Tok::Name(Name::Iri(iri)), col));
            i = j + 1;
        } else {
            let mut j = i;
            while word_char(&chars, j) {
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            let tok = match word.as_str() {
                "and" => Tok::And,
                "some" => Tok::Some,
                w if looks_like_iri(w) => Tok::Name(Name::Iri(w.to_string())),
                "or" | "not" | "only" | "min" | "max" | "exactly" | "value" | "that" | "inverse"
                | "Self" => {
                    return Err(ExprError {
                        column: col,
                        message: format!("`{word}` is outside the EL profile Cairn reasons over"),
                    })
                }
                _ => {
                    return Err(ExprError {
                        column: col,
                        message: format!(
                            "`{word}` is neither `and`, `some`, an IRI like ai:Name nor a [[wiki link]]"
                        ),
                    })
                }
            };
            out.push((tok, col));
            i = j;
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    end_col: usize,
    /// Parentheses and `some` restrictions open at this point of the parse.
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }

    fn col(&self) -> usize {
        self.toks.get(self.pos).map(|t| t.1).unwrap_or(self.end_col)
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, ExprError> {
        Err(ExprError {
            column: self.col(),
            message: message.into(),
        })
    }

    /// Opens one level of nesting (a parenthesis or a `some`), refused past
    /// [`MAX_NESTING`]; [`Parser::close`] ends it.
    fn open(&mut self) -> Result<(), ExprError> {
        if self.depth >= MAX_NESTING {
            return self.err(format!(
                "the expression nests more than {MAX_NESTING} parentheses and `some` restrictions; write it flatter"
            ));
        }
        self.depth += 1;
        Ok(())
    }

    fn close(&mut self) {
        self.depth -= 1;
    }

    /// conj := operand ('and' operand)*
    fn conj(&mut self) -> Result<ClassExpr<Name>, ExprError> {
        let mut xs = vec![self.operand()?];
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            xs.push(self.operand()?);
        }
        Ok(if xs.len() == 1 {
            xs.remove(0)
        } else {
            ClassExpr::And(xs)
        })
    }

    /// operand := name 'some' operand | primary
    fn operand(&mut self) -> Result<ClassExpr<Name>, ExprError> {
        if let (Some(Tok::Name(_)), Some(Tok::Some)) =
            (self.peek(), self.toks.get(self.pos + 1).map(|t| &t.0))
        {
            let Some((Tok::Name(p), _)) = self.toks.get(self.pos).cloned() else {
                return self.err("expected a property");
            };
            self.pos += 2;
            self.open()?;
            let filler = self.operand()?;
            self.close();
            return Ok(ClassExpr::Some(p, Box::new(filler)));
        }
        self.primary()
    }

    /// primary := '(' conj ')' | name
    fn primary(&mut self) -> Result<ClassExpr<Name>, ExprError> {
        match self.peek().cloned() {
            Some(Tok::Open) => {
                self.open()?;
                self.pos += 1;
                let x = self.conj()?;
                self.close();
                if self.peek() != Some(&Tok::Close) {
                    return self.err("expected `)`");
                }
                self.pos += 1;
                Ok(x)
            }
            Some(Tok::Name(n)) => {
                self.pos += 1;
                Ok(match &n {
                    Name::Iri(s) | Name::Link(s) if s == THING => ClassExpr::Thing,
                    Name::Iri(s) | Name::Link(s) if s == NOTHING => ClassExpr::Nothing,
                    _ => ClassExpr::Class(n),
                })
            }
            Some(Tok::Some) => self.err("`some` needs a property before it"),
            Some(Tok::And) => self.err("`and` needs a class expression before it"),
            Some(Tok::Close) => self.err("unexpected `)`"),
            Some(Tok::Comma) => self.err("unexpected `,`"),
            None => self.err("expected a class expression"),
        }
    }
}

/// Parses one class expression in Manchester style.
///
/// Grammar: `expr := operand ('and' operand)*`, `operand := name 'some' operand |
/// '(' expr ')' | name`, where a name is an IRI (`ai:Name`, `<http://...>`) or a wiki
/// link (`[[Preferred Term]]`); `owl:Thing` and `owl:Nothing` are the top and bottom
/// classes. `some` binds tighter than `and`, as in Manchester syntax.
pub fn parse_expr(text: &str) -> Result<ClassExpr<Name>, ExprError> {
    let mut xs = parse_expr_list(text)?;
    if xs.len() != 1 {
        return Err(ExprError {
            column: 1,
            message: "expected one class expression".into(),
        });
    }
    Ok(xs.remove(0))
}

/// Parses a comma-separated list of class expressions (commas inside parentheses or
/// wiki links do not separate). An empty text is an empty list.
pub fn parse_expr_list(text: &str) -> Result<Vec<ClassExpr<Name>>, ExprError> {
    let toks = tokenize(text)?;
    let mut p = Parser {
        toks,
        pos: 0,
        end_col: text.chars().count() + 1,
        depth: 0,
    };
    let mut out = Vec::new();
    if p.peek().is_none() {
        return Ok(out);
    }
    loop {
        out.push(p.conj()?);
        match p.peek() {
            None => return Ok(out),
            Some(Tok::Comma) => p.pos += 1,
            Some(_) => return p.err("expected `and`, `,` or the end of the expression"),
        }
    }
}

/// Parses a property chain `p o q o r` (at least one property; names as in
/// expressions). Used by `property-chain::` on property pages.
pub fn parse_chain(text: &str) -> Result<Vec<Name>, ExprError> {
    let mut out = Vec::new();
    let mut col = 1;
    for (k, part) in split_chain(text).into_iter().enumerate() {
        let toks = tokenize(part.trim()).map_err(|e| ExprError {
            column: col + e.column - 1,
            ..e
        })?;
        match toks.as_slice() {
            [(Tok::Name(n), _)] => out.push(n.clone()),
            _ => {
                return Err(ExprError {
                    column: col,
                    message: format!("chain element {} is not one property name", k + 1),
                })
            }
        }
        col += part.chars().count() + 3;
    }
    if out.is_empty() {
        return Err(ExprError {
            column: 1,
            message: "an empty property chain".into(),
        });
    }
    Ok(out)
}

/// Parses property assertions written `property individual, property individual`
/// (used by `owl:facts::` on individual pages).
pub fn parse_name_pairs(text: &str) -> Result<Vec<(Name, Name)>, ExprError> {
    let toks = tokenize(text)?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        match (toks.get(i), toks.get(i + 1)) {
            (Some((Tok::Name(p), _)), Some((Tok::Name(o), _))) => {
                out.push((p.clone(), o.clone()));
                i += 2;
            }
            (Some((_, col)), _) => {
                return Err(ExprError {
                    column: *col,
                    message: "expected `property individual`".into(),
                })
            }
            (None, _) => break,
        }
        match toks.get(i) {
            None => break,
            Some((Tok::Comma, _)) => i += 1,
            Some((_, col)) => {
                return Err(ExprError {
                    column: *col,
                    message: "expected `,` between assertions".into(),
                })
            }
        }
    }
    Ok(out)
}

/// Splits at ` o ` outside wiki links.
fn split_chain(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"[[") {
            depth += 1;
            i += 2;
        } else if bytes[i..].starts_with(b"]]") {
            depth = depth.saturating_sub(1);
            i += 2;
        } else if depth == 0 && bytes[i..].starts_with(b" o ") {
            parts.push(&text[start..i]);
            i += 3;
            start = i;
        } else {
            i += 1;
        }
    }
    parts.push(&text[start..]);
    parts
}

/// Writes an expression in the syntax [`parse_expr`] reads, naming each name with `name`.
/// `some` restrictions inside an intersection and complex fillers are parenthesised, so
/// the text reads unambiguously to a person too.
pub fn write_expr<N>(x: &ClassExpr<N>, name: &impl Fn(&N) -> String) -> String {
    let mut s = String::new();
    write_into(&mut s, x, name, false);
    s
}

fn write_into<N>(s: &mut String, x: &ClassExpr<N>, name: &impl Fn(&N) -> String, nested: bool) {
    match x {
        ClassExpr::Thing => s.push_str(THING),
        ClassExpr::Nothing => s.push_str(NOTHING),
        ClassExpr::Class(n) => s.push_str(&name(n)),
        ClassExpr::And(xs) => {
            if nested {
                s.push('(');
            }
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    s.push_str(" and ");
                }
                write_into(s, x, name, true);
            }
            if nested {
                s.push(')');
            }
        }
        ClassExpr::Some(p, f) => {
            if nested {
                s.push('(');
            }
            s.push_str(&name(p));
            s.push_str(" some ");
            write_into(s, f, name, true);
            if nested {
                s.push(')');
            }
        }
    }
}

/// Writes a name as it appears in a page.
pub fn write_name(n: &Name) -> String {
    n.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iri(s: &str) -> Name {
        Name::Iri(s.into())
    }
    fn link(s: &str) -> Name {
        Name::Link(s.into())
    }

    #[test]
    fn some_binds_tighter_than_and() {
        let x = parse_expr("ai:A and ai:p some ai:B and [[C c]]").unwrap();
        assert_eq!(
            x,
            ClassExpr::And(vec![
                ClassExpr::Class(iri("ai:A")),
                ClassExpr::some(iri("ai:p"), ClassExpr::Class(iri("ai:B"))),
                ClassExpr::Class(link("C c")),
            ])
        );
    }

    #[test]
    fn nested_fillers_and_top_bottom() {
        let x = parse_expr("[[has part]] some (ai:A and (ai:q some owl:Thing))").unwrap();
        assert_eq!(
            x,
            ClassExpr::some(
                link("has part"),
                ClassExpr::And(vec![
                    ClassExpr::Class(iri("ai:A")),
                    ClassExpr::some(iri("ai:q"), ClassExpr::Thing)
                ])
            )
        );
        assert_eq!(parse_expr("owl:Nothing").unwrap(), ClassExpr::Nothing);
        assert_eq!(
            parse_expr("ai:p some ai:q some ai:B").unwrap(),
            ClassExpr::some(
                iri("ai:p"),
                ClassExpr::some(iri("ai:q"), ClassExpr::Class(iri("ai:B")))
            )
        );
    }

    #[test]
    fn lists_split_at_top_level_commas_only() {
        let xs =
            parse_expr_list("[[A, b]], ai:p some (ai:B and ai:C), <http://x.org/a#D>").unwrap();
        assert_eq!(xs.len(), 3);
        assert_eq!(xs[0], ClassExpr::Class(link("A, b")));
        assert_eq!(xs[2], ClassExpr::Class(iri("<http://x.org/a#D>")));
        assert!(parse_expr_list("  ").unwrap().is_empty());
    }

    #[test]
    fn written_expressions_read_back() {
        let texts = [
            "ai:A and (ai:hasPart some ai:B)",
            "ai:p some (ai:A and ai:B)",
            "ai:p some (ai:q some owl:Thing)",
            "[[Vision Transformer]] and ([[has part]] some [[Patch Embedding]])",
        ];
        for t in texts {
            let x = parse_expr(t).unwrap();
            let w = write_expr(&x, &write_name);
            assert_eq!(w, t);
            assert_eq!(parse_expr(&w).unwrap(), x);
        }
    }

    #[test]
    fn errors_carry_columns() {
        let e = parse_expr("ai:A or ai:B").unwrap_err();
        assert_eq!(e.column, 6);
        assert!(e.message.contains("outside the EL profile"), "{e}");
        let e = parse_expr("ai:A and (ai:B").unwrap_err();
        assert_eq!(e.column, 15);
        let e = parse_expr("ai:A [[B").unwrap_err();
        assert_eq!(e.column, 6);
        let e = parse_expr("Transformer").unwrap_err();
        assert_eq!(e.column, 1);
        let e = parse_expr("ai:A ai:B").unwrap_err();
        assert_eq!(e.column, 6);
        let e = parse_expr("some ai:B").unwrap_err();
        assert_eq!(e.column, 1);
    }

    #[test]
    fn nesting_past_the_limit_is_refused_at_its_column() {
        let deep = |n: usize| format!("{}ai:A{}", "(".repeat(n), ")".repeat(n));
        assert!(parse_expr(&deep(MAX_NESTING)).is_ok());
        let e = parse_expr(&deep(MAX_NESTING + 1)).unwrap_err();
        assert_eq!(e.column, MAX_NESTING + 1, "{e}");
        assert!(e.message.contains("nests more than 64"), "{e}");
        let e = parse_expr(&deep(100_000)).unwrap_err();
        assert_eq!(e.column, MAX_NESTING + 1);
        let chain = |n: usize| format!("{}ai:B", "ai:p some ".repeat(n));
        assert!(parse_expr(&chain(MAX_NESTING)).is_ok());
        assert!(parse_expr(&chain(100_000)).is_err());
        let mixed = "ai:p some (".repeat(50_000);
        assert!(parse_expr_list(&mixed).is_err());
        // The deepest expression the OFN reader keeps (half the nesting) is written
        // within the limit and reads back.
        let mut x = ClassExpr::Class(iri("ai:A"));
        for i in 0..MAX_NESTING / 2 {
            x = if i % 2 == 0 {
                ClassExpr::some(iri("ai:p"), x)
            } else {
                ClassExpr::And(vec![ClassExpr::Class(iri("ai:B")), x])
            };
        }
        let w = write_expr(&x, &write_name);
        assert_eq!(parse_expr(&w).unwrap(), x, "{w}");
    }

    #[test]
    fn chains() {
        assert_eq!(
            parse_chain("[[located in]] o core:partOf").unwrap(),
            vec![link("located in"), iri("core:partOf")]
        );
        assert!(parse_chain("ai:a o ai:b c").is_err());
        assert!(parse_chain("").is_err());
    }

    #[test]
    fn name_pairs() {
        let ps =
            parse_name_pairs("ai:developedBy [[OpenAI]], ai:trainedOn ai:CommonCrawl").unwrap();
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[0], (iri("ai:developedBy"), link("OpenAI")));
        assert_eq!(parse_name_pairs("ai:p").unwrap_err().column, 1);
        assert_eq!(parse_name_pairs("ai:p ai:a ai:q").unwrap_err().column, 11);
    }

    #[test]
    fn iri_shapes() {
        assert!(looks_like_iri("ai:VisionTransformer"));
        assert!(looks_like_iri(":Local"));
        assert!(looks_like_iri("<urn:x:y>"));
        assert!(!looks_like_iri("Vision Transformer"));
        assert!(!looks_like_iri("ai:"));
        assert!(!looks_like_iri("http ://x"));
        assert!(!looks_like_iri("1a:b"));
    }
}
