//! A reader of named raw fields: each read once, loosely matched, every problem collected.

use super::*;

/// Reads named raw fields once each, collecting errors.
pub(super) struct Fields<'a> {
    pub(super) input: &'a [(String, Raw)],
    pub(super) used: Vec<bool>,
    pub(super) errors: Vec<FieldError>,
    /// What is being validated, for messages (`a Decision`).
    pub(super) what: String,
}

impl<'a> Fields<'a> {
    pub(super) fn new(input: &'a [(String, Raw)], what: impl Into<String>) -> Fields<'a> {
        Fields {
            input,
            used: vec![false; input.len()],
            errors: Vec::new(),
            what: what.into(),
        }
    }

    pub(super) fn err(&mut self, field: &str, message: impl Into<String>) {
        self.errors.push(FieldError::new(field, message));
    }

    /// The value of `name`, Null counting as absent.
    pub(super) fn raw(&mut self, name: &str) -> Option<&'a Raw> {
        let mut found = None;
        for (i, (k, v)) in self.input.iter().enumerate() {
            if loose_eq(k, name) {
                if self.used.get(i) == Some(&true) {
                    continue;
                }
                if let Some(u) = self.used.get_mut(i) {
                    *u = true;
                }
                if found.is_some() {
                    self.err(name, "given twice: send it once");
                } else {
                    found = Some(v);
                }
            }
        }
        match found {
            Some(Raw::Null) | None => None,
            v => v,
        }
    }

    pub(super) fn required(&mut self, name: &str, hint: &str) {
        let msg = format!("required for {}: send {hint}", self.what);
        self.err(name, msg);
    }

    pub(super) fn text(&mut self, name: &str, max: usize) -> Option<String> {
        match self.raw(name)? {
            Raw::Text(s) => {
                let t = s.trim();
                if t.is_empty() {
                    self.err(name, "is empty: send some text or leave it out");
                    None
                } else if t.len() > max {
                    self.err(name, format!("is {} bytes: send at most {max}", t.len()));
                    None
                } else {
                    Some(t.to_string())
                }
            }
            other => {
                let m = format!("must be a text, not {}", other.shape());
                self.err(name, m);
                None
            }
        }
    }

    pub(super) fn req_text(&mut self, name: &str, max: usize, hint: &str) -> Option<String> {
        let present = self
            .input
            .iter()
            .any(|(k, v)| loose_eq(k, name) && *v != Raw::Null);
        let v = self.text(name, max);
        if !present {
            self.required(name, hint);
        }
        v
    }

    pub(super) fn enumeration<T>(
        &mut self,
        name: &str,
        parse: fn(&str) -> Result<T, UnknownValue>,
    ) -> Option<T> {
        match self.raw(name)? {
            Raw::Text(s) => match parse(s) {
                Ok(v) => Some(v),
                Err(e) => {
                    self.err(name, e.to_string());
                    None
                }
            },
            other => {
                let m = format!("must be a text, not {}", other.shape());
                self.err(name, m);
                None
            }
        }
    }

    pub(super) fn req_enum<T>(
        &mut self,
        name: &str,
        parse: fn(&str) -> Result<T, UnknownValue>,
        allowed: &[&str],
    ) -> Option<T> {
        let present = self
            .input
            .iter()
            .any(|(k, v)| loose_eq(k, name) && *v != Raw::Null);
        let v = self.enumeration(name, parse);
        if !present {
            self.required(name, &format!("one of {}", allowed.join(", ")));
        }
        v
    }

    pub(super) fn number(&mut self, name: &str) -> Option<f64> {
        match self.raw(name)? {
            Raw::Number(n) if n.is_finite() => Some(*n),
            other => {
                let m = format!("must be a number, not {}", other.shape());
                self.err(name, m);
                None
            }
        }
    }

    pub(super) fn integer(&mut self, name: &str, min: u64, max: u64) -> Option<u64> {
        let n = self.number(name)?;
        if n.fract() != 0.0 || n < min as f64 || n > max as f64 {
            self.err(name, format!("must be a whole number from {min} to {max}"));
            return None;
        }
        Some(n as u64)
    }

    pub(super) fn time(&mut self, name: &str) -> Option<OffsetDateTime> {
        match self.raw(name)? {
            Raw::Text(s) => match parse_time(s) {
                Ok(t) => Some(t),
                Err(e) => {
                    self.err(name, e.to_string());
                    None
                }
            },
            other => {
                let m = format!(
                    "must be an ISO 8601 text (2025-10-14), not {}",
                    other.shape()
                );
                self.err(name, m);
                None
            }
        }
    }

    pub(super) fn uuid(&mut self, name: &str) -> Option<u128> {
        match self.raw(name)? {
            Raw::Text(s) => match parse_uuid(s) {
                Ok(v) => Some(v),
                Err(e) => {
                    self.err(name, e.to_string());
                    None
                }
            },
            other => {
                let m = format!("must be an id (a UUID text), not {}", other.shape());
                self.err(name, m);
                None
            }
        }
    }

    /// A list of texts; a single text is read as a list of one.
    pub(super) fn texts(&mut self, name: &str, max_items: usize, max_len: usize) -> Vec<String> {
        let items: Vec<&Raw> = match self.raw(name) {
            None => return Vec::new(),
            Some(Raw::List(l)) => l.iter().collect(),
            Some(t @ Raw::Text(_)) => vec![t],
            Some(other) => {
                let m = format!("must be a list of texts, not {}", other.shape());
                self.err(name, m);
                return Vec::new();
            }
        };
        if items.len() > max_items {
            self.err(
                name,
                format!("has {} items: send at most {max_items}", items.len()),
            );
            return Vec::new();
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, r) in items.into_iter().enumerate() {
            let field = format!("{name}[{i}]");
            match r {
                Raw::Text(s) if s.trim().is_empty() => self.err(&field, "is empty: send some text"),
                Raw::Text(s) if s.trim().len() > max_len => self.err(
                    &field,
                    format!("is {} bytes: send at most {max_len}", s.trim().len()),
                ),
                Raw::Text(s) => out.push(s.trim().to_string()),
                other => {
                    let m = format!("must be a text, not {}", other.shape());
                    self.err(&field, m);
                }
            }
        }
        out
    }

    pub(super) fn uuids(&mut self, name: &str) -> Vec<u128> {
        let items: Vec<&Raw> = match self.raw(name) {
            None => return Vec::new(),
            Some(Raw::List(l)) => l.iter().collect(),
            Some(t @ Raw::Text(_)) => vec![t],
            Some(other) => {
                let m = format!("must be a list of ids, not {}", other.shape());
                self.err(name, m);
                return Vec::new();
            }
        };
        if items.len() > MAX_ITEMS {
            self.err(
                name,
                format!("has {} items: send at most {MAX_ITEMS}", items.len()),
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, r) in items.into_iter().enumerate() {
            let field = format!("{name}[{i}]");
            match r {
                Raw::Text(s) => match parse_uuid(s) {
                    Ok(v) => out.push(v),
                    Err(e) => self.err(&field, e.to_string()),
                },
                other => {
                    let m = format!("must be an id, not {}", other.shape());
                    self.err(&field, m);
                }
            }
        }
        out
    }

    pub(super) fn tags(&mut self) -> Vec<String> {
        let tags = self.texts("tags", MAX_TAGS, MAX_TAG);
        let mut out: Vec<String> = Vec::with_capacity(tags.len());
        for t in tags {
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }

    /// Reports the names nobody read, listing the ones this input takes.
    pub(super) fn finish(mut self, allowed: &[&str]) -> Vec<FieldError> {
        for (i, (k, _)) in self.input.iter().enumerate() {
            if self.used.get(i) != Some(&true) && !allowed.iter().any(|a| loose_eq(a, k)) {
                let msg = format!(
                    "unknown field for {}: it takes {}",
                    self.what,
                    allowed.join(", ")
                );
                self.errors.push(FieldError::new(k.clone(), msg));
            }
        }
        self.errors
    }
}
