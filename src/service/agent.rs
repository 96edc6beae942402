//! Who a call comes from: the name and role of the named HTTP token it carried
//! (README, "Named agents"). Over stdio, or with the single token, a call has no
//! agent and every row is written as it always was. This module knows no HTTP and
//! no token: `web` finds the agent, `mcp` refuses a reader's writes, and the use
//! cases record the name as who wrote a row.

use std::sync::Arc;

/// What an agent's token lets it do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Every tool.
    Write,
    /// The tools that only read; a writing call is refused before it runs.
    Read,
}

impl Role {
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "write" => Some(Role::Write),
            "read" => Some(Role::Read),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Write => "write",
            Role::Read => "read",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A named agent: its token's name (letters, digits, `.`, `_`, `-`; checked when
/// the tokens file is read) and role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    pub name: Arc<str>,
    pub role: Role,
}

/// The longest name an agent may have: it is written into rows as their author.
pub const MAX_NAME: usize = 64;

/// Whether `name` may name an agent: 1 to [`MAX_NAME`] letters, digits, `.`, `_`
/// or `-`, so it reads the same in a row, a page and a log line.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}
