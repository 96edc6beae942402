//! The one map from the typed ids a message names ([`Field`], [`Tool`]) to their
//! names on the wire: a parameter of tools/list, a tool's name. The domain and the
//! services format these ids into their messages (see `domain::field`); what the
//! agent reads is spelled here, so a renamed parameter changes in one place.

use std::fmt;

use crate::domain::field::{Field, Tool};

/// The parameter a field is sent as.
pub fn field(f: Field) -> &'static str {
    match f {
        Field::Id => "id",
        Field::ProjectId => "projectId",
        Field::FeatureId => "featureId",
        Field::TaskId => "taskId",
        Field::EntityId => "entityId",
        Field::RelatedTo => "relatedTo",
        Field::FromId => "fromId",
        Field::ToId => "toId",
        Field::BlockedBy => "blockedBy",
        Field::BlockedReason => "blockedReason",
        Field::OrderedIds => "orderedIds",
        Field::TargetEntityType => "targetEntityType",
        Field::SemanticQuery => "semanticQuery",
        Field::Depth => "depth",
        Field::Paths => "paths",
        Field::Knowledge => "knowledge",
        Field::Complexity => "complexity",
        Field::Cypher => "cypher",
        Field::Kind => "kind",
        Field::About => "about",
        Field::Rules => "rules",
        Field::Aliases => "aliases",
        Field::Subject => "subject",
        Field::CreatedByTaskId => "createdByTaskId",
        Field::CreatedBy => "createdBy",
        Field::LastTaskId => "lastTaskId",
        Field::RelatedAtoms => "relatedAtoms",
        Field::RelatedMolecules => "relatedMolecules",
        Field::RepoPath => "repoPath",
        Field::DocumentPath => "documentPath",
        Field::Path => "path",
        Field::OutputPath => "outputPath",
        Field::CategoryIds => "categoryIds",
        Field::ParentIds => "parentIds",
        Field::Commands => "commands",
        Field::StartLine => "startLine",
        Field::EndLine => "endLine",
        Field::LspSymbol => "lspSymbol",
        Field::PagesDir => "pagesDir",
        Field::BaseBranch => "baseBranch",
        Field::GithubOwner => "githubOwner",
        Field::GithubName => "githubName",
        Field::Proposal => "proposal",
        Field::Ofn => "ofn",
        Field::Iri => "iri",
        Field::Definition => "definition",
        Field::Physicality => "physicality",
        Field::Role => "role",
        Field::Domain => "domain",
        Field::Relationships => "relationships",
        Field::AgentContext => "agentContext",
        Field::PreferredTerm => "preferredTerm",
        Field::AltTerms => "altTerms",
        Field::OwlClass => "owlClass",
        Field::IsSubclassOf => "isSubclassOf",
        Field::QualityScore => "qualityScore",
        Field::CustomFields => "customFields",
        Field::AddRelationships => "addRelationships",
        Field::RemoveRelationships => "removeRelationships",
        Field::RelationshipTypes => "relationshipTypes",
    }
}

/// The name a tool is served under.
pub fn tool(t: Tool) -> &'static str {
    match t {
        Tool::InitProject => "init_project",
        Tool::AnalyzeDocument => "analyze_document",
        Tool::ProjectOverview => "project_overview",
        Tool::CreateEntity => "create_entity",
        Tool::UpdateEntity => "update_entity",
        Tool::AlterReferences => "alter_references",
        Tool::ManageSections => "manage_sections",
        Tool::QueryDependencies => "query_dependencies",
        Tool::QueryMemory => "query_memory",
        Tool::ManageSubject => "manage_subject",
        Tool::ManageOntology => "manage_ontology",
        Tool::OntologyDiscover => "ontology_discover",
    }
}

/// A field in a message reads as the parameter the agent sends.
impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(field(*self))
    }
}

/// A tool in a message reads as the name the agent calls.
impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(tool(*self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::Registry;

    /// Every property name of a tool's schema, nested objects' too.
    fn params(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(serde_json::Value::Object(p)) = m.get("properties") {
                    out.extend(p.keys().cloned());
                }
                m.values().for_each(|x| params(x, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| params(x, out)),
            _ => {}
        }
    }

    /// The map names what tools/list serves: each field is a parameter of some tool,
    /// each tool is served, and no two ids share a name.
    #[test]
    fn every_name_is_on_the_wire() {
        let all: Vec<String> = ["tasks", "graph", "code", "ontology", "memory"]
            .map(String::from)
            .into();
        let r = Registry::new(&all);
        let mut served = Vec::new();
        for d in &r.defs {
            params(&serde_json::Value::Object(d.input_schema()), &mut served);
        }
        // The proposal as a whole is no one parameter: its page, when no field is it.
        for f in Field::ALL.iter().filter(|f| **f != Field::Proposal) {
            assert!(
                served.iter().any(|p| p == field(*f)),
                "{f:?} is sent as {}, which no tool takes",
                field(*f)
            );
        }
        for t in Tool::ALL {
            assert!(
                r.find(tool(*t)).is_some(),
                "{t:?} is called as {}, which is not served",
                tool(*t)
            );
        }
        let mut names: Vec<&str> = Field::ALL.iter().map(|f| field(*f)).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Field::ALL.len(), "two fields share a name");
    }
}
