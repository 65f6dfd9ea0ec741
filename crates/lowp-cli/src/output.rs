//! The shared rendering of `lowp-analysis`, and writing the result to stdout.

pub use lowp_analysis::output::*;

use crate::error::{self, CliError};
use std::io::{self, Write};

/// Writes the output to stdout. A closed pipe (`lowp formats | head -1`) ends quietly.
pub fn emit(text: &str) -> Result<(), CliError> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError {
            message: format!("cannot write the output: {e}"),
            code: error::IO,
        }),
    }
}
