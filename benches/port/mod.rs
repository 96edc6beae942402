//! The TypeScript task-orchestrator port measured beside Cairn in `bench`: how it is
//! started (bun and `@allpepper/task-orchestrator` from npm, installed into
//! target/port-tools by scripts/port.sh when missing, run over stdio as
//! scripts/import_fixtures.py runs it), and the table that prints each of Cairn's
//! figures with the port's and the ratio between them. A workload runs once per
//! [`Target`] into [`Rows`]; [`print`] joins the two by measure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::client::{Kind, Server};

/// What a workload runs on.
pub enum Target {
    Cairn,
    Port { bun: PathBuf, server: PathBuf },
}

/// Set once the port answers: every row then has the port's two columns.
pub static COLUMNS: AtomicBool = AtomicBool::new(false);

impl Target {
    /// The port, installed by scripts/port.sh when missing; why not, when it cannot be.
    pub fn port() -> Result<Target, String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/port.sh");
        let out = Command::new(&script)
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("{} did not run: {e}", script.display()))?;
        let err = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            return Err(err.lines().last().unwrap_or("port.sh failed").to_string());
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        match (lines.next(), lines.next()) {
            (Some(bun), Some(server)) => Ok(Target::Port {
                bun: bun.into(),
                server: server.into(),
            }),
            _ => Err(format!("port.sh printed no paths: {text}")),
        }
    }

    pub fn is_port(&self) -> bool {
        matches!(self, Target::Port { .. })
    }

    /// A session on the database `db`: Cairn serves the file with the toolsets the
    /// port has (tasks, graph); the port keeps its own `tasks.db` in the directory
    /// holding `db`, which it takes as its home.
    pub fn serve(&self, db: &Path) -> Server {
        match self {
            Target::Cairn => Server::start(db, &["--toolsets", "tasks,graph"], &[]),
            Target::Port { bun, server } => {
                let home = db.parent().expect("a database in a directory");
                let mut cmd = Command::new(bun);
                cmd.arg("run")
                    .arg(server)
                    .arg("--stdio")
                    .env_clear()
                    .env("TASK_ORCHESTRATOR_HOME", home)
                    .env("HOME", home)
                    .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                    .stderr(Stdio::inherit());
                Server::spawn(cmd, Kind::Port)
            }
        }
    }
}

/// One measured figure: as printed, and the numbers the ratio is taken of.
pub struct Fig {
    pub text: String,
    pub value: f64,
    /// The 95th percentile, for latencies: its ratio is printed too.
    pub p95: Option<f64>,
    pub higher_is_better: bool,
    /// Whether a ratio to the port's figure means anything (not for the time a server
    /// waited for a CPU, which is the machine's load more than the server's).
    pub compared: bool,
}

impl Fig {
    /// A duration in milliseconds with `digits` decimals.
    pub fn ms(v: f64, digits: usize) -> Fig {
        Fig::lower(format!("{v:.digits$} ms"), v)
    }

    /// A latency: median and 95th percentile in milliseconds.
    pub fn latency(med: f64, p95: f64, digits: usize) -> Fig {
        Fig {
            text: format!("{med:.digits$} ms (p95 {p95:.digits$})"),
            value: med,
            p95: Some(p95),
            higher_is_better: false,
            compared: true,
        }
    }

    /// A latency printed beside the port's without a ratio.
    pub fn uncompared(med: f64, p95: f64, digits: usize) -> Fig {
        Fig {
            compared: false,
            ..Fig::latency(med, p95, digits)
        }
    }

    /// Any figure where less is better (time, memory, size).
    pub fn lower(text: String, value: f64) -> Fig {
        Fig {
            text,
            value,
            p95: None,
            higher_is_better: false,
            compared: true,
        }
    }

    /// A rate, where more is better.
    pub fn higher(text: String, value: f64) -> Fig {
        Fig {
            text,
            value,
            p95: None,
            higher_is_better: true,
            compared: true,
        }
    }

    /// How many times better Cairn's figure is than the port's `p` (above 1: Cairn
    /// ahead; below: behind).
    fn lead(&self, p: &Fig) -> String {
        if !self.compared {
            return String::new();
        }
        let r = |c: f64, p: f64| if self.higher_is_better { c / p } else { p / c };
        let mut s = format!("{:.1}×", r(self.value, p.value));
        if let (Some(c), Some(q)) = (self.p95, p.p95) {
            s.push_str(&format!(" (p95 {:.1}×)", r(c, q)));
        }
        s
    }
}

/// One workload's figures in the order measured.
#[derive(Default)]
pub struct Rows(Vec<(String, Fig, String)>);

impl Rows {
    pub fn row(&mut self, what: &str, fig: Fig, target: &str) {
        self.0.push((what.to_string(), fig, target.to_string()));
    }
}

/// Prints Cairn's rows, each with the port's figure of the same measure ("n/a" where
/// the port has no such call) and Cairn's lead, when the port ran.
pub fn print(cairn: Rows, port: Option<Rows>) {
    for (what, fig, target) in cairn.0 {
        let theirs = port
            .as_ref()
            .and_then(|p| p.0.iter().find(|(w, _, _)| *w == what).map(|x| &x.1));
        line(
            &what,
            &fig.text,
            port.is_some().then_some(theirs),
            &fig,
            &target,
        );
    }
}

/// One table line; `port` is `None` without the port's columns, `Some(None)` for n/a.
fn line(what: &str, value: &str, port: Option<Option<&Fig>>, ours: &Fig, target: &str) {
    match port {
        None if !COLUMNS.load(Ordering::Relaxed) => {
            println!("| {what:<58} | {value:>22} | {target:<16} |")
        }
        None | Some(None) => println!(
            "| {what:<58} | {value:>22} | {:>22} | {:>18} | {target:<16} |",
            "n/a", ""
        ),
        Some(Some(p)) => println!(
            "| {what:<58} | {value:>22} | {:>22} | {:>18} | {target:<16} |",
            p.text,
            ours.lead(p)
        ),
    }
}

/// A row only Cairn measures (the rmcp session, HTTP): "n/a" in the port's column.
pub fn cairn_only(what: &str, value: &str, target: &str) {
    line(what, value, None, &Fig::lower(String::new(), 0.0), target);
}

/// The table's header, with the port's columns when it runs.
pub fn header() {
    if COLUMNS.load(Ordering::Relaxed) {
        println!(
            "| {:<58} | {:>22} | {:>22} | {:>18} | {:<16} |",
            "measure", "cairn", "port (TypeScript)", "cairn's lead", "target"
        );
        println!(
            "|{}|{}|{}|{}|{}|",
            "-".repeat(60),
            "-".repeat(24),
            "-".repeat(24),
            "-".repeat(20),
            "-".repeat(18)
        );
    } else {
        println!("| {:<58} | {:>22} | {:<16} |", "measure", "value", "target");
        println!("|{}|{}|{}|", "-".repeat(60), "-".repeat(24), "-".repeat(18));
    }
}
