//! A whole database out and in (`cairn export`, `cairn import`): the store's
//! transfer (`store::transfer`, where the format is defined) run for the command
//! line. Nothing here reads a row; the transfer is the store's, as a backup is.

use std::path::Path;

pub use crate::store::transfer::{Counts, Failure, FORMAT, REBUILT};

use super::App;

/// Every table of user state from one consistent read into `dir` (new or empty).
pub async fn export(app: &App, dir: &Path) -> Result<Counts, Failure> {
    app.store.export(dir).await
}

/// The export in `dir` into this database, which must be empty, in one
/// transaction: all of it or nothing.
pub async fn import(app: &App, dir: &Path) -> Result<Counts, Failure> {
    app.store.import(dir).await
}
