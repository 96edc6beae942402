//! The MCP face of Cairn: tool definitions and schemas, argument validation, the
//! envelope, and the rmcp server. Only this module knows about JSON-RPC and MCP; it
//! calls `service` and converts domain values to JSON by hand.

pub mod args;
pub mod budget;
pub mod code;
pub mod envelope;
pub mod find;
pub mod graph;
pub mod help;
pub mod json;
pub mod memory;
pub mod names;
pub mod ontology;
pub mod prompts;
pub mod resources;
pub mod schema;
pub mod server;
pub mod tasks;
pub mod transport;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures::FutureExt;
use rmcp::model::Tool;
use serde_json::{Map, Value};
use tracing::Instrument;

use crate::error::Error;
use crate::mcp::args::Args;
use crate::mcp::envelope::Reply;
use crate::mcp::schema::{Effect, ToolDef};
use crate::service::agent::Role;
use crate::service::progress::Progress;
use crate::service::App;

/// What each toolset is for, in a line; also the server's `instructions`.
pub const TOOLSET_PURPOSES: &[(&str, &str)] = &[
    (
        "tasks",
        "projects, features and tasks with sections, templates, tags, dependencies and a workflow \
         (get_next_task to pick work, advance/revert/terminate to move it; writes need the version you read)",
    ),
    (
        "graph",
        "what the team knows about the code: atoms own glob patterns over file paths, molecules group them, \
         changelogs record why areas changed (query_graph context with the paths you will touch, before you touch them)",
    ),
    (
        "code",
        "a memory of the codebase: entities (scopes Domain > Feature > Namespace > Component > Unit) anchored to \
         code/text references in the project's git repository; analyze_document shows stale references and untracked symbols",
    ),
    (
        "ontology",
        "OWL classes kept as Logseq pages in a git repository, with an EL reasoner: ontology_discover and ontology_read \
         before naming a concept, ontology_query (Cypher) and ontology_read with a depth to explore, ontology_propose to add or \
         change one (reviewed as a git branch)",
    ),
    (
        "memory",
        "alive memory: typed atoms (facts, decisions, rules...) about shared subjects, with evidence, one ACTIVE per \
         claim key, review and decay, a deterministic curator, diary and reflection (query_memory recall before a task)",
    ),
];

/// What parameters mean wherever they appear, so no tool's schema repeats it.
pub const CONVENTIONS: &str = "Parameters: a write to an existing row names the version it read; limit and offset page a \
     list (limit default 20, at most 500, unless the tool says); maxTokens bounds the whole answer (tokens = characters/4, \
     default 4000 unless said); minScore is the cosine floor of hits no word matched; a list parameter takes an array \
     or a comma-separated string, and a list filter matches any of its values.\n";

/// The tools served by one server, chosen by toolset.
pub struct Registry {
    pub defs: Vec<&'static ToolDef>,
    pub tools: Arc<Vec<Tool>>,
    pub toolsets: Vec<String>,
}

impl Registry {
    pub fn new(toolsets: &[String]) -> Registry {
        let defs: Vec<&'static ToolDef> = tasks::TOOLS
            .iter()
            .chain(graph::TOOLS.iter())
            .chain(code::TOOLS.iter())
            .chain(ontology::TOOLS.iter())
            .chain(memory::TOOLS.iter())
            .chain(find::TOOLS.iter())
            .copied()
            .filter(|d| d.toolset == find::ANY || toolsets.iter().any(|t| t == d.toolset))
            .collect();
        let tools = Arc::new(defs.iter().map(|d| d.to_tool()).collect());
        Registry {
            defs,
            tools,
            toolsets: toolsets.to_vec(),
        }
    }

    pub fn find(&self, name: &str) -> Option<&'static ToolDef> {
        self.defs.iter().copied().find(|d| d.name == name)
    }

    /// A few lines telling an agent what each served toolset is for.
    pub fn instructions(&self) -> String {
        let mut s = String::from(
            "Cairn: a task orchestrator with a persistent memory of the codebase. Every tool answers \
             {success, message, data, error:{code, details}}; on CONFLICT re-read and retry with the current version.\n",
        );
        // What every tool's parameters share, said once here rather than on each.
        s.push_str(CONVENTIONS);
        for (name, purpose) in TOOLSET_PURPOSES {
            if self.toolsets.iter().any(|t| t == name) {
                s.push_str(&format!("- {name}: {purpose}\n"));
            }
        }
        let skills: Vec<&str> = prompts::SKILLS.iter().map(|k| k.name()).collect();
        s.push_str(&format!(
            "Workflows to follow are served as prompts: {}.\n",
            skills.join(", ")
        ));
        s
    }
}

/// Older parameter names still accepted per tool, with the name published instead:
/// an entity's id is `entityId` wherever a tool names one entity.
fn aliases(tool: &str) -> &'static [(&'static str, &'static str)] {
    match tool {
        "get_entity" | "update_entity" | "delete_entity" => &[("id", "entityId")],
        // One name for the entity an ontology tool is about, as `ontology_read` has.
        // `startIri` was the subgraph's (once `ontology_traverse`) name for it.
        "ontology_read" => &[("startIri", "iri")],
        "ontology_propose" => &[("targetIri", "iri")],
        _ => &[],
    }
}

/// A `projectId` given as a name or a path in the project's repository, replaced by
/// the project's id before the arguments are checked: every tool taking a project
/// reads it through `service::projects::resolve`.
async fn resolve_project(
    app: &App,
    def: &ToolDef,
    raw: &mut Map<String, Value>,
) -> Result<(), Error> {
    const KEY: &str = "projectId";
    if !def.params.iter().any(|p| p.0 == KEY) {
        return Ok(());
    }
    if let Some(Value::String(s)) = raw.get(KEY) {
        if s.trim().is_empty() || s.contains('\0') || s.len() > 4096 {
            // Left to the argument checks, which name what is wrong.
            return Ok(());
        }
        // The service says what was not found; what to send instead names tools.
        let id = crate::service::projects::resolve(app, KEY, s)
            .await
            .map_err(|e| match e {
                Error::NotFoundNear {
                    entity: "project",
                    id,
                    message,
                    nearest,
                } => Error::NotFoundNear {
                    entity: "project",
                    message: if id.starts_with('/') {
                        format!("{message}: bind one with init_project (name, repoPath), or send the project's id or name")
                    } else {
                        format!("{message}: query_container overview (containerType project) lists them; send its id, name or a path in its repository")
                    },
                    id,
                    nearest,
                },
                other => other,
            })?;
        raw.insert(KEY.into(), Value::String(id));
    }
    Ok(())
}

/// A read token's call of a tool that writes, refused before anything runs: by the
/// tool's declared effect and read-only operations (`ToolDef::writes`), so a new
/// writing tool is refused without being listed anywhere else.
fn refuse_reader(app: &App, def: &ToolDef, raw: Option<&Map<String, Value>>) -> Option<Error> {
    let agent = app.agent.as_deref()?;
    if agent.role != Role::Read {
        return None;
    }
    let op = raw.and_then(|r| r.get("operation")).and_then(Value::as_str);
    if !def.writes(op) {
        return None;
    }
    let what = match op {
        Some(op) if def.params.iter().any(|p| p.0 == "operation") => {
            format!(
                "{} operation {}",
                def.name,
                op.chars().take(40).collect::<String>()
            )
        }
        _ => def.name.to_string(),
    };
    let reads = if def.read_ops.is_empty() {
        String::new()
    } else {
        format!(" ({} {} only read)", def.name, def.read_ops.join(", "))
    };
    Some(Error::Forbidden {
        message: format!(
            "agent {} holds a read token and {what} writes{reads}: nothing was done; call the tools \
             that read (tools/list marks them readOnlyHint), or ask the operator for a write token \
             (cairn token add NAME --role write)",
            agent.name
        ),
        agent: agent.name.to_string(),
    })
}

/// Runs one tool call and answers its envelope; shared by the MCP server and `cairn call`.
/// Never fails and never unwinds: a panic inside a tool becomes an INTERNAL_ERROR answer.
/// Long operations inside the call report to `progress` (`Progress::default()`: nowhere).
pub async fn dispatch(
    app: &App,
    reg: &Registry,
    name: &str,
    raw: Option<Map<String, Value>>,
    progress: Progress,
) -> Value {
    let started = std::time::Instant::now();
    let env = answer(app, reg, name, raw, progress).await;
    // A name no tool has is not counted: the metrics' labels are the served tools.
    if reg.find(name).is_some() {
        let code = env["error"]["code"].as_str().unwrap_or("OK");
        app.metrics.record(name, code, started.elapsed());
    }
    env
}

/// A read tool's envelope for a resource (`resources::read`): the call a tool makes,
/// not counted among the tools' calls in the metrics.
pub async fn read_tool(app: &App, reg: &Registry, name: &str, raw: Map<String, Value>) -> Value {
    answer(app, reg, name, Some(raw), Progress::default()).await
}

/// [`dispatch`] without the metrics.
async fn answer(
    app: &App,
    reg: &Registry,
    name: &str,
    raw: Option<Map<String, Value>>,
    progress: Progress,
) -> Value {
    let Some(def) = reg.find(name) else {
        // The nearest names, not all of them: the agent has tools/list for that.
        let names: Vec<&str> = reg.defs.iter().map(|d| d.name).collect();
        let nearest: Vec<String> = help::close_names(name, &names)
            .into_iter()
            .map(str::to_string)
            .collect();
        let shown: String = name.chars().take(80).collect();
        let message = if nearest.is_empty() {
            format!("no tool {shown} is served: tools/list names them")
        } else {
            format!("no tool {shown} is served; nearest: {}", nearest.join(", "))
        };
        return envelope::failure(&Error::NotFoundNear {
            entity: "tool",
            id: shown,
            message,
            nearest,
        });
    };
    if let Some(refusal) = refuse_reader(app, def, raw.as_ref()) {
        return envelope::failure(&refusal);
    }
    let app = &app.with_progress(progress);
    // The background embedder waits while any call is in flight.
    let _busy = app.background.call();
    let run = async {
        let mut raw = raw.unwrap_or_default();
        args::unalias(&mut raw, aliases(name))?;
        resolve_project(app, def, &mut raw).await?;
        let a = Args::new(Some(raw), def.params)?;
        match def.toolset {
            "tasks" => tasks::call(app, name, a).await,
            "graph" => graph::call(app, name, a).await,
            "code" => code::call(app, name, a).await,
            "ontology" => ontology::call(app, name, a).await,
            "memory" => memory::call(app, name, a).await,
            find::ANY => Some(find::call(app, &reg.toolsets, a).await),
            _ => None,
        }
        .unwrap_or_else(|| Err(Error::Internal(format!("tool {name} has no handler"))))
    };
    // Whatever the call logs (an internal error's cause among it) names the tool.
    let out = AssertUnwindSafe(run)
        .catch_unwind()
        .instrument(tracing::error_span!("call", tool = name))
        .await;
    // A write may leave texts without vectors (entities, atoms, classes a sync
    // brought, statements, tasks): the background embeds them once the server is
    // idle, so the next search need not wait. A task write does so only once the model
    // is loaded (a search loaded it): a server used for tasks alone never loads it.
    let embeds = match def.toolset {
        "code" | "graph" | "ontology" | "memory" => true,
        _ => app.embedder.loaded().is_some(),
    };
    if def.effect != Effect::ReadOnly && embeds {
        crate::service::embedding::schedule(app);
    }
    match out {
        Ok(Ok(Reply {
            partial: Some(e),
            data,
            ..
        })) => envelope::failure_with_data(&e, data),
        Ok(Ok(reply)) => envelope::success(reply),
        Ok(Err(e)) => envelope::failure(&e),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            envelope::failure(&Error::Internal(format!("the tool panicked: {what}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::schema::{Effect, Ty, P};
    use super::Registry;

    /// A read-only operation names one of its tool's operations, on a tool that
    /// writes: a misspelt one would leave a read agent refused, an entry on a read
    /// tool would say nothing.
    #[test]
    fn read_ops_are_operations_of_writing_tools() {
        let all: Vec<String> = super::TOOLSET_PURPOSES
            .iter()
            .map(|(t, _)| t.to_string())
            .collect();
        let reg = Registry::new(&all);
        let mut seen = 0;
        for d in &reg.defs {
            if d.read_ops.is_empty() {
                continue;
            }
            assert_ne!(d.effect, Effect::ReadOnly, "{}", d.name);
            let ops = d.params.iter().find_map(|P(n, ty, _)| match (n, ty) {
                (&"operation", Ty::Enum(v)) => Some(*v),
                _ => None,
            });
            let ops = ops.unwrap_or_else(|| panic!("{} has no operation enum", d.name));
            for op in d.read_ops {
                assert!(ops.contains(op), "{} has no operation {op}", d.name);
                assert!(!d.writes(Some(op)), "{} {op}", d.name);
            }
            assert!(d.writes(None) && d.writes(Some("nope")), "{}", d.name);
            seen += 1;
        }
        assert!(seen >= 5, "{seen}");
    }
}
