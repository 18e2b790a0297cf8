//! Hostile inputs for the memory bound: one or more per format, built by code (they are
//! megabytes of the same few bytes, so they are made rather than stored). Each is what a reader
//! turns into far more memory than the input, if nothing bounds it: empty messages by the
//! million, one event per thread, columns past the header's keys. The profkit CLI tests
//! (`crates/profkit/tests/limits.rs`) run every command on each and check the child's peak
//! resident set against the bound docs/cli.md gives (64 times the input, plus a fixed base).
//!
//! Cases are made one at a time ([`HostileCase::bytes`]), so that a process measuring children
//! stays small itself (a spawned child's peak resident set starts at its parent's).
//!
//! ```
//! let case = conformance::limits::cases().into_iter().find(|c| c.name == "xspace-empty-lines").unwrap();
//! assert!(case.bytes(64 << 10).len() >= 60 << 10);
//! ```

use std::path::Path;

/// One hostile input and the commands to run on it.
#[derive(Clone, Debug)]
pub struct HostileCase {
    /// The case's name.
    pub name: &'static str,
    /// The file name to write the input under (for XDL, the data file's name inside a
    /// dataset directory).
    pub file_name: &'static str,
    /// Makes the input, about `size` bytes.
    pub make: fn(usize) -> Vec<u8>,
    /// Whether the input is an XDL data file (the commands then also read its directory).
    pub xdl: bool,
    /// Whether readers refuse it outright (a budget), rather than read it within the bound.
    pub refused: bool,
    /// The format to name with `--from`, for an input whose bytes also read as another format
    /// and whose file name has no convention to break the tie (Paddle's legacy `Profile`).
    pub from: Option<&'static str>,
}

impl HostileCase {
    /// The input, about `size` bytes.
    pub fn bytes(&self, size: usize) -> Vec<u8> {
        (self.make)(size)
    }
}

/// Appends `n` as a protobuf varint.
pub fn varint(mut n: u64, out: &mut Vec<u8>) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A length-delimited protobuf field: tag, length, body.
pub fn len_field(number: u64, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 12);
    varint(number << 3 | 2, &mut out);
    varint(body.len() as u64, &mut out);
    out.extend_from_slice(body);
    out
}

fn repeated(unit: &[u8], size: usize) -> Vec<u8> {
    unit.repeat(size / unit.len().max(1))
}

/// Every hostile case.
pub fn cases() -> Vec<HostileCase> {
    vec![
        // XSpace: a plane of empty lines (an XLine decodes to about 100 bytes from 2).
        HostileCase {
            name: "xspace-empty-lines",
            file_name: "empty-lines.xplane.pb",
            make: |size| len_field(1, &repeated(&len_field(3, &[]), size)),
            xdl: false,
            refused: false,
            from: None,
        },
        // XSpace: empty planes by the million (a summary or a decoded plane per 2 bytes).
        HostileCase {
            name: "xspace-empty-planes",
            file_name: "empty-planes.xplane.pb",
            make: |size| repeated(&len_field(1, &[]), size),
            xdl: false,
            refused: false,
            from: None,
        },
        // XSpace: a line of empty events.
        HostileCase {
            name: "xspace-empty-events",
            file_name: "empty-events.xplane.pb",
            make: |size| len_field(1, &len_field(3, &repeated(&len_field(4, &[]), size))),
            xdl: false,
            refused: false,
            from: None,
        },
        // XSpace: the host plane with a line of empty events (`report` nests them all, one
        // inside the other: a summary node per 2 bytes).
        HostileCase {
            name: "xspace-host-empty-events",
            file_name: "host-empty-events.xplane.pb",
            make: |size| {
                let events = repeated(&len_field(4, &[]), size);
                let mut plane = len_field(2, b"/host:CPU");
                plane.extend(len_field(3, &events));
                len_field(1, &plane)
            },
            xdl: false,
            refused: false,
            from: None,
        },
        // XSpace: empty host names by the million (also the bytes of the Paddle `Profile` case
        // below, which detection reads as this when no format is named).
        HostileCase {
            name: "xspace-empty-hostnames",
            file_name: "empty-hostnames.pb",
            make: |size| repeated(&len_field(4, &[]), size),
            xdl: false,
            refused: false,
            from: None,
        },
        // Paddle node trees: one thread tree of empty host nodes.
        HostileCase {
            name: "paddle-nodetree-empty-nodes",
            file_name: "empty-nodes.paddle_trace.pb",
            make: |size| node_trees(&repeated(&len_field(2, &[]), size)),
            xdl: false,
            refused: true,
            from: None,
        },
        // Paddle node trees at the message budget (one message per 20 bytes): host nodes holding
        // only a name, each different.
        HostileCase {
            name: "paddle-nodetree-at-budget",
            file_name: "named-nodes.paddle_trace.pb",
            make: |size| {
                let mut nodes = Vec::with_capacity(size + 64);
                let mut i = 0u64;
                while nodes.len() < size {
                    let name = format!("n{i:034}");
                    nodes.extend(len_field(2, &len_field(3, &len_field(1, name.as_bytes()))));
                    i += 1;
                }
                node_trees(&nodes)
            },
            xdl: false,
            refused: false,
            from: None,
        },
        // Paddle's legacy Profile: empty memory events.
        HostileCase {
            name: "paddle-profile-empty-memory-events",
            file_name: "empty-memory.pb",
            make: |size| repeated(&len_field(4, &[]), size),
            xdl: false,
            refused: true,
            // The same bytes are an XSpace of empty host names, which detection picks.
            from: Some("paddle"),
        },
        // Chrome trace JSON: one complete event per thread.
        HostileCase {
            name: "chrome-one-event-per-thread",
            file_name: "threads.json",
            make: |size| {
                let mut json = b"{\"traceEvents\":[".to_vec();
                let mut tid = 0u64;
                while json.len() < size {
                    json.extend(format!("{{\"ph\":\"X\",\"ts\":1,\"tid\":{tid}}},").as_bytes());
                    tid += 1;
                }
                json.extend(b"{}]}");
                json
            },
            xdl: false,
            refused: false,
            from: None,
        },
        // XDL: a header of one key, then a record of empty columns.
        HostileCase {
            name: "xdl-empty-columns",
            file_name: "train.trace.0.1",
            make: |size| {
                let header = len_field(1, b"a");
                let record = repeated(&len_field(3, &[]), size);
                let mut data = Vec::with_capacity(size + 16);
                for frame in [&header, &record] {
                    data.extend((frame.len() as u32).to_le_bytes());
                    data.extend_from_slice(frame);
                }
                data
            },
            xdl: true,
            refused: false,
            from: None,
        },
        // Poplar: the graph profile of conformance/poplar/graph-complete with its programs
        // replaced by as many `Sync` programs as fit.
        HostileCase {
            name: "poplar-many-programs",
            file_name: "graph.json",
            make: poplar_programs,
            xdl: false,
            refused: false,
            from: None,
        },
    ]
}

/// A gzip bomb: a file that decompresses to far more than it is, and the words the refusal of
/// every command must contain (besides the file's name).
#[derive(Clone, Debug)]
pub struct GzipBomb {
    /// The file name to write it under.
    pub file_name: &'static str,
    /// The compressed bytes.
    pub bytes: Vec<u8>,
    /// What the message says.
    pub message: &'static str,
}

/// `members` copies of one gzip member of `unit` repeated to about 1 MiB, between a member of
/// `head` and one of `tail`: gzip's concatenated members make a bomb of any size from one
/// compressed megabyte, without compressing the whole.
pub fn bomb(head: &[u8], unit: &[u8], members: usize, tail: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let gz = |data: &[u8]| {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let _ = e.write_all(data);
        e.finish().unwrap_or_default()
    };
    let body = gz(&unit.repeat((1 << 20) / unit.len().max(1)));
    let mut out = gz(head);
    for _ in 0..members {
        out.extend_from_slice(&body);
    }
    out.extend(gz(tail));
    out
}

/// The gzip bombs every command must refuse, each of `members` compressed megabytes' worth of
/// members (a member of 1 MiB compresses to about 1 to 3 KB): Chrome events, one XSpace plane of
/// empty lines declaring 1.9 GB, a plane declaring 3 GB (past what an XSpace holds, refused
/// from its first bytes), Poplar programs.
pub fn gzip_bombs(members: usize) -> Vec<GzipBomb> {
    let event = br#"{"ph":"X","name":"op","ts":1,"dur":1,"pid":1,"tid":1},"#;
    let plane = |declared: u64| {
        let mut head = Vec::new();
        varint(1 << 3 | 2, &mut head);
        varint(declared, &mut head);
        head
    };
    vec![
        GzipBomb {
            file_name: "events.json.gz",
            bytes: bomb(
                b"{\"traceEvents\":[",
                event,
                members,
                br#"{"ph":"i","ts":1}]}"#,
            ),
            message: "--max-inflated",
        },
        GzipBomb {
            file_name: "plane.xplane.pb.gz",
            bytes: bomb(&plane(1_900_000_000), &len_field(3, &[]), members, b""),
            message: "--max-inflated",
        },
        GzipBomb {
            file_name: "declared.xplane.pb.gz",
            bytes: bomb(&plane(3_000_000_000), &len_field(3, &[]), 64, b""),
            message: "XSpace",
        },
        GzipBomb {
            file_name: "graph.json.gz",
            bytes: bomb(
                b"{\"programs\":[",
                b"{\"type\":\"Sequence\",\"children\":[]},",
                members,
                b"{}]}",
            ),
            message: "--max-inflated",
        },
    ]
}

fn node_trees(nodes: &[u8]) -> Vec<u8> {
    let mut trees = len_field(1, b"1.0");
    trees.extend([2 << 3, 0]);
    trees.extend(len_field(3, nodes));
    trees
}

fn poplar_programs(size: usize) -> Vec<u8> {
    let graph = Path::new(env!("CARGO_MANIFEST_DIR")).join("poplar/graph-complete/input.json");
    let Ok(text) = std::fs::read(graph) else {
        return Vec::new();
    };
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    // The programs are spliced in as text: a JSON value of a million programs would be far
    // larger than the file.
    if let Some(programs) = value.get_mut("programs") {
        *programs = serde_json::json!("PROGRAMS");
    }
    let text = serde_json::to_string(&value).unwrap_or_default();
    let sync = "{\"type\":\"Sync\"},".repeat(size / 16);
    let programs = format!("[{}{{\"type\":\"Sync\"}}]", sync);
    text.replacen("\"PROGRAMS\"", &programs, 1).into_bytes()
}
