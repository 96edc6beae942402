//! The skills in `skills/`, embedded in the binary and served as MCP prompts, so an
//! agent connected to Cairn can fetch the discovery, planning and execution loops
//! without a copy of the repository.

use rmcp::model::{GetPromptResult, Prompt, PromptMessage, Role};

/// A skill file: front matter with `name` and `description`, then markdown.
pub struct Skill {
    pub file: &'static str,
    pub text: &'static str,
}

pub const SKILLS: &[Skill] = &[
    Skill {
        file: "discovery.md",
        text: include_str!("../../skills/discovery.md"),
    },
    Skill {
        file: "planning.md",
        text: include_str!("../../skills/planning.md"),
    },
    Skill {
        file: "execution.md",
        text: include_str!("../../skills/execution.md"),
    },
];

impl Skill {
    fn front(&self, key: &str) -> Option<&'static str> {
        let rest = self.text.strip_prefix("---\n")?;
        let end = rest.find("\n---")?;
        rest[..end].lines().find_map(|l| {
            l.strip_prefix(key)
                .and_then(|v| v.strip_prefix(':'))
                .map(str::trim)
        })
    }

    pub fn name(&self) -> &'static str {
        self.front("name").unwrap_or(self.file)
    }

    pub fn description(&self) -> &'static str {
        self.front("description").unwrap_or("")
    }

    /// The markdown after the front matter.
    pub fn body(&self) -> &'static str {
        self.text
            .strip_prefix("---\n")
            .and_then(|r| r.find("\n---\n").map(|i| &r[i + 5..]))
            .unwrap_or(self.text)
            .trim_start()
    }
}

pub fn list() -> Vec<Prompt> {
    SKILLS
        .iter()
        .map(|s| Prompt::new(s.name(), Some(s.description()), None))
        .collect()
}

pub fn get(name: &str) -> Option<GetPromptResult> {
    let s = SKILLS.iter().find(|s| s.name() == name)?;
    Some(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, s.body())])
            .with_description(s.description()),
    )
}
