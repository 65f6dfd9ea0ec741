//! The one error type of the crate: every message names the file, the tensor or the option
//! involved, so a user can see what to fix.

/// Why a conversion did not happen. Nothing was written in every case: the output is a
/// temporary file until the very end, and it is removed on any error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The request cannot be carried out as asked: an unknown type name, IN and OUT the same
    /// file, OUT of another kind of file than IN, a type NumPy files cannot hold. A command
    /// line reports this as a usage error.
    #[error("{0}")]
    Invalid(String),
    /// A file could not be read or written, or its contents are malformed (a truncated file,
    /// a header that lies about offsets or shapes, a bad archive).
    #[error("{0}")]
    File(String),
    /// The cancel flag was set; the conversion stopped between two blocks.
    #[error("interrupted; nothing was written")]
    Cancelled,
}

impl Error {
    /// An [`Error::Invalid`] with this message.
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::Invalid(message.into())
    }

    /// An [`Error::File`] with this message.
    pub fn file(message: impl Into<String>) -> Error {
        Error::File(message.into())
    }

    /// The error of a refused output path: an invalid request ([`Error::Invalid`]), or a file
    /// system that refused ([`Error::File`]). A function, not a `From` impl, so that `?` on
    /// the crate's own errors keeps inferring its types.
    pub fn from_fs(e: lowp_fs::Error) -> Error {
        match e {
            lowp_fs::Error::Invalid(m) => Error::Invalid(m),
            lowp_fs::Error::Io(m) => Error::File(m),
        }
    }

    /// The error with `what: ` in front of its message (the tensor it concerns).
    pub fn about(self, what: &str) -> Error {
        match self {
            Error::Invalid(m) => Error::Invalid(format!("{what}: {m}")),
            Error::File(m) => Error::File(format!("{what}: {m}")),
            Error::Cancelled => Error::Cancelled,
        }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
