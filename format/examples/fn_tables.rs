//! Print the software core's numbers and function tables as a C header
//! (mega65/softcore/fn_tables.h), or with `--ca65` its numbers as a ca65 include
//! (mega65/softcore/fn_tables.inc).
fn main() {
    if std::env::args().nth(1).as_deref() == Some("--ca65") {
        print!("{}", ssnail_format::softcore::ca65_include());
    } else {
        print!("{}", ssnail_format::softcore::c_header());
    }
}
