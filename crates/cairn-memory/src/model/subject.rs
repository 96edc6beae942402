//! Subjects, the things in the world atoms are about: their kind-specific fields, and
//! the context an atom applies in.

use super::*;

/// Where an atom applies: everywhere, or in one context subject (`IN_CONTEXT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Context {
    /// Applies everywhere (no IN_CONTEXT edge).
    #[default]
    Global,
    /// Applies in this Project, Org, Person or Stack.
    In(SubjectId),
}

impl Context {
    /// The context subject, if any.
    pub fn subject(self) -> Option<SubjectId> {
        match self {
            Context::Global => None,
            Context::In(s) => Some(s),
        }
    }
}

/// A subject: a thing in the world that atoms are about or scoped to.
#[derive(Debug, Clone, PartialEq)]
pub struct Subject {
    /// Stable id.
    pub id: SubjectId,
    /// What it is.
    pub kind: SubjectKind,
    /// The canonical name (`canonical_name` for artifacts, `display_name` for people).
    pub name: String,
    /// Other names it is known by; identity resolution matches on these too.
    pub aliases: Vec<String>,
    /// Short human title, if different from the name.
    pub title: Option<String>,
    /// One to three sentences.
    pub summary: Option<String>,
    /// Free tags.
    pub tags: Vec<String>,
    /// When Cairn created it.
    pub created_at: OffsetDateTime,
    /// When it last changed (a DEPENDS_ON target changing triggers review).
    pub updated_at: OffsetDateTime,
    /// Set when identity resolution merged this subject into another; the row stays
    /// so an old id still resolves.
    pub merged_into: Option<SubjectId>,
    /// The fields of its kind.
    pub details: SubjectDetails,
}

/// The kind-specific fields of a subject (docs/memory.md, subjects and contexts).
/// Lists of other subjects (stack components, project stack, owners) are `USES` edges or
/// atoms, not fields.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum SubjectDetails {
    /// No kind-specific fields given.
    #[default]
    None,
    /// An Org's fields.
    Org(OrgFields),
    /// A Project's fields.
    Project(ProjectFields),
    /// A Person's fields.
    Person(PersonFields),
    /// A Tool's, Lib's, Service's, Model's or Dataset's fields.
    Artifact(ArtifactFields),
    /// A Stack's fields.
    Stack(StackFields),
    /// A Template's fields.
    Template(TemplateFields),
}

/// Fields of an Org.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OrgFields {
    /// Company or business domain.
    pub domain: Option<String>,
    /// Units or teams.
    pub units: Vec<String>,
    /// Where its policies are indexed.
    pub policies_index: Option<String>,
}

/// Fields of a Project.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProjectFields {
    /// active, paused or archived.
    pub status: Option<ProjectStatus>,
    /// When it started.
    pub start_date: Option<OffsetDateTime>,
    /// When it ended.
    pub end_date: Option<OffsetDateTime>,
    /// The Org subject it belongs to (what recall's Org scope uses).
    pub org: Option<SubjectId>,
    /// Repository links.
    pub repo_links: Vec<String>,
    /// Documentation links.
    pub docs_links: Vec<String>,
    /// Business domain (payments, infra, ...).
    pub domain: Option<String>,
    /// The orchestrator project this subject stands for (its UUID).
    pub orchestrator_project: Option<u128>,
}

/// Fields of a Person.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PersonFields {
    /// Roles.
    pub roles: Vec<String>,
    /// The Org subject they belong to.
    pub org: Option<SubjectId>,
    /// Teams.
    pub teams: Vec<String>,
    /// Handles, written `service:handle` (`github:alice`).
    pub handles: Vec<String>,
    /// IANA time zone.
    pub timezone: Option<String>,
}

/// Fields of a Tool, Lib, Service, Model or Dataset.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArtifactFields {
    /// ts, python, rust, ...
    pub ecosystem: Option<String>,
    /// validation, orm, testing, ...
    pub category: Option<String>,
    /// Source repository.
    pub repo: Option<String>,
    /// Home page.
    pub homepage: Option<String>,
}

/// Fields of a Stack (its components are `USES` edges).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StackFields {
    /// What the stack is for.
    pub description: Option<String>,
    /// Org-wide or project-specific.
    pub scope: Option<StackScope>,
}

/// Fields of a Template.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TemplateFields {
    /// What it is for.
    pub purpose: Option<String>,
    /// Repository path or URL.
    pub location: Option<String>,
    /// What it takes.
    pub inputs: Vec<String>,
    /// What it produces.
    pub outputs: Vec<String>,
    /// The template's own version (not a tool's).
    pub version: Option<String>,
    /// The Person or Org subject maintaining it.
    pub maintainer: Option<SubjectId>,
}

impl Subject {
    /// Every subject id this subject's fields point at, mutably, so a merge can
    /// repoint them.
    pub fn subject_refs_mut(&mut self) -> Vec<(&'static str, &mut SubjectId)> {
        match &mut self.details {
            SubjectDetails::Project(p) => p.org.as_mut().map(|o| ("org", o)).into_iter().collect(),
            SubjectDetails::Person(p) => p.org.as_mut().map(|o| ("org", o)).into_iter().collect(),
            SubjectDetails::Template(t) => t
                .maintainer
                .as_mut()
                .map(|m| ("maintainer", m))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The Org a Project or Person belongs to.
    pub fn org(&self) -> Option<SubjectId> {
        match &self.details {
            SubjectDetails::Project(p) => p.org,
            SubjectDetails::Person(p) => p.org,
            _ => None,
        }
    }
}
