//! What the store keeps of a project's ontology, as plain values: the repository
//! binding, the pages, entities and axioms the last sync imported, the problems it
//! met, and proposals with their files. The pages in git stay the source of truth;
//! these records are what a sync read, plus the staged proposals.
//!
//! Plain data: no SQL, no git, no MCP.

/// The ontology repository attached to a project.
#[derive(Debug, Clone, PartialEq)]
pub struct Repo {
    pub id: String,
    pub project_id: String,
    /// The git work tree's top-level directory (absolute).
    pub repo_path: String,
    /// Repository-relative folder of the pages, `""` for the root.
    pub pages_dir: String,
    /// The branch pages are read from and proposals are based on.
    pub base_branch: String,
    pub github_owner: Option<String>,
    pub github_name: Option<String>,
    /// The commit the rows reflect; `None` before the first sync.
    pub synced_commit: Option<String>,
    pub synced_at: Option<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

impl Repo {
    /// The GitHub repository, when both halves are configured.
    pub fn github(&self) -> Option<(&str, &str)> {
        match (&self.github_owner, &self.github_name) {
            (Some(o), Some(n)) => Some((o.as_str(), n.as_str())),
            _ => None,
        }
    }
}

/// What a page row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageState {
    /// The block read; the page declares an entity.
    Entity,
    /// No `### OntologyBlock`: an ordinary Logseq page.
    Plain,
    /// The page does not parse (its problem is among the sync's problems).
    Error,
}

impl PageState {
    pub fn as_str(self) -> &'static str {
        match self {
            PageState::Entity => "entity",
            PageState::Plain => "plain",
            PageState::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<PageState> {
        match s {
            "entity" => Some(PageState::Entity),
            "plain" => Some(PageState::Plain),
            "error" => Some(PageState::Error),
            _ => None,
        }
    }
}

/// A page of the pages folder at the synced commit, without its text.
#[derive(Debug, Clone, PartialEq)]
pub struct PageRecord {
    pub id: String,
    /// Repository-relative path.
    pub path: String,
    pub blob_sha: String,
    /// The entity the page declares.
    pub iri: Option<String>,
    pub state: PageState,
    pub version: i64,
}

/// A class, object property or individual with the metadata its page gives.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntityRecord {
    pub id: String,
    /// The page that declares it; `None` for the shared relationship properties.
    pub page_id: Option<String>,
    pub iri: String,
    /// `class`, `property`, `individual`.
    pub kind: String,
    pub term_id: Option<String>,
    pub preferred_term: Option<String>,
    pub domain: Option<String>,
    pub status: Option<String>,
    pub definition: Option<String>,
    pub alt_terms: Option<String>,
    pub physicality: Option<String>,
    pub role: Option<String>,
    pub maturity: Option<String>,
    pub quality_score: Option<f64>,
    pub authority_score: Option<f64>,
    pub last_updated: Option<String>,
    /// The line of its IRI on the page.
    pub line: Option<i64>,
    pub version: i64,
}

impl EntityRecord {
    /// True when the imported fields are the same (ids and versions aside).
    pub fn same_fields(&self, o: &EntityRecord) -> bool {
        let strip = |e: &EntityRecord| EntityRecord {
            id: String::new(),
            version: 0,
            ..e.clone()
        };
        strip(self) == strip(o)
    }
}

/// An axiom a page states: its line, kind and OWL functional syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxiomRecord {
    pub line: i64,
    pub kind: String,
    pub ofn: String,
}

/// Something a sync skipped, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProblemRecord {
    pub file: String,
    pub line: i64,
    pub column: i64,
    pub message: String,
}

/// Where a proposal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProposalState {
    /// Committed on a local branch of the ontology repository.
    Staged,
    /// Also a branch and a pull request on GitHub.
    Pushed,
    /// The base branch has it.
    Merged,
    /// Its branch was deleted unmerged, or its pull request closed.
    Rejected,
}

impl ProposalState {
    pub const NAMES: &'static [&'static str] = &["staged", "pushed", "merged", "rejected"];

    pub fn as_str(self) -> &'static str {
        match self {
            ProposalState::Staged => "staged",
            ProposalState::Pushed => "pushed",
            ProposalState::Merged => "merged",
            ProposalState::Rejected => "rejected",
        }
    }

    pub fn parse(s: &str) -> Option<ProposalState> {
        match s.to_ascii_lowercase().as_str() {
            "staged" => Some(ProposalState::Staged),
            "pushed" => Some(ProposalState::Pushed),
            "merged" => Some(ProposalState::Merged),
            "rejected" => Some(ProposalState::Rejected),
            _ => None,
        }
    }

    /// Staged and pushed proposals still wait for a human.
    pub fn is_open(self) -> bool {
        matches!(self, ProposalState::Staged | ProposalState::Pushed)
    }
}

/// A proposal: a new page, an amended page, or an imported document, committed on a
/// branch, with its checks' report.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposalRecord {
    pub id: String,
    pub project_id: String,
    /// `create`, `amend`, `import`.
    pub operation: String,
    pub state: ProposalState,
    pub target_iri: Option<String>,
    pub term_id: Option<String>,
    pub agent_id: String,
    pub agent_type: String,
    pub session_id: Option<String>,
    pub task_description: String,
    pub confidence: f64,
    pub branch: String,
    pub commit_sha: String,
    /// The commit the proposal was checked against and branched from.
    pub base_commit: String,
    pub new_subsumptions: i64,
    pub quality_score: Option<f64>,
    /// `10/10 · 3/5 · 1/4`.
    pub tier_coverage: Option<String>,
    /// The report (the pull request's body).
    pub report: String,
    /// The unified diff of the proposal's pages.
    pub diff: String,
    pub pr_number: Option<i64>,
    pub pr_url: Option<String>,
    /// Why the last push to GitHub failed.
    pub push_error: Option<String>,
    pub decided_at: Option<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

/// A file a proposal writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposalFile {
    pub path: String,
    pub blob_sha: String,
    pub content: String,
}
