//! SQLite's writer connection, held by the store from write to write rather than
//! given back to a pool after each.
//!
//! sqlx pings every connection given back to a pool (its worker thread answers
//! before the pool lends the connection again): on SQLite a trip to that thread as
//! long as a whole atom insert's, on every write. The store's writes take turns on
//! one connection anyway (see `Store::writer`), so it keeps that connection here,
//! lent under a lock, and does itself what the pool's hook did for it: a connection
//! left inside a transaction that failed is closed before anyone writes on it again.

use std::sync::Arc;
use std::time::Duration;

use sqlx::any::AnyTransactionManager;
use sqlx::{AnyConnection, AnyPool, Connection, SqlSafeStr};
use sqlx_core::transaction::TransactionManager;
use tokio::sync::{Mutex, OwnedMappedMutexGuard, OwnedMutexGuard};

use super::{Error, Result};

/// The writer's connection and what opens it.
#[derive(Clone)]
pub(super) struct Writer {
    /// Opens the connection (with the settings every connection of the store gets)
    /// when there is none yet, or the last one was closed.
    opens: AnyPool,
    slot: Arc<Mutex<Option<AnyConnection>>>,
    /// How long a write waits for another of this server's writes to end before it
    /// fails with [`Error::Busy`], as it waits for another process's write lock.
    wait: Duration,
}

impl Writer {
    pub(super) fn new(opens: AnyPool, wait: Duration) -> Writer {
        Writer {
            opens,
            slot: Arc::new(Mutex::new(None)),
            wait,
        }
    }

    /// The connection, outside a transaction, for this caller alone until dropped.
    pub(super) async fn lend(&self) -> Result<Lent> {
        let mut slot = tokio::time::timeout(self.wait, self.slot.clone().lock_owned())
            .await
            .map_err(|_| Error::Busy)?;
        if let Some(c) = slot.as_mut() {
            if !super::reusable(c, super::Backend::Sqlite)
                .await
                .unwrap_or(false)
            {
                // Dropped, the connection closes (its worker thread rolls back and
                // ends); the pool opens the next one.
                slot.take();
            }
        }
        if slot.is_none() {
            // Detached: the pool would ping it on its way back.
            *slot = Some(self.opens.acquire().await?.detach());
        }
        OwnedMutexGuard::try_map(slot, Option::as_mut)
            .map(|conn| Lent { conn, open: false })
            .map_err(|_| Error::Internal("the writer's connection is missing".into()))
    }

    /// The connection inside a transaction begun by `begin` (SQLite's `BEGIN
    /// IMMEDIATE`), rolled back when dropped uncommitted as sqlx's own transactions
    /// are.
    pub(super) async fn begin(&self, begin: &'static str) -> Result<Lent> {
        let mut lent = self.lend().await?;
        AnyTransactionManager::begin(&mut lent.conn, Some(begin.into_sql_str())).await?;
        lent.open = true;
        Ok(lent)
    }

    /// Closes the connection, and the pool that opens it: later writes fail.
    pub(super) async fn close(&self) {
        self.opens.close().await;
        let held = self.slot.lock().await.take();
        if let Some(c) = held {
            if let Err(e) = c.close().await {
                tracing::debug!(error = %e, "closing the writer's connection failed");
            }
        }
    }
}

/// The writer's connection as one caller holds it.
pub(super) struct Lent {
    conn: OwnedMappedMutexGuard<Option<AnyConnection>, AnyConnection>,
    /// Whether a transaction [`Writer::begin`] began is still open.
    open: bool,
}

impl Lent {
    pub(super) fn conn(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }

    /// Commits the transaction, if one is open; a failed COMMIT leaves it open, to
    /// be rolled back on drop.
    pub(super) async fn commit(mut self) -> Result<()> {
        if self.open {
            AnyTransactionManager::commit(&mut self.conn).await?;
            self.open = false;
        }
        Ok(())
    }

    /// Rolls the transaction back now, if one is open; a failed ROLLBACK is queued
    /// again on drop, and the next `lend` closes the connection if it still holds
    /// the transaction.
    pub(super) async fn rollback(mut self) -> Result<()> {
        if self.open {
            AnyTransactionManager::rollback(&mut self.conn).await?;
            self.open = false;
        }
        Ok(())
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if self.open {
            // Queued on the connection's worker thread before the lock is let go:
            // the next write's `lend` finds it run, or waits for it (`reusable`).
            AnyTransactionManager::start_rollback(&mut self.conn);
        }
    }
}
