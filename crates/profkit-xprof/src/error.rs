//! The one error type of this crate.

/// A failure to read an XSpace or to write what is made of it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading the XSpace failed (with its byte offset and field path).
    #[error(transparent)]
    Xspace(#[from] profkit_xplane::Error),
    /// A tool of xprof's that reads one host was given the spaces of another number of hosts.
    #[error("xprof's {tool} tool reads the XSpace of one host, not {hosts}")]
    Hosts {
        /// The tool, by xprof's name.
        tool: &'static str,
        /// How many spaces it was given.
        hosts: usize,
    },
    /// A value nests deeper than a tool's output may (a tree printed recursively).
    #[error("{what} nests {depth} levels deep, deeper than the {max} levels {tool} allows")]
    TooDeep {
        /// The tool, by xprof's name.
        tool: &'static str,
        /// What nests (an op's name, a provenance).
        what: String,
        /// How deep it nests.
        depth: usize,
        /// The deepest allowed.
        max: usize,
    },
    /// The memory viewer cannot be computed: the module is not in the profile, or its heap
    /// simulator trace cannot be replayed (xprof's message).
    #[error("memory viewer: {0}")]
    MemoryViewer(String),
    /// Writing the output (or reading the input) failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
