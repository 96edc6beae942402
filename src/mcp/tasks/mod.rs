//! The `tasks` toolset: the task orchestrator, compatible with the TypeScript port.

pub mod brief;
pub mod containers;
pub mod sections;
pub mod templates;
pub mod workflow;

use crate::domain::ItemKind;
use crate::error::Result;
use crate::mcp::args::Args;
use crate::mcp::envelope::Reply;
use crate::mcp::schema::ToolDef;
use crate::service::App;

pub const TOOLS: &[&ToolDef] = &[
    &containers::QUERY_CONTAINER,
    &containers::MANAGE_CONTAINER,
    &sections::QUERY_SECTIONS,
    &sections::MANAGE_SECTIONS,
    &templates::QUERY_TEMPLATES,
    &templates::MANAGE_TEMPLATE,
    &templates::APPLY_TEMPLATE,
    &templates::LIST_TAGS,
    &templates::GET_TAG_USAGE,
    &templates::RENAME_TAG,
    &workflow::GET_NEXT_TASK,
    &workflow::GET_BLOCKED_TASKS,
    &workflow::GET_NEXT_FEATURE,
    &workflow::GET_BLOCKED_FEATURES,
    &workflow::QUERY_WORKFLOW_STATE,
    &workflow::QUERY_DEPENDENCIES,
    &workflow::MANAGE_DEPENDENCY,
    &workflow::ADVANCE,
    &workflow::REVERT,
    &workflow::TERMINATE,
    &workflow::BLOCK,
    &workflow::UNBLOCK,
    &workflow::SYNC,
];

/// Runs one tool of this toolset; `None` when the name is not one of its tools.
pub async fn call(app: &App, name: &str, a: Args) -> Option<Result<Reply>> {
    Some(match name {
        "query_container" => containers::query(app, a).await,
        "manage_container" => containers::manage(app, a).await,
        "query_sections" => sections::query(app, a).await,
        "manage_sections" => sections::manage(app, a).await,
        "query_templates" => templates::query(app, a).await,
        "manage_template" => templates::manage(app, a).await,
        "apply_template" => templates::apply(app, a).await,
        "list_tags" => templates::list_tags(app, a).await,
        "get_tag_usage" => templates::tag_usage(app, a).await,
        "rename_tag" => templates::rename_tag(app, a).await,
        "get_next_task" => workflow::next_task(app, a).await,
        "get_blocked_tasks" => workflow::blocked(app, a, ItemKind::Task).await,
        "get_next_feature" => workflow::next_feature(app, a).await,
        "get_blocked_features" => workflow::blocked(app, a, ItemKind::Feature).await,
        "query_workflow_state" => workflow::state(app, a).await,
        "query_dependencies" => workflow::dependencies(app, a).await,
        "manage_dependency" => workflow::manage_dependency(app, a).await,
        "advance" => workflow::advance(app, a).await,
        "revert" => workflow::revert(app, a).await,
        "terminate" => workflow::terminate(app, a).await,
        "block" => workflow::block(app, a).await,
        "unblock" => workflow::unblock(app, a).await,
        "sync" => workflow::sync(app, a).await,
        _ => return None,
    })
}
