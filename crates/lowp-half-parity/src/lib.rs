//! Parity with the `half` crate, kept checked: one set of cases of half 2.7's public API
//! (`cases/`), written from half's documentation, compiled twice. `tests/with_half.rs` runs
//! them against `half` itself, which proves each case states what half does;
//! `tests/with_lowp.rs` runs the same text with `half` renamed to `lowp`, which proves that a
//! program switching crates by renaming builds and behaves the same.
//!
//! Where lowp answers differently on purpose (it rounds once where half rounds through f32, and
//! prints the shortest decimal that reads back where half prints the f32), a case says both
//! answers with `differs(half, lowp)`, and `docs/migrating-from-half.md` lists every such case.
//! The crate has no code of its own.
