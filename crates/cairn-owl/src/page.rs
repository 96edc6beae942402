//! A Logseq markdown page holding an `### OntologyBlock`, as a document: the block's
//! `- key:: value` lines in order, and every other line kept verbatim, so a page
//! Cairn did not write survives an edit with only the edited lines changed. Lines
//! are split as CommonMark splits them (LF, CRLF, or a CR alone), so what Cairn
//! reads is what any Markdown reader shows.
//!
//! This module knows the block's layout, not what its properties mean (that is
//! `entity`), and never touches a file: callers hand it text.

use std::fmt;

/// The heading that opens the block Cairn reads.
pub const BLOCK_HEADING: &str = "### OntologyBlock";

/// One `key:: value` line of the block.
#[derive(Debug, Clone, Eq)]
pub struct Prop {
    /// The property name, e.g. `owl:class` or `term-id`.
    pub key: String,
    /// The text after `::`, trimmed.
    pub value: String,
    /// The whitespace before `- `, kept so a hand-indented page is written back as read.
    pub indent: String,
    /// Lines inside the block after this property that are not properties (nested
    /// bullets, notes), verbatim.
    pub extra: Vec<String>,
    /// 1-based line where the property was read; 0 for one built in code. Not part of
    /// equality: a page read back from its text equals the page it was written from.
    pub line: usize,
}

impl PartialEq for Prop {
    fn eq(&self, o: &Prop) -> bool {
        self.key == o.key
            && self.value == o.value
            && self.indent == o.indent
            && self.extra == o.extra
    }
}

/// A page: the lines before the block (normally the `- Preferred Term` bullet), the
/// heading line, the block's properties, and the lines after it.
#[derive(Debug, Clone, Eq)]
pub struct Page {
    /// Lines before the heading, verbatim.
    pub head: Vec<String>,
    /// The heading line itself, verbatim (`  - ### OntologyBlock`).
    pub heading: String,
    /// 1-based line of the heading (0 for a built page); not part of equality.
    heading_line: usize,
    /// Lines between the heading and the first property (`id::`, `collapsed::`).
    pub heading_extra: Vec<String>,
    /// The block's properties in order.
    pub props: Vec<Prop>,
    /// Lines after the block, verbatim.
    pub tail: Vec<String>,
    /// Whether lines end with `\r\n`: a text holding one is written with `\r\n`
    /// after every line, any other with `\n` (a page that mixed its line endings is
    /// written with one).
    pub crlf: bool,
    /// Whether the text ends with a line break.
    pub final_newline: bool,
}

/// Why a page's text could not be read, with the 1-based line (and column when known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, 0 when the whole line is meant.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// True when the page simply has no `### OntologyBlock` (an ordinary Logseq page,
    /// which a sync skips rather than reports).
    pub no_block: bool,
}

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.column > 0 {
            write!(
                f,
                "line {}, column {}: {}",
                self.line, self.column, self.message
            )
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for PageError {}

impl PartialEq for Page {
    fn eq(&self, o: &Page) -> bool {
        self.head == o.head
            && self.heading == o.heading
            && self.heading_extra == o.heading_extra
            && self.props == o.props
            && self.tail == o.tail
            && self.crlf == o.crlf
            && self.final_newline == o.final_newline
    }
}

fn indent_of(line: &str) -> &str {
    let n = line.len() - line.trim_start().len();
    &line[..n]
}

/// Reads `- key:: value` (with any indentation) into (indent, key, value).
fn read_prop(line: &str) -> Option<(&str, &str, &str)> {
    let indent = indent_of(line);
    let rest = line[indent.len()..].strip_prefix("- ")?;
    let (key, value) = rest.split_once("::")?;
    if key.is_empty() || key.contains(char::is_whitespace) || key.starts_with('#') {
        return None;
    }
    if !value.is_empty() && !value.starts_with(' ') {
        return None;
    }
    Some((indent, key, value.trim()))
}

/// The lines of `text` as CommonMark splits them: at a line feed, a carriage return
/// followed by a line feed, or a carriage return alone, so Cairn reads the lines
/// every Markdown reader reads. Also whether the text ends with a line break.
fn split_lines(text: &str) -> (Vec<&str>, bool) {
    let b = text.as_bytes();
    let mut lines = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'\n' | b'\r' => {
                lines.push(&text[start..i]);
                i += if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                start = i;
            }
            _ => i += 1,
        }
    }
    let final_newline = !text.is_empty() && start == text.len();
    if start < text.len() {
        lines.push(&text[start..]);
    }
    (lines, final_newline)
}

fn is_heading(line: &str) -> bool {
    line.trim_start().strip_prefix("- ").map(str::trim) == Some(BLOCK_HEADING)
}

impl Page {
    /// A new page in Cairn's layout: a top bullet with `title`, the block heading
    /// under it, and no properties yet.
    pub fn new(title: &str) -> Page {
        Page {
            head: vec![format!("- {title}")],
            heading: format!("  - {BLOCK_HEADING}"),
            heading_line: 0,
            heading_extra: Vec::new(),
            props: Vec::new(),
            tail: Vec::new(),
            crlf: false,
            final_newline: true,
        }
    }

    /// Reads a page's text. A page without an `### OntologyBlock` is an error with
    /// `no_block` set; a second block is an error at its line.
    pub fn parse(text: &str) -> Result<Page, PageError> {
        let crlf = text.contains("\r\n");
        let (lines, final_newline) = split_lines(text);
        let Some(h) = lines.iter().position(|l| is_heading(l)) else {
            return Err(PageError {
                line: 1,
                column: 0,
                message: format!("no `- {BLOCK_HEADING}` in the page"),
                no_block: true,
            });
        };
        let heading = lines[h];
        let depth = indent_of(heading).len();
        let mut end = h + 1;
        while end < lines.len() {
            let l = lines[end];
            if l.trim().is_empty() || indent_of(l).len() <= depth {
                break;
            }
            end += 1;
        }
        let mut heading_extra = Vec::new();
        let mut props: Vec<Prop> = Vec::with_capacity(end - h - 1);
        for (k, l) in lines[h + 1..end].iter().enumerate() {
            let line_no = h + 2 + k;
            match read_prop(l) {
                Some((indent, key, value)) => props.push(Prop {
                    key: key.to_string(),
                    value: value.to_string(),
                    indent: indent.to_string(),
                    extra: Vec::new(),
                    line: line_no,
                }),
                None => match props.last_mut() {
                    Some(p) => p.extra.push(l.to_string()),
                    None => heading_extra.push(l.to_string()),
                },
            }
        }
        if let Some(k) = lines[end..].iter().position(|l| is_heading(l)) {
            return Err(PageError {
                line: end + k + 1,
                column: 0,
                message: format!("a second `{BLOCK_HEADING}`; a page holds one"),
                no_block: false,
            });
        }
        Ok(Page {
            head: lines[..h].iter().map(|s| s.to_string()).collect(),
            heading: heading.to_string(),
            heading_line: h + 1,
            heading_extra,
            props,
            tail: lines[end..].iter().map(|s| s.to_string()).collect(),
            crlf,
            final_newline,
        })
    }

    /// The page's text: what [`Page::parse`] reads back as an equal page.
    pub fn write(&self) -> String {
        // Written into one string (no line copied on its own first): an import
        // writes each of its pages several times.
        let nl = if self.crlf { "\r\n" } else { "\n" };
        let size: usize = self
            .head
            .iter()
            .chain(&self.heading_extra)
            .chain(&self.tail)
            .map(|l| l.len() + 2)
            .sum::<usize>()
            + self
                .props
                .iter()
                .map(|p| {
                    p.indent.len()
                        + p.key.len()
                        + p.value.len()
                        + 8
                        + p.extra.iter().map(|l| l.len() + 2).sum::<usize>()
                })
                .sum::<usize>()
            + self.heading.len()
            + 2;
        let mut s = String::with_capacity(size);
        let mut first = true;
        let mut line = |s: &mut String, parts: &[&str]| {
            if !first {
                s.push_str(nl);
            }
            first = false;
            for part in parts {
                s.push_str(part);
            }
        };
        for l in &self.head {
            line(&mut s, &[l]);
        }
        line(&mut s, &[&self.heading]);
        for l in &self.heading_extra {
            line(&mut s, &[l]);
        }
        for p in &self.props {
            if p.value.is_empty() {
                line(&mut s, &[&p.indent, "- ", &p.key, "::"]);
            } else {
                line(&mut s, &[&p.indent, "- ", &p.key, ":: ", &p.value]);
            }
            for l in &p.extra {
                line(&mut s, &[l]);
            }
        }
        for l in &self.tail {
            line(&mut s, &[l]);
        }
        if self.final_newline {
            s.push_str(nl);
        }
        s
    }

    /// The 1-based line of the heading (0 for a page built in code).
    pub fn heading_line(&self) -> usize {
        self.heading_line
    }

    /// The text of the first top-level bullet before the block (the preferred term in
    /// Cairn's layout).
    pub fn title(&self) -> Option<&str> {
        self.head
            .iter()
            .find_map(|l| l.strip_prefix("- ").map(str::trim))
    }

    /// The first value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.props
            .iter()
            .find(|p| p.key == key)
            .map(|p| p.value.as_str())
    }

    /// The first property named `key`.
    pub fn prop(&self, key: &str) -> Option<&Prop> {
        self.props.iter().find(|p| p.key == key)
    }

    /// The indentation new properties get: that of the last property, else two spaces
    /// deeper than the heading.
    fn prop_indent(&self) -> String {
        match self.props.last() {
            Some(p) => p.indent.clone(),
            None => format!("{}  ", indent_of(&self.heading)),
        }
    }

    /// Sets `key` to `value`: the first such property is changed in place (later ones
    /// with the same key are removed); a new key is inserted before the first property
    /// that `order` ranks after it (unranked keys go last), so generated pages keep
    /// the template's order.
    pub fn set(&mut self, key: &str, value: &str, order: &dyn Fn(&str) -> usize) {
        if let Some(i) = self.props.iter().position(|p| p.key == key) {
            self.props[i].value = value.to_string();
            let mut k = i + 1;
            while k < self.props.len() {
                if self.props[k].key == key {
                    let removed = self.props.remove(k);
                    // Keep what hung under the removed line.
                    self.props[k - 1].extra.extend(removed.extra);
                } else {
                    k += 1;
                }
            }
            return;
        }
        let rank = order(key);
        let at = self
            .props
            .iter()
            .position(|p| order(&p.key) > rank)
            .unwrap_or(self.props.len());
        let prop = Prop {
            key: key.to_string(),
            value: value.to_string(),
            indent: self.prop_indent(),
            extra: Vec::new(),
            line: 0,
        };
        self.props.insert(at, prop);
    }

    /// Inserts one more line of `key` (a repeated key is allowed) after the lines
    /// `order` ranks with it or before it.
    pub fn add(&mut self, key: &str, value: &str, order: &dyn Fn(&str) -> usize) {
        let rank = order(key);
        let at = self
            .props
            .iter()
            .position(|p| order(&p.key) > rank)
            .unwrap_or(self.props.len());
        let prop = Prop {
            key: key.to_string(),
            value: value.to_string(),
            indent: self.prop_indent(),
            extra: Vec::new(),
            line: 0,
        };
        self.props.insert(at, prop);
    }

    /// Appends a property at the end of the block (a repeated key is allowed).
    pub fn push(&mut self, key: &str, value: &str) {
        let prop = Prop {
            key: key.to_string(),
            value: value.to_string(),
            indent: self.prop_indent(),
            extra: Vec::new(),
            line: 0,
        };
        self.props.push(prop);
    }

    /// Removes every property named `key`; returns how many were removed.
    pub fn remove(&mut self, key: &str) -> usize {
        let before = self.props.len();
        let mut kept: Vec<Prop> = Vec::with_capacity(before);
        for p in self.props.drain(..) {
            if p.key == key {
                // Lines that hung under a removed property stay, under the one before.
                match kept.last_mut() {
                    Some(prev) => prev.extra.extend(p.extra),
                    None => self.heading_extra.extend(p.extra),
                }
            } else {
                kept.push(p);
            }
        }
        self.props = kept;
        before - self.props.len()
    }
}

/// The file name Logseq gives a page titled `title` (its "triple-lowbar" format): `/`
/// becomes `___`, and characters that file systems or Logseq reserve are
/// percent-encoded; `.md` is appended.
pub fn file_name(title: &str) -> String {
    let mut s = String::with_capacity(title.len() + 3);
    for c in title.chars() {
        match c {
            '/' => s.push_str("___"),
            '<' | '>' | ':' | '"' | '\\' | '|' | '?' | '*' | '#' | '%' => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    s.push_str(&format!("%{b:02X}"));
                }
            }
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    s.push_str(&format!("%{b:02X}"));
                }
            }
            c => s.push(c),
        }
    }
    s.push_str(".md");
    s
}

/// The page name a file holds: the inverse of [`file_name`], applied to the last path
/// segment (`pages/Vision Transformer.md` → `Vision Transformer`).
pub fn title_from_file(path: &str) -> String {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = base.strip_suffix(".md").unwrap_or(base);
    let stem = stem.replace("___", "/");
    let bytes = stem.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or(stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
- Vision Transformer
  - ### OntologyBlock
    id:: 65a1
    - ontology:: true
    - term-id:: AI-0851
    - owl:class:: ai:VisionTransformer
      - a note under the class
    - custom-thing:: kept as is
    - empty::
- ## Prose
  - Introduced by Dosovitskiy et al.
";

    #[test]
    fn reads_block_and_keeps_everything_else() {
        let p = Page::parse(SAMPLE).unwrap();
        assert_eq!(p.title(), Some("Vision Transformer"));
        assert_eq!(p.heading_extra, vec!["    id:: 65a1"]);
        assert_eq!(p.get("term-id"), Some("AI-0851"));
        assert_eq!(p.prop("owl:class").unwrap().line, 6);
        assert_eq!(
            p.prop("owl:class").unwrap().extra,
            vec!["      - a note under the class"]
        );
        assert_eq!(p.get("custom-thing"), Some("kept as is"));
        assert_eq!(p.get("empty"), Some(""));
        assert_eq!(p.tail.len(), 2);
        assert_eq!(p.write(), SAMPLE);
        assert_eq!(Page::parse(&p.write()).unwrap(), p);
    }

    #[test]
    fn tabs_crlf_and_no_final_newline_survive() {
        let t = "- A\r\n\t- ### OntologyBlock\r\n\t\t- owl:class:: ai:A\r\n\t\t- x:: y";
        let p = Page::parse(t).unwrap();
        assert_eq!(p.get("x"), Some("y"));
        assert_eq!(p.write(), t);
        let mut q = p.clone();
        q.push("new", "v");
        assert!(q.write().ends_with("\t\t- x:: y\r\n\t\t- new:: v"));
    }

    #[test]
    fn lines_split_as_commonmark_splits_them() {
        // A lone CR ends a line, as it does for every CommonMark reader.
        let t = "- A\n  - ### OntologyBlock\n    - owl:class:: ai:A\r    - status:: approved\r\n    - x:: y\n";
        let p = Page::parse(t).unwrap();
        assert_eq!(p.get("owl:class"), Some("ai:A"));
        assert_eq!(p.get("status"), Some("approved"));
        assert_eq!(p.prop("x").unwrap().line, 5);
        // Written with one ending (CRLF, the text had one), and read back the same.
        assert_eq!(
            p.write(),
            t.replace("\r\n", "\n").replace(['\r', '\n'], "\r\n")
        );
        assert_eq!(Page::parse(&p.write()).unwrap(), p);
        let (lines, last) = split_lines("a\r\rb\r\n\nc");
        assert_eq!((lines, last), (vec!["a", "", "b", "", "c"], false));
        assert_eq!(split_lines("\r"), (vec![""], true));
        assert_eq!(split_lines(""), (vec![], false));
    }

    #[test]
    fn errors_have_lines() {
        let e = Page::parse("- just a page\n  - text\n").unwrap_err();
        assert!(e.no_block);
        let two = "- A\n  - ### OntologyBlock\n    - a:: b\n- B\n  - ### OntologyBlock\n";
        let e = Page::parse(two).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(!e.no_block);
    }

    #[test]
    fn set_replaces_in_place_or_inserts_by_rank() {
        let mut p = Page::parse(SAMPLE).unwrap();
        let rank = |k: &str| match k {
            "ontology" => 0,
            "term-id" => 1,
            "definition" => 2,
            "owl:class" => 3,
            _ => usize::MAX,
        };
        p.set("term-id", "AI-0852", &rank);
        p.set("definition", "An image model.", &rank);
        let keys: Vec<&str> = p.props.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "ontology",
                "term-id",
                "definition",
                "owl:class",
                "custom-thing",
                "empty"
            ]
        );
        assert_eq!(p.get("term-id"), Some("AI-0852"));
        assert_eq!(p.remove("owl:class"), 1);
        // The note that hung under the removed line stays in the page.
        assert!(p.write().contains("a note under the class"));
    }

    #[test]
    fn file_names_round_trip() {
        for t in ["Vision Transformer", "TCP/IP", "a:b?c%d", "Über #1"] {
            let f = file_name(t);
            assert!(!f.contains('/') && !f.contains(':'), "{f}");
            assert_eq!(title_from_file(&format!("pages/{f}")), t);
        }
        assert_eq!(file_name("TCP/IP"), "TCP___IP.md");
        assert_eq!(title_from_file("x/100%.md"), "100%");
    }
}
