//! The block-scaled schemes: which element format, how many elements share a scale, and how
//! many bytes a row of data and of scales takes.

use lowp::Format;
use lowp::format::formats;

/// A block-scaled quantization scheme, as the serving stacks load it.
///
/// A tensor of shape `[..., rows, cols]` is a matrix of `R` rows (the product of every
/// dimension but the last) and `C = cols` columns, row-major; blocks never cross a row's end,
/// and a partial last block of a row is an ordinary (shorter) block.
///
/// | scheme | elements | scale | block |
/// |---|---|---|---|
/// | `fp8-block` (DeepSeek-V3) | E4M3 | f32 `scale_inv`, `x ≈ q * scale_inv` | 128 x 128 of each matrix |
/// | `fp8-channel` (compressed-tensors' FP8 per channel) | E4M3 | f32, `x ≈ q * scale` | one whole row |
/// | `mxfp8` (OCP MX v1.0) | E4M3 | E8M0 | 32 of a row |
/// | `mxfp4` (OCP MX, gpt-oss) | E2M1, two per byte | E8M0 | 32 of a row |
/// | `nvfp4` (NVIDIA ModelOpt) | E2M1, two per byte | E4M3, times a per-tensor f32 | 16 of a row |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// DeepSeek-V3's fine-grained FP8: E4M3 elements, one f32 `scale_inv = amax / 448` per
    /// 128 x 128 block of each matrix (the last two dimensions).
    Fp8Block,
    /// FP8 per output channel: E4M3 elements, one f32 `scale = amax / 448` per row (what
    /// compressed-tensors calls the `channel` strategy, llm-compressor's `FP8_DYNAMIC` weights).
    Fp8Channel,
    /// OCP MXFP8: E4M3 elements, one E8M0 scale per 32 consecutive elements of a row.
    Mxfp8,
    /// OCP MXFP4 in gpt-oss's layout: E2M1 elements two to a byte (the even element in the
    /// low nibble), one E8M0 scale per 32 elements of a row, each row padded to whole blocks.
    Mxfp4,
    /// NVIDIA's NVFP4: E2M1 elements packed as for mxfp4, one E4M3 scale per 16 elements of a
    /// row, and one f32 `scale_2` for the whole tensor.
    Nvfp4,
}

impl Scheme {
    /// Every scheme, in the order of the table above.
    pub const ALL: [Scheme; 5] = [
        Scheme::Fp8Block,
        Scheme::Fp8Channel,
        Scheme::Mxfp8,
        Scheme::Mxfp4,
        Scheme::Nvfp4,
    ];

    /// The name on the command line and in reports: `fp8-block`, `fp8-channel`, `mxfp8`,
    /// `mxfp4`, `nvfp4`.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Fp8Block => "fp8-block",
            Scheme::Fp8Channel => "fp8-channel",
            Scheme::Mxfp8 => "mxfp8",
            Scheme::Mxfp4 => "mxfp4",
            Scheme::Nvfp4 => "nvfp4",
        }
    }

    /// The scheme of a [`Scheme::name`], ignoring ASCII case; `fp8_block` and `fp8_channel` are
    /// accepted too.
    /// `None` for anything else (surrounding spaces included).
    ///
    /// ```
    /// use lowp_io::quant::Scheme;
    /// assert_eq!(Scheme::parse("MXFP4"), Some(Scheme::Mxfp4));
    /// assert_eq!(Scheme::parse("fp8_block"), Some(Scheme::Fp8Block));
    /// assert_eq!(Scheme::parse("fp8"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|s| {
            text.eq_ignore_ascii_case(s.name())
                || text.eq_ignore_ascii_case(&s.name().replace('-', "_"))
        })
    }

    /// Rows of a block: 128 for fp8-block, 1 for the others.
    pub fn block_rows(self) -> usize {
        match self {
            Scheme::Fp8Block => 128,
            Scheme::Fp8Channel | Scheme::Mxfp8 | Scheme::Mxfp4 | Scheme::Nvfp4 => 1,
        }
    }

    /// Columns of a block: 128, 32, 32, 16; for fp8-channel, whose block is a whole row of
    /// any length, `usize::MAX`, so that every row is one block ([`Scheme::blocks_per_row`]
    /// is 1 for any non-empty row).
    pub fn block_cols(self) -> usize {
        match self {
            Scheme::Fp8Block => 128,
            Scheme::Fp8Channel => usize::MAX,
            Scheme::Mxfp8 | Scheme::Mxfp4 => 32,
            Scheme::Nvfp4 => 16,
        }
    }

    /// Blocks in a row of `cols` columns: `ceil(cols / block_cols)`.
    pub fn blocks_per_row(self, cols: usize) -> usize {
        cols.div_ceil(self.block_cols())
    }

    /// Bytes of element data per row of `cols` columns: `cols` for the E4M3 schemes (no
    /// padding), and for the FP4 schemes half a byte per element of every block, a partial
    /// last block padded with +0 nibbles (`ceil(cols / 32) * 16` for mxfp4, `ceil(cols / 16) *
    /// 8` for nvfp4).
    pub fn data_row_bytes(self, cols: usize) -> usize {
        match self {
            Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8 => cols,
            Scheme::Mxfp4 | Scheme::Nvfp4 => self.blocks_per_row(cols) * self.block_cols() / 2,
        }
    }

    /// Bytes of scales: for the MX schemes and nvfp4, per row (one byte per block); for
    /// fp8-block, per band of 128 rows (one little-endian f32 per 128 columns,
    /// `4 * ceil(cols / 128)`); for fp8-channel, per row (one little-endian f32).
    pub fn scale_row_bytes(self, cols: usize) -> usize {
        match self {
            Scheme::Fp8Block | Scheme::Fp8Channel => 4 * self.blocks_per_row(cols),
            Scheme::Mxfp8 | Scheme::Mxfp4 | Scheme::Nvfp4 => self.blocks_per_row(cols),
        }
    }

    /// Bytes of scales for a matrix of `rows` x `cols`: fp8-block counts one band per 128 rows
    /// (the last one possibly shorter), the others one scale row per row.
    pub fn scale_bytes(self, rows: usize, cols: usize) -> usize {
        rows.div_ceil(self.block_rows()) * self.scale_row_bytes(cols)
    }

    /// The element format: E4M3FN (`lowp::f8e4m3fn`) or E2M1FN (`lowp::f4e2m1fn`).
    pub fn element_format(self) -> Format {
        match self {
            Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8 => formats::F8E4M3FN,
            Scheme::Mxfp4 | Scheme::Nvfp4 => formats::F4E2M1FN,
        }
    }

    /// Whether the scales are floats whose value is the divisor (fp8-block, fp8-channel) rather
    /// than one byte of a small format.
    pub fn float_scales(self) -> bool {
        self.scale_format().is_none()
    }

    /// Bits of one element: 8 or 4.
    pub fn bits_per_element(self) -> u32 {
        self.element_format().total_bits()
    }

    /// The format of the block scales: E8M0 for the MX schemes, E4M3 for nvfp4, `None` for
    /// fp8-block and fp8-channel (their scales are f32, see [`crate::quant::ScaleType`]).
    pub fn scale_format(self) -> Option<Format> {
        match self {
            Scheme::Fp8Block | Scheme::Fp8Channel => None,
            Scheme::Mxfp8 | Scheme::Mxfp4 => Some(formats::F8E8M0FNU),
            Scheme::Nvfp4 => Some(formats::F8E4M3FN),
        }
    }
}

impl std::fmt::Display for Scheme {
    /// Writes [`Scheme::name`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
