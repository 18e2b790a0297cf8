//! Writes a real-shaped TensorFlow host profile of about a given size (see
//! `profkit_bench::real_shaped`): `real-shaped OUT.xplane.pb SIZE`, the size in bytes or with
//! a suffix `K`, `M` or `G` (powers of 10^3).

use std::fs::File;
use std::io::BufWriter;
use std::process::ExitCode;

fn size(text: &str) -> Option<u64> {
    let (digits, scale) = match text.char_indices().last()? {
        (i, 'K' | 'k') => (&text[..i], 1_000),
        (i, 'M' | 'm') => (&text[..i], 1_000_000),
        (i, 'G' | 'g') => (&text[..i], 1_000_000_000),
        _ => (text, 1),
    };
    let value: f64 = digits.parse().ok()?;
    Some((value * scale as f64) as u64)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(out), Some(bytes)) = (args.first(), args.get(1).and_then(|s| size(s))) else {
        eprintln!("usage: real-shaped OUT.xplane.pb SIZE (bytes, or with K, M or G)");
        return ExitCode::from(2);
    };
    let start = std::time::Instant::now();
    let written = File::create(out).and_then(|f| {
        profkit_bench::real_shaped::write(BufWriter::with_capacity(1 << 20, f), bytes)
    });
    match written {
        Ok(w) => {
            eprintln!(
                "{out}: {} bytes, {} events, {} steps, in {:.1} s",
                w.bytes,
                w.events,
                w.steps,
                start.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{out}: {e}");
            ExitCode::FAILURE
        }
    }
}
