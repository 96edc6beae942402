//! Arbitrary input never panics: random bytes, soups of query tokens, and valid
//! queries with bytes flipped, dropped or repeated. Each answer is checked for
//! shape: rows as wide as the columns, positions inside the text.

use super::queries::CASES;
use super::*;

fn limits() -> Limits {
    Limits {
        max_rows: 50,
        max_bindings: 5_000,
        max_hops: 4,
        ..Limits::default()
    }
}

fn check(f: &Fixture, q: &str, limits: &Limits) {
    match execute(&f.graph, &f.schema, q, limits) {
        Ok(out) => {
            for r in &out.rows {
                assert_eq!(r.len(), out.columns.len(), "{q:?}");
            }
            assert!(out.rows.len() <= limits.max_rows, "{q:?}");
        }
        Err(e) => {
            let text = if e.details.query.is_empty() {
                q
            } else {
                e.details.query.as_str()
            };
            if let Some(p) = e.position {
                assert!(
                    p.offset <= text.len() && p.line >= 1 && p.column >= 1,
                    "{q:?}: {e:?}"
                );
            }
            for p in &e.details.problems {
                assert!(
                    p.span.0 <= p.span.1 && p.span.1 <= text.len(),
                    "{q:?}: {p:?}"
                );
            }
            let _ = e.to_string();
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let f = fixture();
    let limits = limits();
    let mut rng = Rng::new(0x5EED_0001);
    for _ in 0..20_000 {
        let len = rng.below(80);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let q = String::from_utf8_lossy(&bytes);
        check(&f, &q, &limits);
    }
}

const TOKENS: &[&str] = &[
    "MATCH",
    "OPTIONAL",
    "WHERE",
    "RETURN",
    "WITH",
    "UNWIND",
    "AS",
    "DISTINCT",
    "ORDER",
    "BY",
    "DESC",
    "ASC",
    "SKIP",
    "LIMIT",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "IN",
    "IS",
    "NULL",
    "STARTS",
    "ENDS",
    "CONTAINS",
    "count",
    "collect",
    "labels",
    "type",
    "size",
    "min",
    "sum",
    "CREATE",
    "DELETE",
    "SET",
    "CALL",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "-",
    "->",
    "<-",
    "--",
    ":",
    ",",
    ".",
    "*",
    "..",
    "|",
    "=",
    "<>",
    "<",
    ">=",
    "+",
    "/",
    "%",
    "^",
    "'x'",
    "\"y\"",
    "1",
    "2",
    "0.5",
    "-3",
    "true",
    "null",
    "$p",
    "n",
    "m",
    "r",
    "a",
    "b",
    "OwlClass",
    "owlclass",
    "Individual",
    "`ai:Transformer`",
    "Transformer",
    "Agent",
    "VisionTransfomer",
    "HAS_PART",
    "has_part",
    "HAS_PRT",
    "SUBCLASS_OF",
    "REQUIRES",
    "iri",
    "preferedTerm",
    "qualityScore",
    "inferred",
    "`日本`",
    "ä",
    "🦀",
    "``",
    "`",
    "'",
    ";",
    "//",
    "/*",
    "\n",
];

#[test]
fn token_soups_never_panic() {
    let f = fixture();
    let limits = limits();
    let mut rng = Rng::new(0x5EED_0002);
    for _ in 0..20_000 {
        let n = 1 + rng.below(24);
        let mut q = String::new();
        for _ in 0..n {
            q.push_str(TOKENS[rng.below(TOKENS.len())]);
            if rng.below(4) != 0 {
                q.push(' ');
            }
        }
        check(&f, &q, &limits);
    }
}

#[test]
fn mutated_valid_queries_never_panic() {
    let f = fixture();
    let limits = limits();
    let mut rng = Rng::new(0x5EED_0003);
    let mut count = 0;
    for (q, _) in CASES {
        for _ in 0..150 {
            let mut bytes = q.as_bytes().to_vec();
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(bytes.len());
                match rng.below(4) {
                    0 => bytes[i] ^= 1 << rng.below(8),
                    1 => {
                        bytes.remove(i);
                    }
                    2 => {
                        let b = bytes[i];
                        bytes.insert(i, b);
                    }
                    _ => bytes[i] = b"()[]{}:-><*.,'`|"[rng.below(16)],
                }
                if bytes.is_empty() {
                    break;
                }
            }
            check(&f, &String::from_utf8_lossy(&bytes), &limits);
            count += 1;
        }
    }
    assert!(count >= 8_000);
}
