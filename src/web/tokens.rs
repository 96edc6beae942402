//! The tokens file: several named agents' tokens, each kept as its SHA-256 only, so
//! the file never holds a token anyone could present (README, "Named agents").
//!
//! One agent a line, three fields apart by spaces or tabs; blank lines and lines
//! starting with `#` are skipped:
//!
//! ```text
//! # NAME ROLE sha256:HEX
//! reviewer read sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//! ```
//!
//! NAME is 1 to 64 letters, digits, `.`, `_` or `-`, unique in the file; ROLE is
//! `write` or `read`; HEX the 64 lowercase hex digits of the token's SHA-256, unique
//! too. A line that is none of these stops the server at start, naming the line and
//! never quoting it (a token pasted by mistake stays out of the logs). Minted tokens
//! are 32 random bytes in hex: a fast hash of that much randomness cannot be
//! reversed, so no slow password hash is needed.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::service::agent::{self, Agent, Role};

/// One agent of the file: who, and the hash its token must have.
#[derive(Clone)]
pub struct NamedToken {
    pub agent: Agent,
    pub hash: [u8; 32],
}

impl std::fmt::Debug for NamedToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NamedToken({}, {})", self.agent.name, self.agent.role)
    }
}

/// The first line of a file `cairn token add` creates.
const HEADER: &str =
    "# Cairn's named agents (cairn serve --http --tokens-file): NAME ROLE sha256:HEX, one a line\n";

/// The longest file read: far more agents than a team has.
const MAX_BYTES: u64 = 1 << 20;

/// SHA-256 of `token`.
pub fn digest(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// The agents `text` lists; `source` names the file in messages.
pub fn parse(text: &str, source: &str) -> Result<Vec<NamedToken>, String> {
    let mut out: Vec<NamedToken> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let at = |why: String| format!("{source}, line {n}: {why}");
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, role, hash] = fields[..] else {
            let hint = if fields.len() == 1 && !line.starts_with("sha256:") {
                " (a raw token belongs in --token-file; this file lists hashes: cairn token add NAME --role ROLE --file PATH)"
            } else {
                ""
            };
            return Err(at(format!(
                "expected NAME ROLE sha256:HEX, found {} field{}{hint}",
                fields.len(),
                if fields.len() == 1 { "" } else { "s" }
            )));
        };
        if !agent::valid_name(name) {
            return Err(at(format!(
                "the name is not 1 to {} letters, digits, '.', '_' or '-'",
                agent::MAX_NAME
            )));
        }
        let role = Role::parse(role)
            .ok_or_else(|| at("the role is neither write nor read".to_string()))?;
        let hash = hash
            .strip_prefix("sha256:")
            .and_then(unhex)
            .ok_or_else(|| {
                at("the hash is not sha256: followed by 64 lowercase hex digits".to_string())
            })?;
        if out.iter().any(|t| &*t.agent.name == name) {
            return Err(at(format!("the name {name} is listed twice")));
        }
        if out.iter().any(|t| t.hash == hash) {
            return Err(at(format!(
                "{name}'s hash is another agent's: mint each agent its own token"
            )));
        }
        out.push(NamedToken {
            agent: Agent {
                name: Arc::from(name),
                role,
            },
            hash,
        });
    }
    Ok(out)
}

/// The agents of the file at `path`; a file listing none is refused too.
pub fn read(path: &Path) -> Result<Vec<NamedToken>, String> {
    let source = format!("the tokens file {}", path.display());
    let text = read_text(path, &source)?;
    let list = parse(&text, &source)?;
    warn_if_writable_by_others(path);
    if list.is_empty() {
        return Err(format!(
            "{source} lists no agent: add one with cairn token add NAME --role write --file {}",
            path.display()
        ));
    }
    Ok(list)
}

fn read_text(path: &Path, source: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {source}: {e}"))?;
    if meta.len() > MAX_BYTES {
        return Err(format!(
            "{source} is over {MAX_BYTES} bytes: it is not a tokens file"
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {source}: {e}"))
}

/// The hashes are no secret, but whoever may write the file may add an agent.
#[cfg(unix)]
fn warn_if_writable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::metadata(path) {
        if m.permissions().mode() & 0o022 != 0 {
            tracing::warn!(
                file = %path.display(),
                "the tokens file can be written by other users, who could add an agent; chmod 600 it"
            );
        }
    }
}

#[cfg(not(unix))]
fn warn_if_writable_by_others(_path: &Path) {}

/// A new token: `cairn_` and 32 random bytes in hex.
pub fn mint() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("cannot draw a random token: {e}"))?;
    Ok(format!("cairn_{}", hex(&bytes)))
}

/// The line that lists `agent` with `token`'s hash.
pub fn line(name: &str, role: Role, token: &str) -> String {
    format!("{name} {role} sha256:{}\n", hex(&digest(token.as_bytes())))
}

/// Mints a token for a new agent, appends its line to `path` (created, readable by
/// its owner only, when missing) and answers the token, which is nowhere else.
pub fn add(path: &Path, name: &str, role: Role) -> Result<String, String> {
    if !agent::valid_name(name) {
        return Err(format!(
            "the agent's name must be 1 to {} letters, digits, '.', '_' or '-'",
            agent::MAX_NAME
        ));
    }
    let source = format!("the tokens file {}", path.display());
    let existing = match std::fs::symlink_metadata(path) {
        Ok(_) => Some(read_text(path, &source)?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {source}: {e}")),
    };
    if let Some(text) = &existing {
        // A file the server would refuse is not added to: it is fixed first.
        let list = parse(text, &source)?;
        if list.iter().any(|t| &*t.agent.name == name) {
            return Err(format!(
                "{source} lists {name} already: choose another name, or delete its line first"
            ));
        }
    }
    let token = mint()?;
    let mut text = String::new();
    match &existing {
        None => text.push_str(HEADER),
        Some(t) if !t.is_empty() && !t.ends_with('\n') => text.push('\n'),
        Some(_) => {}
    }
    text.push_str(&line(name, role, &token));
    let mut f = open_for_append(path, existing.is_none())
        .map_err(|e| format!("cannot write {source}: {e}"))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("cannot write {source}: {e}"))?;
    Ok(token)
}

#[cfg(unix)]
fn open_for_append(path: &Path, new: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.append(true).mode(0o600);
    if new {
        o.create_new(true);
    }
    o.open(path)
}

#[cfg(not(unix))]
fn open_for_append(path: &Path, new: bool) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.append(true);
    if new {
        o.create_new(true);
    }
    o.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_and_bad_ones_are_named_by_number() {
        let h = hex(&digest(b"x"));
        let ok = format!("# c\n\nci write sha256:{h}\n");
        let list = parse(&ok, "f").unwrap();
        assert_eq!(&*list[0].agent.name, "ci");
        assert_eq!(list[0].hash, digest(b"x"));
        for (text, why) in [
            ("# c\nci write\n".to_string(), "line 2: expected"),
            (format!("ci admin sha256:{h}\n"), "line 1: the role"),
            (format!("c!i read sha256:{h}\n"), "line 1: the name"),
            (format!("ci read sha256:{}\n", &h[1..]), "line 1: the hash"),
            (format!("ci read {h}\n"), "line 1: the hash"),
            (
                format!(
                    "ci read sha256:{h}\nci write sha256:{}\n",
                    hex(&digest(b"y"))
                ),
                "line 2: the name ci",
            ),
            (
                format!("a read sha256:{h}\nb write sha256:{h}\n"),
                "line 2: b's hash",
            ),
            ("cairn_0123456789abcdef0123\n".to_string(), "raw token"),
        ] {
            let e = parse(&text, "f").unwrap_err();
            assert!(e.contains(why), "{e}");
            assert!(!e.contains("0123456789abcdef"), "{e}");
        }
    }

    #[test]
    fn a_minted_token_is_found_by_its_line() {
        let t = mint().unwrap();
        assert!(t.len() > 64 && t.chars().all(super::super::auth::token_char));
        let list = parse(&line("bot", Role::Read, &t), "f").unwrap();
        assert_eq!(list[0].hash, digest(t.as_bytes()));
        assert!(!line("bot", Role::Read, &t).contains(&t));
    }
}
