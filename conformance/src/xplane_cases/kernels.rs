//! GPU kernels for xprof's kernel stats: identical kernels grouped, launch parameters, and the
//! TensorCore rules of each vendor (an NVIDIA plane and an AMD plane).

use profkit_xplane::constants::stats;
use profkit_xplane::{StatValue, XSpace};

use super::*;

/// A kernel: name, start and duration (microseconds; a duration below 0 is that many
/// picoseconds), `kernel_details`, then other stats.
type Kernel<'a> = (&'a str, i64, i64, &'a str, Vec<(&'a str, &'a str)>);

fn kernels_plane(
    id: i64,
    name: &str,
    vendor: &str,
    kernels: &[Kernel<'_>],
) -> profkit_xplane::XPlane {
    plane(id, name, |b| {
        b.add_stat("device_vendor", vendor);
        b.add_stat("compute_cap_major", 9_i64);
        b.add_stat("compute_cap_minor", 4_i64);
        let mut line = b.line(1);
        line.set_name("Stream #1(Compute)").set_timestamp_ns(1_000);
        for (name, at, dur, details, extra) in kernels {
            let mut e = line.add_event(name);
            let dur_ps = if *dur < 0 { -dur } else { dur * US };
            e.set_offset_ps(at * US).set_duration_ps(dur_ps);
            if !details.is_empty() {
                e.add_stat(stats::KERNEL_DETAILS, StatValue::from(*details));
            }
            for (k, v) in extra {
                e.add_stat(k, StatValue::from(*v));
            }
        }
    })
}

/// Kernels on an NVIDIA and an AMD GPU: three identical TensorCore convolution kernels (one
/// group) and one with another grid (a group of its own), a matrix product, an einsum (eligible
/// by its equation), a TensorCore kernel of an ineligible op (which makes it eligible), kernels
/// of equal total time (ordered by their fields), every launch parameter with bad and odd values,
/// a kernel under a nanosecond and one without launch details (both left out); on the AMD plane
/// Tensile and MFMA kernels, and NVIDIA's pattern, which does not count there.
pub(super) fn gpu_kernel_stats() -> XSpace {
    let conv =
        "regs:64 static_shared:1024 dynamic_shared:4096 grid:8,4,1 block:256,1,1 occ_pct:37.5";
    let tf = |op: &'static str| vec![(stats::TF_OP, op)];
    let nvidia: Vec<Kernel<'_>> = vec![
        (
            "volta_h884gemm_conv",
            1,
            4,
            conv,
            tf("model/conv/Conv2D:Conv2D"),
        ),
        (
            "volta_h884gemm_conv",
            6,
            5,
            conv,
            tf("model/conv/Conv2D:Conv2D"),
        ),
        (
            "volta_h884gemm_conv",
            12,
            3,
            conv,
            tf("model/conv/Conv2D:Conv2D"),
        ),
        (
            "volta_h884gemm_conv",
            16,
            2,
            "regs:64 static_shared:1024 dynamic_shared:4096 grid:16,4,1 block:256,1,1 occ_pct:37.5",
            tf("model/conv/Conv2D:Conv2D"),
        ),
        (
            "gemv2T_kernel",
            19,
            3,
            "regs:32 grid:2,1,1 block:128,1,1",
            tf("model/dense/MatMul:MatMul"),
        ),
        (
            "einsum_kernel",
            23,
            2,
            "regs:16 grid:1,1,1 block:64,1,1 occ_pct:33.3",
            vec![
                (stats::TF_OP, "model/e/Einsum:Einsum"),
                ("equation", "ab,bc->ac"),
            ],
        ),
        (
            "xmma_gemm_relu",
            26,
            2,
            "regs:8 block:32,1,1",
            tf("model/relu/Relu:Relu"),
        ),
        ("tie_b", 29, 1, "regs:8", vec![]),
        ("tie_a", 31, 1, "regs:8", vec![]),
        (
            "odd_details",
            33,
            1,
            "regs:-1 static_shared:4294967296 grid:1,2 block:+2,x,1 occ_pct:abc key:1:2\nregs:+7",
            vec![],
        ),
        ("too_short", 35, -900, "regs:8", vec![]),
        ("no_details", 36, 1, "", tf("model/conv/Conv2D:Conv2D")),
    ];
    let amd: Vec<Kernel<'_>> = vec![
        (
            "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0",
            1,
            6,
            "grid:219,40,1 block:256,1,1 occ_pct:0",
            tf("jit(f)/dot_general:dot_general"),
        ),
        (
            "kernel_mfma_f16",
            8,
            2,
            "grid:4,1,1 block:64,1,1",
            tf("jit(f)/x:mul"),
        ),
        ("volta_h884gemm", 11, 2, "grid:4,1,1 block:64,1,1", vec![]),
        (
            "plain_kernel.kd",
            14,
            2,
            "grid:4,1,1 block:64,1,1",
            tf("jit(f)/conv_general_dilated:conv"),
        ),
    ];
    space(vec![
        kernels_plane(1, "/device:GPU:0", "Nvidia", &nvidia),
        kernels_plane(2, "/device:GPU:1", "AMD", &amd),
    ])
}
