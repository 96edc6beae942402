//! Wire spellings shared by the memory model: the enum machinery that parses a value
//! case-insensitively and names the allowed spellings when it fails, identifiers held
//! as 128-bit numbers and written as dashed UUIDs, and timestamps as RFC 3339 text.
//! It knows nothing of atoms or subjects, nor of JSON.

use std::fmt;

use time::{Date, Month, OffsetDateTime, UtcOffset};

/// A value that is not one of an enum's spellings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownValue {
    /// What was being parsed, e.g. `atom type`.
    pub what: &'static str,
    /// The text that was sent.
    pub got: String,
    /// Every accepted spelling, in declaration order.
    pub allowed: &'static [&'static str],
}

impl fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} `{}`: send one of {}",
            self.what,
            self.got,
            self.allowed.join(", ")
        )
    }
}

impl std::error::Error for UnknownValue {}

/// Compares two spellings ignoring ASCII case and the separators `-`, `_` and space,
/// so `best_practice`, `Best-practice` and `BestPractice` name the same value.
pub fn loose_eq(a: &str, b: &str) -> bool {
    let strip = |s: &str| {
        s.bytes()
            .filter(|b| !matches!(b, b'-' | b'_' | b' '))
            .map(|b| b.to_ascii_lowercase())
            .collect::<Vec<u8>>()
    };
    strip(a) == strip(b)
}

/// Declares a `Copy` enum with one wire spelling per variant, `ALL`, `WIRE`,
/// `as_wire`, a forgiving `parse` and `Display`.
macro_rules! wire_enum {
    (
        $(#[$m:meta])*
        $vis:vis enum $name:ident ($what:literal) {
            $( $(#[$vm:meta])* $var:ident = $wire:literal ),+ $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $( $(#[$vm])* $var ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// Every wire spelling, in declaration order.
            pub const WIRE: &'static [&'static str] = &[$($wire),+];

            /// The spelling sent and answered on the wire.
            pub fn as_wire(self) -> &'static str {
                match self {
                    $($name::$var => $wire),+
                }
            }

            /// Parses a spelling, ignoring case and `-`, `_`, space; the error lists
            /// the accepted spellings.
            pub fn parse(s: &str) -> Result<Self, super::wire::UnknownValue> {
                let t = s.trim();
                $(
                    if super::wire::loose_eq(t, $wire) {
                        return Ok($name::$var);
                    }
                )+
                Err(super::wire::UnknownValue {
                    what: $what,
                    got: s.to_string(),
                    allowed: Self::WIRE,
                })
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_wire())
            }
        }

        impl std::str::FromStr for $name {
            type Err = super::wire::UnknownValue;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::parse(s)
            }
        }
    };
}
pub(crate) use wire_enum;

/// A text that is not a UUID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadId {
    /// The text that was sent.
    pub got: String,
}

impl fmt::Display for BadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not an id: send a UUID (32 hex digits, dashes optional)",
            self.got
        )
    }
}

impl std::error::Error for BadId {}

/// Parses a UUID with or without dashes into its 128-bit value.
pub fn parse_uuid(s: &str) -> Result<u128, BadId> {
    let t = s.trim();
    let bad = || BadId { got: s.to_string() };
    let dashed = t.len() == 36;
    if dashed {
        let b = t.as_bytes();
        for i in [8usize, 13, 18, 23] {
            if b.get(i) != Some(&b'-') {
                return Err(bad());
            }
        }
    } else if t.len() != 32 {
        return Err(bad());
    }
    let mut v: u128 = 0;
    let mut n = 0;
    for c in t.chars().filter(|c| !(dashed && *c == '-')) {
        let d = c.to_digit(16).ok_or_else(bad)?;
        v = (v << 4) | u128::from(d);
        n += 1;
    }
    if n == 32 {
        Ok(v)
    } else {
        Err(bad())
    }
}

/// Appends a 128-bit value as a canonical lower-case dashed UUID.
pub fn push_uuid(out: &mut String, v: u128) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for i in 0..32u32 {
        if matches!(i, 8 | 12 | 16 | 20) {
            out.push('-');
        }
        let nibble = ((v >> (124 - 4 * i)) & 0xf) as usize;
        out.push(char::from(HEX.get(nibble).copied().unwrap_or(b'0')));
    }
}

/// Writes a 128-bit value as a canonical lower-case dashed UUID.
pub fn format_uuid(v: u128, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let mut s = String::with_capacity(36);
    push_uuid(&mut s, v);
    f.write_str(&s)
}

/// Declares an id newtype over `u128`, written as a dashed UUID.
macro_rules! id_type {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u128);

        impl $name {
            /// Parses a UUID with or without dashes.
            pub fn parse(s: &str) -> Result<Self, super::wire::BadId> {
                super::wire::parse_uuid(s).map($name)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                super::wire::format_uuid(self.0, f)
            }
        }
    };
}
pub(crate) use id_type;

/// A text that is not a timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadTime {
    /// The text that was sent.
    pub got: String,
}

impl fmt::Display for BadTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a time: send ISO 8601, e.g. 2025-10-14 or 2025-10-14T09:30:00Z",
            self.got
        )
    }
}

impl std::error::Error for BadTime {}

/// Parses an RFC 3339 timestamp, or a bare `YYYY-MM-DD` date read as midnight UTC
/// (decisions and releases are usually dated, not timed). The result is in UTC.
pub fn parse_time(s: &str) -> Result<OffsetDateTime, BadTime> {
    let t = s.trim();
    let bad = || BadTime { got: s.to_string() };
    if t.len() == 10 {
        let b = t.as_bytes();
        if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
            return Err(bad());
        }
        let num = |r: std::ops::Range<usize>| -> Option<u32> {
            let part = t.get(r)?;
            if part.bytes().all(|c| c.is_ascii_digit()) {
                part.parse().ok()
            } else {
                None
            }
        };
        let y = num(0..4).ok_or_else(bad)?;
        let m = num(5..7).ok_or_else(bad)?;
        let d = num(8..10).ok_or_else(bad)?;
        let month = u8::try_from(m)
            .ok()
            .and_then(|m| Month::try_from(m).ok())
            .ok_or_else(bad)?;
        let year = i32::try_from(y).map_err(|_| bad())?;
        let day = u8::try_from(d).map_err(|_| bad())?;
        let date = Date::from_calendar_date(year, month, day).map_err(|_| bad())?;
        return Ok(date.midnight().assume_utc());
    }
    OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339)
        .map(|v| v.to_offset(UtcOffset::UTC))
        .map_err(|_| bad())
}

/// Writes a timestamp as RFC 3339 UTC with milliseconds (`2025-10-14T09:30:00.000Z`).
pub fn format_time(t: OffsetDateTime) -> String {
    let t = t.to_offset(UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// Test helper: a timestamp from RFC 3339 or date text.
#[cfg(test)]
pub fn at(s: &str) -> OffsetDateTime {
    parse_time(s).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_round_trip_with_or_without_dashes() {
        let s = "0190f3a2-7b1c-7def-8a00-0123456789ab";
        let v = parse_uuid(s).unwrap();
        assert_eq!(parse_uuid(&s.replace('-', "")).unwrap(), v);
        assert_eq!(parse_uuid(&s.to_uppercase()).unwrap(), v);
        assert_eq!(super::super::model::AtomId(v).to_string(), s);
        assert!(parse_uuid("0190f3a2-7b1c-7def-8a00-0123456789a").is_err());
        assert!(parse_uuid("0190f3a27b1c-7def-8a00-0123456789abc").is_err());
        assert!(parse_uuid("zz90f3a27b1c7def8a000123456789ab").is_err());
        assert!(parse_uuid("+190f3a27b1c7def8a000123456789ab").is_err());
    }

    #[test]
    fn times_parse_as_dates_or_rfc3339_and_format_in_utc() {
        let d = parse_time("2025-10-14").unwrap();
        assert_eq!(format_time(d), "2025-10-14T00:00:00.000Z");
        let t = parse_time("2025-10-14T11:30:00+02:00").unwrap();
        assert_eq!(format_time(t), "2025-10-14T09:30:00.000Z");
        assert!(parse_time("2025-13-01").is_err());
        assert!(parse_time("2025-1-011").is_err());
        assert!(parse_time("yesterday").is_err());
        assert!(parse_time("+025-10-14").is_err());
    }
}
