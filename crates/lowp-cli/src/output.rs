//! The shared rendering of `lowp-analysis`, and writing the result to stdout.

pub use lowp_analysis::output::*;

use crate::error::{self, CliError};
pub use lowp_fs::Expect;
use lowp_fs::Named;
use std::io::{self, Write};
use std::path::Path;

/// Checks, before any work, every output of a command against its inputs and each other
/// (see [`lowp_fs::check_paths`]): each output is given as (option name, path, what it is
/// to be), each input as (argument name, path). Outputs that are `None` (options not given)
/// are skipped. A clash, a device, FIFO or socket, a directory where a file is expected or an
/// empty name is a usage error (2); an unwritable place a failure (1).
pub fn check_outputs(
    inputs: &[(&str, &Path)],
    outputs: &[(&str, Option<&Path>, Expect)],
) -> Result<(), CliError> {
    let inputs: Vec<Named<'_>> = inputs.iter().map(|&(n, p)| Named::new(n, p)).collect();
    let outputs: Vec<(Named<'_>, Expect)> = outputs
        .iter()
        .filter_map(|&(n, p, e)| Some((Named::new(n, p?), e)))
        .collect();
    Ok(lowp_fs::check_paths(&inputs, &outputs)?)
}

/// [`check_outputs`] of a command that reads no file and writes at most the file `json`
/// (`--json`).
pub fn check_json(json: Option<&Path>) -> Result<(), CliError> {
    check_outputs(&[], &[("--json", json, Expect::File)])
}

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
