//! One module per subcommand.
pub mod fetch;
pub mod findmodels;
pub mod tokcheck;
pub mod tokenize;
