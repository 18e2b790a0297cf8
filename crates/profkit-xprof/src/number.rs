//! Doubles as nlohmann's JSON library prints them, which xprof's DataTables go through: Grisu2
//! (Loitsch's algorithm with nlohmann's boundaries and rounding), whose digits are not always the
//! shortest that read back (`0.8503226073432399` where the shortest is `0.85032260734324`), laid
//! out in fixed notation for decimal exponents from -4 to 15 and as `d.ddde+XX` outside them.

use std::fmt::Write as _;

/// A 64-bit significand and a binary exponent.
#[derive(Clone, Copy)]
struct DiyFp {
    f: u64,
    e: i32,
}

impl DiyFp {
    fn sub(self, y: DiyFp) -> DiyFp {
        DiyFp {
            f: self.f.wrapping_sub(y.f),
            e: self.e,
        }
    }

    /// The product, its upper 64 bits rounded half up.
    fn mul(self, y: DiyFp) -> DiyFp {
        let p = u128::from(self.f) * u128::from(y.f);
        let h = (p >> 64) as u64;
        let round = ((p >> 63) & 1) as u64;
        DiyFp {
            f: h.wrapping_add(round),
            e: self.e + y.e + 64,
        }
    }

    fn normalize(mut self) -> DiyFp {
        if self.f == 0 {
            return self;
        }
        let shift = self.f.leading_zeros();
        self.f <<= shift;
        self.e -= shift as i32;
        self
    }

    fn normalize_to(self, e: i32) -> DiyFp {
        let delta = self.e - e;
        DiyFp {
            f: self.f << delta,
            e,
        }
    }
}

/// `10^k` as a normalized `DiyFp`, every eighth power from `10^-300` to `10^324`.
const CACHED_POWERS: [(u64, i32, i32); 79] = [
    (0xAB70FE17C79AC6CA, -1060, -300),
    (0xFF77B1FCBEBCDC4F, -1034, -292),
    (0xBE5691EF416BD60C, -1007, -284),
    (0x8DD01FAD907FFC3C, -980, -276),
    (0xD3515C2831559A83, -954, -268),
    (0x9D71AC8FADA6C9B5, -927, -260),
    (0xEA9C227723EE8BCB, -901, -252),
    (0xAECC49914078536D, -874, -244),
    (0x823C12795DB6CE57, -847, -236),
    (0xC21094364DFB5637, -821, -228),
    (0x9096EA6F3848984F, -794, -220),
    (0xD77485CB25823AC7, -768, -212),
    (0xA086CFCD97BF97F4, -741, -204),
    (0xEF340A98172AACE5, -715, -196),
    (0xB23867FB2A35B28E, -688, -188),
    (0x84C8D4DFD2C63F3B, -661, -180),
    (0xC5DD44271AD3CDBA, -635, -172),
    (0x936B9FCEBB25C996, -608, -164),
    (0xDBAC6C247D62A584, -582, -156),
    (0xA3AB66580D5FDAF6, -555, -148),
    (0xF3E2F893DEC3F126, -529, -140),
    (0xB5B5ADA8AAFF80B8, -502, -132),
    (0x87625F056C7C4A8B, -475, -124),
    (0xC9BCFF6034C13053, -449, -116),
    (0x964E858C91BA2655, -422, -108),
    (0xDFF9772470297EBD, -396, -100),
    (0xA6DFBD9FB8E5B88F, -369, -92),
    (0xF8A95FCF88747D94, -343, -84),
    (0xB94470938FA89BCF, -316, -76),
    (0x8A08F0F8BF0F156B, -289, -68),
    (0xCDB02555653131B6, -263, -60),
    (0x993FE2C6D07B7FAC, -236, -52),
    (0xE45C10C42A2B3B06, -210, -44),
    (0xAA242499697392D3, -183, -36),
    (0xFD87B5F28300CA0E, -157, -28),
    (0xBCE5086492111AEB, -130, -20),
    (0x8CBCCC096F5088CC, -103, -12),
    (0xD1B71758E219652C, -77, -4),
    (0x9C40000000000000, -50, 4),
    (0xE8D4A51000000000, -24, 12),
    (0xAD78EBC5AC620000, 3, 20),
    (0x813F3978F8940984, 30, 28),
    (0xC097CE7BC90715B3, 56, 36),
    (0x8F7E32CE7BEA5C70, 83, 44),
    (0xD5D238A4ABE98068, 109, 52),
    (0x9F4F2726179A2245, 136, 60),
    (0xED63A231D4C4FB27, 162, 68),
    (0xB0DE65388CC8ADA8, 189, 76),
    (0x83C7088E1AAB65DB, 216, 84),
    (0xC45D1DF942711D9A, 242, 92),
    (0x924D692CA61BE758, 269, 100),
    (0xDA01EE641A708DEA, 295, 108),
    (0xA26DA3999AEF774A, 322, 116),
    (0xF209787BB47D6B85, 348, 124),
    (0xB454E4A179DD1877, 375, 132),
    (0x865B86925B9BC5C2, 402, 140),
    (0xC83553C5C8965D3D, 428, 148),
    (0x952AB45CFA97A0B3, 455, 156),
    (0xDE469FBD99A05FE3, 481, 164),
    (0xA59BC234DB398C25, 508, 172),
    (0xF6C69A72A3989F5C, 534, 180),
    (0xB7DCBF5354E9BECE, 561, 188),
    (0x88FCF317F22241E2, 588, 196),
    (0xCC20CE9BD35C78A5, 614, 204),
    (0x98165AF37B2153DF, 641, 212),
    (0xE2A0B5DC971F303A, 667, 220),
    (0xA8D9D1535CE3B396, 694, 228),
    (0xFB9B7CD9A4A7443C, 720, 236),
    (0xBB764C4CA7A44410, 747, 244),
    (0x8BAB8EEFB6409C1A, 774, 252),
    (0xD01FEF10A657842C, 800, 260),
    (0x9B10A4E5E9913129, 827, 268),
    (0xE7109BFBA19C0C9D, 853, 276),
    (0xAC2820D9623BF429, 880, 284),
    (0x80444B5E7AA7CF85, 907, 292),
    (0xBF21E44003ACDD2D, 933, 300),
    (0x8E679C2F5E44FF8F, 960, 308),
    (0xD433179D9C8CB841, 986, 316),
    (0x9E19DB92B4E31BA9, 1013, 324),
];

/// The value and its neighbours' midpoints (`compute_boundaries`), for a positive finite value.
fn boundaries(value: f64) -> (DiyFp, DiyFp, DiyFp) {
    const BIAS: i32 = 1075;
    const HIDDEN: u64 = 1 << 52;
    let bits = value.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    let f = bits & (HIDDEN - 1);
    let v = if e == 0 {
        DiyFp { f, e: 1 - BIAS }
    } else {
        DiyFp {
            f: f + HIDDEN,
            e: e - BIAS,
        }
    };
    let lower_closer = f == 0 && e > 1;
    let m_plus = DiyFp {
        f: 2 * v.f + 1,
        e: v.e - 1,
    };
    let m_minus = if lower_closer {
        DiyFp {
            f: 4 * v.f - 1,
            e: v.e - 2,
        }
    } else {
        DiyFp {
            f: 2 * v.f - 1,
            e: v.e - 1,
        }
    };
    let w_plus = m_plus.normalize();
    let w_minus = m_minus.normalize_to(w_plus.e);
    (v.normalize(), w_minus, w_plus)
}

const ALPHA: i32 = -60;

/// The cached power that brings a binary exponent `e` into `[ALPHA, ALPHA + 28]`.
fn cached_power(e: i32) -> (DiyFp, i32) {
    let f = ALPHA - e - 1;
    let k = (f * 78913) / (1 << 18) + i32::from(f > 0);
    let index = ((300 + k + 7) / 8).clamp(0, CACHED_POWERS.len() as i32 - 1) as usize;
    let (f, e, k) = CACHED_POWERS[index];
    (DiyFp { f, e }, k)
}

/// The number of decimal digits of `n` and the largest power of ten not above it.
fn largest_pow10(n: u32) -> (i32, u32) {
    let mut pow10 = 1_000_000_000u32;
    let mut digits = 10;
    while digits > 1 && n < pow10 {
        pow10 /= 10;
        digits -= 1;
    }
    (digits, pow10)
}

/// `grisu2_round`: moves the last digit down while that brings the digits nearer the value.
fn round(digits: &mut [u8], dist: u64, delta: u64, mut rest: u64, ten_k: u64) {
    while rest < dist
        && delta - rest >= ten_k
        && (rest + ten_k < dist || dist - rest > rest + ten_k - dist)
    {
        if let Some(last) = digits.last_mut() {
            *last -= 1;
        }
        rest += ten_k;
    }
}

/// The digits and decimal exponent of a positive finite value: value = digits x 10^exponent.
fn grisu2(value: f64) -> (Vec<u8>, i32) {
    let (v, m_minus, m_plus) = boundaries(value);
    let (c, k) = cached_power(m_plus.e);
    let w = v.mul(c);
    let w_minus = m_minus.mul(c);
    let w_plus = m_plus.mul(c);
    let lo = DiyFp {
        f: w_minus.f + 1,
        e: w_minus.e,
    };
    let hi = DiyFp {
        f: w_plus.f - 1,
        e: w_plus.e,
    };
    let mut exponent = -k;
    let mut delta = hi.sub(lo).f;
    let mut dist = hi.sub(w).f;
    let shift = (-hi.e) as u32;
    let one = 1u64 << shift;
    let mut p1 = (hi.f >> shift) as u32;
    let mut p2 = hi.f & (one - 1);
    let mut digits = Vec::with_capacity(17);
    let (mut n, mut pow10) = largest_pow10(p1);
    while n > 0 {
        let d = p1 / pow10;
        p1 %= pow10;
        digits.push(b'0' + d as u8);
        n -= 1;
        let rest = (u64::from(p1) << shift) + p2;
        if rest <= delta {
            exponent += n;
            round(&mut digits, dist, delta, rest, u64::from(pow10) << shift);
            return (digits, exponent);
        }
        pow10 /= 10;
    }
    let mut m = 0;
    loop {
        p2 *= 10;
        let d = p2 >> shift;
        p2 &= one - 1;
        digits.push(b'0' + d as u8);
        m += 1;
        delta *= 10;
        dist *= 10;
        if p2 <= delta {
            break;
        }
    }
    exponent -= m;
    round(&mut digits, dist, delta, p2, one);
    (digits, exponent)
}

/// A double as nlohmann's `dump` prints it: `null` when not finite, `0.0` for zero.
pub fn write_number(out: &mut String, v: f64) {
    if !v.is_finite() {
        out.push_str("null");
        return;
    }
    if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    if v < 0.0 {
        out.push('-');
    }
    let (digits, exponent) = grisu2(v.abs());
    let digits = String::from_utf8(digits).unwrap_or_default();
    let k = digits.len() as i32;
    // The value is 0.digits x 10^n.
    let n = k + exponent;
    if k <= n && n <= 15 {
        out.push_str(&digits);
        for _ in k..n {
            out.push('0');
        }
        out.push_str(".0");
    } else if 0 < n && n <= 15 {
        let split = n as usize;
        out.push_str(&digits[..split]);
        out.push('.');
        out.push_str(&digits[split..]);
    } else if -4 < n && n <= 0 {
        out.push_str("0.");
        for _ in n..0 {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", e.unsigned_abs());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(v: f64) -> String {
        let mut s = String::new();
        write_number(&mut s, v);
        s
    }

    #[test]
    fn as_nlohmann_prints() {
        assert_eq!(num(1.0), "1.0");
        assert_eq!(num(0.0), "0.0");
        assert_eq!(num(52309.53), "52309.53");
        // Grisu2's digits, not the shortest: both from xprof's own output.
        assert_eq!(num(0.85032260734324), "0.8503226073432399");
        assert_eq!(num(0.009099770794947056), "0.009099770794947056");
        assert_eq!(num(0.0001), "0.0001");
        assert_eq!(num(0.00001), "1e-05");
        assert_eq!(num(1.5e-7), "1.5e-07");
        assert_eq!(num(123456789012345.0), "123456789012345.0");
        assert_eq!(num(1e15), "1e+15");
        assert_eq!(num(1.25e300), "1.25e+300");
        assert_eq!(num(-2.5), "-2.5");
        assert_eq!(num(f64::NAN), "null");
        assert_eq!(num(5e-324), "5e-324");
        assert_eq!(num(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(num(0.1), "0.1");
    }

    /// Every number of a sample of 3,000 that xprof 2.24.2 printed in its DataTables (the real
    /// profiles' framework_op_stats, hlo_stats, roofline_model...), printed back the same.
    #[test]
    fn as_xprof_printed_them() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../conformance/xprof/nlohmann-numbers.txt"
        );
        let text = std::fs::read_to_string(path).expect("the sample of xprof's numbers");
        let mut wrong = Vec::new();
        for line in text.lines() {
            let v: f64 = line.parse().expect("a number");
            if num(v) != line {
                wrong.push(format!("{line} printed as {}", num(v)));
            }
        }
        assert!(
            wrong.is_empty(),
            "{} of {}: {:?}",
            wrong.len(),
            text.lines().count(),
            &wrong[..wrong.len().min(10)]
        );
    }
}
