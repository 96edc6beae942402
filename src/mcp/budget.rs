//! One rule for every answer a `maxTokens` bounds (`query_graph context`, a task's
//! graph context on `query_container get`, `query`, `query_memory recall`): the
//! budget bounds the whole answer as served, the envelope's compact JSON text, and
//! tokens are its characters / 4, rounded up ([`tokens`]). The services choose what
//! matters most under their own estimate; [`fit`] then measures the serialized
//! answer, sheds the lowest-ranked items of the lists it is told may shrink until the
//! text fits, lists what was left out as a summary (how many, the first few, how to
//! fetch them; never the whole list), and writes the measured size where the answer
//! reports its estimate. An answer whose frame alone (envelope, message, the parts no
//! list holds, the summaries) exceeds the budget is sent as that frame.

use serde_json::{json, Value};

use crate::mcp::envelope::{self, Reply};

/// How many omitted items a summary names; the rest are counted.
pub const FIRST: usize = 5;

/// Tokens of a text of `chars` characters, as every budget counts them.
pub fn tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

/// Tokens of an envelope as served (its compact JSON text).
pub fn tokens_of(envelope: &Value) -> usize {
    tokens(envelope.to_string().chars().count())
}

/// A list of the answer that may give up items when the answer is over budget.
pub struct Shed {
    /// Where the list is in `data`: a JSON pointer whose `*` segments stand for
    /// every element of the array there (`/molecules/*/atoms`).
    pub at: &'static str,
    /// The item's rank, given the item and its place in its array; the lowest goes
    /// first, the later of equals first (of equals in several lists, the earlier list's).
    pub rank: fn(&Value, usize) -> f64,
    /// What names an omitted item in the summary.
    pub brief: fn(&Value) -> Value,
    /// How many items at the head of each such array are never shed (a walk's root).
    pub keep_first: usize,
    /// The summary this list's omitted items join (its key in [`Summary::at`]).
    pub summary: &'static str,
}

/// Where the omitted items are summarised: an object in `data` holding, per shed
/// list's `summary` key, an array of at most [`FIRST`] briefs, and per key a count
/// under `counts`; `next` says how to fetch what was left out.
pub struct Summary {
    /// JSON pointer of the summary object (created when absent).
    pub at: &'static str,
    /// The key (inside the summary object) counting omitted items per list.
    pub counts: &'static str,
    /// How to fetch what was left out, set when anything was.
    pub next: &'static str,
    /// Per list key, the call that fetches that list's omitted items: when given,
    /// `next` is an object naming the call of each list that lost items, not `next`.
    pub fetch: &'static [(&'static str, &'static str)],
    /// JSON pointer of the estimate to overwrite with the measured size, if any.
    pub estimate: Option<&'static str>,
    /// Other lists of omitted items in the summary object (left out by the service,
    /// not shed here), capped and counted the same way.
    pub capped: &'static [&'static str],
}

/// One list's items as candidates to shed: (pointer of the array, index, rank).
fn candidates(data: &Value, sh: &Shed) -> Vec<(String, usize, f64)> {
    let (at, rank) = (sh.at, sh.rank);
    let mut out = Vec::new();
    let mut frontier = vec![String::new()];
    let segs: Vec<&str> = at.split('/').skip(1).collect();
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        let mut next = Vec::new();
        for base in &frontier {
            if *seg == "*" {
                if let Some(a) = data.pointer(base).and_then(Value::as_array) {
                    next.extend((0..a.len()).map(|k| format!("{base}/{k}")));
                }
            } else {
                next.push(format!("{base}/{seg}"));
            }
        }
        frontier = next;
        if last {
            for p in &frontier {
                if let Some(a) = data.pointer(p).and_then(Value::as_array) {
                    out.extend(
                        a.iter()
                            .enumerate()
                            .skip(sh.keep_first)
                            .map(|(k, v)| (p.clone(), k, rank(v, k))),
                    );
                }
            }
        }
    }
    out
}

/// The summary object of `s` in `data`, made when absent.
fn summary_obj<'a>(
    data: &'a mut Value,
    s: &Summary,
) -> Option<&'a mut serde_json::Map<String, Value>> {
    if data.pointer(s.at).is_none() {
        let (parent, key) = s.at.rsplit_once('/')?;
        let p = data.pointer_mut(parent)?.as_object_mut()?;
        p.insert(key.to_string(), json!({}));
    }
    data.pointer_mut(s.at)?.as_object_mut()
}

/// Caps each shed list's summary array at [`FIRST`], counting what it held.
fn cap(data: &mut Value, sheds: &[Shed], s: &Summary) {
    let Some(obj) = data.pointer_mut(s.at).and_then(Value::as_object_mut) else {
        return;
    };
    let mut counts = obj
        .get(s.counts)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut keys: Vec<&str> = sheds.iter().map(|x| x.summary).collect();
    keys.extend(s.capped);
    keys.dedup();
    let mut any = false;
    for k in keys {
        if let Some(Value::Array(a)) = obj.get_mut(k) {
            let n = counts
                .get(k)
                .and_then(Value::as_u64)
                .unwrap_or(a.len() as u64);
            a.truncate(FIRST);
            counts.insert(k.to_string(), json!(n));
            any |= n > 0;
        }
    }
    obj.insert(s.counts.to_string(), Value::Object(counts));
    if any {
        set_next(obj, s);
    }
}

/// `next`: the one text, or with [`Summary::fetch`] the call of each list that lost
/// items.
fn set_next(obj: &mut serde_json::Map<String, Value>, s: &Summary) {
    if s.fetch.is_empty() {
        obj.insert("next".into(), json!(s.next));
        return;
    }
    let counts = obj.get(s.counts).and_then(Value::as_object);
    let mut next = serde_json::Map::new();
    for (k, call) in s.fetch {
        if counts
            .and_then(|c| c.get(*k))
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 0)
        {
            next.insert(k.to_string(), json!(call));
        }
    }
    obj.insert("next".into(), Value::Object(next));
}

/// Notes one shed item in the summary.
fn note(data: &mut Value, s: &Summary, key: &str, brief: Value) {
    let Some(obj) = summary_obj(data, s) else {
        return;
    };
    let list = obj.entry(key.to_string()).or_insert_with(|| json!([]));
    if let Some(a) = list.as_array_mut() {
        if a.len() < FIRST {
            a.push(brief);
        }
    }
    let counts = obj.entry(s.counts.to_string()).or_insert_with(|| json!({}));
    if let Some(c) = counts.as_object_mut() {
        let n = c.get(key).and_then(Value::as_u64).unwrap_or(0) + 1;
        c.insert(key.to_string(), json!(n));
    }
    set_next(obj, s);
}

fn measure(r: &Reply, message: &dyn Fn(&Value) -> String) -> usize {
    let env = envelope::success(Reply::new(message(&r.data), r.data.clone()));
    tokens_of(&env)
}

/// Fits `r` into `max` tokens as served: caps the summaries, sheds items of `sheds`
/// lowest rank first (calling `after` on `data` with each pass's shed items, so the
/// caller can drop what referred to them), sets the message from `message` and the
/// estimate to the measured size. Answers that size.
pub fn fit(
    r: &mut Reply,
    max: usize,
    sheds: &[Shed],
    s: &Summary,
    message: &dyn Fn(&Value) -> String,
    after: &dyn Fn(&mut Value, &[Value]),
) -> usize {
    cap(&mut r.data, sheds, s);
    let mut size = measure(r, message);
    // Each pass sheds what the overshoot says, by the items' own serialized sizes,
    // then measures the whole again (summaries and counts grow as items go).
    while size > max {
        let mut all: Vec<(usize, String, usize, f64)> = Vec::new();
        for (i, sh) in sheds.iter().enumerate() {
            for (p, k, rank) in candidates(&r.data, sh) {
                all.push((i, p, k, rank));
            }
        }
        if all.is_empty() {
            break;
        }
        all.sort_by(|a, b| {
            a.3.partial_cmp(&b.3)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(b.2.cmp(&a.2))
        });
        let mut over = (size - max) * 4;
        let mut gone: Vec<(String, usize)> = Vec::new();
        let mut shed_items = Vec::new();
        for (i, p, k, _) in all {
            let Some(item) = r.data.pointer(&format!("{p}/{k}")).cloned() else {
                continue;
            };
            let len = item.to_string().chars().count() + 1;
            note(&mut r.data, s, sheds[i].summary, (sheds[i].brief)(&item));
            shed_items.push(item);
            gone.push((p, k));
            if len >= over {
                break;
            }
            over -= len;
        }
        // Highest index first, so earlier indices stay valid.
        gone.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        for (p, k) in gone {
            if let Some(a) = r.data.pointer_mut(&p).and_then(Value::as_array_mut) {
                if k < a.len() {
                    a.remove(k);
                }
            }
        }
        after(&mut r.data, &shed_items);
        size = measure(r, message);
    }
    // The estimate is part of the text it measures: settle it.
    if let Some(e) = s.estimate {
        for _ in 0..3 {
            if let Some(v) = r.data.pointer_mut(e) {
                *v = json!(size);
            }
            let again = measure(r, message);
            if again == size {
                break;
            }
            size = again;
        }
    }
    r.message = message(&r.data);
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(v: &Value, _: usize) -> f64 {
        v["rank"].as_f64().unwrap_or(0.0)
    }
    fn brief(v: &Value) -> Value {
        json!({ "id": v["id"] })
    }

    #[test]
    fn a_long_list_is_shed_lowest_rank_first_and_summarised() {
        let items: Vec<Value> = (0..300)
            .map(
                |i| json!({"id": format!("a{i}"), "rank": (i % 7) as f64, "text": "x".repeat(100)}),
            )
            .collect();
        let omitted: Vec<Value> = (0..246).map(|i| json!({"id": format!("o{i}")})).collect();
        let mut r = Reply::new(
            "",
            json!({"groups": [{"items": items}], "budget": {"omitted": omitted, "estimatedTokens": 0}}),
        );
        let sheds = [Shed {
            at: "/groups/*/items",
            rank,
            brief,
            keep_first: 0,
            summary: "omitted",
        }];
        let s = Summary {
            at: "/budget",
            counts: "omittedCount",
            next: "ask again with a larger maxTokens",
            estimate: Some("/budget/estimatedTokens"),
            capped: &[],
            fetch: &[],
        };
        for max in [1000, 4000, 16000] {
            let mut r2 = Reply::new("", r.data.clone());
            let size = fit(
                &mut r2,
                max,
                &sheds,
                &s,
                &|d| {
                    format!(
                        "{} kept",
                        d["groups"][0]["items"].as_array().map_or(0, Vec::len)
                    )
                },
                &|_, _| {},
            );
            let env = envelope::success(Reply::new(r2.message.clone(), r2.data.clone()));
            assert!(tokens_of(&env) <= max, "{max}: {}", tokens_of(&env));
            assert_eq!(size, tokens_of(&env));
            assert_eq!(r2.data["budget"]["estimatedTokens"], json!(size));
            let kept = r2.data["groups"][0]["items"].as_array().unwrap();
            let n = r2.data["budget"]["omittedCount"]["omitted"]
                .as_u64()
                .unwrap() as usize;
            assert_eq!(n, 246 + 300 - kept.len());
            assert!(r2.data["budget"]["omitted"].as_array().unwrap().len() <= FIRST);
            // What stayed outranks what went.
            let min_kept = kept.iter().map(|v| rank(v, 0)).fold(f64::MAX, f64::min);
            assert!(kept.len() == 300 || min_kept >= 1.0, "{max}: {min_kept}");
        }
        // A budget below the frame answers the frame.
        fit(&mut r, 1, &sheds, &s, &|_| String::new(), &|_, _| {});
        assert!(r.data["groups"][0]["items"].as_array().unwrap().is_empty());
    }
}
