//! `/mcp`: MCP Streamable HTTP through rmcp's own server transport, with the
//! stdio guard's idea in front of it.
//!
//! rmcp's service does the protocol: sessions (`Mcp-Session-Id`, 404 for an unknown
//! one), one event stream per request carrying that request's progress notifications
//! and then its answer, the standalone GET stream, DELETE. Before it, this front reads
//! a POST body itself, at most [`MAX_BODY`] bytes (413 past that, before reading more
//! than the limit), and screens it with [`crate::mcp::transport::screen_body`]: a
//! body rmcp would answer with 415 and plain text (not JSON, no request, malformed
//! params of a known method) gets a JSON-RPC error with HTTP 400 instead, carrying
//! the request's id when one can be read.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::mcp::server::Server;
use crate::mcp::transport::{screen_body, Screened};

/// The largest request body read (4 MiB): past it, 413.
pub const MAX_BODY: usize = 4 << 20;

pub type Body = BoxBody<Bytes, Infallible>;

/// rmcp's service for one server: every session gets a clone of `server` (one
/// store, one registry, one set of caches).
pub struct Mcp {
    service: StreamableHttpService<Server, LocalSessionManager>,
}

impl Mcp {
    /// `cancel` ends every session and its streams (at shutdown, once the calls in
    /// flight are answered). `loopback`: rmcp checks `Host` against the loopback
    /// names too (as the front does); on other binds the token guards instead.
    pub fn new(server: Server, loopback: bool, cancel: CancellationToken) -> Mcp {
        let mut config = StreamableHttpServerConfig::default()
            .with_cancellation_token(cancel)
            .with_max_request_body_bytes(MAX_BODY)
            // The Origin check is the front's (the server's own origin, which rmcp's
            // static list cannot name on a non-loopback bind, and --allow-origin).
            .disable_allowed_origins();
        config = if loopback {
            config.with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
        } else {
            config.disable_allowed_hosts()
        };
        let session_manager = Arc::new(LocalSessionManager::default());
        Mcp {
            service: StreamableHttpService::new(
                move || Ok(server.clone()),
                session_manager,
                config,
            ),
        }
    }

    /// Serves one request to `/mcp` (already authorised).
    pub async fn handle(&self, req: Request<Incoming>) -> Response<Body> {
        if req.method() != http::Method::POST {
            return self.service.handle(req).await;
        }
        let declared = req
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_BODY as u64) {
            return too_large();
        }
        let (parts, body) = req.into_parts();
        let bytes = match Limited::new(body, MAX_BODY).collect().await {
            Ok(b) => b.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => return too_large(),
            Err(e) => {
                tracing::debug!(error = %e, "request body not read");
                return plain(StatusCode::BAD_REQUEST, "the request body could not be read");
            }
        };
        let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
            Some(rest) => Bytes::copy_from_slice(rest),
            None => bytes,
        };
        match screen_body(&bytes) {
            Screened::Pass => {
                let req = Request::from_parts(parts, Full::new(bytes));
                self.service.handle(req).await
            }
            Screened::Ignore => Response::builder()
                .status(StatusCode::ACCEPTED)
                .body(empty())
                .unwrap_or_else(|_| Response::new(empty())),
            Screened::Answer(message) => {
                let body = serde_json::to_vec(&message).unwrap_or_default();
                Response::builder()
                    .status(StatusCode::BAD_REQUEST)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Full::new(Bytes::from(body)).boxed())
                    .unwrap_or_else(|_| Response::new(empty()))
            }
        }
    }
}

fn too_large() -> Response<Body> {
    plain(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!(
            "the request body is over {} MiB; nothing of it was read",
            MAX_BODY >> 20
        ),
    )
}

pub fn empty() -> Body {
    Full::new(Bytes::new()).boxed()
}

/// A short plain-text answer.
pub fn plain(status: StatusCode, text: &str) -> Response<Body> {
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(Full::new(Bytes::from(format!("{text}\n"))).boxed())
        .unwrap_or_else(|_| Response::new(empty()))
}
