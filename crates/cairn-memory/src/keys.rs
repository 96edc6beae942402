//! The keys of an atom as a caller writes it and as this crate reads it: the names of
//! the common fields (the type-specific ones are in `validate::type_fields`). They are
//! this crate's format, which the tool that takes an atom passes through as it is; a
//! parameter of that tool may share a name with one (`confirmedBy`), which is why the
//! tree's wire-name rule (tests/it/tidy.rs) reads a core's `keys.rs` as data.

/// The atom's type (Fact, Decision, ...).
pub const TYPE: &str = "type";
/// The statement, in a sentence.
pub const STATEMENT: &str = "statement";
/// What the statement says of its subject, `snake_case`.
pub const PREDICATE: &str = "predicate";
/// The predicate's value: text, number or boolean.
pub const VALUE: &str = "value";
/// The predicate's value when it is a subject.
pub const VALUE_SUBJECT: &str = "valueSubject";
/// The subject the atom is about.
pub const ABOUT: &str = "about";
/// Where the atom holds: a subject, or `global`.
pub const CONTEXT: &str = "context";
/// A short title.
pub const TITLE: &str = "title";
/// A summary.
pub const SUMMARY: &str = "summary";
/// Free notes.
pub const NOTES: &str = "notes";
/// Labels.
pub const TAGS: &str = "tags";
/// Confidence, 0..1.
pub const CONFIDENCE: &str = "confidence";
/// low, med or high.
pub const IMPORTANCE: &str = "importance";
/// When the statement starts to hold.
pub const VALID_FROM: &str = "validFrom";
/// When it stops holding.
pub const VALID_TO: &str = "validTo";
/// Days between reviews.
pub const REVIEW_INTERVAL_DAYS: &str = "reviewIntervalDays";
/// Who wrote it.
pub const AUTHOR: &str = "author";
/// Who confirmed it (an explicit confirmation).
pub const CONFIRMED_BY: &str = "confirmedBy";

/// Every common field, in the order an error lists them.
pub const COMMON_ATOM_FIELDS: &[&str] = &[
    TYPE,
    STATEMENT,
    PREDICATE,
    VALUE,
    VALUE_SUBJECT,
    ABOUT,
    CONTEXT,
    TITLE,
    SUMMARY,
    NOTES,
    TAGS,
    CONFIDENCE,
    IMPORTANCE,
    VALID_FROM,
    VALID_TO,
    REVIEW_INTERVAL_DAYS,
    AUTHOR,
    CONFIRMED_BY,
];
