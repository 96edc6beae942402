//! Sections (titled blocks of content on a container) and templates that stamp them.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentFormat {
    PlainText,
    Markdown,
    Json,
    Code,
}

impl ContentFormat {
    pub const NAMES: [&'static str; 4] = ["PLAIN_TEXT", "MARKDOWN", "JSON", "CODE"];
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "PLAIN_TEXT" => Some(Self::PlainText),
            "MARKDOWN" => Some(Self::Markdown),
            "JSON" => Some(Self::Json),
            "CODE" => Some(Self::Code),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

#[derive(Debug, Clone)]
pub struct Section {
    pub id: String,
    /// PROJECT, FEATURE or TASK.
    pub entity_type: String,
    pub entity_id: String,
    pub title: String,
    pub usage_description: String,
    pub content: String,
    pub content_format: String,
    pub ordinal: i64,
    pub tags: Vec<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone)]
pub struct Template {
    pub id: String,
    pub name: String,
    pub description: String,
    pub target_entity_type: String,
    pub is_built_in: bool,
    pub is_protected: bool,
    pub is_enabled: bool,
    pub created_by: Option<String>,
    pub tags: Vec<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone)]
pub struct TemplateSection {
    pub id: String,
    pub template_id: String,
    pub title: String,
    pub usage_description: String,
    pub content_sample: String,
    pub content_format: String,
    pub is_required: bool,
    pub ordinal: i64,
}
/// Which templates a listing keeps; `None` and empty keep all.
#[derive(Debug, Default)]
pub struct TemplateFilter<'a> {
    pub target: Option<&'a str>,
    pub built_in: Option<bool>,
    pub enabled: Option<bool>,
    pub tags: &'a [String],
}
