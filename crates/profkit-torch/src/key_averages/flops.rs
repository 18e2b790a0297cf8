//! The FLOPs torch's profiler counts for an operator when `with_flops` is on, from its input
//! shapes (and, for a convolution, its stride, padding, dilation and groups), as
//! `torch/csrc/profiler/util.cpp` (`computeFlops`) does. Traces do not carry the number, so it
//! is worked out again from `Input Dims` and `Concrete Inputs`.

/// Whether `name`'s FLOPs need its input dimensions kept while reading.
pub(crate) fn needs_dims(name: &str) -> bool {
    matches!(
        name,
        "aten::conv2d"
            | "aten::mm"
            | "aten::addmm"
            | "aten::bmm"
            | "aten::baddbmm"
            | "aten::mul"
            | "aten::add"
    )
}

fn dim(shape: &[i64], i: usize) -> Option<i64> {
    shape.get(i).copied()
}

/// A `Concrete Inputs` entry that is an int list (`[1, 1]`), or a single int read as a pair.
fn int_pair(text: &str) -> Option<[i64; 2]> {
    let t = text.trim();
    let t = t
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(t);
    let mut parts = t.split(',').map(|p| p.trim().parse::<i64>());
    let a = parts.next()?.ok()?;
    let b = match parts.next() {
        Some(b) => b.ok()?,
        None => a,
    };
    Some([a, b])
}

/// The FLOPs of one call, 0 when torch counts none (other operators, shapes it refuses).
pub(crate) fn flops(name: &str, dims: &[Vec<i64>], concrete: Option<&[String]>) -> i64 {
    let input = |i: usize| dims.get(i).map(Vec::as_slice).unwrap_or(&[]);
    match name {
        "aten::conv2d" => conv2d(input(0), input(1), concrete).unwrap_or(0),
        "aten::mm" => gemm(input(0), input(1)).unwrap_or(0),
        "aten::addmm" => gemm(input(1), input(2)).unwrap_or(0),
        "aten::bmm" => batched(input(0), input(1)).unwrap_or(0),
        "aten::baddbmm" => batched(input(1), input(2)).unwrap_or(0),
        // torch counts one operation per element of the first input.
        "aten::mul" | "aten::add" => mul(input(0)).unwrap_or(0),
        _ => 0,
    }
}

/// The product of `factors`, `None` past `i64` (a hostile trace's shapes).
fn mul(factors: &[i64]) -> Option<i64> {
    factors.iter().try_fold(1i64, |a, &f| a.checked_mul(f))
}

fn gemm(a: &[i64], b: &[i64]) -> Option<i64> {
    if a.len() != 2 || b.len() != 2 {
        return None;
    }
    mul(&[2, dim(a, 0)?, dim(a, 1)?, dim(b, 1)?])
}

fn batched(a: &[i64], b: &[i64]) -> Option<i64> {
    if a.len() != 3 || b.len() != 3 {
        return None;
    }
    mul(&[2, dim(a, 0)?, dim(a, 1)?, dim(a, 2)?, dim(b, 2)?])
}

fn conv2d(input: &[i64], weight: &[i64], concrete: Option<&[String]>) -> Option<i64> {
    if input.len() != 4 || weight.len() != 4 {
        return None;
    }
    let concrete = concrete?;
    let arg = |i: usize| concrete.get(i).map(String::as_str);
    let stride = int_pair(arg(3)?)?;
    let padding = int_pair(arg(4)?)?;
    let dilation = int_pair(arg(5)?)?;
    let groups = arg(6)?.trim().parse::<i64>().ok()?;
    if groups == 0 || stride.contains(&0) {
        return None;
    }
    let (n, c, h, w) = (input[0], input[1], input[2], input[3]);
    let (out_c, kh, kw) = (weight[0], weight[2], weight[3]);
    // i128 so that no shape a trace holds overflows; the result must fit i64.
    let out = |size: i64, pad: i64, dil: i64, k: i64, stride: i64| {
        (i128::from(size) + 2 * i128::from(pad) - i128::from(dil) * (i128::from(k) - 1) - 1)
            / i128::from(stride)
            + 1
    };
    let out_h = i64::try_from(out(h, padding[0], dilation[0], kh, stride[0])).ok()?;
    let out_w = i64::try_from(out(w, padding[1], dilation[1], kw, stride[1])).ok()?;
    mul(&[2, n, out_h, out_w, kh, kw, c, out_c])?.checked_div(groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conv_and_gemm() {
        let concrete: Vec<String> = ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let dims = vec![vec![4, 3, 16, 16], vec![8, 3, 3, 3], vec![8]];
        assert_eq!(flops("aten::conv2d", &dims, Some(&concrete)), 442_368);
        assert_eq!(flops("aten::mm", &[vec![2, 3], vec![3, 4]], None), 48);
        assert_eq!(flops("aten::mul", &[vec![2, 3], vec![]], None), 6);
        assert_eq!(flops("aten::relu", &[vec![2, 3]], None), 0);
    }
}
