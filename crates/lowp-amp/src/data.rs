//! The handwritten digits data set, and a seeded train/test split.
//!
//! scikit-learn's copy of the UCI optical handwritten digits test set (E. Alpaydin and
//! C. Kaynak, 1998; BSD-3-Clause, see `data/` in this crate): 1,797 images of 8x8 pixels,
//! each pixel 0 to 16, with labels 0 to 9. The gzip file is embedded in the library, so a
//! binary needs nothing beside it.

use flate2::read::GzDecoder;
use lowp_tensor::random::Rng;
use lowp_tensor::{Error, Result, Tensor};
use std::io::Read;

/// The gzip-compressed CSV: 65 integers a row, 64 pixels then the label.
pub const DIGITS_CSV_GZ: &[u8] = include_bytes!("../data/digits.csv.gz");

/// Pixels per image.
pub const FEATURES: usize = 64;
/// Classes (the digits 0 to 9).
pub const CLASSES: usize = 10;

/// Images and labels.
#[derive(Clone, Debug, PartialEq)]
pub struct Digits {
    /// Pixels scaled to [0, 1] (divided by 16), `FEATURES` per image, row-major.
    pub pixels: Vec<f32>,
    /// The digit of each image.
    pub labels: Vec<i64>,
}

impl Digits {
    /// The embedded data set (1,797 images).
    pub fn load() -> Result<Digits> {
        Digits::from_csv_gz(DIGITS_CSV_GZ)
    }

    /// Reads gzip-compressed CSV rows of 64 pixels (0 to 16) and a label (0 to 9). Errors
    /// name the row.
    pub fn from_csv_gz(bytes: &[u8]) -> Result<Digits> {
        let mut text = String::new();
        GzDecoder::new(bytes)
            .read_to_string(&mut text)
            .map_err(|e| bad(format!("cannot decompress the digits data: {e}")))?;
        let mut pixels = Vec::new();
        let mut labels = Vec::new();
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let values = line
                .split(',')
                .map(|v| v.trim().parse::<u8>())
                .collect::<std::result::Result<Vec<u8>, _>>()
                .map_err(|e| bad(format!("row {}: {e}", n + 1)))?;
            let (label, image) = match values.split_last() {
                Some((&label, image)) if image.len() == FEATURES && label < CLASSES as u8 => {
                    (label, image)
                }
                _ => {
                    return Err(bad(format!(
                        "row {}: expected {FEATURES} pixels and a label 0-9, got {} values",
                        n + 1,
                        values.len()
                    )));
                }
            };
            if let Some(&p) = image.iter().find(|&&p| p > 16) {
                return Err(bad(format!("row {}: pixel {p} is above 16", n + 1)));
            }
            pixels.extend(image.iter().map(|&p| f32::from(p) / 16.0));
            labels.push(i64::from(label));
        }
        Ok(Digits { pixels, labels })
    }

    /// The number of images.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The images at `indices` as a `[n, 64]` f32 tensor and their labels as an i64 `[n]`; an
    /// error naming the first index beyond the images.
    pub fn batch(&self, indices: &[usize]) -> Result<(Tensor, Tensor)> {
        let mut x = Vec::with_capacity(indices.len() * FEATURES);
        let mut y = Vec::with_capacity(indices.len());
        self.check()?;
        for &i in indices {
            let Some(&label) = self.labels.get(i) else {
                return Err(bad(format!(
                    "no image {i}: there are {} (indices 0..{})",
                    self.len(),
                    self.len()
                )));
            };
            x.extend_from_slice(self.image(i));
            y.push(label);
        }
        Ok((
            Tensor::from_vec(x, &[indices.len(), FEATURES])?,
            Tensor::from_vec(y, &[indices.len()])?,
        ))
    }

    /// An error unless there are 64 pixels for every label (the fields are public, so a
    /// `Digits` may have been built by hand).
    fn check(&self) -> Result<()> {
        if Some(self.pixels.len()) != self.labels.len().checked_mul(FEATURES) {
            return Err(bad(format!(
                "{} pixels for {} labels; every image has {FEATURES}",
                self.pixels.len(),
                self.labels.len()
            )));
        }
        Ok(())
    }

    /// The pixels of image `i`, which [`Digits::check`] and the caller's bound on `i` keep
    /// within `pixels`.
    fn image(&self, i: usize) -> &[f32] {
        &self.pixels[i * FEATURES..(i + 1) * FEATURES]
    }

    /// A seeded split: the images shuffled by `seed`, the first `test_fraction` of them
    /// held out for testing. An error when the fraction is outside [0, 1) or the pixels do
    /// not match the labels.
    pub fn split(&self, test_fraction: f64, seed: u64) -> Result<Split> {
        self.check()?;
        if !(0.0..1.0).contains(&test_fraction) {
            return Err(bad(format!(
                "the test fraction must be in [0, 1), not {test_fraction}"
            )));
        }
        let order = permutation(self.len(), seed);
        let n_test = (self.len() as f64 * test_fraction).round() as usize;
        let pick = |idx: &[usize]| Digits {
            pixels: idx
                .iter()
                .flat_map(|&i| self.image(i).iter().copied())
                .collect(),
            labels: idx.iter().map(|&i| self.labels[i]).collect(),
        };
        Ok(Split {
            test: pick(&order[..n_test]),
            train: pick(&order[n_test..]),
        })
    }
}

/// A training set and a held-out test set.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// The images trained on.
    pub train: Digits,
    /// The images held out.
    pub test: Digits,
}

/// `0..n` shuffled by Fisher-Yates with a generator seeded by `seed`.
pub fn permutation(n: usize, seed: u64) -> Vec<usize> {
    let mut rng = Rng::new(seed);
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

/// An argument error of the data loader.
fn bad(message: String) -> Error {
    Error::Argument {
        op: "digits",
        message,
    }
}

/// The f32 tensor of `n` one-hot rows for `labels` over `classes`.
pub fn one_hot(labels: &[i64], classes: usize) -> Result<Tensor> {
    let mut v = vec![0f32; labels.len() * classes];
    for (row, &l) in labels.iter().enumerate() {
        let l = usize::try_from(l)
            .ok()
            .filter(|&l| l < classes)
            .ok_or_else(|| bad(format!("label {l} is not a class in 0..{classes}")))?;
        v[row * classes + l] = 1.0;
    }
    Tensor::from_vec(v, &[labels.len(), classes])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_data_is_all_there() {
        let d = Digits::load().unwrap();
        assert_eq!(d.len(), 1797);
        assert_eq!(d.pixels.len(), 1797 * FEATURES);
        for c in 0..10 {
            let count = d.labels.iter().filter(|&&l| l == c).count();
            assert!((174..=183).contains(&count), "class {c}: {count}");
        }
        assert!(d.pixels.iter().all(|&p| (0.0..=1.0).contains(&p)));
        // The first image is a 0 (scikit-learn's `load_digits().images[0]`).
        assert_eq!(d.labels[0], 0);
        assert_eq!(d.pixels[2], 5.0 / 16.0);
    }

    #[test]
    fn the_split_is_seeded_and_disjoint() {
        let d = Digits::load().unwrap();
        let a = d.split(0.2, 1).unwrap();
        assert_eq!((a.train.len(), a.test.len()), (1438, 359));
        assert_eq!(a, d.split(0.2, 1).unwrap());
        assert_ne!(a, d.split(0.2, 2).unwrap());
        assert!(d.split(1.0, 1).is_err());
    }

    #[test]
    fn indices_beyond_the_images_and_mismatched_pixels_are_errors() {
        let d = Digits::load().unwrap();
        let err = d.batch(&[0, 1797]).unwrap_err().to_string();
        assert!(
            err.contains("no image 1797") && err.contains("1797"),
            "{err}"
        );
        assert!(d.batch(&[usize::MAX]).is_err());
        let broken = Digits {
            pixels: vec![0.0; FEATURES + 1],
            labels: vec![3, 4],
        };
        assert!(broken.batch(&[1]).is_err());
        assert!(broken.split(0.5, 0).is_err());
    }

    #[test]
    fn bad_rows_are_named() {
        use flate2::{Compression, write::GzEncoder};
        use std::io::Write;
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(b"1,2,3\n").unwrap();
        let err = Digits::from_csv_gz(&e.finish().unwrap()).unwrap_err();
        assert!(err.to_string().contains("row 1"), "{err}");
        assert!(one_hot(&[3], 3).is_err());
        assert_eq!(one_hot(&[1], 3).unwrap().to_f64_vec(), [0.0, 1.0, 0.0]);
    }
}
