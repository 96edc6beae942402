//! Tags across every entity: listing, usage and renaming.

use crate::error::Result;
use crate::service::App;
use crate::store::tag;

pub async fn list(app: &App, entity_type: Option<&str>) -> Result<Vec<(String, String, i64)>> {
    let mut c = app.store.read().await?;
    Ok(tag::list(&mut c, entity_type).await?)
}

pub async fn usage(app: &App, t: &str) -> Result<Vec<(String, String, Option<String>)>> {
    let mut c = app.store.read().await?;
    Ok(tag::usage(&mut c, t).await?)
}

/// Renames a tag everywhere (or counts what would change, with `dry_run`).
pub async fn rename(
    app: &App,
    old: &str,
    new: &str,
    dry_run: bool,
) -> Result<Vec<(String, String, Option<String>)>> {
    let affected = usage(app, old).await?;
    if !dry_run && !affected.is_empty() && old != new {
        let mut tx = app.store.write().await?;
        tag::rename(&mut tx, old, new).await?;
        tx.commit().await?;
    }
    Ok(affected)
}
