//! `cairn tools` and `cairn help TOOL`: the served tools, or what one does.

use std::process::ExitCode;

use super::output::{print_out, say};
use crate::config::Config;
use crate::mcp::Registry;

/// `cairn tools`: the served tools, a line each, by toolset; `cairn tools NAME` (and
/// `cairn call NAME --help`): what that tool does and its parameters.
pub fn tools(config: &Config, reg: &Registry, name: Option<&str>) -> Result<ExitCode, String> {
    let Some(name) = name else {
        let mut text = String::new();
        for (set, _) in crate::mcp::TOOLSET_PURPOSES
            .iter()
            .filter(|(s, _)| config.toolsets.iter().any(|t| t == s))
        {
            text.push_str(&format!("[{set}]\n"));
            for d in reg.defs.iter().filter(|d| d.toolset == *set) {
                let first = d
                    .description
                    .split(". ")
                    .next()
                    .unwrap_or(d.description)
                    .trim_end_matches('.');
                text.push_str(&format!("  {:<22} {first}\n", d.name));
            }
        }
        print_out(text.trim_end())?;
        return Ok(ExitCode::SUCCESS);
    };
    if let Some(def) = reg.find(name) {
        print_out(crate::mcp::help::describe(def).trim_end())?;
        return Ok(ExitCode::SUCCESS);
    }
    let shown: String = name.chars().take(80).collect();
    // A tool this build has, in a toolset the configuration leaves out.
    let all: Vec<String> = crate::config::TOOLSETS
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(def) = Registry::new(&all).find(name) {
        say(&format!(
            "tool '{shown}' is in the {} toolset, which is not served here (toolsets: {}); \
             add it with --toolsets or `toolsets` in the config file",
            def.toolset,
            config.toolsets.join(",")
        ));
        return Ok(ExitCode::from(2));
    }
    let names: Vec<&str> = reg.defs.iter().map(|d| d.name).collect();
    let close = crate::mcp::help::close_names(name, &names);
    if close.is_empty() {
        say(&format!(
            "no tool named '{shown}'; `cairn tools` lists them"
        ));
    } else {
        say(&format!(
            "no tool named '{shown}'; close names: {}",
            close.join(", ")
        ));
    }
    Ok(ExitCode::from(2))
}
