//! A `documentSymbol` answer as symbols with their name paths, and name paths
//! matched against them.
//!
//! Servers answer in one of two shapes: a tree of `DocumentSymbol`s (clangd,
//! typescript-language-server) or a flat list of `SymbolInformation`s naming only
//! each symbol's direct container (pylsp). Both become the same flat list, each
//! symbol with its path from the top level; for a flat list the path is rebuilt from
//! which symbol's range holds which.
//!
//! A name path is written `HTTPAdapter/send`, `HTTPAdapter.send` or
//! `HTTPAdapter::send`; it matches the symbols whose path ends with it (a leading `/`
//! anchors it at the top level), so a bare name matches every symbol carrying it.

use serde_json::Value;

use super::Symbol;

/// A symbol as read, before its path is known: positions are 0-based (line, column).
struct Raw {
    name: String,
    kind: i64,
    start: (i64, i64),
    end: (i64, i64),
    container: Option<String>,
    parent: Option<usize>,
}

fn pos(v: &Value) -> (i64, i64) {
    (
        v["line"].as_i64().unwrap_or(0),
        v["character"].as_i64().unwrap_or(0),
    )
}

/// Flattens a `documentSymbol` answer into symbols, each with its name path.
pub(super) fn flatten(v: &Value) -> Vec<Symbol> {
    fn walk(items: &[Value], parent: Option<usize>, out: &mut Vec<Raw>) {
        for it in items {
            let Some(name) = it["name"].as_str() else {
                continue;
            };
            let range = if it.get("range").is_some() {
                &it["range"]
            } else {
                &it["location"]["range"]
            };
            let container = match parent {
                Some(p) => Some(out[p].name.clone()),
                None => it["containerName"].as_str().map(str::to_string),
            }
            .filter(|c| !c.is_empty());
            out.push(Raw {
                name: name.to_string(),
                kind: it["kind"].as_i64().unwrap_or(0),
                start: pos(&range["start"]),
                end: pos(&range["end"]),
                container,
                parent,
            });
            let me = out.len() - 1;
            if let Some(children) = it["children"].as_array() {
                walk(children, Some(me), out);
            }
        }
    }
    let mut raw = Vec::new();
    let hierarchical = match v.as_array() {
        Some(items) => {
            walk(items, None, &mut raw);
            items.iter().any(|it| it.get("location").is_none())
        }
        None => false,
    };
    if !hierarchical {
        link_by_range(&mut raw);
    }
    let paths: Vec<Vec<String>> = (0..raw.len()).map(|i| path_of(&raw, i)).collect();
    let local: Vec<bool> = (0..raw.len()).map(|i| in_function(&raw, i)).collect();
    raw.into_iter()
        .zip(paths)
        .zip(local)
        .map(|((r, path), local)| Symbol {
            local,
            start_line: r.start.0 + 1,
            end_line: last_line(r.start, r.end),
            name: r.name,
            kind: r.kind,
            container: r.container,
            path,
        })
        .collect()
}

/// The 1-based last line of a range whose end is exclusive: an end at column 0 of
/// a later line (pylsp ends a block there, past the file's end for the last one)
/// closes on the line before.
fn last_line(start: (i64, i64), end: (i64, i64)) -> i64 {
    if end.1 == 0 && end.0 > start.0 {
        end.0
    } else {
        end.0 + 1
    }
}

/// A flat answer's parents: for each symbol naming a container, the tightest other
/// symbol of that name whose range holds it.
fn link_by_range(raw: &mut [Raw]) {
    for i in 0..raw.len() {
        let Some(c) = raw[i].container.as_deref() else {
            continue;
        };
        let (s, e) = (raw[i].start, raw[i].end);
        let parent = (0..raw.len())
            .filter(|&j| j != i && raw[j].name == c && raw[j].start <= s && raw[j].end >= e)
            .filter(|&j| (raw[j].start, raw[j].end) != (s, e) || j < i)
            .max_by_key(|&j| (raw[j].start, std::cmp::Reverse(raw[j].end)));
        raw[i].parent = parent;
    }
}

fn path_of(raw: &[Raw], i: usize) -> Vec<String> {
    let mut path = vec![raw[i].name.clone()];
    let mut at = raw[i].parent;
    // A cycle cannot come from ranges, but a malformed answer must not loop.
    while let Some(p) = at.filter(|_| path.len() <= raw.len()) {
        path.push(raw[p].name.clone());
        at = raw[p].parent;
    }
    path.reverse();
    path
}

/// Whether an ancestor of symbol `i` is a method (6), constructor (9) or function (12).
fn in_function(raw: &[Raw], i: usize) -> bool {
    let mut at = raw[i].parent;
    let mut steps = 0;
    while let Some(p) = at.filter(|_| steps <= raw.len()) {
        if matches!(raw[p].kind, 6 | 9 | 12) {
            return true;
        }
        at = raw[p].parent;
        steps += 1;
    }
    false
}

/// A name path's names: split on `/`, `::` and `.`, empty parts dropped.
pub fn segments(q: &str) -> Vec<&str> {
    q.split("::")
        .flat_map(|p| p.split(['/', '.']))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// The symbol's name path as Cairn writes it: `HTTPAdapter/send`.
pub fn name_path(s: &Symbol) -> String {
    s.path.join("/")
}

/// Whether the symbol is the one `q` names: its exact name, or a name path its path
/// ends with (from the top when `q` starts with `/`).
pub fn matches(s: &Symbol, q: &str) -> bool {
    let q = q.trim();
    if s.name == q || name_path(s) == q {
        return true;
    }
    let want = segments(q);
    if want.is_empty() {
        return false;
    }
    let have: Vec<&str> = s.path.iter().flat_map(|p| segments(p)).collect();
    if q.starts_with('/') {
        have == want
    } else {
        have.ends_with(&want)
    }
}

/// Every symbol `q` names, in document order.
pub fn find<'a>(syms: &'a [Symbol], q: &str) -> Vec<&'a Symbol> {
    let mut out: Vec<&Symbol> = syms.iter().filter(|s| matches(s, q)).collect();
    out.sort_by_key(|s| (s.start_line, s.end_line));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flattens_hierarchy() {
        let v = json!([{ "name": "S", "kind": 23, "range": {"start":{"line":0},"end":{"line":3,"character":1}},
            "children": [{ "name": "x", "kind": 8, "range": {"start":{"line":1},"end":{"line":1}} }] }]);
        let s = flatten(&v);
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].container.as_deref(), Some("S"));
        assert_eq!(name_path(&s[1]), "S/x");
        assert_eq!((s[0].start_line, s[0].end_line), (1, 4));
        assert_eq!(last_line((3, 0), (9, 0)), 9);
        assert_eq!(last_line((3, 0), (3, 0)), 4);
        assert_eq!(super::super::kind_name(12), "function");
    }

    fn info(name: &str, container: Option<&str>, a: (i64, i64), b: (i64, i64)) -> Value {
        // Classes are capitalised here: kind 5, the rest methods (6).
        let kind = if name.starts_with(char::is_uppercase) {
            5
        } else {
            6
        };
        json!({"name": name, "kind": kind, "containerName": container,
               "location": {"uri": "file:///a.py", "range": {
                   "start": {"line": a.0, "character": a.1}, "end": {"line": b.0, "character": b.1}}}})
    }

    #[test]
    fn flat_answers_get_paths_from_ranges() {
        let v = json!([
            info("A", None, (0, 0), (4, 0)),
            info("send", Some("A"), (1, 4), (3, 0)),
            info("B", None, (5, 0), (9, 0)),
            info("send", Some("B"), (6, 4), (9, 0)),
            info("conn", Some("send"), (7, 8), (7, 20)),
        ]);
        let s = flatten(&v);
        let paths: Vec<String> = s.iter().map(name_path).collect();
        assert_eq!(paths, ["A", "A/send", "B", "B/send", "B/send/conn"]);
        let local: Vec<bool> = s.iter().map(|x| x.local).collect();
        assert_eq!(local, [false, false, false, false, true]);
        assert_eq!(find(&s, "send").len(), 2);
        for q in ["B/send", "B.send", "B::send", "/B/send"] {
            let f = find(&s, q);
            assert_eq!(f.len(), 1, "{q}");
            assert_eq!(f[0].start_line, 7, "{q}");
        }
        assert!(find(&s, "/send").is_empty());
        assert!(find(&s, "C/send").is_empty());
    }
}
