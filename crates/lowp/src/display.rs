//! `Display`, `Debug`, `LowerExp` and `UpperExp`: the shortest decimal that reads back.
