//! Times: microseconds as written (`ts`, `dur`) to exact picoseconds, and the clock items are kept
//! on.

/// [`micros_to_ps`] for the form nearly every time is written in: up to 18 digits, and up to six
/// decimals after a point; `None` for any other form (which the general path then reads).
pub(crate) fn plain_micros_to_ps(text: &[u8]) -> Option<(i128, u32)> {
    let (negative, body) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut int: u64 = 0;
    let mut i = 0;
    while let Some(&b) = body.get(i).filter(|b| b.is_ascii_digit()) {
        if i >= 18 {
            return None;
        }
        int = int * 10 + u64::from(b - b'0');
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let (mut frac, mut decimals) = (0u64, 0u32);
    match body.get(i) {
        None => {}
        Some(b'.') => {
            for &b in body.get(i + 1..)? {
                if !b.is_ascii_digit() || decimals >= 6 {
                    return None;
                }
                frac = frac * 10 + u64::from(b - b'0');
                decimals += 1;
            }
            if decimals == 0 {
                return None;
            }
        }
        Some(_) => return None,
    }
    let value = i128::from(int) * 1_000_000 + i128::from(frac) * 10i128.pow(6 - decimals);
    Some((if negative { -value } else { value }, decimals))
}

/// Microseconds written as decimal text to picoseconds, exactly (rounded to the nearest
/// picosecond), or through a double when the text has too many digits. Also gives the number of
/// decimals written.
pub(crate) fn micros_to_ps(text: &str) -> Option<(i128, u32)> {
    if let Some(found) = plain_micros_to_ps(text.as_bytes()) {
        return Some(found);
    }
    let (negative, body) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (body.get(..i)?, body.get(i + 1..)?.parse::<i32>().ok()?),
        None => (body, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let decimals = u32::try_from((frac.len() as i64 - i64::from(exponent)).max(0)).ok()?;
    // The digits without leading zeros, as one integer (no allocation: this runs twice an event).
    let digits = int.bytes().chain(frac.bytes()).skip_while(|&b| b == b'0');
    let count = digits.clone().count();
    let scale = exponent - frac.len() as i32 + 6;
    let value = if count > 30 || !(-40..=30).contains(&scale) {
        let v = text.parse::<f64>().ok()? * 1e6;
        if !v.is_finite() || v.abs() > 1e36 {
            return None;
        }
        return Some((v.round() as i128, decimals));
    } else {
        let d: i128 = digits.fold(0i128, |acc, b| acc * 10 + i128::from(b - b'0'));
        if scale >= 0 {
            d.checked_mul(10i128.checked_pow(scale as u32)?)?
        } else {
            let div = 10i128.checked_pow((-scale) as u32)?;
            (d + div / 2) / div
        }
    };
    Some((if negative { -value } else { value }, decimals))
}

/// The times of the items kept, relative to the start of the first: every time read is exact
/// (128 bits), and an item's are stored in 64 bits once it is kept. What does not fit is
/// saturated, and can only be so when the times kept span more than an XSpace holds, which
/// [`Trace::into_import`] refuses from the exact first start and last end kept here.
#[derive(Default)]
pub(crate) struct Clock {
    pub(crate) base: Option<i128>,
    pub(crate) first: i128,
    pub(crate) last: i128,
}

impl Clock {
    /// An item's start and end (`end >= start`), as stored.
    pub(crate) fn keep(&mut self, start: i128, end: i128) -> (i64, i64) {
        match self.base {
            None => {
                self.base = Some(start);
                self.first = start;
                self.last = end;
            }
            Some(_) => {
                self.first = self.first.min(start);
                self.last = self.last.max(end);
            }
        }
        (self.rel(start), self.rel(end))
    }

    /// A time relative to the base, saturated.
    pub(crate) fn rel(&self, t: i128) -> i64 {
        let d = t.saturating_sub(self.base.unwrap_or(0));
        i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
    }
}
