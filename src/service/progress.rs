//! Progress of a long use case (embedding a backlog of texts, loading the model),
//! reported to whoever asked for it: an MCP client that sent a progress token, or
//! nobody. The service only sees [`Progress`]; what a report becomes (an MCP
//! notification, a line on stderr) is the caller's [`Sink`].
//!
//! Reports are thinned here, once for every sink: at most one every
//! [`MIN_INTERVAL`], except the first and the one that completes a stage, and never a
//! value that is not greater than the last one sent (MCP requires progress to
//! increase, and a second stage that restarts at 0 must not go backwards).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Shortest gap between two reports that are neither the first nor a stage's last.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// Where reports go. Called on whatever thread the service runs on: it must not
/// block (queue the report and return).
pub trait Sink: Send + Sync {
    fn send(&self, progress: u64, total: Option<u64>, message: String);
}

/// A handle the service reports through; cloning shares the throttle. The default
/// reports nowhere and costs nothing.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<Inner>>);

struct Inner {
    sink: Arc<dyn Sink>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// When the last report went out, and its value.
    last: Option<(Instant, u64)>,
}

impl Progress {
    /// Reports to `sink`.
    pub fn to(sink: Arc<dyn Sink>) -> Progress {
        Progress(Some(Arc::new(Inner {
            sink,
            state: Mutex::new(State::default()),
        })))
    }

    /// Whether anyone listens; lets a caller skip work done only to report.
    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// `done` of `total` (unknown: `None`) with a message built only when the report
    /// goes out.
    pub fn report(&self, done: u64, total: Option<u64>, message: impl FnOnce() -> String) {
        let Some(inner) = &self.0 else { return };
        let Ok(mut st) = inner.state.lock() else {
            return;
        };
        let now = Instant::now();
        let due = match st.last {
            None => true,
            Some((_, prev)) if done <= prev => false,
            Some((at, _)) => total == Some(done) || now.duration_since(at) >= MIN_INTERVAL,
        };
        if due {
            st.last = Some((now, done));
            drop(st);
            inner.sink.send(done, total, message());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Record(Mutex<Vec<(u64, Option<u64>)>>);

    impl Sink for Record {
        fn send(&self, progress: u64, total: Option<u64>, _: String) {
            self.0.lock().unwrap().push((progress, total));
        }
    }

    #[test]
    fn reports_are_thinned_increasing_and_end_each_stage() {
        let r = Arc::new(Record::default());
        let p = Progress::to(r.clone());
        p.report(0, None, || "loading".into());
        // A fast stage: only its last report passes the interval.
        for k in 0..=100 {
            p.report(k, Some(100), String::new);
        }
        // A second stage starting over never goes backwards.
        p.report(3, Some(3), String::new);
        p.report(150, Some(150), String::new);
        let got = r.0.lock().unwrap().clone();
        assert_eq!(got, vec![(0, None), (100, Some(100)), (150, Some(150))]);
        // Nobody listening: nothing to do.
        Progress::default().report(1, Some(1), || unreachable!());
    }
}
