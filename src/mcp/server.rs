//! The rmcp server handler: initialize, tools/list and tools/call over any transport.
//! Tool calls are answered with the envelope as JSON text and as `structuredContent`.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, Implementation, ListPromptsResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::mcp::{dispatch, prompts, Registry};
use crate::service::App;

#[derive(Clone)]
pub struct Server {
    app: App,
    reg: Arc<Registry>,
    instructions: Arc<str>,
}

impl Server {
    pub fn new(app: App, reg: Registry) -> Server {
        let instructions = reg.instructions().into();
        Server {
            app,
            reg: Arc::new(reg),
            instructions,
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
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
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        // An unknown prompt name is a malformed request, not a tool failure.
        prompts::get(&request.name).map(Into::into).ok_or_else(|| {
            let names: Vec<String> = prompts::list().into_iter().map(|p| p.name).collect();
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

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let env = dispatch(&self.app, &self.reg, &request.name, request.arguments).await;
        let failed = env["success"] != serde_json::Value::Bool(true);
        // `Value`'s Display writes through fmt::Formatter piece by piece; writing into
        // a byte buffer is the cheaper way to the text copy of a large answer.
        let mut text = Vec::with_capacity(4096);
        serde_json::to_writer(&mut text, &env)
            .map_err(|e| McpError::internal_error(format!("cannot encode the answer: {e}"), None))?;
        let text = String::from_utf8(text)
            .map_err(|e| McpError::internal_error(format!("cannot encode the answer: {e}"), None))?;
        let mut r = if failed {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        r.structured_content = Some(env);
        Ok(r.into())
    }
}
