//! The error the reader raises while it reads, turned into the crate's [`Error`] with its place.

use std::fmt;

use serde::de::{self};

use crate::error::{Error, Location};

/// What kind of error a [`DeError`] is, before it becomes an [`Error`].
#[derive(Debug)]
pub(super) enum Kind {
    Syntax,
    Eof,
    Schema,
    Limit { what: String, limit: u64 },
    Io(std::io::Error),
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) kind: Kind,
    pub(super) reason: String,
    pub(super) location: Option<Location>,
}

/// The error type of the deserializer (what visitors see): boxed so that results stay small on
/// the hot path. [`Reader::read_document`](super::Reader::read_document) turns it into an [`Error`]; [`DeError::into_error`]
/// does so for errors taken from the deserializer directly.
#[derive(Debug)]
pub struct DeError(pub(super) Box<Inner>);

impl DeError {
    pub(super) fn new(kind: Kind, reason: impl Into<String>, location: Option<Location>) -> Self {
        DeError(Box::new(Inner {
            kind,
            reason: reason.into(),
            location,
        }))
    }

    /// The error, with its location.
    pub fn into_error(self) -> Error {
        let Inner {
            kind,
            reason,
            location,
        } = *self.0;
        let location = location.unwrap_or_default();
        match kind {
            Kind::Syntax => Error::Syntax { location, reason },
            Kind::Eof => Error::Truncated { location },
            Kind::Schema => Error::Schema { location, reason },
            Kind::Limit { what, limit } => Error::Limit {
                location,
                what,
                limit,
            },
            Kind::Io(e) => Error::Io(e),
        }
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0.location {
            Some(location) => write!(f, "{location}: {}", self.0.reason),
            None => f.write_str(&self.0.reason),
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError::new(Kind::Schema, msg.to_string(), None)
    }
}
