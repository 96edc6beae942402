//! The ontology's pure core: Logseq pages holding an `### OntologyBlock`, the EL
//! axioms they state, OWL functional syntax in and out, the EL reasoner with its
//! explanations, the quality score of a page, and unified diffs. No SQL, no MCP, no
//! files, no clock: callers hand in text and values and get values back.
//!
//! Reading order: [`page`] (the document), [`expr`] (Manchester-style class
//! expressions), [`entity`] (what a block's properties mean), [`axiom`] and [`model`]
//! (the [`Ontology`] value, built from pages and written back as pages),
//! [`prefixes`], [`ofn`],
//! [`reasoner`], [`quality`], [`draft`] (pages for proposals), [`diff`]; [`records`]
//! holds what the store keeps of a synced ontology and its proposals.
//!
//! # Pages
//!
//! A page is a Logseq markdown file: a top bullet with the preferred term, then
//! `  - ### OntologyBlock` and under it one `- key:: value` line per property.
//! Unknown properties stay in the page in their order, and every line outside the
//! block's properties (prose bullets, `id::` lines, notes under a property) is kept
//! verbatim, so writing back a page that was read changes only what was edited.
//! A file without the block is an ordinary Logseq page and is skipped.
//!
//! The block names one entity: `owl:class:: ai:VisionTransformer`,
//! `owl:objectProperty:: core:hasPart` or `owl:individual:: ai:GPT4`. IRIs are
//! written `prefix:LocalName` (the prefix is the page's domain), or `<full IRI>`.
//!
//! The prefix map ([`prefixes`]): a line `prefix:: ex: <http://example.org/bakery#>`
//! in any page's block declares what `ex:` stands for (`prefix:: : <...>` the empty
//! prefix); an import writes the prefixes of its document on the page `Prefixes`,
//! a page naming no entity. The first declaration of a prefix (by file, then line)
//! wins; one giving it another namespace, or `owl:` and the other standard prefixes
//! another than theirs, is a problem with its line. A prefix nothing declares stands
//! for `urn:cairn:<prefix>:`.
//!
//! Class pages carry their metadata (docs/ontology.md; `term-id`, `preferred-term`,
//! `source-domain`, `status`, `public-access`, `last-updated`, `definition`,
//! `owl:physicality`, `owl:role`, `quality-score`, `authority-score`, `maturity`,
//! `alt-terms`) and state axioms with:
//!
//! | property | meaning for the page's class `C` |
//! |---|---|
//! | `is-subclass-of:: [[A]], [[B]]` | `C SubClassOf A`, `C SubClassOf B` |
//! | `has-part:: [[X]]` | `C SubClassOf core:hasPart some X` |
//! | `requires::`, `enables::`, `bridges-to::`, `relates-to::` | the same with `core:requires`, `core:enables`, `core:bridgesTo`, `core:relatesTo` |
//! | `owl:subClassOf:: ai:processes some [[Image Data]]` | `C SubClassOf` a class expression |
//! | `owl:equivalentClass:: [[Model]] and (ai:processes some [[Image Data]])` | `EquivalentClasses(C X)` |
//! | `owl:disjointWith:: [[A]], [[B]]` | `DisjointClasses(C A)`, `DisjointClasses(C B)` |
//! | `owl:axiom:: [[A]] and [[B]] SubClassOf [[D]]` | a general axiom; also `EquivalentTo`, `DisjointWith` |
//! | `owl:axiom:: core:hasPart SubPropertyOf core:relatesTo` | an axiom about a property, on any page: also `p o q SubPropertyOf r`, `p Domain X`, `p Range X`, `p Characteristics Transitive` (or `Reflexive`) |
//! | `owl:axiom:: ai:GPT4 Types [[Model]]`, `owl:axiom:: ai:GPT4 Facts ai:developedBy ai:OpenAI` | an assertion about an individual, on any page |
//!
//! Values are comma-separated lists (commas inside `[[...]]` or parentheses do not
//! separate). A class expression is Manchester style: `A and B`, `p some C`
//! (`some` binds tighter than `and`), parentheses, `owl:Thing`, `owl:Nothing`, names
//! as IRIs or wiki links. `owl:axiom::` holds one axiom per line and may appear on any
//! page; Cairn writes there the axioms whose left side is not a named class, and a
//! proposal the axioms about other entities than its page's (the property or
//! individual named must have a page of its own).
//!
//! The five relationship keys stand for shared properties in the `core:` namespace,
//! not per-domain ones, so `has part` means one thing across `ai`, `bc` and `mv` (its
//! transitivity, chains and super-properties apply everywhere). They exist without
//! pages, in expressions too (`owl:subClassOf:: core:hasPart some [[Lid]]` on a page
//! of a repository where no page uses a relationship key); a page
//! `owl:objectProperty:: core:hasPart` adds to them.
//!
//! The built-in properties `owl:topObjectProperty` (relating every pair of things)
//! and `owl:bottomObjectProperty` (relating nothing) need no page either and have
//! none: `owl:topObjectProperty some [[Flour]] SubClassOf [[Bakery]]` makes every
//! class a `Bakery` once some flour must exist, `owl:bottomObjectProperty some X`
//! and `p some X` for a `p` with `sub-property-of:: owl:bottomObjectProperty` are
//! unsatisfiable. `owl:topObjectProperty` below another property or inside a chain
//! is refused as outside what the reasoner supports.
//!
//! Object property pages: `sub-property-of:: [[relates to]]`, `transitive:: true`,
//! `reflexive:: true`, `domain:: [[Machine Learning Model]]`, `range:: [[Data
//! Modality]]` (class expressions), `property-chain:: [[has part]] o [[requires]]`
//! (meaning `has part o requires SubPropertyOf` the page's property; several chains
//! comma-separated).
//!
//! Individual pages: `rdf:type:: [[Large Language Model]]` (class expressions),
//! relationship keys (`has-part:: [[X]]` is a property assertion when `X` is an
//! individual, else the class assertion `core:hasPart some X`), and
//! `owl:facts:: ai:developedBy [[OpenAI]], ...` for other properties.
//!
//! # Names
//!
//! Reading a page leaves names as written; [`model::load_pages`] resolves them across
//! all pages. A wiki link `[[X]]` resolves, in order, to the entity whose IRI is
//! exactly `X` (`[[ai:VisionTransformer]]`), to the page whose name is `X` (its file
//! name, compared ignoring case, as Logseq does: `Vision Transformer.md`, with `/`
//! written `___`), then to the page whose preferred term or title is `X`. A bare IRI
//! must be declared by some page (the shared relationship properties need none). A
//! name that resolves nowhere, to two pages, or to the wrong kind of entity is
//! reported with its file and line, and that value is skipped; a page that does not
//! parse is reported with its line and the rest are imported.
//! [`Ontology::page_axioms`] resolves one page (a proposal's) against an ontology
//! already loaded, the same way, without reading the other pages again.
//!
//! # OWL functional syntax
//!
//! [`ofn::read_ofn`] then [`Ontology::to_pages`] imports a document; the metadata
//! maps to `rdfs:label` (preferred term), `skos:altLabel`, `skos:definition`,
//! `rdfs:comment`, and `cairn:pageProperty "key:: value"` for the rest.
//! [`ofn::write_ofn`] exports, with the prefix map. Constructs outside the subset are
//! reported with their line. [`ofn::read_ofn_in`] reads a document against a
//! repository's map: its names keep the map's prefixes, and a prefix the document
//! gives another namespace is not used (its IRIs are written in full).
//!
//! # The crate
//! `cairn-owl` is one of Cairn's three pure cores (with `cairn-cypher` and
//! `cairn-memory`): it depends on no other crate of Cairn, reads no file and runs no
//! process (the `tidy` test in `tests/it/tidy.rs` keeps it so). Cairn re-exports it as
//! `cairn::domain::ontology`. Entry points: [`load_pages`] (pages in, an
//! [`Ontology`] and its [`Problem`]s out; [`load::read_page`] and [`load::load_read`]
//! its two steps), [`ofn::read_ofn`] and [`ofn::write_ofn`],
//! [`classify`] and the reasoner's explanations, [`quality`], [`draft`] and [`diff`].
//! Its unit tests (`cargo test -p cairn-owl`) include the fixture ontology under the
//! repository's `fixtures/ontology/` and, as a dev-dependency only, `horned-owl`
//! reading what it exports.

#![deny(unsafe_code)]

pub mod axiom;
pub mod diff;
pub mod draft;
pub mod entity;
pub mod expr;
#[cfg(test)]
mod fixture_tests;
#[cfg(test)]
mod fuzz_tests;
pub mod load;
pub mod model;
pub mod ofn;
pub mod page;
pub mod prefixes;
pub mod quality;
pub mod reasoner;
pub mod records;

pub use axiom::{Axiom, EntityKind, Iri, Origin, Sourced};
pub use expr::ClassExpr;
pub use model::{load_pages, Entity, Loaded, Ontology, Problem};
pub use page::Page;
pub use reasoner::{
    classify, diff as classification_diff, Classification, ClassificationDiff, Justification,
    Subsumption,
};
