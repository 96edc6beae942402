//! A unified diff of two texts, line by line (the edit script from `similar`'s Myers,
//! the hunks written here), for a pull request's body and a proposal's answer.
//!
//! Knows text only.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use similar::DiffOp;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Del,
    Ins,
}

/// How long the search for the shortest script may take: past it, `similar` answers
/// a correct script that is not the shortest (a huge rewrite stays bounded).
const DEADLINE: Duration = Duration::from_secs(2);

/// The edit script from `a` to `b` (ops in order, a replacement's deletions before
/// its insertions): the shortest `similar`'s Myers finds within [`DEADLINE`].
fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let ops = similar::capture_diff_slices_deadline(
        similar::Algorithm::Myers,
        a,
        b,
        Some(Instant::now() + DEADLINE),
    );
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let mut push = |op: Op, n: usize| out.extend(std::iter::repeat_n(op, n));
    for op in ops {
        match op {
            DiffOp::Equal { len, .. } => push(Op::Same, len),
            DiffOp::Delete { old_len, .. } => push(Op::Del, old_len),
            DiffOp::Insert { new_len, .. } => push(Op::Ins, new_len),
            DiffOp::Replace {
                old_len, new_len, ..
            } => {
                push(Op::Del, old_len);
                push(Op::Ins, new_len);
            }
        }
    }
    out
}

/// Splits into lines, and says whether the text ends with a line break.
fn lines(s: &str) -> (Vec<&str>, bool) {
    if s.is_empty() {
        return (Vec::new(), true);
    }
    let nl = s.ends_with('\n');
    let body = s.strip_suffix('\n').unwrap_or(s);
    (body.split('\n').collect(), nl)
}

/// The unified diff from `old` to `new` (with `context` lines around each change,
/// file names in the `---`/`+++` header), or an empty string when they are equal. A
/// last line without a line break is marked `\ No newline at end of file`, as git
/// does.
pub fn unified_diff(
    old: &str,
    new: &str,
    old_name: &str,
    new_name: &str,
    context: usize,
) -> String {
    if old == new {
        return String::new();
    }
    let (a, a_nl) = lines(old);
    let (b, b_nl) = lines(new);
    // A last line that lost or gained its line break differs from itself: compare
    // lines with that mark so the change shows.
    let tag = |v: &[&str], nl: bool| -> Vec<String> {
        v.iter()
            .enumerate()
            .map(|(i, l)| {
                if i + 1 == v.len() && !nl {
                    format!("{l}\u{0}")
                } else {
                    l.to_string()
                }
            })
            .collect()
    };
    let (ta, tb) = (tag(&a, a_nl), tag(&b, b_nl));
    let ra: Vec<&str> = ta.iter().map(|s| s.as_str()).collect();
    let rb: Vec<&str> = tb.iter().map(|s| s.as_str()).collect();
    let ops = script(&ra, &rb);
    // Positions in a and b before each op.
    let mut pos = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0usize, 0usize);
    for op in &ops {
        pos.push((i, j));
        match op {
            Op::Same => {
                i += 1;
                j += 1;
            }
            Op::Del => i += 1,
            Op::Ins => j += 1,
        }
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    let changes: Vec<usize> = (0..ops.len()).filter(|&k| ops[k] != Op::Same).collect();
    let mut h = 0;
    while h < changes.len() {
        // A hunk runs from `context` before its first change to `context` after its
        // last, merging changes whose contexts touch.
        let start = changes[h].saturating_sub(context);
        let mut last = changes[h];
        let mut g = h + 1;
        while g < changes.len() && changes[g] <= last + 2 * context + 1 {
            last = changes[g];
            g += 1;
        }
        let end = (last + context + 1).min(ops.len());
        let (a0, b0) = pos[start];
        let (mut na, mut nb) = (0, 0);
        for op in &ops[start..end] {
            match op {
                Op::Same => {
                    na += 1;
                    nb += 1;
                }
                Op::Del => na += 1,
                Op::Ins => nb += 1,
            }
        }
        let from = |p: usize, n: usize| if n == 0 { p } else { p + 1 };
        let _ = writeln!(out, "@@ -{},{na} +{},{nb} @@", from(a0, na), from(b0, nb));
        for k in start..end {
            let (pa, pb) = pos[k];
            let (mark, text, last_no_nl) = match ops[k] {
                Op::Same => (' ', a[pa], pa + 1 == a.len() && !a_nl),
                Op::Del => ('-', a[pa], pa + 1 == a.len() && !a_nl),
                Op::Ins => ('+', b[pb], pb + 1 == b.len() && !b_nl),
            };
            let _ = writeln!(out, "{mark}{text}");
            if last_no_nl {
                out.push_str("\\ No newline at end of file\n");
            }
        }
        h = g;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies a unified diff to `old` (the test's own patcher, to check diffs by
    /// what they do). Each output line remembers whether it ends with a break.
    fn apply(old: &str, diff: &str) -> String {
        let (a, a_nl) = lines(old);
        let old_line = |i: usize| (a[i].to_string(), i + 1 < a.len() || a_nl);
        let mut out: Vec<(String, bool)> = Vec::new();
        let mut i = 0;
        // The marker describes the line just before it; a removed line is not in
        // the output, so the marker after it changes nothing.
        let mut last_was_removed = false;
        for l in diff.lines().skip(2) {
            if let Some(h) = l.strip_prefix("@@ -") {
                let start: usize = h.split([',', ' ']).next().unwrap().parse().unwrap();
                let count: usize = h
                    .split(',')
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                let to = if count == 0 { start } else { start - 1 };
                while i < to {
                    out.push(old_line(i));
                    i += 1;
                }
            } else if l == "\\ No newline at end of file" {
                if let Some(last) = out.last_mut().filter(|_| !last_was_removed) {
                    last.1 = false;
                }
            } else {
                let (m, t) = l.split_at(1);
                last_was_removed = m == "-";
                match m {
                    " " => {
                        out.push((t.to_string(), true));
                        i += 1;
                    }
                    "-" => i += 1,
                    _ => out.push((t.to_string(), true)),
                }
            }
        }
        while i < a.len() {
            out.push(old_line(i));
            i += 1;
        }
        let mut s = String::new();
        for (k, (t, nl)) in out.iter().enumerate() {
            s.push_str(t);
            if *nl || k + 1 < out.len() {
                s.push('\n');
            }
        }
        s
    }

    #[test]
    fn a_small_change_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\ni\n";
        let d = unified_diff(old, new, "a/x.md", "b/x.md", 1);
        assert_eq!(
            d,
            "--- a/x.md\n+++ b/x.md\n@@ -3,3 +3,3 @@\n c\n-d\n+D\n e\n@@ -8,1 +8,2 @@\n h\n+i\n"
        );
        assert_eq!(apply(old, &d), new);
        assert_eq!(unified_diff(old, old, "a", "b", 3), "");
    }

    #[test]
    fn new_files_and_missing_final_newlines() {
        let d = unified_diff("", "x\ny\n", "/dev/null", "b/n.md", 3);
        assert_eq!(d, "--- /dev/null\n+++ b/n.md\n@@ -0,0 +1,2 @@\n+x\n+y\n");
        let d = unified_diff("x\ny", "x\ny\n", "a", "b", 3);
        assert_eq!(
            d,
            "--- a\n+++ b\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n"
        );
    }

    #[test]
    fn random_edits_apply_back() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut next = |n: u64| rng.u64(..n.max(1));
        for _ in 0..300 {
            let old: Vec<String> = (0..next(30)).map(|_| format!("l{}", next(6))).collect();
            let mut new = old.clone();
            for _ in 0..next(6) {
                let at = next(new.len() as u64 + 1) as usize;
                match next(3) {
                    0 if at < new.len() => {
                        new.remove(at);
                    }
                    1 if at < new.len() => new[at] = format!("m{}", next(4)),
                    _ => new.insert(at, format!("n{}", next(4))),
                }
            }
            let join = |v: &[String], nl: bool| {
                let mut t = v.join("\n");
                if nl && !v.is_empty() {
                    t.push('\n');
                }
                t
            };
            let (o, n) = (join(&old, next(4) > 0), join(&new, next(4) > 0));
            for ctx in [0, 1, 3] {
                let d = unified_diff(&o, &n, "a", "b", ctx);
                if o == n {
                    assert!(d.is_empty());
                } else {
                    assert_eq!(apply(&o, &d), n, "ctx {ctx}\n{o:?}\n{n:?}\n{d}");
                }
            }
        }
    }

    #[test]
    fn the_script_is_shortest() {
        let a = ["a", "b", "c", "a", "b", "b", "a"];
        let b = ["c", "b", "a", "b", "a", "c"];
        let ops = script(&a, &b);
        let edits = ops.iter().filter(|o| **o != Op::Same).count();
        assert_eq!(edits, 5);
    }
}
