//! `cairn export DIR` and `cairn import DIR`: the database as JSON lines and back
//! (the format is `store::transfer`'s), with what was moved on stderr.

use std::io::Write;
use std::process::ExitCode;

use super::args::Command;
use super::output::say;
use crate::service::transfer::{self, Counts, Failure};
use crate::service::App;

/// The exit status of an import refused because the database holds rows already,
/// so a script can tell it from a bad export (1).
pub const NOT_EMPTY: u8 = 3;

/// Runs `export` or `import`; `None` for any other command.
pub async fn run(app: &App, cmd: &Command) -> Option<Result<ExitCode, String>> {
    let (verb, done) = match cmd {
        Command::Export { dir } => ("export", transfer::export(app, dir).await),
        Command::Import { dir } => ("import", transfer::import(app, dir).await),
        _ => return None,
    };
    Some(match done {
        Ok(counts) => {
            report(verb, &counts);
            Ok(ExitCode::SUCCESS)
        }
        Err(Failure::NotEmpty(m)) => {
            say(&format!("import: {m}"));
            Ok(ExitCode::from(NOT_EMPTY))
        }
        Err(Failure::Refused(m)) => Err(format!("{verb}: {m}")),
        Err(Failure::Store(e)) => Err(format!("{verb}: {e}")),
    })
}

/// One line per table that holds rows, then the total, on stderr.
fn report(verb: &str, counts: &Counts) {
    let mut err = std::io::stderr().lock();
    for (name, n) in counts.0.iter().filter(|(_, n)| *n > 0) {
        let _ = writeln!(err, "{verb}: {name} {n}");
    }
    let _ = writeln!(
        err,
        "{verb}: {} rows in {} tables (format {}); rebuilt, not moved: vectors (the next \
         search or `cairn reindex` embeds them), full-text rows, generation counters",
        counts.total(),
        counts.0.len(),
        transfer::FORMAT
    );
}
