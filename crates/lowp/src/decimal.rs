//! Exact decimal expansions of binary values, for printing and parsing.
