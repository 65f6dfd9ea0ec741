//! A tensor's elements: one typed vector per dtype.

use crate::dtype::{DType, for_each_dtype};

/// Generates [`Storage`] with one variant per dtype.
macro_rules! storage_enum {
    ($($variant:ident: $ty:ty),* $(,)?) => {
        /// The elements of a tensor, in row-major order, as a vector of the dtype's type.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Storage {
            $(
                #[doc = concat!("Elements of dtype `", stringify!($variant), "`.")]
                $variant(Vec<$ty>),
            )*
        }

        /// The dtype of the elements (the variant of the same name).
        fn storage_dtype(s: &Storage) -> DType {
            match s {
                $(Storage::$variant(_) => DType::$variant,)*
            }
        }

        /// Evaluates `$e` with `$v` bound to the storage's vector, whatever its type.
        macro_rules! with_vec {
            ($s:expr, $v:ident => $e:expr) => {
                match $s {
                    $(Storage::$variant($v) => $e,)*
                }
            };
        }
        pub(crate) use with_vec;
    };
}

/// [`storage_enum!`] from lowp's list of formats (`lowp::for_each_format!(.., list)`), then
/// the machine types, in [`DType::ALL`]'s order.
macro_rules! storage_rows {
    ($(($t:ident, $variant:ident, $($rest:tt)*))*) => {
        storage_enum! {
            $($variant: lowp::$t,)*
            F32: f32, F64: f64, I8: i8, I32: i32, I64: i64, U8: u8, Bool: bool,
        }
    };
}

lowp::for_each_format!(storage_rows, list);

impl Storage {
    /// The dtype of the elements.
    pub fn dtype(&self) -> DType {
        storage_dtype(self)
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        with_vec!(self, v => v.len())
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `len` zeros of `dtype` (bit pattern zero: +0 for floats, except E8M0 whose zero
    /// pattern is 2^-127, since it has no zero).
    pub fn zeroed(dtype: DType, len: usize) -> Storage {
        macro_rules! arm {
            ($variant:ident, $ty:ty) => {
                if dtype == DType::$variant {
                    return Storage::$variant(vec![<$ty>::default(); len]);
                }
            };
        }
        for_each_dtype!(arm);
        unreachable!("every dtype has a storage variant")
    }

    /// Element `i` as text: for the lowp formats the shortest decimal that reads back
    /// ([`lowp::Shortest`]: `0.1` for bf16 0.1, whose own `Display` prints its f32,
    /// `0.100097656`), for the machine types their `Display`.
    pub fn display(&self, i: usize) -> Option<String> {
        with_vec!(self, v => v.get(i).map(Shown::shown))
    }
}

/// How one element prints in a tensor (see [`Storage::display`]).
trait Shown {
    fn shown(&self) -> String;
}

macro_rules! shown_shortest {
    ($t:ident) => {
        impl Shown for lowp::$t {
            fn shown(&self) -> String {
                self.shortest().to_string()
            }
        }
    };
}
lowp::for_each_format!(shown_shortest);

macro_rules! shown_display {
    ($($t:ty),*) => {$(
        impl Shown for $t {
            fn shown(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
shown_display!(f32, f64, i8, i32, i64, u8, bool);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_round_trips_through_zeroed() {
        for &d in DType::ALL {
            let s = Storage::zeroed(d, 3);
            assert_eq!(s.dtype(), d);
            assert_eq!(s.len(), 3);
            assert!(!s.is_empty());
        }
        assert_eq!(Storage::zeroed(DType::F16, 2).get_f64(1), Some(0.0));
        assert_eq!(Storage::zeroed(DType::Bool, 2).display(0).unwrap(), "false");
        assert_eq!(Storage::zeroed(DType::F16, 2).get_f64(2), None);
    }
}
