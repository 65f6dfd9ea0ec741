//! Helpers shared by lowp's integration tests.

/// Runs `$body` with `$T` bound to each format type in turn, in the order of the crate's one
/// table of formats (`lowp::for_each_format!`), so a new format is covered with no edit here.
macro_rules! for_all_formats {
    ($T:ident => $body:block) => {
        lowp::for_each_format!(for_all_formats_rows, list, $T $body)
    };
}

/// [`for_all_formats!`]'s step: one block per row of the format table.
macro_rules! for_all_formats_rows {
    ([$T:ident $body:block] $(($t:ident, $($rest:tt)*))*) => {{
        $({
            type $T = lowp::$t;
            $body
        })*
    }};
}
