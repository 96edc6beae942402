//! Containers of work: projects, features and tasks, and their shared vocabulary.

use super::Invalid;
use crate::domain::Status;
// `clip` lives in `text`; it is named here too, where most callers look for it.
pub use super::text::clip;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerType {
    Project,
    Feature,
    Task,
}

impl ContainerType {
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "project" => Some(Self::Project),
            "feature" => Some(Self::Feature),
            "task" => Some(Self::Task),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Project => "project",
            Self::Feature => "feature",
            Self::Task => "task",
        }
    }
    /// The upper-case spelling used by the section and template tools.
    pub fn upper(self) -> &'static str {
        match self {
            Self::Project => "PROJECT",
            Self::Feature => "FEATURE",
            Self::Task => "TASK",
        }
    }
    pub fn item_kind(self) -> Option<ItemKind> {
        match self {
            Self::Project => None,
            Self::Feature => Some(ItemKind::Feature),
            Self::Task => Some(ItemKind::Task),
        }
    }
}

/// The two kinds of container that move through a workflow pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemKind {
    Feature,
    Task,
}

impl ItemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Feature => "feature",
            Self::Task => "task",
        }
    }
    pub fn container(self) -> ContainerType {
        match self {
            Self::Feature => ContainerType::Feature,
            Self::Task => ContainerType::Task,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    High,
    Medium,
    Low,
}

impl Priority {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "HIGH" => Some(Self::High),
            "MEDIUM" => Some(Self::Medium),
            "LOW" => Some(Self::Low),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::High => "HIGH",
            Self::Medium => "MEDIUM",
            Self::Low => "LOW",
        }
    }
    /// Sort rank stored in the database: lower is more urgent.
    pub fn rank(self) -> i64 {
        match self {
            Self::High => 0,
            Self::Medium => 1,
            Self::Low => 2,
        }
    }
    pub fn from_rank(rank: i64) -> Self {
        match rank {
            0 => Self::High,
            2 => Self::Low,
            _ => Self::Medium,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Project {
    pub id: String,
    pub name: String,
    pub summary: String,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// A feature or a task: both carry a workflow status, a priority and blockers.
#[derive(Debug, Clone)]
pub struct Item {
    pub kind: ItemKind,
    pub id: String,
    pub project_id: Option<String>,
    /// Set for tasks that belong to a feature.
    pub feature_id: Option<String>,
    /// `name` of a feature, `title` of a task.
    pub name: String,
    pub summary: String,
    pub description: Option<String>,
    pub status: Status,
    pub priority: Priority,
    /// Tasks only (1..=10); features carry none.
    pub complexity: Option<i64>,
    pub status_reason: Option<String>,
    pub tags: Vec<String>,
    /// Open blockers: ids of items not yet CLOSED that BLOCK this one, and `NO_OP` for
    /// a blocker outside Cairn. Derived when read, never stored.
    pub blocked_by: Vec<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// Tags are case-insensitive labels: trimmed, lower-cased, unique, sorted.
pub fn normalize_tags(parameter: &str, raw: &[String]) -> Result<Vec<String>, Invalid> {
    let mut out: Vec<String> = Vec::new();
    for t in raw {
        let t = t.trim().to_lowercase();
        if t.is_empty() {
            continue;
        }
        if t.chars().count() > 64 {
            return Err(Invalid::new(
                parameter,
                format!("tag '{}' is longer than 64 characters", clip(&t, 40)),
            ));
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out.sort();
    if out.len() > 50 {
        return Err(Invalid::new(
            parameter,
            format!("{} tags given, at most 50 allowed", out.len()),
        ));
    }
    Ok(out)
}

/// A dependency edge as seen from one of its ends, with the other end's name and
/// status.
#[derive(Debug, Clone)]
pub struct Dependency {
    pub id: String,
    pub from_id: Option<String>,
    pub to_id: String,
    /// `BLOCKS` or `RELATES_TO`.
    pub kind: String,
    pub reason: Option<String>,
    pub created_at: String,
    /// The end that is not the item asked about (NULL for a NO_OP blocker).
    pub other_name: Option<String>,
    pub other_status: Option<String>,
}
