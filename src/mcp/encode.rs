//! JSON text written byte for byte as serde_json's compact writer writes it, with
//! strings escaped eight bytes at a time. Answers are mostly text (an atom's
//! knowledge runs to kilobytes) that serde_json escapes a byte at a time; a context
//! answer spent a tenth of its time there.

use serde_json::Value;

/// `v` as compact JSON text, as `serde_json::to_vec` writes it.
pub fn to_vec(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    write_value(&mut out, v);
    out
}

fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // serde_json's own formatting keeps numbers exact; writing into a Vec cannot
        // fail.
        Value::Number(n) => {
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => string(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(m) => {
            out.push(b'{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                string(out, k);
                out.push(b':');
                write_value(out, item);
            }
            out.push(b'}');
        }
    }
}

fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    escape(out, s.as_bytes());
    out.push(b'"');
}

/// Appends `s` escaped as the inside of a JSON string, byte for byte as serde_json
/// escapes it. Eight bytes at a time are checked for anything to escape (a quote, a
/// backslash, a control byte); runs without one are copied whole.
pub fn escape(out: &mut Vec<u8>, s: &[u8]) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // True when some byte of `w` is zero / below 0x20 (exact as a yes or no).
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS != 0;
    let special = |w: u64| {
        w.wrapping_sub(ONES * 0x20) & !w & HIGHS != 0
            || zero(w ^ (ONES * b'"' as u64))
            || zero(w ^ (ONES * b'\\' as u64))
    };
    out.reserve(s.len() + s.len() / 8);
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        if i + 8 <= s.len() {
            let w = u64::from_le_bytes(s[i..i + 8].try_into().unwrap_or([0; 8]));
            if !special(w) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(s.len());
        while i < end {
            let b = s[i];
            let short: &[u8] = match b {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0c => b"\\f",
                0..=0x1f => b"",
                _ => {
                    i += 1;
                    continue;
                }
            };
            out.extend_from_slice(&s[start..i]);
            if short.is_empty() {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 0xf) as usize]);
            } else {
                out.extend_from_slice(short);
            }
            i += 1;
            start = i;
        }
    }
    out.extend_from_slice(&s[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escaping_matches_serde_at_every_offset() {
        // Every special byte at every position of an eight-byte word, and at the end.
        for b in (0u8..0x20).chain([b'"', b'\\', b'a', 0x7f]) {
            for at in 0..19 {
                let mut s = vec![b'x'; 19];
                s[at] = b;
                let s = String::from_utf8(s).unwrap();
                let mut ours = b"\"".to_vec();
                escape(&mut ours, s.as_bytes());
                ours.push(b'"');
                assert_eq!(
                    String::from_utf8(ours).unwrap(),
                    serde_json::to_string(&s).unwrap()
                );
            }
        }
    }

    #[test]
    fn values_are_written_as_serde_writes_them() {
        let tricky =
            "quote \" backslash \\ newline \n tab \t nul \u{0} esc \u{1b} del \u{7f} é ✓ 𝄞";
        let values = [
            json!(null),
            json!(true),
            json!([]),
            json!({}),
            json!([
                false,
                null,
                0,
                -1,
                u64::MAX,
                i64::MIN,
                0.1,
                -0.0,
                1e300,
                2.5e-8
            ]),
            json!({"b": {"a": [tricky, "", "x".repeat(100)]}, "a": tricky.repeat(30), "\u{1}k\"": 1}),
        ];
        for v in &values {
            assert_eq!(
                String::from_utf8(to_vec(v)).unwrap(),
                serde_json::to_string(v).unwrap()
            );
        }
    }
}
