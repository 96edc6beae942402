//! Plain types of the task orchestrator and the knowledge graph, and their
//! invariants. No SQL, no MCP.

pub mod code;
pub mod container;
pub mod glob;
pub mod graph;
pub mod id;
pub mod section;
pub mod workflow;

pub use container::{ContainerType, Item, ItemKind, Priority, Project};
pub use section::{ContentFormat, Section, Template, TemplateSection};
pub use workflow::{Pipeline, Pipelines, Status};

/// Current time as an RFC 3339 UTC timestamp with milliseconds; sortable as text.
pub fn now() -> String {
    let t = time::OffsetDateTime::now_utc();
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
