//! Write the llama2.c stand-ins (stories260K, stories260K-unshared,
//! stories15M: NAME.bin and NAME.tok.bin) to a directory, for
//! tools/llama2c-reference.sh and for trying `ssnail import` by hand:
//! `cargo run --release -p ssnail-testkit --example llama2c_standins -- DIR`

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir).unwrap();
    for s in ssnail_testkit::llama2c::ALL {
        let (m, t) = s.write(dir);
        println!("{} {}", m.display(), t.display());
    }
}
