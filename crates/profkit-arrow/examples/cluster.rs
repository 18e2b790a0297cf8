//! Writes the XSpaces of a small made-up training cluster, one `<host>.xplane.pb` per host, for
//! the examples of `docs/scale.md` and the real-client check (`conformance/arrow/check.sh`).
//!
//! Each host has a `/host:CPU` plane with a `Steps` line (one event per step, `step_num` and
//! `group_id` stats) and two `/device:GPU:<n>` planes whose streams run the step's ops (`hlo_op`,
//! `hlo_module`, `tf_op`, `step_num`, `group_id`, `correlation_id`, `flops`, `bytes_accessed`)
//! with idle gaps between them. One host is slow at each step (the straggler the docs' query
//! finds). The numbers come from a deterministic generator, so every run writes the same bytes.
//!
//! `cargo run -p profkit-arrow --example cluster -- OUT_DIR [HOSTS] [STEPS]` (defaults 4 and 20).

use std::path::PathBuf;

use profkit_xplane::{PlaneBuilder, XPlane, XSpace, encode};

/// A small deterministic generator (64-bit linear congruential, top bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below.max(1)
    }
}

const OPS: [(&str, &str); 6] = [
    ("fusion.1", "model/dense/MatMul"),
    ("fusion.2", "model/dense/BiasAdd"),
    ("convolution.3", "model/conv/Conv2D"),
    ("all-reduce.4", "gradients/AllReduce"),
    ("copy.5", "model/Identity"),
    ("reduce.6", "loss/Mean"),
];

fn host_space(host: usize, steps: usize, rng: &mut Lcg) -> XSpace {
    let start_ns: i64 = 1_700_000_000_000_000_000;
    let mut cpu = XPlane::default();
    let mut gpus = [XPlane::default(), XPlane::default()];
    let mut cpu_b = PlaneBuilder::new(&mut cpu);
    cpu_b.set_name("/host:CPU").set_id(0);
    let mut steps_line = cpu_b.line(1);
    steps_line.set_name("Steps").set_timestamp_ns(start_ns);
    let mut device_builders: Vec<PlaneBuilder<'_>> = gpus
        .iter_mut()
        .enumerate()
        .map(|(i, plane)| {
            let mut b = PlaneBuilder::new(plane);
            b.set_name(format!("/device:GPU:{i}")).set_id(i as i64 + 1);
            b
        })
        .collect();
    let mut step_start: i64 = 0;
    let mut correlation = 0u64;
    for step in 0..steps {
        let straggler = (step * 7 + 3) % 4;
        let slow = if host % 4 == straggler { 3 } else { 1 };
        let mut step_end = step_start;
        for (gpu, b) in device_builders.iter_mut().enumerate() {
            for stream in 0..2i64 {
                let mut line = b.line(stream + 7);
                line.set_name(format!("Stream #{}", stream + 7))
                    .set_timestamp_ns(start_ns);
                let mut t = step_start + 1_000_000;
                for (op, (hlo, tf)) in OPS.iter().enumerate() {
                    if (op + stream as usize) % 2 == 1 && op != 3 {
                        continue;
                    }
                    t += 50_000 + rng.next(400_000) as i64;
                    let duration = (200_000 + rng.next(2_000_000) as i64) * slow;
                    correlation += 1;
                    line.add_event(hlo)
                        .set_offset_ps(t)
                        .set_duration_ps(duration)
                        .add_stat("hlo_op", *hlo)
                        .add_stat("hlo_module", "jit_train_step")
                        .add_stat("tf_op", *tf)
                        .add_stat("step_num", step as i64)
                        .add_stat("group_id", step as i64)
                        .add_stat("correlation_id", correlation)
                        .add_stat("flops", (duration as u64) * 1000 + gpu as u64)
                        .add_stat("bytes_accessed", rng.next(1 << 24) as i64);
                    t += duration;
                }
                step_end = step_end.max(t);
            }
        }
        let duration = step_end + 500_000 - step_start;
        steps_line
            .add_event(&format!("train {step}"))
            .set_offset_ps(step_start)
            .set_duration_ps(duration)
            .add_stat("step_num", step as i64)
            .add_stat("group_id", step as i64);
        step_start += duration + 100_000 + rng.next(1_000_000) as i64;
    }
    drop(device_builders);
    let [gpu0, gpu1] = gpus;
    XSpace {
        planes: vec![cpu, gpu0, gpu1],
        hostnames: vec![format!("worker-{host}")],
        ..XSpace::default()
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(
        args.next()
            .ok_or("usage: cluster OUT_DIR [HOSTS] [STEPS]")?,
    );
    let hosts: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(4);
    let steps: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(20);
    std::fs::create_dir_all(&out)?;
    let mut rng = Lcg(0x5eed_1234);
    for host in 0..hosts {
        let space = host_space(host, steps, &mut rng);
        let path = out.join(format!("worker-{host}.xplane.pb"));
        std::fs::write(&path, encode(&space))?;
        println!("{}", path.display());
    }
    Ok(())
}
