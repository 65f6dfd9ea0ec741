//! The float dtypes safetensors names that lowp reads but never writes: FP4 (`F4`, E2M1), the
//! two FP6 (`F6_E2M3`, `F6_E3M2`) and the exponent-only scale type `F8_E8M0`.
//!
//! safetensors gives a tensor of a sub-byte type the bytes its element count needs
//! (`⌈n · bits / 8⌉`, a whole number by the format's rule) and packs the elements with no gaps.
//! For F4 the order is PyTorch's `float4_e2m1fn_x2`: element `2i` in the low nibble of byte
//! `i`. safetensors does not say how F6 is ordered; lowp reads it as the same little-endian bit
//! stream that F4's order is a case of: element `i` is bits `6i .. 6i + 6` counted from the
//! least significant bit of the first byte.

use lowp::{Format, LowpFloat};
use safetensors::Dtype;
use std::fmt;

/// A float dtype lowp decodes from safetensors but does not write: a lowp format whose
/// safetensors dtype is read only ([`lowp::format::SafetensorsDtype::written`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Packed(Format);

impl Packed {
    /// The type of a safetensors dtype, if it is one of these.
    pub fn of(dtype: Dtype) -> Option<Packed> {
        let name = dtype.to_string();
        Format::ALL
            .iter()
            .find(|f| f.safetensors.is_some_and(|d| !d.written && d.name == name))
            .map(|&f| Packed(f))
    }

    /// Bits per element.
    pub fn bits(self) -> usize {
        self.0.total_bits() as usize
    }

    /// Elements per whole group of bytes (a band of elements must be a multiple of it, so that
    /// it starts at a byte boundary): 2 for 4 bits, 4 for 6, 1 for 8.
    pub fn group(self) -> usize {
        let bits = self.bits();
        let mut bytes_bits: usize = 8;
        while !bytes_bits.is_multiple_of(bits) {
            bytes_bits += 8;
        }
        bytes_bits / bits
    }

    /// Decodes `out.len()` elements from the start of `bytes` into f32s, exactly (every value
    /// of these types is an f32; E8M0's 255 is NaN).
    pub fn decode(self, bytes: &[u8], out: &mut [f32]) {
        let bits = self.bits();
        // The type's widening (a table lookup for these formats), chosen once.
        let value = lowp::with_format!(&self.0, T => {
            (|c| <T as LowpFloat>::to_f32(T::from_bits_u32(c))) as fn(u32) -> f32
        });
        for (i, v) in out.iter_mut().enumerate() {
            let at = i * bits;
            let next = bytes.get(at / 8 + 1).copied().unwrap_or(0);
            let pair = u16::from(bytes[at / 8]) | u16::from(next) << 8;
            *v = value(u32::from((pair >> (at % 8)) & ((1 << bits) - 1)));
        }
    }
}

impl fmt::Debug for Packed {
    /// The safetensors dtype's name (`F6_E2M3`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.safetensors.map_or(self.0.name, |d| d.name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed type of `dtype`, which must be one.
    fn packed(dtype: Dtype) -> Packed {
        Packed::of(dtype).unwrap()
    }

    #[test]
    fn every_code_decodes_from_its_bit_position() {
        // The values from the bit definitions, independently of lowp.
        let e2m1 = |c: u8| -> f32 {
            let m: f32 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0][usize::from(c & 7)];
            if c & 8 != 0 { -m } else { m }
        };
        let f6 = |c: u8, e_bits: u32, m_bits: u32, bias: i32| {
            let (e, m) = ((c >> m_bits) & ((1 << e_bits) - 1), c & ((1 << m_bits) - 1));
            let frac = f32::from(m) / (1 << m_bits) as f32;
            let v = if e == 0 {
                frac * 2f32.powi(1 - bias)
            } else {
                (1.0 + frac) * 2f32.powi(i32::from(e) - bias)
            };
            if c & 0x20 != 0 { -v } else { v }
        };
        for (packed, count, value) in [
            (packed(Dtype::F4), 16u8, &e2m1 as &dyn Fn(u8) -> f32),
            (packed(Dtype::F6_E2M3), 64, &|c| f6(c, 2, 3, 1)),
            (packed(Dtype::F6_E3M2), 64, &|c| f6(c, 3, 2, 3)),
        ] {
            // Every code at every position of a group: the stream holds codes 0, 1, 2, ... .
            let n = usize::from(count) * packed.group();
            let stream: Vec<u8> = (0..n).map(|i| (i % usize::from(count)) as u8).collect();
            let mut bytes = vec![0u8; (n * packed.bits()).div_ceil(8)];
            for (i, &c) in stream.iter().enumerate() {
                let at = i * packed.bits();
                let wide = u16::from(c) << (at % 8);
                bytes[at / 8] |= wide as u8;
                if at / 8 + 1 < bytes.len() {
                    bytes[at / 8 + 1] |= (wide >> 8) as u8;
                }
            }
            let mut out = vec![0f32; n];
            packed.decode(&bytes, &mut out);
            for (i, (&c, &got)) in stream.iter().zip(&out).enumerate() {
                assert_eq!(
                    got.to_bits(),
                    value(c).to_bits(),
                    "{packed:?} element {i}, code {c}"
                );
            }
        }
        let mut out = [0f32; 256];
        let all: Vec<u8> = (0..=255).collect();
        packed(Dtype::F8_E8M0).decode(&all, &mut out);
        for (s, &v) in out.iter().enumerate().take(255) {
            assert_eq!(v as f64, (s as f64 - 127.0).exp2(), "E8M0 {s}");
        }
        assert!(out[255].is_nan());
    }
}
