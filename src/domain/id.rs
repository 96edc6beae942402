//! Identifiers: UUID v7, accepted with or without dashes, answered canonical.

use super::Invalid;

/// A fresh time-ordered id (UUID v7) in canonical lower-case dashed form. The uuid
/// crate keeps the ids of one process increasing within a millisecond.
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Parses an id given by a caller into the canonical form stored in the database.
pub fn parse(parameter: impl std::fmt::Display, raw: &str) -> Result<String, Invalid> {
    let s = raw.trim();
    let ok_shape =
        (s.len() == 32 || s.len() == 36) && s.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    match uuid::Uuid::try_parse(s) {
        Ok(u) if ok_shape => Ok(u.to_string()),
        _ => Err(Invalid::new(
            parameter,
            format!(
                "'{}' is not a UUID (32 hex digits, dashes optional)",
                super::text::clip(raw, 60)
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_version_7_canonical_and_increasing() {
        let ids: Vec<String> = (0..1000).map(|_| new_id()).collect();
        for w in ids.windows(2) {
            assert!(w[0] < w[1], "{} after {}", w[1], w[0]);
        }
        let u = uuid::Uuid::parse_str(&ids[0]).unwrap();
        assert_eq!(u.get_version_num(), 7);
        assert_eq!(parse("id", &ids[0].replace('-', "")).unwrap(), ids[0]);
        assert!(parse("id", "not-a-uuid").is_err());
    }
}
