//! The one error type of the library.

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is invalid: nothing to measure, a conversion path this CPU cannot run. A
    /// command line reports it as a usage error.
    #[error("{0}")]
    Invalid(String),
    /// A failure while measuring: a file that cannot be written or read, a thread pool that
    /// cannot start.
    #[error("{0}")]
    Failure(String),
    /// The caller set the cancel flag; the benchmark's files are removed.
    #[error("interrupted; nothing was written")]
    Cancelled,
}

impl From<lowp_io::Error> for Error {
    /// A conversion that cannot be described is invalid; a file that cannot be read or
    /// written, a failure.
    fn from(e: lowp_io::Error) -> Error {
        match e {
            lowp_io::Error::Invalid(m) => Error::Invalid(m),
            lowp_io::Error::File(m) => Error::Failure(m),
            lowp_io::Error::Cancelled => Error::Cancelled,
        }
    }
}

impl From<lowp_tensor::Error> for Error {
    /// The tensor layer refusing an op it was given is a failure of the benchmark.
    fn from(e: lowp_tensor::Error) -> Error {
        Error::Failure(e.to_string())
    }
}

/// The library's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
