//! The skills in `skills/`, embedded in the binary and served as MCP prompts, so an
//! agent connected to Cairn can fetch the discovery, planning, execution and curator
//! loops without a copy of the repository; and, with the memory toolset, the
//! reflection prompt (`cairn-reflection`), rendered from the diary when asked for.

use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};

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
    Skill {
        file: "curator.md",
        text: include_str!("../../skills/curator.md"),
    },
];

/// The reflection prompt's name: the reflection instruction (docs/memory.md) over
/// chosen diary entries.
pub const REFLECTION: &str = "cairn-reflection";

fn reflection() -> Prompt {
    let arg = |n: &str, d: &str| PromptArgument::new(n).with_description(d);
    Prompt::new(
        REFLECTION,
        Some("Turn session diary entries into proposed rules (answer with the JSON array, then manage_diary ingest)"),
        Some(vec![
            arg("ids", "Diary entry ids, comma-separated (default: the newest entries)"),
            arg("session", "Only entries of this session"),
            arg("limit", "How many of the newest entries, default 10"),
        ]),
    )
}

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

/// The prompts served: every skill, and the reflection prompt when the memory
/// toolset is.
pub fn list(memory: bool) -> Vec<Prompt> {
    let mut out: Vec<Prompt> = SKILLS
        .iter()
        .map(|s| Prompt::new(s.name(), Some(s.description()), None))
        .collect();
    if memory {
        out.push(reflection());
    }
    out
}

/// A rendered prompt as the protocol answers it.
pub fn text_result(text: String, description: &str) -> GetPromptResult {
    GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
        .with_description(description)
}

pub fn get(name: &str) -> Option<GetPromptResult> {
    let s = SKILLS.iter().find(|s| s.name() == name)?;
    Some(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, s.body())])
            .with_description(s.description()),
    )
}
