//! Plain types of the task orchestrator, the knowledge graph and the alive memory
//! (`memory`, a pure core of its own), and their invariants. No SQL, no MCP.

pub mod code;
pub mod container;
pub mod field;
pub mod glob;
pub mod graph;
pub mod id;
pub mod invalid;
pub mod ontology_index;
pub mod section;
pub mod text;
pub mod workflow;

// The pure cores are crates of their own (crates/), re-exported under the names the
// rest of Cairn has always used.
pub use cairn_cypher as ontology_query;
pub use cairn_memory as memory;
pub use cairn_owl as ontology;

pub use invalid::Invalid;

pub use container::{ContainerType, Item, ItemKind, Priority, Project};
pub use section::{ContentFormat, Section, Template, TemplateSection};
pub use workflow::{Pipeline, Pipelines, Status};

/// A row a write changed besides the one its caller named (a blocked task, the tasks
/// moved with their feature, a template whose sections changed): its new version,
/// so the caller's next write of it does not conflict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    pub entity: &'static str,
    pub id: String,
    pub version: i64,
}

/// Current time as an RFC 3339 UTC timestamp with milliseconds; sortable as text.
pub fn now() -> String {
    stamp(time::OffsetDateTime::now_utc())
}

/// `t` as Cairn writes timestamps: `2026-01-02T03:04:05.006Z`.
pub fn stamp(t: time::OffsetDateTime) -> String {
    static FORMAT: std::sync::LazyLock<Vec<time::format_description::BorrowedFormatItem<'static>>> =
        std::sync::LazyLock::new(|| {
            time::format_description::parse_borrowed::<2>(
                "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z",
            )
            .unwrap_or_default()
        });
    t.to_offset(time::UtcOffset::UTC)
        .format(&FORMAT[..])
        .unwrap_or_default()
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
