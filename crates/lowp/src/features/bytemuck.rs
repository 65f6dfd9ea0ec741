//! `bytemuck` support.
