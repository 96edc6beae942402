//! What the command writes for a person: stdout that tolerates a closed reader,
//! stderr with any URL's password masked, panics and log lines masked alike.

use std::io::Write;

/// Writes `text` and a newline to stdout. A reader that closed its end early
/// (`cairn tools | head -1`) chose to stop reading: that is not an error, so the
/// command goes on as if the text had been read and exits with the status it would
/// have had. (Rust ignores SIGPIPE, so the write fails with EPIPE instead of killing
/// the process; `println!` would panic on it.) Any other failure is an error.
pub fn print_out(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    let written = out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("cannot write to stdout: {e}"))
        }
        _ => Ok(()),
    }
}

/// Tells the person at the shell `message` on stderr, any URL's password masked. A
/// stderr nobody reads any more is no reason to fail (`eprintln!` would panic).
pub fn say(message: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "cairn: {}",
        crate::redact::text(message)
    );
}

/// stderr for the logs: each write (one formatted event) with any URL's password
/// masked ([`crate::redact::text`]).
pub struct Redacted;

impl Write for Redacted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr()
            .lock()
            .write_all(crate::redact::text(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// A panic whose message holds a URL's password is printed masked; any other goes
/// to the default hook (backtraces and all).
pub fn redact_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let masked = crate::redact::text(&message);
        if masked == message {
            default(info);
        } else {
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            say(&format!("panicked{at}: {masked}"));
        }
    }));
}
