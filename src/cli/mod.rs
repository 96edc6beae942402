//! The `cairn` command, as a library: `main.rs` only calls [`main`]. It sets up
//! logging on stderr, parses the command line ([`args`]), then serves MCP over stdio
//! or HTTP, runs one tool, lists the tools, reindexes or checks the model ([`run`]).

pub mod args;
mod import_from;
mod output;
mod run;
mod tools;
mod transfer;

use std::process::ExitCode;

use args::{parse, Command, USAGE};
use output::{print_out, redact_panics, say, Redacted};

/// The whole command: its exit status.
pub fn main() -> ExitCode {
    // candle asks for its thread count before every matrix product and, unless
    // RAYON_NUM_THREADS is set, finds it by reading /proc/cpuinfo: dozens of file
    // reads per embedded query. Setting the variable once, here, before any thread
    // exists, to the count the process may use, keeps the parallelism and drops the reads.
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let n = std::thread::available_parallelism().map_or(1, |n| n.get());
        std::env::set_var("RAYON_NUM_THREADS", n.to_string());
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let level = match std::env::var("CAIRN_LOG")
        .unwrap_or_default()
        .to_ascii_lowercase()
        .as_str()
    {
        "trace" => tracing::Level::TRACE,
        "debug" => tracing::Level::DEBUG,
        "info" => tracing::Level::INFO,
        "error" => tracing::Level::ERROR,
        _ => tracing::Level::WARN,
    };
    // Every line for stderr, whichever crate logs it, loses any URL's password.
    // One JSON object per line for a log collector (`CAIRN_LOG_FORMAT=json`).
    let logs = tracing_subscriber::fmt()
        .with_writer(|| Redacted)
        .with_max_level(level);
    if std::env::var("CAIRN_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json")) {
        logs.json().init();
    } else {
        logs.init();
    }
    redact_panics();

    let (overrides, cmd) = match parse(args) {
        Ok(x) => x,
        Err(e) => {
            say(&format!("{e}\n\n{USAGE}"));
            return ExitCode::from(2);
        }
    };
    if let Command::TokenAdd { name, role, file } = &cmd {
        return token_add(name, *role, file);
    }
    let printed = match cmd {
        Command::Usage => Some(print_out(USAGE)),
        Command::Version => Some(print_out(&format!("cairn {}", env!("CARGO_PKG_VERSION")))),
        _ => None,
    };
    if let Some(done) = printed {
        return match done {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                say(&e);
                ExitCode::FAILURE
            }
        };
    }
    // Many HTTP sessions share one server: their calls and page renders run on every
    // core. stdio serves one client, and the commands run one call: one thread.
    let builder = match &cmd {
        Command::Serve { http } if http.addr.is_some() => {
            tokio::runtime::Builder::new_multi_thread()
        }
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let rt = match { builder }.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            say(&format!("cannot start the runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run::run(overrides, cmd)) {
        Ok(code) => code,
        Err(e) => {
            say(&e);
            ExitCode::FAILURE
        }
    }
}

/// `token add`: the new token on stdout, alone on its line (the one time it is
/// shown), what was done on stderr. Needs no store.
fn token_add(name: &str, role: crate::service::agent::Role, file: &std::path::Path) -> ExitCode {
    match crate::web::tokens::add(file, name, role) {
        Ok(token) => {
            say(&format!(
                "added {name} ({role}) to {}: the token below is shown this once and kept \
                 nowhere (the file holds its hash); the agent sends it as Authorization: Bearer \
                 TOKEN to cairn serve --http ADDR:PORT --tokens-file {}",
                file.display(),
                file.display()
            ));
            match print_out(&token) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    say(&e);
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            say(&e);
            ExitCode::FAILURE
        }
    }
}
