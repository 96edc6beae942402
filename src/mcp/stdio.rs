//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout.
//!
//! An end that is a pipe (as an MCP client starts a server) is read or written
//! through the runtime's event loop; tokio's own stdin and stdout hand every read and
//! write to a blocking thread, a thread switch per message that costs more than most
//! tool calls. An end that is anything else (a terminal, a file) uses tokio's stdio.
//!
//! The transport is ours rather than rmcp's line codec for the one message that
//! dominates a session, the tool call, both ways:
//! - A `tools/call` request carrying only a name and arguments is read straight into
//!   rmcp's types; every other message takes rmcp's own parse.
//! - A tool's answer carries the envelope twice, as JSON text and as
//!   `structuredContent` (`server`'s `call_tool` makes the text from that value). The
//!   text is escaped once and the structured copy is those same bytes: a context
//!   answer of 170 KiB was otherwise encoded three times. Any other message, or an
//!   answer of another shape, is written by serde.

use std::borrow::Cow;
use std::os::fd::AsFd;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use crate::mcp::encode;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ContentBlock, ErrorData,
    JsonRpcMessage, JsonRpcRequest, Request, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::Mutex;

pub type Reader = Pin<Box<dyn AsyncRead + Send>>;
pub type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// Longest message read; a longer line is skipped whole. Tool arguments are bounded
/// far below this (strings of at most 1 MB).
const MAX_LINE: usize = 16 << 20;

/// Must be called inside the runtime (the pipe ends register with its reactor). Each
/// end is chosen on its own: a pipe goes through the reactor, anything else (a file,
/// a terminal) through tokio's stdio. A pipe end is made non-blocking, which would
/// break a blocking read of it, so an end is never half switched; and stdout stays
/// blocking when stderr is the same pipe, or a log line could fail with EAGAIN.
pub fn transport() -> Stdio {
    let read: Reader = match std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd)
    {
        Ok(r) => Box::pin(r),
        Err(e) => {
            tracing::debug!(error = %e, "stdin is not a pipe; reading it on the blocking pool");
            Box::pin(tokio::io::stdin())
        }
    };
    let sender = if same_file(std::io::stdout().as_fd(), std::io::stderr().as_fd()) {
        Err(std::io::Error::other("stderr is the same pipe"))
    } else {
        std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .and_then(pipe::Sender::from_owned_fd)
    };
    let write: Writer = match sender {
        Ok(w) => Box::pin(w),
        Err(e) => {
            tracing::debug!(error = %e, "stdout is not a pipe of its own; writing it on the blocking pool");
            Box::pin(tokio::io::stdout())
        }
    };
    Stdio::new(read, write)
}

/// Whether two descriptors name the same file (the same pipe, for stdout and stderr
/// joined by `2>&1`). False when either cannot be read.
fn same_file(a: std::os::fd::BorrowedFd<'_>, b: std::os::fd::BorrowedFd<'_>) -> bool {
    use std::os::unix::fs::MetadataExt;
    let meta = |fd: std::os::fd::BorrowedFd<'_>| {
        fd.try_clone_to_owned()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata())
            .ok()
    };
    match (meta(a), meta(b)) {
        (Some(x), Some(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// rmcp's transport over one reader and one writer.
pub struct Stdio {
    read: BufReader<Reader>,
    /// The line being read. A read cancelled half-way (rmcp polls `receive` inside a
    /// `select!`) leaves its bytes here, and the next call goes on with them.
    line: Vec<u8>,
    /// Skipping the rest of an over-long line.
    skipping: bool,
    /// `None` once closed. Sends run as concurrent tasks; each writes whole lines.
    write: Arc<Mutex<Option<Writer>>>,
}

impl Stdio {
    pub fn new(read: Reader, write: Writer) -> Stdio {
        Stdio {
            read: BufReader::with_capacity(64 << 10, read),
            line: Vec::new(),
            skipping: false,
            write: Arc::new(Mutex::new(Some(write))),
        }
    }

    /// Reads up to the next newline into `self.line`. False at end of input or on a
    /// read error.
    async fn next_line(&mut self) -> bool {
        loop {
            let buf = match self.read.fill_buf().await {
                Ok([]) => return false,
                Ok(b) => b,
                Err(e) => {
                    tracing::error!(error = %e, "cannot read stdin");
                    return false;
                }
            };
            let (take, done) = match newline(buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            if !self.skipping {
                if self.line.len() + take > MAX_LINE {
                    tracing::error!(
                        max = MAX_LINE,
                        "a message exceeds the longest line read; skipped"
                    );
                    self.line.clear();
                    self.skipping = true;
                } else {
                    self.line.extend_from_slice(&buf[..take]);
                }
            }
            self.read.consume(take);
            if done {
                if self.skipping {
                    self.skipping = false;
                    continue;
                }
                return true;
            }
        }
    }

    /// Writes one line (a serialized message and its newline) whole. When no other
    /// line is being written, the writing starts at once rather than when the runtime
    /// first polls the returned future (rmcp spawns it): an answer that fits the pipe
    /// is on its way to the client before this returns.
    fn send_line(
        &self,
        line: Vec<u8>,
    ) -> impl std::future::Future<Output = std::io::Result<()>> + Send + 'static {
        let lock = self.write.clone();
        let mut held = lock.clone().try_lock_owned().ok();
        let mut done = 0;
        if let Some(Some(w)) = held.as_deref_mut() {
            let mut cx = Context::from_waker(Waker::noop());
            while done < line.len() {
                match w.as_mut().poll_write(&mut cx, &line[done..]) {
                    Poll::Ready(Ok(n)) if n > 0 => done += n,
                    // Full, or an error the future below meets again and reports.
                    _ => break,
                }
            }
        }
        async move {
            let mut w = match held {
                Some(w) => w,
                None => lock.lock_owned().await,
            };
            let Some(w) = w.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the transport is closed",
                ));
            };
            w.write_all(&line[done..]).await?;
            w.flush().await
        }
    }
}

/// The index of the first newline in `buf`. libc's memchr scans a word or more at a
/// time; a tool call's line runs to kilobytes.
fn newline(buf: &[u8]) -> Option<usize> {
    // SAFETY: `buf` is readable for its length; the answer points into it or is null.
    let at = unsafe { libc::memchr(buf.as_ptr().cast(), i32::from(b'\n'), buf.len()) };
    (!at.is_null()).then(|| at as usize - buf.as_ptr() as usize)
}

impl rmcp::transport::Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let mut line = Vec::with_capacity(1024);
        let encoded = match write_answer(&mut line, &item) {
            true => Ok(()),
            false => serde_json::to_writer(&mut line, &item).map_err(std::io::Error::from),
        };
        // A message that failed to encode is not written: half a line would garble
        // every message after it.
        let send = encoded.map(|()| {
            line.push(b'\n');
            self.send_line(line)
        });
        async move { send?.await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if !self.next_line().await {
                return None;
            }
            let msg = parse(trim(&self.line));
            self.line.clear();
            match msg {
                Parsed::Message(m) => return Some(*m),
                Parsed::Skip => continue,
                Parsed::Invalid => {
                    let e = ServerJsonRpcMessage::error(
                        ErrorData::invalid_request("Invalid request", None),
                        None,
                    );
                    let mut out = serde_json::to_vec(&e).unwrap_or_default();
                    out.push(b'\n');
                    // Written by a task of its own: rmcp may drop this future at any
                    // await (it polls it inside a `select!`), and a line cut short
                    // would garble every message after it.
                    let send = self.send_line(out);
                    tokio::spawn(async move {
                        if let Err(e) = send.await {
                            tracing::debug!(error = %e, "Invalid Request answer not sent");
                        }
                    });
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Some(mut w) = self.write.lock().await.take() {
            w.flush().await?;
        }
        Ok(())
    }
}

fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

enum Parsed {
    Message(Box<ClientJsonRpcMessage>),
    /// Empty, not JSON, or a notification that does not parse: nothing to answer
    /// (answering bytes that are not JSON could start an echo storm between peers).
    Skip,
    /// JSON that is not a message we know, and not a notification: answered
    /// Invalid Request.
    Invalid,
}

/// A `tools/call` request with nothing but a name and arguments.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Call<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    #[serde(borrow)]
    method: Cow<'a, str>,
    params: CallParams,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

fn parse(line: &[u8]) -> Parsed {
    if line.is_empty() {
        return Parsed::Skip;
    }
    if let Ok(c) = serde_json::from_slice::<Call>(line) {
        if c.jsonrpc == "2.0" && c.method == "tools/call" {
            let mut params = CallToolRequestParams::new(c.params.name);
            if let Some(a) = c.params.arguments {
                params = params.with_arguments(a);
            }
            let req = ClientRequest::CallToolRequest(Request::new(params));
            return Parsed::Message(Box::new(JsonRpcMessage::Request(JsonRpcRequest::new(
                c.id, req,
            ))));
        }
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(m) => Parsed::Message(Box::new(m)),
        Err(e) if e.is_syntax() || e.is_eof() => {
            tracing::debug!(error = %e, "ignoring a line that is not JSON");
            Parsed::Skip
        }
        Err(e) => {
            // A notification (an object without an id) is never answered, even when
            // it is not one we know; any other JSON is an Invalid Request.
            let notification = serde_json::from_slice::<Map<String, Value>>(line)
                .map(|m| !m.contains_key("id"))
                .unwrap_or(false);
            tracing::debug!(error = %e, "not a message this server knows");
            if notification {
                Parsed::Skip
            } else {
                Parsed::Invalid
            }
        }
    }
}

/// Writes a tool's answer whose text is the JSON of its `structuredContent`, as
/// serde would write the whole message, escaping the text once and copying it
/// unescaped as the structured copy. False, writing nothing, for any other message.
fn write_answer(out: &mut Vec<u8>, msg: &ServerJsonRpcMessage) -> bool {
    let JsonRpcMessage::Response(resp) = msg else {
        return false;
    };
    let ServerResult::CallToolResult(r) = &resp.result else {
        return false;
    };
    let ([ContentBlock::Text(t)], Some(structured), None) =
        (r.content.as_slice(), &r.structured_content, &r.meta)
    else {
        return false;
    };
    if t.meta.is_some() || t.annotations.is_some() || !structured.is_object() {
        return false;
    }
    debug_assert_eq!(
        serde_json::from_str::<Value>(&t.text).ok().as_ref(),
        Some(structured),
        "an answer's text must be the JSON of its structuredContent"
    );
    // The text escaped (at most twice its length: being JSON it holds no raw control
    // bytes) and then as it is, in one allocation.
    out.reserve(t.text.len() * 3 + 160);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    if serde_json::to_writer(&mut *out, &resp.id).is_err() {
        out.clear();
        return false;
    }
    out.extend_from_slice(b",\"result\":{");
    if let Some(kind) = &r.result_type {
        out.extend_from_slice(b"\"resultType\":");
        if serde_json::to_writer(&mut *out, kind).is_err() {
            out.clear();
            return false;
        }
        out.push(b',');
    }
    out.extend_from_slice(b"\"content\":[{\"type\":\"text\",\"text\":\"");
    encode::escape(out, t.text.as_bytes());
    out.extend_from_slice(b"\"}],\"structuredContent\":");
    out.extend_from_slice(t.text.as_bytes());
    if let Some(e) = r.is_error {
        out.extend_from_slice(if e {
            b",\"isError\":true"
        } else {
            b",\"isError\":false"
        });
    }
    out.extend_from_slice(b"}}");
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, JsonRpcResponse, NumberOrString, ResultType};
    use serde_json::json;

    fn answer(
        text: String,
        structured: Value,
        failed: bool,
        id: RequestId,
    ) -> ServerJsonRpcMessage {
        let mut r = if failed {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        r.structured_content = Some(structured);
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: Default::default(),
            id,
            result: ServerResult::CallToolResult(r),
        })
    }

    #[test]
    fn a_newline_is_found_wherever_it_is() {
        assert_eq!(newline(b""), None);
        assert_eq!(newline(b"no end"), None);
        assert_eq!(newline(b"\n"), Some(0));
        let mut long = vec![b'x'; 5000];
        long[4099] = b'\n';
        long[4500] = b'\n';
        assert_eq!(newline(&long), Some(4099));
        assert_eq!(newline(&long[4100..]), Some(400));
    }

    #[test]
    fn answers_are_written_byte_for_byte_as_serde_writes_them() {
        let tricky = "quote \" backslash \\ newline \n tab \t cr \r bell \u{7} nul \u{0} \
                      esc \u{1b} del \u{7f} slash / é ✓ 𝄞 \u{8}\u{c}";
        let bodies = [
            json!({"success": true, "message": "ok", "data": {"n": 1, "s": tricky}}),
            json!({"success": false, "message": tricky, "error": {"code": "VALIDATION_ERROR"}}),
            json!({"success": true, "data": {"list": [tricky.repeat(40), "x".repeat(7), ""]}}),
            json!({}),
        ];
        let ids = [
            NumberOrString::Number(7),
            NumberOrString::String("a\"b".into()),
        ];
        for body in &bodies {
            for id in &ids {
                for failed in [false, true] {
                    let text = serde_json::to_string(body).unwrap();
                    let mut msg = answer(text.clone(), body.clone(), failed, id.clone());
                    for kind in [None, Some(ResultType::COMPLETE)] {
                        if let JsonRpcMessage::Response(r) = &mut msg {
                            if let ServerResult::CallToolResult(c) = &mut r.result {
                                c.result_type = kind;
                            }
                        }
                        let mut ours = Vec::new();
                        assert!(write_answer(&mut ours, &msg));
                        let serde = serde_json::to_vec(&msg).unwrap();
                        assert_eq!(
                            String::from_utf8(ours).unwrap(),
                            String::from_utf8(serde).unwrap()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn other_messages_are_left_to_serde() {
        // Text that is not the structured copy's JSON: two content blocks.
        let mut r = CallToolResult::success(vec![ContentBlock::text("a"), ContentBlock::text("b")]);
        r.structured_content = Some(json!({}));
        let msg = JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: Default::default(),
            id: NumberOrString::Number(1),
            result: ServerResult::CallToolResult(r),
        });
        assert!(!write_answer(&mut Vec::new(), &msg));
        let msg = ServerJsonRpcMessage::error(ErrorData::invalid_request("x", None), None);
        assert!(!write_answer(&mut Vec::new(), &msg));
    }

    fn parsed(line: &str) -> Parsed {
        parse(line.as_bytes())
    }

    #[test]
    fn a_plain_tool_call_reads_as_rmcp_reads_it() {
        for line in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,{"b":"\u00e9\n"}]}}}"#,
            r#"{"id":"x","method":"tools/call","jsonrpc":"2.0","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"progressToken":1}}}"#,
            r#"{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"t","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#,
        ] {
            let Parsed::Message(ours) = parsed(line) else {
                panic!("not read: {line}")
            };
            let theirs: ClientJsonRpcMessage = serde_json::from_str(line).unwrap();
            assert_eq!(format!("{ours:?}"), format!("{theirs:?}"), "{line}");
        }
    }

    #[test]
    fn what_cannot_be_read_is_skipped_or_answered() {
        assert!(matches!(parsed(""), Parsed::Skip));
        assert!(matches!(parsed("not json"), Parsed::Skip));
        // JSON that is no message: answered unless it is a notification.
        assert!(matches!(parsed(r#"{"jsonrpc":"2.0","x":1}"#), Parsed::Skip));
        assert!(matches!(
            parsed(r#"{"jsonrpc":"2.0","id":1,"x":1}"#),
            Parsed::Invalid
        ));
        assert!(matches!(parsed("[1,2]"), Parsed::Invalid));
    }
}
