//! The stdio transport's two ends. When stdin and stdout are pipes (as an MCP client
//! starts a server) they are read and written through the runtime's event loop;
//! tokio's own stdin and stdout hand every read and write to a blocking thread, a
//! thread switch per message that costs more than most tool calls. Anything else (a
//! terminal, a file) falls back to tokio's stdio.

use std::os::fd::AsFd;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

pub type Reader = Pin<Box<dyn AsyncRead + Send>>;
pub type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// Must be called inside the runtime (the pipe ends register with its reactor).
pub fn transport() -> (Reader, Writer) {
    let pipes = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd)
        .and_then(|r| {
            std::io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .and_then(pipe::Sender::from_owned_fd)
                .map(|w| (r, w))
        });
    match pipes {
        Ok((r, w)) => (Box::pin(r), Box::pin(w)),
        Err(e) => {
            tracing::debug!(error = %e, "stdio is not a pair of pipes; using blocking stdio");
            (Box::pin(tokio::io::stdin()), Box::pin(tokio::io::stdout()))
        }
    }
}
