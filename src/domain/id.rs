//! Identifiers: UUID v7, accepted with or without dashes, answered canonical.

use crate::error::{Error, Result};

/// A fresh time-ordered id in canonical lower-case dashed form.
pub fn new_id() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let mut ids = IDS.lock().unwrap_or_else(|e| e.into_inner());
    ids.next(ms).to_string()
}

/// The 74 bits of a UUID v7 after its millisecond timestamp: 12 of `rand_a`, 62 of
/// `rand_b` (RFC 9562, section 5.7).
const TAIL: u128 = (1 << 74) - 1;

/// The id generator's state: ids of one process increase strictly, as RFC 9562's
/// monotonic random method makes them. Its random bits come from a generator seeded
/// once from the system's; drawing them from the kernel for every id (as
/// `Uuid::now_v7` does) cost two system calls per created row.
struct Ids {
    ms: u64,
    tail: u128,
    seed: u64,
}

static IDS: std::sync::Mutex<Ids> = std::sync::Mutex::new(Ids {
    ms: 0,
    tail: 0,
    seed: 0,
});

impl Ids {
    /// SplitMix64: a fast, well-mixed sequence; ids need uniqueness, not secrecy.
    fn random(&mut self) -> u64 {
        if self.seed == 0 {
            self.seed = uuid::Uuid::new_v4().as_u64_pair().0 | 1;
        }
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn next(&mut self, now_ms: u64) -> uuid::Uuid {
        let r = (u128::from(self.random()) << 64) | u128::from(self.random());
        if now_ms > self.ms {
            // A new millisecond starts at a random point in the lower half, leaving
            // room to count up within it.
            self.ms = now_ms;
            self.tail = r & (TAIL >> 1);
        } else {
            // The same millisecond (or the clock stepped back): count up by a random
            // step, moving to the next millisecond if the tail runs out.
            self.tail += 1 + (r & 0xffff_ffff);
            if self.tail > TAIL {
                self.ms += 1;
                self.tail = r & (TAIL >> 1);
            }
        }
        let bits = (u128::from(self.ms & 0xffff_ffff_ffff) << 80)
            | (0x7 << 76)
            | ((self.tail >> 62) << 64)
            | (0b10 << 62)
            | (self.tail & ((1 << 62) - 1));
        uuid::Uuid::from_u128(bits)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_version_7_and_strictly_increase() {
        let mut ids = Ids {
            ms: 0,
            tail: 0,
            seed: 0,
        };
        let mut last = ids.next(1_700_000_000_000);
        // The same millisecond many times over, then the clock stepping back.
        for ms in std::iter::repeat_n(1_700_000_000_000, 10_000).chain([1_699_999_999_000]) {
            let id = ids.next(ms);
            assert_eq!(id.get_version_num(), 7);
            assert_eq!(id.get_variant(), uuid::Variant::RFC4122);
            assert!(id > last, "{id} after {last}");
            last = id;
        }
        // A later millisecond is the id's timestamp.
        let id = ids.next(1_800_000_000_000);
        assert!(id > last);
        let (secs, nanos) = id.get_timestamp().unwrap().to_unix();
        assert_eq!(
            secs * 1000 + u64::from(nanos) / 1_000_000,
            1_800_000_000_000
        );
        assert_eq!(parse("id", &new_id()).map(|s| s.len()).ok(), Some(36));
    }
}
