//! The benchmark data: a graph profile of 16 IPUs x 1,216 tiles, written by a deterministic
//! generator straight to `target/bench-data/` (without going through the crate, so that the
//! text is what Poplar would write, not what our writer writes).
//!
//! What makes it realistic: keys in Poplar's sorted order, compact JSON, one array of 19,456
//! numbers per tile-indexed row; a compute set or an exchange runs on a contiguous run of tiles
//! (a few to all of them) and is zero elsewhere; byte counts of tens to thousands, cycles of
//! hundreds to thousands, memory per tile of 100 KB to 600 KB; categories of which most are zero on
//! most tiles. Sizes: 250 compute sets, 220 internal exchanges, 24 external and 24 host exchanges,
//! 100 vertex types, 25 memory categories and 472 programs: about 200 MB.

#![allow(dead_code, reason = "each bench binary uses part of it")]

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use profkit_bench::paths::data_dir;

/// IPUs of the full-size data set.
pub const IPUS: u64 = 16;
/// Tiles per IPU (a Mk2 IPU).
pub const TILES_PER_IPU: u64 = 1216;
/// Bytes per tile (a Mk2 IPU: 624 KiB).
pub const BYTES_PER_TILE: u64 = 638_976;

/// The sizes of one data set.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    pub ipus: u64,
    pub compute_sets: usize,
    pub exchanges: usize,
    pub external: usize,
    pub host: usize,
    pub vertex_types: usize,
}

/// The full-size data set: about 200 MB.
pub const FULL: Sizes = Sizes {
    ipus: IPUS,
    compute_sets: 250,
    exchanges: 220,
    external: 24,
    host: 24,
    vertex_types: 100,
};

/// The data set of a smoke run (`cargo test --benches`).
pub const SMOKE: Sizes = Sizes {
    ipus: 1,
    compute_sets: 6,
    exchanges: 4,
    external: 1,
    host: 1,
    vertex_types: 3,
};

/// Bumped whenever the generator changes, so that an old file is rewritten.
const GENERATOR_VERSION: u32 = 3;

/// Marsaglia's xorshift64*.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

/// A run of tiles `[from, to)` that something runs on.
#[derive(Clone, Copy)]
struct Span {
    from: u64,
    to: u64,
}

impl Span {
    fn random(rng: &mut Rng, tiles: u64) -> Span {
        // A quarter run on every tile; the rest on a run of 1% to 60% of them.
        if rng.below(4) == 0 {
            return Span { from: 0, to: tiles };
        }
        let len = (tiles * rng.range(1, 60) / 100).max(1);
        let from = rng.below(tiles - len + 1);
        Span {
            from,
            to: from + len,
        }
    }

    fn contains(&self, tile: u64) -> bool {
        (self.from..self.to).contains(&tile)
    }
}

struct Gen<W: Write> {
    out: W,
    rng: Rng,
    tiles: u64,
    buf: itoa_buf::Buf,
}

/// A small integer formatter (no dependency for it).
mod itoa_buf {
    pub struct Buf([u8; 20]);

    impl Buf {
        pub fn new() -> Buf {
            Buf([0; 20])
        }

        pub fn format(&mut self, mut v: u64) -> &[u8] {
            let mut i = 20;
            loop {
                i -= 1;
                self.0[i] = b'0' + (v % 10) as u8;
                v /= 10;
                if v == 0 {
                    break;
                }
            }
            &self.0[i..]
        }
    }
}

impl<W: Write> Gen<W> {
    fn raw(&mut self, s: &str) -> io::Result<()> {
        self.out.write_all(s.as_bytes())
    }

    fn num(&mut self, v: u64) -> io::Result<()> {
        let digits = self.buf.format(v);
        self.out.write_all(digits)
    }

    fn key(&mut self, first: bool, key: &str) -> io::Result<()> {
        if !first {
            self.raw(",")?;
        }
        self.raw("\"")?;
        self.raw(key)?;
        self.raw("\":")
    }

    /// A per-tile array: `value(tile)` on the tiles of `span`, zero elsewhere.
    fn tiles(&mut self, span: Span, mut value: impl FnMut(&mut Rng) -> u64) -> io::Result<()> {
        self.raw("[")?;
        for tile in 0..self.tiles {
            if tile > 0 {
                self.raw(",")?;
            }
            let v = if span.contains(tile) {
                value(&mut self.rng)
            } else {
                0
            };
            self.num(v)?;
        }
        self.raw("]")
    }

    /// A 2-D array, a row per span.
    fn rows(&mut self, spans: &[Span], lo: u64, hi: u64) -> io::Result<()> {
        self.raw("[")?;
        for (i, &span) in spans.iter().enumerate() {
            if i > 0 {
                self.raw(",")?;
            }
            self.tiles(span, |r| r.range(lo, hi))?;
        }
        self.raw("]")
    }

    fn all(&self) -> Span {
        Span {
            from: 0,
            to: self.tiles,
        }
    }

    fn none(&self) -> Span {
        Span { from: 0, to: 0 }
    }
}

/// Writes the graph profile of `sizes` to `out`.
fn generate<W: Write>(out: W, sizes: Sizes) -> io::Result<W> {
    let tiles = sizes.ipus * TILES_PER_IPU;
    let mut g = Gen {
        out,
        rng: Rng(0x005E_ED0F_9091_u64),
        tiles,
        buf: itoa_buf::Buf::new(),
    };
    let cs_spans: Vec<Span> = (0..sizes.compute_sets)
        .map(|_| Span::random(&mut g.rng, tiles))
        .collect();
    let ex_spans: Vec<Span> = (0..sizes.exchanges)
        .map(|_| Span::random(&mut g.rng, tiles))
        .collect();
    let vt_spans: Vec<Span> = (0..sizes.vertex_types)
        .map(|_| Span::random(&mut g.rng, tiles))
        .collect();

    g.raw("{")?;
    // computeSets (a hardware target: no cycle estimates).
    g.key(true, "computeSets")?;
    g.raw("{")?;
    g.key(true, "names")?;
    g.raw("[")?;
    for i in 0..sizes.compute_sets {
        if i > 0 {
            g.raw(",")?;
        }
        g.raw(&format!("\"model/layer{}/op{}/Compute\"", i / 8, i % 8))?;
    }
    g.raw("]")?;
    g.key(false, "vertexCounts")?;
    g.raw("[")?;
    for (i, span) in cs_spans.iter().enumerate() {
        if i > 0 {
            g.raw(",")?;
        }
        let a = (span.to - span.from) * g.rng.range(1, 6);
        g.raw("[")?;
        g.num(a)?;
        g.raw(",")?;
        g.num(span.to - span.from)?;
        g.raw("]")?;
    }
    g.raw("]")?;
    g.key(false, "vertexTypes")?;
    g.raw("[")?;
    for i in 0..sizes.compute_sets {
        if i > 0 {
            g.raw(",")?;
        }
        let a = g.rng.below(sizes.vertex_types as u64);
        g.raw("[")?;
        g.num(a)?;
        g.raw(",0]")?;
    }
    g.raw("]}")?;

    g.key(false, "controlPrograms")?;
    g.raw("[0]")?;

    // Internal exchanges.
    g.key(false, "exchanges")?;
    g.raw("{")?;
    g.key(true, "bytesReceivedByTile")?;
    g.rows(&ex_spans, 16, 4096)?;
    g.key(false, "bytesSentByTile")?;
    g.rows(&ex_spans, 16, 4096)?;
    g.key(false, "codeBytesByTile")?;
    g.rows(&ex_spans, 24, 400)?;
    g.key(false, "cyclesByTile")?;
    g.rows(&ex_spans, 20, 900)?;
    g.raw("}")?;

    {
        let spans: Vec<Span> = (0..sizes.external)
            .map(|_| Span::random(&mut g.rng, tiles))
            .collect();
        g.key(false, "externalExchanges")?;
        g.raw("{")?;
        g.key(true, "bytesReceivedByTile")?;
        g.rows(&spans, 256, 65_536)?;
        g.key(false, "bytesSentByTile")?;
        g.rows(&spans, 256, 65_536)?;
        g.key(false, "estimatedCyclesByTile")?;
        g.rows(&spans, 500, 20_000)?;
        g.raw("}")?;
    }

    g.key(false, "functionPrograms")?;
    g.raw("[1]")?;
    g.key(false, "graph")?;
    let vertices: u64 = cs_spans.iter().map(|s| (s.to - s.from) * 2).sum();
    g.raw(&format!(
        "{{\"numComputeSets\":{},\"numEdges\":{},\"numVars\":{},\"numVertices\":{vertices}}}",
        sizes.compute_sets,
        vertices * 3,
        sizes.compute_sets * 40
    ))?;

    {
        let spans: Vec<Span> = (0..sizes.host)
            .map(|_| Span::random(&mut g.rng, tiles))
            .collect();
        g.key(false, "hostExchanges")?;
        g.raw("{")?;
        g.key(true, "bytesReceivedByTile")?;
        g.rows(&spans, 256, 65_536)?;
        g.key(false, "bytesSentByTile")?;
        let none = vec![g.none(); spans.len()];
        g.rows(&none, 0, 0)?;
        g.key(false, "estimatedCyclesByTile")?;
        g.rows(&spans, 500, 20_000)?;
        g.raw("}")?;
    }

    // Memory.
    g.key(false, "memory")?;
    g.raw("{")?;
    g.key(true, "byCategory")?;
    g.raw("{")?;
    const CATEGORIES: [&str; 25] = [
        "constant",
        "controlCode",
        "controlId",
        "controlTable",
        "copyDescriptor",
        "globalExchangeCode",
        "globalExchangePacketHeader",
        "globalMessage",
        "hostExchangeCode",
        "hostExchangePacketHeader",
        "hostMessage",
        "instrumentationResults",
        "internalExchangeCode",
        "message",
        "multiple",
        "outputEdge",
        "rearrangement",
        "sharedCodeStorage",
        "sharedDataStorage",
        "stack",
        "variable",
        "vectorListDescriptor",
        "vertexCode",
        "vertexFieldData",
        "vertexInstanceState",
    ];
    for (i, name) in CATEGORIES.iter().enumerate() {
        g.key(i == 0, name)?;
        // A few categories are used on every tile; most on some tiles, or none.
        let span = match i % 5 {
            0 | 1 => g.all(),
            4 => g.none(),
            _ => Span::random(&mut g.rng, tiles),
        };
        let (lo, hi) = if *name == "variable" {
            (50_000, 300_000)
        } else {
            (8, 12_000)
        };
        g.raw("{")?;
        for (k, region) in ["interleaved", "nonInterleaved", "overflowed"]
            .iter()
            .enumerate()
        {
            g.key(k == 0, region)?;
            g.raw("{")?;
            let used = if *region == "nonInterleaved" {
                span
            } else {
                g.none()
            };
            g.key(true, "nonOverlapped")?;
            g.tiles(used, |r| r.range(lo, hi))?;
            g.key(false, "overlapped")?;
            let overlapped = if i % 3 == 0 { used } else { g.none() };
            g.tiles(overlapped, |r| r.range(lo / 2, hi / 2))?;
            g.raw("}")?;
        }
        g.key(false, "total")?;
        g.tiles(span, |r| r.range(lo, hi * 2))?;
        g.raw("}")?;
    }
    g.raw("}")?;
    write_breakdown(&mut g, "byComputeSet", &cs_spans)?;
    // byTile: the parts add up, and gaps only add.
    let mut parts: Vec<[u64; 4]> = Vec::with_capacity(tiles as usize);
    for _ in 0..tiles {
        let interleaved = g.rng.range(1_024, 65_536);
        let non_interleaved = g.rng.range(100_000, 540_000);
        let gaps = [g.rng.range(0, 2_048), g.rng.range(0, 30_000)];
        parts.push([interleaved, non_interleaved, gaps[0], gaps[1]]);
    }
    g.key(false, "byTile")?;
    g.raw("{")?;
    let column = |k: usize, p: &[u64; 4]| match k {
        0 => p[0],
        1 => p[0] + p[2],
        2 => p[1],
        3 => p[1] + p[3],
        4 | 5 => 0,
        6 => p[0] + p[1],
        _ => p[0] + p[1] + p[2] + p[3] + 512,
    };
    for (k, key) in [
        "interleaved",
        "interleavedIncludingGaps",
        "nonInterleaved",
        "nonInterleavedIncludingGaps",
        "overflowed",
        "overflowedIncludingGaps",
        "total",
        "totalIncludingGaps",
    ]
    .iter()
    .enumerate()
    {
        g.key(k == 0, key)?;
        g.raw("[")?;
        for (tile, p) in parts.iter().enumerate() {
            if tile > 0 {
                g.raw(",")?;
            }
            g.num(column(k, p))?;
        }
        g.raw("]")?;
    }
    g.raw("}")?;
    write_breakdown(&mut g, "byVertexType", &vt_spans)?;
    g.key(false, "liveness")?;
    let all = g.all();
    g.raw("{\"alwaysLive\":{\"bytesByTile\":")?;
    g.tiles(all, |r| r.range(40_000, 400_000))?;
    g.raw("},\"notAlwaysLive\":{\"byProgram\":{\"bytes\":120000,\"children\":[{\"bytes\":90000,\"program\":2},{\"bytes\":120000,\"program\":3}]},\"maxBytesByTile\":")?;
    g.tiles(all, |r| r.range(1_000, 200_000))?;
    g.raw("}}}")?;

    g.key(false, "optimizationInfo")?;
    g.raw("{\"maxCopyTiles\":1216.0,\"schedulingSeconds\":41.25}")?;

    // Programs: a control Sequence over every compute set and exchange, and a function.
    g.key(false, "programs")?;
    g.raw("[")?;
    let n_cs = sizes.compute_sets;
    let n_ex = sizes.exchanges;
    let first = 2;
    let total = first + n_cs + n_ex;
    g.raw("{\"children\":[")?;
    for p in first..total {
        if p > first {
            g.raw(",")?;
        }
        g.num(p as u64)?;
    }
    g.raw("],\"type\":\"Sequence\"},{\"children\":[2],\"name\":\"fn\",\"type\":\"Sequence\"}")?;
    for cs in 0..n_cs {
        g.raw(&format!(
            ",{{\"computeSet\":{cs},\"type\":\"OnTileExecute\"}}"
        ))?;
    }
    for ex in 0..n_ex {
        g.raw(&format!(
            ",{{\"exchange\":{ex},\"memoryByInstruction\":{{\"delay\":24,\"receiveMux\":32,\"send\":8,\"total\":64}},\"name\":\"/Exchange{ex}\",\"type\":\"DoExchange\"}}"
        ))?;
    }
    g.raw("]")?;

    g.key(false, "target")?;
    g.raw(&format!(
        "{{\"bytesPerIPU\":{},\"bytesPerTile\":{BYTES_PER_TILE},\"clockFrequency\":1330000000.0,\"minSyncDelay\":14,\"numIPUs\":{},\"numTiles\":{tiles},\"relativeSyncDelayByTile\":",
        BYTES_PER_TILE * TILES_PER_IPU,
        sizes.ipus
    ))?;
    g.raw("[")?;
    for t in 0..TILES_PER_IPU {
        if t > 0 {
            g.raw(",")?;
        }
        g.num(t / 64)?;
    }
    g.raw(&format!(
        "],\"tilesPerIPU\":{TILES_PER_IPU},\"totalMemory\":{},\"type\":\"IPU\"}}",
        BYTES_PER_TILE * tiles
    ))?;

    g.key(false, "vertexTypes")?;
    g.raw("{\"names\":[")?;
    for i in 0..sizes.vertex_types {
        if i > 0 {
            g.raw(",")?;
        }
        g.raw(&format!("\"popops::Vertex{i}<float>\""))?;
    }
    g.raw("],\"sizes\":[")?;
    for i in 0..sizes.vertex_types {
        if i > 0 {
            g.raw(",")?;
        }
        g.num(8 + (i as u64 % 7) * 4)?;
    }
    g.raw("]}}")?;
    Ok(g.out)
}

fn write_breakdown<W: Write>(g: &mut Gen<W>, key: &str, spans: &[Span]) -> io::Result<()> {
    g.key(false, key)?;
    g.raw("{")?;
    let none: Vec<Span> = spans.iter().map(|_| g.none()).collect();
    for (k, (array, lo, hi, sparse)) in [
        ("codeBytes", 64, 4_000, false),
        ("copyPtrBytes", 0, 0, true),
        ("descriptorBytes", 8, 256, true),
        ("edgePtrBytes", 4, 512, false),
        ("paddingBytes", 0, 16, false),
        ("totalBytes", 200, 8_000, false),
        ("vertexDataBytes", 16, 2_048, false),
    ]
    .iter()
    .enumerate()
    {
        g.key(k == 0, array)?;
        if *sparse {
            g.rows(&none, *lo, *hi)?;
        } else {
            g.rows(spans, *lo, *hi)?;
        }
    }
    g.raw("}")
}

/// The generated file of `sizes` under `target/bench-data/<stem>.json`, written unless a file of
/// this generator version is there.
pub fn prepare(stem: &str, sizes: Sizes) -> io::Result<PathBuf> {
    let dir = data_dir();
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{stem}.json"));
    let stamp = dir.join(format!("{stem}.version"));
    let version = format!("{GENERATOR_VERSION} {sizes:?}");
    if path.is_file() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(&version) {
        return Ok(path);
    }
    let file = std::fs::File::create(&path)?;
    let mut out = generate(BufWriter::with_capacity(1 << 20, file), sizes)?;
    out.flush()?;
    std::fs::write(&stamp, version)?;
    Ok(path)
}
