//! One module per subcommand.
pub mod fetch;
pub mod findmodels;
