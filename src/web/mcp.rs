//! `/mcp`: MCP Streamable HTTP through rmcp's own server transport, with the
//! stdio guard's idea in front of it.
//!
//! rmcp's service does the protocol: sessions (`Mcp-Session-Id`, 404 for an unknown
//! one), one event stream per request carrying that request's progress notifications
//! and then its answer, the standalone GET stream, DELETE. Before it, this front reads
//! a POST body itself, at most [`MAX_BODY`] bytes (413 past that, before reading more
//! than the limit; the rest of a refused body is read and dropped so that the client
//! sees the answer), and screens it with [`crate::mcp::transport::screen_body`]: a
//! body rmcp would answer with 415 and plain text (not JSON, no request, malformed
//! params of a known method) gets a JSON-RPC error with HTTP 400 instead, carrying
//! the request's id when one can be read.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
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
        let waits = req
            .headers()
            .get(http::header::EXPECT)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
        let (parts, mut body) = req.into_parts();
        if declared.is_some_and(|n| n > MAX_BODY as u64) {
            // A client that waits for "100 Continue" sends nothing more; any other is
            // already sending and would see its connection reset before the answer.
            if !waits {
                drain(&mut body).await;
            }
            return too_large();
        }
        let mut bytes = bytes::BytesMut::new();
        while let Some(frame) = body.frame().await {
            let Ok(frame) = frame else {
                return plain(
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read",
                );
            };
            if let Ok(data) = frame.into_data() {
                if bytes.len() + data.len() > MAX_BODY {
                    drain(&mut body).await;
                    return too_large();
                }
                bytes.extend_from_slice(&data);
            }
        }
        let bytes = bytes.freeze();
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
                // A tool's refusal (an argument nested too deep) is an answer, not
                // a bad request.
                let status = match message.as_ref() {
                    rmcp::model::JsonRpcMessage::Response(_) => StatusCode::OK,
                    _ => StatusCode::BAD_REQUEST,
                };
                let body = serde_json::to_vec(&message).unwrap_or_default();
                Response::builder()
                    .status(status)
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(Full::new(Bytes::from(body)).boxed())
                    .unwrap_or_else(|_| Response::new(empty()))
            }
        }
    }
}

/// How much of an oversized body is read and thrown away so that the 413 reaches a
/// client still sending; past it (or after [`DRAIN_TIME`]) the connection closes.
const DRAIN_MAX: usize = 64 << 20;
const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// Reads the rest of a refused body without keeping it.
async fn drain(body: &mut Incoming) {
    let mut seen = 0usize;
    let _ = tokio::time::timeout(DRAIN_TIME, async {
        while let Some(Ok(frame)) = body.frame().await {
            if let Some(d) = frame.data_ref() {
                seen += d.len();
                if seen > DRAIN_MAX {
                    break;
                }
            }
        }
    })
    .await;
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
