//! Prints mega65/softcore/fn_tables.h: the numbers the MEGA65's software SSNAIL core takes from
//! the Rust definitions instead of retyping them — the exp, SiLU and GELU tables of
//! `ssnail_core::tables` (spec §5.3: the hardware must hold exactly these coefficients) and the
//! ISA v1 numbers of `ssnail_format::isa` / `ggml` (opcodes, GEMV flags, KV and weight formats).
//!
//!   cargo run -q -p ssnail-core --example fn_tables > mega65/softcore/fn_tables.h
//!   cargo run -q -p ssnail-core --example fn_tables -- --ca65 > mega65/softcore/fn_tables.inc
//!
//! The second is the weight-format numbers for the ca65 files. emu/core/tests/fn_tables_header.rs
//! checks that the checked-in files are this output.

use ssnail_core::tables::{self, Outside, Table};
use ssnail_format::ggml::GgmlType;
use ssnail_format::isa::{Op, GEMV_ACC, GEMV_F16OUT, KV_F16, KV_F32};
use std::fmt::Write;

fn outside(o: Outside) -> &'static str {
    match o {
        Outside::Zero => "FN_OUT_ZERO",
        Outside::One => "FN_OUT_ONE",
        Outside::Identity => "FN_OUT_IDENTITY",
    }
}

fn table(s: &mut String, name: &str, what: &str, t: &Table) {
    let up = name.to_uppercase();
    writeln!(s, "/* {what} */").unwrap();
    for (field, v) in [("LO", t.lo), ("HI", t.hi), ("K", t.k)] {
        writeln!(
            s,
            "#define FN_{up}_{field:<6} 0x{:08X}UL /* {v:?} */",
            v.to_bits()
        )
        .unwrap();
    }
    writeln!(s, "#define FN_{up}_BELOW  {}", outside(t.below)).unwrap();
    writeln!(s, "#define FN_{up}_ABOVE  {}", outside(t.above)).unwrap();
    writeln!(
        s,
        "#if defined(FN_TABLES_DATA) || defined(FN_{up}_DATA)\n\
         const uint32_t fn_{name}[512] = {{ /* c0, c1 of segment 0, 1, ... */"
    )
    .unwrap();
    for i in 0..256 {
        let sep = if i % 3 == 2 || i == 255 { ",\n" } else { ", " };
        write!(
            s,
            "{}0x{:08X}UL, 0x{:08X}UL{sep}",
            if i % 3 == 0 { "    " } else { "" },
            t.c0[i].to_bits(),
            t.c1[i].to_bits()
        )
        .unwrap();
    }
    writeln!(
        s,
        "}};\n#else\nextern const uint32_t fn_{name}[512];\n#endif\n"
    )
    .unwrap();
}

/// The native weight formats (§4.1).
const WEIGHT_FORMATS: [GgmlType; 5] = [
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::Bf16,
    GgmlType::Q8_0,
    GgmlType::Q4_0,
];

/// fn_tables.inc's text: the weight-format numbers as ca65 constants, the same names as the
/// header's.
pub fn ca65_include() -> String {
    let mut s = String::from(
        "; fn_tables.inc: generated from ssnail_format::ggml by\n\
         ;   cargo run -q -p ssnail-core --example fn_tables -- --ca65 > mega65/softcore/fn_tables.inc\n\
         ; Do not edit (emu/core/tests/fn_tables_header.rs checks it is current).\n\
         ; The weight formats (GEMV/DEQROW a: ggml type numbers, docs/spec/isa.md §4.1) for the\n\
         ; software core's ca65 files, as fn_tables.h gives them to its C.\n",
    );
    for t in WEIGHT_FORMATS {
        let n = t.name().to_uppercase();
        writeln!(s, "WT_{n:<5} = {}", t as u32).unwrap();
    }
    s
}

/// The header's text.
pub fn header() -> String {
    let mut s = String::new();
    s.push_str(
        "/* fn_tables.h: generated from ssnail_core::tables and ssnail_format::isa by\n\
         \x20*   cargo run -q -p ssnail-core --example fn_tables > mega65/softcore/fn_tables.h\n\
         \x20* Do not edit (emu/core/tests/fn_tables_header.rs checks it is current).\n\
         \x20* The software SSNAIL core's numbers: ISA v1 (docs/spec/isa.md §3.4, §3.5) and the exp,\n\
         \x20* SiLU and GELU tables (docs/spec/numerics.md §5.3), singles as bit patterns.\n\
         \x20* The tables' arrays are defined only where FN_TABLES_DATA (all three) or FN_EXP_DATA,\n\
         \x20* FN_SILU_DATA, FN_GELU_DATA (that one) is defined before the include, once per program\n\
         \x20* (softvec.c; fntab.c puts exp and SiLU in their own segment in cc65 builds); the numbers\n\
         \x20* and table bounds are for every file. */\n\
         #ifndef FN_TABLES_H\n#define FN_TABLES_H\n#include <stdint.h>\n\n/* opcodes */\n",
    );
    for op in Op::ALL {
        writeln!(s, "#define OP_{:<10} 0x{:02X}", op.name(), op as u8).unwrap();
    }
    s.push_str("\n/* GEMV flags (b), ATTN block KV formats (word 5) */\n");
    writeln!(s, "#define GEMV_ACC     0x{GEMV_ACC:02X}").unwrap();
    writeln!(s, "#define GEMV_F16OUT  0x{GEMV_F16OUT:02X}").unwrap();
    writeln!(s, "#define KV_F32       {KV_F32}").unwrap();
    writeln!(s, "#define KV_F16       {KV_F16}").unwrap();
    s.push_str("\n/* weight formats (GEMV/DEQROW a: ggml type numbers, §4.1): number, elements and bytes per block */\n");
    for t in WEIGHT_FORMATS {
        assert!(t.is_native());
        let n = t.name().to_uppercase();
        writeln!(s, "#define WT_{n:<5} {:>2}", t as u32).unwrap();
        writeln!(s, "#define WT_{n}_BLOCK_LEN   {}", t.block_len()).unwrap();
        writeln!(s, "#define WT_{n}_BLOCK_BYTES {}", t.block_bytes()).unwrap();
    }
    s.push_str(
        "\n/* what a table gives outside [lo, hi) */\n\
         #define FN_OUT_ZERO     0 /* +0 */\n\
         #define FN_OUT_ONE      1 /* 1 */\n\
         #define FN_OUT_IDENTITY 2 /* x */\n\n",
    );
    table(&mut s, "exp", "exp for softmax: [-16, 0)", tables::exp());
    table(
        &mut s,
        "silu",
        "SiLU x/(1 + e^-x): [-12, 12)",
        tables::silu(),
    );
    table(&mut s, "gelu", "GELU, tanh form: [-6, 6)", tables::gelu());
    s.push_str("#endif\n");
    s
}

#[allow(dead_code)]
fn main() {
    if std::env::args().nth(1).as_deref() == Some("--ca65") {
        print!("{}", ca65_include());
    } else {
        print!("{}", header());
    }
}
