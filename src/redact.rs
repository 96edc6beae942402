//! Passwords out of printed text. A database URL may carry one
//! (`postgres://user:PASSWORD@host/db`, or a `password=` parameter); every message,
//! log line and config error that may hold such a URL goes through this module
//! before it is printed or answered, and `main` runs [`text`] over every line it
//! writes to stderr (its own messages, the logs, a panic's message) as the last net.
//!
//! It knows no URL syntax beyond what finding a password needs, and nothing of
//! where the text goes.

use std::borrow::Cow;

/// What a password is replaced by.
pub const MASK: &str = "***";

/// `db` (a `--db` value, a whole URL or a path) as it may be printed: the password
/// of a URL of any scheme (`scheme://user:PASSWORD@…`, up to the URL's last `@`, so
/// that a `/`, `?` or `@` nobody escaped stays inside it: when in doubt, more is
/// masked, never less) and the value of any parameter that names a secret
/// (`password=`, a mistyped `pasword=`, `token=`…) replaced by [`MASK`]. A path
/// without either is returned unchanged.
pub fn url(db: &str) -> String {
    let Some(scheme_end) = db.find("://").map(|i| i + 3) else {
        return params(db).into_owned();
    };
    let userinfo = db[scheme_end..]
        .rfind('@')
        .map(|at| scheme_end + at)
        .and_then(|at| db[scheme_end..at].find(':').map(|c| (scheme_end + c, at)));
    match userinfo {
        Some((colon, at)) => format!("{}{MASK}{}", &db[..colon + 1], params(&db[at..])),
        None => params(db).into_owned(),
    }
}

/// `text` (a message, a log line) with the password of every URL in it replaced,
/// and every value of a key naming a secret: each run of characters between whitespace that holds
/// `://` is read as one URL ([`url`]).
pub fn text(text: &str) -> Cow<'_, str> {
    if !text.contains("://") && !contains_password_key(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, tail) = rest.split_at(end);
        if word.contains("://") {
            out.push_str(&url(word));
        } else {
            out.push_str(&params(word));
        }
        let sep = tail.chars().next().map_or(0, char::len_utf8);
        out.push_str(&tail[..sep]);
        rest = &tail[sep..];
    }
    Cow::Owned(out)
}

/// Whether `text` may hold a `key=value` whose value is a secret.
fn contains_password_key(text: &str) -> bool {
    text.contains('=') && {
        let lower = text.to_ascii_lowercase();
        SECRET_KEYS.iter().any(|k| lower.contains(k))
    }
}

/// A key naming a secret holds one of these: `password`, and the ways people
/// mistype or shorten it (`pasword`, `passwd`, `pwd`), `PGPASSWORD`, `secret`, `token`.
const SECRET_KEYS: &[&str] = &["pass", "pasw", "pwd", "secret", "token"];

/// Every value of a key that names a secret ([`SECRET_KEYS`]), up to the next `&`,
/// `;`, `#` or the end, replaced.
fn params(s: &str) -> Cow<'_, str> {
    if !contains_password_key(s) {
        return Cow::Borrowed(s);
    }
    let key_char = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.');
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0;
    let mut i = 0;
    while let Some(eq) = s[i..].find('=').map(|e| i + e) {
        let start = b[..eq]
            .iter()
            .rposition(|c| !key_char(*c))
            .map_or(0, |p| p + 1);
        let key = s[start..eq].to_ascii_lowercase();
        let end = s[eq + 1..]
            .find(['&', ';', '#'])
            .map_or(s.len(), |e| eq + 1 + e);
        if end > eq + 1 && SECRET_KEYS.iter().any(|k| key.contains(k)) {
            out.push_str(&s[copied..=eq]);
            out.push_str(MASK);
            copied = end;
        }
        i = end.max(eq + 1);
    }
    out.push_str(&s[copied..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_urls_password_is_masked_whatever_the_scheme() {
        assert_eq!(
            url("postgres://u:pw@h/db?host=/s"),
            "postgres://u:***@h/db?host=/s"
        );
        assert_eq!(
            url("postgres://u@h/db?sslmode=require&password=pw"),
            "postgres://u@h/db?sslmode=require&password=***"
        );
        assert_eq!(url("postgres://u:p/w@d@h:5/db"), "postgres://u:***@h:5/db");
        assert_eq!(url("postgres://u:p?w@h/db"), "postgres://u:***@h/db");
        // An `@` in the query: more is masked, the password with it.
        assert_eq!(
            url("postgres://u:pw@h/db?application_name=a@b"),
            "postgres://u:***@b"
        );
        assert_eq!(url("postgres://u@h:5432/db"), "postgres://u@h:5432/db");
        // A mistyped scheme is still a URL with a password in it.
        assert_eq!(url("postgress://u:pw@h/db"), "postgress://u:***@h/db");
        assert_eq!(url("postgres://h/db"), "postgres://h/db");
        assert_eq!(url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(url("/srv/cairn.db"), "/srv/cairn.db");
        assert_eq!(url("/srv/PassWord=x.db"), "/srv/PassWord=***");
        assert_eq!(
            url("postgres://h/db?sslmode=require&pasword=pw&passwd=pw#x"),
            "postgres://h/db?sslmode=require&pasword=***&passwd=***#x"
        );
        assert_eq!(
            url("postgres://h/db?a=&password="),
            "postgres://h/db?a=&password="
        );
    }

    #[test]
    fn urls_in_running_text_lose_their_passwords() {
        let t = "cannot open \"postgres://cairn:hunter2@db:5432/x?password=two&a=1\": refused; \
                 also (mysql://root:toor@h) and PGPASSWORD=three done";
        let r = text(t);
        for secret in ["hunter2", "two", "toor", "three"] {
            assert!(!r.contains(secret), "{r}");
        }
        assert!(
            r.contains("\"postgres://cairn:***@db:5432/x?password=***&a=1\""),
            "{r}"
        );
        assert!(r.ends_with("PGPASSWORD=*** done"), "{r}");
        assert!(matches!(text("nothing here"), Cow::Borrowed(_)));
        assert_eq!(
            text("a https://example.org/x b"),
            "a https://example.org/x b"
        );
        assert_eq!(text("é postgres://u:é@h é"), "é postgres://u:***@h é");
    }
}
