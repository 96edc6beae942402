//! Raw input values, before validation: the neutral tree (`Raw`) a caller fills from
//! its arguments, and a small JSON text reader with line and column in its errors
//! for the reflection's answer, the one text an agent writes that the memory parses
//! (a JSON array, bare or in a fenced block, each rule's errors placed in it).
//! The store keeps atoms in a form of its own, not through this reader. Knows
//! nothing of atoms.

use std::fmt;

/// A value as it arrived, not yet checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    /// Nothing (same as absent).
    Null,
    /// A yes/no.
    Bool(bool),
    /// A number.
    Number(f64),
    /// A text.
    Text(String),
    /// A list.
    List(Vec<Raw>),
    /// Named values, in the order given.
    Map(Vec<(String, Raw)>),
}

impl Raw {
    /// The name of the value's shape, for errors (`text`, `number`, ...).
    pub fn shape(&self) -> &'static str {
        match self {
            Raw::Null => "null",
            Raw::Bool(_) => "a boolean",
            Raw::Number(_) => "a number",
            Raw::Text(_) => "a text",
            Raw::List(_) => "a list",
            Raw::Map(_) => "an object",
        }
    }

    /// Text from a str.
    pub fn text(s: &str) -> Raw {
        Raw::Text(s.to_string())
    }

    /// A list of texts.
    pub fn texts<S: AsRef<str>>(items: &[S]) -> Raw {
        Raw::List(
            items
                .iter()
                .map(|s| Raw::Text(s.as_ref().to_string()))
                .collect(),
        )
    }
}

/// A place in a text: 1-based line and column (in characters), and byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// Line, from 1.
    pub line: u32,
    /// Column in characters, from 1.
    pub column: u32,
    /// Byte offset, from 0.
    pub offset: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {} column {}", self.line, self.column)
    }
}

/// A JSON value with the place it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Json {
    /// The value.
    pub value: JsonValue,
    /// Where it starts.
    pub at: Pos,
}

/// A JSON value whose children carry their places.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(f64),
    /// A string.
    Text(String),
    /// An array.
    List(Vec<Json>),
    /// An object, members in order.
    Map(Vec<(String, Json)>),
}

impl Json {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match &self.value {
            JsonValue::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The same value without places.
    pub fn to_raw(&self) -> Raw {
        match &self.value {
            JsonValue::Null => Raw::Null,
            JsonValue::Bool(b) => Raw::Bool(*b),
            JsonValue::Number(n) => Raw::Number(*n),
            JsonValue::Text(s) => Raw::Text(s.clone()),
            JsonValue::List(l) => Raw::List(l.iter().map(Json::to_raw).collect()),
            JsonValue::Map(m) => Raw::Map(m.iter().map(|(k, v)| (k.clone(), v.to_raw())).collect()),
        }
    }
}

/// A text that is not JSON, with the place where reading stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Where.
    pub at: Pos,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Nesting deeper than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 64;

struct Reader<'a> {
    src: &'a str,
    pos: Pos,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<char> {
        self.src.get(self.pos.offset..)?.chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos.offset += c.len_utf8();
        if c == '\n' {
            self.pos.line += 1;
            self.pos.column = 1;
        } else {
            self.pos.column += 1;
        }
        Some(c)
    }

    fn err<T>(&self, at: Pos, message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            at,
            message: message.into(),
        })
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.bump();
        }
    }

    fn expect_word(&mut self, word: &str, value: JsonValue) -> Result<JsonValue, ParseError> {
        let at = self.pos;
        for w in word.chars() {
            if self.bump() != Some(w) {
                return self.err(at, format!("expected `{word}`"));
            }
        }
        Ok(value)
    }

    fn value(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.skip_ws();
        let at = self.pos;
        if depth > MAX_DEPTH {
            return self.err(at, format!("nested deeper than {MAX_DEPTH} levels"));
        }
        let value = match self.peek() {
            None => return self.err(at, "the text ends where a value was expected"),
            Some('{') => self.object(depth)?,
            Some('[') => self.array(depth)?,
            Some('"') => JsonValue::Text(self.string()?),
            Some('t') => self.expect_word("true", JsonValue::Bool(true))?,
            Some('f') => self.expect_word("false", JsonValue::Bool(false))?,
            Some('n') => self.expect_word("null", JsonValue::Null)?,
            Some(c) if c == '-' || c.is_ascii_digit() => JsonValue::Number(self.number()?),
            Some(c) => return self.err(at, format!("unexpected `{c}` where a value was expected")),
        };
        Ok(Json { value, at })
    }

    fn object(&mut self, depth: usize) -> Result<JsonValue, ParseError> {
        self.bump();
        let mut members: Vec<(String, Json)> = Vec::new();
        self.skip_ws();
        if self.peek() == Some('}') {
            self.bump();
            return Ok(JsonValue::Map(members));
        }
        loop {
            self.skip_ws();
            let at = self.pos;
            if self.peek() != Some('"') {
                return self.err(at, "expected a member name in double quotes");
            }
            let key = self.string()?;
            if members.iter().any(|(k, _)| *k == key) {
                return self.err(at, format!("member `{key}` appears twice"));
            }
            self.skip_ws();
            let at = self.pos;
            if self.bump() != Some(':') {
                return self.err(at, "expected `:` after the member name");
            }
            let v = self.value(depth + 1)?;
            members.push((key, v));
            self.skip_ws();
            let at = self.pos;
            match self.bump() {
                Some(',') => continue,
                Some('}') => return Ok(JsonValue::Map(members)),
                _ => return self.err(at, "expected `,` or `}` in the object"),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<JsonValue, ParseError> {
        self.bump();
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(']') {
            self.bump();
            return Ok(JsonValue::List(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            let at = self.pos;
            match self.bump() {
                Some(',') => continue,
                Some(']') => return Ok(JsonValue::List(items)),
                _ => return self.err(at, "expected `,` or `]` in the array"),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let at = self.pos;
        let mut v = 0;
        for _ in 0..4 {
            let d = self.bump().and_then(|c| c.to_digit(16));
            match d {
                Some(d) => v = v * 16 + d,
                None => return self.err(at, "expected four hex digits after \\u"),
            }
        }
        Ok(v)
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let start = self.pos;
        self.bump();
        let mut out = String::new();
        loop {
            let at = self.pos;
            match self.bump() {
                None => return self.err(start, "the string is not closed"),
                Some('"') => return Ok(out),
                Some('\\') => {
                    let c = match self.bump() {
                        Some('"') => '"',
                        Some('\\') => '\\',
                        Some('/') => '/',
                        Some('b') => '\u{8}',
                        Some('f') => '\u{c}',
                        Some('n') => '\n',
                        Some('r') => '\r',
                        Some('t') => '\t',
                        Some('u') => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                if self.bump() != Some('\\') || self.bump() != Some('u') {
                                    return self
                                        .err(at, "a high surrogate must be followed by a low one");
                                }
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return self
                                        .err(at, "a high surrogate must be followed by a low one");
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            match char::from_u32(code) {
                                Some(c) => c,
                                None => return self.err(at, "the escape is not a character"),
                            }
                        }
                        _ => return self.err(at, "unknown escape"),
                    };
                    out.push(c);
                }
                Some(c) if (c as u32) < 0x20 => {
                    return self.err(at, "control character in a string: escape it")
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn number(&mut self) -> Result<f64, ParseError> {
        let at = self.pos;
        let start = self.pos.offset;
        if self.peek() == Some('-') {
            self.bump();
        }
        let digits = |r: &mut Self| {
            let mut n = 0;
            while r.peek().is_some_and(|c| c.is_ascii_digit()) {
                r.bump();
                n += 1;
            }
            n
        };
        if self.peek() == Some('0') {
            self.bump();
        } else if digits(self) == 0 {
            return self.err(at, "expected digits");
        }
        if self.peek() == Some('.') {
            self.bump();
            if digits(self) == 0 {
                return self.err(at, "expected digits after the decimal point");
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            if digits(self) == 0 {
                return self.err(at, "expected digits in the exponent");
            }
        }
        let text = self.src.get(start..self.pos.offset).unwrap_or("");
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => self.err(at, "the number is out of range"),
        }
    }
}

/// Reads one JSON value filling the whole text (surrounding whitespace allowed).
pub fn parse_json(text: &str) -> Result<Json, ParseError> {
    parse_json_at(
        text,
        Pos {
            line: 1,
            column: 1,
            offset: 0,
        },
        text.len(),
    )
}

/// Reads one JSON value from `text[start.offset..end]`, reporting places in `text`.
pub fn parse_json_at(text: &str, start: Pos, end: usize) -> Result<Json, ParseError> {
    let src = text.get(..end).unwrap_or(text);
    let mut r = Reader { src, pos: start };
    let v = r.value(0)?;
    r.skip_ws();
    if r.peek().is_some() {
        let at = r.pos;
        return r.err(at, "unexpected text after the value");
    }
    Ok(v)
}

/// The position of a byte offset in a text.
pub fn pos_of(text: &str, offset: usize) -> Pos {
    let mut p = Pos {
        line: 1,
        column: 1,
        offset: 0,
    };
    for (i, c) in text.char_indices() {
        if i >= offset {
            break;
        }
        if c == '\n' {
            p.line += 1;
            p.column = 1;
        } else {
            p.column += 1;
        }
        p.offset = i + c.len_utf8();
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_json_with_places() {
        let j =
            parse_json("[\n  {\"a\": 1.5e2, \"b\": [true, null, \"x\\u00e9\\ud83d\\ude00\"]}\n]")
                .unwrap();
        let JsonValue::List(items) = &j.value else {
            panic!()
        };
        let first = &items[0];
        assert_eq!(
            first.at,
            Pos {
                line: 2,
                column: 3,
                offset: 4
            }
        );
        assert_eq!(
            first.get("a").map(|v| &v.value),
            Some(&JsonValue::Number(150.0))
        );
        assert_eq!(
            first.get("b").unwrap().to_raw(),
            Raw::List(vec![Raw::Bool(true), Raw::Null, Raw::text("xé😀")])
        );
        assert_eq!(first.get("b").unwrap().at.column, 21);
    }

    #[test]
    fn errors_say_where() {
        let e = parse_json("[\n  {\"a\" 1}\n]").unwrap_err();
        assert_eq!((e.at.line, e.at.column), (2, 8));
        assert!(e.message.contains("`:`"), "{e}");
        let e = parse_json("{\"a\": 1, \"a\": 2}").unwrap_err();
        assert!(e.message.contains("twice"));
        assert!(parse_json("[1,]").is_err());
        assert!(parse_json("01").is_err());
        assert!(parse_json("\"a\nb\"").is_err());
        assert!(parse_json("[1] x").is_err());
        assert!(parse_json("\"\\ud800\"").is_err());
        assert!(parse_json(&"[".repeat(100))
            .unwrap_err()
            .message
            .contains("deeper"));
        assert!(parse_json("").is_err());
        assert!(parse_json("1e999").is_err());
    }

    #[test]
    fn positions_of_offsets() {
        let t = "ab\ncd";
        assert_eq!(
            pos_of(t, 4),
            Pos {
                line: 2,
                column: 2,
                offset: 4
            }
        );
    }
}
