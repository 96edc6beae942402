//! What Cairn checks of a PostgreSQL URL before sqlx's driver reads it: that every
//! parameter is one the driver reads. The driver ignores any other with a warning
//! that prints its value (a mistyped `pasword=` is a password), on every new
//! connection; refused here, by name, it never reaches the driver.

/// The URL parameters sqlx's PostgreSQL driver reads (`PgConnectOptions`'s parser).
const PG_PARAMETERS: &[&str] = &[
    "sslmode",
    "ssl-mode",
    "sslrootcert",
    "ssl-root-cert",
    "ssl-ca",
    "sslcert",
    "ssl-cert",
    "sslkey",
    "ssl-key",
    "statement-cache-capacity",
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "application_name",
    "options",
];

/// Refuses a URL parameter the driver does not know, naming it, before the driver
/// reads the URL: it would ignore it with a warning that prints its value (a
/// mistyped `pasword=` is a password), and on every new connection.
pub(super) fn known_parameters(url: &str) -> std::result::Result<(), String> {
    let Some((_, query)) = url.split_once('?') else {
        return Ok(());
    };
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let key = pair.split_once('=').map_or(pair, |(k, _)| k);
        let key = percent_decoded(key);
        let known = PG_PARAMETERS.contains(&key.as_str())
            || (key.starts_with("options[") && key.ends_with(']'));
        if !known {
            let shown: String = key.chars().take(40).collect();
            return Err(format!(
                "has the parameter `{shown}`, which Cairn's PostgreSQL driver does not read; \
                 known: {}, options[NAME]",
                PG_PARAMETERS.join(", ")
            ));
        }
    }
    Ok(())
}

/// A query key as the driver reads it: `+` is a space, `%XX` a byte.
fn percent_decoded(s: &str) -> String {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let escaped = match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => Some(hi << 4 | lo),
            _ => None,
        };
        match escaped {
            Some(x) => {
                out.push(x);
                i += 3;
            }
            None => {
                out.push(if b[i] == b'+' { b' ' } else { b[i] });
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_parameter_the_driver_ignores_is_refused_without_its_value() {
        for ok in [
            "postgres://u:pw@h/db",
            "postgres://u@h/db?sslmode=require&application_name=cairn",
            "postgres://u@h/db?options%5Bsearch_path%5D=x&password=p&host=%2Frun",
        ] {
            assert_eq!(known_parameters(ok), Ok(()), "{ok}");
        }
        let e =
            known_parameters("postgres://u@h/db?sslmode=disable&pasword=s3cr%C3%A9t").unwrap_err();
        assert!(e.contains("`pasword`") && !e.contains("s3cr"), "{e}");
        assert_eq!(percent_decoded("a%2Bb+c%zz%4"), "a+b c%zz%4");
    }
}
