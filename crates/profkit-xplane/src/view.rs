//! The canonical JSON view of an XSpace: every field of the decoded message, in schema order,
//! with a fixed layout so that equal spaces print equal text.
//!
//! - Every scalar field is written, zero or not, so a reader sees the whole message.
//! - Metadata maps are JSON objects keyed by the decimal map key, in ascending numeric order;
//!   the key is kept apart from the `id` inside the value, so a mismatch stays visible.
//! - A set oneof member is written under its own field name (`"offset_ps"`, `"int64_value"`, ...);
//!   an unset one is absent. That is how a zero that is set differs from no value.
//! - 64-bit integers are JSON numbers (exact: the view never goes through `f64`). Doubles are
//!   numbers, except NaN and the infinities, written as the strings `"NaN"`, `"Infinity"`,
//!   `"-Infinity"`. Bytes are standard base64 strings.
//!
//! [`from_json`] reads the same layout back, so a case can be written by hand as JSON and encoded.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::proto::{
    XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, x_event, x_stat,
};

/// The JSON layout of [`XSpace`].
#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct SpaceView {
    #[serde(default)]
    pub planes: Vec<PlaneView>,
    #[serde(default)]
    pub errors: Vec<String>,
    #[serde(default)]
    pub warnings: Vec<String>,
    #[serde(default)]
    pub hostnames: Vec<String>,
}

/// The JSON layout of [`XPlane`].
#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct PlaneView {
    pub id: i64,
    pub name: String,
    pub lines: Vec<LineView>,
    pub event_metadata: BTreeMap<i64, EventMetadataView>,
    pub stat_metadata: BTreeMap<i64, StatMetadataView>,
    pub stats: Vec<StatView>,
}

/// The JSON layout of [`XLine`].
#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct LineView {
    pub id: i64,
    pub display_id: i64,
    pub name: String,
    pub display_name: String,
    pub timestamp_ns: i64,
    pub duration_ps: i64,
    pub events: Vec<EventView>,
}

/// The JSON layout of [`XEvent`].
#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct EventView {
    pub metadata_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset_ps: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_occurrences: Option<i64>,
    pub duration_ps: i64,
    pub stats: Vec<StatView>,
}

/// The JSON layout of [`XStat`]: at most one of the value fields is present.
#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct StatView {
    pub metadata_id: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub double_value: Option<JsonDouble>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uint64_value: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub int64_value: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub str_value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ref_value: Option<u64>,
}

/// The JSON layout of [`XEventMetadata`].
#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct EventMetadataView {
    pub id: i64,
    pub name: String,
    pub display_name: String,
    pub metadata: String,
    pub stats: Vec<StatView>,
    pub child_id: Vec<i64>,
}

/// The JSON layout of [`XStatMetadata`].
#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct StatMetadataView {
    pub id: i64,
    pub name: String,
    pub description: String,
}

/// A double that survives JSON: finite values as numbers, the rest as strings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JsonDouble(pub f64);

impl Serialize for JsonDouble {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let v = self.0;
        if v.is_nan() {
            s.serialize_str("NaN")
        } else if v.is_infinite() {
            s.serialize_str(if v > 0.0 { "Infinity" } else { "-Infinity" })
        } else {
            s.serialize_f64(v)
        }
    }
}

impl<'de> Deserialize<'de> for JsonDouble {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(f64),
            Str(String),
        }
        match Raw::deserialize(d)? {
            Raw::Num(v) => Ok(JsonDouble(v)),
            Raw::Str(s) => match s.as_str() {
                "NaN" => Ok(JsonDouble(f64::NAN)),
                "Infinity" => Ok(JsonDouble(f64::INFINITY)),
                "-Infinity" => Ok(JsonDouble(f64::NEG_INFINITY)),
                other => Err(serde::de::Error::custom(format!(
                    "expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", found \"{other}\""
                ))),
            },
        }
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn from_b64(text: &str, path: &str) -> Result<bytes::Bytes> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map(bytes::Bytes::from)
        .map_err(|e| Error::Json(format!("{path}: invalid base64: {e}")))
}

impl From<&XStat> for StatView {
    fn from(stat: &XStat) -> Self {
        let mut view = StatView {
            metadata_id: stat.metadata_id,
            ..Default::default()
        };
        match &stat.value {
            None => {}
            Some(x_stat::Value::DoubleValue(v)) => view.double_value = Some(JsonDouble(*v)),
            Some(x_stat::Value::Uint64Value(v)) => view.uint64_value = Some(*v),
            Some(x_stat::Value::Int64Value(v)) => view.int64_value = Some(*v),
            Some(x_stat::Value::StrValue(v)) => view.str_value = Some(v.clone()),
            Some(x_stat::Value::BytesValue(v)) => view.bytes_value = Some(b64(v)),
            Some(x_stat::Value::RefValue(v)) => view.ref_value = Some(*v),
        }
        view
    }
}

impl From<&XSpace> for SpaceView {
    fn from(space: &XSpace) -> Self {
        SpaceView {
            planes: space.planes.iter().map(PlaneView::from).collect(),
            errors: space.errors.clone(),
            warnings: space.warnings.clone(),
            hostnames: space.hostnames.clone(),
        }
    }
}

impl From<&XPlane> for PlaneView {
    fn from(plane: &XPlane) -> Self {
        PlaneView {
            id: plane.id,
            name: plane.name.clone(),
            lines: plane.lines.iter().map(LineView::from).collect(),
            event_metadata: plane
                .event_metadata
                .iter()
                .map(|(k, md)| {
                    (
                        *k,
                        EventMetadataView {
                            id: md.id,
                            name: md.name.clone(),
                            display_name: md.display_name.clone(),
                            metadata: b64(&md.metadata),
                            stats: md.stats.iter().map(StatView::from).collect(),
                            child_id: md.child_id.clone(),
                        },
                    )
                })
                .collect(),
            stat_metadata: plane
                .stat_metadata
                .iter()
                .map(|(k, md)| {
                    (
                        *k,
                        StatMetadataView {
                            id: md.id,
                            name: md.name.clone(),
                            description: md.description.clone(),
                        },
                    )
                })
                .collect(),
            stats: plane.stats.iter().map(StatView::from).collect(),
        }
    }
}

impl From<&XLine> for LineView {
    fn from(line: &XLine) -> Self {
        LineView {
            id: line.id,
            display_id: line.display_id,
            name: line.name.clone(),
            display_name: line.display_name.clone(),
            timestamp_ns: line.timestamp_ns,
            duration_ps: line.duration_ps,
            events: line
                .events
                .iter()
                .map(|e| EventView {
                    metadata_id: e.metadata_id,
                    offset_ps: match e.data {
                        Some(x_event::Data::OffsetPs(v)) => Some(v),
                        _ => None,
                    },
                    num_occurrences: e.num_occurrences(),
                    duration_ps: e.duration_ps,
                    stats: e.stats.iter().map(StatView::from).collect(),
                })
                .collect(),
        }
    }
}

impl StatView {
    fn to_stat(&self, path: &str) -> Result<XStat> {
        let mut values = Vec::new();
        if let Some(v) = self.double_value {
            values.push(x_stat::Value::DoubleValue(v.0));
        }
        if let Some(v) = self.uint64_value {
            values.push(x_stat::Value::Uint64Value(v));
        }
        if let Some(v) = self.int64_value {
            values.push(x_stat::Value::Int64Value(v));
        }
        if let Some(v) = &self.str_value {
            values.push(x_stat::Value::StrValue(v.clone()));
        }
        if let Some(v) = &self.bytes_value {
            values.push(x_stat::Value::BytesValue(from_b64(
                v,
                &format!("{path}.bytes_value"),
            )?));
        }
        if let Some(v) = self.ref_value {
            values.push(x_stat::Value::RefValue(v));
        }
        if values.len() > 1 {
            return Err(Error::Json(format!(
                "{path}: a stat holds at most one value field"
            )));
        }
        Ok(XStat {
            metadata_id: self.metadata_id,
            value: values.pop(),
        })
    }
}

fn stats(views: &[StatView], path: &str) -> Result<Vec<XStat>> {
    views
        .iter()
        .enumerate()
        .map(|(i, s)| s.to_stat(&format!("{path}.stats[{i}]")))
        .collect()
}

impl SpaceView {
    /// Converts the view back to an XSpace; errors name the JSON path.
    pub fn to_space(&self) -> Result<XSpace> {
        let mut space = XSpace {
            errors: self.errors.clone(),
            warnings: self.warnings.clone(),
            hostnames: self.hostnames.clone(),
            ..Default::default()
        };
        for (pi, p) in self.planes.iter().enumerate() {
            let path = format!("planes[{pi}]");
            let mut plane = XPlane {
                id: p.id,
                name: p.name.clone(),
                stats: stats(&p.stats, &path)?,
                ..Default::default()
            };
            for (k, md) in &p.event_metadata {
                let md_path = format!("{path}.event_metadata.{k}");
                plane.event_metadata.insert(
                    *k,
                    XEventMetadata {
                        id: md.id,
                        name: md.name.clone(),
                        display_name: md.display_name.clone(),
                        metadata: from_b64(&md.metadata, &format!("{md_path}.metadata"))?,
                        stats: stats(&md.stats, &md_path)?,
                        child_id: md.child_id.clone(),
                    },
                );
            }
            for (k, md) in &p.stat_metadata {
                plane.stat_metadata.insert(
                    *k,
                    XStatMetadata {
                        id: md.id,
                        name: md.name.clone(),
                        description: md.description.clone(),
                    },
                );
            }
            for (li, l) in p.lines.iter().enumerate() {
                let line_path = format!("{path}.lines[{li}]");
                let mut line = XLine {
                    id: l.id,
                    display_id: l.display_id,
                    name: l.name.clone(),
                    display_name: l.display_name.clone(),
                    timestamp_ns: l.timestamp_ns,
                    duration_ps: l.duration_ps,
                    events: Vec::with_capacity(l.events.len()),
                };
                for (ei, e) in l.events.iter().enumerate() {
                    let event_path = format!("{line_path}.events[{ei}]");
                    let data = match (e.offset_ps, e.num_occurrences) {
                        (Some(_), Some(_)) => {
                            return Err(Error::Json(format!(
                                "{event_path}: offset_ps and num_occurrences are one oneof; set at most one"
                            )));
                        }
                        (Some(v), None) => Some(x_event::Data::OffsetPs(v)),
                        (None, Some(v)) => Some(x_event::Data::NumOccurrences(v)),
                        (None, None) => None,
                    };
                    line.events.push(XEvent {
                        metadata_id: e.metadata_id,
                        data,
                        duration_ps: e.duration_ps,
                        stats: stats(&e.stats, &event_path)?,
                    });
                }
                plane.lines.push(line);
            }
            space.planes.push(plane);
        }
        Ok(space)
    }
}

/// The canonical JSON of `space`, pretty-printed with two-space indents and a final newline.
pub fn to_json(space: &XSpace) -> String {
    let mut text = serde_json::to_string_pretty(&SpaceView::from(space))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}

/// Writes the canonical JSON of `space` to `writer`.
pub fn write_json(space: &XSpace, mut writer: impl std::io::Write) -> Result<()> {
    // Serialized straight from the space, element by element: building the whole SpaceView
    // first would hold a second copy of every line and event (twice the decoded space).
    serde_json::to_writer_pretty(&mut writer, &borrowed::Space(space))
        .map_err(|e| Error::Json(e.to_string()))?;
    writer.write_all(b"\n")?;
    Ok(())
}

/// [`write_json`] of the space `reader` reads, written plane by plane as the planes are read: the
/// same text, with one plane in memory (and the space's strings) instead of the whole space. A
/// read that fails midway leaves the text written so far: check the input first where that
/// matters (the CLI's `dump` does when it can read its input twice).
pub fn write_json_streamed<R: std::io::Read>(
    reader: crate::XSpaceReader<R>,
    mut writer: impl std::io::Write,
) -> Result<()> {
    let json = |e: serde_json::Error| Error::Json(e.to_string());
    let mut rest = XSpace::default();
    let mut planes = 0usize;
    writer.write_all(b"{\n  \"planes\": [")?;
    for item in reader {
        match item? {
            crate::SpaceItem::Plane(plane) => {
                writer.write_all(if planes == 0 { b"\n" } else { b",\n" })?;
                planes += 1;
                // A plane is two levels deep in the document: its own pretty text, indented.
                let text = serde_json::to_string_pretty(&borrowed::Plane(&plane)).map_err(json)?;
                for (i, line) in text.split('\n').enumerate() {
                    if i > 0 {
                        writer.write_all(b"\n")?;
                    }
                    writer.write_all(b"    ")?;
                    writer.write_all(line.as_bytes())?;
                }
            }
            crate::SpaceItem::Error(e) => rest.errors.push(e),
            crate::SpaceItem::Warning(w) => rest.warnings.push(w),
            crate::SpaceItem::Hostname(h) => rest.hostnames.push(h),
        }
    }
    writer.write_all(if planes == 0 { b"]" } else { b"\n  ]" })?;
    // The rest of the document as `write_json` writes it after the planes.
    let tail = serde_json::to_string_pretty(&borrowed::Space(&rest)).map_err(json)?;
    let after = tail
        .strip_prefix("{\n  \"planes\": []")
        .ok_or_else(|| Error::Json("the canonical layout does not start with the planes".into()))?;
    writer.write_all(after.as_bytes())?;
    writer.write_all(b"\n")?;
    Ok(())
}

/// Reads the canonical JSON layout back into an XSpace.
pub fn from_json(text: &str) -> Result<XSpace> {
    let view: SpaceView = serde_json::from_str(text).map_err(|e| Error::Json(e.to_string()))?;
    view.to_space()
}

/// The same JSON as the views' derived `Serialize`, written from borrowed protobuf types with no
/// copy of the whole: each element's view is made as it is written and dropped after.
mod borrowed {
    use std::collections::BTreeMap;

    use serde::Serialize;
    use serde::ser::{SerializeStruct, Serializer};

    use super::{EventMetadataView, StatMetadataView, StatView, b64};
    use crate::proto::{
        XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata, x_event,
    };

    pub(super) struct Space<'a>(pub(super) &'a XSpace);
    pub(super) struct Plane<'a>(pub(super) &'a XPlane);
    struct Line<'a>(&'a XLine);
    struct Event<'a>(&'a XEvent);
    struct Seq<'a, T>(&'a [T]);
    struct EventMetadataMap<'a>(&'a BTreeMap<i64, XEventMetadata>);
    struct StatMetadataMap<'a>(&'a BTreeMap<i64, XStatMetadata>);

    impl Serialize for Space<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut st = s.serialize_struct("SpaceView", 4)?;
            st.serialize_field("planes", &Seq(&self.0.planes))?;
            st.serialize_field("errors", &self.0.errors)?;
            st.serialize_field("warnings", &self.0.warnings)?;
            st.serialize_field("hostnames", &self.0.hostnames)?;
            st.end()
        }
    }

    impl Serialize for Seq<'_, XPlane> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter().map(Plane))
        }
    }

    impl Serialize for Seq<'_, XLine> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter().map(Line))
        }
    }

    impl Serialize for Seq<'_, XEvent> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter().map(Event))
        }
    }

    impl Serialize for Seq<'_, XStat> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter().map(StatView::from))
        }
    }

    impl Serialize for Plane<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let plane = self.0;
            let mut st = s.serialize_struct("PlaneView", 6)?;
            st.serialize_field("id", &plane.id)?;
            st.serialize_field("name", &plane.name)?;
            st.serialize_field("lines", &Seq(&plane.lines))?;
            st.serialize_field("event_metadata", &EventMetadataMap(&plane.event_metadata))?;
            st.serialize_field("stat_metadata", &StatMetadataMap(&plane.stat_metadata))?;
            st.serialize_field("stats", &Seq(&plane.stats))?;
            st.end()
        }
    }

    impl Serialize for EventMetadataMap<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_map(self.0.iter().map(|(k, md)| {
                (
                    k,
                    EventMetadataView {
                        id: md.id,
                        name: md.name.clone(),
                        display_name: md.display_name.clone(),
                        metadata: b64(&md.metadata),
                        stats: md.stats.iter().map(StatView::from).collect(),
                        child_id: md.child_id.clone(),
                    },
                )
            }))
        }
    }

    impl Serialize for StatMetadataMap<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_map(self.0.iter().map(|(k, md)| {
                (
                    k,
                    StatMetadataView {
                        id: md.id,
                        name: md.name.clone(),
                        description: md.description.clone(),
                    },
                )
            }))
        }
    }

    impl Serialize for Line<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let line = self.0;
            let mut st = s.serialize_struct("LineView", 7)?;
            st.serialize_field("id", &line.id)?;
            st.serialize_field("display_id", &line.display_id)?;
            st.serialize_field("name", &line.name)?;
            st.serialize_field("display_name", &line.display_name)?;
            st.serialize_field("timestamp_ns", &line.timestamp_ns)?;
            st.serialize_field("duration_ps", &line.duration_ps)?;
            st.serialize_field("events", &Seq(&line.events))?;
            st.end()
        }
    }

    impl Serialize for Event<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let event = self.0;
            let mut st = s.serialize_struct("EventView", 5)?;
            st.serialize_field("metadata_id", &event.metadata_id)?;
            match event.data {
                Some(x_event::Data::OffsetPs(v)) => st.serialize_field("offset_ps", &v)?,
                _ => st.skip_field("offset_ps")?,
            }
            match event.num_occurrences() {
                Some(v) => st.serialize_field("num_occurrences", &v)?,
                None => st.skip_field("num_occurrences")?,
            }
            st.serialize_field("duration_ps", &event.duration_ps)?;
            st.serialize_field("stats", &Seq(&event.stats))?;
            st.end()
        }
    }
}
