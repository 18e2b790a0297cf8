//! Numbers as C++ prints them: `std::ostream << double` with the default precision (printf's
//! `%g` with 6 significant digits: `18.5976`, `0.000893571`, `8.36359e-05`) and printf's `%f`.
//!
//! Rust's formatting of a fixed number of digits is exact and rounds ties to even, as glibc's
//! printf does, so both are built on it. NaN prints as glibc prints the NaN an x86 division 0/0
//! makes, `-nan` (the only way a report gets one).

/// `value` as `%g`: 6 significant digits, fixed or scientific notation by the exponent, trailing
/// zeros removed.
pub fn g(value: f64) -> String {
    const PRECISION: i32 = 6;
    if let Some(special) = special(value) {
        return special;
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // The exponent after rounding to 6 significant digits.
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, value);
    let exponent: i32 = sci
        .rsplit_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if !(-4..PRECISION).contains(&exponent) {
        let (mantissa, _) = sci.split_once('e').unwrap_or((&sci, ""));
        let mantissa = strip_zeros(mantissa);
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    } else {
        let decimals = (PRECISION - 1 - exponent).max(0) as usize;
        strip_zeros(&format!("{value:.decimals$}")).to_owned()
    }
}

/// `value` as `%f`: six decimals.
pub fn f(value: f64) -> String {
    special(value).unwrap_or_else(|| format!("{value:.6}"))
}

fn special(value: f64) -> Option<String> {
    if value.is_nan() {
        Some("-nan".to_owned())
    } else if value.is_infinite() {
        Some(if value > 0.0 { "inf" } else { "-inf" }.to_owned())
    } else {
        None
    }
}

/// Removes trailing zeros after a decimal point, and the point if nothing follows it.
fn strip_zeros(text: &str) -> &str {
    if !text.contains('.') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_printf_g() {
        // Expected values from C's printf("%g") (the report samples and Python's `%g`).
        let cases = [
            (18.5976_f64, "18.5976"),
            (0.000893571, "0.000893571"),
            (6.1992, "6.1992"),
            (0.0000836359, "8.36359e-05"),
            (19.030384, "19.0304"),
            (0.0, "0"),
            (1.0, "1"),
            (100.0, "100"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (999999.5, "1e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1e100, "1e+100"),
            (-2.5, "-2.5"),
            (0.5, "0.5"),
            (2.0e-7, "2e-07"),
            (0.00566833333, "0.00566833"),
        ];
        for (value, text) in cases {
            assert_eq!(g(value), text, "{value}");
        }
        assert_eq!(g(f64::NAN), "-nan");
        assert_eq!(g(f64::INFINITY), "inf");
        assert_eq!(g(-0.0), "-0");
    }

    #[test]
    fn like_printf_f() {
        assert_eq!(f(0.242563), "0.242563");
        assert_eq!(f(1.0), "1.000000");
        assert_eq!(f(20.088221), "20.088221");
        assert_eq!(f(0.0), "0.000000");
        assert_eq!(f(f64::NAN), "-nan");
    }
}
