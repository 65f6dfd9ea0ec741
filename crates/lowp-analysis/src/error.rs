//! The one error type of the library.

/// Why an analysis or a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is invalid: an unknown format or function name, a value that cannot be
    /// read, a size out of range. A command line reports it as a usage error.
    #[error("{0}")]
    Invalid(String),
    /// A failure while computing or writing: a file that cannot be written, a picture that
    /// cannot be drawn.
    #[error("{0}")]
    Failure(String),
    /// The caller set the cancel flag; nothing was written.
    #[error("interrupted; nothing was written")]
    Cancelled,
}

impl From<lowp_fs::Error> for Error {
    /// A refused output path is an invalid request; a file system that refused, a failure.
    fn from(e: lowp_fs::Error) -> Error {
        match e {
            lowp_fs::Error::Invalid(m) => Error::Invalid(m),
            lowp_fs::Error::Io(m) => Error::Failure(m),
        }
    }
}

impl Error {
    /// An [`Error::Invalid`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid(message.into())
    }

    /// An [`Error::Invalid`] for a format none of lowp's types has (one built by hand rather
    /// than looked up).
    pub fn no_type(format: &lowp::Format) -> Self {
        Error::invalid(format!("no number type has the format {}", format.name))
    }

    /// An [`Error::Failure`].
    pub fn failure(message: impl Into<String>) -> Self {
        Error::Failure(message.into())
    }
}

/// The library's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
