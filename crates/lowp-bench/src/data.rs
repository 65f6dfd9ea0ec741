//! The values the benchmarks convert, generated: deterministic, so every run measures the same
//! work.

/// A wide type the benchmarks fill with test values.
pub trait Sample: Copy + Default + Send + Sync + 'static {
    /// `x` rounded to this type.
    fn from_f64(x: f64) -> Self;
}

impl Sample for f32 {
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Sample for f64 {
    fn from_f64(x: f64) -> Self {
        x
    }
}

/// A linear congruential sequence of uniforms in [0, 1) (53 bits each), from `seed`, shifted
/// by `offset` (0.5 keeps them off 0 for a logarithm).
fn uniforms(seed: u64, offset: f64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + offset) / (1u64 << 53) as f64
    }
}

/// Fills `dst` with deterministic, roughly normal values (a sum of four uniforms) with a
/// standard deviation of `max / 3`: almost all in range and rounding, a few (about 4 in
/// 10,000) beyond `max`. Unsigned formats get magnitudes.
pub fn fill<W: Sample>(dst: &mut [W], max: f64, signed: bool) {
    let mut uniform = uniforms(0x2545_f491_4f6c_dd1d, 0.0);
    let scale = max / 3.0 * 3f64.sqrt();
    for x in dst {
        let z = uniform() + uniform() + uniform() + uniform() - 2.0;
        *x = W::from_f64(if signed { z * scale } else { z.abs() * scale });
    }
}

/// Values shaped like a trained layer's weights: normal with standard deviation `sigma`
/// (Box-Muller over a fixed linear congruential sequence, seeded by `seed`), and one value in
/// 2,000 an outlier 20 to 60 times larger, as the few large weights of real models are. With
/// sigma 0.02..0.05 about half the values are subnormal in E4M3 (below 2^-6) and most in
/// E2M1: the conversions' rare cases are common here, as they are in real checkpoints.
pub fn weights(n: usize, sigma: f64, seed: u64) -> Vec<f32> {
    let mut uniform = uniforms(seed ^ 0x2545_f491_4f6c_dd1d, 0.5);
    (0..n)
        .map(|i| {
            let (u, v) = (uniform(), uniform());
            let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            let outlier = if i % 2000 == 0 { 20.0 + 40.0 * v } else { 1.0 };
            (z * sigma * outlier) as f32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_is_deterministic_and_mostly_in_range() {
        let mut a = vec![0f32; 10_000];
        let mut b = vec![0f32; 10_000];
        fill(&mut a, 448.0, true);
        fill(&mut b, 448.0, true);
        assert_eq!(a, b);
        let beyond = a.iter().filter(|x| x.abs() > 448.0).count();
        assert!(beyond < 10, "{beyond}");
        assert!(a.iter().any(|&x| x < 0.0) && a.iter().any(|&x| x > 100.0));
        fill(&mut b, 6.0, false);
        assert!(b.iter().all(|&x| x >= 0.0));
    }

    #[test]
    fn generated_weights_look_like_a_layers() {
        let n = 1 << 20;
        let w = weights(n, 0.02, 3);
        assert_eq!(w, weights(n, 0.02, 3), "deterministic");
        // One value in 2000 is multiplied by 20 to 60: about 4 in 5 of those land beyond 10
        // sigma (the rest had a small normal factor), and almost no other value does.
        let outliers = w.iter().filter(|x| x.abs() > 0.02 * 10.0).count();
        assert!(
            (n / 2000 * 7 / 10..=n / 2000 + 10).contains(&outliers),
            "{outliers}"
        );
        let rest: Vec<f64> = w
            .iter()
            .map(|&x| x as f64)
            .filter(|x| x.abs() <= 0.2)
            .collect();
        let mean = rest.iter().sum::<f64>() / rest.len() as f64;
        let sd = (rest.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / rest.len() as f64).sqrt();
        assert!(mean.abs() < 1e-4 && (sd - 0.02).abs() < 2e-4, "{mean} {sd}");
        // About 55% of N(0, 0.02) lies below E4M3's smallest normal, 2^-6.
        let subnormal = rest.iter().filter(|x| x.abs() < 2f64.powi(-6)).count();
        let share = subnormal as f64 / rest.len() as f64;
        assert!((0.55..0.58).contains(&share), "{share}");
    }
}
