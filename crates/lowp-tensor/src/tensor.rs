//! The tensor: contiguous row-major elements of one dtype, and a shape.

use crate::dtype::DType;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::random::Rng;
use crate::shape;
use crate::storage::{Storage, with_vec};
use std::sync::Arc;

/// A tensor: contiguous row-major elements of one [`DType`] with a shape.
///
/// Cloning and reshaping share the elements (they are immutable once built); every op makes a
/// new tensor. Reading the data back as the wrong type is an error, not a panic.
///
/// ```
/// use lowp_tensor::{DType, Tensor};
///
/// let x = Tensor::from_vec(vec![0.1f32, 2.0, -3.5, 4.0], &[2, 2]).unwrap();
/// let h = x.cast(DType::F16).unwrap();
/// assert_eq!(h.shape(), &[2, 2]);
/// assert_eq!(h.to_f64_vec(), [0.0999755859375, 2.0, -3.5, 4.0]);
/// assert!(h.to_vec::<f32>().is_err()); // it holds f16s now
/// println!("{h}"); // tensor([[0.1, 2], [-3.5, 4]], dtype=f16)
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    shape: Vec<usize>,
    storage: Arc<Storage>,
}

impl Tensor {
    /// A tensor of `shape` holding `data` in row-major order. The error says so when the data
    /// does not fill the shape exactly.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        Tensor::from_storage(T::into_storage(data), shape)
    }

    /// A tensor of `shape` holding a copy of `data`.
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Tensor> {
        Tensor::from_vec(data.to_vec(), shape)
    }

    /// A tensor of `shape` over `storage`, which must hold exactly the shape's elements.
    pub fn from_storage(storage: Storage, shape: &[usize]) -> Result<Tensor> {
        if shape::numel(shape) != Some(storage.len()) {
            return Err(Error::ElementCount {
                shape: shape.to_vec(),
                len: storage.len(),
            });
        }
        Ok(Tensor {
            shape: shape.to_vec(),
            storage: Arc::new(storage),
        })
    }

    /// A scalar (rank 0) tensor.
    pub fn scalar<T: Element>(value: T) -> Tensor {
        Tensor {
            shape: Vec::new(),
            storage: Arc::new(T::into_storage(vec![value])),
        }
    }

    /// A tensor of `shape` and `dtype` filled with `value`, rounded once into the dtype as
    /// [`Element::from_f64`] does (so `full(.., 1e6, F16)` is infinity, and zero in E8M0,
    /// which has none, is NaN).
    pub fn full(shape: &[usize], value: f64, dtype: DType) -> Result<Tensor> {
        let n = checked_numel(shape)?;
        Tensor::from_storage(storage_from_fn(dtype, n, |_| value), shape)
    }

    /// Zeros of `shape` and `dtype` (see [`Tensor::full`]).
    pub fn zeros(shape: &[usize], dtype: DType) -> Result<Tensor> {
        Tensor::full(shape, 0.0, dtype)
    }

    /// Ones of `shape` and `dtype`.
    pub fn ones(shape: &[usize], dtype: DType) -> Result<Tensor> {
        Tensor::full(shape, 1.0, dtype)
    }

    /// The values `start, start + step, ...` below `end` (above it for a negative step), as
    /// NumPy's `arange`: each computed in f64 as `start + i * step` and rounded once into
    /// `dtype`. A zero or non-finite step, or non-finite ends, are an error.
    ///
    /// ```
    /// use lowp_tensor::{DType, Tensor};
    /// let t = Tensor::arange(0.0, 1.0, 0.25, DType::BF16).unwrap();
    /// assert_eq!(t.to_f64_vec(), [0.0, 0.25, 0.5, 0.75]);
    /// ```
    pub fn arange(start: f64, end: f64, step: f64, dtype: DType) -> Result<Tensor> {
        if !(start.is_finite() && end.is_finite() && step.is_finite()) || step == 0.0 {
            return Err(Error::Argument {
                op: "arange",
                message: format!(
                    "start {start}, end {end} and step {step} must be finite, and the step \
                     non-zero"
                ),
            });
        }
        let count = ((end - start) / step).ceil();
        let n = if count > 0.0 { count as usize } else { 0 };
        checked_numel(&[n])?;
        Tensor::from_storage(storage_from_fn(dtype, n, |i| start + i as f64 * step), &[n])
    }

    /// Values drawn uniformly from `[low, high)` in f64 by a generator seeded with `seed`,
    /// rounded once into `dtype`. The same seed gives the same tensor on every machine.
    pub fn rand_uniform(
        shape: &[usize],
        low: f64,
        high: f64,
        dtype: DType,
        seed: u64,
    ) -> Result<Tensor> {
        if !(low.is_finite() && high.is_finite() && low <= high) {
            return Err(Error::Argument {
                op: "rand_uniform",
                message: format!("the range [{low}, {high}) must be finite and ordered"),
            });
        }
        let n = checked_numel(shape)?;
        let mut rng = Rng::new(seed);
        let values: Vec<f64> = (0..n).map(|_| low + (high - low) * rng.uniform()).collect();
        Tensor::from_storage(storage_from_fn(dtype, n, |i| values[i]), shape)
    }

    /// Values drawn from the normal distribution of `mean` and standard deviation `std` in
    /// f64 (Box-Muller over the seeded generator), rounded once into `dtype`.
    pub fn rand_normal(
        shape: &[usize],
        mean: f64,
        std: f64,
        dtype: DType,
        seed: u64,
    ) -> Result<Tensor> {
        if !(mean.is_finite() && std.is_finite() && std >= 0.0) {
            return Err(Error::Argument {
                op: "rand_normal",
                message: format!(
                    "the mean {mean} must be finite and the standard deviation {std} finite \
                     and not negative"
                ),
            });
        }
        let n = checked_numel(shape)?;
        let mut rng = Rng::new(seed);
        let values: Vec<f64> = (0..n).map(|_| mean + std * rng.normal()).collect();
        Tensor::from_storage(storage_from_fn(dtype, n, |i| values[i]), shape)
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of axes.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.storage.len()
    }

    /// The dtype.
    pub fn dtype(&self) -> DType {
        self.storage.dtype()
    }

    /// The elements.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The elements as a slice of `T`; an error when the dtype is not `T`'s.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        T::slice(&self.storage).ok_or(Error::DTypeMismatch {
            expected: T::DTYPE,
            found: self.dtype(),
        })
    }

    /// The elements copied into a vector of `T`; an error when the dtype is not `T`'s.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.as_slice::<T>().map(<[T]>::to_vec)
    }

    /// Every element as an f64 (exact for floats and for integers up to 2^53).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        with_vec!(self.storage.as_ref(), v => v.iter().map(|&x| x.to_f64()).collect())
    }

    /// The one element of a tensor with exactly one, as an f64.
    pub fn item(&self) -> Result<f64> {
        match self.numel() {
            1 => Ok(self
                .storage
                .get_f64(0)
                .expect("numel is 1, so element 0 exists")),
            n => Err(Error::Argument {
                op: "item",
                message: format!(
                    "the tensor has {n} elements, not one (shape {:?})",
                    self.shape
                ),
            }),
        }
    }

    /// The same elements with another shape of as many elements (shared, not copied).
    pub fn reshape(&self, shape: &[usize]) -> Result<Tensor> {
        if shape::numel(shape) != Some(self.numel()) {
            return Err(Error::Shape {
                op: "reshape",
                message: format!(
                    "cannot reshape {:?} ({} elements) to {shape:?}",
                    self.shape,
                    self.numel()
                ),
            });
        }
        Ok(Tensor {
            shape: shape.to_vec(),
            storage: Arc::clone(&self.storage),
        })
    }

    /// A tensor of this one's shape over other elements of as many (for kernels).
    pub(crate) fn with_data<T: Element>(&self, data: Vec<T>) -> Result<Tensor> {
        Tensor::from_vec(data, &self.shape)
    }
}

/// The element count of `shape`, or an error if it overflows.
fn checked_numel(shape: &[usize]) -> Result<usize> {
    shape::numel(shape).ok_or(Error::ElementCount {
        shape: shape.to_vec(),
        len: 0,
    })
}

/// `n` elements of `dtype`, element `i` being `value(i)` rounded as [`Element::from_f64`].
fn storage_from_fn(dtype: DType, n: usize, value: impl Fn(usize) -> f64) -> Storage {
    fn fill<T: Element>(n: usize, value: impl Fn(usize) -> f64) -> Storage {
        T::into_storage((0..n).map(|i| T::from_f64(value(i))).collect())
    }
    macro_rules! arm {
        ($variant:ident, $ty:ty) => {
            if dtype == DType::$variant {
                return fill::<$ty>(n, value);
            }
        };
    }
    crate::dtype::for_each_dtype!(arm);
    unreachable!("every dtype has an element type")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn construction_checks_the_element_count() {
        let err = Tensor::from_vec(vec![1f32; 5], &[2, 3]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "shape [2, 3] holds 6 elements, but 5 were given"
        );
        assert!(Tensor::from_vec(Vec::<f32>::new(), &[0, 4]).is_ok());
        assert!(Tensor::zeros(&[usize::MAX, 2], DType::F32).is_err());
    }

    #[test]
    fn reading_back_checks_the_dtype() {
        let t = Tensor::from_vec(vec![lowp::bf16::ONE; 4], &[4]).unwrap();
        assert_eq!(t.to_vec::<lowp::bf16>().unwrap().len(), 4);
        let err = t.to_vec::<f32>().unwrap_err().to_string();
        assert_eq!(err, "the tensor has dtype bf16, not the f32 asked for");
    }

    #[test]
    fn full_rounds_once_into_the_dtype() {
        assert_eq!(
            Tensor::full(&[2], 0.1, DType::F16).unwrap().to_f64_vec()[0],
            0.0999755859375
        );
        assert!(Tensor::full(&[1], 1e6, DType::F16).unwrap().to_f64_vec()[0].is_infinite());
        // E8M0, the format whose zero bit pattern is not zero (it has no zero): NaN.
        let e8m0 = DType::floats()
            .find(|d| d.format().is_some_and(|f| f.to_f64(0) != 0.0))
            .unwrap();
        assert!(Tensor::zeros(&[1], e8m0).unwrap().to_f64_vec()[0].is_nan());
        assert_eq!(
            Tensor::ones(&[3], DType::I8)
                .unwrap()
                .to_vec::<i8>()
                .unwrap(),
            [1, 1, 1]
        );
        assert_eq!(Tensor::scalar(3.5f64).shape(), &[] as &[usize]);
    }

    #[test]
    fn arange_follows_numpy() {
        let t = Tensor::arange(1.0, -1.0, -0.5, DType::F32).unwrap();
        assert_eq!(t.to_f64_vec(), [1.0, 0.5, 0.0, -0.5]);
        assert_eq!(
            Tensor::arange(0.0, 0.0, 1.0, DType::I64).unwrap().numel(),
            0
        );
        assert_eq!(
            Tensor::arange(0.0, 3.0, 1.0, DType::I32)
                .unwrap()
                .to_vec::<i32>()
                .unwrap(),
            [0, 1, 2]
        );
        assert!(Tensor::arange(0.0, 1.0, 0.0, DType::F32).is_err());
        assert!(Tensor::arange(0.0, f64::INFINITY, 1.0, DType::F32).is_err());
    }

    #[test]
    fn random_tensors_are_seeded() {
        let a = Tensor::rand_normal(&[1000], 0.0, 1.0, DType::BF16, 7).unwrap();
        let b = Tensor::rand_normal(&[1000], 0.0, 1.0, DType::BF16, 7).unwrap();
        let c = Tensor::rand_normal(&[1000], 0.0, 1.0, DType::BF16, 8).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let v = a.to_f64_vec();
        let mean = v.iter().sum::<f64>() / 1000.0;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 1000.0;
        assert!(mean.abs() < 0.1 && (var - 1.0).abs() < 0.15, "{mean} {var}");
        let u = Tensor::rand_uniform(&[1000], -2.0, 3.0, DType::F32, 1).unwrap();
        assert!(u.to_f64_vec().iter().all(|&x| (-2.0..3.0).contains(&x)));
        assert!(Tensor::rand_uniform(&[1], 1.0, 0.0, DType::F32, 1).is_err());
        assert!(Tensor::rand_normal(&[1], 0.0, -1.0, DType::F32, 1).is_err());
    }

    #[test]
    fn reshape_shares_and_checks() {
        let t = Tensor::arange(0.0, 6.0, 1.0, DType::F16).unwrap();
        let r = t.reshape(&[2, 3]).unwrap();
        assert_eq!(r.shape(), &[2, 3]);
        assert_eq!(r.to_f64_vec(), t.to_f64_vec());
        let err = t.reshape(&[4, 2]).unwrap_err().to_string();
        assert!(err.contains("[6]") && err.contains("[4, 2]"), "{err}");
        assert!(r.item().unwrap_err().to_string().contains("6 elements"));
        assert_eq!(Tensor::scalar(2u8).item().unwrap(), 2.0);
    }
}
