//! Path globs for atoms: Cairn's validation (with messages an agent can act on) and
//! specificity in front of globset's parsing and matching, and an index that finds
//! the patterns a path can match without trying every pattern of a project.
//!
//! Syntax: `/` separates segments; `*` matches within one segment, `?` one character,
//! `[abc]`, `[a-z]`, `[!x]` a character class, `{a,b}` alternatives, `\x` a literal
//! `x`; `**` as a whole segment matches any number of segments (one or more when it
//! ends the pattern, so `src/**` matches what is under `src/`, not `src` itself).
//! A `**` inside a segment (`src/**.rs`, `a**b`) is refused rather than read as `*`.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Bounds of an atom's patterns (docs/graph.md, the glob rules).
pub const MAX_PATTERNS: usize = 20;
pub const MAX_PATTERN_LEN: usize = 512;
/// Brace alternatives multiply; past this a pattern is refused as too broad to index.
const MAX_EXPANSIONS: usize = 64;

/// One brace-free alternative of a pattern: how it matches, and the literal parts the
/// index files it under.
#[derive(Debug, Clone)]
struct Alt {
    /// The alternative as globset reads it.
    pattern: String,
    shape: Shape,
    /// Built on first use; `None` only for a stored pattern globset refuses.
    matcher: OnceLock<Option<globset::GlobMatcher>>,
    /// Segments before the first one holding a wildcard.
    dirs: Vec<String>,
    /// The literal characters the first wildcard segment starts with.
    stem: String,
}

/// The two shapes most atoms' patterns take are matched without globset: compiling a
/// matcher costs about 50 µs, and the first context call over a project whose
/// `src/x/**` patterns all lie under the asked paths compiled hundreds of them.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Shape {
    /// No wildcard: the path itself (`Cargo.toml`).
    Exact,
    /// Literal directories then `**` (`src/pay/**`): anything under this prefix,
    /// which ends with `/`.
    Under(String),
    /// Anything else, through globset.
    Glob,
}

impl Alt {
    fn is_match(&self, path: &str) -> bool {
        match &self.shape {
            Shape::Exact => path == self.pattern,
            Shape::Under(prefix) => path.starts_with(prefix.as_str()),
            Shape::Glob => self
                .matcher
                .get_or_init(|| {
                    builder(&self.pattern)
                        .build()
                        .ok()
                        .map(|g| g.compile_matcher())
                })
                .as_ref()
                .is_some_and(|m| m.is_match(path)),
        }
    }
}

/// A validated glob pattern.
#[derive(Debug, Clone)]
pub struct Glob {
    pub text: String,
    alts: Vec<Alt>,
    specificity: usize,
}

impl Glob {
    /// Parses and validates one pattern; the error says what is wrong in words an
    /// agent can act on.
    pub fn parse(text: &str) -> Result<Glob, String> {
        Glob::read(text, true)
    }

    /// A pattern read back from the store, which validated it on write: Cairn's own
    /// checks only, without globset's parse, which the first match does anyway. A
    /// project's index holds tens of thousands of patterns and a context call tries
    /// a few of them.
    pub fn parse_stored(text: &str) -> Result<Glob, String> {
        Glob::read(text, false)
    }

    fn read(text: &str, full: bool) -> Result<Glob, String> {
        let t = text.trim();
        if t.is_empty() {
            return Err("a pattern is empty".into());
        }
        if t.len() > MAX_PATTERN_LEN {
            return Err(format!(
                "pattern '{}…' is {} characters, at most {MAX_PATTERN_LEN} allowed",
                prefix(t, 40),
                t.len()
            ));
        }
        if t.starts_with('/') || t.starts_with('\\') || t.as_bytes().get(1) == Some(&b':') {
            return Err(format!(
                "pattern '{t}' is absolute: patterns are relative to the repository root, e.g. 'src/**'"
            ));
        }
        if t.chars().any(char::is_control) {
            return Err(format!(
                "pattern '{}' holds a control character",
                prefix(t, 40)
            ));
        }
        let mut alts = Vec::new();
        for expanded in expand_braces(t, 0)? {
            alts.push(compile(t, &expanded, full)?);
        }
        let specificity = alts.iter().map(|a| a.dirs.len()).max().unwrap_or(0);
        Ok(Glob {
            text: t.to_string(),
            alts,
            specificity,
        })
    }

    /// Whether `path` (already normalised: relative, `/`-separated) matches.
    pub fn matches(&self, path: &str) -> bool {
        self.alts.iter().any(|a| a.is_match(path))
    }

    /// Literal segments before the first wildcard, for the most specific alternative:
    /// the measure of how precisely this pattern names a place.
    pub fn specificity(&self) -> usize {
        self.specificity
    }
}

fn prefix(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// Brace groups a pattern may hold, nested or in a row: the expansion recurses
/// once per group.
const MAX_BRACE_GROUPS: usize = 16;

/// Expands `{a,b}` alternatives (nesting allowed) into brace-free patterns; `groups`
/// counts the groups expanded above this call.
fn expand_braces(t: &str, groups: usize) -> Result<Vec<String>, String> {
    if !t.contains(['{', '}']) {
        return Ok(vec![t.to_string()]);
    }
    if groups == MAX_BRACE_GROUPS {
        return Err(format!(
            "pattern '{}…' holds more than {MAX_BRACE_GROUPS} brace groups",
            prefix(t, 40)
        ));
    }
    let chars: Vec<char> = t.chars().collect();
    // Find the first top-level '{' not escaped and not inside a class.
    let mut i = 0;
    let mut in_class = false;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '{' if !in_class => {
                let mut depth = 0;
                let mut j = i;
                let mut parts = Vec::new();
                let mut start = i + 1;
                let mut inner_class = false;
                while j < chars.len() {
                    match chars[j] {
                        '\\' => j += 1,
                        '[' if !inner_class => inner_class = true,
                        ']' if inner_class => inner_class = false,
                        '{' if !inner_class => depth += 1,
                        ',' if !inner_class && depth == 1 => {
                            parts.push(chars[start..j].iter().collect::<String>());
                            start = j + 1;
                        }
                        '}' if !inner_class => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                if j >= chars.len() {
                    return Err(format!("pattern '{t}' has an unclosed '{{'"));
                }
                parts.push(chars[start..j].iter().collect::<String>());
                let head: String = chars[..i].iter().collect();
                let tail: String = chars[j + 1..].iter().collect();
                let mut out = Vec::new();
                for p in parts {
                    for rest in expand_braces(&format!("{p}{tail}"), groups + 1)? {
                        out.push(format!("{head}{rest}"));
                        if out.len() > MAX_EXPANSIONS {
                            return Err(format!(
                                "pattern '{t}' expands to more than {MAX_EXPANSIONS} alternatives"
                            ));
                        }
                    }
                }
                return Ok(out);
            }
            '}' if !in_class => return Err(format!("pattern '{t}' has a '}}' without '{{'")),
            _ => {}
        }
        i += 1;
    }
    Ok(vec![t.to_string()])
}

/// Checks one brace-free alternative segment by segment (Cairn's rules and messages),
/// then hands it to globset: `*` and `?` never cross `/`, `**` is a whole segment.
fn compile(original: &str, t: &str, full: bool) -> Result<Alt, String> {
    let mut segs: Vec<&str> = Vec::new();
    let parts: Vec<&str> = t.split('/').collect();
    for (n, part) in parts.iter().enumerate() {
        match *part {
            // A trailing slash names a directory: read `src/` as `src/**`.
            "" if n == parts.len() - 1 && n > 0 => {
                if segs.last() != Some(&"**") {
                    segs.push("**");
                }
            }
            "" => return Err(format!("pattern '{original}' has an empty segment ('//')")),
            ".." => {
                return Err(format!(
                    "pattern '{original}' climbs out with '..': patterns stay inside the repository"
                ))
            }
            "." if n == 0 => {} // `./src/**` is `src/**`
            "." => return Err(format!("pattern '{original}' has a '.' segment")),
            "**" => {
                if segs.last() != Some(&"**") {
                    segs.push("**");
                }
            }
            p if p.contains("**") => {
                return Err(format!(
                    "pattern '{original}': '**' must be a whole segment ('src/**/*.rs', not 'src/**.rs'); use '*' within a name"
                ))
            }
            p => segs.push(p),
        }
    }
    if segs.is_empty() {
        return Err(format!("pattern '{original}' names nothing"));
    }
    let wild = |s: &str| s.contains(['*', '?', '[', ']', '\\']);
    let dirs: Vec<String> = segs
        .iter()
        .take_while(|s| !wild(s))
        .map(|s| s.to_string())
        .collect();
    let stem = segs
        .get(dirs.len())
        .map(|s| {
            s.chars()
                .take_while(|c| !matches!(c, '*' | '?' | '[' | ']' | '\\'))
                .take(STEM)
                .collect()
        })
        .unwrap_or_default();
    let pattern = segs.join("/");
    if full {
        builder(&pattern)
            .build()
            .map_err(|e| refused(original, e.kind()))?;
    }
    let shape = if dirs.len() == segs.len() {
        Shape::Exact
    } else if dirs.len() + 1 == segs.len() && segs.last() == Some(&"**") && !dirs.is_empty() {
        Shape::Under(format!("{}/", dirs.join("/")))
    } else {
        Shape::Glob
    };
    Ok(Alt {
        pattern,
        shape,
        matcher: OnceLock::new(),
        dirs,
        stem,
    })
}

/// globset's reading of a brace-free alternative: `*` and `?` never cross `/`.
fn builder(pattern: &str) -> globset::GlobBuilder<'_> {
    let mut b = globset::GlobBuilder::new(pattern);
    b.literal_separator(true)
        .backslash_escape(true)
        .empty_alternates(false);
    b
}

/// globset's reason for refusing a pattern, in Cairn's words.
fn refused(original: &str, kind: &globset::ErrorKind) -> String {
    use globset::ErrorKind as K;
    match kind {
        K::UnclosedClass => format!("pattern '{original}' has an unclosed '['"),
        K::InvalidRange(lo, hi) => {
            format!("pattern '{original}' has a reversed range '{lo}-{hi}'")
        }
        K::UnopenedAlternates => format!("pattern '{original}' has a '}}' without '{{'"),
        K::UnclosedAlternates => format!("pattern '{original}' has an unclosed '{{'"),
        K::DanglingEscape => format!("pattern '{original}' ends with a lone '\\'"),
        K::InvalidRecursive => format!(
            "pattern '{original}': '**' must be a whole segment ('src/**/*.rs', not 'src/**.rs')"
        ),
        other => format!("pattern '{original}' is not a valid glob: {other}"),
    }
}

/// Normalises a path given by an agent: trims, turns `\` into `/`, drops a leading
/// `./` and repeated or trailing slashes. `None` when it cannot name a file inside a
/// repository (absolute, climbing out with `..`, empty).
pub fn normalize_path(raw: &str) -> Option<String> {
    let s = raw.trim().replace('\\', "/");
    if s.is_empty() || s.starts_with('/') || s.as_bytes().get(1) == Some(&b':') {
        return None;
    }
    let mut out: Vec<&str> = Vec::new();
    for part in s.split('/') {
        match part {
            "" | "." => continue,
            ".." => return None,
            p => out.push(p),
        }
    }
    if out.is_empty() {
        return None;
    }
    Some(out.join("/"))
}

/// Where one pattern came from: the owner's index and the pattern's index.
#[derive(Debug, Clone, Copy)]
pub struct Origin {
    pub owner: usize,
    pub pattern: usize,
}

/// Many owners' patterns, indexed so that a path is tested only against patterns
/// whose fixed part it starts with: the literal directories before the first wildcard
/// and, when the first wildcard segment starts with literal characters (`mod5-*.ts`),
/// up to `STEM` of those characters.
#[derive(Debug, Default)]
pub struct Index {
    /// Removed patterns leave `None` until the index is rebuilt.
    globs: Vec<Option<(Origin, Glob)>>,
    /// Owner → positions of its patterns, for removal.
    by_owner: HashMap<usize, Vec<usize>>,
    /// Key → positions in `globs`. Keys are the literal directory prefix joined by
    /// '/', optionally followed by '\u{1}' and the stem.
    by_prefix: HashMap<String, Vec<usize>>,
    /// Patterns that start with a wildcard: tried against every path.
    floating: Vec<usize>,
    /// Literal directory prefix alone → positions: where near misses are found.
    by_dir: HashMap<String, Vec<usize>>,
}

/// Literal characters of a wildcard segment used in its index key.
const STEM: usize = 8;

/// One pattern that matched a path.
#[derive(Debug, Clone, Copy)]
pub struct Hit {
    pub origin: Origin,
    pub specificity: usize,
}

impl Index {
    pub fn add(&mut self, origin: Origin, g: Glob) {
        let at = self.globs.len();
        let mut dirs: Vec<String> = g
            .alts
            .iter()
            .map(|a| a.dirs.join("/"))
            .filter(|d| !d.is_empty())
            .collect();
        dirs.sort();
        dirs.dedup();
        for d in dirs {
            self.by_dir.entry(d).or_default().push(at);
        }
        let mut keys: Vec<String> = g
            .alts
            .iter()
            .map(|a| {
                let mut k = a.dirs.join("/");
                if !a.stem.is_empty() {
                    k.push('\u{1}');
                    k.push_str(&a.stem);
                }
                k
            })
            .collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            if k.is_empty() {
                self.floating.push(at);
            } else {
                self.by_prefix.entry(k).or_default().push(at);
            }
        }
        self.by_owner.entry(origin.owner).or_default().push(at);
        self.globs.push(Some((origin, g)));
    }

    /// Removes every pattern of `owner`.
    pub fn remove(&mut self, owner: usize) {
        for at in self.by_owner.remove(&owner).unwrap_or_default() {
            self.globs[at] = None;
        }
    }

    /// Positions held by removed patterns, to decide when a rebuild pays.
    pub fn dead(&self) -> usize {
        self.globs.iter().filter(|g| g.is_none()).count()
    }

    /// The patterns whose fixed directories hold `path`, deepest first: for a path that
    /// matched nothing, the rules that almost covered it (a file moved into a
    /// subdirectory, a pattern naming another extension).
    pub fn near_misses(&self, path: &str, n: usize) -> Vec<Origin> {
        let segs: Vec<&str> = path.split('/').collect();
        let mut out = Vec::new();
        for depth in (1..segs.len()).rev() {
            for at in self
                .by_dir
                .get(&segs[..depth].join("/"))
                .into_iter()
                .flatten()
            {
                if let Some((o, _)) = &self.globs[*at] {
                    out.push(*o);
                    if out.len() == n {
                        return out;
                    }
                }
            }
        }
        out
    }

    /// Every pattern matching `path` (normalised).
    pub fn lookup(&self, path: &str) -> Vec<Hit> {
        let segs: Vec<&str> = path.split('/').collect();
        let mut candidates: Vec<usize> = self.floating.clone();
        let mut key = String::with_capacity(path.len() + STEM + 1);
        for depth in 0..=segs.len() {
            // Patterns whose literal directories are segs[..depth] ...
            key.truncate(0);
            key.push_str(&segs[..depth].join("/"));
            if depth > 0 {
                if let Some(v) = self.by_prefix.get(&key) {
                    candidates.extend_from_slice(v);
                }
            }
            // ... and whose next segment starts with the literal stem of segs[depth].
            let Some(next) = segs.get(depth) else { break };
            key.push('\u{1}');
            let base = key.len();
            for (i, c) in next.char_indices().take(STEM) {
                key.truncate(base);
                key.push_str(&next[..i + c.len_utf8()]);
                if let Some(v) = self.by_prefix.get(&key) {
                    candidates.extend_from_slice(v);
                }
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        let mut hits = Vec::new();
        for c in candidates {
            let Some((origin, g)) = &self.globs[c] else {
                continue;
            };
            if g.matches(path) {
                hits.push(Hit {
                    origin: *origin,
                    specificity: g.specificity(),
                });
            }
        }
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `p` matches `path`, read both ways: validated on write, and as read
    /// back from the store; the two must agree, and agree with globset's own reading
    /// of every alternative (the exact and `dir/**` shapes skip it).
    fn m(p: &str, path: &str) -> bool {
        let g = Glob::parse(p).unwrap();
        let full = g.matches(path);
        assert_eq!(
            Glob::parse_stored(p).unwrap().matches(path),
            full,
            "{p} {path}"
        );
        let by_globset = g.alts.iter().any(|a| {
            builder(&a.pattern)
                .build()
                .unwrap()
                .compile_matcher()
                .is_match(path)
        });
        assert_eq!(
            by_globset, full,
            "{p} {path}: the shortcut and globset differ"
        );
        full
    }

    #[test]
    fn exact_and_under_shapes_agree_with_globset() {
        for (p, path) in [
            ("Cargo.toml", "Cargo.toml"),
            ("Cargo.toml", "Cargo.tomlx"),
            ("Cargo.toml", "x/Cargo.toml"),
            ("src/pay/**", "src/pay/a.rs"),
            ("src/pay/**", "src/pay/x/y/a.rs"),
            ("src/pay/**", "src/pay"),
            ("src/pay/**", "src/payments/a.rs"),
            ("src/pay/**", "src/pay/"),
            ("src/", "src/a"),
            ("src/", "src"),
            ("./docs/a.md", "docs/a.md"),
            ("src/{a,b}/**", "src/b/c"),
            ("src/{a,b}/**", "src/c/d"),
            ("a/b/**/**", "a/b/c"),
            ("**", "anything/at/all"),
            ("Ünïcode/**", "Ünïcode/ß"),
        ] {
            m(p, path);
        }
        let g = Glob::parse("src/pay/**").unwrap();
        assert_eq!(g.alts[0].shape, Shape::Under("src/pay/".into()));
        assert_eq!(Glob::parse("a.md").unwrap().alts[0].shape, Shape::Exact);
        assert_eq!(Glob::parse("src/*.rs").unwrap().alts[0].shape, Shape::Glob);
    }

    #[test]
    fn star_stays_in_one_directory_and_double_star_crosses() {
        assert!(m("src/*.ts", "src/a.ts"));
        assert!(!m("src/*.ts", "src/x/a.ts"));
        assert!(m("src/**", "src/x/y/a.ts"));
        assert!(!m("src/**", "src"));
        assert!(m("src/**/*.ts", "src/a.ts"));
        assert!(m("src/**/*.ts", "src/x/y/a.ts"));
        assert!(m("**/*.md", "README.md"));
        assert!(m("src/", "src/a"));
        assert!(m("./src/a.c", "src/a.c"));
    }

    #[test]
    fn classes_braces_and_escapes() {
        assert!(m("src/[ab].c", "src/a.c"));
        assert!(!m("src/[!ab].c", "src/a.c"));
        assert!(m("src/[a-c]x", "src/bx"));
        assert!(m("src/{a,b}/*.rs", "src/b/x.rs"));
        assert!(m("src/stripe-*.{ts,tsx}", "src/stripe-x.tsx"));
        assert!(m("a\\*b", "a*b"));
        assert!(!m("a\\*b", "axb"));
        assert!(m("a?c", "abc"));
    }

    #[test]
    fn malformed_patterns_are_refused() {
        for bad in [
            "src/**.rs",
            "a**b",
            "/abs/x",
            "../x",
            "a/../b",
            "a//b",
            "src/[ab",
            "src/{a,b",
            "a}b",
            "",
            "C:/x",
            "a\\",
        ] {
            assert!(Glob::parse(bad).is_err(), "{bad} should be refused");
        }
        // Brace groups, nested or in a row, up to the length limit: refused, with
        // the expansion's recursion bounded.
        let nested = format!("{}a{}", "{".repeat(250), "}".repeat(250));
        let row = "{a}".repeat(170);
        for bad in [nested, row] {
            let e = Glob::parse(&bad).unwrap_err();
            assert!(e.contains("brace groups"), "{e}");
        }
        assert!(m("{a}/{b}/{c}/{d}/*.rs", "a/b/c/d/x.rs"));
    }

    #[test]
    fn specificity_counts_literal_segments_before_the_first_wildcard() {
        assert_eq!(
            Glob::parse("src/pages/checkout/**").unwrap().specificity(),
            3
        );
        assert_eq!(Glob::parse("src/*.ts").unwrap().specificity(), 1);
        assert_eq!(Glob::parse("**/*.ts").unwrap().specificity(), 0);
        assert_eq!(Glob::parse("docs/x.md").unwrap().specificity(), 2);
    }

    #[test]
    fn index_finds_the_same_matches_as_trying_every_pattern() {
        let pats = [
            "src/a/**",
            "src/a/*.ts",
            "src/*.ts",
            "**/*.md",
            "docs/x.md",
            "src/{a,b}/c/**",
            "src/b/[xy].ts",
            "lib/**/util-*.rs",
            "src/a/mod5-*.ts",
            "src/a/mod50-*.ts",
            "src/a/mod5*/**",
            "src/é*.rs",
            "{src,lib}/q*.c",
        ];
        let mut idx = Index::default();
        for (i, p) in pats.iter().enumerate() {
            idx.add(
                Origin {
                    owner: i,
                    pattern: 0,
                },
                Glob::parse(p).unwrap(),
            );
        }
        for path in [
            "src/a/x.ts",
            "src/a/b/c.ts",
            "src/x.ts",
            "README.md",
            "docs/x.md",
            "src/b/c/d.rs",
            "src/b/x.ts",
            "lib/q/r/util-a.rs",
            "other/file.c",
            "src/a/mod5-x.ts",
            "src/a/mod50-x.ts",
            "src/a/mod51/y.ts",
            "src/éa.rs",
            "lib/qq.c",
            "src/q.c",
        ] {
            let mut got: Vec<usize> = idx.lookup(path).iter().map(|h| h.origin.owner).collect();
            got.sort();
            let want: Vec<usize> = pats
                .iter()
                .enumerate()
                .filter(|(_, p)| m(p, path))
                .map(|(i, _)| i)
                .collect();
            assert_eq!(got, want, "{path}");
        }
    }

    #[test]
    fn paths_are_normalised_or_refused() {
        assert_eq!(normalize_path("./src//a.ts").as_deref(), Some("src/a.ts"));
        assert_eq!(normalize_path("src\\a.ts").as_deref(), Some("src/a.ts"));
        assert_eq!(normalize_path("/etc/passwd"), None);
        assert_eq!(normalize_path("../x"), None);
    }
}
