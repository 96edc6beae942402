//! `cairn serve --http ADDR:PORT`: MCP over Streamable HTTP at `/mcp`, the read-only
//! page at `/`, liveness at `/health`, on hyper (HTTP/1.1).
//!
//! This module owns HTTP and HTML; it knows neither SQL nor the tools. `/mcp` is
//! rmcp's transport in front of the same [`Server`] (registry, dispatch, envelope)
//! stdio serves; the page reads through `service`.
//!
//! Rules it keeps:
//! - A bind to anything but the loopback needs a token ([`auth`]); with a token, every
//!   request but `/health` must carry it (`/mcp`: `Authorization: Bearer` only).
//!   `Host` must name the loopback on a loopback bind; an `Origin` other than the
//!   server's own (or one named with `--allow-origin`) gets 403.
//! - Bodies over 4 MiB get 413; a body rmcp cannot read gets a JSON-RPC error.
//! - Every limit of [`HttpSettings`]: headers must arrive within `header_timeout`
//!   (hyper closes the connection past it, and an idle connection after it), a
//!   body within `body_timeout` of them (408); at most `max_sessions` MCP sessions
//!   are open, an idle one closes after `session_idle` ([`sessions`]).
//! - Shutdown (SIGTERM, Ctrl-C): the listener closes at once, new requests on open
//!   connections get 503, calls in flight get [`Options::grace`] to finish and be
//!   answered; then every session ends and the caller closes the store.

pub mod auth;
pub mod html;
pub mod mcp;
pub mod page;
pub mod sessions;
pub mod tokens;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body::{Frame, SizeHint};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::task_tracker::TaskTrackerToken;
use tokio_util::task::TaskTracker;

pub use crate::config::HttpSettings;
use crate::mcp::server::Server;
use crate::mcp::Registry;
use crate::service::App;
use auth::{Credentials, Policy, Refusal, Secrets};
use mcp::{plain, Body, Mcp};

/// How `cairn serve --http` runs.
pub struct Options {
    /// `ADDR:PORT` (port 0: any free port; the address served is printed).
    pub addr: String,
    /// The token, or the tokens file's agents (none: no token is asked for).
    pub secrets: Option<Secrets>,
    /// Origins allowed besides the server's own, normalised (`auth::parse_origin`).
    pub allow_origins: Vec<String>,
    /// How long calls in flight may take to finish once shutdown begins.
    pub grace: Duration,
    /// Sessions and timeouts.
    pub limits: HttpSettings,
}

/// Everything a request handler reads.
struct State {
    policy: Policy,
    mcp: Mcp,
    app: App,
    toolsets: Vec<String>,
    /// POSTs to `/mcp` and page renders not yet answered in full.
    in_flight: TaskTracker,
    stopping: AtomicBool,
}

/// The checked options and the socket listening: what [`serve`] serves on.
pub struct Bound {
    listener: TcpListener,
    loopback: bool,
    o: Options,
}

/// Resolves and binds `o.addr`, after checking that a bind off the loopback has a
/// token. Errors are for the operator: an address that cannot be used, a missing
/// token.
pub async fn bind(o: Options) -> Result<Bound, String> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(&o.addr)
        .await
        .map_err(|e| {
            format!(
                "--http {}: {e} (give ADDR:PORT, e.g. 127.0.0.1:8080)",
                o.addr
            )
        })?
        .collect();
    let Some(first) = addrs.first().copied() else {
        return Err(format!(
            "--http {}: the name resolves to no address",
            o.addr
        ));
    };
    let loopback = addrs.iter().all(auth::is_loopback);
    if !loopback && o.secrets.is_none() {
        return Err(format!(
            "--http {} is not a loopback address: anyone who reaches it could read and change \
             every project, so a token is required (--token-file PATH or $CAIRN_TOKEN; make one \
             with: openssl rand -hex 32 > token && chmod 600 token; or --tokens-file PATH, \
             filled by cairn token add NAME --role write --file PATH)",
            o.addr
        ));
    }
    let listener = TcpListener::bind(first)
        .await
        .map_err(|e| format!("cannot listen on {first}: {e}"))?;
    Ok(Bound {
        listener,
        loopback,
        o,
    })
}

/// Serves until SIGTERM or Ctrl-C, then drains (see the module doc).
pub async fn serve(app: App, reg: Registry, bound: Bound) -> Result<(), String> {
    let Bound {
        listener,
        loopback,
        o,
    } = bound;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot read the address listened on: {e}"))?;
    let cancel = CancellationToken::new();
    let toolsets = reg.toolsets.clone();
    let server = Server::new(app.clone(), reg);
    let keys = auth::keys(o.secrets)?;
    let limits = mcp::Limits {
        sessions: sessions::Limits {
            max: o.limits.max_sessions,
            idle: o.limits.session_idle,
        },
        body_timeout: o.limits.body_timeout,
    };
    let header_timeout = o.limits.header_timeout;
    let state = Arc::new(State {
        policy: Policy {
            keys,
            loopback,
            extra_origins: o.allow_origins,
        },
        mcp: Mcp::new(server, loopback, limits, cancel.clone()),
        app,
        toolsets,
        in_flight: TaskTracker::new(),
        stopping: AtomicBool::new(false),
    });
    let named = state
        .policy
        .keys
        .iter()
        .filter(|k| k.agent.is_some())
        .count();
    announce(&format!(
        "serving MCP at http://{local}/mcp and the page at http://{local}/{}",
        match (state.policy.guarded(), named) {
            (false, _) => String::new(),
            (true, 0) => " (token required)".to_string(),
            (true, n) => format!(" (token required: {n} named agents)"),
        }
    ));

    let connections = TaskTracker::new();
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stop = stop_signal();
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(x) => x,
                Err(e) => {
                    // Out of descriptors and the like: wait a moment, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        let mut stop_rx = stop_rx.clone();
        connections.spawn(async move {
            let svc = service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(handle(&state, req).await) }
            });
            let conn = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(%peer, error = %e, "connection ended");
                    }
                }
                _ = stop_rx.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    drop(listener);
    state.stopping.store(true, Ordering::SeqCst);
    announce("stopping: no new connections; waiting for the calls in flight");
    state.in_flight.close();
    if tokio::time::timeout(o.grace, state.in_flight.wait())
        .await
        .is_err()
    {
        tracing::warn!(
            grace = ?o.grace,
            "calls still running when the grace period ended; they are stopped unanswered"
        );
    }
    // Every session ends (their event streams close), then every connection.
    cancel.cancel();
    let _ = stop_tx.send(true);
    connections.close();
    if tokio::time::timeout(Duration::from_secs(5), connections.wait())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after shutdown; closing them");
    }
    announce("stopped");
    Ok(())
}

/// A line for the operator on stderr, whatever the log level (the address served).
fn announce(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "cairn: {line}");
}

/// SIGTERM or Ctrl-C (SIGINT).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "SIGTERM cannot be caught; Ctrl-C still stops");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

async fn handle(state: &State, req: Request<Incoming>) -> Response<Body> {
    let path = req.uri().path().to_string();
    if path == "/health" {
        return match *req.method() {
            Method::GET | Method::HEAD => plain(StatusCode::OK, "ok"),
            _ => not_allowed("GET"),
        };
    }
    if path == "/ready" {
        if !matches!(*req.method(), Method::GET | Method::HEAD) {
            return not_allowed("GET");
        }
        return match state.app.store.unready().await {
            None if !state.stopping.load(Ordering::SeqCst) => plain(StatusCode::OK, "ready"),
            None => plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down",
            ),
            Some(why) => plain(StatusCode::SERVICE_UNAVAILABLE, &why),
        };
    }
    if state.stopping.load(Ordering::SeqCst) {
        let mut r = plain(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is shutting down",
        );
        r.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        return r;
    }
    if path == "/mcp" {
        let agent = match state.policy.check(req.headers(), Credentials::BearerOnly) {
            Ok(key) => key.and_then(|k| k.agent.clone()),
            Err(refusal) => return refused(refusal, false),
        };
        // rmcp hands the request's headers to every handler (and to its debug logs):
        // once checked, the credentials go no further. The agent they proved goes
        // with the request, for `mcp::server` to find among rmcp's request parts.
        let mut req = req;
        req.headers_mut().remove(header::AUTHORIZATION);
        req.headers_mut().remove(header::COOKIE);
        if let Some(agent) = agent {
            req.extensions_mut().insert(agent);
        }
        let tracked = (req.method() == Method::POST).then(|| state.in_flight.token());
        let resp = state.mcp.handle(req).await;
        return match tracked {
            Some(t) => resp.map(|b| {
                Tracked {
                    inner: b,
                    _token: t,
                }
                .boxed()
            }),
            None => resp,
        };
    }
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        return not_allowed("GET");
    }
    if path == "/metrics" {
        // What a scraper sends: the bearer token (when the server has one).
        if let Err(refusal) = state.policy.check(req.headers(), Credentials::BearerOnly) {
            return refused(refusal, false);
        }
        return metrics(state).await;
    }
    let query = html::parse_query(req.uri().query().unwrap_or(""));
    // `/?token=…` once: the token is traded for the page's cookie and leaves the
    // address bar.
    if let Some((_, given)) = query.iter().find(|(k, _)| k == "token") {
        let mut headers = req.headers().clone();
        if let Ok(v) = HeaderValue::from_str(&format!("Bearer {given}")) {
            headers.insert(header::AUTHORIZATION, v);
        } else {
            headers.remove(header::AUTHORIZATION);
        }
        let key = match state.policy.check(&headers, Credentials::BearerOnly) {
            Ok(key) => key,
            Err(refusal) => return refused(refusal, true),
        };
        let rest: Vec<String> = query
            .iter()
            .filter(|(k, _)| k != "token")
            .map(|(k, v)| format!("{}={}", html::enc(k), html::enc(v)))
            .collect();
        let location = if rest.is_empty() {
            path.clone()
        } else {
            format!("{path}?{}", rest.join("&"))
        };
        let mut r = redirect(&location);
        if let Some(key) = key {
            if let Ok(v) = HeaderValue::from_str(&key.cookie.set_cookie()) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
        }
        return r;
    }
    let agent = match state
        .policy
        .check(req.headers(), Credentials::BearerOrCookie)
    {
        Ok(key) => key.and_then(|k| k.agent.clone()),
        Err(refusal) => return refused(refusal, true),
    };
    let _busy = state.in_flight.token();
    let nonce = uuid::Uuid::now_v7().simple().to_string();
    let r = page::Req {
        agent: agent.as_deref(),
        app: &state.app,
        toolsets: &state.toolsets,
        query,
        nonce: &nonce,
    };
    match page::render(&r, &path).await {
        page::Answer::Redirect(to) => redirect(&to),
        page::Answer::Html(status, text) => html_response(status, text, &nonce),
    }
}

fn html_response(status: StatusCode, text: String, nonce: &str) -> Response<Body> {
    let csp = format!(
        "default-src 'none'; style-src 'nonce-{nonce}'; script-src 'nonce-{nonce}'; \
         img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    );
    let mut b = Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header(header::CACHE_CONTROL, "no-store")
        .header("x-content-type-options", "nosniff")
        .header("referrer-policy", "no-referrer")
        .header("x-frame-options", "DENY");
    if let Ok(v) = HeaderValue::from_str(&csp) {
        b = b.header(header::CONTENT_SECURITY_POLICY, v);
    }
    b.body(Full::new(Bytes::from(text)).boxed())
        .unwrap_or_else(|_| Response::new(mcp::empty()))
}

fn redirect(location: &str) -> Response<Body> {
    let mut r = Response::new(mcp::empty());
    *r.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(v) = HeaderValue::from_str(location) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r.headers_mut()
        .insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// `/metrics`: the calls counted, then the gauges read now (sessions, the embedding
/// backlog, the database's size), in Prometheus' text format.
async fn metrics(state: &State) -> Response<Body> {
    use std::fmt::Write as _;
    let app = &state.app;
    let mut text = app.metrics.render();
    let mut gauge = |name: &str, help: &str, v: Option<i64>| {
        if let Some(v) = v {
            let _ = write!(
                text,
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}\n"
            );
        }
    };
    gauge(
        "cairn_sessions_live",
        "MCP sessions open.",
        Some(state.mcp.live_sessions() as i64),
    );
    let backlog = crate::service::embedding::backlog(app).await;
    gauge(
        "cairn_embedding_backlog",
        "Texts waiting for a vector.",
        backlog.ok().map(|n| n as i64),
    );
    gauge(
        "cairn_database_bytes",
        "The database's size.",
        app.store.size_bytes().await.ok(),
    );
    Response::builder()
        .status(StatusCode::OK)
        .header(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )
        .body(Full::new(Bytes::from(text)).boxed())
        .unwrap_or_else(|_| plain(StatusCode::INTERNAL_SERVER_ERROR, "cannot render"))
}

fn not_allowed(allow: &'static str) -> Response<Body> {
    let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    r
}

/// 401, 403 or 400; for the page, a sentence telling a person how to get in.
fn refused(r: Refusal, page: bool) -> Response<Body> {
    match r {
        Refusal::Unauthorized(why) => {
            let text = if page {
                format!(
                    "{why}: open this address once as /?token=YOUR_TOKEN (the token the server \
                     was started with); the browser keeps it as a cookie"
                )
            } else {
                format!("{why}: send Authorization: Bearer YOUR_TOKEN")
            };
            let mut resp = plain(StatusCode::UNAUTHORIZED, &text);
            resp.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"cairn\""),
            );
            resp
        }
        Refusal::Forbidden(why) => plain(StatusCode::FORBIDDEN, &why),
        Refusal::BadRequest(why) => plain(StatusCode::BAD_REQUEST, why),
    }
}

/// A response body that keeps its request counted as in flight until it has been
/// sent in full (for `/mcp`, the event stream that ends with the call's answer).
struct Tracked {
    inner: Body,
    _token: TaskTrackerToken,
}

impl http_body::Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
