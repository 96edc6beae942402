//! What a running server counts for its operators: calls per tool and outcome, and
//! their latency in a fixed histogram. Rendered as Prometheus' text format by the
//! HTTP server's `/metrics` (with the gauges it reads at scrape time).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

/// The histogram's upper bounds, in seconds: a cheap read takes milliseconds, an
/// import or a first embedding seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0,
];

#[derive(Default)]
struct Latency {
    /// Calls at or under each bound of [`BUCKETS`] (not cumulative here).
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Default)]
struct Counts {
    /// By (tool, outcome code): `OK` or the envelope's error code.
    calls: BTreeMap<(String, String), u64>,
    latency: BTreeMap<String, Latency>,
}

/// The counters, shared by every call of the process.
#[derive(Default)]
pub struct Metrics {
    counts: Mutex<Counts>,
}

impl Metrics {
    /// Records one finished call of `tool` with its outcome `code`.
    pub fn record(&self, tool: &str, code: &str, took: Duration) {
        // Counters only: a panicking thread cannot leave them unusable.
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        *c.calls
            .entry((tool.to_string(), code.to_string()))
            .or_default() += 1;
        let l = c.latency.entry(tool.to_string()).or_default();
        let s = took.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|b| s <= *b) {
            l.buckets[i] += 1;
        }
        l.count += 1;
        l.sum += s;
    }

    /// The counters in Prometheus' text exposition format.
    pub fn render(&self) -> String {
        let c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = String::new();
        out.push_str("# HELP cairn_tool_calls_total Tool calls by tool and outcome (OK or the error code).\n");
        out.push_str("# TYPE cairn_tool_calls_total counter\n");
        for ((tool, code), n) in &c.calls {
            let _ = writeln!(
                out,
                "cairn_tool_calls_total{{tool=\"{}\",code=\"{}\"}} {n}",
                label(tool),
                label(code)
            );
        }
        out.push_str("# HELP cairn_tool_call_seconds How long tool calls took.\n");
        out.push_str("# TYPE cairn_tool_call_seconds histogram\n");
        for (tool, l) in &c.latency {
            let tool = label(tool);
            let mut below = 0;
            for (b, n) in BUCKETS.iter().zip(l.buckets) {
                below += n;
                let _ = writeln!(
                    out,
                    "cairn_tool_call_seconds_bucket{{tool=\"{tool}\",le=\"{b}\"}} {below}"
                );
            }
            let _ = writeln!(
                out,
                "cairn_tool_call_seconds_bucket{{tool=\"{tool}\",le=\"+Inf\"}} {}",
                l.count
            );
            let _ = writeln!(
                out,
                "cairn_tool_call_seconds_sum{{tool=\"{tool}\"}} {}",
                l.sum
            );
            let _ = writeln!(
                out,
                "cairn_tool_call_seconds_count{{tool=\"{tool}\"}} {}",
                l.count
            );
        }
        out
    }
}

/// A label value as the format wants it: backslash, quote and line feed escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative_and_labels_escaped() {
        let m = Metrics::default();
        m.record("advance", "OK", Duration::from_millis(3));
        m.record("advance", "CONFLICT", Duration::from_millis(30));
        m.record("odd\"tool", "OK", Duration::from_secs(100));
        let t = m.render();
        assert!(
            t.contains("cairn_tool_calls_total{tool=\"advance\",code=\"OK\"} 1"),
            "{t}"
        );
        assert!(t.contains("cairn_tool_calls_total{tool=\"advance\",code=\"CONFLICT\"} 1"));
        assert!(t.contains("cairn_tool_call_seconds_bucket{tool=\"advance\",le=\"0.001\"} 0"));
        assert!(t.contains("cairn_tool_call_seconds_bucket{tool=\"advance\",le=\"0.005\"} 1"));
        assert!(t.contains("cairn_tool_call_seconds_bucket{tool=\"advance\",le=\"0.05\"} 2"));
        assert!(t.contains("cairn_tool_call_seconds_count{tool=\"advance\"} 2"));
        assert!(t.contains("tool=\"odd\\\"tool\",le=\"60\"} 0"), "{t}");
        assert!(t.contains("tool=\"odd\\\"tool\",le=\"+Inf\"} 1"));
    }
}
