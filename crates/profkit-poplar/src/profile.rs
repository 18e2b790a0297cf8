//! The three shapes of file: a graph profile, an execution profile, and the combined object
//! `{"graphProfile": ..., "executionProfile": ...}` that `engine.getProfile()` returns.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::execution::{ExecutionProfile, RawExecutionFields};
use crate::graph::{GraphProfile, GraphProfileFields};
use crate::record::{Extra, FieldSet, KeySeed, read_extra, record};

record! {
    /// The combined profile: `{"graphProfile": ..., "executionProfile": ...}`.
    pub struct Profile / ProfileFields {
        /// `executionProfile`.
        "executionProfile" => execution_profile: opt ExecutionProfile,
        /// `graphProfile`.
        "graphProfile" => graph_profile: opt GraphProfile,
    }
}

/// Which of the three shapes a file has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A graph profile (`graph.json`).
    Graph,
    /// An execution profile (`execution.json`).
    Execution,
    /// The combined `{graphProfile, executionProfile}` object.
    Combined,
}

impl Shape {
    /// `graph`, `execution` or `combined`.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Graph => "graph",
            Shape::Execution => "execution",
            Shape::Combined => "combined",
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Poplar profile file of any of the three shapes, told apart by its keys.
#[derive(Clone, Debug, PartialEq)]
#[allow(
    clippy::large_enum_variant,
    reason = "one value per file, built once and rarely moved"
)]
pub enum ProfileFile {
    /// A graph profile.
    Graph(GraphProfile),
    /// An execution profile.
    Execution(ExecutionProfile),
    /// A combined profile.
    Combined(Profile),
}

impl ProfileFile {
    /// The file's shape.
    pub fn shape(&self) -> Shape {
        match self {
            ProfileFile::Graph(_) => Shape::Graph,
            ProfileFile::Execution(_) => Shape::Execution,
            ProfileFile::Combined(_) => Shape::Combined,
        }
    }

    /// The graph profile, alone or in a combined file.
    pub fn graph(&self) -> Option<&GraphProfile> {
        match self {
            ProfileFile::Graph(g) => Some(g),
            ProfileFile::Combined(p) => p.graph_profile.as_ref(),
            ProfileFile::Execution(_) => None,
        }
    }

    /// The execution profile, alone or in a combined file.
    pub fn execution(&self) -> Option<&ExecutionProfile> {
        match self {
            ProfileFile::Execution(e) => Some(e),
            ProfileFile::Combined(p) => p.execution_profile.as_ref(),
            ProfileFile::Graph(_) => None,
        }
    }

    /// The JSON path prefix of the graph profile in this file (`graphProfile` or nothing).
    pub fn graph_path(&self) -> &'static str {
        match self {
            ProfileFile::Combined(_) => "graphProfile",
            _ => "",
        }
    }

    /// The JSON path prefix of the execution profile in this file (`executionProfile` or
    /// nothing).
    pub fn execution_path(&self) -> &'static str {
        match self {
            ProfileFile::Combined(_) => "executionProfile",
            _ => "",
        }
    }
}

struct FileVisitor;

impl<'de> Visitor<'de> for FileVisitor {
    type Value = ProfileFile;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Poplar profile (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ProfileFile, A::Error> {
        let mut combined = ProfileFields::default();
        let mut graph = GraphProfileFields::default();
        let mut execution = RawExecutionFields::default();
        let mut seen: [Option<String>; 3] = [None, None, None];
        let mut extra = Extra::new();
        let mut key = String::new();
        while map.next_key_seed(KeySeed(&mut key))?.is_some() {
            let shape = if combined.accept(&key, &mut map)? {
                0
            } else if graph.accept(&key, &mut map)? {
                1
            } else if execution.accept(&key, &mut map)? {
                2
            } else {
                read_extra(&key, &mut map, &mut extra)?;
                continue;
            };
            if let Some(slot) = seen.get_mut(shape) {
                slot.get_or_insert_with(|| key.clone());
            }
        }
        match seen {
            [Some(_), None, None] => combined.finish(extra).map(ProfileFile::Combined),
            [None, Some(_), None] => graph.finish(extra).map(ProfileFile::Graph),
            [None, None, Some(_)] => execution
                .finish::<A::Error>(extra)?
                .into_profile()
                .map(ProfileFile::Execution)
                .map_err(de::Error::custom),
            [None, None, None] => Err(de::Error::custom(
                "not a Poplar profile: the object has none of the keys of a graph profile \
                 (target, programs, memory, ...), an execution profile (profilerMode) or a \
                 combined profile (graphProfile, executionProfile)",
            )),
            [c, g, x] => {
                let found: Vec<String> = [
                    c.map(|k| format!("`{k}` of a combined profile")),
                    g.map(|k| format!("`{k}` of a graph profile")),
                    x.map(|k| format!("`{k}` of an execution profile")),
                ]
                .into_iter()
                .flatten()
                .collect();
                Err(de::Error::custom(format!(
                    "the object mixes the keys of different profiles: {}",
                    found.join(" and ")
                )))
            }
        }
    }
}

impl<'de> Deserialize<'de> for ProfileFile {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ProfileFile, D::Error> {
        d.deserialize_map(FileVisitor)
    }
}

impl Serialize for ProfileFile {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ProfileFile::Graph(g) => g.serialize(s),
            ProfileFile::Execution(e) => {
                let mut map = s.serialize_map(None)?;
                e.serialize_entries(&mut map)?;
                map.end()
            }
            ProfileFile::Combined(p) => p.serialize(s),
        }
    }
}
