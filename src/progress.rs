//! A progress bar on stderr for long commands (`cairn reindex`, and `cairn call` through
//! [`BarSink`]). On a terminal it redraws one line at most ten times a second; in a log
//! (CI, a pipe) it prints a line every tenth of the way, so the log stays short. stdout
//! is never touched.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::service::progress::Sink;

/// A tool call's progress drawn as a [`Bar`]; a report without a total (loading the
/// model) is a line of its own.
pub struct BarSink(Mutex<Bar>);

impl BarSink {
    pub fn new(label: &'static str) -> BarSink {
        BarSink(Mutex::new(Bar::new(label)))
    }
}

impl Sink for BarSink {
    fn send(&self, progress: u64, total: Option<u64>, message: String) {
        match (total, self.0.lock()) {
            (Some(t), Ok(mut bar)) => bar.update(progress, t),
            // Progress is a courtesy: a stderr nobody reads any more is no error.
            _ => {
                let _ = writeln!(std::io::stderr(), "{message}");
            }
        }
    }
}

pub struct Bar {
    label: &'static str,
    tty: bool,
    started: Instant,
    drawn: Option<Instant>,
    tenth: u64,
}

impl Bar {
    pub fn new(label: &'static str) -> Bar {
        Bar {
            label,
            tty: std::io::stderr().is_terminal(),
            started: Instant::now(),
            drawn: None,
            tenth: 0,
        }
    }

    /// Shows `done` of `total`.
    pub fn update(&mut self, done: u64, total: u64) {
        let end = done >= total;
        if self.tty {
            if !end
                && self
                    .drawn
                    .is_some_and(|t| t.elapsed() < Duration::from_millis(100))
            {
                return;
            }
            self.drawn = Some(Instant::now());
            let width = 30u64;
            let filled = (done * width).checked_div(total).unwrap_or(width) as usize;
            let bar = format!(
                "{}{}",
                "#".repeat(filled),
                ".".repeat(width as usize - filled)
            );
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r{} [{bar}] {done}/{total} {}",
                self.label,
                self.rate(done)
            );
            if end {
                let _ = writeln!(err);
            }
            let _ = err.flush();
        } else {
            let tenth = (done * 10).checked_div(total).unwrap_or(10);
            if tenth > self.tenth || (end && self.drawn.is_none()) {
                self.tenth = tenth;
                self.drawn = Some(Instant::now());
                let _ = writeln!(
                    std::io::stderr(),
                    "{} {done}/{total} {}",
                    self.label,
                    self.rate(done)
                );
            }
        }
    }

    fn rate(&self, done: u64) -> String {
        let s = self.started.elapsed().as_secs_f64();
        if s > 0.0 && done > 0 {
            format!("({:.0}/s)", done as f64 / s)
        } else {
            String::new()
        }
    }
}
