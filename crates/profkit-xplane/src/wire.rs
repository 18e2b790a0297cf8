//! The XSpace schema, for the protobuf wire walk of `profkit-wire`, and located errors.
//!
//! Decoding goes through the views of [`crate::xview`], which follow the walk's rules. When a view
//! finds a fault, [`locate`] walks the same bytes with the schema below to say exactly where the
//! encoding first breaks: the byte offset and the path down to the repeated element
//! (`XSpace.planes[0].lines[2].events[5].stats[1]`). The walk is stricter than prost in two places
//! (map tags must be length-delimited, where prost takes any wire type as a length and misreads
//! `20 00` as an entry `0 => {}`; groups in unknown fields nest at most [`MAX_GROUP_DEPTH`] deep,
//! where prost follows them to its recursion limit), so every reader refuses those inputs alike.

#[cfg(doc)]
use profkit_wire::locate;
use profkit_wire::{Fault, Field, Kind, Schema};

use crate::error::Error;

/// Groups in unknown fields may nest; deeper than this is refused rather than followed.
pub(crate) const MAX_GROUP_DEPTH: u32 = 64;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Msg {
    Space,
    Plane,
    Line,
    Event,
    Stat,
    EventMetadata,
    StatMetadata,
    EventMetadataEntry,
    StatMetadataEntry,
}

impl Schema for Msg {
    const MAX_GROUP_DEPTH: u32 = MAX_GROUP_DEPTH;

    fn field(self, number: u64) -> Option<Field<Msg>> {
        use Kind::{Bytes, Fixed64, Str, Varint, Varints};
        let m = Kind::Message;
        let row = match (self, number) {
            (Msg::Space, 1) => ("planes", m(Msg::Plane), true),
            (Msg::Space, 2) => ("errors", Str, true),
            (Msg::Space, 3) => ("warnings", Str, true),
            (Msg::Space, 4) => ("hostnames", Str, true),
            (Msg::Plane, 1) => ("id", Varint, false),
            (Msg::Plane, 2) => ("name", Str, false),
            (Msg::Plane, 3) => ("lines", m(Msg::Line), true),
            (Msg::Plane, 4) => ("event_metadata", m(Msg::EventMetadataEntry), true),
            (Msg::Plane, 5) => ("stat_metadata", m(Msg::StatMetadataEntry), true),
            (Msg::Plane, 6) => ("stats", m(Msg::Stat), true),
            (Msg::EventMetadataEntry, 1) | (Msg::StatMetadataEntry, 1) => ("key", Varint, false),
            (Msg::EventMetadataEntry, 2) => ("value", m(Msg::EventMetadata), false),
            (Msg::StatMetadataEntry, 2) => ("value", m(Msg::StatMetadata), false),
            (Msg::Line, 1) => ("id", Varint, false),
            (Msg::Line, 10) => ("display_id", Varint, false),
            (Msg::Line, 2) => ("name", Str, false),
            (Msg::Line, 11) => ("display_name", Str, false),
            (Msg::Line, 3) => ("timestamp_ns", Varint, false),
            (Msg::Line, 9) => ("duration_ps", Varint, false),
            (Msg::Line, 4) => ("events", m(Msg::Event), true),
            (Msg::Event, 1) => ("metadata_id", Varint, false),
            (Msg::Event, 2) => ("offset_ps", Varint, false),
            (Msg::Event, 5) => ("num_occurrences", Varint, false),
            (Msg::Event, 3) => ("duration_ps", Varint, false),
            (Msg::Event, 4) => ("stats", m(Msg::Stat), true),
            (Msg::Stat, 1) => ("metadata_id", Varint, false),
            (Msg::Stat, 2) => ("double_value", Fixed64, false),
            (Msg::Stat, 3) => ("uint64_value", Varint, false),
            (Msg::Stat, 4) => ("int64_value", Varint, false),
            (Msg::Stat, 5) => ("str_value", Str, false),
            (Msg::Stat, 6) => ("bytes_value", Bytes, false),
            (Msg::Stat, 7) => ("ref_value", Varint, false),
            (Msg::EventMetadata, 1) => ("id", Varint, false),
            (Msg::EventMetadata, 2) => ("name", Str, false),
            (Msg::EventMetadata, 4) => ("display_name", Str, false),
            (Msg::EventMetadata, 3) => ("metadata", Bytes, false),
            (Msg::EventMetadata, 5) => ("stats", m(Msg::Stat), true),
            (Msg::EventMetadata, 6) => ("child_id", Varints, true),
            (Msg::StatMetadata, 1) => ("id", Varint, false),
            (Msg::StatMetadata, 2) => ("name", Str, false),
            (Msg::StatMetadata, 3) => ("description", Str, false),
            _ => return None,
        };
        Some(row.into())
    }
}

profkit_wire::fault_error!(Error);

/// This crate's error for a fault the walk or a streaming read found.
pub(crate) fn error(fault: Fault) -> Error {
    <Error as profkit_wire::FaultError>::from_fault(fault)
}
