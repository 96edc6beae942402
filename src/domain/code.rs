//! The code ontology's plain types (docs/code.md): scopes, categories, entities,
//! references, diff hunks, and the pure rules about them (scope depth, which reference
//! kinds a scope takes, hunk overlap and shift, repository-relative paths). No SQL, no MCP,
//! no git: callers hand in the hunks and file text.

/// The five static scopes, from the top of the composition hierarchy down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    Domain,
    Feature,
    Namespace,
    Component,
    Unit,
}

impl Scope {
    pub const ALL: [Scope; 5] = [
        Scope::Domain,
        Scope::Feature,
        Scope::Namespace,
        Scope::Component,
        Scope::Unit,
    ];
    pub const NAMES: &'static [&'static str] =
        &["Domain", "Feature", "Namespace", "Component", "Unit"];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Domain => "Domain",
            Scope::Feature => "Feature",
            Scope::Namespace => "Namespace",
            Scope::Component => "Component",
            Scope::Unit => "Unit",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL
            .into_iter()
            .find(|x| x.as_str().eq_ignore_ascii_case(s.trim()))
    }

    /// 1 for Domain … 5 for Unit: a child is always deeper than its parent.
    pub fn depth(self) -> i64 {
        self as i64 + 1
    }

    /// Which reference kinds an entity of this scope may hold (docs/code.md, the scope
    /// table).
    pub fn allows(self, kind: RefKind) -> bool {
        match self {
            Scope::Domain | Scope::Feature => kind == RefKind::Text,
            Scope::Namespace => true,
            Scope::Component | Scope::Unit => kind == RefKind::Code,
        }
    }

    /// Code links (CALLS, …) are only for Component and Unit entities.
    pub fn may_link(self) -> bool {
        matches!(self, Scope::Component | Scope::Unit)
    }

    pub fn default_categories(self) -> &'static [&'static str] {
        match self {
            Scope::Domain => &["core", "supporting", "infrastructure"],
            Scope::Feature => &["capability", "workflow"],
            Scope::Namespace => &["module", "package", "directory"],
            Scope::Component => &["struct", "class", "trait", "interface", "enum", "service"],
            Scope::Unit => &["function", "method", "constant", "field", "test"],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    Code,
    Text,
}

impl RefKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RefKind::Code => "code",
            RefKind::Text => "text",
        }
    }
    pub fn parse(s: &str) -> Option<RefKind> {
        match s {
            "code" => Some(RefKind::Code),
            "text" => Some(RefKind::Text),
            _ => None,
        }
    }
}

pub const LINK_TYPES: &[&str] = &["CALLS", "IMPORTS", "IMPLEMENTS", "INSTANTIATES"];

#[derive(Debug, Clone)]
pub struct Repo {
    pub id: String,
    pub project_id: String,
    pub repo_path: String,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone)]
pub struct Category {
    pub id: String,
    pub project_id: String,
    pub scope: Scope,
    pub name: String,
    pub description: Option<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone)]
pub struct Entity {
    pub id: String,
    pub project_id: String,
    pub name: String,
    pub description: String,
    pub scope: Scope,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone)]
pub struct Reference {
    pub id: String,
    pub project_id: String,
    pub kind: RefKind,
    pub document_path: String,
    pub start_line: i64,
    pub end_line: i64,
    pub lsp_symbol: Option<String>,
    pub lsp_kind: Option<i64>,
    pub anchor: Option<String>,
    pub description: String,
    pub content_type: String,
    pub commit_sha: String,
    pub blob_sha: String,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// A diff hunk without context lines, in git's numbering: `old_lines == 0` is an
/// insertion after line `old_start`, `new_lines == 0` a deletion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: i64,
    pub old_lines: i64,
    pub new_start: i64,
    pub new_lines: i64,
    /// The hunk's `-`/`+` lines as git printed them.
    pub text: String,
}

impl Hunk {
    /// Whether the hunk touches lines `start..=end` of the old file. An insertion
    /// counts when it lands strictly between two lines of the range; one just above
    /// or below only shifts it.
    pub fn overlaps(&self, start: i64, end: i64) -> bool {
        if self.old_lines == 0 {
            start <= self.old_start && self.old_start < end
        } else {
            let last = self.old_start + self.old_lines - 1;
            start <= last && end >= self.old_start
        }
    }

    /// Whether the hunk lies wholly above line `start` of the old file.
    pub fn above(&self, start: i64) -> bool {
        if self.old_lines == 0 {
            self.old_start < start
        } else {
            self.old_start + self.old_lines - 1 < start
        }
    }
}

/// How far the hunks above a range move it (lines added minus lines removed).
pub fn shift(start: i64, hunks: &[Hunk]) -> i64 {
    hunks
        .iter()
        .filter(|h| h.above(start))
        .map(|h| h.new_lines - h.old_lines)
        .sum()
}

/// The extension of a path, lower-cased (`""` when none).
pub fn extension(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    match file.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext.to_ascii_lowercase(),
        _ => String::new(),
    }
}

/// The language of a code file by extension, as LSP `languageId` and in `code:<lang>`.
pub fn language(path: &str) -> String {
    let ext = extension(path);
    match ext.as_str() {
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "rs" => "rust",
        "py" => "python",
        "ts" | "tsx" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "go" => "go",
        "" => "plain",
        other => other,
    }
    .to_string()
}

/// `code:<lang>` for code references; `markdown` or `text` for text references.
pub fn content_type(kind: RefKind, path: &str) -> String {
    match kind {
        RefKind::Code => format!("code:{}", language(path)),
        RefKind::Text => match extension(path).as_str() {
            "md" | "markdown" => "markdown".into(),
            _ => "text".into(),
        },
    }
}

/// Whether an anchor looks like a markdown heading (`## Design`).
pub fn valid_anchor(anchor: &str) -> bool {
    let t = anchor.trim();
    let hashes = t.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes) && t[hashes..].starts_with(' ') && !t[hashes..].trim().is_empty()
}

/// The 1-based line of the heading `anchor` in `text`, if present (exact heading
/// text, surrounding whitespace ignored).
pub fn find_heading(text: &str, anchor: &str) -> Option<i64> {
    let want = anchor.trim();
    text.lines()
        .position(|l| l.trim_end() == want || l.trim() == want)
        .map(|i| i as i64 + 1)
}

/// Which entities a `find_entities` call keeps, and the page it answers.
#[derive(Debug)]
pub struct EntityFilter<'a> {
    pub project_id: &'a str,
    pub scope: Option<Scope>,
    pub category_id: Option<&'a str>,
    pub parent_id: Option<&'a str>,
    pub document_path: Option<&'a str>,
    pub name: Option<&'a str>,
    pub limit: i64,
    pub offset: i64,
}

/// An edge seen from one entity: the other end, its type, direction and note.
#[derive(Debug, Clone)]
pub struct EntityEdge {
    pub other: Entity,
    pub kind: String,
    pub outgoing: bool,
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(os: i64, ol: i64, ns: i64, nl: i64) -> Hunk {
        Hunk {
            old_start: os,
            old_lines: ol,
            new_start: ns,
            new_lines: nl,
            text: String::new(),
        }
    }

    #[test]
    fn overlap_and_shift() {
        // Insertion of 2 lines after line 3: above a range at 10..20.
        let ins = h(3, 0, 4, 2);
        assert!(!ins.overlaps(10, 20));
        assert!(ins.above(10));
        assert_eq!(shift(10, std::slice::from_ref(&ins)), 2);
        // Insertion inside the range.
        assert!(h(12, 0, 13, 1).overlaps(10, 20));
        // Insertion right after the last line: below, not inside.
        assert!(!h(20, 0, 21, 1).overlaps(10, 20));
        // Change touching the first line.
        assert!(h(8, 3, 8, 1).overlaps(10, 20));
        assert!(!h(21, 2, 21, 0).overlaps(10, 20));
    }

    #[test]
    fn anchors() {
        assert!(valid_anchor("## Design"));
        assert!(!valid_anchor("Design"));
        assert!(!valid_anchor("##"));
        assert_eq!(find_heading("a\n## Design\n", "## Design"), Some(2));
    }
}
