//! `lowp::cpu`, the one place that decides which instructions run: its feature detection
//! against the kernel's own list (an independent reading of the CPU), the path ladder, and
//! the scalar F16C conversions following the process's path.

use lowp::cpu::{self, Feature, Path};

/// The CPU flags Linux reports, as `/proc/cpuinfo` spells them; `None` elsewhere.
fn linux_cpu_flags() -> Option<Vec<String>> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("flags"))?;
    let (_, flags) = line.split_once(':')?;
    Some(flags.split_whitespace().map(str::to_owned).collect())
}

#[test]
#[cfg(all(target_os = "linux", any(target_arch = "x86", target_arch = "x86_64")))]
fn detection_agrees_with_the_kernels_flags() {
    let Some(flags) = linux_cpu_flags() else {
        return;
    };
    // Linux's names, written out here rather than taken from `Feature::name`.
    let linux_name = |f: Feature| match f {
        Feature::Avx2 => "avx2",
        Feature::Fma => "fma",
        Feature::F16c => "f16c",
        Feature::Avx512F => "avx512f",
        Feature::Avx512Bw => "avx512bw",
        Feature::Avx512Bf16 => "avx512_bf16",
        Feature::Avx512Fp16 => "avx512_fp16",
        _ => unreachable!("a feature this test does not know: add it"),
    };
    for f in Feature::ALL {
        let listed = flags.iter().any(|x| x == linux_name(f));
        assert_eq!(cpu::has(f), listed, "{f}: detected vs /proc/cpuinfo");
    }
}

#[test]
fn the_paths_are_a_ladder_of_features() {
    assert!(Path::Portable.is_supported());
    assert!(Path::Portable.features().is_empty());
    for pair in Path::ALL.windows(2) {
        let (lower, higher) = (pair[0], pair[1]);
        for f in lower.features() {
            assert!(
                higher.features().contains(f),
                "{higher} lacks {f} of {lower}"
            );
        }
        assert!(higher.features().len() > lower.features().len());
        if higher.is_supported() {
            assert!(lower.is_supported(), "{higher} runs but {lower} does not");
        }
    }
    for p in Path::ALL {
        assert_eq!(
            p.is_supported(),
            p.features().iter().all(|&f| cpu::has(f)),
            "{p}"
        );
    }
    assert!(cpu::active_path().is_supported());
}

#[test]
fn the_scalar_f16c_conversions_follow_the_active_path() {
    let vector = cpu::active_path() != Path::Portable;
    assert_eq!(cpu::scalar_f16c(), vector);
    assert_eq!(lowp::hw::f16c_in_use(), vector);
    if vector {
        assert!(cpu::has(Feature::F16c));
    }
    // Pinned to portable, nothing but the software engine runs.
    if std::env::var(cpu::FORCE_PATH_VAR).as_deref() == Ok("portable") {
        assert!(!cpu::scalar_f16c());
    }
}

#[test]
fn the_bulk_module_names_the_same_decision() {
    assert_eq!(lowp::bulk::active_path(), cpu::active_path());
    assert_eq!(lowp::bulk::Path::best(), cpu::Path::best());
}

#[test]
fn feature_names_are_distinct_and_lower_case() {
    let names: Vec<_> = Feature::ALL.iter().map(|f| f.name()).collect();
    for (i, n) in names.iter().enumerate() {
        assert_eq!(n.to_ascii_lowercase(), *n);
        assert!(!names[..i].contains(n), "{n} twice");
        assert_eq!(Feature::ALL[i].to_string(), *n);
    }
}

/// `vectorized_on` runs the closure on every path, vector or not, and its results do not
/// depend on the path: sums of products in f32 and f64 (no fused multiply-add unless asked),
/// an integer maximum, and `mul_add` itself, which is correctly rounded on every path.
#[test]
fn vectorized_code_gives_the_portable_results_on_every_path() {
    let xs: Vec<f32> = (0..4099)
        .map(|i| ((i * 7919) % 1013) as f32 * 0.37 - 150.0)
        .collect();
    let work = |xs: &[f32]| {
        let lanes = xs.chunks_exact(8).fold([0f32; 8], |acc, c| {
            core::array::from_fn(|j| acc[j] + c[j] * c[j] * 1.000_001)
        });
        let wide: f64 = xs.iter().map(|&x| x as f64 * 3.3 - 1.0).sum();
        let top = xs
            .iter()
            .fold(0u32, |m, x| m.max(x.to_bits() & 0x7fff_ffff));
        let fused = xs.iter().fold(0f32, |acc, &x| x.mul_add(0.1, acc));
        (
            lanes.map(f32::to_bits),
            wide.to_bits(),
            top,
            fused.to_bits(),
        )
    };
    let portable = work(&xs);
    let mut ran = 0;
    for path in cpu::Path::ALL {
        let got = lowp::vectorized_on(
            path,
            #[inline(always)]
            || {
                ran += 1;
                work(&xs)
            },
        );
        assert_eq!(got, portable, "{path}");
    }
    assert_eq!(ran, cpu::Path::ALL.len());
    assert_eq!(lowp::vectorized(|| work(&xs)), portable);
}
