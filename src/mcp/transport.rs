//! stdio: rmcp's own transport, with a guard in front of its reader so that every
//! line gets an answer.
//!
//! rmcp drops a line that is not JSON (cut short, invalid UTF-8, a raw control
//! byte, a lone surrogate, nesting past serde_json's 128 levels, a number out of
//! range) and a line over 16 MiB without a word, so a client that sent one waits
//! forever; and it answers a known method with malformed params (`tools/call` whose
//! `arguments` is an array) as an unknown one. The guard reads stdin line by line,
//! hands rmcp every message it reads (parsed once, here), passes on as text the few
//! lines rmcp's own rules judge (a notification or an unknown method's request that
//! is no message: rmcp ignores or refuses them), and answers the others itself
//! through the same writer: `-32700` for what is not JSON, `-32600` for what is no
//! request, `-32602` for a known method with bad params, with the request's id
//! whenever it can be read (a tolerant scan of the top-level object finds it even in
//! a line serde refuses). A notification that cannot be read gets no answer, as
//! JSON-RPC wants, unless the line is no JSON at all. A `tools/call` whose argument
//! nests past serde's limit is answered as the tool answers an argument nested past
//! [`crate::mcp::args::DEPTH_MAX`]: its `VALIDATION_ERROR` envelope, naming the
//! argument (found by the same tolerant scan).
//!
//! An error whose id cannot be read carries none: MCP (2026-07-28, "Error
//! Responses") omits it, and rmcp reads an absent id and `null` alike.

use std::future::Future;

use rmcp::model::{
    ClientJsonRpcMessage, ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage, NumberOrString,
    RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Longest line read, as rmcp's own limit.
pub const MAX_LINE: usize = 16 << 20;

/// How much of an over-long line is kept to look for its id.
const ID_SCAN: usize = 64 << 10;

/// The MCP methods whose params Cairn serves; a malformed call of one of them is
/// answered "Invalid params", any other method is rmcp's to answer.
const KNOWN: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "completion/complete",
    "logging/setLevel",
];

/// The transport `cairn serve` runs on: stdin and stdout through rmcp's
/// `stdio_pipes` (the runtime's reactor when they are pipes), guarded.
pub fn stdio() -> Guarded<rmcp::transport::io::StdioWriter> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    guard(read, write)
}

/// rmcp's transport over `write`, reading what the guard lets through from `read`.
pub fn guard<R, W>(read: R, write: W) -> Guarded<W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (passed, rmcp_end) = tokio::io::duplex(1 << 20);
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(screen(read, passed, tx));
    Guarded {
        inner: AsyncRwTransport::new_server(rmcp_end, write),
        screened: rx,
    }
}

/// rmcp's transport plus what the guard screened, in the order the lines came.
pub struct Guarded<W: AsyncWrite + Send + Unpin + 'static> {
    /// rmcp's writer, and its reader of the rare lines the guard passes on as text.
    inner: AsyncRwTransport<RoleServer, tokio::io::DuplexStream, W>,
    screened: mpsc::UnboundedReceiver<Screen>,
}

/// What the guard made of a line, for [`Guarded::receive`].
enum Screen {
    /// A message read already: rmcp need not parse the line again.
    Read(Box<ClientJsonRpcMessage>),
    /// The guard's answer to a line, sent before anything read after it.
    Answer(Box<ServerJsonRpcMessage>),
}

impl<W: AsyncWrite + Send + Unpin + 'static> Transport<RoleServer> for Guarded<W> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // What the guard read comes first. The lines it passes on as text (a
            // notification or an unknown method's request that does not read as a
            // message: rmcp's own rules answer or ignore them) are written to rmcp's
            // reader before the guard's queue ends, so rmcp's end of input comes
            // after the last of them.
            tokio::select! {
                biased;
                screened = self.screened.recv() => match screened {
                    Some(Screen::Read(msg)) => return Some(*msg),
                    Some(Screen::Answer(answer)) => {
                        if self.inner.send(*answer).await.is_err() {
                            return None;
                        }
                    }
                    None => return self.inner.receive().await,
                },
                msg = self.inner.receive() => match msg {
                    Some(msg) => return Some(msg),
                    // rmcp's reader ended, which it does only after the queue has
                    // closed (`screen`): the next turn answers the end.
                    None => continue,
                },
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// Reads `read` line by line until it ends: messages it reads go to `screened`, as
/// its answers to the lines it refuses; what is left for rmcp to judge goes on as
/// text to `passed`.
async fn screen<R: AsyncRead + Unpin>(
    read: R,
    mut passed: tokio::io::DuplexStream,
    screened: mpsc::UnboundedSender<Screen>,
) {
    let mut read = BufReader::with_capacity(64 << 10, read);
    let mut line: Vec<u8> = Vec::new();
    loop {
        line.clear();
        let over = match read_line(&mut read, &mut line).await {
            Ok(Some(over)) => over,
            Ok(None) => break,
            Err(e) => {
                tracing::debug!(error = %e, "stdin closed");
                break;
            }
        };
        let verdict = if over {
            Verdict::Answer(error(
                scan_id(&line),
                ErrorCode::INVALID_REQUEST,
                format!(
                    "the message is longer than {} MiB; nothing of it was read",
                    MAX_LINE >> 20
                ),
            ))
        } else {
            check(&line)
        };
        let sent = match verdict {
            Verdict::Read(msg) => screened.send(Screen::Read(msg)).is_ok(),
            Verdict::Pass => {
                line.push(b'\n');
                passed.write_all(&line).await.is_ok()
            }
            Verdict::Answer(a) => screened.send(Screen::Answer(a)).is_ok(),
        };
        if !sent {
            break;
        }
    }
    // The queue ends before rmcp's reader does (see `Guarded::receive`).
    drop(screened);
    let _ = passed.shutdown().await;
}

/// Reads one line (without its newline) into `line`; `None` at the end of input, else
/// whether the line was longer than [`MAX_LINE`] (then `line` holds its first
/// [`ID_SCAN`] bytes and the rest was skipped).
async fn read_line<R: AsyncRead + Unpin>(
    read: &mut BufReader<R>,
    line: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    let mut over = false;
    let mut any = false;
    loop {
        let buf = read.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if any { Some(over) } else { None });
        }
        any = true;
        let (take, done) = match memchr(buf) {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        if !over && line.len() + take > MAX_LINE {
            over = true;
            line.truncate(ID_SCAN);
        }
        if over {
            let room = ID_SCAN.saturating_sub(line.len()).min(take);
            line.extend_from_slice(&buf[..room]);
        } else {
            line.extend_from_slice(&buf[..take]);
        }
        read.consume(if done { take + 1 } else { take });
        if done {
            return Ok(Some(over));
        }
    }
}

fn memchr(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|b| *b == b'\n')
}

/// What the guard does with one line.
#[derive(Debug)]
enum Verdict {
    /// The message the line holds, read.
    Read(Box<ClientJsonRpcMessage>),
    /// rmcp reads it.
    Pass,
    /// The guard answers it.
    Answer(Box<ServerJsonRpcMessage>),
}

fn error(id: Option<RequestId>, code: ErrorCode, message: String) -> Box<ServerJsonRpcMessage> {
    Box::new(JsonRpcMessage::Error(JsonRpcError::new(
        id,
        ErrorData::new(code, message, None),
    )))
}

fn check(raw: &[u8]) -> Verdict {
    let line = raw.strip_suffix(b"\r").unwrap_or(raw);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Pass;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            let id = scan_id(line);
            // A tool call whose argument nests past serde's limit is the tool's
            // refusal, naming the argument, as one nested past Cairn's is.
            let deep = e.to_string().contains("recursion limit");
            if let (true, Some(id)) = (deep, &id) {
                if let Some((name, depth)) = deep_argument(line) {
                    let refused = crate::mcp::args::too_deep(&name, Some(depth));
                    let env = crate::mcp::envelope::failure(&refused);
                    return Verdict::Answer(Box::new(JsonRpcMessage::response(
                        ServerResult::CallToolResult(crate::mcp::server::tool_result(env)),
                        id.clone(),
                    )));
                }
            }
            // Valid JSON that serde refuses (too deep, a number out of range) is no
            // parse error: the request is simply not one Cairn can take.
            let code = if deep_or_huge(&e) {
                ErrorCode::INVALID_REQUEST
            } else {
                ErrorCode::PARSE_ERROR
            };
            let what = if std::str::from_utf8(line).is_err() {
                "the message is not UTF-8".to_string()
            } else {
                format!("the message is not JSON Cairn can read: {e}")
            };
            return Verdict::Answer(error(id, code, what));
        }
    };
    let Value::Object(map) = &value else {
        return Verdict::Answer(error(
            None,
            ErrorCode::INVALID_REQUEST,
            "a message is one JSON object (batches are not part of MCP)".into(),
        ));
    };
    let id = match map.get("id") {
        None => None,
        Some(v) => match request_id(v) {
            Some(id) => Some(id),
            None => {
                return Verdict::Answer(error(
                    None,
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "the id must be a string or an integer, not {}",
                        clip(&v.to_string())
                    ),
                ))
            }
        },
    };
    let method = map.get("method").and_then(Value::as_str);
    if let (Some("tools/call"), Some(id)) = (method, &id) {
        if let Some(why) = bad_tool_call(map.get("params")) {
            return Verdict::Answer(error(Some(id.clone()), ErrorCode::INVALID_PARAMS, why));
        }
    }
    // Read from the tree in place (a copy of it would copy the line's every string),
    // once: rmcp is handed the message, not the line to parse again.
    if let Ok(msg) = <ClientJsonRpcMessage as serde::Deserialize>::deserialize(&value) {
        return Verdict::Read(Box::new(msg));
    }
    match (id, method) {
        // A notification or a response rmcp cannot read: its own compatibility rules
        // decide (it ignores notifications it does not know).
        (None, _) => Verdict::Pass,
        (Some(id), Some(m)) if KNOWN.contains(&m) => Verdict::Answer(error(
            Some(id),
            ErrorCode::INVALID_PARAMS,
            format!("the params of {m} do not have the shape MCP gives them"),
        )),
        (Some(_), Some(_)) => Verdict::Pass,
        (Some(id), None) => Verdict::Answer(error(
            Some(id),
            ErrorCode::INVALID_REQUEST,
            "a request needs a method".into(),
        )),
    }
}

/// The argument of a `tools/call` that nests past [`crate::mcp::args::DEPTH_MAX`],
/// with its depth, read tolerantly from a line serde refused: `method` and
/// `params.arguments` at the top level, each argument's brackets counted outside
/// strings. `None` when the line is no such call.
fn deep_argument(line: &[u8]) -> Option<(String, usize)> {
    let method = member(line, 0, "method")?;
    if string_at(line, method)?.0 != "tools/call" {
        return None;
    }
    let params = member(line, 0, "params")?;
    let args = member(line, params, "arguments")?;
    let mut i = skip_ws(line, args);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(line, i);
        match line.get(i)? {
            b',' => i = skip_ws(line, i + 1),
            b'}' => return None,
            _ => {}
        }
        let (key, after) = string_at(line, i)?;
        i = skip_ws(line, after);
        if line.get(i) != Some(&b':') {
            return None;
        }
        let (depth, end) = nesting(line, skip_ws(line, i + 1));
        if depth > crate::mcp::args::DEPTH_MAX {
            return Some((key, depth));
        }
        i = end?;
    }
}

/// The index of the value of `key` in the object starting at `line[at]` (skipping
/// whitespace), at that object's own level.
fn member(line: &[u8], at: usize, key: &str) -> Option<usize> {
    let mut i = skip_ws(line, at);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(line, i);
        if line.get(i) == Some(&b',') {
            i = skip_ws(line, i + 1);
        }
        let (k, after) = string_at(line, i)?;
        i = skip_ws(line, after);
        if line.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(line, i + 1);
        if k == key {
            return Some(i);
        }
        i = skip_value(line, i)?;
    }
}

/// How deep the JSON value at `line[i]` nests (1 for a scalar), and the index of the
/// `,` or `}` after it when the line holds its end.
fn nesting(line: &[u8], mut i: usize) -> (usize, Option<usize>) {
    let (mut depth, mut deepest) = (0usize, 1usize);
    loop {
        match line.get(i) {
            None => return (deepest, None),
            Some(b'"') => match skip_string(line, i) {
                Some(j) => i = j,
                None => return (deepest, None),
            },
            Some(b'{' | b'[') => {
                depth += 1;
                // Counted as `args::depth` counts: the innermost value is a level.
                deepest = deepest.max(depth + 1);
                i += 1;
            }
            Some(b'}' | b']') if depth == 0 => return (deepest, Some(i)),
            Some(b'}' | b']') => {
                depth -= 1;
                i += 1;
            }
            Some(b',') if depth == 0 => return (deepest, Some(i)),
            Some(_) => i += 1,
        }
    }
}

/// What the HTTP front does with one POSTed message (a request body, not a line).
#[derive(Debug)]
pub enum Screened {
    /// rmcp reads it.
    Pass,
    /// Answered here, with HTTP 400: what rmcp's HTTP path would misanswer (it gives
    /// 415 and plain text for a body it cannot read).
    Answer(Box<ServerJsonRpcMessage>),
    /// A notification or response nobody can read: JSON-RPC answers none (202).
    Ignore,
}

/// The guard's judgement for a body POSTed to `/mcp`: the same rules as for a stdio
/// line ([`check`]), plus what rmcp's HTTP path would refuse outright: an empty
/// body is no JSON, and a message that still does not read as an MCP message is
/// answered `-32600` if it is a request, ignored if not.
pub fn screen_body(body: &[u8]) -> Screened {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Screened::Answer(error(
            None,
            ErrorCode::PARSE_ERROR,
            "the body is empty; POST one JSON-RPC message".into(),
        ));
    }
    match check(body) {
        Verdict::Answer(a) => Screened::Answer(a),
        Verdict::Read(_) => Screened::Pass,
        Verdict::Pass => {
            let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
            if serde_json::from_slice::<ClientJsonRpcMessage>(body).is_ok() {
                return Screened::Pass;
            }
            match scan_id(body) {
                Some(id) => Screened::Answer(error(
                    Some(id),
                    ErrorCode::INVALID_REQUEST,
                    "the message is not an MCP request Cairn can read".into(),
                )),
                None => Screened::Ignore,
            }
        }
    }
}

/// Why a `tools/call`'s params are not ones a tool can be called with, if they are not.
fn bad_tool_call(params: Option<&Value>) -> Option<String> {
    let Some(params) = params else {
        return Some("tools/call needs params: {\"name\": TOOL, \"arguments\": {...}}".into());
    };
    let Value::Object(p) = params else {
        return Some(
            "tools/call params must be an object: {\"name\": TOOL, \"arguments\": {...}}".into(),
        );
    };
    if !p.get("name").is_some_and(Value::is_string) {
        return Some("tools/call params need a name: the tool to call, as a string".into());
    }
    match p.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(other) => Some(format!(
            "tools/call arguments must be a JSON object of the tool's parameters, not {}",
            kind(other)
        )),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

fn request_id(v: &Value) -> Option<RequestId> {
    match v {
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        _ => None,
    }
}

/// Whether serde refused valid JSON: nesting past its limit or a number it cannot hold.
fn deep_or_huge(e: &serde_json::Error) -> bool {
    let m = e.to_string();
    m.contains("recursion limit") || m.contains("number out of range")
}

/// The id of a request read tolerantly: the value of the key `id` at the top level of
/// an object, when it is a string or an integer, however broken or deep the rest of
/// the line is.
fn scan_id(line: &[u8]) -> Option<RequestId> {
    let mut i = skip_ws(line, 0);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(line, i);
        if line.get(i) == Some(&b',') {
            i = skip_ws(line, i + 1);
        }
        if line.get(i) != Some(&b'"') {
            return None;
        }
        let (key, after) = string_at(line, i)?;
        i = skip_ws(line, after);
        if line.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(line, i + 1);
        if key == "id" {
            return match line.get(i)? {
                b'"' => string_at(line, i).map(|(s, _)| NumberOrString::String(s.into())),
                _ => {
                    let end = line[i..]
                        .iter()
                        .position(|b| !(b.is_ascii_digit() || *b == b'-'))
                        .map_or(line.len(), |n| i + n);
                    let follows = line.get(end).copied();
                    if matches!(follows, Some(b'.') | Some(b'e') | Some(b'E')) {
                        return None;
                    }
                    std::str::from_utf8(&line[i..end])
                        .ok()?
                        .parse()
                        .ok()
                        .map(NumberOrString::Number)
                }
            };
        }
        i = skip_value(line, i)?;
    }
}

fn skip_ws(line: &[u8], mut i: usize) -> usize {
    while line.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The string starting at `line[i]` (a quote), decoded when it has no escapes, and the
/// index after its closing quote.
fn string_at(line: &[u8], i: usize) -> Option<(String, usize)> {
    let mut j = i + 1;
    let mut escaped = false;
    while let Some(&b) = line.get(j) {
        match b {
            b'\\' => escaped = true,
            b'"' => {
                let body = &line[i + 1..j];
                let s = if escaped {
                    serde_json::from_slice::<String>(&line[i..=j]).ok()?
                } else {
                    String::from_utf8(body.to_vec()).ok()?
                };
                return Some((s, j + 1));
            }
            _ => {}
        }
        j += if b == b'\\' { 2 } else { 1 };
    }
    None
}

/// The index of the `,` or `}` after the JSON value starting at `line[i]`,
/// counting brackets outside strings, at any depth.
fn skip_value(line: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *line.get(i)? {
            b'"' => i = skip_string(line, i)?,
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' if depth == 0 => return Some(i),
            b'}' | b']' => {
                depth -= 1;
                i += 1;
            }
            b',' if depth == 0 => return Some(i),
            _ => i += 1,
        }
    }
}

/// The index after a string whose contents are not valid text (escapes skipped).
fn skip_string(line: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while let Some(&b) = line.get(j) {
        match b {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: &Verdict) -> Option<(i32, Option<RequestId>)> {
        match v {
            Verdict::Answer(m) => match m.as_ref() {
                JsonRpcMessage::Error(e) => Some((e.error.code.0, e.id.clone())),
                _ => None,
            },
            _ => None,
        }
    }

    #[test]
    fn ids_are_found_in_lines_serde_refuses() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","params":{}1{},"id":9,"method":"ping"}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(scan_id(deep.as_bytes()), Some(NumberOrString::Number(9)));
        assert_eq!(
            scan_id(br#"{"id":"a\"b","method":"x"#),
            Some(NumberOrString::String("a\"b".into()))
        );
        assert_eq!(
            scan_id(br#"{"method":"x","params":{"id":3},"id":4"#),
            Some(NumberOrString::Number(4))
        );
        assert_eq!(scan_id(br#"{"id":1e400}"#), None);
        assert_eq!(scan_id(b"not json"), None);
        assert_eq!(
            scan_id(br#"{"jsonrpc":"2.0","id":7,"method":"tools/ca"#),
            Some(NumberOrString::Number(7))
        );
    }

    #[test]
    fn a_tool_argument_past_serdes_limit_is_the_tools_refusal_naming_it() {
        let n = 100_000;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"ping","arguments":{{"a":"x, y","deep":{}1{}}}}}}}"#,
            "[".repeat(n),
            "]".repeat(n)
        );
        let Verdict::Answer(m) = check(line.as_bytes()) else {
            panic!("passed")
        };
        let JsonRpcMessage::Response(r) = *m else {
            panic!("{m:?}")
        };
        assert_eq!(r.id, NumberOrString::Number(3));
        let ServerResult::CallToolResult(res) = r.result else {
            panic!()
        };
        let env = res.structured_content.unwrap();
        assert_eq!(env["error"]["code"], "VALIDATION_ERROR");
        assert_eq!(env["error"]["details"]["parameter"], "deep");
        assert!(
            env["message"].as_str().unwrap().contains("100001 levels"),
            "{env}"
        );
        // Deep elsewhere than in an argument: the request is refused as before.
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"ping","_meta":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(
            code(&check(line.as_bytes())),
            Some((-32600, Some(NumberOrString::Number(4))))
        );
    }

    #[test]
    fn every_broken_line_is_answered_with_its_code() {
        let n = |i: i64| Some(NumberOrString::Number(i));
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{}{}}}"#,
            "[".repeat(130),
            "]".repeat(130)
        );
        for (line, want) in [
            (br#"{"jsonrpc":"2.0","id":1,"method":"ping""#.to_vec(), (-32700, n(1))),
            (b"\xff\xfe{}".to_vec(), (-32700, None)),
            (b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"x\":\"a\x01b\"}".to_vec(), (-32700, n(3))),
            (br#"{"jsonrpc":"2.0","id":4,"method":"ping","x":"\ud800"}"#.to_vec(), (-32700, n(4))),
            (deep.into_bytes(), (-32600, n(2))),
            (br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#.to_vec(), (-32600, None)),
            (br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#.to_vec(), (-32602, n(5))),
            (br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x","arguments":"{}"}}"#.to_vec(), (-32602, n(6))),
            (br#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#.to_vec(), (-32602, n(7))),
            (br#"[{"jsonrpc":"2.0","id":8,"method":"ping"}]"#.to_vec(), (-32600, None)),
        ] {
            let v = check(&line);
            assert_eq!(code(&v), Some(want), "{}", String::from_utf8_lossy(&line));
        }
        assert!(matches!(
            check(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Read(_)
        ));
        assert!(matches!(check(b""), Verdict::Pass));
    }
}
