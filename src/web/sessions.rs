//! The MCP sessions of `/mcp`, bounded: at most [`Limits::max`] open at once, and a
//! session with no request in flight and none for [`Limits::idle`] closed.
//!
//! rmcp's [`LocalSessionManager`] keeps the sessions; [`Sessions`] is the session
//! manager rmcp's service is given, and wraps it to keep the book this needs: when
//! each session last saw a request and how many of its requests are still being
//! answered. rmcp's own idle timeout is off: it counts any traffic and would end a
//! session whose one long call sends nothing for a while, call and all. Here a call
//! in flight keeps its session open however long it runs.
//!
//! The cap is checked by the front ([`super::mcp`]) before an `initialize` reaches
//! rmcp ([`Sessions::reserve`]): a refused one gets a 503 the client can act on
//! rather than rmcp's 500. A request on a session is counted from the moment it
//! arrives until its event stream ends (answered, or the client went away).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::WorkerTransport;
use tokio_util::sync::CancellationToken;

/// How many sessions, and for how long.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Sessions open at once.
    pub max: usize,
    /// How long a session with nothing in flight stays open after its last request.
    pub idle: Duration,
}

/// The book: what each open session is doing.
#[derive(Default)]
struct Book {
    open: HashMap<SessionId, Use>,
    /// `initialize` requests admitted and not yet answered: each may open a session.
    pending: usize,
}

struct Use {
    last: Instant,
    busy: usize,
}

/// rmcp's session manager, bounded (see the module doc).
pub struct Sessions {
    inner: LocalSessionManager,
    limits: Limits,
    book: Arc<Mutex<Book>>,
}

/// Why an `initialize` was refused: every session slot is taken.
#[derive(Debug)]
pub struct Full {
    pub max: usize,
    /// When a slot frees at the earliest, as far as the book can tell: the next
    /// idle session's end, else the idle timeout.
    pub retry_after: Duration,
}

/// A slot held for one `initialize` while rmcp answers it.
pub struct Reservation {
    book: Arc<Mutex<Book>>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut b = lock(&self.book);
        b.pending = b.pending.saturating_sub(1);
    }
}

fn lock(book: &Mutex<Book>) -> MutexGuard<'_, Book> {
    // The book holds counters only: one a panicking thread left half-updated is
    // still the best count there is.
    book.lock().unwrap_or_else(|e| e.into_inner())
}

impl Sessions {
    /// The manager, and a task that closes idle sessions until `cancel` (the
    /// server's shutdown). Must be called inside the runtime.
    pub fn new(limits: Limits, cancel: CancellationToken) -> Arc<Sessions> {
        let mut inner = LocalSessionManager::default();
        let mut config = SessionConfig::default();
        config.keep_alive = None;
        inner.session_config = config;
        let sessions = Arc::new(Sessions {
            inner,
            limits,
            book: Arc::default(),
        });
        tokio::spawn(reap(Arc::downgrade(&sessions), cancel));
        sessions
    }

    /// A slot for one `initialize`, or why there is none.
    pub fn reserve(&self) -> Result<Reservation, Full> {
        let mut b = lock(&self.book);
        if b.open.len() + b.pending >= self.limits.max {
            let now = Instant::now();
            let soonest = b
                .open
                .values()
                .filter(|u| u.busy == 0)
                .map(|u| (u.last + self.limits.idle).saturating_duration_since(now))
                .min()
                .unwrap_or(self.limits.idle);
            return Err(Full {
                max: self.limits.max,
                retry_after: soonest,
            });
        }
        b.pending += 1;
        Ok(Reservation {
            book: self.book.clone(),
        })
    }

    /// How many sessions are open.
    pub fn live(&self) -> usize {
        lock(&self.book).open.len()
    }

    /// Whether `id` names an open session.
    pub fn is_open(&self, id: &str) -> bool {
        lock(&self.book).open.contains_key(id)
    }

    /// Marks a request on `id` as arrived.
    fn touch(&self, id: &SessionId) {
        if let Some(u) = lock(&self.book).open.get_mut(id) {
            u.last = Instant::now();
        }
    }

    /// Counts a request on `id` as in flight until the guard is dropped.
    fn busy(&self, id: &SessionId) -> Busy {
        if let Some(u) = lock(&self.book).open.get_mut(id) {
            u.last = Instant::now();
            u.busy += 1;
        }
        Busy {
            book: self.book.clone(),
            id: id.clone(),
        }
    }

    /// The sessions idle for longer than the timeout.
    fn expired(&self) -> Vec<SessionId> {
        lock(&self.book)
            .open
            .iter()
            .filter(|(_, u)| self.idle_past_timeout(u))
            .map(|(id, _)| id.clone())
            .collect()
    }

    fn idle_past_timeout(&self, u: &Use) -> bool {
        u.busy == 0 && u.last.elapsed() >= self.limits.idle
    }

    /// Closes `id` if it is still idle past the timeout (a request may have come
    /// since the reaper looked).
    async fn close_if_idle(&self, id: &SessionId) -> Result<(), LocalSessionManagerError> {
        let idle = lock(&self.book)
            .open
            .get(id)
            .is_some_and(|u| self.idle_past_timeout(u));
        if !idle {
            return Ok(());
        }
        tracing::debug!(session = %id, idle = ?self.limits.idle, "closing an idle session");
        self.close_session(id).await
    }
}

/// A request in flight on a session: its end (answered, or dropped) is activity.
struct Busy {
    book: Arc<Mutex<Book>>,
    id: SessionId,
}

impl Drop for Busy {
    fn drop(&mut self) {
        if let Some(u) = lock(&self.book).open.get_mut(&self.id) {
            u.last = Instant::now();
            u.busy = u.busy.saturating_sub(1);
        }
    }
}

/// Closes idle sessions, checking a few times per timeout (at least every 10 ms,
/// at most every 10 s), until the server stops or the manager is gone.
async fn reap(sessions: Weak<Sessions>, cancel: CancellationToken) {
    let Some(every) = sessions
        .upgrade()
        .map(|s| (s.limits.idle / 4).clamp(Duration::from_millis(10), Duration::from_secs(10)))
    else {
        return;
    };
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tick.tick() => {}
        }
        let Some(s) = sessions.upgrade() else { return };
        for id in s.expired() {
            if let Err(e) = s.close_if_idle(&id).await {
                tracing::warn!(session = %id, error = %e, "closing an idle session failed");
            }
        }
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        lock(&self.book).open.insert(
            id.clone(),
            Use {
                last: Instant::now(),
                busy: 0,
            },
        );
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let _busy = self.busy(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        lock(&self.book).open.remove(id);
        closed
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = self.busy(id);
        let stream = self.inner.create_stream(id, message).await?;
        // The guard lives as long as the stream: until the answer has been sent, or
        // the client has gone.
        Ok(stream.map(move |m| {
            let _ = &busy;
            m
        }))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // Listening is no request: a session whose client only holds its GET stream
        // open is idle.
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }
}
