//! Workflow states and the linear pipelines features and tasks move through.
//!
//! A pipeline is drawn from its kind's catalog, starts at NEW, contains ACTIVE, ends at
//! CLOSED and keeps catalog order. WILL_NOT_IMPLEMENT is outside every pipeline: the
//! exit state reached only by `terminate`.

use super::Invalid;
use crate::domain::ItemKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    New,
    Active,
    ToBeTested,
    ReadyToProd,
    Closed,
    WillNotImplement,
}

pub const TASK_CATALOG: [Status; 5] = [
    Status::New,
    Status::Active,
    Status::ToBeTested,
    Status::ReadyToProd,
    Status::Closed,
];
pub const FEATURE_CATALOG: [Status; 4] = [
    Status::New,
    Status::Active,
    Status::ReadyToProd,
    Status::Closed,
];

impl Status {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().replace('-', "_").as_str() {
            "NEW" => Some(Self::New),
            "ACTIVE" => Some(Self::Active),
            "TO_BE_TESTED" => Some(Self::ToBeTested),
            "READY_TO_PROD" => Some(Self::ReadyToProd),
            "CLOSED" => Some(Self::Closed),
            "WILL_NOT_IMPLEMENT" => Some(Self::WillNotImplement),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::New => "NEW",
            Self::Active => "ACTIVE",
            Self::ToBeTested => "TO_BE_TESTED",
            Self::ReadyToProd => "READY_TO_PROD",
            Self::Closed => "CLOSED",
            Self::WillNotImplement => "WILL_NOT_IMPLEMENT",
        }
    }
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Closed | Self::WillNotImplement)
    }
    pub fn catalog(kind: ItemKind) -> &'static [Status] {
        match kind {
            ItemKind::Task => &TASK_CATALOG,
            ItemKind::Feature => &FEATURE_CATALOG,
        }
    }
    /// Every status an item of this kind can be in, the exit state included.
    pub fn all_for(kind: ItemKind) -> Vec<Status> {
        let mut v = Self::catalog(kind).to_vec();
        v.push(Self::WillNotImplement);
        v
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub kind: ItemKind,
    pub states: Vec<Status>,
}

impl Pipeline {
    pub fn default_for(kind: ItemKind) -> Self {
        Pipeline {
            kind,
            states: vec![Status::New, Status::Active, Status::Closed],
        }
    }

    /// Builds a pipeline from state names, checking every rule of the catalog.
    pub fn from_names(kind: ItemKind, names: &[String]) -> Result<Self, Invalid> {
        let what = format!("workflow.{}", kind.as_str());
        let catalog = Status::catalog(kind);
        let mut states = Vec::with_capacity(names.len());
        for n in names {
            let s = Status::parse(n)
                .filter(|s| catalog.contains(s))
                .ok_or_else(|| {
                    Invalid::new(
                        &what,
                        format!(
                            "'{n}' is not a {} state; the catalog is {}",
                            kind.as_str(),
                            names_of(catalog)
                        ),
                    )
                })?;
            states.push(s);
        }
        let positions: Vec<usize> = states
            .iter()
            .map(|s| catalog.iter().position(|c| c == s).unwrap_or(usize::MAX))
            .collect();
        if positions.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Invalid::new(
                &what,
                format!(
                    "states must keep catalog order ({}) without repeats",
                    names_of(catalog)
                ),
            ));
        }
        if states.first() != Some(&Status::New)
            || states.last() != Some(&Status::Closed)
            || !states.contains(&Status::Active)
        {
            return Err(Invalid::new(
                &what,
                "a pipeline starts at NEW, contains ACTIVE and ends at CLOSED",
            ));
        }
        Ok(Pipeline { kind, states })
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.states.iter().map(|s| s.as_str()).collect()
    }
    pub fn contains(&self, s: Status) -> bool {
        self.states.contains(&s)
    }
    pub fn next(&self, s: Status) -> Option<Status> {
        let i = self.states.iter().position(|x| *x == s)?;
        self.states.get(i + 1).copied()
    }
    pub fn previous(&self, s: Status) -> Option<Status> {
        let i = self.states.iter().position(|x| *x == s)?;
        i.checked_sub(1).map(|j| self.states[j])
    }
    /// The state a row left in a state this pipeline lacks should move to: the nearest
    /// earlier catalog state that remains (NEW always remains).
    pub fn fallback(&self, s: Status) -> Status {
        let catalog = Status::catalog(self.kind);
        let Some(i) = catalog.iter().position(|c| *c == s) else {
            return s;
        };
        catalog[..=i]
            .iter()
            .rev()
            .find(|c| self.contains(**c))
            .copied()
            .unwrap_or(Status::New)
    }
}

fn names_of(states: &[Status]) -> String {
    states
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The pipelines in force for features and tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipelines {
    pub feature: Pipeline,
    pub task: Pipeline,
}

impl Default for Pipelines {
    fn default() -> Self {
        Pipelines {
            feature: Pipeline::default_for(ItemKind::Feature),
            task: Pipeline::default_for(ItemKind::Task),
        }
    }
}

impl Pipelines {
    pub fn get(&self, kind: ItemKind) -> &Pipeline {
        match kind {
            ItemKind::Feature => &self.feature,
            ItemKind::Task => &self.task,
        }
    }
}
