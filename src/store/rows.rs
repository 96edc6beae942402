//! Rows read into structs by their columns' names: what sqlx's `FromRow` derive would
//! write, said once by hand so the build needs no sqlx proc-macro (with its own copy
//! of sqlx and SQLite compiled for the host, on a cold install's critical path).

/// `from_row!(Row { id, name, is_enabled: flag, kind: col "type" })` implements
/// `sqlx::FromRow` for `AnyRow`: each field read from the column of its name, a
/// `flag` through [`crate::store::Flag`] (a 0/1 integer or a boolean, as either
/// database answers it), a `col` from the column named. A field missing from the list,
/// or one the struct lacks, is a compile error, so the list cannot drift from the struct.
macro_rules! from_row {
    ($name:ident { $($field:ident $(: $how:ident $($col:literal)?)?),* $(,)? }) => {
        impl<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> for $name {
            fn from_row(row: &'r sqlx::any::AnyRow) -> std::result::Result<Self, sqlx::Error> {
                use sqlx::Row as _;
                Ok(Self {
                    $($field: $crate::store::from_row!(@get row, $field $(, $how $($col)?)?),)*
                })
            }
        }
    };
    (@get $row:ident, $field:ident) => {
        $row.try_get(stringify!($field))?
    };
    (@get $row:ident, $field:ident, flag) => {
        bool::from($row.try_get::<$crate::store::Flag, _>(stringify!($field))?)
    };
    (@get $row:ident, $field:ident, col $col:literal) => {
        $row.try_get($col)?
    };
}

pub(crate) use from_row;
