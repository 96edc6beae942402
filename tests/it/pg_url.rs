//! A database file of a test (or a bench) as a database of its own on a PostgreSQL
//! server. Shared by the harness and the benches' client, which includes this file.

use std::path::Path;

/// The URL of a database on the server `base` names (a PostgreSQL URL, its own
/// database replaced): `prefix` then `db`'s directory and file names, which are
/// unique per test, as one identifier of at most 63 bytes (PostgreSQL's limit).
/// Cairn creates the database on first use.
pub fn database_for(base: &str, db: &Path, prefix: &str) -> String {
    let parts: Vec<String> = db
        .iter()
        .rev()
        .take(2)
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let name: String = parts
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    // The end holds the file name and the directory's unique tail.
    let room = 63 - prefix.len();
    let name = format!("{prefix}{}", &name[name.len().saturating_sub(room)..]);
    let (head, query) = base.split_once('?').unwrap_or((base, ""));
    let server = &head[..head.rfind('/').expect("a database in the server's URL")];
    if query.is_empty() {
        format!("{server}/{name}")
    } else {
        format!("{server}/{name}?{query}")
    }
}
