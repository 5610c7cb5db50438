//! One module per subcommand.
pub mod bench;
pub mod chat;
pub mod convert;
pub mod fetch;
pub mod findmodels;
pub mod import;
pub mod info;
pub mod mega65;
pub mod run;
pub mod tokcheck;
pub mod tokenize;
