//! The knowledge graph's nouns: molecules group atoms, atoms own path patterns and
//! hold knowledge, changelog entries record how an area evolved. Also the two pieces
//! of text handling the graph needs: appending knowledge with its separator, and
//! pulling file paths out of a task's free-form "Context Files" section.

/// Which of the two graph nodes a call is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    Atom,
    Molecule,
}

impl NodeKind {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "atom" => Some(Self::Atom),
            "molecule" => Some(Self::Molecule),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Atom => "atom",
            Self::Molecule => "molecule",
        }
    }
}

/// A lightweight edge stored alongside the knowledge it describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    pub id: String,
    pub reason: String,
}

#[derive(Debug, Clone)]
pub struct Atom {
    pub id: String,
    pub project_id: String,
    pub molecule_id: Option<String>,
    pub name: String,
    pub paths: Vec<String>,
    pub knowledge: String,
    pub related: Vec<Related>,
    pub created_by_task_id: String,
    pub last_task_id: String,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// What the path matcher keeps of an atom: enough to match, name, order and group
/// it. Its knowledge is read for the atoms a call matches, not for every atom.
#[derive(Debug, Clone)]
pub struct AtomPaths {
    pub id: String,
    pub molecule_id: Option<String>,
    pub name: String,
    pub paths: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Molecule {
    pub id: String,
    pub project_id: String,
    pub name: String,
    pub knowledge: String,
    pub related: Vec<Related>,
    pub created_by_task_id: String,
    pub last_task_id: String,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone)]
pub struct ChangelogEntry {
    pub id: String,
    pub parent_type: NodeKind,
    pub parent_id: String,
    pub task_id: String,
    pub summary: String,
    pub created_at: String,
}

/// Knowledge after `append`: the old text, then a separator naming when and for which
/// task, then the new text. Self-documenting without a changelog entry.
pub fn append_knowledge(old: &str, new: &str, timestamp: &str, task_id: &str) -> String {
    let sep = format!("---[{timestamp} task:{task_id}]---");
    if old.trim().is_empty() {
        format!("{sep}\n{new}")
    } else {
        format!("{old}\n\n{sep}\n{new}")
    }
}

/// File paths named in a "Context Files" section: one per line, comma-separated, or
/// both. Markdown decoration (bullets, checkboxes, backticks, quotes, link syntax) is
/// stripped; comments, headings, prose, labels (`Files:`) and URLs are skipped; a
/// trailing `:12` or `:12-30` line reference and any description after the path are
/// dropped. A word is a path when it has a slash or an extension, or when it stands
/// alone or before a description (`Makefile`, `- Dockerfile — the image`). Paths are
/// answered as written (absolute ones too): the caller places them in the repository.
pub fn context_paths(content: &str) -> Vec<String> {
    let mut out: Vec<String> = context_paths_all(content);
    // The sample the built-in templates once copied into every task names no file.
    out.retain(|p| !PLACEHOLDERS.contains(&p.as_str()));
    out
}

/// The placeholder paths older built-in templates left in sections nobody edited.
const PLACEHOLDERS: &[&str] = &["src/example/file.rs", "src/example/"];

fn context_paths_all(content: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_comment = false;
    for line in content.lines() {
        let mut l = line.trim();
        // Fence lines carry no path; the lines inside a fence are read like any other.
        if l.starts_with("```") || l.starts_with("~~~") {
            continue;
        }
        if in_comment {
            if let Some(i) = l.find("-->") {
                in_comment = false;
                l = l[i + 3..].trim();
            } else {
                continue;
            }
        }
        if let Some(i) = l.find("<!--") {
            let rest = &l[i + 4..];
            match rest.find("-->") {
                Some(j) => {
                    let after = rest[j + 3..].to_string();
                    let before = l[..i].to_string();
                    collect_line(&format!("{before} {after}"), &mut out);
                    continue;
                }
                None => {
                    in_comment = true;
                    l = l[..i].trim();
                }
            }
        }
        if l.starts_with('#') || l.starts_with("//") || l.starts_with(';') || l.starts_with('>') {
            continue;
        }
        collect_line(l, &mut out);
    }
    out
}

fn collect_line(line: &str, out: &mut Vec<String>) {
    for part in line.split(',') {
        if let Some(p) = path_in(part) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
}

/// The path a fragment of a line names, if any.
fn path_in(fragment: &str) -> Option<String> {
    let mut s = fragment.trim();
    // List bullets and numbering, then checkboxes.
    for b in ["- ", "* ", "+ ", "• "] {
        if let Some(r) = s.strip_prefix(b) {
            s = r.trim_start();
        }
    }
    if let Some(i) = s.find(". ") {
        if i > 0 && s[..i].chars().all(|c| c.is_ascii_digit()) {
            s = s[i + 2..].trim_start();
        }
    }
    for cb in ["[ ] ", "[x] ", "[X] "] {
        if let Some(r) = s.strip_prefix(cb) {
            s = r.trim_start();
        }
    }
    // A markdown link `[text](path)` names its target.
    if let (Some(open), Some(close)) = (s.find("]("), s.find(')')) {
        if open < close {
            s = &s[open + 2..close];
        }
    }
    // The path is the first word; what follows is description.
    let mut words = s.split_whitespace();
    let raw = words.next()?;
    let next = words.next();
    let word =
        raw.trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | '*' | '(' | ')' | '<' | '>'));
    // `Files:` alone is a label, not a file named "Files".
    let label = word.ends_with(':') && next.is_none();
    let word = word.trim_end_matches([':', ';', '.', '—', '-']);
    if word.contains("://") || word.starts_with("mailto:") || word.is_empty() {
        return None;
    }
    let word = strip_line_ref(word);
    // A bare name counts when nothing but a description follows it.
    let described = match next {
        None => !label,
        Some(n) => matches!(n, "—" | "–" | "-" | ":" | "|") || n.starts_with('('),
    };
    let looks_like_path = word.contains('/') || has_extension(word) || described;
    if !looks_like_path || word.len() > 1024 {
        return None;
    }
    if !word
        .chars()
        .all(|c| c.is_alphanumeric() || "/._-@+~[]{}*?!=$%&#^\\:".contains(c))
    {
        return None;
    }
    Some(word.to_string())
}

/// `src/a.rs:12` and `src/a.rs:12-30` name the file `src/a.rs`.
fn strip_line_ref(w: &str) -> &str {
    if let Some(i) = w.rfind(':') {
        let tail = &w[i + 1..];
        if !tail.is_empty() && tail.chars().all(|c| c.is_ascii_digit() || c == '-') {
            return &w[..i];
        }
    }
    w
}

fn has_extension(w: &str) -> bool {
    match w.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && !ext.is_empty()
                && ext.len() <= 10
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_paths_from_lines_commas_and_markdown() {
        let text = "\
# Files
- `src/payments/webhook-handler.ts` — the handler
- src/payments/stripe-gateway.ts:40-80
src/a.ts, src/b.ts,docs/x.md
<!-- src/hidden.ts -->
// not/this.ts
* [ ] [the config](config/app.toml)
Some prose that is not a path.
See https://example.com/a.ts
1. lib/util.rs
Cargo.toml
Makefile
- Dockerfile — the image
Files:
/home/me/repo/src/zran.c
";
        assert_eq!(
            context_paths(text),
            vec![
                "src/payments/webhook-handler.ts",
                "src/payments/stripe-gateway.ts",
                "src/a.ts",
                "src/b.ts",
                "docs/x.md",
                "config/app.toml",
                "lib/util.rs",
                "Cargo.toml",
                "Makefile",
                "Dockerfile",
                "/home/me/repo/src/zran.c",
            ]
        );
    }

    #[test]
    fn append_writes_the_separator() {
        let k = append_knowledge("old", "new", "2026-01-01T00:00:00.000Z", "t1");
        assert_eq!(k, "old\n\n---[2026-01-01T00:00:00.000Z task:t1]---\nnew");
    }
}
