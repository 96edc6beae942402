//! `resources/subscribe` and `resources/unsubscribe`, and
//! `notifications/resources/updated` to the sessions subscribed when a resource's
//! content changes. One book for every session of the server (stdio's one, or each
//! Streamable HTTP session): a write through any session, or by another process,
//! changes what every subscriber would read.
//!
//! A change is found by reading: each subscription keeps a hash of the content it
//! last saw, and one task reads the subscribed resources again after every write
//! tool call this server answers ([`Subscriptions::changed`]) and every
//! [`POLL`] (writes by another process, `cairn call`), notifying those whose
//! content differs. Reading is the one way to see every change of what a resource
//! holds (a task's sections, a memory atom superseded, a class the reasoner now
//! classifies elsewhere) without each write naming what it touched.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::Peer;
use rmcp::{ErrorData as McpError, RoleServer};
use tokio::sync::Notify;

use crate::mcp::Registry;
use crate::service::App;

/// The most subscriptions one session holds, and the server in all.
pub const PER_SESSION: usize = 64;
pub const IN_ALL: usize = 512;

/// How often subscribed resources are read again with no write through this server.
pub const POLL: Duration = Duration::from_secs(5);

struct Sub {
    session: usize,
    uri: String,
    peer: Peer<RoleServer>,
    /// The hash of the content (or of the error) last seen.
    seen: u64,
}

/// The book of subscriptions, shared by every session.
#[derive(Default)]
pub struct Subscriptions {
    subs: Mutex<Vec<Sub>>,
    wake: Notify,
    /// Whether the watching task runs (started by the first subscription).
    started: std::sync::atomic::AtomicBool,
}

/// Which session a peer is: the address of what it was initialised with, one per
/// session and kept alive by the peer a subscription holds.
fn session_of(peer: &Peer<RoleServer>) -> usize {
    peer.peer_info()
        .map(|i| Arc::as_ptr(&i) as usize)
        .unwrap_or(0)
}

fn hash(r: &Result<String, McpError>) -> u64 {
    let mut h = DefaultHasher::new();
    match r {
        Ok(t) => t.hash(&mut h),
        Err(e) => e.message.hash(&mut h),
    }
    h.finish()
}

impl Subscriptions {
    /// A write may have changed what subscribers read: check soon.
    pub fn changed(&self) {
        let any = self.subs.lock().map(|s| !s.is_empty()).unwrap_or(false);
        if any {
            self.wake.notify_one();
        }
    }

    /// Subscribes `peer`'s session to `uri`, whose content it has read (`first`).
    pub fn add(
        self: &Arc<Self>,
        app: &App,
        reg: &Arc<Registry>,
        peer: Peer<RoleServer>,
        uri: &str,
        first: &Result<String, McpError>,
    ) -> Result<(), McpError> {
        let session = session_of(&peer);
        {
            let mut subs = self
                .subs
                .lock()
                .map_err(|_| McpError::internal_error("the subscriptions are unreadable", None))?;
            subs.retain(|s| !s.peer.is_transport_closed());
            if let Some(s) = subs
                .iter_mut()
                .find(|s| s.session == session && s.uri == uri)
            {
                s.seen = hash(first);
                return Ok(());
            }
            let mine = subs.iter().filter(|s| s.session == session).count();
            if mine >= PER_SESSION || subs.len() >= IN_ALL {
                return Err(McpError::invalid_params(
                    format!(
                        "too many subscriptions: a session holds at most {PER_SESSION} \
                         (this server {IN_ALL}); resources/unsubscribe one first"
                    ),
                    None,
                ));
            }
            subs.push(Sub {
                session,
                uri: uri.to_string(),
                peer,
                seen: hash(first),
            });
        }
        if !self.started.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let (book, app, reg) = (self.clone(), app.clone(), reg.clone());
            tokio::spawn(async move { book.watch(app, reg).await });
        }
        Ok(())
    }

    /// Ends `peer`'s session's subscription to `uri`, if it has one.
    pub fn remove(&self, peer: &Peer<RoleServer>, uri: &str) {
        let session = session_of(peer);
        if let Ok(mut subs) = self.subs.lock() {
            subs.retain(|s| !(s.session == session && s.uri == uri));
        }
    }

    /// Reads the subscribed resources again whenever woken or every [`POLL`], and
    /// notifies each subscriber whose resource reads differently. Runs for as long as
    /// the server does.
    async fn watch(self: Arc<Self>, app: App, reg: Arc<Registry>) {
        loop {
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(POLL) => {}
            }
            self.check(&app, &reg).await;
        }
    }

    async fn check(&self, app: &App, reg: &Registry) {
        let uris: Vec<String> = match self.subs.lock() {
            Ok(mut subs) => {
                subs.retain(|s| !s.peer.is_transport_closed());
                let mut u: Vec<String> = subs.iter().map(|s| s.uri.clone()).collect();
                u.sort_unstable();
                u.dedup();
                u
            }
            Err(_) => return,
        };
        let mut now: HashMap<String, u64> = HashMap::new();
        for uri in uris {
            let read = super::text(app, reg, &uri).await;
            now.insert(uri, hash(&read));
        }
        let due: Vec<(Peer<RoleServer>, String)> = match self.subs.lock() {
            Ok(mut subs) => subs
                .iter_mut()
                .filter_map(|s| {
                    let h = *now.get(&s.uri)?;
                    (h != s.seen).then(|| {
                        s.seen = h;
                        (s.peer.clone(), s.uri.clone())
                    })
                })
                .collect(),
            Err(_) => return,
        };
        for (peer, uri) in due {
            if let Err(e) = peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
            {
                // The session went away; the next check drops its subscriptions.
                tracing::debug!(error = %e, "resource update not sent");
            }
        }
    }
}
