//! Claim keys: which atoms compete for the same slot. A key is `(type, predicate,
//! about subject, context subject or Global)`; its canonical text is what the store's
//! partial unique index (one ACTIVE atom per key) is built on. Also the normal forms
//! used to decide that two claims say the same thing: predicates in `snake_case`,
//! values and statements folded for comparison. Knows nothing of evidence or status.

use std::fmt;

use super::model::{AtomValue, Context, MemoryAtom, MemoryAtomType, SubjectId};
use super::wire::push_uuid;

/// Longest predicate after normalisation, in characters.
pub const MAX_PREDICATE: usize = 128;

/// A normalised predicate: ASCII `snake_case`, 1 to 128 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Predicate(String);

/// Why a text cannot be a predicate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PredicateError {
    /// Nothing left once separators are removed.
    Empty,
    /// Longer than [`MAX_PREDICATE`] once normalised.
    TooLong(usize),
    /// Holds a letter or digit outside ASCII, which `snake_case` keys do not take.
    NotAscii(char),
}

impl fmt::Display for PredicateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PredicateError::Empty => f.write_str(
                "the predicate has no letters or digits: send a snake_case key such as latest_version",
            ),
            PredicateError::TooLong(n) => write!(
                f,
                "the predicate is {n} characters once normalised: send at most {MAX_PREDICATE}"
            ),
            PredicateError::NotAscii(c) => write!(
                f,
                "the predicate holds `{c}`: use ASCII letters, digits and underscores (latest_version)"
            ),
        }
    }
}

impl std::error::Error for PredicateError {}

impl Predicate {
    /// Normalises a predicate: lower case, words joined by `_`. A run of anything that
    /// is not an ASCII letter or digit is one separator, and a lower-case letter or
    /// digit followed by a capital starts a new word, so `Latest Version`,
    /// `latest-version` and `latestVersion` all give `latest_version`.
    pub fn normalise(raw: &str) -> Result<Predicate, PredicateError> {
        let mut out = String::with_capacity(raw.len());
        let mut prev_lower_or_digit = false;
        let mut pending_sep = false;
        for c in raw.chars() {
            if c.is_ascii_alphanumeric() {
                let boundary = c.is_ascii_uppercase() && prev_lower_or_digit;
                if (pending_sep || boundary) && !out.is_empty() {
                    out.push('_');
                }
                pending_sep = false;
                out.push(c.to_ascii_lowercase());
                prev_lower_or_digit = c.is_ascii_lowercase() || c.is_ascii_digit();
            } else if c.is_alphanumeric() {
                return Err(PredicateError::NotAscii(c));
            } else {
                pending_sep = true;
                prev_lower_or_digit = false;
            }
        }
        if out.is_empty() {
            return Err(PredicateError::Empty);
        }
        if out.len() > MAX_PREDICATE {
            return Err(PredicateError::TooLong(out.len()));
        }
        Ok(Predicate(out))
    }

    /// The normalised text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The slot an atom claims: at most one ACTIVE atom per key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClaimKey {
    /// The atom type: an Assumption and a Fact on the same predicate are two slots.
    pub atom_type: MemoryAtomType,
    /// The normalised predicate.
    pub predicate: Predicate,
    /// The subject it is about, if any.
    pub about: Option<SubjectId>,
    /// Where it applies.
    pub context: Context,
}

impl ClaimKey {
    /// The key of an atom, or None when it has no predicate (such an atom claims no
    /// slot and never collides; duplicates of it are still found by statement).
    pub fn of(atom: &MemoryAtom) -> Option<ClaimKey> {
        Some(ClaimKey {
            atom_type: atom.atom_type(),
            predicate: atom.predicate.clone()?,
            about: atom.about,
            context: atom.context,
        })
    }

    /// The canonical text, `Type|predicate|about|context`: the type's wire spelling,
    /// the predicate, the about subject's dashed UUID or `-`, the context subject's
    /// dashed UUID or `global`. A predicate holds no `|`, so the text parses back
    /// unambiguously; equal keys give equal texts and different keys different ones.
    pub fn canonical(&self) -> String {
        let mut out = String::with_capacity(64 + self.predicate.0.len());
        write_canonical(
            &mut out,
            self.atom_type,
            &self.predicate,
            self.about,
            self.context,
        );
        out
    }

    /// The same key for another atom type (a Decision resolving a contest on an
    /// Assumption's predicate uses this).
    pub fn with_type(&self, atom_type: MemoryAtomType) -> ClaimKey {
        ClaimKey {
            atom_type,
            ..self.clone()
        }
    }
}

impl fmt::Display for ClaimKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

fn write_canonical(
    out: &mut String,
    atom_type: MemoryAtomType,
    predicate: &Predicate,
    about: Option<SubjectId>,
    context: Context,
) {
    out.push_str(atom_type.as_wire());
    out.push('|');
    out.push_str(&predicate.0);
    out.push('|');
    match about {
        Some(s) => push_uuid(out, s.0),
        None => out.push('-'),
    }
    out.push('|');
    match context {
        Context::Global => out.push_str("global"),
        Context::In(s) => push_uuid(out, s.0),
    }
}

/// Writes an atom's canonical key into `out` (cleared first) without building the
/// key; false, with `out` empty, when the atom has no predicate.
pub fn write_key(atom: &MemoryAtom, out: &mut String) -> bool {
    out.clear();
    match &atom.predicate {
        Some(p) => {
            write_canonical(out, atom.atom_type(), p, atom.about, atom.context);
            true
        }
        None => false,
    }
}

/// Folds a text value for comparison as the collision rule states it, ignoring case
/// and spaces: lower case, every whitespace character dropped, so `10 MB`, `10mb` and
/// ` 10 Mb ` are one value.
pub fn fold_text(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Folds a statement for duplicate detection: lower case, every run of characters
/// that are not letters or digits as one space, trimmed; so `Always run tests.` and
/// `always run  tests` are the same statement.
pub fn normalise_statement(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut sep = false;
    for c in s.chars() {
        if c.is_alphanumeric() {
            if sep && !out.is_empty() {
                out.push(' ');
            }
            sep = false;
            out.extend(c.to_lowercase());
        } else {
            sep = true;
        }
    }
    out
}

/// What a claim says, folded so equal claims compare equal: a text value folded, a
/// number in its shortest form, a subject as `@uuid`; an atom without a value claims
/// its normalised statement.
pub fn claim_value(value: Option<&AtomValue>, statement: &str) -> String {
    match value {
        Some(AtomValue::Text(t)) => fold_text(t),
        Some(AtomValue::Number(n)) => format!("{n}"),
        Some(AtomValue::Bool(b)) => b.to_string(),
        Some(AtomValue::Subject(s)) => format!("@{s}"),
        None => format!("\u{1}{}", normalise_statement(statement)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_normalise_to_snake_case() {
        let n = |s: &str| Predicate::normalise(s).map(|p| p.as_str().to_string());
        assert_eq!(n("Latest Version").unwrap(), "latest_version");
        assert_eq!(n("latestVersion").unwrap(), "latest_version");
        assert_eq!(n("  latest--version__ ").unwrap(), "latest_version");
        assert_eq!(
            n("default_validation_lib").unwrap(),
            "default_validation_lib"
        );
        assert_eq!(n("HTTP Server").unwrap(), "http_server");
        assert_eq!(n("uses count 2").unwrap(), "uses_count_2");
        assert_eq!(n(" -- "), Err(PredicateError::Empty));
        assert_eq!(n("größe"), Err(PredicateError::NotAscii('ö')));
        assert_eq!(n(&"a".repeat(128)).unwrap().len(), 128);
        assert_eq!(n(&"a".repeat(129)), Err(PredicateError::TooLong(129)));
    }

    #[test]
    fn canonical_keys_are_distinct_for_distinct_keys() {
        let p = Predicate::normalise("latest_version").unwrap();
        let k = ClaimKey {
            atom_type: MemoryAtomType::Assumption,
            predicate: p.clone(),
            about: Some(SubjectId(0xab)),
            context: Context::Global,
        };
        assert_eq!(
            k.canonical(),
            "Assumption|latest_version|00000000-0000-0000-0000-0000000000ab|global"
        );
        let scoped = ClaimKey {
            context: Context::In(SubjectId(1)),
            ..k.clone()
        };
        assert_ne!(k.canonical(), scoped.canonical());
        let unabout = ClaimKey {
            about: None,
            ..k.clone()
        };
        assert_eq!(unabout.canonical(), "Assumption|latest_version|-|global");
        assert_ne!(k.canonical(), k.with_type(MemoryAtomType::Fact).canonical());
    }

    #[test]
    fn claim_values_fold_case_and_space() {
        let v = |s: &str| claim_value(Some(&AtomValue::Text(s.into())), "x");
        assert_eq!(v(" Zod  4.2 "), v("zod 4.2"));
        assert_eq!(v("10 MB"), v("10mb"));
        assert_eq!(v("10\u{a0}Mb"), v(" 10MB "));
        assert_ne!(v("10 MB"), v("10 GB"));
        assert_ne!(v("4.2"), v("4.3"));
        assert_eq!(claim_value(Some(&AtomValue::Number(3.0)), ""), "3");
        assert_eq!(
            claim_value(None, "Always run tests."),
            claim_value(None, "always run   tests")
        );
        assert_ne!(
            claim_value(None, "3"),
            claim_value(Some(&AtomValue::Number(3.0)), "")
        );
        assert_eq!(
            normalise_statement("Never `git push --force`!"),
            "never git push force"
        );
    }
}
