//! One SQL text for both databases. The repositories write SQLite's dialect with
//! `?` parameters; on PostgreSQL every statement is rewritten on its way to the
//! server by [`postgres`], in one place, so a statement is read and reviewed once.
//! What the rewrite cannot cover (full-text ranking, an upsert's conflict target) is
//! written twice where it is used, chosen by `Conn::pg`; the functions
//! SQLite has and PostgreSQL lacks (`instr`, `json_group_array`) are defined by
//! PostgreSQL's schema.

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use sqlx::any::{AnyQueryResult, AnyRow, AnyStatement, AnyTypeInfo, AnyValueRef};
use sqlx::Either;
use sqlx::{Any, AnyConnection, Decode, Encode, Execute, Executor, SqlStr, Type};

use super::Backend;

/// A connection as a repository's statement runs on it.
///
/// Optional floats: sqlx's `Any` driver sends a NULL `Option<f64>` to PostgreSQL as
/// a `float4` parameter, and PostgreSQL's statement cache, keyed by the SQL text,
/// would then refuse the same statement's later `float8` value. A statement that
/// binds an `Option<f64>` therefore runs unprepared (`.persistent(false)`).
#[derive(Debug)]
pub struct Db<'c> {
    conn: &'c mut AnyConnection,
    backend: Backend,
}

impl<'c> Db<'c> {
    pub(super) fn new(conn: &'c mut AnyConnection, backend: Backend) -> Db<'c> {
        Db { conn, backend }
    }
}

/// The statement `query` holds, rewritten for PostgreSQL, with its arguments.
fn rewritten<'q, E: Execute<'q, Any>>(
    mut query: E,
) -> Result<sqlx::query::Query<'q, Any, sqlx::any::AnyArguments>, sqlx::Error> {
    let args = query.take_arguments().map_err(sqlx::Error::Encode)?;
    let persistent = query.persistent();
    let sql = postgres(query.sql().as_str());
    let q = match args {
        Some(a) => sqlx::query_with(sqlx::AssertSqlSafe(sql), a),
        None => sqlx::query(sqlx::AssertSqlSafe(sql)),
    };
    Ok(q.persistent(persistent))
}

impl<'c> Executor<'c> for Db<'c> {
    type Database = Any;

    fn fetch_many<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxStream<'e, Result<Either<AnyQueryResult, AnyRow>, sqlx::Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self.backend {
            Backend::Sqlite => self.conn.fetch_many(query),
            Backend::Postgres { .. } => match rewritten(query) {
                Ok(q) => self.conn.fetch_many(q),
                Err(e) => futures::stream::once(async { Err(e) }).boxed(),
            },
        }
    }

    fn fetch_optional<'e, 'q: 'e, E>(
        self,
        query: E,
    ) -> BoxFuture<'e, Result<Option<AnyRow>, sqlx::Error>>
    where
        'c: 'e,
        E: 'q + Execute<'q, Any>,
    {
        match self.backend {
            Backend::Sqlite => self.conn.fetch_optional(query),
            Backend::Postgres { .. } => match rewritten(query) {
                Ok(q) => self.conn.fetch_optional(q),
                Err(e) => async { Err(e) }.boxed(),
            },
        }
    }

    fn prepare_with<'e>(
        self,
        sql: SqlStr,
        parameters: &'e [AnyTypeInfo],
    ) -> BoxFuture<'e, Result<AnyStatement, sqlx::Error>>
    where
        'c: 'e,
    {
        let sql = in_dialect(self.backend, sql);
        self.conn.prepare_with(sql, parameters)
    }
}

/// `sql` as `backend` reads it.
fn in_dialect(backend: Backend, sql: SqlStr) -> SqlStr {
    match backend {
        Backend::Sqlite => sql,
        Backend::Postgres { .. } => {
            sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe(postgres(sql.as_str())))
        }
    }
}

/// `sql`, written for SQLite, as PostgreSQL reads it:
///
/// - parameters `?` and `?NNN` become `$n` (numbered as SQLite numbers them: a bare
///   `?` takes one more than the largest number so far);
/// - `LIKE` becomes `ILIKE`: SQLite's `LIKE` ignores case, PostgreSQL's does not.
///
/// Quoted strings and identifiers and `--` comments are copied unchanged. (What
/// both read alike is written so in the repositories: `ON CONFLICT DO NOTHING`
/// rather than SQLite's `INSERT OR IGNORE`, `IS DISTINCT FROM` rather than `IS
/// NOT ?`.)
pub fn postgres(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut chars = sql.char_indices().peekable();
    let mut largest = 0u32;
    let mut quote: Option<char> = None;
    while let Some((i, ch)) = chars.next() {
        if let Some(q) = quote {
            out.push(ch);
            if ch == q {
                quote = None;
            }
            continue;
        }
        match ch {
            '-' if sql[i..].starts_with("--") => {
                quote = Some('\n');
                out.push(ch);
            }
            '\'' | '"' => {
                quote = Some(ch);
                out.push(ch);
            }
            '?' => {
                let mut n = 0u32;
                let mut digits = false;
                while let Some(&(_, d)) = chars.peek() {
                    match d.to_digit(10) {
                        Some(v) => {
                            n = n * 10 + v;
                            digits = true;
                            chars.next();
                        }
                        None => break,
                    }
                }
                let n = if digits { n } else { largest + 1 };
                largest = largest.max(n);
                out.push('$');
                out.push_str(&n.to_string());
            }
            'L' if sql[i..].starts_with("LIKE ")
                && out.ends_with(|c: char| c.is_ascii_whitespace()) =>
            {
                out.push_str("ILIKE");
                for _ in 0..3 {
                    chars.next();
                }
            }
            _ => out.push(ch),
        }
    }
    out
}

/// A 0/1 flag as either database stores it: SQLite's integers, and PostgreSQL's
/// `BIGINT` flags and `boolean` expressions (`EXISTS …`). Binds as an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flag(pub bool);

impl From<Flag> for bool {
    fn from(f: Flag) -> bool {
        f.0
    }
}

impl Type<Any> for Flag {
    fn type_info() -> AnyTypeInfo {
        <i64 as Type<Any>>::type_info()
    }

    fn compatible(ty: &AnyTypeInfo) -> bool {
        <i64 as Type<Any>>::compatible(ty) || <bool as Type<Any>>::compatible(ty)
    }
}

impl<'r> Decode<'r, Any> for Flag {
    fn decode(value: AnyValueRef<'r>) -> Result<Flag, sqlx::error::BoxDynError> {
        match <i64 as Decode<Any>>::decode(value.clone()) {
            Ok(i) => Ok(Flag(i != 0)),
            Err(_) => Ok(Flag(<bool as Decode<Any>>::decode(value)?)),
        }
    }
}

impl Encode<'_, Any> for Flag {
    fn encode_by_ref(
        &self,
        buf: &mut <Any as sqlx::Database>::ArgumentBuffer,
    ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        <i64 as Encode<Any>>::encode_by_ref(&i64::from(self.0), buf)
    }
}

#[cfg(test)]
mod tests {
    use super::postgres;

    #[test]
    fn parameters_are_numbered_as_sqlite_numbers_them() {
        assert_eq!(
            postgres("SELECT a FROM t WHERE b = ? AND c = ?"),
            "SELECT a FROM t WHERE b = $1 AND c = $2"
        );
        assert_eq!(
            postgres("WHERE x > ?1 AND x <= ?2 OR y = ?1"),
            "WHERE x > $1 AND x <= $2 OR y = $1"
        );
        assert_eq!(postgres("VALUES (?2, ?)"), "VALUES ($2, $3)");
    }

    #[test]
    fn quoted_text_is_left_alone() {
        assert_eq!(
            postgres("SELECT '?', \"a?\" FROM t WHERE n LIKE ? ESCAPE '\\'"),
            "SELECT '?', \"a?\" FROM t WHERE n ILIKE $1 ESCAPE '\\'"
        );
    }

    #[test]
    fn only_the_like_operator_and_nothing_in_comments_is_rewritten() {
        assert_eq!(
            postgres("SELECT 1 WHERE nameLIKE"),
            "SELECT 1 WHERE nameLIKE"
        );
        assert_eq!(
            postgres("SELECT a -- what's LIKE ?\nFROM t WHERE b LIKE ?"),
            "SELECT a -- what's LIKE ?\nFROM t WHERE b ILIKE $1"
        );
    }
}
