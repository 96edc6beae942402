//! The map kept true: the rules ARCHITECTURE.md states about where things live,
//! checked over the source tree itself with `std::fs` (in the manner of
//! rust-analyzer's `tidy`). A core crate (`crates/*`) imports nothing of Cairn; `sqlx`
//! only under `src/store/`; neither `serde_json` nor a wire name (a camelCase
//! parameter or a tool name of tools/list) in a core crate or `src/service/` (a
//! core's `keys.rs` aside: it names the keys of the core's own data);
//! `unsafe` only in `src/embed/vector.rs`; every `.rs` file opens with `//!`; none
//! passes 1,000 lines. Known offenders are listed in `tidy_allowlist.txt`, which may
//! only shrink: an entry that no longer matches fails the test too.
//!
//! Comments are stripped and string literals set apart before any rule looks at the
//! code, so a doc comment may name `sqlx` and a message may say "unsafe".

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A rule of the tree, named as the allowlist names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rule {
    /// A core crate names a Cairn crate other than itself.
    CoreImport,
    /// `sqlx` outside `src/store/`.
    Sqlx,
    /// `serde_json` in a core crate or `src/service/`.
    SerdeJson,
    /// A wire name in a string of a core crate or `src/service/`.
    WireName,
    /// `unsafe` outside `src/embed/vector.rs`.
    Unsafe,
    /// A `.rs` file whose first line is not `//!`.
    ModuleDoc,
    /// A `.rs` file past 1,000 lines.
    Lines,
}

impl Rule {
    fn name(self) -> &'static str {
        match self {
            Rule::CoreImport => "core-import",
            Rule::Sqlx => "sqlx",
            Rule::SerdeJson => "serde_json",
            Rule::WireName => "wire-name",
            Rule::Unsafe => "unsafe",
            Rule::ModuleDoc => "module-doc",
            Rule::Lines => "lines",
        }
    }

    fn parse(s: &str) -> Option<Rule> {
        [
            Rule::CoreImport,
            Rule::Sqlx,
            Rule::SerdeJson,
            Rule::WireName,
            Rule::Unsafe,
            Rule::ModuleDoc,
            Rule::Lines,
        ]
        .into_iter()
        .find(|r| r.name() == s)
    }
}

/// One broken rule: where, and what (the word, or the line count).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Violation {
    rule: Rule,
    path: String,
    line: usize,
    what: String,
}

impl Violation {
    /// What the allowlist matches: the rule, the file and the word (no line, so an
    /// edit above an allowed offender does not break the list).
    fn key(&self) -> (Rule, String, String) {
        let what = match self.rule {
            Rule::WireName | Rule::CoreImport => self.what.clone(),
            _ => String::new(),
        };
        (self.rule, self.path.clone(), what)
    }
}

/// The directories whose `.rs` files the rules read.
const DIRS: &[&str] = &["src", "crates", "benches", "tests"];
/// The most lines a source file may have.
const MAX_LINES: usize = 1000;

/// A file's code with comments removed and every literal's content blanked (line
/// breaks kept, so positions keep their line), and its string literals with the
/// line each starts on.
struct Lexed {
    code: String,
    strings: Vec<(usize, String)>,
}

fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Rust's lexical shape, as far as telling code, comments and literals apart needs:
/// nested block comments, raw strings with any number of `#`, byte strings, char
/// literals and lifetimes.
fn lex(src: &str) -> Lexed {
    let b: Vec<char> = src.chars().collect();
    let n = b.len();
    let at = |i: usize| b.get(i).copied().unwrap_or('\0');
    let (mut code, mut strings) = (String::with_capacity(src.len()), Vec::new());
    let (mut i, mut line) = (0, 1);
    while i < n {
        let c = b[i];
        let prev_ident = i > 0 && ident_char(b[i - 1]);
        if c == '/' && at(i + 1) == '/' {
            while i < n && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < n {
                if b[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if b[i] == '\n' {
                        code.push('\n');
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if !prev_ident && (c == 'r' || (c == 'b' && at(i + 1) == 'r')) && {
            let mut j = i + if c == 'b' { 2 } else { 1 };
            while at(j) == '#' {
                j += 1;
            }
            at(j) == '"'
        } {
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            j += 1;
            let (start_line, mut text) = (line, String::new());
            while j < n {
                if b[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#') {
                    j += 1 + hashes;
                    break;
                }
                if b[j] == '\n' {
                    code.push('\n');
                    line += 1;
                }
                text.push(b[j]);
                j += 1;
            }
            code.push_str("\"\"");
            strings.push((start_line, text));
            i = j;
        } else if c == '"' || (!prev_ident && c == 'b' && at(i + 1) == '"') {
            let mut j = i + if c == 'b' { 2 } else { 1 };
            let (start_line, mut text) = (line, String::new());
            while j < n && b[j] != '"' {
                if b[j] == '\\' {
                    text.push(b[j]);
                    j += 1;
                }
                if j < n {
                    if b[j] == '\n' {
                        code.push('\n');
                        line += 1;
                    }
                    text.push(b[j]);
                }
                j += 1;
            }
            code.push_str("\"\"");
            strings.push((start_line, text));
            i = j + 1;
        } else if c == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A char literal ('x', '\n', '\u{1F600}'); anything else after a quote
            // is a lifetime or a label, which is code.
            let mut j = i + 1;
            if at(j) == '\\' {
                j += 2;
            } else {
                j += 1;
            }
            while j < n && b[j] != '\'' {
                j += 1;
            }
            code.push_str("' '");
            i = j + 1;
        } else {
            if c == '\n' {
                line += 1;
            }
            code.push(c);
            i += 1;
        }
    }
    Lexed { code, strings }
}

/// The identifiers of `text` with the line each is on (`first_line` for the first).
fn words(text: &str, first_line: usize) -> Vec<(usize, &str, usize)> {
    let mut out = Vec::new();
    let (mut line, mut start) = (first_line, None::<usize>);
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        if ident_char(c) {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            out.push((line, &text[s..i], i));
        }
        if c == '\n' {
            line += 1;
        }
    }
    out
}

/// The wire's names: every camelCase parameter of a tool (nested objects' too) and
/// every tool name with an underscore, read from the tools/list snapshots.
fn wire_names(snapshots: &Path) -> BTreeSet<String> {
    fn params(v: &serde_json::Value, out: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(serde_json::Value::Object(p)) = m.get("properties") {
                    out.extend(
                        p.keys()
                            .filter(|k| k.chars().any(|c| c.is_ascii_uppercase()))
                            .cloned(),
                    );
                }
                m.values().for_each(|x| params(x, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| params(x, out)),
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(snapshots).expect("the snapshots directory") {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("it__tools_meta__tool_") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        // An insta snapshot: a `---` header, then the value.
        let body = text.splitn(3, "---\n").nth(2).expect("a snapshot body");
        let v: serde_json::Value = serde_json::from_str(body).expect("a tool's JSON");
        params(&v["inputSchema"], &mut out);
        if let Some(t) = v["name"].as_str().filter(|t| t.contains('_')) {
            out.insert(t.to_string());
        }
    }
    out
}

/// Every `.rs` file under `root`'s [`DIRS`], as (path relative to `root` with `/`,
/// text), in path order; `target/` directories are skipped.
fn sources(root: &Path) -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "target") {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for d in DIRS {
        walk(&root.join(d), &mut files);
    }
    let mut out: Vec<(String, String)> = files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// The core crate a path is in (`crates/cairn-owl/src/x.rs` → `cairn_owl`).
fn core_crate(path: &str) -> Option<String> {
    let rest = path.strip_prefix("crates/")?;
    Some(rest.split('/').next()?.replace('-', "_"))
}

/// Every rule over the tree at `root`; `wire` the names of the wire.
fn check_tree(root: &Path, wire: &BTreeSet<String>) -> Vec<Violation> {
    let mut out = Vec::new();
    for (path, text) in sources(root) {
        check_file(&path, &text, wire, &mut out);
    }
    // A core crate's manifest depends on no Cairn crate either.
    if let Ok(rd) = std::fs::read_dir(root.join("crates")) {
        for e in rd.flatten() {
            let manifest = e.path().join("Cargo.toml");
            let Ok(text) = std::fs::read_to_string(&manifest) else {
                continue;
            };
            let own = e.file_name().to_string_lossy().into_owned();
            let path = format!("crates/{own}/Cargo.toml");
            let mut in_deps = false;
            for (i, l) in text.lines().enumerate() {
                let l = l.trim();
                if l.starts_with('[') {
                    in_deps = l.contains("dependencies");
                    continue;
                }
                let key = l.split(['=', '.', ' ']).next().unwrap_or("");
                if in_deps && key.starts_with("cairn") && key != own {
                    out.push(Violation {
                        rule: Rule::CoreImport,
                        path: path.clone(),
                        line: i + 1,
                        what: key.to_string(),
                    });
                }
            }
        }
    }
    out.sort();
    out
}

/// The rules one file breaks, by its path relative to the repository's root.
fn check_file(path: &str, text: &str, wire: &BTreeSet<String>, out: &mut Vec<Violation>) {
    let v = |rule, line, what: &str| Violation {
        rule,
        path: path.to_string(),
        line,
        what: what.to_string(),
    };
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if !first.trim_start().starts_with("//!") {
        out.push(v(Rule::ModuleDoc, 1, first));
    }
    let lines = text.lines().count();
    if lines > MAX_LINES {
        out.push(v(Rule::Lines, lines, &lines.to_string()));
    }
    let lexed = lex(text);
    let core = core_crate(path);
    let product = path.starts_with("src/") || core.is_some();
    let pure = core.is_some() || path.starts_with("src/service/");
    let code_words = words(&lexed.code, 1);
    for (k, &(line, w, end)) in code_words.iter().enumerate() {
        if w == "unsafe" && path != "src/embed/vector.rs" {
            out.push(v(Rule::Unsafe, line, w));
        }
        if w == "sqlx" && product && !path.starts_with("src/store/") {
            out.push(v(Rule::Sqlx, line, w));
        }
        if w == "serde_json" && pure {
            out.push(v(Rule::SerdeJson, line, w));
        }
        if let Some(own) = &core {
            let is_cairn = w == "cairn" || w.starts_with("cairn_");
            let path_follows = lexed.code[end..].trim_start().starts_with("::");
            let after_use = k > 0 && matches!(code_words[k - 1].1, "use" | "crate");
            if is_cairn && w != own && (path_follows || after_use) {
                out.push(v(Rule::CoreImport, line, w));
            }
        }
    }
    // A test's strings are its inputs (queries naming the graph's property keys,
    // arguments as an agent sends them), not wire names the code speaks. A core's
    // `keys.rs` names the keys of the data the core defines (an atom's fields), which
    // a parameter may share a name with: data, read as such.
    let test_file = path.contains("/tests/") || path.ends_with("tests.rs");
    let data_keys = core.is_some() && path.ends_with("/keys.rs");
    if pure && !test_file && !data_keys {
        for (line, s) in &lexed.strings {
            for (l, w, _) in words(s, *line) {
                if wire.contains(w) {
                    out.push(v(Rule::WireName, l, w));
                }
            }
        }
    }
}

/// The allowlist: `rule path [word]` a line, `#` comments.
fn allowlist(text: &str) -> Vec<(Rule, String, String)> {
    text.lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut f = l.split_whitespace();
            let rule = f
                .next()
                .and_then(Rule::parse)
                .unwrap_or_else(|| panic!("unknown rule in {l:?}"));
            let path = f
                .next()
                .unwrap_or_else(|| panic!("no path in {l:?}"))
                .to_string();
            (rule, path, f.next().unwrap_or("").to_string())
        })
        .collect()
}

/// What is wrong with the tree given its violations and the allowlist: every
/// violation not listed, and every entry that no longer matches (the list shrinks).
fn verdict(found: &[Violation], allowed: &[(Rule, String, String)]) -> Vec<String> {
    let mut by_key: BTreeMap<_, Vec<&Violation>> = BTreeMap::new();
    for f in found {
        by_key.entry(f.key()).or_default().push(f);
    }
    let allowed: BTreeSet<_> = allowed.iter().cloned().collect();
    let mut out = Vec::new();
    for (key, vs) in &by_key {
        if !allowed.contains(key) {
            for f in vs {
                out.push(format!(
                    "{}:{}: {} ({})",
                    f.path,
                    f.line,
                    f.rule.name(),
                    f.what
                ));
            }
        }
    }
    for (rule, path, what) in &allowed {
        if !by_key.contains_key(&(*rule, path.clone(), what.clone())) {
            out.push(format!(
                "tidy_allowlist.txt: `{} {path} {what}` no longer applies: remove it",
                rule.name()
            ));
        }
    }
    out
}

#[test]
fn the_tree_keeps_its_rules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let wire = wire_names(&root.join("tests/it/snapshots"));
    assert!(
        wire.contains("projectId") && wire.contains("manage_memory"),
        "{wire:?}"
    );
    let found = check_tree(root, &wire);
    let allowed =
        allowlist(&std::fs::read_to_string(root.join("tests/it/tidy_allowlist.txt")).unwrap());
    let wrong = verdict(&found, &allowed);
    assert!(
        wrong.is_empty(),
        "the tree breaks its rules (ARCHITECTURE.md; tests/it/tidy.rs):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_lexer_sets_comments_and_literals_apart() {
    let l = lex("let a = \"sqlx // not a comment\"; // unsafe\n/* outer /* inner */ unsafe */ b'x'; 'a: loop {}\nr##\"raw \"# unsafe\"##; '\\''; x");
    assert_eq!(l.code, "let a = \"\"; \n b' '; 'a: loop {}\n\"\"; ' '; x");
    assert_eq!(
        l.strings,
        vec![
            (1, "sqlx // not a comment".to_string()),
            (3, "raw \"# unsafe".to_string())
        ]
    );
    let w: Vec<_> = words(&l.code, 1)
        .into_iter()
        .map(|(line, w, _)| (line, w))
        .collect();
    assert_eq!(
        w,
        vec![
            (1, "let"),
            (1, "a"),
            (2, "b"),
            (2, "a"),
            (2, "loop"),
            (3, "x")
        ]
    );
}

/// Each rule fires on a planted violation, at its place, and nowhere else: a tree
/// with one offender per rule and, beside each, what the rule allows.
#[test]
fn each_rule_fires_on_a_planted_violation() {
    let dir = std::env::temp_dir().join(format!("cairn-tidy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let long = format!("//! Long.\n{}", "fn f() {}\n".repeat(MAX_LINES));
    let files: &[(&str, &str)] = &[
        ("crates/cairn-x/Cargo.toml", "[package]\nname = \"cairn-x\"\n[dependencies]\ncairn-y = { path = \"../cairn-y\" }\ntime = \"0.3\"\n"),
        ("crates/cairn-x/src/lib.rs", "//! X.\nuse crate::a::B;\nuse cairn_x::c;\nfn f() { cairn::store::open(); }\n// cairn::mcp in a comment\n"),
        ("crates/cairn-x/src/wire.rs", "//! W.\nfn f() { let _ = (\"the projectId field\", \"query_container\", \"project_id\"); }\n"),
        ("crates/cairn-x/src/json.rs", "//! J.\nuse serde_json::Value;\n"),
        ("crates/cairn-x/src/tests/q.rs", "//! Q.\nconst Q: &str = \"MATCH (c {projectId: 1})\";\n"),
        ("crates/cairn-x/src/keys.rs", "//! K.\npub const PROJECT: &str = \"projectId\";\n"),
        ("src/service/keys.rs", "//! K.\npub const PROJECT: &str = \"projectId\";\n"),
        ("src/store/db.rs", "//! Store.\nuse sqlx::Any;\n"),
        ("src/service/a.rs", "//! A.\nfn f() -> sqlx::Error { todo!() }\nconst M: &str = \"pass projectId\";\n"),
        ("src/mcp/args.rs", "//! Args.\nconst P: &str = \"projectId\";\nuse serde_json::json;\n"),
        ("src/embed/vector.rs", "//! Vectors.\nunsafe fn dot() {}\n"),
        ("src/embed/other.rs", "//! Other.\n#![deny(unsafe_code)]\nfn f() { unsafe { dot() } }\n"),
        ("src/nodoc.rs", "// a plain comment first\nfn f() {}\n"),
        ("tests/it/t.rs", "//! T.\nfn f() { sqlx::query(\"SELECT 1\"); }\n"),
    ];
    for (p, text) in files {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::write(dir.join("src/long.rs"), &long).unwrap();
    let wire: BTreeSet<String> = ["projectId", "query_container"].map(String::from).into();
    let found: Vec<(&str, String, usize, String)> = check_tree(&dir, &wire)
        .into_iter()
        .map(|v| (v.rule.name(), v.path, v.line, v.what))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    let want = vec![
        (
            "core-import",
            "crates/cairn-x/Cargo.toml".to_string(),
            4,
            "cairn-y".to_string(),
        ),
        (
            "core-import",
            "crates/cairn-x/src/lib.rs".to_string(),
            4,
            "cairn".to_string(),
        ),
        (
            "sqlx",
            "src/service/a.rs".to_string(),
            2,
            "sqlx".to_string(),
        ),
        (
            "serde_json",
            "crates/cairn-x/src/json.rs".to_string(),
            2,
            "serde_json".to_string(),
        ),
        (
            "wire-name",
            "crates/cairn-x/src/wire.rs".to_string(),
            2,
            "projectId".to_string(),
        ),
        (
            "wire-name",
            "crates/cairn-x/src/wire.rs".to_string(),
            2,
            "query_container".to_string(),
        ),
        (
            "wire-name",
            "src/service/a.rs".to_string(),
            3,
            "projectId".to_string(),
        ),
        (
            "wire-name",
            "src/service/keys.rs".to_string(),
            2,
            "projectId".to_string(),
        ),
        (
            "unsafe",
            "src/embed/other.rs".to_string(),
            3,
            "unsafe".to_string(),
        ),
        (
            "module-doc",
            "src/nodoc.rs".to_string(),
            1,
            "// a plain comment first".to_string(),
        ),
        (
            "lines",
            "src/long.rs".to_string(),
            MAX_LINES + 1,
            (MAX_LINES + 1).to_string(),
        ),
    ];
    let mut want = want;
    want.sort_by_key(|w| (Rule::parse(w.0).unwrap(), w.1.clone(), w.2, w.3.clone()));
    assert_eq!(found, want);
}

/// The allowlist only shrinks: a listed offender passes, an unlisted one fails, and
/// an entry that matches nothing fails.
#[test]
fn the_allowlist_only_shrinks() {
    let v = |rule, path: &str, what: &str| Violation {
        rule,
        path: path.to_string(),
        line: 7,
        what: what.to_string(),
    };
    let found = vec![
        v(Rule::WireName, "src/service/a.rs", "projectId"),
        v(Rule::Lines, "tests/it/big.rs", "1200"),
    ];
    let listed = allowlist(
        "# why\nwire-name src/service/a.rs projectId\nlines tests/it/big.rs # until split\n",
    );
    assert!(verdict(&found, &listed).is_empty());
    let wrong = verdict(&found, &listed[..1]);
    assert_eq!(wrong, vec!["tests/it/big.rs:7: lines (1200)".to_string()]);
    let wrong = verdict(&found[..1], &listed);
    assert_eq!(wrong.len(), 1);
    assert!(wrong[0].contains("no longer applies"), "{wrong:?}");
}
