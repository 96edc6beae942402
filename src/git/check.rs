//! What Cairn hands to git, checked before any process starts: repository paths
//! (index entries, pathspecs, tree entries), branch names and object ids. Every
//! method of the adapter checks its inputs here, and callers that name a parameter
//! check with the same functions first, so an agent's text or a repository's file
//! name never reaches git plumbing unchecked.
//!
//! Git's own formats are line-based (`update-index --index-info`, `--stdin-paths`,
//! `cat-file --batch`), so a line break in a path or id would add an entry of the
//! sender's choosing; a leading `-` would read as an option. The rules here are
//! stricter than git's where git allows what no ontology page or reference needs.

/// Characters refused in every path and ref: control characters (C0, DEL, C1, so
/// LF, CR, TAB and NUL among them) and the Unicode line and paragraph separators.
fn is_forbidden(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

fn named(c: char) -> String {
    format!("U+{:04X}", c as u32)
}

/// Whether `seg` names git's own directory, however a file system might spell it:
/// any case, trailing dots or spaces (Windows drops them), or the 8.3 short name.
fn is_dot_git(seg: &str) -> bool {
    let t = seg.trim_end_matches(['.', ' ']);
    t.eq_ignore_ascii_case(".git") || t.eq_ignore_ascii_case("git~1")
}

/// Checks that `text` holds no control character (LF, CR, TAB and NUL among them)
/// and no Unicode line or paragraph separator: the rule every path and ref below
/// starts with, for a caller to apply to raw input before trimming it.
pub fn check_text(text: &str) -> Result<(), String> {
    match text.chars().find(|&c| is_forbidden(c)) {
        Some(c) => Err(format!(
            "holds {} (a control character or line break); give one line of printable text",
            named(c)
        )),
        None => Ok(()),
    }
}

/// Checks a repository path (`pages/Vision Transformer.md`, a pages folder): not
/// empty, relative, `/`-separated with no empty, `.` or `..` segment, no `.git`
/// segment, no backslash, no leading `-`, no control character or line separator.
/// The error says what is wrong, for a caller to put after its parameter's name.
pub fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("is empty".into());
    }
    check_text(path)?;
    if path.starts_with('-') {
        return Err(format!(
            "'{path}' starts with '-', which git would read as an option"
        ));
    }
    if path.starts_with('/') {
        return Err(format!(
            "'{path}' is absolute; give a path relative to the repository root"
        ));
    }
    if path.contains('\\') {
        return Err(format!(
            "'{path}' holds a backslash; separate folders with '/'"
        ));
    }
    for seg in path.split('/') {
        match seg {
            "" => {
                return Err(format!(
                    "'{path}' has an empty segment ('//' or a trailing '/')"
                ))
            }
            "." | ".." => {
                return Err(format!(
                    "'{path}' has a '{seg}' segment; paths stay inside the repository"
                ))
            }
            s if is_dot_git(s) => return Err(format!("'{path}' points into .git")),
            _ => {}
        }
    }
    Ok(())
}

/// Checks a branch name (what follows `refs/heads/`) by git's rules for ref names
/// (`git check-ref-format --branch`), and refuses what git allows but Cairn never
/// writes: a leading `-`, `HEAD`, control characters beyond ASCII and the Unicode
/// line separators.
pub fn check_branch(name: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("'{name}' is not a branch name: {why}"));
    if name.is_empty() {
        return Err("a branch name must not be empty".into());
    }
    if let Some(c) = name.chars().find(|&c| is_forbidden(c)) {
        return bad(&format!("it holds {}", named(c)));
    }
    if let Some(c) = name
        .chars()
        .find(|c| matches!(c, ' ' | '~' | '^' | ':' | '?' | '*' | '[' | '\\'))
    {
        return bad(&format!("git refuses '{c}' in ref names"));
    }
    if name.starts_with('-') {
        return bad("it starts with '-'");
    }
    if name == "@" || name == "HEAD" {
        return bad("it is reserved");
    }
    if name.contains("..") || name.contains("@{") {
        return bad("git refuses '..' and '@{' in ref names");
    }
    if name.ends_with('.') {
        return bad("it ends with '.'");
    }
    for seg in name.split('/') {
        if seg.is_empty() {
            return bad("it has an empty segment ('//' or a leading or trailing '/')");
        }
        if seg.starts_with('.') {
            return bad("a segment starts with '.'");
        }
        if seg.ends_with(".lock") {
            return bad("a segment ends with '.lock'");
        }
    }
    Ok(())
}

/// Checks an object id: 40 (SHA-1) or 64 (SHA-256) lower-case hexadecimal digits.
pub fn check_oid(id: &str) -> Result<(), String> {
    let hex = id
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if hex && (id.len() == 40 || id.len() == 64) {
        Ok(())
    } else {
        let shown: String = id.chars().take(70).collect();
        Err(format!("'{}' is not a git object id", shown.escape_debug()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_could_add_entries_or_escape_are_refused() {
        for ok in [
            "pages/Vision Transformer.md",
            "a.md",
            "pages/Über #1.md",
            ".github/x.md",
            "a/-b.md",
            "pages/.gitkeep",
        ] {
            assert_eq!(check_path(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "pages\n100755 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\t.github/workflows/x.yml",
            "pages\r",
            "pa\tges",
            "a\0b",
            "pages\u{2028}x",
            "pages\u{2029}x",
            "pages\u{85}x",
            "../pages",
            "pages/../x",
            "./pages",
            "pages//x",
            "pages/",
            "/etc",
            ".git/hooks",
            "pages/.GIT/config",
            ".git./x",
            ".git /x",
            "GIT~1/x",
            "-x",
            "a\\b",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn object_ids_are_hex_of_either_length() {
        assert!(check_oid("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391").is_ok());
        assert!(check_oid(&"a".repeat(64)).is_ok());
        for bad in [
            "",
            "HEAD",
            "e69de29",
            "-e69de29bb2d1d6434b8b29ae775ad8c2e48c539",
            &"A".repeat(40),
            &"a\n".repeat(20),
        ] {
            assert!(check_oid(bad).is_err(), "{bad:?}");
        }
    }

    /// The names git accepts as branches are the names accepted here, apart from the
    /// few refused on purpose.
    #[test]
    fn branch_names_follow_git_check_ref_format() {
        let names = [
            "main",
            "ontology/coder-019b",
            "feature/a.b_c-d",
            "Über",
            "a/b/c",
            "x@y",
            "a..b",
            "a.lock",
            "a/b.lock/c",
            ".a",
            "a/.b",
            "a.",
            "a/",
            "/a",
            "a//b",
            "a b",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[b",
            "a\\b",
            "a@{1}",
            "a\tb",
            "a\nb",
            "a\u{7f}",
            "",
            "a.lock/b",
            "v1.0",
        ];
        for n in names {
            let git = std::process::Command::new("git")
                .args(["check-ref-format", "--branch", n])
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .expect("git runs");
            assert_eq!(check_branch(n).is_ok(), git.status.success(), "{n:?}");
        }
        // Allowed by git, refused here.
        for n in ["-x", "@", "HEAD", "a\u{2028}b", "a\u{85}b"] {
            assert!(check_branch(n).is_err(), "{n:?}");
        }
    }
}
