//! The large XSpace the trace viewer and Parquet benches convert: GPU planes written one at a
//! time, so that generating a file of gigabytes holds one plane.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use profkit_xplane::{PlaneBuilder, XPlane, XSpaceWriter};

/// Writes a space of `planes` GPU planes of `events_per_plane` events each, plane by plane (so
/// the generator's memory is one plane), and returns its size.
pub fn write_large(path: &Path, planes: usize, events_per_plane: usize) -> u64 {
    let mut writer = XSpaceWriter::new(BufWriter::with_capacity(
        1 << 20,
        File::create(path).expect("create"),
    ));
    let names: Vec<String> = (0..1000)
        .map(|i| format!("model/layer_{}/op_{i}", i % 48))
        .collect();
    for p in 0..planes {
        let mut plane = XPlane::default();
        {
            let mut b = PlaneBuilder::new(&mut plane);
            b.set_id(p as i64).set_name(format!("/device:GPU:{p}"));
            for stream in 0..4i64 {
                let mut line = b.line(stream + 1);
                line.set_name(format!("Stream #{}", stream + 1))
                    .set_timestamp_ns(1_000);
                let mut t: i64 = 0;
                for e in 0..events_per_plane / 4 {
                    let name = &names[(e * 7 + stream as usize) % names.len()];
                    line.add_event(name)
                        .set_offset_ps(t)
                        .set_duration_ps(1_000 + (e as i64 % 5_000) * 1_000)
                        .add_stat("correlation_id", (p * events_per_plane + e) as u64)
                        .add_stat("occupancy", 0.25 + (e % 4) as f64 / 8.0);
                    t += 8_000_000;
                }
            }
        }
        writer.write_plane(&plane).expect("write a plane");
    }
    writer.finish().expect("flush").flush().expect("flush");
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}
