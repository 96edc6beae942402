//! `track_declarations`: bulk anchoring (`service::code::track`) on the wire.

use serde_json::{json, Value};

use crate::error::Result;
use crate::mcp::args::Args;
use crate::mcp::code::{commands, repo_path};
use crate::mcp::envelope::Reply;
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::service::code::track::{self, Track};
use crate::service::App;

/// Failures and server-less files listed in full; the rest counted.
const LISTED: usize = 20;

pub const TRACK_DECLARATIONS: ToolDef = ToolDef {
    name: "track_declarations",
    title: "Track declarations",
    toolset: "code",
    description: "Entities for a file's or folder's untracked top-level declarations by name path (needs a language server).",
    params: &[
        P("projectId", Ty::Id, ""),
        P("path", Ty::Str, ""),
        P("categoryIds", Ty::List, ""),
        P("parentIds", Ty::List, ""),
        P("limit", Ty::Int, "Default 100"),
    ],
    required: &["projectId", "path", "categoryIds"],
    effect: Effect::Additive,
    idempotent: false,
    read_ops: &[],
};

pub async fn track_declarations(app: &App, a: Args) -> Result<Reply> {
    let project_id = a.req_id("projectId")?;
    let path = repo_path("path", &a.req_str("path", 4096)?)?;
    // None is refused by the service's classification check, before any write.
    let category_ids = a.list("categoryIds")?.unwrap_or_default();
    let parent_ids = commands::id_list(&a, "parentIds")?.unwrap_or_default();
    let limit = a
        .int("limit", 1, track::MAX_CREATE as i64)?
        .map_or(track::DEFAULT_CREATE, |n| n as usize);
    let t = track::track(
        app,
        Track {
            project_id,
            path: path.clone(),
            category_ids,
            parent_ids,
            limit,
        },
    )
    .await?;
    let created: Vec<Value> = t
        .created
        .iter()
        .map(|(e, r)| {
            json!({
                "entityId": e.id, "name": e.name, "documentPath": r.document_path,
                "lspSymbol": r.lsp_symbol, "startLine": r.start_line, "endLine": r.end_line,
            })
        })
        .collect();
    let failed: Vec<Value> = t
        .failed
        .iter()
        .take(LISTED)
        .map(|f| {
            json!({
                "documentPath": f.document_path, "lspSymbol": f.symbol,
                "code": f.error.code(), "error": f.error.to_string(),
            })
        })
        .collect();
    let mut data = json!({
        "created": created,
        "alreadyTracked": t.already_tracked,
        "failed": failed,
        "files": t.files,
    });
    if t.failed.len() > LISTED {
        data["failedOmitted"] = json!(t.failed.len() - LISTED);
    }
    if !t.no_server.is_empty() {
        data["noServer"] = json!({
            "count": t.no_server.len(),
            "first": t.no_server.iter().take(LISTED).collect::<Vec<_>>(),
            "next": "configure a server in [lsp], or create_entity with startLine/endLine",
        });
    }
    let mut next = Vec::new();
    if t.omitted > 0 {
        data["omitted"] = json!(t.omitted);
        next.push(format!(
            "{} more declarations: call again (tracked ones are skipped)",
            t.omitted
        ));
    }
    if t.files_omitted > 0 {
        data["filesOmitted"] = json!(t.files_omitted);
        next.push(format!(
            "{} files past the first {}: call per subfolder",
            t.files_omitted,
            track::MAX_FILES
        ));
    }
    if !next.is_empty() {
        data["next"] = json!(next.join("; "));
    }
    let message = format!(
        "{} entities created in {path} ({} already tracked, {} failed)",
        t.created.len(),
        t.already_tracked,
        t.failed.len()
    );
    if t.created.is_empty() {
        // Nothing tracked although something failed: answered as a failure, with the
        // first refusal as its error and the report as its data.
        if let Some(first) = t.failed.into_iter().next() {
            return Ok(Reply::partial(first.error, data));
        }
    }
    Ok(Reply::new(message, data))
}
