//! Numbers as xprof's tools print them into shown strings: absl's `StrFormat("%.Nf")`
//! (`OneDigit`, `TwoDigits`, `ThreeDigits`: printf's rounding of the exact binary value, which
//! Rust's fixed-precision formatting shares) and `StrCat` of a double (`%g` with six significant
//! digits).

/// `StrFormat("%.<digits>f", v)`: `nan`, `inf` and `-inf` as printf writes them.
pub(crate) fn fixed(v: f64, digits: usize) -> String {
    if v.is_nan() {
        if v.is_sign_negative() { "-nan" } else { "nan" }.to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else {
        format!("{v:.digits$}")
    }
}

/// `OneDigit`: `%.1f`.
pub(crate) fn one_digit(v: f64) -> String {
    fixed(v, 1)
}

/// `TwoDigits`: `%.2f`.
pub(crate) fn two_digits(v: f64) -> String {
    fixed(v, 2)
}

/// `StrCat` of a double: `%g` with six significant digits (`4.90776e+13`, `0.5`, `12`).
pub(crate) fn six_digits(v: f64) -> String {
    if !v.is_finite() {
        return fixed(v, 0);
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{v:.5e}");
    let Some((mantissa, exponent)) = sci.split_once('e') else {
        return sci;
    };
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            trim_zeros(mantissa),
            exponent.unsigned_abs()
        )
    } else {
        let decimals = usize::try_from(5 - exponent).unwrap_or(0);
        trim_zeros(&format!("{v:.decimals$}")).to_owned()
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// absl's `FormatTime` of a Unix time in nanoseconds, in UTC, in its default format
/// (`RFC3339_full`): `2024-05-01T12:34:56.789+00:00`, the fraction as long as it needs to be.
pub(crate) fn rfc3339_full(unix_ns: i64) -> String {
    let secs = unix_ns.div_euclid(1_000_000_000);
    let nanos = unix_ns.rem_euclid(1_000_000_000);
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let mut out = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    );
    if nanos != 0 {
        let frac = format!("{nanos:09}");
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    out.push_str("+00:00");
    out
}

/// The proleptic Gregorian date of a day count from 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_absl() {
        assert_eq!(one_digit(0.25), "0.2");
        assert_eq!(one_digit(100.0), "100.0");
        assert_eq!(two_digits(0.125), "0.12");
        assert_eq!(one_digit(f64::NAN), "nan");
        assert_eq!(six_digits(49_077_649_552_010.0), "4.90776e+13");
        assert_eq!(six_digits(0.5), "0.5");
        assert_eq!(six_digits(12.0), "12");
        assert_eq!(six_digits(123_456.7), "123457");
        assert_eq!(six_digits(0.000_123_4), "0.0001234");
        assert_eq!(six_digits(1e-5), "1e-05");
        assert_eq!(rfc3339_full(0), "1970-01-01T00:00:00+00:00");
        assert_eq!(
            rfc3339_full(1_714_566_896_789_000_000),
            "2024-05-01T12:34:56.789+00:00"
        );
        assert_eq!(rfc3339_full(-1), "1969-12-31T23:59:59.999999999+00:00");
    }
}
