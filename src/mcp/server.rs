//! The rmcp server handler: initialize, tools/list and tools/call over any transport.
//! Tool calls are answered with the envelope as JSON text and as `structuredContent`.
//! A call whose `_meta` carries a `progressToken` gets `notifications/progress` while
//! its long operations run ([`Notifier`]); a call without one gets none. Resources
//! (`cairn://` URIs, their reads and subscriptions) are `mcp::resources`'.

use std::sync::Arc;

use std::sync::Mutex;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio::sync::mpsc;

use crate::mcp::resources::{self, subscribe::Subscriptions};
use crate::mcp::schema::Effect;
use crate::mcp::{dispatch, prompts, Registry};
use crate::service::agent::Agent;
use crate::service::progress::{Progress, Sink};
use crate::service::App;

/// Turns one call's progress reports into `notifications/progress` for its token.
/// The service reports from any thread and must not wait, so reports are queued and
/// one task sends them in order through the peer.
struct Notifier {
    token: ProgressToken,
    /// `None` once the call is answered: later reports are dropped.
    tx: Mutex<Option<mpsc::UnboundedSender<ProgressNotificationParam>>>,
}

impl Notifier {
    fn start(
        peer: Peer<RoleServer>,
        token: ProgressToken,
    ) -> (Arc<Notifier>, (Arc<Notifier>, tokio::task::JoinHandle<()>)) {
        let (tx, mut rx) = mpsc::unbounded_channel::<ProgressNotificationParam>();
        let task = tokio::spawn(async move {
            while let Some(p) = rx.recv().await {
                if let Err(e) = peer.notify_progress(p).await {
                    // The client went away; the call itself will find out.
                    tracing::debug!(error = %e, "progress notification not sent");
                    break;
                }
            }
        });
        let n = Arc::new(Notifier {
            token,
            tx: Mutex::new(Some(tx)),
        });
        (n.clone(), (n, task))
    }

    /// Stops queueing; the task ends once it has sent what is queued.
    fn close(&self) {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
    }
}

impl Sink for Notifier {
    fn send(&self, progress: u64, total: Option<u64>, message: String) {
        let mut p = ProgressNotificationParam::new(self.token.clone(), progress as f64)
            .with_message(message);
        if let Some(t) = total {
            p = p.with_total(t as f64);
        }
        if let Ok(tx) = self.tx.lock() {
            if let Some(tx) = tx.as_ref() {
                let _ = tx.send(p);
            }
        }
    }
}

#[derive(Clone)]
pub struct Server {
    app: App,
    reg: Arc<Registry>,
    instructions: Arc<str>,
    /// Every session's resource subscriptions (one book: HTTP sessions share it).
    subs: Arc<Subscriptions>,
}

impl Server {
    pub fn new(app: App, reg: Registry) -> Server {
        let instructions = reg.instructions().into();
        Server {
            app,
            reg: Arc::new(reg),
            instructions,
            subs: Arc::default(),
        }
    }
}

impl Server {
    /// Whether the memory toolset is served (it brings the reflection prompt).
    fn memory(&self) -> bool {
        self.reg.toolsets.iter().any(|t| t == "memory")
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                // Subscriptions are served; the list is not announced as changing:
                // it holds the tasks changed last, which every write reorders.
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")))
        .with_instructions(self.instructions.to_string())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(
            self.reg.tools.as_ref().clone(),
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(prompts::list(
            self.memory(),
        )))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name == prompts::REFLECTION && self.memory() {
            let arg = |k: &str| {
                request
                    .arguments
                    .as_ref()
                    .and_then(|m| m.get(k))
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            let (ids, session, limit) = (arg("ids"), arg("session"), arg("limit"));
            return match crate::mcp::memory::reflection_prompt(
                &self.app,
                ids.as_deref(),
                session.as_deref(),
                limit.as_deref(),
            )
            .await
            {
                Ok(text) => Ok(prompts::text_result(
                    text,
                    "Answer with the JSON array only, then pass it to manage_diary ingest",
                )
                .into()),
                Err(e) => Err(McpError::invalid_params(e.to_string(), None)),
            };
        }
        // An unknown prompt name is a malformed request, not a tool failure.
        prompts::get(&request.name).map(Into::into).ok_or_else(|| {
            let names: Vec<String> = prompts::list(self.memory())
                .into_iter()
                .map(|p| p.name)
                .collect();
            McpError::invalid_params(
                format!(
                    "no prompt named '{}'; available: {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            )
        })
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        resources::list(&self.app, &self.reg, cursor).await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(resources::templates(&self.reg))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        Box::pin(resources::read(&self.app, &self.reg, &request.uri))
            .await
            .map(Into::into)
    }

    // The session-scoped subscriptions of protocol versions with `initialize` (the
    // versions Cairn's clients negotiate); `subscriptions/listen` is not served.
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        // A resource that cannot be read cannot be subscribed to; the first read is
        // what later reads are compared with.
        let first = Box::pin(resources::text(&self.app, &self.reg, &request.uri)).await;
        if let Err(e) = &first {
            return Err(e.clone());
        }
        self.subs
            .add(&self.app, &self.reg, context.peer, &request.uri, &first)
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::parse(&self.reg, &request.uri)?;
        self.subs.remove(&context.peer, &request.uri);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (progress, forwarder) = match context.meta.get_progress_token() {
            Some(token) => {
                let (sink, forwarder) = Notifier::start(context.peer.clone(), token);
                (Progress::to(sink), Some(forwarder))
            }
            None => (Progress::default(), None),
        };
        // Boxed: rmcp moves each request's task by value as it spawns it, and the
        // tool's state machine is most of that task.
        // Over HTTP, `web` put the named agent its token proved on the request, which
        // rmcp hands over among the request's parts; stdio has none.
        let agent = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.extensions.get::<Arc<Agent>>())
            .cloned();
        let env = Box::pin(dispatch(
            &self.app.with_agent(agent),
            &self.reg,
            &request.name,
            request.arguments,
            progress,
        ))
        .await;
        // Every notification goes out before the answer: a client may forget the
        // token once the call is answered, and MCP wants progress to stop there.
        if let Some((sink, task)) = forwarder {
            sink.close();
            let _ = task.await;
        }
        // A write may change what a subscribed resource reads.
        if self
            .reg
            .find(&request.name)
            .is_some_and(|d| d.effect != Effect::ReadOnly)
        {
            self.subs.changed();
        }
        Ok(tool_result(env).into())
    }
}

/// A tool's answer as MCP carries it: the envelope as text content and as
/// `structuredContent`, `isError` when it failed.
pub fn tool_result(env: serde_json::Value) -> CallToolResult {
    let failed = env["success"] != serde_json::Value::Bool(true);
    // A `Value` always encodes (its keys are strings).
    let text = serde_json::to_string(&env).unwrap_or_default();
    let mut r = if failed {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    r.structured_content = Some(env);
    r
}
