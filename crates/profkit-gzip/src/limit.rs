//! How much a gzip input may decompress to.

use std::fmt;

/// What a gzip input may decompress to, at most. Real profiles compress 5 to 25 times (Chrome
/// traces of PyTorch and JAX, XSpaces); a gzip bomb compresses a thousand times, so a ratio
/// catches it long before its data is in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// At most this many decompressed bytes.
    Bytes(u64),
    /// At most `ratio` times the compressed size, plus `floor` bytes (so that a small file that
    /// compresses well is never refused). When the compressed size is not known in advance
    /// (standard input), the compressed bytes read so far count.
    Ratio {
        /// Decompressed bytes allowed per compressed byte.
        ratio: u64,
        /// Decompressed bytes allowed whatever the compressed size.
        floor: u64,
    },
    /// No limit.
    Unlimited,
}

/// The default ratio: [`Limit::default`] allows this many decompressed bytes per compressed one.
pub const DEFAULT_RATIO: u64 = 16;

/// The default floor: [`Limit::default`] always allows this many decompressed bytes (4 MiB).
pub const DEFAULT_FLOOR: u64 = 4 << 20;

impl Default for Limit {
    fn default() -> Limit {
        Limit::Ratio {
            ratio: DEFAULT_RATIO,
            floor: DEFAULT_FLOOR,
        }
    }
}

impl Limit {
    /// Reads a limit as the command line takes it: `unlimited`; a ratio `64x` (times the
    /// compressed size, plus the default floor); or a size in bytes with an optional binary
    /// suffix, `k`, `M`, `G` or `T` (`2G` is 2 GiB; `KiB`, `MiB`, ... and `B` also do).
    pub fn parse(text: &str) -> Result<Limit, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("unlimited") || text.eq_ignore_ascii_case("none") {
            return Ok(Limit::Unlimited);
        }
        if let Some(ratio) = text.strip_suffix(['x', 'X']) {
            let ratio: u64 = ratio
                .trim()
                .parse()
                .map_err(|_| format!("{text:?}: a ratio is a whole number followed by x (64x)"))?;
            if ratio == 0 {
                return Err(format!("{text:?}: a ratio must be at least 1x"));
            }
            return Ok(Limit::Ratio {
                ratio,
                floor: DEFAULT_FLOOR,
            });
        }
        let digits = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(digits);
        let number: u64 = number.parse().map_err(|_| {
            format!("{text:?}: expected a size (500M, 2G, bytes), a ratio (64x) or unlimited")
        })?;
        let unit = unit.trim();
        let unit = unit
            .strip_suffix("iB")
            .or_else(|| unit.strip_suffix('B'))
            .unwrap_or(unit);
        let shift = match unit {
            "" => 0,
            "k" | "K" => 10,
            "m" | "M" => 20,
            "g" | "G" => 30,
            "t" | "T" => 40,
            _ => {
                return Err(format!(
                    "{text:?}: unknown unit {unit:?} (k, M, G or T, powers of 1024)"
                ));
            }
        };
        number
            .checked_mul(1 << shift)
            .map(Limit::Bytes)
            .ok_or_else(|| format!("{text:?}: too large"))
    }

    /// The limit in bytes for an input of `compressed` bytes (`None`: not known in advance).
    pub(crate) fn bytes_for(self, compressed: u64) -> u64 {
        match self {
            Limit::Bytes(n) => n,
            Limit::Ratio { ratio, floor } => ratio.saturating_mul(compressed).saturating_add(floor),
            Limit::Unlimited => u64::MAX,
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Bytes(n) => write!(f, "{}", size(*n)),
            Limit::Ratio { ratio, floor } => {
                write!(
                    f,
                    "{ratio} times the compressed size, plus {}",
                    size(*floor)
                )
            }
            Limit::Unlimited => f.write_str("unlimited"),
        }
    }
}

/// `n` bytes, said in the largest binary unit that divides it, else in bytes.
pub(crate) fn size(n: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n % (1 << shift) == 0 {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_as_the_command_line_gives_them() {
        assert_eq!(Limit::parse("unlimited"), Ok(Limit::Unlimited));
        assert_eq!(Limit::parse("2G"), Ok(Limit::Bytes(2 << 30)));
        assert_eq!(Limit::parse("500MiB"), Ok(Limit::Bytes(500 << 20)));
        assert_eq!(Limit::parse("1024"), Ok(Limit::Bytes(1024)));
        assert_eq!(
            Limit::parse("64x"),
            Ok(Limit::Ratio {
                ratio: 64,
                floor: DEFAULT_FLOOR
            })
        );
        assert!(Limit::parse("0x").is_err());
        assert!(Limit::parse("12Q").is_err());
        assert!(Limit::parse("").is_err());
        assert!(Limit::parse("99999999999999999999T").is_err());
        assert!(Limit::parse("18446744073709551615T").is_err());
        assert_eq!(size(4 << 20), "4 MiB");
        assert_eq!(size(1000), "1000 bytes");
        assert_eq!(
            Limit::default().to_string(),
            "16 times the compressed size, plus 4 MiB"
        );
    }
}
