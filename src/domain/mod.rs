//! Plain types of the task orchestrator and the knowledge graph, and their
//! invariants. No SQL, no MCP.

pub mod code;
pub mod container;
pub mod glob;
pub mod graph;
pub mod id;
pub mod ontology;
pub mod section;
pub mod workflow;

pub use container::{ContainerType, Item, ItemKind, Priority, Project};
pub use section::{ContentFormat, Section, Template, TemplateSection};
pub use workflow::{Pipeline, Pipelines, Status};

/// Current time as an RFC 3339 UTC timestamp with milliseconds; sortable as text.
/// Written digit by digit: every write stamps a row with it, and the formatting
/// machinery cost more than the clock.
pub fn now() -> String {
    stamp(time::OffsetDateTime::now_utc())
}

fn stamp(t: time::OffsetDateTime) -> String {
    let year = t.year().clamp(0, 9999) as u32;
    let mut s = String::with_capacity(24);
    digits(&mut s, year, 4);
    s.push('-');
    digits(&mut s, u32::from(u8::from(t.month())), 2);
    s.push('-');
    digits(&mut s, u32::from(t.day()), 2);
    s.push('T');
    digits(&mut s, u32::from(t.hour()), 2);
    s.push(':');
    digits(&mut s, u32::from(t.minute()), 2);
    s.push(':');
    digits(&mut s, u32::from(t.second()), 2);
    s.push('.');
    digits(&mut s, u32::from(t.millisecond()), 3);
    s.push('Z');
    s
}

/// Appends the last `width` decimal digits of `v`, zero-padded.
fn digits(s: &mut String, v: u32, width: u32) {
    for k in (0..width).rev() {
        s.push(char::from(b'0' + (v / 10u32.pow(k) % 10) as u8));
    }
}

#[cfg(test)]
mod tests {
    fn at(y: i32, m: time::Month, d: u8, hms: (u8, u8, u8), ms: u16) -> time::OffsetDateTime {
        time::Date::from_calendar_date(y, m, d)
            .unwrap()
            .with_hms_milli(hms.0, hms.1, hms.2, ms)
            .unwrap()
            .assume_utc()
    }

    #[test]
    fn a_stamp_is_rfc3339_utc_with_milliseconds() {
        let s = super::stamp(at(2026, time::Month::January, 2, (3, 4, 5), 6));
        assert_eq!(s, "2026-01-02T03:04:05.006Z");
        let s = super::stamp(at(999, time::Month::December, 31, (23, 59, 59), 999));
        assert_eq!(s, "0999-12-31T23:59:59.999Z");
        assert_eq!(super::now().len(), 24);
    }
}
