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
//!
//! Bounds it adds ([`super::sessions`] keeps the sessions): a body must arrive
//! within [`Limits::body_timeout`] of its headers (408 and the connection closed
//! past it); an `initialize` past the session cap gets 503 with `Retry-After` and a
//! JSON-RPC error saying so; `DELETE` with an unknown `Mcp-Session-Id` gets 404, as
//! GET and POST do, and one that ends a session 204.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::sessions::{self, Sessions};
use crate::mcp::server::Server;
use crate::mcp::transport::{screen_body, Screened};

/// The largest request body read (4 MiB): past it, 413.
pub const MAX_BODY: usize = 4 << 20;

pub type Body = BoxBody<Bytes, Infallible>;

/// The bounds `/mcp` keeps (the `[http]` settings).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub sessions: sessions::Limits,
    /// How long a POST body may take to arrive once its headers have.
    pub body_timeout: Duration,
}

/// rmcp's service for one server: every session gets a clone of `server` (one
/// store, one registry, one set of caches).
pub struct Mcp {
    service: StreamableHttpService<Server, Sessions>,
    sessions: Arc<Sessions>,
    body_timeout: Duration,
}

impl Mcp {
    /// How many MCP sessions are open.
    pub fn live_sessions(&self) -> usize {
        self.sessions.live()
    }

    /// `cancel` ends every session and its streams (at shutdown, once the calls in
    /// flight are answered). `loopback`: rmcp checks `Host` against the loopback
    /// names too (as the front does); on other binds the token guards instead.
    /// Must be called inside the runtime (the idle sessions' reaper starts here).
    pub fn new(server: Server, loopback: bool, limits: Limits, cancel: CancellationToken) -> Mcp {
        let mut config = StreamableHttpServerConfig::default()
            .with_cancellation_token(cancel.clone())
            .with_max_request_body_bytes(MAX_BODY)
            // The Origin check is the front's (the server's own origin, which rmcp's
            // static list cannot name on a non-loopback bind, and --allow-origin).
            .disable_allowed_origins();
        config = if loopback {
            config.with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
        } else {
            config.disable_allowed_hosts()
        };
        let sessions = Sessions::new(limits.sessions, cancel);
        Mcp {
            service: StreamableHttpService::new(
                move || Ok(server.clone()),
                sessions.clone(),
                config,
            ),
            sessions,
            body_timeout: limits.body_timeout,
        }
    }

    /// Serves one request to `/mcp` (already authorised).
    pub async fn handle(&self, req: Request<Incoming>) -> Response<Body> {
        if req.method() == http::Method::DELETE {
            return self.delete(req).await;
        }
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
        let bytes = match tokio::time::timeout(self.body_timeout, read_body(&mut body)).await {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(Unread::Broken)) => {
                return plain(
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read",
                )
            }
            // Thrown away in its own time: the limit is on what is read, not dropped.
            Ok(Err(Unread::TooLarge)) => {
                drain(&mut body).await;
                return too_large();
            }
            Err(_) => return too_slow(self.body_timeout),
        };
        let bytes = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
            Some(rest) => Bytes::copy_from_slice(rest),
            None => bytes,
        };
        match screen_body(&bytes) {
            Screened::Pass => {
                // A message without a session is an `initialize` (rmcp answers any
                // other with 400): it takes a session slot, if one is free.
                let _slot = if parts.headers.contains_key(SESSION_ID) {
                    None
                } else {
                    match self.sessions.reserve() {
                        Ok(slot) => Some(slot),
                        Err(full) => return sessions_full(&full, &bytes),
                    }
                };
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

    /// `DELETE /mcp`: 404 for a session that is not open (rmcp would answer 202 to
    /// any id), and 204 for one it ends (rmcp's 202 reads as a failure to clients
    /// that expect 200 or 204).
    async fn delete(&self, req: Request<Incoming>) -> Response<Body> {
        let id = req
            .headers()
            .get(SESSION_ID)
            .map(|v| v.to_str().map(str::to_string));
        if let Some(id) = id {
            let known = id.as_deref().is_ok_and(|id| self.sessions.is_open(id));
            if !known {
                return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
            }
        }
        let mut r = self.service.handle(req).await;
        if r.status() == StatusCode::ACCEPTED {
            *r.status_mut() = StatusCode::NO_CONTENT;
        }
        r
    }
}

/// The header naming a request's session.
const SESSION_ID: &str = "mcp-session-id";

/// Why a body was not read.
enum Unread {
    /// It broke off.
    Broken,
    /// It is past [`MAX_BODY`]; the rest is still to come.
    TooLarge,
}

/// A POST body, at most [`MAX_BODY`] bytes.
async fn read_body(body: &mut Incoming) -> Result<Bytes, Unread> {
    let mut bytes = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| Unread::Broken)?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > MAX_BODY {
                return Err(Unread::TooLarge);
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes.freeze())
}

/// 408 for a body that did not arrive in time; the connection closes with it (the
/// rest of the body may still come, and would be read as the next request).
fn too_slow(limit: Duration) -> Response<Body> {
    let mut r = plain(
        StatusCode::REQUEST_TIMEOUT,
        &format!(
            "the request body did not arrive within {} ms of its headers (body_timeout_ms)",
            limit.as_millis()
        ),
    );
    r.headers_mut().insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    r
}

/// 503 for an `initialize` past the session cap: `Retry-After` (whole seconds, at
/// least one) and a JSON-RPC error with the request's id, saying what is full and
/// what frees a slot.
fn sessions_full(full: &sessions::Full, body: &[u8]) -> Response<Body> {
    #[derive(serde::Deserialize)]
    struct Id {
        id: Option<rmcp::model::RequestId>,
    }
    let id = serde_json::from_slice::<Id>(body).ok().and_then(|m| m.id);
    let secs = full.retry_after.as_secs_f64().ceil().max(1.0) as u64;
    let message = format!(
        "the server has {} MCP sessions open, its limit (max_sessions): try again in {secs} s; \
         a session closes when its client ends it (DELETE /mcp) or after it has been idle \
         for session_idle_ms",
        full.max
    );
    let error = rmcp::model::ServerJsonRpcMessage::Error(rmcp::model::JsonRpcError::new(
        id,
        rmcp::model::ErrorData::new(
            rmcp::model::ErrorCode(-32000),
            message,
            Some(serde_json::json!({ "maxSessions": full.max, "retryAfterSeconds": secs })),
        ),
    ));
    Response::builder()
        .status(StatusCode::SERVICE_UNAVAILABLE)
        .header(http::header::CONTENT_TYPE, "application/json")
        .header(http::header::RETRY_AFTER, secs.to_string())
        .body(Full::new(Bytes::from(serde_json::to_vec(&error).unwrap_or_default())).boxed())
        .unwrap_or_else(|_| Response::new(empty()))
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
