//! Exchanges (`exchanges`, `externalExchanges`, `hostExchanges`), indexed by exchange id then tile.

use crate::counts::Counts;
use crate::record::record;

record! {
    /// Internal exchanges (`exchanges`), which `DoExchange` programs refer to. Their cycles are
    /// known exactly, as they are scheduled statically.
    pub struct Exchanges / ExchangesFields {
        /// `bytesReceivedByTile[exchange][tile]`.
        "bytesReceivedByTile" => bytes_received_by_tile: req Vec<Counts>,
        /// `bytesSentByTile[exchange][tile]`.
        "bytesSentByTile" => bytes_sent_by_tile: req Vec<Counts>,
        /// `codeBytesByTile[exchange][tile]` (not in the format's documentation; seen in Graphcore's code).
        "codeBytesByTile" => code_bytes_by_tile: opt Vec<Counts>,
        /// `cyclesByTile[exchange][tile]`.
        "cyclesByTile" => cycles_by_tile: req Vec<Counts>,
    }
}

impl Exchanges {
    /// The number of exchanges.
    pub fn len(&self) -> usize {
        self.cycles_by_tile.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

record! {
    /// IPU-to-IPU exchanges (`externalExchanges`), which `GlobalExchange` programs refer to.
    pub struct ExternalExchanges / ExternalExchangesFields {
        /// `bytesReceivedByTile[exchange][tile]`.
        "bytesReceivedByTile" => bytes_received_by_tile: req Vec<Counts>,
        /// `bytesSentByTile[exchange][tile]`.
        "bytesSentByTile" => bytes_sent_by_tile: req Vec<Counts>,
        /// `estimatedCyclesByTile[exchange][tile]`.
        "estimatedCyclesByTile" => estimated_cycles_by_tile: req Vec<Counts>,
    }
}

record! {
    /// Exchanges between host and IPU (`hostExchanges`), which `StreamCopy` programs refer to.
    pub struct HostExchanges / HostExchangesFields {
        /// `bytesReceivedByTile[exchange][tile]`.
        "bytesReceivedByTile" => bytes_received_by_tile: req Vec<Counts>,
        /// `bytesSentByTile[exchange][tile]`.
        "bytesSentByTile" => bytes_sent_by_tile: req Vec<Counts>,
        /// `estimatedCyclesByTile[exchange][tile]`.
        "estimatedCyclesByTile" => estimated_cycles_by_tile: req Vec<Counts>,
    }
}

macro_rules! estimated_len {
    ($($ty:ident),*) => {$(
        impl $ty {
            /// The number of exchanges.
            pub fn len(&self) -> usize {
                self.estimated_cycles_by_tile.len()
            }

            /// Whether there are none.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }
    )*};
}

estimated_len!(ExternalExchanges, HostExchanges);
