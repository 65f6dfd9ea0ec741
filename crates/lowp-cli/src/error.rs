//! Errors the tool reports: one line on stderr and an exit code.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::fmt;

/// Exit code of a usage error (a bad flag, format name or value), as clap uses.
pub const USAGE: i32 = 2;

/// Exit code of a failure to read or write a file, or of a file whose contents are malformed.
pub const IO: i32 = 1;

/// Exit code of a run stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report it).
pub const INTERRUPTED: i32 = 130;

/// An error that ends the program with a one-line message.
#[derive(Debug)]
pub struct CliError {
    /// The message, without the `error: ` prefix or a newline.
    pub message: String,
    /// The process exit code.
    pub code: i32,
}

impl CliError {
    /// A usage error (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: USAGE,
        }
    }

    /// A failure to read or write a file, or a malformed file (exit code 1).
    pub fn failure(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: IO,
        }
    }

    /// Turns clap's error for a bad option value into one line naming the valid choices.
    /// Returns `None` for the other errors (and for `--help`), which clap prints itself.
    pub fn from_clap(err: &clap::Error) -> Option<Self> {
        let text = |kind| match err.get(kind) {
            Some(ContextValue::String(s)) => Some(s.clone()),
            _ => None,
        };
        match err.kind() {
            ErrorKind::InvalidValue => {
                let value = text(ContextKind::InvalidValue).unwrap_or_default();
                let arg = text(ContextKind::InvalidArg).unwrap_or_default();
                let valid = match err.get(ContextKind::ValidValue) {
                    Some(ContextValue::Strings(v)) => v.join(", "),
                    _ => String::new(),
                };
                if valid.is_empty() {
                    // clap's path parser refuses an empty path without a list of choices.
                    return Some(CliError::usage(if value.is_empty() {
                        format!("{arg} is empty: give a file or directory name")
                    } else {
                        format!("invalid value '{value}' for {arg}")
                    }));
                }
                Some(CliError::usage(format!(
                    "invalid value '{value}' for '{arg}'; valid values: {valid}"
                )))
            }
            ErrorKind::ValueValidation => {
                let value = text(ContextKind::InvalidValue).unwrap_or_default();
                let arg = text(ContextKind::InvalidArg).unwrap_or_default();
                let why = std::error::Error::source(err)
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "invalid value".to_string());
                Some(CliError::usage(format!(
                    "invalid value '{value}' for '{arg}': {why}"
                )))
            }
            _ => None,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

impl From<lowp_fs::Error> for CliError {
    /// A refused output path (an input, a device, a directory, an empty name) is a usage
    /// error (2); a file system that refused (no permission) a failure (1).
    fn from(err: lowp_fs::Error) -> Self {
        match err {
            lowp_fs::Error::Invalid(m) => CliError::usage(m),
            lowp_fs::Error::Io(m) => CliError::failure(m),
        }
    }
}

impl From<lowp_analysis::Error> for CliError {
    /// Invalid requests are usage errors (2), failures I/O errors (1), a cancelled run an
    /// interruption (130).
    fn from(err: lowp_analysis::Error) -> Self {
        let code = match err {
            lowp_analysis::Error::Invalid(_) => USAGE,
            lowp_analysis::Error::Failure(_) => IO,
            lowp_analysis::Error::Cancelled => INTERRUPTED,
        };
        CliError {
            message: err.to_string(),
            code,
        }
    }
}

impl From<lowp_bench::Error> for CliError {
    /// Invalid requests are usage errors (2), failures I/O errors (1), a cancelled run an
    /// interruption (130).
    fn from(err: lowp_bench::Error) -> Self {
        let code = match err {
            lowp_bench::Error::Invalid(_) => USAGE,
            lowp_bench::Error::Failure(_) => IO,
            lowp_bench::Error::Cancelled => INTERRUPTED,
        };
        CliError {
            message: err.to_string(),
            code,
        }
    }
}
