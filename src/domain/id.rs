//! Identifiers: UUID v7, accepted with or without dashes, answered canonical.

use crate::error::{Error, Result};

/// A fresh time-ordered id in canonical lower-case dashed form.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Parses an id given by a caller into the canonical form stored in the database.
pub fn parse(parameter: &str, raw: &str) -> Result<String> {
    let s = raw.trim();
    let ok_shape =
        (s.len() == 32 || s.len() == 36) && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    match uuid::Uuid::try_parse(s) {
        Ok(u) if ok_shape => Ok(u.to_string()),
        _ => Err(Error::validation(
            parameter,
            format!(
                "'{}' is not a UUID (32 hex digits, dashes optional)",
                crate::domain::container::clip(raw, 60)
            ),
        )),
    }
}
