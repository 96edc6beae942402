//! A caller's text as error messages show it: shortened, and a row's name quoted.

/// Shortens a caller's text for an error message.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let head: String = s.chars().take(max).collect();
        format!("{head}…")
    }
}

/// `"Write the parser" ` for a named row, nothing for an unnamed one.
pub fn quoted(name: &Option<String>) -> String {
    match name {
        Some(n) => format!("\"{}\" ", clip(n, 60)),
        None => String::new(),
    }
}
