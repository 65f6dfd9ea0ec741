//! Which tensors a block-quantized conversion quantizes, in which layout, and why it leaves
//! the others: decided per tensor from its role in the model ([`crate::layouts::roles`]), the
//! layout's loader ([`Layout::holds`], [`Layout::fits`]) and the options (`--only`,
//! `--keep-f32`), before any data is read.

use crate::error::Error;
use crate::layouts::{Layout, ModelInfo, Role};
use crate::options::Options;
use crate::quant::Scheme;

/// The scheme and layout of a block-quantized conversion, and the model they apply to.
pub struct Selection<'a> {
    /// The scheme.
    pub scheme: Scheme,
    /// The layout: the one asked for, or [`Layout::auto`]'s.
    pub layout: Layout,
    /// What the model's config says.
    pub info: &'a ModelInfo,
}

impl<'a> Selection<'a> {
    /// The selection for `scheme` in `opts.layout` (or the automatic layout), refused with the
    /// layout's reason when it cannot hold the scheme for this model.
    pub fn new(
        opts: &Options,
        scheme: Scheme,
        info: &'a ModelInfo,
    ) -> Result<Selection<'a>, Error> {
        let layout = opts.layout.unwrap_or_else(|| Layout::auto(scheme, info));
        layout.supports(scheme, info).map_err(|why| {
            Error::invalid(format!("{scheme} in the {} layout: {why}", layout.name()))
        })?;
        Ok(Selection {
            scheme,
            layout,
            info,
        })
    }

    /// Whether the float tensor `name` of `shape` is quantized: `Ok(role)` when it is, or why
    /// not. A tensor is quantized when `--only` names it (or, without `--only`, when the
    /// layout quantizes its role by default: linear weights, or gpt-oss's experts for
    /// transformers' MXFP4), `--keep-f32` does not, the layout's loader reads its role
    /// quantized, and its shape fits the loader's blocks.
    pub fn decide(&self, opts: &Options, name: &str, shape: &[usize]) -> Result<Role, String> {
        let role = self.info.role(name, shape);
        if opts.keeps_f32(name) {
            return Err("matched by --keep-f32".to_string());
        }
        if shape.len() < 2 {
            return Err(format!("{}-D: never block-quantized", shape.len()));
        }
        if shape.contains(&0) {
            return Err("empty".to_string());
        }
        let layout = self.layout.name();
        if !opts.only.is_empty() {
            if !opts.selects(name) {
                return Err("not matched by --only".to_string());
            }
        } else if !self.layout.quantizes_by_default(self.scheme, role) {
            return Err(match role {
                Role::Head | Role::Router => format!(
                    "{}: kept in high precision by default (--only selects it)",
                    role.name()
                ),
                // Only transformers' MXFP4 leaves linear weights: it reads the experts alone.
                Role::Linear => format!(
                    "{}: the {layout} layout quantizes gpt-oss's MoE experts only",
                    role.name()
                ),
                _ => format!("{}: the {layout} layout keeps it", role.name()),
            });
        }
        if !self.layout.holds(self.scheme, role) {
            return Err(format!(
                "{}: the {layout} layout's loader does not read it in {}",
                role.name(),
                self.scheme
            ));
        }
        self.layout.fits(self.scheme, role, shape)?;
        Ok(role)
    }

    /// What else would quantize the tensor `name` of `shape` that this selection leaves: another
    /// layout of the same scheme, or for the FP8 schemes fp8-channel, which takes any shape;
    /// as a sentence to append to an error (empty when nothing would).
    pub fn alternative(&self, name: &str, shape: &[usize]) -> String {
        let role = self.info.role(name, shape);
        let takes = |layout: Layout, scheme: Scheme| {
            layout.supports(scheme, self.info).is_ok()
                && layout.holds(scheme, role)
                && layout.fits(scheme, role, shape).is_ok()
        };
        if let Some(layout) = Layout::ALL
            .into_iter()
            .find(|&l| l != self.layout && takes(l, self.scheme))
        {
            return format!("; --layout {} takes it", layout.name());
        }
        let fp8 = matches!(self.scheme, Scheme::Fp8Block | Scheme::Mxfp8);
        if fp8 && takes(Layout::CompressedTensors, Scheme::Fp8Channel) {
            return "; --to fp8-channel (compressed-tensors) takes any shape".to_string();
        }
        String::new()
    }
}
