//! The alive memory's pure core: subjects, memory atoms (statements about subjects,
//! not the knowledge graph's glob atoms), evidence, and every rule of their life,
//! as functions over plain values. The service loads rows, calls these functions and
//! writes what they decided; nothing here reads a clock, a file or a database.
//!
//! In reading order:
//! - `wire`: enum spellings parsed forgivingly, UUID ids, RFC 3339 times;
//! - `model`: subjects, atoms (one struct of fields per type), references, diary
//!   entries, edges, statuses, and the two time axes (`believed_at`, `holds_at`);
//! - `raw`: unchecked input values and a JSON text reader with positions;
//! - `validate`: input fields into typed values, or every error by wire field name;
//! - `claim`: claim keys and the normal forms of predicates, values and statements;
//! - `evidence`: the strength of each kind of reference;
//! - `promotion`: DRAFT → PROPOSED → ACTIVE, and accepting a Decision;
//! - `change`: actions (a reason and the exact writes) every rule answers with;
//! - `collision`: the deterministic rule when atoms claim one key;
//! - `decay`: review intervals and confidence decay per type; validation;
//! - `identity`: when two subjects are one, and the merge plan;
//! - `curator`: the whole deterministic pass, its dry run and its replay;
//! - `recall`: ranking for an asking project, time filters, token budget, usage facts;
//! - `reflection`: the reflection prompt, its answer's reader, and the validator gate.
//!
//! # The crate
//! `cairn-memory` is one of Cairn's three pure cores (with `cairn-owl` and
//! `cairn-cypher`): it depends on no other crate of Cairn (the `tidy` test in
//! `tests/it/tidy.rs` keeps it so), only on `time`. Cairn re-exports it as
//! `cairn::domain::memory`; the service loads rows into these values and writes the
//! [`change::Change`]s they answer. Entry points: [`validate`] (input fields into an
//! atom, or every error by field), [`collision`], [`curator::plan`] and
//! [`curator::apply`], [`recall::rank`], [`reflection`]. Its unit tests run with
//! `cargo test -p cairn-memory`.

#![deny(unsafe_code)]

pub mod change;
pub mod claim;
pub mod collision;
pub mod curator;
pub mod decay;
pub mod evidence;
pub mod identity;
pub mod keys;
pub mod model;
pub mod promotion;
pub mod raw;
pub mod recall;
pub mod reflection;
pub mod validate;
pub mod wire;
