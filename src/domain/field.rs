//! What a message names of the caller's side: the input field a value was given in
//! ([`Field`]) and the tool to call next ([`Tool`]), as typed ids.
//!
//! The domain and the services say *which* field is wrong and *what* call would help;
//! how the caller spells them is the interface's business. Their `Display` (the
//! parameter's and the tool's name on the wire) lives in `mcp::names`, the one map
//! from id to name: a service formats `Field::ProjectId` into its message and the
//! agent reads the parameter it sends, and a renamed parameter changes in one place.
//! ARCHITECTURE.md ("Errors") says how this fits the layers.

/// An input field, named for what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    // The orchestrator's.
    Id,
    ProjectId,
    FeatureId,
    TaskId,
    EntityId,
    RelatedTo,
    FromId,
    ToId,
    BlockedBy,
    BlockedReason,
    OrderedIds,
    TargetEntityType,
    SemanticQuery,
    Depth,
    Complexity,
    // The memory's.
    About,
    Kind,
    Rules,
    Subject,
    Aliases,
    // The knowledge graph's.
    CreatedByTaskId,
    CreatedBy,
    LastTaskId,
    RelatedAtoms,
    RelatedMolecules,
    Paths,
    Knowledge,
    // The code toolset's.
    RepoPath,
    DocumentPath,
    /// A file or folder of the repository.
    Path,
    OutputPath,
    CategoryIds,
    ParentIds,
    Commands,
    StartLine,
    EndLine,
    LspSymbol,
    // The ontology's.
    PagesDir,
    BaseBranch,
    GithubOwner,
    GithubName,
    /// The proposal as a whole (its page), when no one field is at fault.
    Proposal,
    /// An ontology in functional syntax, imported.
    Ofn,
    Iri,
    Definition,
    Physicality,
    Role,
    Domain,
    Relationships,
    AgentContext,
    PreferredTerm,
    AltTerms,
    OwlClass,
    IsSubclassOf,
    QualityScore,
    CustomFields,
    AddRelationships,
    RemoveRelationships,
    RelationshipTypes,
    Cypher,
}

impl Field {
    /// Every field, for the test that each has a name on the wire.
    pub const ALL: &'static [Field] = &[
        Field::Id,
        Field::ProjectId,
        Field::FeatureId,
        Field::TaskId,
        Field::EntityId,
        Field::RelatedTo,
        Field::FromId,
        Field::ToId,
        Field::BlockedBy,
        Field::BlockedReason,
        Field::OrderedIds,
        Field::TargetEntityType,
        Field::SemanticQuery,
        Field::Depth,
        Field::Complexity,
        Field::About,
        Field::Kind,
        Field::Rules,
        Field::Subject,
        Field::Aliases,
        Field::CreatedByTaskId,
        Field::CreatedBy,
        Field::LastTaskId,
        Field::RelatedAtoms,
        Field::RelatedMolecules,
        Field::Paths,
        Field::Knowledge,
        Field::RepoPath,
        Field::DocumentPath,
        Field::Path,
        Field::OutputPath,
        Field::CategoryIds,
        Field::ParentIds,
        Field::Commands,
        Field::StartLine,
        Field::EndLine,
        Field::LspSymbol,
        Field::PagesDir,
        Field::BaseBranch,
        Field::GithubOwner,
        Field::GithubName,
        Field::Proposal,
        Field::Ofn,
        Field::Iri,
        Field::Definition,
        Field::Physicality,
        Field::Role,
        Field::Domain,
        Field::Relationships,
        Field::AgentContext,
        Field::PreferredTerm,
        Field::AltTerms,
        Field::OwlClass,
        Field::IsSubclassOf,
        Field::QualityScore,
        Field::CustomFields,
        Field::AddRelationships,
        Field::RemoveRelationships,
        Field::RelationshipTypes,
        Field::Cypher,
    ];
}

/// A tool a message tells the caller to call, named for what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tool {
    /// Binds a repository to a project.
    InitProject,
    /// Reads a document's symbols and references.
    AnalyzeDocument,
    /// Writes the project's overview file.
    ProjectOverview,
    /// Creates an entity with its first references.
    CreateEntity,
    /// Changes an entity's fields, parents and references.
    UpdateEntity,
    /// Changes references themselves (re-anchors them).
    AlterReferences,
    /// Adds, edits and orders sections.
    ManageSections,
    /// Lists an item's dependencies.
    QueryDependencies,
    /// Reads memory atoms.
    QueryMemory,
    /// Writes memory subjects and their links.
    ManageSubject,
    /// Attaches and syncs the ontology.
    ManageOntology,
    /// Finds ontology classes.
    OntologyDiscover,
}

impl Tool {
    /// Every tool a message may name, for the test that each is served.
    pub const ALL: &'static [Tool] = &[
        Tool::InitProject,
        Tool::AnalyzeDocument,
        Tool::ProjectOverview,
        Tool::CreateEntity,
        Tool::UpdateEntity,
        Tool::AlterReferences,
        Tool::ManageSections,
        Tool::QueryDependencies,
        Tool::QueryMemory,
        Tool::ManageSubject,
        Tool::ManageOntology,
        Tool::OntologyDiscover,
    ];
}
