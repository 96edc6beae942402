//! The schema's migrations, embedded in the binary as `sqlx::migrate!` would embed
//! them (version and description from the file name, the SQL as written, so a
//! database keeps the checksums it recorded), listed by hand: the macro needs sqlx's
//! proc-macro crate, which compiles its own sqlx and SQLite for the host on a cold
//! install's critical path. A test holds the lists to the folders.

use std::sync::LazyLock;

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::SqlSafeStr;

/// `(file stem, SQL)` of each file of a folder, in order.
macro_rules! embed {
    ($dir:literal: $($stem:literal,)*) => {
        &[$(($stem, include_str!(concat!("../../", $dir, "/", $stem, ".sql"))),)*]
    };
}

type Files = &'static [(&'static str, &'static str)];

/// SQLite's schema, one file per change.
const SQLITE: Files = embed!("migrations":
    "0001_tasks",
    "0002_graph",
    "0003_code",
    "0004_embeddings",
    "0005_semantic",
    "0006_fts_rowids",
    "0007_atom_gen_on_insert",
    "0008_atom_search_catch_up",
    "0009_tasks_feature_partial",
    "0010_semantic_follows_graph",
    "0011_atom_search_by_generation",
    "0012_atom_insert_counts_only",
    "0013_memory",
    "0014_ontology",
    "0015_vector_generations",
    "0016_project_subjects",
    "0017_context_files_sample",
    "0018_task_embeddings",
    "0019_memory_context_recorded",
    "0020_atom_update_stamps_itself",
);

/// PostgreSQL's schema: one file with the final form of `migrations/`, numbered on its
/// own; a later change adds a file to both folders.
const POSTGRES: Files = embed!("migrations-postgres":
    "0001_schema",
    "0002_project_subjects",
    "0003_context_files_sample",
    "0004_task_embeddings",
    "0005_memory_context_recorded",
    "0006_atom_update_stamps_itself",
);

pub static MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| migrator(SQLITE));
pub static PG_MIGRATOR: LazyLock<Migrator> = LazyLock::new(|| migrator(POSTGRES));

/// A stem is `VERSION_description`; one that is not (no test lets one in) is skipped.
fn migrator(files: Files) -> Migrator {
    Migrator::with_migrations(
        files
            .iter()
            .filter_map(|(stem, sql)| {
                let (version, name) = stem.split_once('_')?;
                Some(Migration::new(
                    version.parse().ok()?,
                    name.replace('_', " ").into(),
                    MigrationType::Simple,
                    sql.into_sql_str(),
                    sql.starts_with("-- no-transaction"),
                ))
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of each folder is embedded, once, in order, and every one parses.
    #[test]
    fn the_lists_hold_every_file_of_their_folder() {
        for (dir, files, m) in [
            ("migrations", SQLITE, &*MIGRATOR),
            ("migrations-postgres", POSTGRES, &*PG_MIGRATOR),
        ] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
            let mut on_disk: Vec<String> = std::fs::read_dir(path)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|n| n.ends_with(".sql"))
                .collect();
            on_disk.sort();
            let listed: Vec<String> = files.iter().map(|(s, _)| format!("{s}.sql")).collect();
            assert_eq!(listed, on_disk, "{dir}");
            assert_eq!(
                m.migrations.len(),
                files.len(),
                "{dir}: a stem did not parse"
            );
            for (mig, (stem, sql)) in m.migrations.iter().zip(files) {
                assert!(stem.starts_with(&format!("{:04}_", mig.version)), "{stem}");
                assert_eq!(mig.sql.as_str(), *sql);
            }
        }
    }
}
