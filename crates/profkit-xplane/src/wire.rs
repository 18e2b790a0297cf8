//! The XSpace schema, for the protobuf wire walk of `profkit-wire`, and located errors.
//!
//! Decoding goes through the views of [`crate::xview`], which follow the walk's rules. When a view
//! finds a fault, [`locate`] walks the same bytes with the schema below to say exactly where the
//! encoding first breaks: the byte offset and the path down to the repeated element
//! (`XSpace.planes[0].lines[2].events[5].stats[1]`). The walk is stricter than prost in two places
//! (map tags must be length-delimited, where prost takes any wire type as a length and misreads
//! `20 00` as an entry `0 => {}`; groups in unknown fields nest at most [`MAX_GROUP_DEPTH`] deep,
//! where prost follows them to its recursion limit), so every reader refuses those inputs alike.

use profkit_wire::Fault;
#[cfg(doc)]
use profkit_wire::locate;

use crate::error::Error;

/// Groups in unknown fields may nest; deeper than this is refused rather than followed.
pub(crate) const MAX_GROUP_DEPTH: u32 = 64;

profkit_wire::schema! {
    pub(crate) enum Msg {
        Space { 1 planes: [Plane], 2 errors: [string], 3 warnings: [string], 4 hostnames: [string] }
        Plane {
            1 id: varint, 2 name: string, 3 lines: [Line], 4 event_metadata: [EventMetadataEntry],
            5 stat_metadata: [StatMetadataEntry], 6 stats: [Stat],
        }
        Line {
            1 id: varint, 10 display_id: varint, 2 name: string, 11 display_name: string,
            3 timestamp_ns: varint, 9 duration_ps: varint, 4 events: [Event],
        }
        Event {
            1 metadata_id: varint, 2 offset_ps: varint, 5 num_occurrences: varint,
            3 duration_ps: varint, 4 stats: [Stat],
        }
        Stat {
            1 metadata_id: varint, 2 double_value: fixed64, 3 uint64_value: varint,
            4 int64_value: varint, 5 str_value: string, 6 bytes_value: bytes, 7 ref_value: varint,
        }
        EventMetadata {
            1 id: varint, 2 name: string, 4 display_name: string, 3 metadata: bytes,
            5 stats: [Stat], 6 child_id: [varints],
        }
        StatMetadata { 1 id: varint, 2 name: string, 3 description: string }
        EventMetadataEntry { 1 key: varint, 2 value: EventMetadata }
        StatMetadataEntry { 1 key: varint, 2 value: StatMetadata }
    }
    impl {
        const MAX_GROUP_DEPTH: u32 = MAX_GROUP_DEPTH;
    }
}

profkit_wire::fault_error!(Error);

/// This crate's error for a fault the walk or a streaming read found.
pub(crate) fn error(fault: Fault) -> Error {
    <Error as profkit_wire::FaultError>::from_fault(fault)
}
