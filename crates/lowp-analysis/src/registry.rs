//! Formats by name, for command lines and Python: [`lookup`] with an error that lists the
//! valid names, and [`names`] for help texts. The formats themselves are [`lowp::Format`]s, whose
//! own methods (`from_f64`, `to_f64`, `next_up`, `classify`, `display`, `parse`, the
//! constants) every analysis calls.

use crate::error::Error;
use lowp::Format;

/// Every format, in the order `lowp formats` lists them ([`Format::ALL`]).
pub fn all() -> impl Iterator<Item = &'static Format> {
    Format::ALL.iter()
}

/// The valid format names, comma separated, for help texts and error messages.
pub fn names() -> String {
    all().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// Looks a format up by any name lowp accepts (`f16`, `float16`, `bfloat16`, ml_dtypes' names).
pub fn lookup(name: &str) -> Result<&'static Format, Error> {
    Format::from_name(name)
        .ok()
        .and_then(|f| all().find(|g| **g == f))
        .ok_or_else(|| {
            Error::invalid(format!(
                "unknown format '{name}'; valid formats: {} (ml_dtypes names such as float8_e4m3fn also work)",
                names()
            ))
        })
}

/// The formats asked for without repeats, or every format when none was named.
pub fn formats_or_all(asked: &[&'static Format]) -> Vec<&'static Format> {
    if asked.is_empty() {
        return all().collect();
    }
    let mut seen: Vec<&'static Format> = Vec::new();
    for &f in asked {
        if !seen.contains(&f) {
            seen.push(f);
        }
    }
    seen
}
