//! The benchmark data set, shared by the bench binaries: a deterministic XSpace built with
//! [`PlaneBuilder`] and written under `target/bench-data/` so that peers outside Rust (Python
//! protobuf) parse exactly the same bytes.

use std::path::PathBuf;

use profkit_bench::paths::{data_dir, write_if_changed};
use profkit_xplane::{PlaneBuilder, StatValue, XPlane, XSpace};

/// Events in the full-size data set.
pub const FULL_EVENTS: usize = 1_000_000;
/// Events in the data set used when a bench binary runs as a smoke test (`cargo test --benches`).
pub const SMOKE_EVENTS: usize = 10_000;
/// Distinct event names in each plane.
const EVENT_NAMES: usize = 1_000;

/// The generated data set, in memory and on disk.
pub struct Dataset {
    /// The space as built.
    pub space: XSpace,
    /// Its encoding, which is also the content of `path`.
    pub bytes: Vec<u8>,
    /// Events across all planes.
    pub events: u64,
    /// The encoded file.
    pub path: PathBuf,
    /// The schema's `FileDescriptorSet`, written next to the data for the Python peer.
    #[allow(dead_code, reason = "only the xspace bench runs the Python peer")]
    pub descriptor_set_path: PathBuf,
}

impl Dataset {
    /// Builds the space with `events` events, encodes it and writes it (and the descriptor set)
    /// to `target/bench-data/<stem>.xplane.pb`, rewriting the file only when its content differs.
    pub fn prepare(events: usize, stem: &str) -> std::io::Result<Dataset> {
        let space = generate(events);
        let bytes = profkit_xplane::encode(&space);
        let dir = data_dir();
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{stem}.xplane.pb"));
        write_if_changed(&path, &bytes)?;
        let descriptor_set_path = dir.join("xplane.fds.pb");
        write_if_changed(&descriptor_set_path, profkit_xplane::FILE_DESCRIPTOR_SET)?;
        Ok(Dataset {
            events: count_events(&space),
            space,
            bytes,
            path,
            descriptor_set_path,
        })
    }

    /// The encoded size of the largest plane (the length of its `XSpace.planes` field body).
    pub fn largest_plane_bytes(&self) -> usize {
        use prost::Message;
        self.space
            .planes
            .iter()
            .map(Message::encoded_len)
            .max()
            .unwrap_or(0)
    }
}

/// Events in all lines of all planes of `space`.
pub fn count_events(space: &XSpace) -> u64 {
    space.planes.iter().map(plane_events).sum()
}

/// Events in all lines of `plane`.
pub fn plane_events(plane: &XPlane) -> u64 {
    plane.lines.iter().map(|l| l.events.len() as u64).sum()
}

/// A small deterministic generator (SplitMix64), so every run builds the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const TF_OPS: [&str; 16] = [
    "MatMul",
    "Conv2D",
    "Relu",
    "BiasAdd",
    "Softmax",
    "Add",
    "Mul",
    "Reshape",
    "Transpose",
    "Cast",
    "Sum",
    "Mean",
    "AssignVariableOp",
    "ReadVariableOp",
    "Identity",
    "Sub",
];

/// Builds an XSpace like a training step trace: a `/host:CPU` plane of 8 threads whose events
/// carry an `int64` step number and an interned (`ref_value`) TF op type, and four
/// `/device:GPU:N` planes of 4 streams whose kernels carry a `uint64` correlation id and a
/// `double` occupancy. Each plane draws its event names from the same 1,000 names, so each
/// interns up to 1,000 event metadata. `events` are split evenly over the planes and lines.
pub fn generate(events: usize) -> XSpace {
    let mut rng = Rng(0x0070_726f_666b_6974);
    let names: Vec<String> = (0..EVENT_NAMES)
        .map(|i| {
            let op = TF_OPS[i % TF_OPS.len()];
            format!("model/layer_{}/{}_{i}", i / 16, op.to_ascii_lowercase())
        })
        .collect();
    let planes: [(&str, i64, bool); 5] = [
        ("/host:CPU", 8, true),
        ("/device:GPU:0", 4, false),
        ("/device:GPU:1", 4, false),
        ("/device:GPU:2", 4, false),
        ("/device:GPU:3", 4, false),
    ];
    let per_plane = events / planes.len();
    let mut space = XSpace {
        hostnames: vec!["bench-host".to_owned()],
        ..Default::default()
    };
    for (plane_index, &(name, lines, host)) in planes.iter().enumerate() {
        // The remainder goes to the last plane so the total is exactly `events`.
        let plane_events = if plane_index + 1 == planes.len() {
            events - per_plane * (planes.len() - 1)
        } else {
            per_plane
        };
        let mut plane = XPlane::default();
        let mut builder = PlaneBuilder::new(&mut plane);
        builder.set_id(plane_index as i64).set_name(name);
        let per_line = plane_events / lines as usize;
        for line_id in 0..lines {
            let line_events = if line_id + 1 == lines {
                plane_events - per_line * (lines as usize - 1)
            } else {
                per_line
            };
            let mut line = builder.line(line_id);
            line.set_name(if host {
                format!("tf_Compute/{line_id}")
            } else {
                format!("Stream #{line_id}")
            });
            line.set_timestamp_ns(1_700_000_000_000_000_000 + line_id * 1_000);
            let mut offset_ps: i64 = 0;
            for k in 0..line_events {
                let name = &names[rng.below(EVENT_NAMES as u64) as usize];
                let duration_ps = 1_000 + rng.below(5_000_000) as i64;
                let mut event = line.add_event(name);
                event.set_offset_ps(offset_ps).set_duration_ps(duration_ps);
                if host {
                    event.add_stat("step_num", (k / 1_000) as i64).add_stat(
                        "tf_op",
                        StatValue::Ref(TF_OPS[rng.below(TF_OPS.len() as u64) as usize].to_owned()),
                    );
                } else {
                    event
                        .add_stat("correlation_id", rng.below(1 << 40))
                        .add_stat("occupancy", rng.below(1_000) as f64 / 1_000.0);
                }
                offset_ps += duration_ps + rng.below(2_000_000) as i64;
            }
        }
        space.planes.push(plane);
    }
    space
}
