//! The response envelope every tool answers with:
//! `{success, message, data?, error?: {code, message, details?}, metadata: {timestamp, version}}`.

use serde_json::{json, Map, Value};

use crate::domain::now;
use crate::error::Error;

/// A successful tool answer before it is wrapped.
pub struct Reply {
    pub message: String,
    pub data: Value,
    /// Set when the call stopped part-way (a command run): answered as a failure
    /// that still carries `data` (what ran, what failed, what was skipped).
    pub partial: Option<Error>,
}

impl Reply {
    pub fn new(message: impl Into<String>, data: Value) -> Self {
        Reply {
            message: message.into(),
            data,
            partial: None,
        }
    }

    /// A call that stopped on `e` after doing some of its work, reported in `data`.
    pub fn partial(e: Error, data: Value) -> Self {
        Reply {
            message: e.to_string(),
            data,
            partial: Some(e),
        }
    }
}

fn metadata() -> Value {
    json!({ "timestamp": now(), "version": env!("CARGO_PKG_VERSION") })
}

pub fn success(r: Reply) -> Value {
    let mut m = Map::new();
    m.insert("success".into(), Value::Bool(true));
    m.insert("message".into(), Value::String(r.message));
    if !r.data.is_null() {
        m.insert("data".into(), r.data);
    }
    m.insert("metadata".into(), metadata());
    Value::Object(m)
}

pub fn failure(e: &Error) -> Value {
    let mut err = Map::new();
    err.insert("code".into(), Value::String(e.code().into()));
    err.insert("message".into(), Value::String(e.to_string()));
    if let Some(d) = e.details() {
        err.insert("details".into(), d);
    }
    json!({ "success": false, "message": e.to_string(), "error": Value::Object(err), "metadata": metadata() })
}

/// A partial failure: the call stopped on `e` but some work is reported in `data`.
pub fn failure_with_data(e: &Error, data: Value) -> Value {
    let mut v = failure(e);
    if let Some(m) = v.as_object_mut() {
        m.insert("data".into(), data);
    }
    v
}
